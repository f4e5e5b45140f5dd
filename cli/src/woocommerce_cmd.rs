//! `counterfoil woocommerce backfill`: the paid WooCommerce orders of this
//! numbering period that have no invoice number, listed (dry run) or
//! numbered (`--execute`) by the site itself.
//!
//! Invariants: the CLI never numbers an order from outside WordPress — it
//! calls the plugin's route `POST /counterfoil/v1/woocommerce/backfill`
//! (capability `manage_woocommerce`), which numbers through the same call as
//! a payment; the WordPress application password is read from the
//! environment (`COUNTERFOIL_WP_APP_PASSWORD`), never from the command line,
//! and sent only over HTTPS unless `--allow-http` (a local test site); exit
//! 0 nothing waits (or everything was numbered), 1 orders wait (or failed),
//! 2 error.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use serde_json::{json, Value};

use crate::cli::{Global, WooCommerceBackfillArgs, WooCommerceCommand};
use crate::Outcome;

/// The environment variable holding the application password.
pub const PASSWORD_ENV: &str = "COUNTERFOIL_WP_APP_PASSWORD";

/// The command.
pub async fn run(global: &Global, cmd: WooCommerceCommand) -> Result<Outcome> {
    match cmd {
        WooCommerceCommand::Backfill(args) => {
            // ureq blocks: off the runtime's threads.
            let json_out = global.json;
            tokio::task::spawn_blocking(move || backfill(json_out, &args))
                .await
                .context("the backfill call")?
        }
    }
}

/// The route's address on `site` (works without pretty permalinks).
fn route_url(site: &str) -> String {
    format!(
        "{}/?rest_route=/counterfoil/v1/woocommerce/backfill",
        site.trim_end_matches('/')
    )
}

fn backfill(json_out: bool, args: &WooCommerceBackfillArgs) -> Result<Outcome> {
    let secure = args.site.starts_with("https://");
    if !(secure || (args.allow_http && args.site.starts_with("http://"))) {
        bail!(
            "--site must be an https:// address (the application password travels with the request); \
             --allow-http for a local test site"
        );
    }
    let password = std::env::var(PASSWORD_ENV).map_err(|_| {
        anyhow::anyhow!(
            "set {PASSWORD_ENV} to an application password of --user (Users → Profile → Application Passwords)"
        )
    })?;
    if !json_out {
        eprintln!(
            "woocommerce backfill: asking {} for this period's paid orders without an invoice number{}",
            args.site,
            if args.execute { ", numbering them" } else { " (dry run)" }
        );
    }
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(args.timeout_s)))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let auth = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{password}", args.user))
    );
    let mut response = agent
        .post(&route_url(&args.site))
        .header("Authorization", &auth)
        .send_json(json!({ "execute": args.execute }))
        .with_context(|| format!("POST {}", route_url(&args.site)))?;
    let status = response.status().as_u16();
    let body: Value = response
        .body_mut()
        .read_json()
        .with_context(|| format!("the site answered {status} without JSON"))?;
    if !(status == 200 || status == 207) {
        bail!(
            "the site answered {status}: {}",
            body.get("message").and_then(Value::as_str).unwrap_or("")
        );
    }
    let orders: Vec<u64> = body["orders"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let numbered = body["numbered"].as_object().cloned().unwrap_or_default();
    let failed = body["failed"].as_object().cloned().unwrap_or_default();
    if json_out {
        println!(
            "{}",
            json!({"type": "backfill", "since": body["since"], "until": body["until"],
            "orders": orders, "executed": args.execute, "numbered": numbered, "failed": failed})
        );
    } else {
        println!(
            "{} paid order(s) from {} to {} without an invoice number{}",
            orders.len(),
            body["since"].as_str().unwrap_or("?"),
            body["until"].as_str().unwrap_or("?"),
            if orders.is_empty() { "." } else { ":" }
        );
        for id in &orders {
            let key = id.to_string();
            match (numbered.get(&key), failed.get(&key)) {
                (Some(n), _) => println!("  order {id}: numbered {}", n.as_str().unwrap_or("")),
                (_, Some(why)) => println!("  order {id}: FAILED ({})", why.as_str().unwrap_or("")),
                _ => println!("  order {id}"),
            }
        }
        if !args.execute && !orders.is_empty() {
            println!("\ndry run: nothing was numbered. Run again with --execute to number them.");
        }
    }
    let waiting = if args.execute {
        !failed.is_empty()
    } else {
        !orders.is_empty()
    };
    Ok(if waiting {
        Outcome::Findings
    } else {
        Outcome::Ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_route_works_without_pretty_permalinks() {
        assert_eq!(
            route_url("https://shop.example/"),
            "https://shop.example/?rest_route=/counterfoil/v1/woocommerce/backfill"
        );
    }
}
