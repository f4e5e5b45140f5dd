<?php
// One web request through the extension: configure() (as the plugin does on
// every request), then one number. The connection and the prepared statement
// stay with the php-fpm worker between requests.
Counterfoil\configure(['database_url' => getenv('BENCH_URL')]);
echo allocate_invoice_number(1, 2019);
