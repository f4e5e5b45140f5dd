//! A test worker for the fault and Galera suites: one OS process calling the
//! store in a loop until the harness says stop, one try per call (so every
//! attempt is in the history), printing its history as `op …` lines.
//!
//! Usage: `history-worker MODE URL[,URL…] SCOPE DEADLINE_MS WORKER`.
//! `allocate` allocates through the store; `allocate-lane` through the
//! blocking [`AllocationLane`] (the PHP extension's path); `payment` delivers
//! a new payment (`w<WORKER>-<i>`) per call through `record_payment`, and
//! prints for each call the node and server connection id it ended on
//! (`call <txn> node <n> connection <id>`).
//! Prints `start <ns>`, the ops, `end <ns>`.
//!
//! Two modes are negative controls for the checker, never the product:
//! `naive` allocates as the common shop code does (read the counter, write
//! it plus one: two statements, no lock), which hands numbers out twice
//! under overlap; `hiding` allocates through the store but reports every
//! 25th number it got as a lock wait timeout (an error the checker takes as
//! "certainly did not happen"), which leaves gaps nothing explains.

use std::time::Duration;

use anyhow::{bail, Result};
use counterfoil_core::{AllocationLane, PaymentRef, RetryPolicy, ScopeKey, Store, StoreConfig};
use counterfoil_tests::history::{Completion, History};
use counterfoil_tests::workers::{now_ns, should_stop, wait_at_start_line};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, mode, url, scope, deadline_ms, worker] = args.as_slice() else {
        bail!("usage: history-worker allocate|allocate-lane|payment URL SCOPE DEADLINE_MS WORKER");
    };
    let (payments, lane) = match mode.as_str() {
        "allocate" | "naive" | "hiding" => (false, false),
        "allocate-lane" => (false, true),
        "payment" => (true, false),
        other => bail!("unknown mode {other}"),
    };
    if mode == "naive" {
        return naive(url, scope, worker.parse()?);
    }
    let hiding = mode == "hiding";
    let scope = ScopeKey::new(scope.as_str())?;
    let worker: usize = worker.parse()?;
    let config = StoreConfig::new(url.as_str())
        .deadline(Duration::from_millis(deadline_ms.parse()?))
        .retry(RetryPolicy::none());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let history = History::default();
    let mut lane = if lane {
        let mut lane = AllocationLane::new(config.clone())?;
        lane.current(&scope)?; // connect before the start line
        Some(lane)
    } else {
        None
    };
    let mut calls: Vec<String> = Vec::new();
    let (start, end) = rt.block_on(async {
        let mut store = Store::lazy(config)?;
        if lane.is_none() {
            store.ping().await?;
        }
        wait_at_start_line()?;
        let start = now_ns();
        let mut i = 0u64;
        while !should_stop() {
            let c =
                if payments {
                    let txn = format!("w{worker}-{i}");
                    let p = PaymentRef::new("fault", &txn)?;
                    let c = history
                        .record_labeled(worker, &txn, async {
                            store
                                .record_payment(&scope, &p, None, None)
                                .await
                                .map(|r| (r.number, r.number))
                        })
                        .await;
                    // Where the call ended: the node of the list and the
                    // server's connection id (the nodes' conflict logs name it).
                    calls.push(format!(
                        "call {txn} node {} connection {}",
                        store.node().map_or("-".into(), |n| (n + 1).to_string()),
                        store
                            .connection_id()
                            .map_or("-".into(), |id| id.to_string())
                    ));
                    c
                } else if let Some(lane) = lane.as_mut() {
                    history
                        .record(worker, async { lane.allocate(&scope).map(|n| (n, n)) })
                        .await
                } else {
                    history
                        .record(worker, async {
                            match store.allocate(&scope).await {
                            Ok(n) if hiding && n % 25 == 0 => Err(counterfoil_core::Error::Server {
                                code: 1205,
                                state: "HY000".into(),
                                message: "Lock wait timeout exceeded (planted: the number was used)"
                                    .into(),
                            }),
                            other => other.map(|n| (n, n)),
                        }
                        })
                        .await
                };
            i += 1;
            if !matches!(c, Completion::Ok(..)) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        anyhow::Ok((start, now_ns()))
    })?;
    for line in &calls {
        println!("{line}");
    }
    print_history(start, end, &history);
    Ok(())
}

/// The `naive` negative control: `SELECT current_value`, then `UPDATE … SET
/// current_value = read + 1`, each in autocommit, straight through the
/// driver; the number is the value read plus one.
fn naive(url: &str, scope: &str, worker: usize) -> Result<()> {
    use mysql_async::prelude::Queryable;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let history = History::default();
    let (start, end) = rt.block_on(async {
        let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(url)?).await?;
        wait_at_start_line()?;
        let start = now_ns();
        while !should_stop() {
            history
                .record(worker, async {
                    let read: Option<u64> = c
                        .exec_first(
                            "SELECT current_value FROM wp_invoice_sequences WHERE scope_key = ?",
                            (scope,),
                        )
                        .await
                        .map_err(|e| counterfoil_core::Error::Unexpected(e.to_string()))?;
                    let n = read.unwrap_or(0) + 1;
                    c.exec_drop(
                        "UPDATE wp_invoice_sequences SET current_value = ? WHERE scope_key = ?",
                        (n, scope),
                    )
                    .await
                    .map_err(|e| counterfoil_core::Error::Unexpected(e.to_string()))?;
                    Ok((n, n))
                })
                .await;
        }
        c.disconnect().await?;
        anyhow::Ok((start, now_ns()))
    })?;
    print_history(start, end, &history);
    Ok(())
}

/// The worker's output: `start <ns>`, one line per call, `end <ns>`.
fn print_history(start: u128, end: u128, history: &History) {
    println!("start {start}");
    for op in history.ops() {
        println!("{}", op.to_line());
    }
    println!("end {end}");
}
