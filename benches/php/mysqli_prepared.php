<?php
// What a careful PHP developer writes: one prepared
// UPDATE … LAST_INSERT_ID(current_value + 1) through mysqli, the number read
// from the statement's own OK packet ($stmt->insert_id, in C), with the
// one-row check, then sprintf. One round trip per number.
// With BENCH_PER_REQUEST=1 each call is a request's: connect (or take the
// persistent connection, BENCH_PERSISTENT=1), prepare, execute, close.
require __DIR__ . '/common.php';
$series = (int) (getenv('BENCH_SERIES') ?: 1);
$scope_of = fn () => ($series > 1 ? random_int(1, $series) : 1) . ':2019';
if (bench_per_request()) {
    $persistent = bench_persistent();
    $once = fn () => bench_prepared_request($persistent, $scope_of());
} else {
    $db = bench_mysqli();
    $stmt = $db->prepare(BENCH_ALLOCATE_SQL);
    $scope = '';
    $stmt->bind_param('s', $scope);
    $once = function () use ($stmt, $scope_of, &$scope) {
        $scope = $scope_of();
        return bench_prepared_number($stmt, $scope);
    };
}
$once();
bench_loop($once);
