//! Real overlap: several OS processes allocating from one series at the same
//! time, then the checker: every number once, exactly the expected range.
//! The same suites run on MariaDB and on PostgreSQL (the workers choose the
//! engine by the URL), plus the Lambda-style run: many short-lived processes
//! that each connect, allocate once and exit.

use std::process::Command;
use std::time::Duration;

use counterfoil_core::{Engine, ScopeKey, Store, StoreConfig};
use counterfoil_tests::check::{check_contiguous, Allocation};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::workers::{run_overlapping, Finished};

const WORKER: &str = env!("CARGO_BIN_EXE_alloc-worker");

fn setup(label: &str, scope: &str, start: u64) -> String {
    setup_on(Engine::MySql, label, scope, start)
}

/// A fresh database on the engine's shared private server, with one series.
fn setup_on(engine: Engine, label: &str, scope: &str, start: u64) -> String {
    let url = counterfoil_tests::engines::fresh_database(engine, label);
    block_on(async {
        let mut s = Store::connect(StoreConfig::new(&url)).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&ScopeKey::new(scope).unwrap(), start)
            .await
            .unwrap();
    });
    url
}

fn run(url: &str, scope: &str, processes: usize, calls: u64, batch_every: u64) -> Vec<Finished> {
    run_mode(url, scope, processes, calls, batch_every, "")
}

fn run_mode(
    url: &str,
    scope: &str,
    processes: usize,
    calls: u64,
    batch_every: u64,
    mode: &str,
) -> Vec<Finished> {
    let commands = (0..processes)
        .map(|_| {
            let mut c = Command::new(WORKER);
            c.env("COUNTERFOIL_WORKER_MODE", mode);
            c.args([
                url,
                "wp_",
                scope,
                &calls.to_string(),
                &batch_every.to_string(),
            ]);
            c
        })
        .collect();
    run_overlapping(commands, Duration::from_secs(300)).unwrap()
}

/// Every worker's allocations; a worker whose printed `count` differs from
/// the lines parsed (a dropped or garbled line) fails the run.
fn allocations(finished: &[Finished]) -> Vec<Allocation> {
    let mut all = Vec::new();
    for f in finished {
        let mine: Vec<Allocation> = f
            .stdout
            .lines()
            .filter_map(Allocation::parse_line)
            .collect();
        let count: usize = f
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("count "))
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or_else(|| panic!("a worker printed no count:\n{}", f.stdout));
        assert_eq!(mine.len(), count, "a worker's history lost lines");
        all.extend(mine);
    }
    all
}

fn counter(url: &str, scope: &str) -> u64 {
    block_on(async {
        let mut s = Store::connect(StoreConfig::new(url)).await.unwrap();
        s.current(&ScopeKey::new(scope).unwrap())
            .await
            .unwrap()
            .current
    })
}

#[test]
fn eight_processes_two_thousand_each_on_one_series() {
    eight_processes_two_thousand_each(Engine::MySql);
}

#[test]
fn eight_processes_two_thousand_each_on_one_series_postgres() {
    eight_processes_two_thousand_each(Engine::Postgres);
}

fn eight_processes_two_thousand_each(engine: Engine) {
    let start = 1000;
    let url = setup_on(engine, "eight", "42:2019", start);
    let finished = run(&url, "42:2019", 8, 2000, 0);
    let allocs = allocations(&finished);
    assert_eq!(allocs.len(), 16_000);
    let last = start + 16_000 - 1;
    let findings = check_contiguous(&allocs, start, last);
    assert!(findings.is_clean(), "{findings}");
    assert_eq!(counter(&url, "42:2019"), last);
    // Every process got numbers from across the range: they interleaved.
    for f in &finished {
        let mine: Vec<u64> = f
            .stdout
            .lines()
            .filter_map(Allocation::parse_line)
            .map(|a| a.first)
            .collect();
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "a process saw its numbers go down"
        );
    }
}

#[test]
fn batches_interleaved_with_single_numbers_never_overlap() {
    batches_interleaved(Engine::MySql);
}

#[test]
fn batches_interleaved_with_single_numbers_never_overlap_postgres() {
    batches_interleaved(Engine::Postgres);
}

fn batches_interleaved(engine: Engine) {
    let start = 1;
    let url = setup_on(engine, "batches", "batch:2020", start);
    let finished = run(&url, "batch:2020", 8, 600, 3);
    let allocs = allocations(&finished);
    assert_eq!(allocs.len(), 8 * 600);
    assert!(
        allocs.iter().any(|a| a.last > a.first),
        "some batches were taken"
    );
    let last = counter(&url, "batch:2020");
    let findings = check_contiguous(&allocs, start, last);
    assert!(findings.is_clean(), "{findings}");
    assert_eq!(findings.total, last - start + 1);
}

/// The blocking lane (the PHP extension's allocation path) and the async
/// store on one series at once: four processes each, singles and batches.
#[test]
fn the_blocking_lane_and_the_async_store_together_never_overlap() {
    let start = 1;
    let url = setup("lane-mix", "mix:2021", start);
    let commands = (0..8)
        .map(|i| {
            let mut c = Command::new(WORKER);
            c.env(
                "COUNTERFOIL_WORKER_MODE",
                if i % 2 == 0 { "lane" } else { "" },
            );
            c.args([&url, "wp_", "mix:2021", "800", "5"]);
            c
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300)).unwrap();
    let allocs = allocations(&finished);
    assert_eq!(allocs.len(), 8 * 800);
    let last = counter(&url, "mix:2021");
    let findings = check_contiguous(&allocs, start, last);
    assert!(findings.is_clean(), "{findings}");
    assert_eq!(findings.total, last - start + 1);
}

/// Negative controls: the broken allocators, run through the same
/// overlapping processes, output, parser and checker, are caught.
#[test]
fn the_same_pipeline_catches_maxplusone_and_the_stale_read_back() {
    for mode in ["maxplusone", "stale-read"] {
        let scope = "neg:2026";
        let url = setup(&format!("neg_{}", mode.replace('-', "_")), scope, 1);
        let finished = run_mode(&url, scope, 4, 400, 0, mode);
        let allocs = allocations(&finished);
        assert_eq!(allocs.len(), 1600);
        let findings = check_contiguous(&allocs, 1, counter(&url, scope));
        assert!(
            !findings.duplicates.is_empty(),
            "{mode}: the checker must report duplicates: {findings}"
        );
    }
}

#[test]
fn the_checker_catches_what_maxplusone_does() {
    // The checker must be able to fail: feed it the racy MAX()+1 pattern's
    // typical history (two processes reading the same MAX).
    let history = [
        Allocation::one(1),
        Allocation::one(2),
        Allocation::one(2),
        Allocation::one(4),
    ];
    let f = check_contiguous(&history, 1, 4);
    assert_eq!(f.duplicates, vec![(2, 2)]);
    assert_eq!(f.gaps, vec![(3, 3)]);
}

/// Lambda-style: 400 short-lived OS processes, 16 at a time, each
/// connecting, allocating once and exiting, on each engine: 400 distinct,
/// contiguous numbers.
#[test]
fn four_hundred_short_lived_processes_sixteen_at_a_time() {
    for engine in [Engine::MySql, Engine::Postgres] {
        let scope = "lambda:2026";
        let url = setup_on(engine, "lambda", scope, 1);
        let mut all = Vec::new();
        for _ in 0..25 {
            // Spawned at once, no start line: each process connects,
            // allocates once and exits, knowing nothing of the others.
            let children: Vec<_> = (0..16)
                .map(|_| {
                    Command::new(WORKER)
                        .args([url.as_str(), "wp_", scope, "1"])
                        .stdout(std::process::Stdio::piped())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for child in children {
                let out = child.wait_with_output().unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(
                    out.status.success(),
                    "{engine:?}: a process failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let mine: Vec<Allocation> =
                    stdout.lines().filter_map(Allocation::parse_line).collect();
                assert_eq!(mine.len(), 1, "{engine:?}: {stdout}");
                all.extend(mine);
            }
        }
        assert_eq!(all.len(), 400, "{engine:?}");
        let findings = check_contiguous(&all, 1, 400);
        assert!(findings.is_clean(), "{engine:?}: {findings}");
        assert_eq!(counter(&url, scope), 400, "{engine:?}");
    }
}
