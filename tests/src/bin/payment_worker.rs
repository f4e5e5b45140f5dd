//! A test worker: delivers payments (one per argument after SCOPE), each
//! through `record_payment`, after the harness start line.
//!
//! Usage: `payment-worker URL PREFIX SCOPE GATEWAY TXN…`. Prints `start <ns>`,
//! one `p <txn> <number> <created> <scope>` line per delivery (`scope`: the
//! series that numbered it), `end <ns>`. With `PAYMENT_PLAN=continue` (or
//! `create`) a missing series is made under that plan and the delivery
//! recorded again, as the plugin does.

use anyhow::Result;
use counterfoil_core::{Error, MissingSeries, PaymentRef, ScopeKey, Store, StoreConfig};
use counterfoil_tests::workers::{now_ns, wait_at_start_line};
use std::io::Write;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, prefix, scope, gateway, txns @ ..] = args.as_slice() else {
        anyhow::bail!("usage: payment-worker URL PREFIX SCOPE GATEWAY TXN…");
    };
    let scope = ScopeKey::new(scope.as_str())?;
    let plan = match std::env::var("PAYMENT_PLAN") {
        Ok(name) => Some(MissingSeries::parse(&name)?),
        Err(_) => None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut store =
            Store::connect(StoreConfig::new(url.as_str()).table_prefix(prefix)?).await?;
        wait_at_start_line()?;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        writeln!(out, "start {}", now_ns())?;
        for txn in txns {
            let payment = PaymentRef::new(gateway, txn)?;
            let mut r = store
                .record_payment(&scope, &payment, Some("9.99"), Some("EUR"))
                .await;
            if let (Err(Error::SeriesNotFound { .. }), Some(plan)) = (&r, plan) {
                store.initialize_planned(&scope, plan, 1).await?;
                r = store
                    .record_payment(&scope, &payment, Some("9.99"), Some("EUR"))
                    .await;
            }
            let r = r?;
            writeln!(out, "p {txn} {} {} {}", r.number, r.created, r.scope)?;
        }
        writeln!(out, "end {}", now_ns())?;
        out.flush()?;
        Ok(())
    })
}
