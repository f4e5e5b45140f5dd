//! The end-to-end demo (`./scripts/demo`): a private MariaDB, WordPress from
//! Debian's package, php-fpm and nginx, the plugin with the extension; two
//! series; a burst of concurrent signed payment callbacks with repeated
//! deliveries; the invoices and the checks; then the site stays up (URL and
//! admin login printed) until Ctrl-C.
//!
//! Usage: `wp-demo [--payments N] [--clients N] [--no-wait]`

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use counterfoil_tests::burst;
use counterfoil_tests::wordpress::{WordPress, ADMIN_PASSWORD, ADMIN_USER};
use counterfoil_tests::MariaDb;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let payments = arg(&args, "--payments", 120).max(4);
    let clients = arg(&args, "--clients", 16).max(1);
    let wait = !args.iter().any(|a| a == "--no-wait");

    eprintln!("==> private MariaDB (innodb_flush_log_at_trx_commit=1) under target/harness/");
    let server = MariaDb::start("demo")?;
    eprintln!("==> WordPress from /usr/share/wordpress, plugin activated");
    let wp = WordPress::install(&server, "demo", None)?;
    let site = wp.serve(true, 4)?;
    let created = wp.eval(
        true,
        "echo counterfoil_backend()->name(), ' ', \
         initialize_invoice_sequence(1, 2026, 1001) ? 'created' : 'exists', ' ', \
         initialize_invoice_sequence(2, 2026, 1) ? 'created' : 'exists';",
    )?;
    eprintln!("==> backend and series 1:2026 (starts at 1001), 2:2026 (starts at 1): {created}");
    eprintln!(
        "==> user 3 is a new issuer with no series: its first payments create 3:2026 \
         (setting \"when a payment's series does not exist yet\": create, at 1)"
    );
    let secret = wp.webhook_secret()?;

    let thrice = payments / 10;
    let twice = payments / 4 - thrice;
    let plan = burst::plan(payments, thrice, twice, &[1, 2, 3]);
    let deliveries: usize = plan.iter().map(|p| p.copies).sum();
    eprintln!(
        "==> {deliveries} signed callbacks for {payments} payments from {clients} concurrent clients \
         ({thrice} delivered 3 times and {twice} twice, the copies at the same moment)"
    );
    let started = std::time::Instant::now();
    let answers =
        burst::send(site.port(), &secret, 2026, &plan, clients).with_context(|| site.logs())?;
    let took = started.elapsed();
    let per_txn = burst::by_transaction(&answers)?;

    println!(
        "\n{:<10} {:<10} {:<12} {:<10} answers",
        "payment", "series", "invoice", "post id"
    );
    let mut rows: Vec<(&String, &burst::Invoiced)> = per_txn.iter().collect();
    rows.sort_by_key(|(_, v)| v.number.clone());
    let series_of: BTreeMap<&str, u64> = plan
        .iter()
        .map(|p| (p.transaction_id.as_str(), p.user_id))
        .collect();
    for (
        txn,
        burst::Invoiced {
            number,
            invoice_id: post,
            statuses,
        },
    ) in &rows
    {
        println!(
            "{:<10} {:<10} {:<12} {:<10} {}",
            txn,
            format!("{}:2026", series_of[txn.as_str()]),
            number,
            post,
            statuses
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let check = burst::check_site(wp.database_url())?;
    println!(
        "\nchecks ({deliveries} deliveries in {:.1} s):",
        took.as_secs_f64()
    );
    println!(
        "  every delivery of a payment got the same number and invoice: yes ({} payments)",
        per_txn.len()
    );
    println!(
        "  invoice posts                       : {} (payments: {payments})",
        check.invoices
    );
    println!(
        "  payments with more than one invoice : {}",
        check.transactions_with_several_invoices
    );
    println!(
        "  numbers issued twice in a series    : {}",
        check.duplicate_numbers
    );
    for (scope, start, current, rows, issued) in &check.series {
        println!(
            "  series {scope}: numbers {start}..{current}, registry rows {rows}, issued {issued}, holes {}",
            (current + 1 - start).saturating_sub(*rows)
        );
    }
    if !check.is_clean() || check.invoices != payments as u64 {
        bail!("FAILED: {check:?}");
    }
    println!("\nOK: one invoice per payment, no number twice, every number accounted for.");
    println!("\nSite:     {}/", site.base_url());
    println!(
        "Admin:    {}/wp-admin/options-general.php?page=counterfoil",
        site.base_url()
    );
    println!("Login:    {ADMIN_USER} / {ADMIN_PASSWORD}");
    println!(
        "Webhook:  POST {}{}",
        site.base_url(),
        counterfoil_tests::webhook::PATH
    );
    println!("Secret:   {secret}");
    println!(
        "Sign:     X-Counterfoil-Timestamp: <unix time>; X-Counterfoil-Signature: v2=<HMAC-SHA256(secret, \"<timestamp>.POST.<host>./counterfoil/v1/payments.<body>\")>"
    );
    println!(
        "Stripe:   POST {}/wp-json/counterfoil/v1/stripe (Stripe's own signed events; paste the endpoint's whsec_ secret in the settings)",
        site.base_url()
    );
    if wait {
        println!("\nThe site stays up until Ctrl-C.");
        counterfoil_tests::wait_for_stop_signal()?;
        eprintln!("==> stopping nginx, php-fpm and MariaDB");
    }
    drop(site);
    drop(wp);
    drop(server);
    Ok(())
}
