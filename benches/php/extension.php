<?php
// allocate_invoice_number() through the counterfoil extension.
require __DIR__ . '/common.php';
Counterfoil\configure(['database_url' => getenv('BENCH_URL')]);
allocate_invoice_number(1, 2019); // connect before the start line
$series = (int) (getenv('BENCH_SERIES') ?: 1);
bench_loop(fn () => allocate_invoice_number($series > 1 ? random_int(1, $series) : 1, 2019));
