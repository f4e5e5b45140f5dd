<?php
// allocate_invoice_number() through the counterfoil extension.
// With BENCH_PER_REQUEST=1 each call is a request's: configure() (as the
// plugin does on every request), then the allocation; the extension keeps
// its connection in the process between requests, as in a php-fpm worker.
require __DIR__ . '/common.php';
$options = ['database_url' => getenv('BENCH_URL')];
Counterfoil\configure($options);
allocate_invoice_number(1, 2019); // connect before the start line
$series = (int) (getenv('BENCH_SERIES') ?: 1);
if (bench_per_request()) {
    bench_loop(function () use ($options, $series) {
        Counterfoil\configure($options);
        return allocate_invoice_number($series > 1 ? random_int(1, $series) : 1, 2019);
    });
    exit;
}
bench_loop(fn () => allocate_invoice_number($series > 1 ? random_int(1, $series) : 1, 2019));
