//! The limit: a raw mysql_async loop of the allocation statement (prepared,
//! number from the OK packet), for the side-by-side benchmark.
//! Env: BENCH_URL, BENCH_SECONDS, COUNTERFOIL_START_DIR. Output as the PHP workers.

use std::time::{Duration, Instant};

use counterfoil_tests::workers::{now_ns, wait_at_start_line};
use mysql_async::prelude::Queryable;

fn main() -> anyhow::Result<()> {
    let url = std::env::var("BENCH_URL")?;
    let seconds: f64 = std::env::var("BENCH_SECONDS")?.parse()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(&url)?).await?;
        let stmt = "UPDATE wp_invoice_sequences SET current_value = LAST_INSERT_ID(current_value + ?) WHERE scope_key = ?";
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
        let elapsed = start.elapsed().as_nanos();
        let cpu1 = counterfoil_benches::cpu_us();
        lat.sort();
        println!("start {wall}\nend {}\ncount {}", wall + elapsed, lat.len());
        println!(
            "lat {} {}",
            lat[lat.len() / 2].as_micros(),
            lat[lat.len() * 99 / 100].as_micros()
        );
        println!("cpu {} {}", cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
        conn.disconnect().await?;
        Ok(())
    })
}
