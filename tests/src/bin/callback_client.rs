//! A test worker: a payment gateway delivering signed callbacks to the
//! plugin's webhook, one after another, after the harness start line. Its
//! clock is whatever the process sees, so under libfaketime it signs and
//! stamps with the fake time, as php-fpm under the same fake clock expects.
//!
//! Usage: `callback-client PORT SECRET PREFIX USERS COUNT PAUSE_MS` (USERS
//! comma-separated). Each payment has no `year` (the site's clock decides),
//! unless `CALLBACK_YEAR` is set: then every payment carries that year.
//! Prints `start <ns>`, one JSON line per delivery (`txn`, `user`, `status`,
//! `before` and `after`: Unix seconds around the request, `body`), `end <ns>`.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use counterfoil_tests::webhook::deliver;
use counterfoil_tests::workers::{now_ns, wait_at_start_line};
use serde_json::json;

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, port, secret, prefix, users, count, pause_ms] = args.as_slice() else {
        anyhow::bail!("usage: callback-client PORT SECRET PREFIX USERS COUNT PAUSE_MS");
    };
    let port: u16 = port.parse().context("PORT")?;
    let users: Vec<u64> = users
        .split(',')
        .map(|u| u.parse().context("USERS"))
        .collect::<Result<_>>()?;
    let count: usize = count.parse().context("COUNT")?;
    let pause = Duration::from_millis(pause_ms.parse().context("PAUSE_MS")?);
    let year: Option<u32> = match std::env::var("CALLBACK_YEAR") {
        Ok(y) => Some(y.parse().context("CALLBACK_YEAR")?),
        Err(_) => None,
    };
    wait_at_start_line()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "start {}", now_ns())?;
    for i in 0..count {
        let txn = format!("{prefix}-{i:03}");
        let user = users[i % users.len()];
        let mut body = json!({"gateway": "stripe", "transaction_id": txn, "user_id": user,
                              "amount": "12.00", "currency": "EUR"});
        if let Some(year) = year {
            body["year"] = json!(year);
        }
        let body = body.to_string();
        let before = unix_now();
        let r = deliver(port, secret, body.as_bytes(), 0)?;
        let after = unix_now();
        let answer: serde_json::Value =
            serde_json::from_str(&r.body).unwrap_or_else(|_| json!({"raw": r.body}));
        writeln!(
            out,
            "{}",
            json!({"txn": txn, "user": user, "status": r.status, "before": before,
                   "after": after, "body": answer})
        )?;
        std::thread::sleep(pause);
    }
    writeln!(out, "end {}", now_ns())?;
    out.flush()?;
    Ok(())
}
