//! A test worker: issues COUNT air waybill numbers from POOL, after the
//! harness start line. Prints `start <ns>`, `a <serial> <number>` per issue,
//! `end <ns>`. Usage: `awb-worker URL POOL COUNT`.

use anyhow::Result;
use counterfoil_core::{Store, StoreConfig};
use counterfoil_tests::workers::{now_ns, wait_at_start_line};
use std::io::Write;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, pool, count] = args.as_slice() else {
        anyhow::bail!("usage: awb-worker URL POOL COUNT");
    };
    let count: usize = count.parse()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut store = Store::connect(StoreConfig::new(url.as_str())).await?;
        store.awb_report(pool).await?;
        wait_at_start_line()?;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        writeln!(out, "start {}", now_ns())?;
        for i in 0..count {
            let awb = store
                .awb_issue_next(pool, &format!("shp-{}-{i}", std::process::id()))
                .await?;
            writeln!(out, "a {} {awb}", awb.serial())?;
        }
        writeln!(out, "end {}", now_ns())?;
        out.flush()?;
        Ok(())
    })
}
