//! A test worker: one OS process allocating from one series.
//!
//! Usage: `alloc-worker URL PREFIX SCOPE COUNT [BATCH_EVERY]`. Connects,
//! waits at the harness start line, then makes COUNT allocation calls; when
//! BATCH_EVERY > 0, every BATCH_EVERY-th call is an `allocate_many` of 1 to 50
//! numbers. Prints `start <ns>`, one `n N` or `r FIRST LAST` line per
//! acknowledged call, `count <calls>`, then `end <ns>`. Exits 1 on the first
//! error.
//!
//! `COUNTERFOIL_WORKER_MODE=lane`: the same calls through the blocking
//! [`AllocationLane`] (MySQL/MariaDB) instead of the async store.
//!
//! Negative controls (`COUNTERFOIL_WORKER_MODE`), the broken code the checker
//! must catch through the same start line, output and parser:
//! - `maxplusone`: read the counter, write it + 1 (no lock, two statements);
//! - `stale-read`: the article's naive read-back, `UPDATE … LAST_INSERT_ID(…)`
//!   then `SELECT LAST_INSERT_ID()`, where every third call names a series
//!   that does not exist (0 rows) and reads the previous call's number.

use anyhow::{Context, Result};
use counterfoil_core::{AllocationLane, ScopeKey, Store, StoreConfig};
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
    let mode = std::env::var("COUNTERFOIL_WORKER_MODE").unwrap_or_default();
    if mode == "lane" {
        return lane(url, prefix, &scope, count, batch_every);
    }
    if !mode.is_empty() {
        return rt.block_on(naive(&mode, url, prefix, scope.as_str(), count));
    }
    let config = StoreConfig::new(url.as_str()).table_prefix(prefix)?;
    let store = std::cell::RefCell::new(rt.block_on(Store::connect(config))?);
    calls(
        count,
        batch_every,
        || rt.block_on(store.borrow_mut().allocate(&scope)),
        |n| rt.block_on(store.borrow_mut().allocate_many(&scope, n)),
    )
}

/// The start line, then `count` calls (every `batch_every`-th a batch of 1
/// to 50), each printed, as the module doc says.
fn calls(
    count: u64,
    batch_every: u64,
    mut single: impl FnMut() -> counterfoil_core::Result<u64>,
    mut batch: impl FnMut(u64) -> counterfoil_core::Result<std::ops::RangeInclusive<u64>>,
) -> Result<()> {
    wait_at_start_line()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "start {}", now_ns())?;
    for i in 1..=count {
        if batch_every > 0 && i % batch_every == 0 {
            let r = batch(fastrand::u64(1..=50)).context("allocate_many")?;
            writeln!(out, "r {} {}", r.start(), r.end())?;
        } else {
            let n = single().context("allocate")?;
            writeln!(out, "n {n}")?;
        }
    }
    writeln!(out, "count {count}")?;
    writeln!(out, "end {}", now_ns())?;
    out.flush()?;
    Ok(())
}

/// The same calls on the blocking lane.
fn lane(url: &str, prefix: &str, scope: &ScopeKey, count: u64, batch_every: u64) -> Result<()> {
    let mut lane = AllocationLane::new(StoreConfig::new(url).table_prefix(prefix)?)?;
    // Connect (and prepare) before the start line, as the store does.
    let warm = ScopeKey::new("lane-warm-up:0")?;
    match lane.allocate(&warm) {
        Ok(_) | Err(counterfoil_core::Error::SeriesNotFound { .. }) => {}
        Err(e) => return Err(e).context("connect"),
    }
    let lane = std::cell::RefCell::new(lane);
    calls(
        count,
        batch_every,
        || lane.borrow_mut().allocate(scope),
        |n| lane.borrow_mut().allocate_many(scope, n),
    )
}

/// The broken allocators, for the negative controls.
async fn naive(mode: &str, url: &str, prefix: &str, scope: &str, count: u64) -> Result<()> {
    use mysql_async::prelude::Queryable;
    let table = format!("{prefix}invoice_sequences");
    let mut conn = mysql_async::Conn::new(mysql_async::Opts::from_url(url)?).await?;
    wait_at_start_line()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "start {}", now_ns())?;
    for i in 1..=count {
        let n: u64 = match mode {
            "maxplusone" => {
                let read: Option<u64> = conn
                    .exec_first(
                        format!("SELECT current_value FROM `{table}` WHERE scope_key = ?"),
                        (scope,),
                    )
                    .await?;
                let n = read.context("no series")? + 1;
                conn.exec_drop(
                    format!("UPDATE `{table}` SET current_value = ? WHERE scope_key = ?"),
                    (n, scope),
                )
                .await?;
                n
            }
            "stale-read" => {
                let key = if i % 3 == 0 { "no-such-series" } else { scope };
                conn.exec_drop(
                    format!("UPDATE `{table}` SET current_value = LAST_INSERT_ID(current_value + 1) WHERE scope_key = ?"),
                    (key,),
                )
                .await?;
                conn.query_first::<u64, _>("SELECT LAST_INSERT_ID()")
                    .await?
                    .context("no LAST_INSERT_ID")?
            }
            other => anyhow::bail!("unknown COUNTERFOIL_WORKER_MODE `{other}`"),
        };
        writeln!(out, "n {n}")?;
    }
    writeln!(out, "count {count}")?;
    writeln!(out, "end {}", now_ns())?;
    out.flush()?;
    Ok(())
}
