<?php
// One web request with the article's code: a connection (as $wpdb opens one
// per request), UPDATE … LAST_INSERT_ID(current_value + 1), then
// SELECT LAST_INSERT_ID(), text protocol.
require __DIR__ . '/../common.php';
echo bench_article_number(bench_mysqli(), '1:2019');
