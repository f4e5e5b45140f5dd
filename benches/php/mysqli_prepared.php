<?php
// What a careful PHP developer writes: one prepared
// UPDATE … LAST_INSERT_ID(current_value + 1) through mysqli, the number read
// from the statement's own OK packet ($stmt->insert_id, in C), with the
// one-row check, then sprintf. One round trip per number.
// With BENCH_PER_REQUEST=1 each call is a request's: connect (or take the
// persistent connection, BENCH_PERSISTENT=1), prepare, execute, close.
require __DIR__ . '/common.php';
const ALLOCATE = 'UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = ?';
$series = (int) (getenv('BENCH_SERIES') ?: 1);
if (bench_per_request()) {
    $persistent = bench_persistent();
    $once = function () use ($series, $persistent) {
        $db = bench_mysqli($persistent);
        $stmt = $db->prepare(ALLOCATE);
        $scope = ($series > 1 ? random_int(1, $series) : 1) . ':2019';
        $stmt->bind_param('s', $scope);
        $stmt->execute();
        if ($stmt->affected_rows !== 1) {
            throw new RuntimeException("series $scope does not exist");
        }
        $n = $stmt->insert_id;
        $stmt->close();
        $db->close();
        return sprintf('%d-%04d', 2019, $n);
    };
    $once();
    bench_loop($once);
    exit;
}
$db = bench_mysqli();
$stmt = $db->prepare(ALLOCATE);
$scope = '';
$stmt->bind_param('s', $scope);
$once = function () use ($stmt, $series, &$scope) {
    $scope = ($series > 1 ? random_int(1, $series) : 1) . ':2019';
    $stmt->execute();
    if ($stmt->affected_rows !== 1) {
        throw new RuntimeException("series $scope does not exist");
    }
    return sprintf('%d-%04d', 2019, $stmt->insert_id);
};
$once();
bench_loop($once);
