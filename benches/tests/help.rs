//! Every benchmark binary answers `--help` with its usage, at once, starting
//! nothing and writing nothing.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn every_benchmark_answers_help_without_running() {
    for bin in [
        env!("CARGO_BIN_EXE_audit-1m"),
        env!("CARGO_BIN_EXE_books-1m"),
        env!("CARGO_BIN_EXE_bench-table"),
        env!("CARGO_BIN_EXE_pg-table"),
        env!("CARGO_BIN_EXE_chain-cost"),
        env!("CARGO_BIN_EXE_one-trip-cost"),
        env!("CARGO_BIN_EXE_galera-confirm-cost"),
        env!("CARGO_BIN_EXE_php-side-by-side"),
        env!("CARGO_BIN_EXE_fpm-side-by-side"),
        env!("CARGO_BIN_EXE_wp-side-by-side"),
        env!("CARGO_BIN_EXE_woo-counts"),
    ] {
        let started = Instant::now();
        let out = Command::new(bin).arg("--help").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{bin}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.starts_with("Usage: "), "{bin}: {text}");
        assert!(
            out.stderr.is_empty(),
            "{bin} started something: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{bin} took {:?}",
            started.elapsed()
        );
    }
}
