//! The side-by-side benchmark table (issue 7): one private MariaDB (durable:
//! innodb_flush_log_at_trx_commit = 1), every contender measured in the same
//! run, at 1, 4, 16 and 64 concurrent clients, on one hot series and on 1,000
//! series. Prints one markdown table per series mode (allocations/s, the
//! ratio against the raw loop, p50/p99 latency) and writes an SVG plot of
//! throughput against clients.
//!
//! Contenders: (1) raw mysql_async loop of the allocation statement — the
//! limit; (2) counterfoil-core allocate; (3) the PHP extension; (4) the
//! article's PHP (UPDATE then SELECT LAST_INSERT_ID() through mysqli); (5) a
//! SELECT … FOR UPDATE transaction (seed 000's locked counter row); (6) the
//! full payment flow through the core as several statements and (6o) the
//! same in one round trip (issue 30), and (6r) a raw SQL loop of the
//! several-statement transaction; (7) the broken MAX()+1 with its duplicate
//! rate; (8) allocate_many batches of 100 (numbers/s).
//!
//! Each cell is measured in R rounds (default 3; the rounds are interleaved,
//! so a noisy moment of this shared machine hits one round of many cells,
//! not every round of one); the table shows each cell's median rate and
//! median latencies, and a legend says what each contender does.
//!
//! Usage: `cargo build --release -p counterfoil-php -p counterfoil-benches &&
//! ./target/release/bench-table [--seconds S] [--rounds R] [--svg PATH]`

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use counterfoil_benches::timed_workers;
use counterfoil_core::{PaymentRef, ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::php::{extension_path, repo_root};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};

const CLIENTS: [usize; 4] = [1, 4, 16, 64];

/// Unique transaction ids across every cell of the run.
static TXN: AtomicU64 = AtomicU64::new(0);
const CONTENDERS: [&str; 11] = [
    "(1) raw mysql_async loop",
    "(2) counterfoil-core allocate",
    "(3) PHP extension",
    "(4) article PHP (mysqli)",
    "(5) SELECT … FOR UPDATE txn",
    "(6) payment flow (core)",
    "(6r) payment flow (raw SQL)",
    "(7) broken MAX()+1",
    "(8) allocate_many ×100 (numbers/s)",
    "(9) mysqli prepared + insert_id (PHP)",
    "(6o) payment flow, one trip (core)",
];

/// What each contender does, printed under the tables.
const WHAT: [&str; 11] = [
    "one `UPDATE … SET current_value = LAST_INSERT_ID(current_value + 1)` per call through mysql_async, the number from the OK packet: the ceiling",
    "`SeriesStore::allocate`: the same statement with the store's deadline, retry and connection checks",
    "`allocate_invoice_number()` of the built extension, one PHP CLI process per client",
    "the article's PHP: the UPDATE, then `SELECT LAST_INSERT_ID()`, through mysqli (two round trips), one PHP CLI process per client",
    "`BEGIN; SELECT … FOR UPDATE; UPDATE; INSERT` (the registry row) `COMMIT` per call",
    "`SeriesStore::record_payment` sent as several statements (`one_trip_payments(false)`): payment row, number, registry row and chain entry in one transaction, seven round trips under the series' lock",
    "the same payment transaction as raw SQL through mysql_async",
    "`SELECT MAX(number)+1`, then INSERT, no lock or unique key: broken (its duplicates are counted)",
    "`allocate_many` of 100 numbers per call; the rate counts numbers",
    "what a careful PHP developer writes: one prepared `UPDATE … LAST_INSERT_ID(current_value + 1)` through mysqli, `$stmt->insert_id` from the OK packet, the one-row check; one PHP CLI process per client",
    "`SeriesStore::record_payment` in one round trip (the default): the same transaction, chain entry included, as one multi-statement packet that ends in COMMIT, so the series' lock is held only while the server works",
];

#[derive(Clone, Default)]
struct Cell {
    rate: f64,
    p50_us: u64,
    p99_us: u64,
    note: String,
}

/// The median of a cell's rounds: median rate, median p50 and p99; the note
/// of the round with the median rate.
fn median_cell(mut cells: Vec<Cell>) -> Cell {
    let mid = cells.len() / 2;
    let median = |mut v: Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let p50 = median(cells.iter().map(|c| c.p50_us).collect());
    let p99 = median(cells.iter().map(|c| c.p99_us).collect());
    cells.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let mut cell = cells.swap_remove(mid);
    cell.p50_us = p50;
    cell.p99_us = p99;
    cell
}

fn scope(series: usize) -> String {
    let u = if series > 1 {
        fastrand::usize(1..=series)
    } else {
        1
    };
    format!("{u}:2019")
}

fn percentile(lat: &mut [u32], p: f64) -> u64 {
    if lat.is_empty() {
        return 0;
    }
    lat.sort_unstable();
    u64::from(lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)])
}

/// Runs `clients` tasks, each with its own connection, calling `op` until the time is up.
async fn rust_cell<F, Fut>(
    url: &str,
    clients: usize,
    seconds: f64,
    per_call: u64,
    op: F,
) -> Result<(Cell, u64)>
where
    F: Fn(Conn, Option<SeriesStore>, u64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(Conn, Option<SeriesStore>)>> + Send,
{
    rust_cell_with(StoreConfig::new(url), clients, seconds, per_call, op).await
}

/// As [`rust_cell`], each client's store made with `config`.
async fn rust_cell_with<F, Fut>(
    config: StoreConfig,
    clients: usize,
    seconds: f64,
    per_call: u64,
    op: F,
) -> Result<(Cell, u64)>
where
    F: Fn(Conn, Option<SeriesStore>, u64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<(Conn, Option<SeriesStore>)>> + Send,
{
    let mut tasks = Vec::new();
    let calls = Arc::new(AtomicU64::new(0));
    // Connect everyone first.
    let mut conns = Vec::new();
    for _ in 0..clients {
        let conn = Conn::new(Opts::from_url(&config.url)?).await?;
        let store = SeriesStore::connect(config.clone()).await?;
        conns.push((conn, store));
    }
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    for (i, (conn, store)) in conns.into_iter().enumerate() {
        let op = op.clone();
        let calls = calls.clone();
        tasks.push(tokio::spawn(async move {
            let (mut conn, mut store) = (conn, Some(store));
            let mut lat = Vec::new();
            let mut n = (i as u64) << 40;
            while Instant::now() < until {
                let t = Instant::now();
                let (c, s) = op(conn, store, n).await?;
                conn = c;
                store = s;
                lat.push(t.elapsed().as_micros() as u32);
                n += 1;
                calls.fetch_add(1, Ordering::Relaxed);
            }
            anyhow::Ok(lat)
        }));
    }
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let total = calls.load(Ordering::Relaxed);
    Ok((
        Cell {
            rate: total as f64 * per_call as f64 / elapsed,
            p50_us: percentile(&mut lat, 0.5),
            p99_us: percentile(&mut lat, 0.99),
            note: String::new(),
        },
        total,
    ))
}

fn php_cell(
    url: &str,
    script: &str,
    extension: bool,
    clients: usize,
    seconds: f64,
    series: usize,
) -> Result<Cell> {
    let commands = (0..clients)
        .map(|_| {
            let mut c = std::process::Command::new("php");
            if extension {
                c.arg("-d")
                    .arg(format!("extension={}", extension_path().display()));
            }
            c.arg(repo_root().join("benches/php").join(script))
                .env("BENCH_URL", url)
                .env("BENCH_SECONDS", seconds.to_string())
                .env("BENCH_SERIES", series.to_string());
            c
        })
        .collect();
    let m = timed_workers(script, commands, seconds)?;
    Ok(Cell {
        rate: m.per_second,
        p50_us: m.p50_us,
        p99_us: m.p99_us,
        note: String::new(),
    })
}

async fn measure(
    url: &str,
    contender: usize,
    clients: usize,
    seconds: f64,
    series: usize,
) -> Result<Cell> {
    const ALLOCATE: &str = "UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + ?) WHERE scope_key = ?";
    let cell = match contender {
        0 => rust_cell(url, clients, seconds, 1, move |mut c, s, _| async move {
            c.exec_drop(ALLOCATE, (1u64, scope(series))).await?;
            anyhow::ensure!(c.affected_rows() == 1);
            Ok((c, s))
        }).await?.0,
        1 => rust_cell(url, clients, seconds, 1, move |c, s, _| async move {
            let mut s = s.unwrap();
            s.allocate(&ScopeKey::new(scope(series))?).await?;
            Ok((c, Some(s)))
        }).await?.0,
        2 => php_cell(url, "extension.php", true, clients, seconds, series)?,
        3 => php_cell(url, "article.php", false, clients, seconds, series)?,
        9 => php_cell(url, "mysqli_prepared.php", false, clients, seconds, series)?,
        4 => rust_cell(url, clients, seconds, 1, move |mut c, s, _| async move {
            let k = scope(series);
            c.query_drop("BEGIN").await?;
            let cur: Option<u64> = c.exec_first("SELECT current_value FROM wp_invoice_sequences WHERE scope_key = ? FOR UPDATE", (&k,)).await?;
            c.exec_drop("UPDATE wp_invoice_sequences SET current_value = current_value + 1 WHERE scope_key = ?", (&k,)).await?;
            c.exec_drop("INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, created_at, updated_at) VALUES (?, ?, 'issued', 'bench', UTC_TIMESTAMP(), UTC_TIMESTAMP())", (&k, cur.unwrap_or(0) + 1)).await?;
            c.query_drop("COMMIT").await?;
            Ok((c, s))
        }).await?.0,
        5 | 10 => rust_cell_with(StoreConfig::new(url).one_trip_payments(contender == 10), clients, seconds, 1, move |c, s, n| async move {
            let mut s = s.unwrap();
            let txn = format!("core-{n}-{}", TXN.fetch_add(1, Ordering::Relaxed));
            s.record_payment(&ScopeKey::new(scope(series))?, &PaymentRef::new("bench", &txn)?, None, None).await?;
            Ok((c, Some(s)))
        }).await?.0,
        6 => rust_cell(url, clients, seconds, 1, move |mut c, s, n| async move {
            let k = scope(series);
            let txn = format!("raw-{n}-{}", TXN.fetch_add(1, Ordering::Relaxed));
            c.query_drop("START TRANSACTION").await?;
            c.exec_drop("INSERT INTO wp_counterfoil_payments (gateway, transaction_id, scope_key, amount, currency, created_at) VALUES ('bench', ?, ?, NULL, NULL, UTC_TIMESTAMP())", (&txn, &k)).await?;
            let pid = c.last_insert_id().unwrap_or(0);
            c.exec_drop(ALLOCATE, (1u64, &k)).await?;
            let num = c.last_insert_id().unwrap_or(0);
            c.exec_drop("INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES (?, ?, 'reserved', 'payment', 'bench', ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())", (&k, num, &txn)).await?;
            c.exec_drop("UPDATE wp_counterfoil_payments SET number = ? WHERE id = ?", (num, pid)).await?;
            c.query_drop("COMMIT").await?;
            Ok((c, s))
        }).await?.0,
        7 => {
            let (mut cell, _) = rust_cell(url, clients, seconds, 1, move |mut c, s, _| async move {
                let k = scope(series);
                let next: Option<u64> = c.exec_first("SELECT COALESCE(MAX(number), 0) + 1 FROM bench_broken WHERE scope_key = ?", (&k,)).await?;
                c.exec_drop("INSERT INTO bench_broken (scope_key, number) VALUES (?, ?)", (&k, next.unwrap_or(1))).await?;
                Ok((c, s))
            }).await?;
            let mut c = Conn::new(Opts::from_url(url)?).await?;
            let row: Option<(u64, u64)> = c.query_first("SELECT COUNT(*), COUNT(DISTINCT scope_key, number) FROM bench_broken").await?;
            c.query_drop("TRUNCATE bench_broken").await?;
            c.disconnect().await?;
            let (all, distinct) = row.unwrap_or((0, 0));
            cell.note = format!("{:.0}% duplicates", 100.0 * (all - distinct) as f64 / all.max(1) as f64);
            cell
        }
        _ => rust_cell(url, clients, seconds, 100, move |c, s, _| async move {
            let mut s = s.unwrap();
            s.allocate_many(&ScopeKey::new(scope(series))?, 100).await?;
            Ok((c, Some(s)))
        }).await?.0,
    };
    Ok(cell)
}

fn svg(results: &BTreeMap<(usize, usize, usize), Cell>, series: usize) -> String {
    let (w, h, left, bottom) = (760.0, 420.0, 70.0, 50.0);
    let max = results
        .iter()
        .filter(|((s, c, _), _)| *s == series && *c != 8)
        .map(|(_, v)| v.rate)
        .fold(1.0, f64::max)
        * 1.1;
    let x = |i: usize| left + (i as f64) * (w - left - 180.0) / 3.0;
    let y = |r: f64| h - bottom - r / max * (h - bottom - 20.0);
    let colors = [
        "#000", "#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#7f7f7f",
    ];
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"14\" font-size=\"13\">Allocations/s against concurrent clients, one hot series (MariaDB 10.11, 2 cores, flush=1)</text>\n"
    );
    out += &format!(
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/>\n",
        h - bottom,
        x(3),
        h - bottom
    );
    out += &format!(
        "<line x1=\"{left}\" y1=\"20\" x2=\"{left}\" y2=\"{}\" stroke=\"#444\"/>\n",
        h - bottom
    );
    for (i, c) in CLIENTS.iter().enumerate() {
        out += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{c}</text>\n",
            x(i),
            h - bottom + 16.0
        );
    }
    out += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">clients</text>\n",
        x(1) + 60.0,
        h - 12.0
    );
    for k in 0..=4 {
        let r = max * k as f64 / 4.0;
        out += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.0}</text>\n",
            left - 6.0,
            y(r) + 4.0,
            r
        );
    }
    for (ci, name) in CONTENDERS.iter().enumerate().take(8) {
        let pts: Vec<String> = CLIENTS
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                results
                    .get(&(series, ci, *c))
                    .map(|v| format!("{:.1},{:.1}", x(i), y(v.rate)))
            })
            .collect();
        out += &format!(
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
            colors[ci],
            pts.join(" ")
        );
        out += &format!(
            "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
            x(3) + 10.0,
            40.0 + 16.0 * ci as f64,
            colors[ci],
            name.replace('&', "&amp;")
        );
    }
    out + "</svg>\n"
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: bench-table [--seconds S] [--rounds R] [--svg PATH] [--hot-only]

Every contender side by side at 1-64 clients, one hot series and 1000 series, S seconds a cell (default 1.5), each cell measured R times (default 3, interleaved) and reported as its median. Writes its plot to PATH (default target/benchmarks-clients.svg; docs/benchmarks-clients.svg is refreshed only when asked). --hot-only measures the one hot series alone, and only the payment flows with their references ((1), (2), (5), (6), (6r), (6o)).");
    let args: Vec<String> = std::env::args().collect();
    let seconds: f64 = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.5);
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let hot_only = args.iter().any(|a| a == "--hot-only");
    let svg_path = args
        .iter()
        .position(|a| a == "--svg")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "target/benchmarks-clients.svg".into());
    let series: Vec<String> = (1..=1000).map(|u| format!("{u}:2019")).collect();
    let (server, url) = counterfoil_benches::bench_server(
        "bench-table",
        &["--max-connections=600", "--innodb-buffer-pool-size=256M"],
        &series,
    )?;
    block_on(async {
        let mut c = Conn::new(Opts::from_url(&url)?).await?;
        c.query_drop("CREATE TABLE bench_broken (id BIGINT AUTO_INCREMENT PRIMARY KEY, scope_key VARCHAR(191) NOT NULL, number BIGINT UNSIGNED NOT NULL, KEY s (scope_key, number)) ENGINE=InnoDB").await?;
        c.disconnect().await?;
        anyhow::Ok(())
    })?;
    let rt = counterfoil_benches::client_runtime()?;
    let mut rounds_of: BTreeMap<(usize, usize, usize), Vec<Cell>> = BTreeMap::new();
    for round in 1..=rounds {
        for series in [1usize, 1000] {
            if hot_only && series != 1 {
                continue;
            }
            for clients in CLIENTS {
                for (ci, name) in CONTENDERS.iter().enumerate() {
                    if hot_only && ![0, 1, 4, 5, 6, 10].contains(&ci) {
                        continue;
                    }
                    let cell = rt.block_on(measure(&url, ci, clients, seconds, series))?;
                    eprintln!("round {round}/{rounds} {series:>4} series {clients:>2} clients {name:<36} {:>10.0}/s  p50 {:>6} µs  p99 {:>7} µs {}", cell.rate, cell.p50_us, cell.p99_us, cell.note);
                    rounds_of
                        .entry((series, ci, clients))
                        .or_default()
                        .push(cell);
                }
            }
        }
    }
    let results: BTreeMap<(usize, usize, usize), Cell> = rounds_of
        .into_iter()
        .map(|(k, cells)| (k, median_cell(cells)))
        .collect();
    for series in [1usize, 1000] {
        if hot_only && series != 1 {
            continue;
        }
        println!(
            "\n### {}\n",
            if series == 1 {
                "One hot series"
            } else {
                "1,000 series (each call picks one at random)"
            }
        );
        println!(
            "| contender | {} |",
            CLIENTS
                .map(|c| format!("{c} client{}", if c == 1 { "" } else { "s" }))
                .join(" | ")
        );
        println!("|---|{}|", CLIENTS.map(|_| "---").join("|"));
        for (ci, name) in CONTENDERS.iter().enumerate() {
            if !results.contains_key(&(series, ci, 1)) {
                continue;
            }
            let cells: Vec<String> = CLIENTS
                .iter()
                .map(|c| {
                    let v = &results[&(series, ci, *c)];
                    let base = results[&(series, 0, *c)].rate;
                    let extra = if v.note.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", v.note)
                    };
                    format!(
                        "{:.0} ({:.2}×) {}/{} µs{extra}",
                        v.rate,
                        v.rate / base,
                        v.p50_us,
                        v.p99_us
                    )
                })
                .collect();
            println!("| {name} | {} |", cells.join(" | "));
        }
    }
    let r = |ci: usize, c: usize| results[&(1, ci, c)].rate;
    let min_ratio = |a: usize, b: usize| {
        CLIENTS
            .iter()
            .map(|c| r(a, *c) / r(b, *c))
            .fold(f64::MAX, f64::min)
    };
    println!("\nCells: allocations/s (ratio to (1) at the same clients) p50/p99 latency; the median of {rounds} rounds of {seconds} s per cell.\n");
    for (name, what) in CONTENDERS.iter().zip(WHAT) {
        println!("- {name}: {what}");
    }
    if !hot_only {
        println!(
        "Targets (hot series, worst over 1–64 clients): (2) ≥ 0.9× (1): {:.2}×; (3) ≥ 1.3× (4): {:.2}× at 1 client; (3) ≥ 1.1× (9) mysqli prepared: {:.2}× worst ({}); (6) ≥ 0.9× (6r): {:.2}×; batches ≥ 1,000,000 numbers/s: {:.0}/s at best.",
        min_ratio(1, 0),
        r(2, 1) / r(3, 1),
        min_ratio(2, 9),
        CLIENTS
            .iter()
            .map(|c| format!("{:.2}× at {c}", r(2, *c) / r(9, *c)))
            .collect::<Vec<_>>()
            .join(", "),
        min_ratio(5, 6),
        CLIENTS.iter().map(|c| r(8, *c)).fold(0.0, f64::max)
    );
    }
    let at = |a: usize, b: usize| {
        [4usize, 16, 64]
            .iter()
            .map(|c| format!("{:.2}× at {c}", r(a, *c) / r(b, *c)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "One trip (issue 30, hot series): (6o) ≥ 2× (6): {}; (6o) ≥ 0.6× (2) core allocate: {}; (6o) against (1) raw: {}; (6o) against (5) seed 000's locked row: {}.",
        at(10, 5),
        at(10, 1),
        at(10, 0),
        at(10, 4)
    );
    std::fs::write(&svg_path, svg(&results, 1))?;
    eprintln!("plot written to {svg_path}");
    drop(server);
    Ok(())
}
