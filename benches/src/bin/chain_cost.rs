//! What the tamper-evident chain costs (issue 28), measured in one run on
//! one private MariaDB (durable: innodb_flush_log_at_trx_commit = 1):
//!
//! 1. the payment transaction side by side, at 1, 4 and 16 clients on one
//!    hot series: (a) the transaction as raw SQL without the chain — the
//!    baseline; (b) the same plus the chain's three statements (the head
//!    under the series row's lock, the entry, the head moved), the hash
//!    computed by the core's rule; (c) `SeriesStore::record_payment`, which
//!    writes the chain; and, to show where the cost is, (d) = (b) with the
//!    statements after the allocation sent as two multi-statement packets,
//!    (e) = (a) + the head's two statements only, (f) = (a) + the entry's
//!    INSERT only. Each cell is the median of R interleaved rounds; the
//!    ratios (b)/(a) and (c)/(a) are the chain's cost (goal ≥ 0.9×).
//! 2. `counterfoil verify` on one series of N events (default 1,000,000:
//!    registry rows and their chain, built by SQL and the core's rule), on
//!    a WordPress site: wall time and peak RSS of the release CLI (goal:
//!    under 10 s).
//!
//! Usage: `cargo build --release -p counterfoil-tools -p counterfoil-benches
//! && ./target/release/chain-cost [--seconds S] [--rounds R] [--events N]`

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use counterfoil_core::chain::{self, Entry};
use counterfoil_core::{PaymentRef, ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};

const CLIENTS: [usize; 3] = [1, 4, 16];
const CONTENDERS: [&str; 6] = [
    "(a) payment transaction, raw SQL, no chain",
    "(b) the same + the chain's statements",
    "(c) counterfoil-core record_payment (chain)",
    "(d) (b) batched: 2 round trips after the allocation",
    "(e) (a) + head read and moved only",
    "(f) (a) + entry insert only",
];
static TXN: AtomicU64 = AtomicU64::new(0);
const SCOPE: &str = "1:2026";

/// The raw payment transaction; with `chained`, the chain's statements too.
async fn raw_payment(c: &mut Conn, chained: bool) -> Result<()> {
    raw_payment_parts(c, chained, chained).await
}

/// The raw payment transaction with the chain's head statements (read
/// under the lock, moved) and its entry's INSERT each on or off; with the
/// head off, the entry goes to a position of its own.
async fn raw_payment_parts(c: &mut Conn, with_head: bool, with_insert: bool) -> Result<()> {
    let chained = with_head || with_insert;
    let txn = format!("raw-{}", TXN.fetch_add(1, Ordering::Relaxed));
    c.query_drop("START TRANSACTION").await?;
    c.exec_drop("INSERT INTO wp_counterfoil_payments (gateway, transaction_id, scope_key, amount, currency, created_at) VALUES ('bench', ?, ?, '10.00', 'EUR', UTC_TIMESTAMP())", (&txn, SCOPE)).await?;
    let pid = c.last_insert_id().unwrap_or(0);
    c.exec_drop("UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = ? AND closed_by IS NULL", (SCOPE,)).await?;
    let num = c.last_insert_id().unwrap_or(0);
    c.exec_drop("INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES (?, ?, 'reserved', 'payment', 'bench', ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())", (SCOPE, num, &txn)).await?;
    c.exec_drop(
        "UPDATE wp_counterfoil_payments SET number = ?, scope_key = ? WHERE id = ?",
        (num, SCOPE, pid),
    )
    .await?;
    if chained {
        let head: Option<(u64, Option<String>)> = if !with_head {
            Some((TXN.fetch_add(1, Ordering::Relaxed) + 5_000_000, None))
        } else {
            c
            .exec_first(
                "SELECT chain_seq, chain_head FROM wp_invoice_sequences WHERE scope_key = ? FOR UPDATE",
                (SCOPE,),
            )
            .await?
        };
        let (seq, prev) = head.unwrap_or((0, None));
        let prev = prev.unwrap_or_else(|| chain::GENESIS.to_owned());
        let entry = bench_entry(num, &txn);
        let hash = chain::hash(&prev, &entry);
        if with_insert {
            c.exec_drop("INSERT INTO wp_counterfoil_chain (scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, event_at, prev_hash, hash) VALUES (?, ?, ?, 'issued', 'bench', ?, '10.00', 'EUR', NULL, NULL, ?, ?, ?)", (SCOPE, seq + 1, num, &txn, &entry.at, &prev, &hash)).await?;
        }
        if with_head {
            c.exec_drop("UPDATE wp_invoice_sequences SET chain_seq = ?, chain_head = ?, chain_from = COALESCE(chain_from, ?) WHERE scope_key = ? AND chain_seq = ?", (seq + 1, &hash, num, SCOPE, seq)).await?;
        }
    }
    c.query_drop("COMMIT").await?;
    Ok(())
}

/// The chain entry of a benchmark payment's number.
fn bench_entry(number: u64, txn: &str) -> Entry {
    Entry {
        scope_key: SCOPE.into(),
        number,
        event: "issued".into(),
        gateway: Some("bench".into()),
        transaction_id: Some(txn.to_owned()),
        amount: Some("10.00".into()),
        currency: Some("EUR".into()),
        post_id: None,
        reason: None,
        at: chain::utc_text(0),
    }
}

/// (b) with the statements after the allocation sent as two batches (text
/// protocol, several statements a round trip): the registry row, the
/// payment's number and the head; then the entry and the head moved.
async fn batched_payment(c: &mut Conn) -> Result<()> {
    let txn = format!("bat-{}", TXN.fetch_add(1, Ordering::Relaxed));
    c.query_drop("START TRANSACTION").await?;
    c.exec_drop("INSERT INTO wp_counterfoil_payments (gateway, transaction_id, scope_key, amount, currency, created_at) VALUES ('bench', ?, ?, '10.00', 'EUR', UTC_TIMESTAMP())", (&txn, SCOPE)).await?;
    let pid = c.last_insert_id().unwrap_or(0);
    c.exec_drop("UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = ? AND closed_by IS NULL", (SCOPE,)).await?;
    let num = c.last_insert_id().unwrap_or(0);
    let mut r = c
        .query_iter(format!(
            "INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) VALUES ('{SCOPE}', {num}, 'reserved', 'payment', 'bench', '{txn}', UTC_TIMESTAMP(), UTC_TIMESTAMP()); \
             UPDATE wp_counterfoil_payments SET number = {num}, scope_key = '{SCOPE}' WHERE id = {pid}; \
             SELECT chain_seq, chain_head FROM wp_invoice_sequences WHERE scope_key = '{SCOPE}' FOR UPDATE"
        ))
        .await?;
    let _: Vec<mysql_async::Row> = r.collect().await?;
    let _: Vec<mysql_async::Row> = r.collect().await?;
    let head: Vec<(u64, Option<String>)> = r.collect().await?;
    drop(r);
    let (seq, prev) = head.into_iter().next().unwrap_or((0, None));
    let prev = prev.unwrap_or_else(|| chain::GENESIS.to_owned());
    let entry = bench_entry(num, &txn);
    let hash = chain::hash(&prev, &entry);
    c.query_drop(format!(
        "INSERT INTO wp_counterfoil_chain (scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, event_at, prev_hash, hash) VALUES ('{SCOPE}', {}, {num}, 'issued', 'bench', '{txn}', '10.00', 'EUR', NULL, NULL, '{}', '{prev}', '{hash}'); \
         UPDATE wp_invoice_sequences SET chain_seq = {}, chain_head = '{hash}', chain_from = COALESCE(chain_from, {num}) WHERE scope_key = '{SCOPE}' AND chain_seq = {seq}",
        seq + 1,
        entry.at,
        seq + 1
    ))
    .await?;
    c.query_drop("COMMIT").await?;
    Ok(())
}

/// One cell: `clients` tasks for `seconds`; payments per second.
async fn cell(url: &str, contender: usize, clients: usize, seconds: f64) -> Result<f64> {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let count = std::sync::Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (url, count) = (url.to_owned(), count.clone());
        tasks.push(tokio::spawn(async move {
            if contender == 2 {
                let mut s = SeriesStore::connect(StoreConfig::new(&url)).await?;
                let k = ScopeKey::new(SCOPE)?;
                while Instant::now() < until {
                    let txn = format!("core-{}", TXN.fetch_add(1, Ordering::Relaxed));
                    s.record_payment(
                        &k,
                        &PaymentRef::new("bench", &txn)?,
                        Some("10.00"),
                        Some("EUR"),
                    )
                    .await?;
                    count.fetch_add(1, Ordering::Relaxed);
                }
            } else {
                let mut c = Conn::new(Opts::from_url(&url)?).await?;
                while Instant::now() < until {
                    if contender == 4 {
                        raw_payment_parts(&mut c, true, false).await?;
                    } else if contender == 5 {
                        raw_payment_parts(&mut c, false, true).await?;
                    } else if contender == 3 {
                        batched_payment(&mut c).await?;
                    } else {
                        raw_payment(&mut c, contender == 1).await?;
                    }
                    count.fetch_add(1, Ordering::Relaxed);
                }
                c.disconnect().await?;
            }
            anyhow::Ok(())
        }));
    }
    let started = Instant::now();
    for t in tasks {
        t.await??;
    }
    Ok(count.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Builds one series of `events` numbers with their chain, and times
/// `counterfoil verify` on it.
fn verify_at_scale(server: &MariaDb, events: u64) -> Result<()> {
    let wp = WordPress::install(server, "chain1m", None)?;
    let db = wp.database().to_owned();
    let t = Instant::now();
    server.exec(
        &db,
        &format!(
            "INSERT INTO wp_invoice_sequences (scope_key, current_value, start_value) VALUES ('9:2026', {events}, 1);
             INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, created_at, updated_at) \
             SELECT '9:2026', seq, 'issued', 'api', '2026-06-01 10:00:00', '2026-06-01 10:00:00' FROM seq_1_to_{events}"
        ),
    )?;
    let mut prev = chain::GENESIS.to_owned();
    let mut batch = Vec::new();
    let at = "2026-06-01 10:00:00";
    for n in 1..=events {
        let entry = Entry {
            scope_key: "9:2026".into(),
            number: n,
            event: "issued".into(),
            at: at.into(),
            ..Entry::default()
        };
        let hash = chain::hash(&prev, &entry);
        batch.push(format!(
            "('9:2026', {n}, {n}, 'issued', '{at}', '{prev}', '{hash}')"
        ));
        prev = hash;
        if batch.len() == 5000 || n == events {
            server.exec(
                &db,
                &format!(
                    "INSERT INTO wp_counterfoil_chain (scope_key, seq, number, event, event_at, prev_hash, hash) VALUES {}",
                    batch.join(",")
                ),
            )?;
            batch.clear();
        }
    }
    server.exec(
        &db,
        &format!("UPDATE wp_invoice_sequences SET chain_seq = {events}, chain_head = '{prev}', chain_from = 1 WHERE scope_key = '9:2026'"),
    )?;
    eprintln!(
        "built one series of {events} numbers and chain entries in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let cli = counterfoil_tests::target_dir().join("release/counterfoil");
    let mut times = Vec::new();
    for _ in 0..3 {
        let mut cmd = std::process::Command::new(&cli);
        cmd.arg("verify").env("DATABASE_URL", wp.database_url());
        let (code, secs, rss, out) = counterfoil_benches::run_measured(cmd)?;
        if code != Some(0) || !out.contains(&format!("{events} chain entries checked")) {
            bail!("verify: exit {code:?}: {out}");
        }
        eprintln!("verify: {secs:.2} s, peak RSS {rss:.0} MB");
        times.push((secs, rss));
    }
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (secs, rss) = times[1];
    println!(
        "\n`counterfoil verify` (every check; one series of {events} numbers and {events} chain entries): median of 3 runs {secs:.2} s, peak RSS {rss:.0} MB"
    );
    Ok(())
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: chain-cost [--seconds S] [--rounds R] [--events N]

The payment transaction without and with the tamper-evident chain, and the core's record_payment, at 1, 4 and 16 clients on one hot series (S seconds a cell, default 2; R interleaved rounds, default 3; medians); then `counterfoil verify` on one series of N events (default 1000000).");
    let seconds: f64 = counterfoil_benches::arg("--seconds", 2.0);
    let rounds: usize = counterfoil_benches::arg("--rounds", 3usize).max(1);
    let events: u64 = counterfoil_benches::arg("--events", 1_000_000u64);
    let (server, url) = counterfoil_benches::bench_server(
        "chain-cost",
        &["--innodb-buffer-pool-size=512M"],
        &[SCOPE.to_owned()],
    )?;
    let rt = counterfoil_benches::client_runtime()?;
    let mut rates = vec![vec![Vec::new(); CLIENTS.len()]; CONTENDERS.len()];
    for round in 1..=rounds {
        for (ki, clients) in CLIENTS.iter().enumerate() {
            for (ci, name) in CONTENDERS.iter().enumerate() {
                let rate = rt.block_on(cell(&url, ci, *clients, seconds))?;
                eprintln!("round {round}/{rounds} {clients:>2} clients {name:<46} {rate:>8.0}/s");
                rates[ci][ki].push(rate);
            }
        }
    }
    println!(
        "| contender | {} |\n|---|---|---|---|",
        CLIENTS.map(|c| format!("{c} client(s)")).join(" | ")
    );
    let medians: Vec<Vec<f64>> = rates
        .into_iter()
        .map(|per| per.into_iter().map(median).collect())
        .collect();
    for (ci, name) in CONTENDERS.iter().enumerate() {
        let cells: Vec<String> = (0..CLIENTS.len())
            .map(|k| {
                format!(
                    "{:.0}/s ({:.2}×)",
                    medians[ci][k],
                    medians[ci][k] / medians[0][k]
                )
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    println!("\nPayments/s, the median of {rounds} rounds of {seconds} s per cell; the ratio is to (a) at the same clients.");
    if events == 0 {
        return Ok(());
    }
    verify_at_scale(&server, events)
}
