<?php
// One web request with the article's code: a connection (as $wpdb opens one
// per request), UPDATE … LAST_INSERT_ID(current_value + 1), then
// SELECT LAST_INSERT_ID(), text protocol.
require __DIR__ . '/../common.php';
$db = bench_mysqli();
$db->query("UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = '1:2019'");
$n = (int) $db->query('SELECT LAST_INSERT_ID()')->fetch_row()[0];
printf('%d-%04d', 2019, $n);
