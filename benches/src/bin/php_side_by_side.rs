//! Side-by-side benchmark of the PHP extension (issue 3), in one run against
//! one private MariaDB (durable: innodb_flush_log_at_trx_commit = 1):
//!
//! - `raw`: a raw mysql_async loop of the allocation statement (the async
//!   driver's limit);
//! - `raw blocking`: the same loop on the blocking `mysql` crate (the
//!   driver under the extension's allocation lane, whose allocation now
//!   waits in `poll()` instead of the driver's blocking read);
//! - `extension`: `allocate_invoice_number()` through the extension;
//! - `article`: the article's PHP code through mysqli (UPDATE, then
//!   `SELECT LAST_INSERT_ID()`);
//! - `prepared`: what a careful PHP developer writes: one prepared
//!   `UPDATE … LAST_INSERT_ID(current_value + 1)` through mysqli, reading
//!   `$stmt->insert_id` (the same OK-packet trick, in C), with the one-row
//!   check (issue 18's honest competitor).
//!
//! With `--per-request` each PHP call is one request's work, as in a php-fpm
//! worker: mysqli connects, prepares and closes every time (`prepared`,
//! `article`), or takes its persistent connection (`persistent`: `p:` host,
//! prepare, execute, close); the extension is configured every time and
//! keeps its connection in the process, as it does between requests. The
//! raw loops are left out there.
//!
//! At 1, 8 and 64 processes (`--procs`), each cell run `--rounds` times
//! interleaved; prints a markdown table of the median allocations/s, p50/p99
//! latency, CPU per call (user + system, from each worker's own rusage over
//! its timed loop: on 2 cores shared with the server, CPU per call is
//! throughput) and ratios.
//!
//! Usage: `cargo run --release -p counterfoil-benches --bin php-side-by-side -- [--seconds S] [--rounds R] [--procs 1,8,64] [--socket] [--per-request]`
//! (needs `cargo build --release -p counterfoil-php` first).

use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;
use counterfoil_benches::{arg_counts, arg_number, median, series_server, timed_workers, Measured};
use counterfoil_tests::php::{extension_path, repo_root};

#[derive(Clone, Copy, PartialEq)]
enum Contender {
    Raw,
    RawBlocking,
    Extension,
    Article,
    Prepared,
    /// Per request only: mysqli's persistent connection.
    Persistent,
}

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Raw => "raw mysql_async loop (limit)",
            Contender::RawBlocking => "raw blocking mysql crate loop",
            Contender::Extension => "extension allocate_invoice_number()",
            Contender::Article => "article PHP (mysqli UPDATE + SELECT LAST_INSERT_ID())",
            Contender::Prepared => "mysqli prepared UPDATE + insert_id",
            Contender::Persistent => "mysqli persistent (p:) prepared UPDATE + insert_id",
        }
    }

    /// The short name of the ratio column against this contender.
    fn column(self) -> &'static str {
        match self {
            Contender::Raw => "raw",
            Contender::RawBlocking => "raw blocking",
            Contender::Extension => "extension",
            Contender::Article => "article",
            Contender::Prepared => "prepared",
            Contender::Persistent => "persistent",
        }
    }

    fn command(self, per_request: bool) -> Command {
        let mut c = self.program();
        if per_request {
            c.env("BENCH_PER_REQUEST", "1");
        }
        c
    }

    fn program(self) -> Command {
        let php_dir = repo_root().join("benches/php");
        match self {
            Contender::Raw => Command::new(sibling("raw-alloc-worker")),
            Contender::RawBlocking => {
                let mut c = Command::new(sibling("raw-alloc-worker"));
                c.env("BENCH_DRIVER", "blocking");
                c
            }
            Contender::Extension => {
                let mut c = Command::new("php");
                c.arg("-d")
                    .arg(format!("extension={}", extension_path().display()))
                    .arg(php_dir.join("extension.php"));
                c
            }
            Contender::Article => {
                let mut c = Command::new("php");
                c.arg(php_dir.join("article.php"));
                c
            }
            Contender::Prepared => {
                let mut c = Command::new("php");
                c.arg(php_dir.join("mysqli_prepared.php"));
                c
            }
            Contender::Persistent => {
                let mut c = Command::new("php");
                c.arg(php_dir.join("mysqli_prepared.php"))
                    .env("BENCH_PERSISTENT", "1");
                c
            }
        }
    }
}

fn sibling(bin: &str) -> PathBuf {
    std::env::current_exe()
        .expect("current exe")
        .with_file_name(bin)
}

fn run_cell(
    url: &str,
    who: Contender,
    procs: usize,
    seconds: f64,
    per_request: bool,
) -> Result<Measured> {
    let commands = (0..procs)
        .map(|_| {
            let mut c = who.command(per_request);
            c.env("BENCH_URL", url)
                .env("BENCH_SECONDS", seconds.to_string());
            c
        })
        .collect();
    timed_workers(who.name(), commands, seconds)
}

/// One cell of the table: medians, and the ratios against the baselines.
struct Row {
    procs: usize,
    who: Contender,
    rate: f64,
    p50: u64,
    p99: u64,
    cpu: f64,
    ratios: Vec<f64>,
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: php-side-by-side [--seconds S] [--rounds R] [--procs 1,8,64] [--socket] [--per-request]

The PHP extension beside the raw mysql_async and blocking mysql loops, the article's mysqli code and a prepared mysqli UPDATE reading insert_id, at each number of processes, R interleaved rounds of S seconds; allocations/s, latency and CPU per call. Over TCP on 127.0.0.1 by default; with --socket every contender connects through the server's unix socket. With --per-request each PHP call is one request's work: mysqli connects (or takes its persistent connection), prepares and closes every time, the extension is configured every time and keeps its connection, as in a php-fpm worker.");
    let args: Vec<String> = std::env::args().collect();
    let seconds = arg_number(&args, "--seconds", 3.0);
    let rounds = arg_number(&args, "--rounds", 3.0) as usize;
    let procs_list = arg_counts(&args, "--procs", &[1, 8, 64]);
    let socket = args.iter().any(|a| a == "--socket");
    let (server, url) = series_server("bench-php", 300, socket)?;
    let per_request = args.iter().any(|a| a == "--per-request");
    let contenders: &[Contender] = if per_request {
        &[
            Contender::Extension,
            Contender::Article,
            Contender::Prepared,
            Contender::Persistent,
        ]
    } else {
        &[
            Contender::Raw,
            Contender::RawBlocking,
            Contender::Extension,
            Contender::Article,
            Contender::Prepared,
        ]
    };
    // The ratio columns, by name.
    let baselines: &[Contender] = if per_request {
        &[
            Contender::Article,
            Contender::Prepared,
            Contender::Persistent,
        ]
    } else {
        &[Contender::Raw, Contender::Article, Contender::Prepared]
    };
    let mut table = Vec::new();
    for &procs in &procs_list {
        let mut samples: Vec<Vec<Measured>> = contenders.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for (i, who) in contenders.iter().enumerate() {
                let cell = run_cell(&url, *who, procs, seconds, per_request)?;
                eprintln!(
                    "round {}/{rounds}, {procs} proc: {:<55} {:>9.0}/s",
                    round + 1,
                    who.name(),
                    cell.per_second
                );
                samples[i].push(cell);
            }
        }
        let med: Vec<(f64, u64, u64, f64)> = samples
            .iter()
            .map(|cells| {
                let rate = median(cells.iter().map(|c| c.per_second).collect());
                let p50 = median(cells.iter().map(|c| c.p50_us as f64).collect()) as u64;
                let p99 = median(cells.iter().map(|c| c.p99_us as f64).collect()) as u64;
                let cpu = median(cells.iter().map(|c| c.cpu_us_per_call).collect());
                (rate, p50, p99, cpu)
            })
            .collect();
        // Ratios by name, never by position in the list.
        let rate_of = |who: Contender| {
            let i = contenders.iter().position(|c| *c == who).expect("listed");
            med[i].0
        };
        for (i, who) in contenders.iter().enumerate() {
            table.push(Row {
                procs,
                who: *who,
                rate: med[i].0,
                p50: med[i].1,
                p99: med[i].2,
                cpu: med[i].3,
                ratios: baselines.iter().map(|b| med[i].0 / rate_of(*b)).collect(),
            });
        }
    }
    let version = Command::new("php")
        .arg("-r")
        .arg("echo PHP_VERSION;")
        .output()?;
    println!(
        "\nSide-by-side, one private MariaDB (flush=1), {}{}, {seconds} s per cell, median of {rounds} rounds; PHP {}\n",
        if socket { "unix socket" } else { "TCP on 127.0.0.1" },
        if per_request { ", one request's work per call" } else { ", a loop of calls" },
        String::from_utf8_lossy(&version.stdout)
    );
    let columns: Vec<String> = baselines
        .iter()
        .map(|b| format!("vs {}", b.column()))
        .collect();
    println!(
        "| processes | contender | allocations/s | p50 µs | p99 µs | CPU µs/call | {} |",
        columns.join(" | ")
    );
    println!("|---|---|---|---|---|---|{}", "---|".repeat(columns.len()));
    for r in &table {
        let ratios: Vec<String> = r.ratios.iter().map(|x| format!("{x:.2}×")).collect();
        println!(
            "| {} | {} | {:.0} | {} | {} | {:.1} | {} |",
            r.procs,
            r.who.name(),
            r.rate,
            r.p50,
            r.p99,
            r.cpu,
            ratios.join(" | ")
        );
    }
    let get = |procs: usize, who: Contender| {
        table
            .iter()
            .find(|r| r.procs == procs && r.who == who)
            .expect("measured")
    };
    let ratio = |r: &Row, baseline: Contender| {
        let i = baselines
            .iter()
            .position(|b| *b == baseline)
            .expect("a column");
        r.ratios[i]
    };
    for &procs in &procs_list {
        let ext = get(procs, Contender::Extension);
        let mut verdict = Vec::new();
        for &baseline in baselines.iter().filter(|b| **b != Contender::Raw) {
            let other = get(procs, baseline);
            let x = ratio(ext, baseline);
            verdict.push(format!(
                "{x:.2}× {} (≥ 1.1×: {}), CPU per call {:.1} vs {:.1} µs ({})",
                baseline.column(),
                if x >= 1.1 { "met" } else { "NOT met" },
                ext.cpu,
                other.cpu,
                if ext.cpu <= other.cpu {
                    "no higher: met"
                } else {
                    "higher: NOT met"
                },
            ));
        }
        println!("{procs} process(es): extension {}.", verdict.join("; "));
    }
    drop(server);
    Ok(())
}
