<?php
// One OS process asking for the numbers of request keys KEY-0 … KEY-(COUNT-1)
// in one series, each with allocateRecorded() and its request key: several
// such processes at once race on the same keys.
// Usage: php -d extension=… allocate_keyed.php SCOPE KEY COUNT
// Env: COUNTERFOIL_TEST_URL, COUNTERFOIL_START_DIR (the harness start line).
// Prints `start <ns>`, `k <key> <number>` per call, `end <ns>`.
[, $scope, $key, $count] = $argv;
$s = new Counterfoil\Sequences(['database_url' => getenv('COUNTERFOIL_TEST_URL')]);
$s->current($scope); // Connect before the start line.
require __DIR__ . '/start_line.php';
counterfoil_test_start_line();
$out = fopen('php://stdout', 'w');
fwrite($out, 'start ' . (int) (microtime(true) * 1e9) . "\n");
for ($i = 0; $i < (int) $count; $i++) {
    fwrite($out, "k $key-$i " . $s->allocateRecorded($scope, 'api', "$key-$i") . "\n");
}
fwrite($out, 'end ' . (int) (microtime(true) * 1e9) . "\n");
