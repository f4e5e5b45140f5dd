<?php
// Driven by tests/tests/php_ext.rs through marker files in OUTAGE_DIR: the
// test pauses, resumes, stops and restarts the server between the phases.
// Prints one line per phase: `ok N`, or `fail <class> <milliseconds>`.
$dir = getenv('OUTAGE_DIR');
Counterfoil\configure([
    'database_url' => getenv('COUNTERFOIL_TEST_URL'),
    'timeout_ms' => (int) getenv('OUTAGE_TIMEOUT_MS'),
    'format' => '{seq}',
]);
function wait_for(string $marker): void
{
    global $dir;
    $until = microtime(true) + 120;
    while (!file_exists("$dir/$marker")) {
        if (microtime(true) > $until) {
            fwrite(STDERR, "no $marker\n");
            exit(1);
        }
        usleep(2000);
    }
}
function phase(string $name): void
{
    global $dir;
    $t = microtime(true);
    try {
        $line = 'ok ' . allocate_invoice_number(1, 2019);
    } catch (Throwable $e) {
        $line = 'fail ' . get_class($e) . ' ' . (int) ((microtime(true) - $t) * 1000);
    }
    echo "$name $line\n";
    touch("$dir/done-$name");
}
initialize_invoice_sequence(1, 2019, 1);
phase('before');
wait_for('paused');
phase('paused');
wait_for('resumed');
phase('resumed');
wait_for('stopped');
phase('stopped');
wait_for('restarted');
phase('restarted');
$info = Counterfoil\connection_info();
echo "pid {$info['pid']} connects {$info['connects']} timeouts {$info['timeouts']}\n";
