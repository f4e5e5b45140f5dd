//! Side-by-side benchmark of the WordPress plugin (issue 4): signed payment
//! callbacks per second end to end over HTTP (nginx → php-fpm → WordPress →
//! plugin → MariaDB), with the extension backend vs the pure-PHP backend, in
//! one run on one WordPress site, each with the payment flow in one round
//! trip (the default) and as several statements (issue 30, switched by the
//! `counterfoil_one_trip_payments` filter); and the share of a request's
//! time spent allocating (the plugin's `Server-Timing: allocate;dur=…,
//! total;dur=…`).
//!
//! Usage: `cargo run --release -p counterfoil-benches --bin wp-side-by-side -- [--callbacks N] [--clients C] [--rounds R]`

use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Result};
use counterfoil_benches::median;
use counterfoil_tests::webhook::deliver;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn opt(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

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
    counterfoil_benches::help_or_go("Usage: wp-side-by-side [--callbacks N] [--clients C] [--rounds R]

Signed payment callbacks to WordPress on both backends, each with the payment flow in one trip and as several statements: callbacks/s and the share of request time spent allocating.");
    let args: Vec<String> = std::env::args().collect();
    let callbacks = opt(&args, "--callbacks", 400);
    let clients = opt(&args, "--clients", 8);
    let rounds = opt(&args, "--rounds", 3);
    eprintln!("starting MariaDB and WordPress …");
    let server = MariaDb::start("bench-wp")?;
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
    Ok(())
}
