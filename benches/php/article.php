<?php
// The article's PHP code: UPDATE … LAST_INSERT_ID(current_value + 1), then
// SELECT LAST_INSERT_ID(), then sprintf — through mysqli, as $wpdb does it
// (text protocol, escaped string).
// With BENCH_PER_REQUEST=1 each call is a request's: connect, the two
// statements, close ($wpdb connects once per request).
require __DIR__ . '/common.php';
$series = (int) (getenv('BENCH_SERIES') ?: 1);
$per_request = bench_per_request();
$db = $per_request ? null : bench_mysqli();
$once = function () use ($db, $series, $per_request) {
    if ($per_request) {
        $db = bench_mysqli();
    }
    $scope = $db->real_escape_string(($series > 1 ? random_int(1, $series) : 1) . ':2019');
    $db->query("UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = '$scope'");
    $n = (int) $db->query('SELECT LAST_INSERT_ID()')->fetch_row()[0];
    if ($per_request) {
        $db->close();
    }
    return sprintf('%d-%04d', 2019, $n);
};
$once();
bench_loop($once);
