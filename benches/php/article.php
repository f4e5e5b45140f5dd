<?php
// The article's PHP code: UPDATE … LAST_INSERT_ID(current_value + 1), then
// SELECT LAST_INSERT_ID(), then sprintf — through mysqli, as $wpdb does it
// (text protocol, escaped string).
// With BENCH_PER_REQUEST=1 each call is a request's: connect, the two
// statements, close ($wpdb connects once per request).
require __DIR__ . '/common.php';
$series = (int) (getenv('BENCH_SERIES') ?: 1);
$scope_of = fn () => ($series > 1 ? random_int(1, $series) : 1) . ':2019';
if (bench_per_request()) {
    $once = function () use ($scope_of) {
        $db = bench_mysqli();
        $number = bench_article_number($db, $scope_of());
        $db->close();
        return $number;
    };
} else {
    $db = bench_mysqli();
    $once = fn () => bench_article_number($db, $scope_of());
}
$once();
bench_loop($once);
