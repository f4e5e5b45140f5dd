//! `counterfoil stress`: N concurrent connections allocating from one series
//! for a while, then allocations/s, p50/p99 latency, and the check: no number
//! twice, no gap between the first and last number handed out (given no other
//! writer). Exit 1 when the check fails.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use counterfoil_core::{ScopeKey, Store, StoreConfig};
use serde_json::json;

use crate::cli::{Global, StressArgs};
use crate::Outcome;

pub async fn run(global: &Global, args: &StressArgs) -> Result<Outcome> {
    let url = crate::database_url(global)?;
    let scope = ScopeKey::new(args.scope.as_str())?;
    if args.connections == 0 || args.connections > 512 {
        bail!("--connections must be 1 to 512");
    }
    if !(args.seconds > 0.0 && args.seconds <= 3600.0) {
        bail!("--seconds must be above 0 and at most 3600");
    }
    let config = StoreConfig::new(url)
        .table_prefix(&global.table_prefix)?
        .deadline(Duration::from_millis(global.timeout_ms.max(1)));
    // Connect them all first, so the clock measures allocation only.
    let mut stores = Vec::new();
    for _ in 0..args.connections {
        let mut s = Store::connect(config.clone()).await?;
        s.current(&scope).await?;
        stores.push(s);
    }
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(args.seconds);
    let mut tasks = Vec::new();
    for mut store in stores {
        let scope = scope.clone();
        tasks.push(tokio::spawn(async move {
            let mut got: Vec<(u64, u32)> = Vec::new();
            let mut errors = 0u64;
            while Instant::now() < until {
                let t = Instant::now();
                match store.allocate(&scope).await {
                    Ok(n) => got.push((n, t.elapsed().as_micros() as u32)),
                    Err(_) => errors += 1,
                }
            }
            (got, errors)
        }));
    }
    let mut numbers = Vec::new();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for t in tasks {
        let (got, e) = t.await?;
        errors += e;
        for (n, l) in got {
            numbers.push(n);
            latencies.push(l);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    numbers.sort_unstable();
    latencies.sort_unstable();
    let duplicates = numbers.windows(2).filter(|w| w[0] == w[1]).count();
    let span = match (numbers.first(), numbers.last()) {
        (Some(a), Some(b)) => b - a + 1,
        _ => 0,
    };
    let distinct = numbers.len() - duplicates;
    let gaps = span.saturating_sub(distinct as u64);
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    let rate = numbers.len() as f64 / elapsed;
    if global.json {
        println!(
            "{}",
            json!({"scope": scope.as_str(), "connections": args.connections, "seconds": elapsed,
                   "allocations": numbers.len(), "per_second": rate, "p50_us": pct(0.5), "p99_us": pct(0.99),
                   "duplicates": duplicates, "gaps": gaps, "errors": errors,
                   "first": numbers.first(), "last": numbers.last()})
        );
    } else {
        println!(
            "{} allocations on {} in {elapsed:.1} s from {} connections: {rate:.0}/s, p50 {} µs, p99 {} µs",
            numbers.len(),
            scope,
            args.connections,
            pct(0.5),
            pct(0.99)
        );
        println!(
            "check: {duplicates} duplicates, {gaps} gaps between {} and {} (numbers whose call failed: up to {errors})",
            numbers.first().unwrap_or(&0),
            numbers.last().unwrap_or(&0)
        );
    }
    Ok(if duplicates == 0 && gaps <= errors {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
