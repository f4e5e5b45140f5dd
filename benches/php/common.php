<?php
// Shared by the PHP benchmark workers: the harness start line, then a timed loop.
// Prints `start <ns>`, `end <ns>`, `count <n>`, and `lat <p50_us> <p99_us>`.
function bench_loop(callable $once): void
{
    $dir = getenv('COUNTERFOIL_START_DIR');
    if ($dir) {
        touch("$dir/ready." . getmypid());
        while (!file_exists("$dir/go")) {
            usleep(500);
        }
    }
    $seconds = (float) getenv('BENCH_SECONDS');
    $lat = [];
    $start = hrtime(true);
    $until = $start + (int) ($seconds * 1e9);
    $wall = (int) (microtime(true) * 1e9);
    $n = 0;
    do {
        $t = hrtime(true);
        $once();
        $now = hrtime(true);
        $lat[] = $now - $t;
        $n++;
    } while ($now < $until);
    $elapsed = $now - $start;
    sort($lat);
    echo 'start ', $wall, "\nend ", $wall + $elapsed, "\ncount $n\n";
    printf("lat %d %d\n", $lat[intdiv(count($lat), 2)] / 1000, $lat[(int) (count($lat) * 0.99)] / 1000);
}
