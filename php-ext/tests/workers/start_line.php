<?php
// The harness's start line for worker processes (tests/src/workers.rs):
// announce readiness with a marker file in COUNTERFOIL_START_DIR, then wait
// (at most 120 s) until the harness releases every worker at once.
function counterfoil_test_start_line(): void
{
    $dir = getenv('COUNTERFOIL_START_DIR');
    if (!$dir) {
        return;
    }
    touch("$dir/ready." . getmypid());
    $until = microtime(true) + 120;
    while (!file_exists("$dir/go")) {
        if (microtime(true) > $until) {
            fwrite(STDERR, "never released\n");
            exit(1);
        }
        usleep(1000);
    }
}
