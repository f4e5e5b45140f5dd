//! Real overlap: several OS processes allocating from one series at the same
//! time, then the checker: every number once, exactly the expected range.

use std::process::Command;
use std::time::Duration;

use counterfoil_core::{ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::check::{check_contiguous, Allocation};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::workers::{run_overlapping, Finished};
use counterfoil_tests::MariaDb;

const WORKER: &str = env!("CARGO_BIN_EXE_alloc-worker");

fn setup(label: &str, scope: &str, start: u64) -> String {
    let url = MariaDb::shared().fresh_database(label).unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&ScopeKey::new(scope).unwrap(), start)
            .await
            .unwrap();
    });
    url
}

fn run(url: &str, scope: &str, processes: usize, calls: u64, batch_every: u64) -> Vec<Finished> {
    let commands = (0..processes)
        .map(|_| {
            let mut c = Command::new(WORKER);
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

fn allocations(finished: &[Finished]) -> Vec<Allocation> {
    finished
        .iter()
        .flat_map(|f| f.stdout.lines().filter_map(Allocation::parse_line))
        .collect()
}

fn counter(url: &str, scope: &str) -> u64 {
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(url)).await.unwrap();
        s.current(&ScopeKey::new(scope).unwrap())
            .await
            .unwrap()
            .current
    })
}

#[test]
fn eight_processes_two_thousand_each_on_one_series() {
    let start = 1000;
    let url = setup("eight", "42:2019", start);
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
    let start = 1;
    let url = setup("batches", "batch:2020", start);
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
