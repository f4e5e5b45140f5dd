//! One deadline per call, on both backends of the plugin: whatever the
//! database does (a node that accepts TCP but never answers, several of them
//! in a row, a server that is down, a server frozen in the middle of a call),
//! `allocate_invoice_number()` ends within the deadline plus 10 %, and with a
//! healthy node later in the list it succeeds there.
//!
//! The time is measured inside PHP from the moment the must-use plugins load
//! (before the plugin builds its backend) to the end of the call, so it covers
//! the connection attempts wherever a backend makes them.

use counterfoil_tests::mariadb::MariaDb;
use counterfoil_tests::wordpress::WordPress;

/// The deadline given to both backends (filter `counterfoil_timeout_ms`).
const DEADLINE_MS: u64 = 4000;

/// The call's outcome (`ok <number>` or `fail <class> <message>`) and its duration.
fn timed_call(wp: &WordPress, extension: bool) -> (String, u64) {
    let out = wp
        .eval(
            extension,
            "try { $out = 'ok ' . allocate_invoice_number(1, 2026); }
             catch (Throwable $e) { $out = 'fail ' . get_class($e) . ' ' . $e->getMessage(); }
             echo round((microtime(true) - $GLOBALS['counterfoil_test_t0']) * 1000), ' ', $out;",
        )
        .unwrap();
    let (ms, outcome) = out.split_once(' ').unwrap_or_else(|| panic!("{out}"));
    (
        outcome.to_owned(),
        ms.parse().unwrap_or_else(|_| panic!("{out}")),
    )
}

fn within_deadline(what: &str, extension: bool, ms: u64, outcome: &str) {
    println!("{what} (extension: {extension}): {ms} ms: {outcome}");
    assert!(
        ms <= DEADLINE_MS * 11 / 10,
        "{what} (extension: {extension}): {ms} ms for a {DEADLINE_MS} ms deadline: {outcome}"
    );
}

fn nodes(wp: &WordPress, ports: &[u16]) {
    let list: Vec<String> = ports.iter().map(|p| format!("'127.0.0.1:{p}'")).collect();
    // Private servers, not one cluster: the override for tests.
    wp.config_set("COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES", "true");
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!("array({})", list.join(", ")),
    );
}

#[test]
fn every_call_ends_within_its_deadline_on_both_backends() {
    let main = MariaDb::start("deadline-main").unwrap();
    let wp = WordPress::install(&main, "deadline", None).unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")
        .unwrap();
    wp.mu_plugin(
        "deadline",
        &format!(
            "<?php $GLOBALS['counterfoil_test_t0'] = microtime(true);
             add_filter('counterfoil_timeout_ms', function () {{ return {DEADLINE_MS}; }});"
        ),
    )
    .unwrap();
    // A node that accepts TCP connections (the kernel does) but never sends
    // its greeting: a frozen server, as a blackholed or hung node looks.
    let dark = MariaDb::start("deadline-dark").unwrap();
    dark.pause().unwrap();

    let mut expected = 0;
    for extension in [true, false] {
        // A dark first node: the call moves on and succeeds on the next one.
        nodes(&wp, &[dark.port(), main.port()]);
        let (outcome, ms) = timed_call(&wp, extension);
        expected += 1;
        assert_eq!(
            outcome,
            format!("ok 2026-{expected:04}"),
            "dark first node (extension: {extension})"
        );
        within_deadline("dark first node", extension, ms, &outcome);

        // Three dark nodes: no node answers; the call gives up at its
        // deadline, not at three (or fifteen) connect timeouts.
        nodes(&wp, &[dark.port(), dark.port(), dark.port()]);
        let (outcome, ms) = timed_call(&wp, extension);
        assert!(outcome.starts_with("fail Counterfoil\\"), "{outcome}");
        within_deadline("three dark nodes", extension, ms, &outcome);
        assert!(
            ms >= DEADLINE_MS / 2,
            "three dark nodes (extension: {extension}): gave up after {ms} ms, long before the deadline: {outcome}"
        );
    }

    // A server that is down (connection refused): a typed error, in time.
    let down = MariaDb::start("deadline-down").unwrap();
    let down_port = down.port();
    down.stop().unwrap();
    for extension in [true, false] {
        nodes(&wp, &[down_port]);
        let (outcome, ms) = timed_call(&wp, extension);
        assert!(
            outcome.starts_with("fail Counterfoil\\DatabaseUnavailableException")
                || outcome.starts_with("fail Counterfoil\\TimeoutException"),
            "{outcome}"
        );
        within_deadline("server down", extension, ms, &outcome);
    }

    // A server frozen in the middle of the call: the connection is open and
    // the first number taken, then every statement hangs.
    nodes(&wp, &[main.port()]);
    let dir = counterfoil_tests::target_dir()
        .join("harness")
        .join(format!("deadline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for extension in [true, false] {
        let _ = std::fs::remove_file(dir.join("connected"));
        let _ = std::fs::remove_file(dir.join("paused"));
        let code = format!(
            "echo allocate_invoice_number(1, 2026), ' ';
             touch('{d}/connected');
             while (!file_exists('{d}/paused')) {{ usleep(5000); }}
             $t = microtime(true);
             try {{ $out = 'ok ' . allocate_invoice_number(1, 2026); }}
             catch (Throwable $e) {{ $out = 'fail ' . get_class($e) . ' ' . $e->getMessage(); }}
             echo round((microtime(true) - $t) * 1000), ' ', $out;",
            d = dir.display()
        );
        let out = std::thread::scope(|s| {
            let call = s.spawn(|| wp.eval(extension, &code).unwrap());
            let started = std::time::Instant::now();
            while !dir.join("connected").exists() {
                assert!(
                    started.elapsed().as_secs() < 60,
                    "the first call never ended"
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            main.pause().unwrap();
            std::fs::write(dir.join("paused"), b"").unwrap();
            let out = call.join().unwrap();
            main.resume().unwrap();
            out
        });
        let mut parts = out.splitn(3, ' ');
        let first = parts.next().unwrap();
        assert!(first.starts_with("2026-"), "{out}");
        let ms: u64 = parts.next().unwrap().parse().unwrap();
        let outcome = parts.next().unwrap();
        assert!(
            outcome.starts_with("fail Counterfoil\\TimeoutException"),
            "frozen mid-call (extension: {extension}): {outcome}"
        );
        within_deadline("frozen mid-call", extension, ms, outcome);
        // The deadline is the budget. The pure-PHP backend's one-trip packet
        // (multi_query) cannot be awaited with mysqli_poll(): a frozen
        // server costs it its read timeout (2 s here), and a reconnect in
        // whole seconds; the call then ends with less than a second left,
        // which no mysqli connect can use (the README's limits).
        let budget = if extension {
            DEADLINE_MS * 9 / 10
        } else {
            DEADLINE_MS * 7 / 10
        };
        assert!(
            ms >= budget,
            "frozen mid-call (extension: {extension}): {ms} ms: the deadline is the budget"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    dark.resume().unwrap();
}

/// The pure-PHP backend fails back as the core does: a long-running process
/// that moved to a later node because the first was down goes back to the
/// first once it answers again (after `counterfoil_fail_back_after_ms`),
/// instead of writing to the later node forever. Each node has its own
/// counter here, so the number says which node answered.
#[test]
fn the_php_backend_fails_back_to_the_first_node() {
    let wp = WordPress::install(MariaDb::shared(), "failback", None).unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")
        .unwrap();
    let first = MariaDb::start("failback-first").unwrap();
    first
        .exec("mysql", &format!("CREATE DATABASE `{}`", wp.database()))
        .unwrap();
    // The plugin's tables, copied to the first node, with a series of its own.
    let dump = std::process::Command::new("mariadb-dump")
        .args([
            "-h127.0.0.1",
            &format!("-P{}", MariaDb::shared().port()),
            "-ucf",
            "-pcf",
            "--no-data",
            wp.database(),
            "wp_invoice_sequences",
            "wp_counterfoil_numbers",
            "wp_counterfoil_payments",
            "wp_counterfoil_chain",
        ])
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    first
        .exec(wp.database(), &String::from_utf8_lossy(&dump.stdout))
        .unwrap();
    first
        .exec(
            wp.database(),
            "INSERT INTO wp_invoice_sequences (scope_key, current_value, start_value) VALUES ('1:2026', 500, 501)",
        )
        .unwrap();
    let first_port = first.port();
    first.stop().unwrap();
    // Private servers, not one cluster: the override for tests.
    wp.config_set("COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES", "true");
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!(
            "array('127.0.0.1:{first_port}', '127.0.0.1:{}')",
            MariaDb::shared().port()
        ),
    );
    // A fail-back time longer than a restart takes on a quiet machine; the
    // test does not bet on it: it judges each call by when it started.
    let window_ms = 3000u64;
    wp.mu_plugin(
        "failback",
        &format!("<?php add_filter('counterfoil_fail_back_after_ms', function () {{ return {window_ms}; }});"),
    )
    .unwrap();
    let dir = counterfoil_tests::target_dir()
        .join("harness")
        .join(format!("failback-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Prints `START_MS:NUMBER` per call (ms since just before the first
    // call, which moved to the second node), calling every 100 ms once the
    // first node is back until it answers.
    let code = format!(
        "$t0 = microtime(true); $ms = function () use ($t0) {{ return (int) round((microtime(true) - $t0) * 1000); }};
         echo $ms(), ':', allocate_invoice_number(1, 2026);
         touch('{d}/moved');
         while (!file_exists('{d}/back')) {{ usleep(5000); }}
         do {{ $at = $ms(); $n = allocate_invoice_number(1, 2026); echo ' ', $at, ':', $n; usleep(100000); }}
         while ($n < '2026-0501' && $ms() < 60000);
         echo ' ', $ms(), ':', allocate_invoice_number(1, 2026);",
        d = dir.display()
    );
    let out = std::thread::scope(|s| {
        let call = s.spawn(|| wp.eval(false, &code).unwrap());
        let started = std::time::Instant::now();
        while !dir.join("moved").exists() {
            assert!(
                started.elapsed().as_secs() < 60,
                "the first call never ended"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        first.restart().unwrap();
        std::fs::write(dir.join("back"), b"").unwrap();
        call.join().unwrap()
    });
    let _ = std::fs::remove_dir_all(&dir);
    let calls: Vec<(u64, &str)> = out
        .split(' ')
        .map(|c| {
            let (at, n) = c.split_once(':').unwrap();
            (at.parse().unwrap(), n)
        })
        .collect();
    println!("calls (ms since the first began: number): {out}");
    // First node down: the second node's series, from 1.
    assert_eq!(calls[0].1, "2026-0001", "{out}");
    let back = calls
        .iter()
        .position(|c| c.1 >= "2026-0501")
        .expect("failed back to the first node");
    // Until the fail-back: the second node's series, one after another.
    for (i, c) in calls[..back].iter().enumerate() {
        assert_eq!(c.1, format!("2026-{:04}", i + 1), "{out}");
    }
    // The move happened during the first call, so no call begun less than
    // the fail-back time after that call began may go back.
    assert!(
        calls[back].0 >= window_ms,
        "failed back {} ms after the move, before the fail-back time: {out}",
        calls[back].0
    );
    // Back on the first node, its series continuing.
    assert_eq!(
        calls[back..].iter().map(|c| c.1).collect::<Vec<_>>(),
        ["2026-0501", "2026-0502"],
        "{out}"
    );
}
