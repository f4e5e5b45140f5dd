//! The PostgreSQL side-by-side benchmark (issue 16): one private PostgreSQL
//! 15 and one private MariaDB, started by this run, every contender measured
//! in the same run at 1, 4, 16 and 64 clients on one hot series, each cell
//! the median of R interleaved rounds. Prints allocations/s, p50/p99 and the
//! ratios the issue asks for.
//!
//! Contenders on PostgreSQL: (1) a raw tokio-postgres loop of the core's own
//! statement (`UPDATE … SET current_value = current_value + $2 WHERE
//! scope_key = $1 RETURNING current_value`): the ceiling; (2) the core
//! (`Store::allocate`); (3) the locked counter row (`BEGIN; SELECT … FOR
//! UPDATE; UPDATE; COMMIT`); (4) a `SEQUENCE`'s `nextval` (a reference only:
//! one global counter, gaps on rollback, not a per-series number). Next to
//! them on MariaDB: (5) the raw mysql_async loop of the LAST_INSERT_ID
//! statement and (6) the core. And (7) the core on a PostgreSQL node list:
//! a primary with a synchronous standby (`synchronous_standby_names = '*'`,
//! `synchronous_commit = on`: every commit waits for the standby's flush),
//! the cost of never losing a number at failover (issue 26). And the payment
//! flow through the core on PostgreSQL (issue 30): (8) as several
//! statements in one transaction, (9) in one round trip (one statement of
//! data-modifying CTEs, the default).
//!
//! Usage: `cargo build --release -p counterfoil-benches &&
//! ./target/release/pg-table [--seconds S] [--rounds R]`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use counterfoil_core::pg::PgSql;
use counterfoil_core::{ScopeKey, SeriesSql, Store, StoreConfig, TablePrefix};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::postgres::Postgres;
use counterfoil_tests::MariaDb;
use mysql_async::prelude::Queryable;

const CLIENTS: [usize; 4] = [1, 4, 16, 64];
const CONTENDERS: [&str; 9] = [
    "(1) raw tokio-postgres loop (UPDATE … RETURNING)",
    "(2) counterfoil-core on PostgreSQL",
    "(3) locked counter row (SELECT … FOR UPDATE + UPDATE)",
    "(4) SEQUENCE nextval (reference only)",
    "(5) MariaDB: raw mysql_async loop",
    "(6) MariaDB: counterfoil-core",
    "(7) core on primary + synchronous standby",
    "(8) payment flow, several statements (core)",
    "(9) payment flow, one trip (core)",
];

/// Unique transaction ids across the run.
static TXN: AtomicU64 = AtomicU64::new(0);

/// One client's connection.
enum Client {
    Pg(tokio_postgres::Client, tokio_postgres::Statement),
    Store(Box<Store>),
    My(mysql_async::Conn, String),
}

struct Urls {
    pg: String,
    my: String,
    /// The multi-host URL of a primary and its synchronous standby.
    cluster: String,
}

async fn pg_client(url: &str, sql: &str) -> Result<Client> {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(conn);
    let stmt = client.prepare(sql).await?;
    Ok(Client::Pg(client, stmt))
}

async fn client(contender: usize, urls: &Urls) -> Result<Client> {
    let prefix = TablePrefix::new("wp_")?;
    Ok(match contender {
        0 => pg_client(&urls.pg, &PgSql::new(&prefix).allocate).await?,
        1 => Client::Store(Box::new(
            Store::connect(StoreConfig::new(urls.pg.as_str())).await?,
        )),
        2 => {
            let (client, conn) = tokio_postgres::connect(&urls.pg, tokio_postgres::NoTls).await?;
            tokio::spawn(conn);
            let stmt = client
                .prepare("SELECT current_value::text FROM wp_invoice_sequences WHERE scope_key = $1 FOR UPDATE")
                .await?;
            Client::Pg(client, stmt)
        }
        3 => pg_client(&urls.pg, "SELECT nextval('bench_seq')").await?,
        4 => Client::My(
            mysql_async::Conn::new(mysql_async::Opts::from_url(&urls.my)?).await?,
            SeriesSql::new(&prefix).allocate,
        ),
        6 => Client::Store(Box::new(
            Store::connect(StoreConfig::new(urls.cluster.as_str())).await?,
        )),
        7 | 8 => Client::Store(Box::new(
            Store::connect(StoreConfig::new(urls.pg.as_str()).one_trip_payments(contender == 8))
                .await?,
        )),
        _ => Client::Store(Box::new(
            Store::connect(StoreConfig::new(urls.my.as_str())).await?,
        )),
    })
}

async fn one_call(contender: usize, c: &mut Client, scope: &ScopeKey) -> Result<()> {
    match (contender, c) {
        (0, Client::Pg(client, stmt)) => {
            client.query_one(&*stmt, &[&scope.as_str(), &"1"]).await?;
        }
        (2, Client::Pg(client, stmt)) => {
            let tx = client.transaction().await?;
            tx.query_one(&*stmt, &[&scope.as_str()]).await?;
            tx.execute(
                "UPDATE wp_invoice_sequences SET current_value = current_value + 1 WHERE scope_key = $1",
                &[&scope.as_str()],
            )
            .await?;
            tx.commit().await?;
        }
        (3, Client::Pg(client, stmt)) => {
            client.query_one(&*stmt, &[]).await?;
        }
        (7 | 8, Client::Store(store)) => {
            let txn = format!("pg-{}", TXN.fetch_add(1, Ordering::Relaxed));
            let payment = counterfoil_core::PaymentRef::new("bench", &txn)?;
            store.record_payment(scope, &payment, None, None).await?;
        }
        (_, Client::Store(store)) => {
            store.allocate(scope).await?;
        }
        (_, Client::My(conn, sql)) => {
            conn.exec_drop(sql.as_str(), (1u64, scope.as_str())).await?;
        }
        _ => unreachable!("contender and client match"),
    }
    Ok(())
}

#[derive(Clone, Copy, Default)]
struct Cell {
    rate: f64,
    p50_us: u64,
    p99_us: u64,
}

async fn measure(contender: usize, clients: usize, seconds: f64, urls: &Urls) -> Result<Cell> {
    let scope = ScopeKey::new("hot:2026")?;
    let mut conns = Vec::new();
    for _ in 0..clients {
        conns.push(client(contender, urls).await?);
    }
    let calls = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for mut c in conns {
        let (calls, scope) = (calls.clone(), scope.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while Instant::now() < until {
                let t = Instant::now();
                one_call(contender, &mut c, &scope).await?;
                lat.push(t.elapsed().as_micros() as u64);
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
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    Ok(Cell {
        rate: calls.load(Ordering::Relaxed) as f64 / elapsed,
        p50_us: pct(0.5),
        p99_us: pct(0.99),
    })
}

fn median(mut cells: Vec<Cell>) -> Cell {
    let mid = cells.len() / 2;
    let mut p50: Vec<u64> = cells.iter().map(|c| c.p50_us).collect();
    let mut p99: Vec<u64> = cells.iter().map(|c| c.p99_us).collect();
    p50.sort_unstable();
    p99.sort_unstable();
    cells.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    Cell {
        rate: cells[mid].rate,
        p50_us: p50[mid],
        p99_us: p99[mid],
    }
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go(
        "Usage: pg-table [--seconds S] [--rounds R]

PostgreSQL side by side (one private PostgreSQL 15, a primary with a synchronous standby, and one private MariaDB, started by this run): the core against a raw tokio-postgres loop of the same statement, the locked counter row and a SEQUENCE, next to MariaDB's raw loop and core, and the core on the primary with its synchronous standby, at 1-64 clients on one hot series. S seconds a cell (default 1.5), the median of R interleaved rounds (default 3).",
    );
    let seconds: f64 = counterfoil_benches::arg("--seconds", 1.5);
    let rounds: usize = counterfoil_benches::arg("--rounds", 3usize).max(1);
    eprintln!("starting a private PostgreSQL 15 (fsync on) and a private MariaDB (flush=1) …");
    let pg = Postgres::start("pg-table")?;
    let my = MariaDb::start_with("pg-table", &["--max-connections=300"])?;
    eprintln!("starting a private PostgreSQL primary with a synchronous standby …");
    let (primary, standby) = Postgres::start_cluster("pg-table", true)?;
    let single = primary.fresh_database("bench")?;
    let db = counterfoil_tests::MariaDb::database_name(&single);
    standby.wait_for_database(&db)?;
    let urls = Urls {
        pg: pg.fresh_database("bench")?,
        my: my.fresh_database("bench")?,
        cluster: format!(
            "postgres://cf:cf@127.0.0.1:{},127.0.0.1:{}/{db}",
            primary.port(),
            standby.port()
        ),
    };
    block_on(async {
        for url in [&urls.pg, &urls.my, &urls.cluster] {
            let mut s = Store::connect(StoreConfig::new(url.as_str())).await?;
            s.ensure_registry_schema().await?;
            s.initialize(&ScopeKey::new("hot:2026")?, 1).await?;
        }
        anyhow::Ok(())
    })?;
    pg.exec(
        counterfoil_tests::MariaDb::database_name(&urls.pg).as_str(),
        "CREATE SEQUENCE bench_seq",
    )?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut cells: Vec<Vec<Vec<Cell>>> = vec![vec![Vec::new(); CLIENTS.len()]; CONTENDERS.len()];
    for round in 1..=rounds {
        for (ki, clients) in CLIENTS.iter().enumerate() {
            for (ci, name) in CONTENDERS.iter().enumerate() {
                let c = rt.block_on(measure(ci, *clients, seconds, &urls))?;
                eprintln!(
                    "round {round}/{rounds} {clients:>2} clients {name:<54} {:>8.0}/s p50 {:>6} µs p99 {:>7} µs",
                    c.rate, c.p50_us, c.p99_us
                );
                cells[ci][ki].push(c);
            }
        }
    }
    let table: Vec<Vec<Cell>> = cells
        .into_iter()
        .map(|per_client| per_client.into_iter().map(median).collect())
        .collect();
    println!(
        "\n| contender | {} |",
        CLIENTS
            .map(|c| format!("{c} client{}", if c == 1 { "" } else { "s" }))
            .join(" | ")
    );
    println!("|---|{}|", CLIENTS.map(|_| "---").join("|"));
    for (ci, name) in CONTENDERS.iter().enumerate() {
        let base = if ci == 4 || ci == 5 { 4 } else { 0 };
        let row: Vec<String> = (0..CLIENTS.len())
            .map(|k| {
                let c = table[ci][k];
                format!(
                    "{:.0} ({:.2}×) {}/{} µs",
                    c.rate,
                    c.rate / table[base][k].rate,
                    c.p50_us,
                    c.p99_us
                )
            })
            .collect();
        println!("| {name} | {} |", row.join(" | "));
    }
    let ratio = |a: usize, b: usize| -> Vec<String> {
        (0..CLIENTS.len())
            .map(|k| format!("{:.2}×", table[a][k].rate / table[b][k].rate))
            .collect()
    };
    println!(
        "\nCells: allocations/s (ratio to the raw loop of the same engine) p50/p99; the median of {rounds} interleaved rounds of {seconds} s.\n\
         (2) core / (1) raw loop, 1–64 clients: {}\n\
         (2) core / (3) locked counter row: {}\n\
         (2) core on PostgreSQL / (6) core on MariaDB: {}\n\
         (7) core with a synchronous standby / (2) core on one server: {}\n\
         (9) payment flow in one trip / (8) several statements (goal ≥ 1.5×): {}",
        ratio(1, 0).join(", "),
        ratio(1, 2).join(", "),
        ratio(1, 5).join(", "),
        ratio(6, 1).join(", "),
        ratio(8, 7).join(", ")
    );
    drop(standby);
    drop(primary);
    drop(pg);
    drop(my);
    Ok(())
}
