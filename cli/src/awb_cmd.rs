//! `counterfoil awb …`: adapters from the command line to counterfoil-core's
//! AWB validator and stock service. No rule lives here.

use anyhow::{anyhow, Result};
use counterfoil_core::awb::{expand_block, Awb, AwbState};
use counterfoil_core::mysql::AwbTransition;
use serde_json::json;

use crate::cli::{AwbCommand, Global};
use crate::series_cmd::connect;
use crate::Outcome;

fn out(global: &Global, text: String, value: serde_json::Value) {
    if global.json {
        println!("{value}");
    } else {
        println!("{text}");
    }
}

fn state(s: &str) -> Result<AwbState> {
    AwbState::parse(s).ok_or_else(|| {
        anyhow!("unknown state `{s}`: use ready, assigned, issued, executed, voided or cancelled")
    })
}

pub async fn run(global: &Global, cmd: AwbCommand) -> Result<Outcome> {
    match cmd {
        AwbCommand::Validate { numbers } => {
            let mut all_valid = true;
            for n in &numbers {
                match Awb::parse(n) {
                    Ok(a) => out(
                        global,
                        format!("{a} valid"),
                        json!({"input": n, "valid": true, "canonical": a.to_string()}),
                    ),
                    Err(e) => {
                        all_valid = false;
                        out(
                            global,
                            format!("{n:?} invalid: {e}"),
                            json!({"input": n, "valid": false, "error": e.name(), "message": e.to_string()}),
                        );
                    }
                }
            }
            Ok(if all_valid {
                Outcome::Ok
            } else {
                Outcome::Findings
            })
        }
        AwbCommand::ImportBlock {
            pool,
            first,
            last,
            valid_to,
            execute,
        } => {
            let block = expand_block(&first, &last)?;
            let (a, b) = (block[0], block[block.len() - 1]);
            if !execute {
                out(
                    global,
                    format!("plan: import {} numbers {a} … {b} into pool {pool}{}\ndry run: nothing was changed. Run again with --execute to import.",
                        block.len(), valid_to.as_deref().map(|d| format!(", valid to {d}")).unwrap_or_default()),
                    json!({"plan": "import", "pool": pool, "first": a.to_string(), "last": b.to_string(), "count": block.len(), "execute": false}),
                );
                return Ok(Outcome::Ok);
            }
            let mut store = connect(global).await?;
            store.awb_ensure_schema().await?;
            let n = store
                .awb_import_block(&pool, &first, &last, valid_to.as_deref())
                .await?;
            out(
                global,
                format!("imported {n} numbers {a} … {b} into pool {pool}"),
                json!({"imported": n, "pool": pool, "first": a.to_string(), "last": b.to_string()}),
            );
            Ok(Outcome::Ok)
        }
        AwbCommand::Issue { pool, shipment } => {
            let mut store = connect(global).await?;
            let a = store.awb_issue_next(&pool, &shipment).await?;
            out(
                global,
                a.to_string(),
                json!({"number": a.to_string(), "pool": pool, "shipment": shipment}),
            );
            Ok(Outcome::Ok)
        }
        AwbCommand::Transition {
            number,
            to,
            shipment,
            reason,
            expect_shipment,
        } => {
            let to = state(&to)?;
            let mut store = connect(global).await?;
            let t = store
                .awb_transition(
                    &number,
                    to,
                    shipment.as_deref(),
                    reason.as_deref(),
                    None,
                    expect_shipment.as_deref(),
                )
                .await?;
            match t {
                AwbTransition::Moved { from, to } => out(
                    global,
                    format!("{number}: {} → {}", from.as_str(), to.as_str()),
                    json!({"number": number, "from": from.as_str(), "to": to.as_str()}),
                ),
                AwbTransition::Unchanged => out(
                    global,
                    format!("{number}: unchanged (it is no longer assigned to that shipment)"),
                    json!({"number": number, "unchanged": true}),
                ),
            }
            Ok(Outcome::Ok)
        }
        AwbCommand::Void { number, reason } => {
            let mut store = connect(global).await?;
            store
                .awb_transition(&number, AwbState::Voided, None, Some(&reason), None, None)
                .await?;
            out(
                global,
                format!("{number} voided: {reason}"),
                json!({"number": number, "status": "voided", "reason": reason}),
            );
            Ok(Outcome::Ok)
        }
        AwbCommand::Freeze { number, unfreeze } => {
            let mut store = connect(global).await?;
            store.awb_freeze(&number, !unfreeze).await?;
            out(
                global,
                format!("{number} {}", if unfreeze { "unfrozen" } else { "frozen" }),
                json!({"number": number, "frozen": !unfreeze}),
            );
            Ok(Outcome::Ok)
        }
        AwbCommand::Status { number } => {
            let mut store = connect(global).await?;
            let s = store.awb_status(&number).await?;
            out(
                global,
                format!(
                    "number   {}\npool     {}\nstatus   {}{}\nshipment {}\nvalid to {}",
                    s.number,
                    s.pool,
                    s.status.as_str(),
                    if s.frozen { " (frozen)" } else { "" },
                    s.shipment.as_deref().unwrap_or("-"),
                    s.valid_to.as_deref().unwrap_or("-")
                ),
                json!({"number": s.number, "pool": s.pool, "status": s.status.as_str(), "frozen": s.frozen,
                       "shipment": s.shipment, "valid_to": s.valid_to, "reason": s.reason}),
            );
            Ok(Outcome::Ok)
        }
        AwbCommand::Report { pool } => {
            let mut store = connect(global).await?;
            let r = store.awb_report(&pool).await?;
            let lines: Vec<String> = r
                .by_status
                .iter()
                .map(|(s, n)| format!("  {s:<10} {n}"))
                .collect();
            out(
                global,
                format!(
                    "pool {pool}\n{}\n  frozen     {}\n  expired    {}\n  available  {}",
                    lines.join("\n"),
                    r.frozen,
                    r.expired,
                    r.available
                ),
                json!({"pool": pool, "by_status": r.by_status.iter().map(|(s, n)| json!({"status": s, "count": n})).collect::<Vec<_>>(),
                       "frozen": r.frozen, "expired": r.expired, "available": r.available}),
            );
            Ok(Outcome::Ok)
        }
    }
}
