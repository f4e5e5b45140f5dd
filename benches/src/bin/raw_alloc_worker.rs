//! The limit: a raw loop of the allocation statement (prepared, number from
//! the OK packet), for the side-by-side benchmark: on mysql_async and tokio
//! (the async driver), or with `BENCH_DRIVER=blocking` on the `mysql` crate
//! (the blocking driver under the extension's allocation lane, whose
//! allocation itself waits in `poll()` rather than the driver's blocking
//! read).
//! Env: BENCH_URL, BENCH_SECONDS, COUNTERFOIL_START_DIR. Output as the PHP workers.

use std::time::{Duration, Instant};

use counterfoil_tests::workers::{now_ns, wait_at_start_line};
use mysql_async::prelude::Queryable;

const STATEMENT: &str = "UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + ?) WHERE scope_key = ?";

/// Prints the worker's report, as the PHP workers do.
fn report(wall: u128, elapsed: u128, mut lat: Vec<Duration>, cpu0: (u64, u64)) {
    let cpu1 = counterfoil_benches::cpu_us();
    lat.sort();
    println!("start {wall}\nend {}\ncount {}", wall + elapsed, lat.len());
    println!(
        "lat {} {}",
        lat[lat.len() / 2].as_micros(),
        lat[lat.len() * 99 / 100].as_micros()
    );
    println!("cpu {} {}", cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
}

fn blocking(url: &str, seconds: f64) -> anyhow::Result<()> {
    use mysql::prelude::Queryable;
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(url)?)?;
    let stmt = conn.prep(STATEMENT)?;
    conn.exec_drop(&stmt, (1u64, "1:2019"))?;
    wait_at_start_line()?;
    let cpu0 = counterfoil_benches::cpu_us();
    let wall = now_ns();
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(seconds);
    let mut lat = Vec::new();
    loop {
        let t = Instant::now();
        conn.exec_drop(&stmt, (1u64, "1:2019"))?;
        anyhow::ensure!(conn.affected_rows() == 1 && conn.last_insert_id() > 0);
        let now = Instant::now();
        lat.push(now - t);
        if now >= until {
            break;
        }
    }
    report(wall, start.elapsed().as_nanos(), lat, cpu0);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let url = std::env::var("BENCH_URL")?;
    let seconds: f64 = std::env::var("BENCH_SECONDS")?.parse()?;
    if std::env::var("BENCH_DRIVER").as_deref() == Ok("blocking") {
        return blocking(&url, seconds);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
        let stmt = STATEMENT;
        conn.exec_drop(stmt, (1u64, "1:2019")).await?;
        wait_at_start_line()?;
        let cpu0 = counterfoil_benches::cpu_us();
        let wall = now_ns();
        let start = Instant::now();
        let until = start + Duration::from_secs_f64(seconds);
        let mut lat = Vec::new();
        loop {
            let t = Instant::now();
            conn.exec_drop(stmt, (1u64, "1:2019")).await?;
            anyhow::ensure!(conn.affected_rows() == 1 && conn.last_insert_id().is_some());
            let now = Instant::now();
            lat.push(now - t);
            if now >= until {
                break;
            }
        }
        report(wall, start.elapsed().as_nanos(), lat, cpu0);
        conn.disconnect().await?;
        Ok(())
    })
}
