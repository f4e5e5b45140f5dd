//! Where the one-trip payment packet's time goes (issue 30): on one hot
//! series, raw multi-statement packets of the payment transaction, each a
//! piece bigger than the one before, then the core's own packet,
//! `SeriesStore::record_payment` and `allocate_recorded`, in one trip and as
//! several statements, and the core's packet as a stored procedure (the
//! statements parsed once per connection: issue 30's alternative to a
//! packet); beside each rate, the server's CPU and
//! this process's CPU per call (from `/proc/<pid>/stat`, over the cell).
//!
//! It answers whether a payment can reach a given share of a plain
//! allocation's rate on this machine: when every contender runs the
//! machine's cores full, the rate is the cores divided by the CPU a call
//! costs, and each statement under the series' lock costs the server about
//! the same whatever it does.
//!
//! Usage: `cargo build --release -p counterfoil-benches &&
//! ./target/release/one-trip-cost [--seconds S] [--rounds R]`

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use counterfoil_core::mysql::sql::{
    bytes_literal, one_trip_payment_packet, text_literal, OneTripPayment, RegistrySql,
};
use counterfoil_core::{PaymentRef, ScopeKey, SeriesStore, StoreConfig, TablePrefix};
use counterfoil_tests::mariadb::block_on;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};

const CLIENTS: [usize; 3] = [4, 16, 64];
const SCOPE: &str = "1:2019";
/// Stands for the payment's transaction id in a packet; each call puts its
/// own id in its place (as text and as the core's hex literal).
const TXN: &str = "TXN-SLOT";

static CALLS: AtomicU64 = AtomicU64::new(0);

/// One contender: a raw packet, or one of the store's own flows.
enum Contender {
    Packet(String),
    /// `CALL bench_pay(…)`: the core's packet as a stored procedure.
    Procedure,
    /// `record_payment`, in one trip or not.
    Payment(bool),
    /// `allocate_recorded`, in one trip or not.
    Recorded(bool),
}

/// The allocation statement of the core's packet without the chain.
const ALLOCATE_NO_CHAIN: &str = "UPDATE `wp_invoice_sequences` SET current_value = \
     LAST_INSERT_ID(@cf_number := current_value + 1) WHERE scope_key = '1:2019' AND closed_by IS NULL";

/// The registry row of the payment flow, raw.
const REGISTRY_ROW: &str =
    "INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, \
     gateway, transaction_id, created_at, updated_at) VALUES ('1:2019', @n, 'reserved', 'payment', \
     'bench', 'TXN-SLOT', UTC_TIMESTAMP(), UTC_TIMESTAMP())";

fn contenders() -> Vec<(&'static str, Contender)> {
    let template =
        RegistrySql::new(&TablePrefix::new("wp_").expect("a valid prefix")).payment_one_trip;
    let p = OneTripPayment {
        scope: SCOPE,
        gateway: "bench",
        txn: TXN,
        amount: Some("19.99"),
        currency: Some("EUR"),
        period: Some("2019-01"),
        at: AT,
    };
    let core: Vec<String> = one_trip_payment_packet(&template, &p)
        .split(";\n")
        .map(str::to_owned)
        .collect();
    let alloc =
        "UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(@n := current_value + 1) \
                 WHERE scope_key = '1:2019'";
    let packet = |v: Vec<&str>| Contender::Packet(v.join(";\n"));
    vec![
        ("(a) allocation, autocommit", packet(vec![alloc])),
        ("(b) allocation in a transaction", packet(vec!["START TRANSACTION", alloc, "COMMIT"])),
        (
            "(c) (b) + a two-column registry row",
            packet(vec![
                "START TRANSACTION",
                alloc,
                "INSERT INTO bench_min_registry (scope_key, number) VALUES ('1:2019', @n)",
                "COMMIT",
            ]),
        ),
        ("(d) (b) + the registry row", packet(vec!["START TRANSACTION", alloc, REGISTRY_ROW, "COMMIT"])),
        (
            "(e) design.md §9's packet",
            packet(vec![
                "START TRANSACTION",
                "INSERT INTO wp_counterfoil_payments (gateway, transaction_id, scope_key, created_at) \
                 VALUES ('bench', 'TXN-SLOT', '1:2019', UTC_TIMESTAMP())",
                "SET @pid = LAST_INSERT_ID()",
                alloc,
                REGISTRY_ROW,
                "UPDATE wp_counterfoil_payments SET number = @n WHERE id = @pid",
                "COMMIT",
                "SELECT @pid, @n",
            ]),
        ),
        (
            "(f) the core's packet without the chain",
            packet(vec![&core[0], ALLOCATE_NO_CHAIN, &core[2], &core[3], &core[5]]),
        ),
        ("(g) the core's packet, raw", Contender::Packet(core.join(";\n"))),
        ("(g2) the core's packet, a stored procedure", Contender::Procedure),
        ("(h) record_payment, one trip", Contender::Payment(true)),
        ("(i) record_payment, several statements", Contender::Payment(false)),
        ("(j) allocate_recorded, one trip", Contender::Recorded(true)),
        ("(k) allocate_recorded, several statements", Contender::Recorded(false)),
    ]
}

/// The chain entry's time in every contender.
const AT: &str = "2019-01-02 03:04:05";

/// The core's packet as a stored procedure: the same statements, the
/// payment's transaction id and the chain entry's canonical input (which
/// holds it) as parameters, the number answered by a closing SELECT.
fn create_procedure() -> String {
    let template =
        RegistrySql::new(&TablePrefix::new("wp_").expect("a valid prefix")).payment_one_trip;
    let lit = |v: &str| text_literal(Some(v));
    let body = template
        .replace("%txn%", "p_txn")
        .replace("%chain_before_prev%", "p_before_prev")
        .replace("%chain_before_number%", "p_before_number")
        .replace("%chain_after_number%", "p_after_number")
        .replace("%scope%", &lit(SCOPE))
        .replace("%gateway%", &lit("bench"))
        .replace("%amount%", &lit("19.99"))
        .replace("%currency%", &lit("EUR"))
        .replace("%period%", &lit("2019-01"))
        .replace("%at%", &lit(AT));
    format!(
        "CREATE PROCEDURE bench_pay(IN p_txn VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, \
         IN p_before_prev VARBINARY(4096), IN p_before_number VARBINARY(4096), \
         IN p_after_number VARBINARY(4096)) BEGIN {body}; SELECT @cf_number; END"
    )
}

/// The CALL of [`create_procedure`]'s procedure for a payment `txn`.
fn call_procedure(txn: &str) -> String {
    let entry = counterfoil_core::chain::Entry {
        scope_key: SCOPE.to_owned(),
        number: 0,
        event: "issued".to_owned(),
        gateway: Some("bench".to_owned()),
        transaction_id: Some(txn.to_owned()),
        amount: Some("19.99".to_owned()),
        currency: Some("EUR".to_owned()),
        post_id: None,
        reason: None,
        at: AT.to_owned(),
    };
    let parts = counterfoil_core::chain::canonical_parts(&entry);
    format!(
        "CALL bench_pay({}, {}, {}, {})",
        text_literal(Some(txn)),
        bytes_literal(&parts.before_prev),
        bytes_literal(&parts.before_number),
        bytes_literal(&format!("\n{}", parts.after_number))
    )
}

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let field = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .context("a short /proc stat line")?
            .parse()
            .context("a tick count")
    };
    Ok(field(11)? + field(12)?)
}

/// `packet` with this call's transaction id in its slot.
fn filled(packet: &str, txn: &str) -> String {
    packet
        .replace(&bytes_literal(TXN), &bytes_literal(txn))
        .replace(TXN, txn)
}

/// Sends `text` and reads every statement's answer.
async fn send(conn: &mut Conn, text: String) -> Result<()> {
    let mut result = conn.query_iter(text).await?;
    loop {
        let _: Vec<mysql_async::Row> = result.collect().await?;
        if result.is_empty() {
            let _: Vec<mysql_async::Row> = result.collect().await?;
            return Ok(());
        }
    }
}

/// Calls per second of `clients` connections running `contender` for
/// `seconds`, and their median latency in µs.
async fn cell(
    url: &str,
    clients: usize,
    seconds: f64,
    contender: Arc<Contender>,
) -> Result<(f64, u32)> {
    let calls = Arc::new(AtomicU64::new(0));
    let mut connected = Vec::new();
    let one_trip = !matches!(
        *contender,
        Contender::Payment(false) | Contender::Recorded(false)
    );
    for _ in 0..clients {
        let conn = Conn::new(Opts::from_url(url)?).await?;
        let config = StoreConfig::new(url).one_trip_payments(one_trip);
        connected.push((conn, SeriesStore::connect(config).await?));
    }
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for (mut conn, mut store) in connected {
        let (calls, contender) = (calls.clone(), contender.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < until {
                let t = Instant::now();
                let txn = format!("cost-{}", CALLS.fetch_add(1, Ordering::Relaxed));
                match &*contender {
                    Contender::Packet(p) => send(&mut conn, filled(p, &txn)).await?,
                    Contender::Procedure => send(&mut conn, call_procedure(&txn)).await?,
                    Contender::Payment(_) => {
                        let payment = PaymentRef::new("bench", &txn)?;
                        store
                            .record_payment(&ScopeKey::new(SCOPE)?, &payment, None, None)
                            .await?;
                    }
                    Contender::Recorded(_) => {
                        store
                            .allocate_recorded(&ScopeKey::new(SCOPE)?, "bench")
                            .await?;
                    }
                }
                latencies.push(t.elapsed().as_micros() as u32);
                calls.fetch_add(1, Ordering::Relaxed);
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await??);
    }
    latencies.sort_unstable();
    let rate = calls.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
    Ok((
        rate,
        latencies.get(latencies.len() / 2).copied().unwrap_or(0),
    ))
}

/// One measured cell: calls/s, p50 µs, server and client CPU µs per call.
#[derive(Clone, Copy)]
struct Measured {
    rate: f64,
    p50_us: u32,
    server_us: f64,
    client_us: f64,
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go(
        "Usage: one-trip-cost [--seconds S] [--rounds R]

Where the one-trip payment packet's time goes, on one hot series of a private MariaDB (flush = 1): raw packets of the payment transaction, each a piece bigger than the one before, the core's packet, record_payment and allocate_recorded in one trip and as several statements, at 4, 16 and 64 clients; each cell S seconds (default 1.5), measured R times (default 3, interleaved), the median shown with the server's and this process's CPU per call.",
    );
    let seconds: f64 = counterfoil_benches::arg("--seconds", 1.5);
    let rounds: usize = counterfoil_benches::arg("--rounds", 3).max(1);
    let (server, url) = counterfoil_benches::bench_server(
        "one-trip-cost",
        &["--max-connections=600", "--innodb-buffer-pool-size=256M"],
        &[SCOPE.to_owned()],
    )?;
    block_on(async {
        let mut c = Conn::new(Opts::from_url(&url)?).await?;
        c.query_drop(
            "CREATE TABLE bench_min_registry (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, \
             scope_key VARCHAR(191) NOT NULL, number BIGINT UNSIGNED NOT NULL, \
             UNIQUE KEY scope_number (scope_key, number)) ENGINE=InnoDB",
        )
        .await?;
        c.query_drop(create_procedure()).await?;
        c.disconnect().await?;
        anyhow::Ok(())
    })?;
    let rt = counterfoil_benches::client_runtime()?;
    let ticks_per_s = 100.0; // USER_HZ on Linux
    let me = std::process::id();
    let contenders: Vec<(&str, Arc<Contender>)> = contenders()
        .into_iter()
        .map(|(name, c)| (name, Arc::new(c)))
        .collect();
    let mut measured: BTreeMap<(usize, usize), Vec<Measured>> = BTreeMap::new();
    for round in 1..=rounds {
        for clients in CLIENTS {
            for (i, (name, contender)) in contenders.iter().enumerate() {
                let (server0, client0) = (cpu_ticks(server.pid())?, cpu_ticks(me)?);
                let (rate, p50_us) =
                    rt.block_on(cell(&url, clients, seconds, contender.clone()))?;
                let (server1, client1) = (cpu_ticks(server.pid())?, cpu_ticks(me)?);
                let per_call = |ticks: u64| ticks as f64 / ticks_per_s * 1e6 / (rate * seconds);
                let m = Measured {
                    rate,
                    p50_us,
                    server_us: per_call(server1 - server0),
                    client_us: per_call(client1 - client0),
                };
                eprintln!(
                    "round {round}/{rounds} {clients:>2} clients {name:<42} {rate:>6.0}/s p50 {p50_us:>6} µs  server {:>4.0} µs  client {:>4.0} µs a call",
                    m.server_us, m.client_us
                );
                measured.entry((i, clients)).or_default().push(m);
            }
        }
    }
    let median = |i: usize, c: usize| {
        let mut v = measured[&(i, c)].clone();
        v.sort_by(|a, b| a.rate.total_cmp(&b.rate));
        v[v.len() / 2]
    };
    println!(
        "| contender | {} |\n|---|{}|",
        CLIENTS.map(|c| format!("{c} clients")).join(" | "),
        CLIENTS.map(|_| "---").join("|")
    );
    for (i, (name, _)) in contenders.iter().enumerate() {
        let cells: Vec<String> = CLIENTS
            .iter()
            .map(|&c| {
                let m = median(i, c);
                format!(
                    "{:.0}/s ({:.2}×) p50 {} µs; server {:.0} µs, client {:.0} µs",
                    m.rate,
                    m.rate / median(0, c).rate,
                    m.p50_us,
                    m.server_us,
                    m.client_us
                )
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    println!(
        "\nCells: calls/s (ratio to (a) at the same clients), median latency, the server's and this process's CPU per call; the median of {rounds} rounds of {seconds} s."
    );
    drop(server);
    Ok(())
}
