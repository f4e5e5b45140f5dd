//! The migration toolkit on a realistic legacy site (real WordPress schema,
//! invoices numbered by concurrent MAX()+1 writers): audit against a direct
//! SQL count, adopt (dry run, execute, twice, killed midway, while the plugin
//! takes payments), verify, stress, and bad input.

use std::collections::BTreeMap;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::{legacy, MariaDb};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_counterfoil");

fn cf(url: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("DATABASE_URL", url)
        .output()
        .expect("run counterfoil")
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn num(url: &str, sql: &str) -> u64 {
    MariaDb::scalar(url, sql)
        .unwrap()
        .unwrap_or_default()
        .parse()
        .unwrap_or(0)
}

/// Every table's name and checksum.
fn checksums(url: &str) -> Vec<(String, String)> {
    let tables = MariaDb::query(url, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME").unwrap();
    tables
        .into_iter()
        .map(|t| {
            let name = t[0].clone().unwrap();
            let sum = MariaDb::query(url, &format!("CHECKSUM TABLE `{name}`")).unwrap()[0][1]
                .clone()
                .unwrap_or_default();
            (name, sum)
        })
        .collect()
}

fn legacy_site(
    name: &str,
    authors: &[u64],
    writers: usize,
    per_writer: usize,
    malformed: bool,
) -> WordPress {
    let wp = WordPress::install_with(MariaDb::shared(), name, None, false).unwrap();
    block_on(legacy::generate(
        wp.database_url(),
        authors,
        writers,
        per_writer,
        malformed,
    ))
    .unwrap();
    wp
}

/// The truth by direct SQL, per author: (duplicate numbers, missing numbers).
fn sql_truth(url: &str, author: u64) -> (u64, u64) {
    let canonical = format!("post_type = 'invoice' AND post_status = 'publish' AND post_author = {author} AND post_title REGEXP '^2026-[0-9]{{4,}}$' AND post_title NOT REGEXP '^2026-0[0-9]{{4,}}$'");
    let dups = num(url, &format!("SELECT COUNT(*) FROM (SELECT post_title FROM wp_posts WHERE {canonical} GROUP BY post_title HAVING COUNT(*) > 1) t"));
    let missing = num(
        url,
        &format!(
            "SELECT COUNT(*) FROM seq_1_to_100000 s WHERE s.seq BETWEEN \
             (SELECT MIN(CAST(SUBSTRING(post_title, 6) AS UNSIGNED)) FROM wp_posts WHERE {canonical}) AND \
             (SELECT MAX(CAST(SUBSTRING(post_title, 6) AS UNSIGNED)) FROM wp_posts WHERE {canonical}) \
             AND s.seq NOT IN (SELECT CAST(SUBSTRING(post_title, 6) AS UNSIGNED) FROM wp_posts WHERE {canonical})"
        ),
    );
    (dups, missing)
}

#[test]
fn audit_reports_exactly_the_duplicates_and_gaps_sql_finds() {
    let wp = legacy_site("audit", &[1, 2, 3], 6, 500, true);
    let url = wp.database_url();
    let before = checksums(url);
    let out = cf(url, &["--json", "audit"]);
    assert_eq!(out.status.code(), Some(1), "findings: {}", text(&out));
    assert_eq!(checksums(url), before, "audit is read-only");
    let lines = json_lines(&out);
    let series: BTreeMap<String, &Value> = lines
        .iter()
        .filter(|l| l["type"] == "series")
        .map(|l| (l["scope"].as_str().unwrap().to_owned(), l))
        .collect();
    assert_eq!(
        series.keys().cloned().collect::<Vec<_>>(),
        ["1:2026", "2:2026", "3:2026"]
    );
    let mut total_dups = 0;
    for author in [1u64, 2, 3] {
        let (dups, missing) = sql_truth(url, author);
        let s = series[&format!("{author}:2026")];
        assert_eq!(
            s["duplicates"].as_u64().unwrap(),
            dups,
            "author {author} duplicates"
        );
        assert_eq!(
            s["missing"].as_u64().unwrap(),
            missing,
            "author {author} missing numbers"
        );
        total_dups += dups;
    }
    assert!(
        total_dups > 0,
        "the concurrent MAX()+1 writers produced no duplicate: the test has no bite"
    );
    let summary = lines.iter().find(|l| l["type"] == "summary").unwrap();
    assert_eq!(summary["malformed"], 5);
    assert!(lines
        .iter()
        .any(|l| l["type"] == "hazard" && l["code"] == "no_registry"));
    // Each duplicate lists its posts with their dates.
    let d = lines.iter().find(|l| l["type"] == "duplicate").unwrap();
    assert!(d["posts"].as_array().unwrap().len() >= 2);
    assert!(d["posts"][0]["date"].as_str().unwrap().starts_with("20"));
    // The human report says the same.
    let human = cf(url, &["audit"]);
    assert_eq!(human.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&human.stdout).contains("duplicates (number: posts"));
}

#[test]
fn adopt_dry_run_changes_nothing_then_execute_verify_and_again_is_a_no_op() {
    let wp = legacy_site("adopt", &[1, 2], 4, 300, false);
    let url = wp.database_url();
    let before = checksums(url);
    let dry = cf(url, &["adopt"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
    assert!(String::from_utf8_lossy(&dry.stdout).contains("dry run: nothing was changed"));
    assert_eq!(checksums(url), before, "the dry run wrote nothing");

    let run = cf(url, &["adopt", "--execute"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let verify = cf(url, &["verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
    // Series continue after their highest title; duplicates are findings, history untouched.
    let audit = json_lines(&cf(url, &["--json", "audit"]));
    for s in audit.iter().filter(|l| l["type"] == "series") {
        let scope = s["scope"].as_str().unwrap();
        let current = num(
            url,
            &format!("SELECT current_value FROM wp_invoice_sequences WHERE scope_key = '{scope}'"),
        );
        assert_eq!(current, s["highest"].as_u64().unwrap(), "{scope}");
    }
    let later_dups = num(
        url,
        "SELECT COUNT(*) FROM wp_counterfoil_adopt_findings WHERE kind = 'duplicate'",
    );
    let titles_now = num(
        url,
        "SELECT COUNT(*) FROM wp_postmeta WHERE meta_key = '_counterfoil_old_title'",
    );
    assert_eq!(
        titles_now, 0,
        "nothing renumbered without --resolve-duplicates=renumber"
    );
    let snapshot = checksums(url);

    let again = cf(url, &["adopt", "--execute"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("nothing to do"),
        "{}",
        text(&again)
    );
    let after: Vec<_> = checksums(url)
        .into_iter()
        .filter(|(t, _)| t != "wp_counterfoil_adopt_runs")
        .collect();
    let snap: Vec<_> = snapshot
        .into_iter()
        .filter(|(t, _)| t != "wp_counterfoil_adopt_runs")
        .collect();
    assert_eq!(after, snap, "a second adopt changes nothing");

    // Renumbering: every later duplicate gets a new number above the highest.
    let renumber = cf(
        url,
        &["adopt", "--execute", "--resolve-duplicates=renumber"],
    );
    assert_eq!(renumber.status.code(), Some(0), "{}", text(&renumber));
    assert_eq!(
        num(
            url,
            "SELECT COUNT(*) FROM wp_counterfoil_adopt_findings WHERE kind = 'renumbered'"
        ),
        later_dups
    );
    assert_eq!(
        num(
            url,
            "SELECT COUNT(*) FROM wp_postmeta WHERE meta_key = '_counterfoil_old_title'"
        ),
        later_dups
    );
    let post_audit = cf(url, &["--json", "audit"]);
    let summary = json_lines(&post_audit)
        .into_iter()
        .find(|l| l["type"] == "summary")
        .unwrap();
    assert_eq!(summary["duplicates"], 0, "no title is held twice any more");
    let verify = cf(url, &["verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
}

#[test]
fn adopt_killed_midway_is_completed_by_a_rerun() {
    let wp = legacy_site("killed", &[1, 2, 3], 4, 600, false);
    let url = wp.database_url().to_owned();
    let mut child = Command::new(BIN)
        .args([
            "adopt",
            "--execute",
            "--batch-size",
            "10",
            // Between series (each series is one transaction): the kill
            // comes after the first series committed, before the next.
            "--pause-ms",
            "3000",
        ])
        .env("DATABASE_URL", &url)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        let written = MariaDb::scalar(&url, "SELECT COUNT(*) FROM wp_counterfoil_numbers")
            .ok()
            .flatten();
        if written.and_then(|w| w.parse::<u64>().ok()).unwrap_or(0) >= 100 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "adopt wrote nothing");
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "adopt finished before it could be killed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        num(
            &url,
            "SELECT COUNT(*) FROM wp_counterfoil_adopt_runs WHERE finished_at IS NULL"
        ),
        1,
        "the interrupted run is visible"
    );
    assert_ne!(
        cf(&url, &["verify"]).status.code(),
        Some(0),
        "a half adoption does not verify"
    );
    // Two runs never overlap: while another client holds the adopt lock, adopt refuses.
    block_on(async {
        use mysql_async::prelude::Queryable;
        let mut holder = mysql_async::Conn::new(mysql_async::Opts::from_url(&url).unwrap())
            .await
            .unwrap();
        let got: Option<i64> = holder
            .query_first(
                "SELECT GET_LOCK(CONCAT('counterfoil_adopt:', DATABASE(), '.wp_posts'), 0)",
            )
            .await
            .unwrap();
        assert_eq!(got, Some(1));
        let out = cf(&url, &["adopt", "--execute"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("another `counterfoil adopt` is running")
        );
        holder.disconnect().await.unwrap();
    });
    let rerun = cf(&url, &["adopt", "--execute"]);
    assert_eq!(rerun.status.code(), Some(0), "{}", text(&rerun));
    assert!(String::from_utf8_lossy(&rerun.stderr).contains("did not finish"));
    let verify = cf(&url, &["verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
    // Exactly one registry row per number of every series.
    let expect = num(
        &url,
        "SELECT SUM(current_value - start_value + 1) FROM wp_invoice_sequences",
    );
    assert_eq!(
        num(&url, "SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        expect
    );
    assert_eq!(
        num(
            &url,
            "SELECT COUNT(*) FROM wp_counterfoil_adopt_runs WHERE finished_at IS NULL"
        ),
        0
    );
}

#[test]
fn adopt_while_four_processes_create_invoices_through_the_plugin() {
    let wp = legacy_site("live", &[1], 4, 250, false);
    let url = wp.database_url().to_owned();
    // The shop installs Counterfoil on its legacy site and configures a series.
    wp.eval(false, "require_once ABSPATH . 'wp-admin/includes/plugin.php'; $r = activate_plugin('counterfoil/counterfoil.php'); if (is_wp_error($r)) { exit(1); }")
        .unwrap();
    let highest = num(&url, "SELECT MAX(CAST(SUBSTRING(post_title, 6) AS UNSIGNED)) FROM wp_posts WHERE post_type = 'invoice'");
    wp.eval(
        false,
        &format!("initialize_invoice_sequence(1, 2026, {});", highest + 1),
    )
    .unwrap();
    // Each worker creates invoices until told to stop, printing the wall
    // time of each: the test proves adopt ran while they were creating.
    let stop = wp.dir().join("stop-live-writers");
    let _ = std::fs::remove_file(&stop);
    let code = "for ($i = 0; !file_exists(getenv('STOP')); $i++) { $r = counterfoil_create_invoice_for_payment(['gateway' => 'stripe', \
        'transaction_id' => getenv('W') . '-' . $i, 'user_id' => 1, 'year' => 2026]); \
        if (is_wp_error($r)) { fwrite(STDERR, $r->get_error_message()); exit(1); } echo microtime(true), \"\\n\"; }";
    let workers: Vec<_> = (0..4)
        .map(|w| {
            wp.php(w % 2 == 0)
                .arg("-r")
                .arg(format!("require './wp-load.php'; {code}"))
                .env("W", format!("w{w}"))
                .env("STOP", &stop)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Adopt starts once every worker has made an invoice.
    let waited = std::time::Instant::now();
    while num(&url, "SELECT COUNT(DISTINCT SUBSTRING_INDEX(transaction_id, '-', 1)) FROM wp_counterfoil_payments") < 4 {
        assert!(waited.elapsed() < Duration::from_secs(60), "the writers did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let wall = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    let adopt_from = wall();
    let adopt = cf(
        &url,
        &[
            "adopt",
            "--execute",
            "--batch-size",
            "25",
            "--pause-ms",
            "10",
        ],
    );
    let adopt_to = wall();
    std::fs::write(&stop, "").unwrap();
    assert_eq!(adopt.status.code(), Some(0), "{}", text(&adopt));
    let mut created = 0u64;
    let mut writers_during_adopt = 0;
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let times: Vec<f64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        created += times.len() as u64;
        if times.iter().any(|t| *t > adopt_from && *t < adopt_to) {
            writers_during_adopt += 1;
        }
    }
    println!(
        "adopt took {:.0} ms; {writers_during_adopt} of 4 writers made invoices during it; {created} invoices in all",
        (adopt_to - adopt_from) * 1000.0
    );
    assert!(
        writers_during_adopt >= 2,
        "adopt did not overlap the live writers ({writers_during_adopt} wrote during it)"
    );
    let verify = cf(&url, &["verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify));
    // No lost number: every payment issued, after the legacy numbers, contiguous.
    assert_eq!(num(&url, "SELECT COUNT(*) FROM wp_counterfoil_numbers WHERE source = 'payment' AND status = 'issued'"), created);
    assert_eq!(
        num(
            &url,
            "SELECT MIN(number) FROM wp_counterfoil_numbers WHERE source = 'payment'"
        ),
        highest + 1
    );
    assert_eq!(
        num(
            &url,
            "SELECT MAX(number) FROM wp_counterfoil_numbers WHERE source = 'payment'"
        ),
        highest + created
    );
    // No duplicate: the plugin's titles are unique, and none equals a legacy title.
    assert_eq!(
        num(&url, "SELECT COUNT(*) FROM (SELECT post_title FROM wp_posts p JOIN wp_counterfoil_numbers n ON n.post_id = p.ID WHERE n.source = 'payment' GROUP BY post_title HAVING COUNT(*) > 1) t"),
        0
    );
    assert_eq!(
        num(&url, "SELECT COUNT(*) FROM wp_posts a JOIN wp_counterfoil_numbers n ON n.post_id = a.ID AND n.source = 'payment' JOIN wp_posts b ON b.post_title = a.post_title AND b.ID <> a.ID AND b.post_type = 'invoice'"),
        0
    );
}

#[test]
fn stress_reports_throughput_and_the_check() {
    let url = MariaDb::shared().fresh_database("stress").unwrap();
    assert_eq!(
        cf(&url, &["series", "init", "s", "--start", "1"])
            .status
            .code(),
        Some(0)
    );
    let out = cf(
        &url,
        &[
            "--json",
            "stress",
            "s",
            "--connections",
            "4",
            "--seconds",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert!(v["allocations"].as_u64().unwrap() > 100, "{v}");
    assert_eq!(
        (v["duplicates"].as_u64(), v["gaps"].as_u64()),
        (Some(0), Some(0)),
        "{v}"
    );
    assert_eq!(v["first"], 1);
    let current = num(&url, "SELECT current_value FROM wp_invoice_sequences");
    assert_eq!(v["last"].as_u64().unwrap(), current);
}

#[test]
fn bad_input_is_a_clear_error_exit_2_and_nothing_written() {
    let fails = |url: &str, args: &[&str], expect: &str| {
        let out = cf(url, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            stderr.contains(expect),
            "{args:?}: expected `{expect}` in {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
    };
    fails(
        "mysql://cf:cf@127.0.0.1:1/x",
        &["--timeout-ms", "1000", "audit"],
        "cannot connect",
    );
    fails("not a url", &["verify"], "database URL");
    let empty = MariaDb::shared().fresh_database("empty").unwrap();
    fails(&empty, &["audit"], "wp_posts` does not exist");
    fails(&empty, &["adopt", "--execute"], "wp_posts` does not exist");
    fails(&empty, &["verify"], "does not exist");
    assert!(checksums(&empty).is_empty(), "nothing created");

    let wp = legacy_site("badinput", &[1], 2, 50, true);
    let url = wp.database_url();
    let before = checksums(url);
    fails(url, &["audit", "--format", "{year}-{sequence}"], "byte 7");
    fails(url, &["audit", "--scope-rule", "by-author"], "scope_rule");
    fails(url, &["adopt", "--execute"], "do not match");
    fails(
        url,
        &["adopt", "--execute", "--format", "INV-{seq}"],
        "nothing to adopt",
    );
    fails(
        url,
        &["adopt", "--execute", "--table-prefix", "shop_"],
        "shop_posts` does not exist",
    );
    assert_eq!(checksums(url), before, "nothing written");
    // With --skip-malformed the rest is adopted, and the malformed ones are reported by verify.
    let out = cf(url, &["adopt", "--execute", "--skip-malformed"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let verify = cf(url, &["verify"]);
    assert_eq!(verify.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&verify.stdout).contains("is not in the registry"));
}

/// `verify` and the plugin's gap report at a million numbers in one series
/// (issue [seams] item 8): both read the series in keyset chunks, so memory
/// stays bounded; both find exactly the planted gaps. Before the fix the gap
/// report loaded the whole series into PHP (a fatal error under a 64 MB
/// memory limit) and `verify` held every row at once.
#[test]
fn a_million_numbers_in_one_series_verify_and_the_gap_report_in_bounded_memory() {
    let wp = WordPress::install(MariaDb::shared(), "million_gaps", None).unwrap();
    let url = wp.database_url().to_owned();
    MariaDb::shared()
        .exec(
            wp.database(),
            "INSERT INTO wp_invoice_sequences (scope_key, current_value, start_value) VALUES ('9:2026', 1000000, 1);
             INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, created_at, updated_at)
             SELECT '9:2026', seq, 'issued', 'test', UTC_TIMESTAMP(), UTC_TIMESTAMP() FROM seq_1_to_1000000
             WHERE seq NOT IN (10000, 10001, 500000, 999999, 1000000)",
        )
        .unwrap();
    // The gap report, under a memory limit far below the series' size.
    let out = wp
        .php(false)
        .args(["-d", "memory_limit=64M", "-r"])
        .arg(
            "require './wp-load.php';
             $g = Counterfoil_Books::gaps(array('scope' => '9:2026', 'year' => 0));
             echo json_encode(array($g['missing'], $g['cut'], memory_get_peak_usage(true)));",
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(
        v[0],
        serde_json::json!([
            ["9:2026", 10000, 10001],
            ["9:2026", 500000, 500000],
            ["9:2026", 999999, 1000000]
        ])
    );
    assert_eq!(v[1], Value::Bool(false));
    let php_peak = v[2].as_u64().unwrap();
    eprintln!(
        "gap report at 1M numbers: PHP peak memory {} MB",
        php_peak / 1_048_576
    );

    // verify: its own process, its peak resident memory from wait4.
    #[allow(clippy::zombie_processes)] // reaped by wait4 below, which also gives its rusage
    let mut child = Command::new(BIN)
        .args(["verify", "--json"])
        .env("DATABASE_URL", &url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut pipe = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut pipe, &mut text).unwrap();
        text
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value; wait4 on our own child's
    // pid with valid out-pointers (the Child is never waited for again).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let stdout = reader.join().unwrap();
    let peak_mb = usage.ru_maxrss as u64 / 1024;
    eprintln!("verify at 1M numbers: peak resident memory {peak_mb} MB");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 1,
        "findings: exit 1"
    );
    let gaps: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["detail"].as_str().map(str::to_owned))
        .filter(|d| d.contains("unexplained gap"))
        .collect();
    assert_eq!(gaps.len(), 3, "{gaps:?}");
    assert!(gaps[0].contains("10000–10001"), "{gaps:?}");
    assert!(peak_mb < 64, "verify's memory is bounded: {peak_mb} MB");
}
