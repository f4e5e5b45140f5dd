//! Side-by-side benchmark of the WordPress plugin (issue 4): signed payment
//! callbacks per second end to end over HTTP (nginx → php-fpm → WordPress →
//! plugin → MariaDB), with the extension backend vs the pure-PHP backend, in
//! one run on one WordPress site, each with the payment flow in one round
//! trip (the default) and as several statements (issue 30, switched by the
//! `counterfoil_one_trip_payments` filter); and the share of a request's
//! time spent allocating (the plugin's `Server-Timing: allocate;dur=…,
//! total;dur=…`).
//!
//! Then the cost Counterfoil adds to a WooCommerce payment (issue 39):
//! `WC_Order::payment_complete()` on a WooCommerce site (the stand-in, or the
//! real WooCommerce that COUNTERFOIL_WOOCOMMERCE names) with and without the
//! integration's hooks, on both backends, interleaved in the same run.
//!
//! Usage: `cargo run --release -p counterfoil-benches --bin wp-side-by-side -- [--callbacks N] [--clients C] [--rounds R] [--orders O] [--only-woocommerce]`

use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Result};
use counterfoil_benches::{median, opt};
use counterfoil_tests::webhook::deliver;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn timing(header: &str, name: &str) -> Option<f64> {
    header.split(',').find_map(|part| {
        let part = part.trim();
        let rest = part.strip_prefix(name)?.strip_prefix(";dur=")?;
        rest.parse().ok()
    })
}

struct Run {
    per_second: f64,
    p50_ms: f64,
    alloc_share: f64,
    alloc_ms: f64,
}

fn run(port: u16, secret: &str, tag: &str, callbacks: usize, clients: usize) -> Result<Run> {
    let next = Mutex::new(0usize);
    let samples: Mutex<Vec<(f64, f64, f64)>> = Mutex::new(Vec::new());
    let failed: Mutex<Option<String>> = Mutex::new(None);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..clients {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    if *n >= callbacks {
                        break;
                    }
                    *n += 1;
                    *n
                };
                let body = format!(
                    r#"{{"gateway":"bench","transaction_id":"{tag}-{i}","user_id":1,"year":2026,"amount":"9.99","currency":"EUR"}}"#
                );
                let t = Instant::now();
                match deliver(port, secret, body.as_bytes(), 0) {
                    Ok(r) if r.status == 201 => {
                        let h = r.header("Server-Timing").first().map(|s| s.to_string()).unwrap_or_default();
                        let alloc = timing(&h, "allocate").unwrap_or(0.0);
                        let total = timing(&h, "total").unwrap_or(f64::NAN);
                        let wall = t.elapsed().as_secs_f64() * 1000.0;
                        samples.lock().unwrap().push((alloc, total, wall));
                    }
                    Ok(r) => *failed.lock().unwrap() = Some(format!("{} {}", r.status, r.body)),
                    Err(e) => *failed.lock().unwrap() = Some(e.to_string()),
                }
            });
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(f) = failed.into_inner().unwrap() {
        bail!("a callback failed: {f}");
    }
    let samples = samples.into_inner().unwrap();
    let alloc: f64 = samples.iter().map(|s| s.0).sum();
    let total: f64 = samples.iter().map(|s| s.1).sum();
    Ok(Run {
        per_second: samples.len() as f64 / elapsed,
        p50_ms: median(samples.iter().map(|s| s.2).collect()),
        alloc_share: alloc / total,
        alloc_ms: median(samples.iter().map(|s| s.0).collect()),
    })
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: wp-side-by-side [--callbacks N] [--clients C] [--rounds R] [--orders O] [--only-woocommerce]

Signed payment callbacks to WordPress on both backends, each with the payment flow in one trip and as several statements: callbacks/s and the share of request time spent allocating. Then WooCommerce's payment_complete() with and without Counterfoil, O orders a round.");
    let args: Vec<String> = std::env::args().collect();
    let callbacks = opt(&args, "--callbacks", 400);
    let clients = opt(&args, "--clients", 8);
    let rounds = opt(&args, "--rounds", 3);
    eprintln!("starting MariaDB and WordPress …");
    let server = MariaDb::start("bench-wp")?;
    if args.iter().any(|a| a == "--only-woocommerce") {
        return woocommerce_cost(&server, rounds, opt(&args, "--orders", 100));
    }
    let wp = WordPress::install(&server, "bench", None)?;
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")?;
    let secret = wp.webhook_secret()?;
    // The payment flow as one packet or as several statements, switched
    // per run through the plugin's own filter.
    wp.mu_plugin(
        "bench-one-trip",
        "<?php add_filter( 'counterfoil_one_trip_payments', function () { \
         return '0' !== get_option( 'counterfoil_bench_one_trip', '1' ); } );",
    )?;
    let mut results: Vec<(&str, bool, bool, Vec<Run>)> = vec![
        ("extension, one trip", true, true, Vec::new()),
        ("extension, several statements", true, false, Vec::new()),
        ("pure PHP, one trip", false, true, Vec::new()),
        ("pure PHP, several statements", false, false, Vec::new()),
    ];
    for round in 0..rounds {
        for (i, (name, extension, one_trip, runs)) in results.iter_mut().enumerate() {
            wp.eval(
                false,
                &format!(
                    "update_option( 'counterfoil_bench_one_trip', '{}' );",
                    u8::from(*one_trip)
                ),
            )?;
            let site = wp.serve(*extension, 4)?;
            // Warm up the workers (opcache, connections).
            run(
                site.port(),
                &secret,
                &format!("warm-{round}-{i}"),
                40,
                clients,
            )?;
            let r = run(
                site.port(),
                &secret,
                &format!("r{round}-{i}"),
                callbacks,
                clients,
            )?;
            eprintln!(
                "round {}/{rounds} {name:<30}: {:.0} callbacks/s",
                round + 1,
                r.per_second
            );
            runs.push(r);
        }
    }
    let summary: Vec<(&str, f64, f64, f64, f64)> = results
        .iter()
        .map(|(name, _, _, runs)| {
            (
                *name,
                median(runs.iter().map(|r| r.per_second).collect()),
                median(runs.iter().map(|r| r.p50_ms).collect()),
                median(runs.iter().map(|r| r.alloc_ms).collect()),
                median(runs.iter().map(|r| r.alloc_share).collect()),
            )
        })
        .collect();
    println!(
        "\nWordPress {} + plugin, php-fpm (4 workers) behind nginx, {clients} concurrent clients, \
         {callbacks} signed callbacks per round (each a new payment → invoice post), median of {rounds} rounds\n",
        wp.eval(false, "echo get_bloginfo('version');")?
    );
    println!("| backend, payment flow | callbacks/s | p50 latency ms | allocation ms (p50) | share of request time allocating | vs pure PHP, several statements |");
    println!("|---|---|---|---|---|---|");
    let base = summary[3].1;
    for (name, rate, p50, alloc, share) in &summary {
        println!(
            "| {name} | {rate:.0} | {p50:.1} | {alloc:.2} | {:.1}% | {:.2}× |",
            share * 100.0,
            rate / base
        );
    }
    println!(
        "\nOne trip against several statements, allocation time (p50): extension {:.2}×, pure PHP {:.2}×",
        summary[0].3 / summary[1].3,
        summary[2].3 / summary[3].3
    );
    woocommerce_cost(&server, rounds, opt(&args, "--orders", 100))
}

/// One PHP process completing the payment of `orders` new orders, with or
/// without Counterfoil's hooks: the median milliseconds of one call.
fn payment_complete_ms(wp: &WordPress, extension: bool, with: bool, orders: usize) -> Result<f64> {
    let out = wp.eval(
        extension,
        &format!(
            "$ids = array(); for ($i = 0; $i < {orders}; $i++) {{ $ids[] = cf_test_order('19.99'); }}
             if (!{with}) {{
                 foreach (Counterfoil_WooCommerce::paid_statuses() as $s) {{
                     remove_action('woocommerce_order_status_' . $s, array('Counterfoil_WooCommerce', 'on_paid_status'), 5);
                     remove_action('woocommerce_payment_complete_order_status_' . $s, array('Counterfoil_WooCommerce', 'on_payment_complete'), 5);
                 }}
                 remove_action('woocommerce_payment_complete', array('Counterfoil_WooCommerce', 'on_payment_complete'), 5);
             }}
             $ms = array();
             foreach ($ids as $id) {{
                 $o = wc_get_order($id); $t = hrtime(true); $o->payment_complete('bench-' . $id); $ms[] = (hrtime(true) - $t) / 1e6;
                 if ({with} && '' === $o->get_meta('_counterfoil_invoice_number')) {{ fwrite(STDERR, \"order $id: no number\\n\"); exit(1); }}
             }}
             sort($ms); echo $ms[intdiv(count($ms), 2)];",
            with = if with { "true" } else { "false" }
        ),
    )?;
    Ok(out.trim().parse()?)
}

fn woocommerce_cost(server: &MariaDb, rounds: usize, orders: usize) -> Result<()> {
    eprintln!("WooCommerce: payment_complete() with and without Counterfoil …");
    let wp = counterfoil_tests::woocommerce::install(server, "bench-woo")?;
    let mut cells: Vec<(&str, bool, bool, Vec<f64>)> = vec![
        ("extension, without Counterfoil", true, false, Vec::new()),
        ("extension, with Counterfoil", true, true, Vec::new()),
        ("pure PHP, without Counterfoil", false, false, Vec::new()),
        ("pure PHP, with Counterfoil", false, true, Vec::new()),
    ];
    // Warm-up: the series exists, opcache-less CLI either way.
    payment_complete_ms(&wp, true, true, 5)?;
    for round in 0..rounds {
        for (name, extension, with, ms) in cells.iter_mut() {
            let m = payment_complete_ms(&wp, *extension, *with, orders)?;
            eprintln!("round {}/{rounds} {name:<32}: {m:.2} ms", round + 1);
            ms.push(m);
        }
    }
    let medians: Vec<f64> = cells.iter().map(|c| median(c.3.clone())).collect();
    let version = wp.eval(false, "echo WC()->version;")?;
    println!(
        "\nWooCommerce {version}: WC_Order::payment_complete() in one PHP process, {orders} new orders a round, \
         median ms of one call, median of {rounds} rounds\n"
    );
    println!("| backend | without Counterfoil | with Counterfoil | added | with / without |");
    println!("|---|---|---|---|---|");
    for (label, i) in [("extension", 0), ("pure PHP", 2)] {
        println!(
            "| {label} | {:.2} | {:.2} | {:+.2} | {:.2}× |",
            medians[i],
            medians[i + 1],
            medians[i + 1] - medians[i],
            medians[i + 1] / medians[i]
        );
    }
    Ok(())
}
