<?php
// One OS process calling allocate_invoice_number() COUNT times on one series.
// Usage: php -d extension=… allocate.php USER_ID YEAR COUNT
// Env: COUNTERFOIL_TEST_URL, COUNTERFOIL_TEST_PREFIX, COUNTERFOIL_START_DIR
// (the harness start line). Prints `start <ns>`, `n <number>` per call, `end <ns>`.
[, $user, $year, $count] = $argv;
Counterfoil\configure([
    'database_url' => getenv('COUNTERFOIL_TEST_URL'),
    'table_prefix' => getenv('COUNTERFOIL_TEST_PREFIX') ?: 'wp_',
    'format' => '{seq}',
]);
// Connect before the start line.
(new Counterfoil\Sequences())->current(Counterfoil\Sequences::scopeFor((int) $user, (int) $year));
require __DIR__ . '/start_line.php';
counterfoil_test_start_line();
$out = fopen('php://stdout', 'w');
fwrite($out, 'start ' . (int) (microtime(true) * 1e9) . "\n");
for ($i = 0; $i < (int) $count; $i++) {
    fwrite($out, 'n ' . allocate_invoice_number((int) $user, (int) $year) . "\n");
}
fwrite($out, 'end ' . (int) (microtime(true) * 1e9) . "\n");
$info = Counterfoil\connection_info();
fwrite($out, "connects {$info['connects']}\n");
