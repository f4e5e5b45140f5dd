//! Side-by-side benchmark of the PHP extension (issue 3), in one run against
//! one private MariaDB (durable: innodb_flush_log_at_trx_commit = 1):
//!
//! - `raw`: a raw mysql_async loop of the allocation statement (the limit);
//! - `extension`: `allocate_invoice_number()` through the extension;
//! - `article`: the article's PHP code through mysqli (UPDATE, then
//!   `SELECT LAST_INSERT_ID()`).
//!
//! At 1 and 8 processes, each cell run `--rounds` times interleaved; prints a
//! markdown table of the median allocations/s, p50/p99 latency, and ratios.
//!
//! Usage: `cargo run --release -p counterfoil-benches --bin php-side-by-side -- [--seconds S] [--rounds R]`
//! (needs `cargo build --release -p counterfoil-php` first).

use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;
use counterfoil_benches::{timed_workers, Measured};
use counterfoil_core::{ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::php::{extension_path, repo_root};
use counterfoil_tests::MariaDb;

#[derive(Clone, Copy, PartialEq)]
enum Contender {
    Raw,
    Extension,
    Article,
}

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Raw => "raw mysql_async loop (limit)",
            Contender::Extension => "extension allocate_invoice_number()",
            Contender::Article => "article PHP (mysqli UPDATE + SELECT LAST_INSERT_ID())",
        }
    }

    fn command(self) -> Command {
        let php_dir = repo_root().join("benches/php");
        match self {
            Contender::Raw => Command::new(sibling("raw-alloc-worker")),
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
        }
    }
}

fn sibling(bin: &str) -> PathBuf {
    std::env::current_exe()
        .expect("current exe")
        .with_file_name(bin)
}

fn run_cell(url: &str, who: Contender, procs: usize, seconds: f64) -> Result<Measured> {
    let commands = (0..procs)
        .map(|_| {
            let mut c = who.command();
            c.env("BENCH_URL", url)
                .env("BENCH_SECONDS", seconds.to_string());
            c
        })
        .collect();
    timed_workers(who.name(), commands, seconds)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: php-side-by-side [--seconds S] [--rounds R]

The PHP extension beside the raw mysql_async loop and the article's mysqli code, at 1 and 8 processes, R rounds of S seconds.");
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str, default: f64| -> f64 {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let seconds = opt("--seconds", 3.0);
    let rounds = opt("--rounds", 3.0) as usize;
    eprintln!("starting a private MariaDB (innodb_flush_log_at_trx_commit=1) …");
    let server = MariaDb::start("bench-php")?;
    let url = server.fresh_database("bench")?;
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await?;
        s.ensure_schema().await?;
        s.initialize(&ScopeKey::new("1:2019")?, 1).await?;
        anyhow::Ok(())
    })?;
    let contenders = [Contender::Raw, Contender::Extension, Contender::Article];
    let mut table = Vec::new();
    for procs in [1usize, 8] {
        let mut samples: Vec<Vec<Measured>> = contenders.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for (i, who) in contenders.iter().enumerate() {
                let cell = run_cell(&url, *who, procs, seconds)?;
                eprintln!(
                    "round {}/{rounds}, {procs} proc: {:<55} {:>9.0}/s",
                    round + 1,
                    who.name(),
                    cell.per_second
                );
                samples[i].push(cell);
            }
        }
        let med: Vec<(f64, u64, u64)> = samples
            .iter()
            .map(|cells| {
                let rate = median(cells.iter().map(|c| c.per_second).collect());
                let p50 = median(cells.iter().map(|c| c.p50_us as f64).collect()) as u64;
                let p99 = median(cells.iter().map(|c| c.p99_us as f64).collect()) as u64;
                (rate, p50, p99)
            })
            .collect();
        for (i, who) in contenders.iter().enumerate() {
            table.push((
                procs,
                *who,
                med[i],
                med[i].0 / med[0].0,
                med[i].0 / med[2].0,
            ));
        }
    }
    let version = Command::new("php")
        .arg("-r")
        .arg("echo PHP_VERSION;")
        .output()?;
    println!(
        "\nSide-by-side, one private MariaDB (flush=1), {seconds} s per cell, median of {rounds} rounds; PHP {}\n",
        String::from_utf8_lossy(&version.stdout)
    );
    println!("| processes | contender | allocations/s | p50 µs | p99 µs | vs raw | vs article |");
    println!("|---|---|---|---|---|---|---|");
    for (procs, who, (rate, p50, p99), vs_raw, vs_article) in &table {
        println!(
            "| {procs} | {} | {rate:.0} | {p50} | {p99} | {vs_raw:.2}× | {vs_article:.2}× |",
            who.name()
        );
    }
    let get = |procs: usize, who: Contender| {
        table
            .iter()
            .find(|r| r.0 == procs && r.1 == who)
            .map(|r| (r.3, r.4))
            .unwrap()
    };
    let (ext_vs_raw_1, ext_vs_article_1) = get(1, Contender::Extension);
    let (ext_vs_raw_8, ext_vs_article_8) = get(8, Contender::Extension);
    println!(
        "\nTargets: extension ≥ 1.3× article at 1 process: {ext_vs_article_1:.2}× ({}); \
         extension within 10% of raw: {ext_vs_raw_1:.2}× at 1, {ext_vs_raw_8:.2}× at 8 ({}). \
         At 8 processes vs article: {ext_vs_article_8:.2}×.",
        if ext_vs_article_1 >= 1.3 {
            "met"
        } else {
            "NOT met"
        },
        if ext_vs_raw_1 >= 0.9 && ext_vs_raw_8 >= 0.9 {
            "met"
        } else {
            "NOT met"
        },
    );
    drop(server);
    Ok(())
}
