<?php
// Shared by the PHP benchmark workers: the harness start line, then a timed loop.
// Prints `start <ns>`, `end <ns>`, `count <n>`, `lat <p50_us> <p99_us>`, and
// `cpu <user_us> <sys_us>`: this process's CPU during the timed loop only.
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
    $cpu = static function (): array {
        $r = getrusage();
        return [$r['ru_utime.tv_sec'] * 1000000 + $r['ru_utime.tv_usec'], $r['ru_stime.tv_sec'] * 1000000 + $r['ru_stime.tv_usec']];
    };
    $cpu0 = $cpu();
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
    $cpu1 = $cpu();
    sort($lat);
    echo 'start ', $wall, "\nend ", $wall + $elapsed, "\ncount $n\n";
    printf("lat %d %d\n", $lat[intdiv(count($lat), 2)] / 1000, $lat[(int) (count($lat) * 0.99)] / 1000);
    printf("cpu %d %d\n", $cpu1[0] - $cpu0[0], $cpu1[1] - $cpu0[1]);
}

// A mysqli connection to BENCH_URL: TCP to its host and port, or the unix
// socket named by its `socket=` query parameter; with $persistent, one of
// mysqli's persistent connections (`p:` host), kept by the process between
// requests.
function bench_mysqli(bool $persistent = false): mysqli
{
    $u = parse_url(getenv('BENCH_URL'));
    parse_str($u['query'] ?? '', $q);
    mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
    $db = ltrim($u['path'], '/');
    $p = $persistent ? 'p:' : '';
    if (!empty($q['socket'])) {
        return new mysqli($p . 'localhost', $u['user'], $u['pass'], $db, 0, $q['socket']);
    }
    return new mysqli($p . $u['host'], $u['user'], $u['pass'], $db, $u['port']);
}

// BENCH_PER_REQUEST=1: each timed call is one PHP request's work, its
// connection opened and closed in the call (as php-fpm does for mysqli
// between requests); BENCH_PERSISTENT=1 with it: a persistent connection.
function bench_per_request(): bool
{
    return (bool) getenv('BENCH_PER_REQUEST');
}

function bench_persistent(): bool
{
    return (bool) getenv('BENCH_PERSISTENT');
}

// What a careful PHP developer writes: one prepared
// UPDATE … LAST_INSERT_ID(current_value + 1), the number from the
// statement's own OK packet ($stmt->insert_id).
const BENCH_ALLOCATE_SQL = 'UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = ?';

// Executes the prepared allocation (its parameter bound to $scope), checks
// that it changed one row, and renders the number.
function bench_prepared_number(mysqli_stmt $stmt, string $scope): string
{
    $stmt->execute();
    if ($stmt->affected_rows !== 1) {
        throw new RuntimeException("series $scope does not exist");
    }
    return sprintf('%d-%04d', 2019, $stmt->insert_id);
}

// One request's work with mysqli prepared: connect (or take the persistent
// connection), prepare, the number, close.
function bench_prepared_request(bool $persistent, string $scope): string
{
    $db = bench_mysqli($persistent);
    $stmt = $db->prepare(BENCH_ALLOCATE_SQL);
    $stmt->bind_param('s', $scope);
    $number = bench_prepared_number($stmt, $scope);
    $stmt->close();
    $db->close();
    return $number;
}

// The article's code: UPDATE … LAST_INSERT_ID(current_value + 1), then
// SELECT LAST_INSERT_ID(), text protocol and an escaped string, as $wpdb does.
function bench_article_number(mysqli $db, string $scope): string
{
    $scope = $db->real_escape_string($scope);
    $db->query("UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = '$scope'");
    $n = (int) $db->query('SELECT LAST_INSERT_ID()')->fetch_row()[0];
    return sprintf('%d-%04d', 2019, $n);
}
