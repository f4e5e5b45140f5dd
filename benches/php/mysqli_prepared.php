<?php
// What a careful PHP developer writes: one prepared
// UPDATE … LAST_INSERT_ID(current_value + 1) through mysqli, the number read
// from the statement's own OK packet ($stmt->insert_id, in C), with the
// one-row check, then sprintf. One round trip per number.
require __DIR__ . '/common.php';
$db = bench_mysqli();
$series = (int) (getenv('BENCH_SERIES') ?: 1);
$stmt = $db->prepare('UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = ?');
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
