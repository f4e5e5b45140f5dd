//! A test worker: one OS process allocating from one series.
//!
//! Usage: `alloc-worker URL PREFIX SCOPE COUNT [BATCH_EVERY]`. Connects,
//! waits at the harness start line, then makes COUNT allocation calls; when
//! BATCH_EVERY > 0, every BATCH_EVERY-th call is an `allocate_many` of 1 to 50
//! numbers. Prints `start <ns>`, one `n N` or `r FIRST LAST` line per
//! acknowledged call, then `end <ns>`. Exits 1 on the first error.

use anyhow::{Context, Result};
use counterfoil_core::{ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::workers::{now_ns, wait_at_start_line};
use std::io::Write;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, prefix, scope, count, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: alloc-worker URL PREFIX SCOPE COUNT [BATCH_EVERY]");
    };
    let count: u64 = count.parse()?;
    let batch_every: u64 = rest.first().map(|s| s.parse()).transpose()?.unwrap_or(0);
    let scope = ScopeKey::new(scope.as_str())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let config = StoreConfig::new(url.as_str()).table_prefix(prefix)?;
        let mut store = SeriesStore::connect(config).await?;
        wait_at_start_line()?;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        writeln!(out, "start {}", now_ns())?;
        for i in 1..=count {
            if batch_every > 0 && i % batch_every == 0 {
                let n = fastrand::u64(1..=50);
                let r = store
                    .allocate_many(&scope, n)
                    .await
                    .context("allocate_many")?;
                writeln!(out, "r {} {}", r.start(), r.end())?;
            } else {
                let n = store.allocate(&scope).await.context("allocate")?;
                writeln!(out, "n {n}")?;
            }
        }
        writeln!(out, "end {}", now_ns())?;
        out.flush()?;
        Ok(())
    })
}
