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
//! integration's hooks, on both backends: in one PHP process per backend and
//! round, orders with and without the hooks alternating (with, without,
//! without, with, …), so that both sides of a ratio share the process, the
//! database's state and the machine's load of the same seconds. With
//! `--compare DIR` (another copy of `wp-plugin/`, e.g. the plugin before a
//! change), each round also measures that plugin, swapped into the same
//! site for its processes: the two versions interleaved in the same run.
//!
//! Usage: `cargo run --release -p counterfoil-benches --bin wp-side-by-side -- [--callbacks N] [--clients C] [--rounds R] [--orders O] [--only-woocommerce] [--compare DIR]`

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Result};
use counterfoil_benches::{median, opt};
use counterfoil_tests::webhook::deliver;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

/// One measured cell: version, backend label, extension, per round (without, with) ms.
type Cell<'a> = (&'a str, &'a str, bool, Vec<(f64, f64)>);
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
    counterfoil_benches::help_or_go("Usage: wp-side-by-side [--callbacks N] [--clients C] [--rounds R] [--orders O] [--only-woocommerce] [--compare DIR]

Signed payment callbacks to WordPress on both backends, each with the payment flow in one trip and as several statements: callbacks/s and the share of request time spent allocating. Then WooCommerce's payment_complete() with and without Counterfoil, O orders of each a round, alternating in one PHP process; --compare DIR measures the plugin in DIR (a copy of wp-plugin/) too, interleaved.");
    let args: Vec<String> = std::env::args().collect();
    let callbacks = opt(&args, "--callbacks", 400);
    let clients = opt(&args, "--clients", 8);
    let rounds = opt(&args, "--rounds", 3);
    eprintln!("starting MariaDB and WordPress …");
    let server = MariaDb::start("bench-wp")?;
    let compare = args
        .iter()
        .position(|a| a == "--compare")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    if args.iter().any(|a| a == "--only-woocommerce") {
        return woocommerce_cost(
            &server,
            rounds,
            opt(&args, "--orders", 100),
            compare.as_deref(),
        );
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
    woocommerce_cost(
        &server,
        rounds,
        opt(&args, "--orders", 100),
        compare.as_deref(),
    )
}

/// One PHP process completing the payment of `2 × orders` new orders, with
/// and without Counterfoil's hooks alternating (with, without, without,
/// with, …: each pair in both orders): the median milliseconds of one call
/// without and with.
fn payment_complete_ms(wp: &WordPress, extension: bool, orders: usize) -> Result<(f64, f64)> {
    let out = wp.eval(
        extension,
        &format!(
            "$ids = array(); for ($i = 0; $i < 2 * {orders}; $i++) {{ $ids[] = cf_test_order('19.99'); }}
             $hooks = function ($on) {{
                 $f = $on ? 'add_action' : 'remove_action';
                 foreach (Counterfoil_WooCommerce::number_statuses() as $s) {{
                     $f('woocommerce_order_status_' . $s, array('Counterfoil_WooCommerce', 'on_paid_status'), 5, 2);
                 }}
                 foreach (Counterfoil_WooCommerce::paid_statuses() as $s) {{
                     $f('woocommerce_payment_complete_order_status_' . $s, array('Counterfoil_WooCommerce', 'on_payment_complete'), 5, 1);
                 }}
                 $f('woocommerce_payment_complete', array('Counterfoil_WooCommerce', 'on_payment_complete'), 5, 1);
             }};
             $ms = array(array(), array());
             foreach ($ids as $i => $id) {{
                 $with = intdiv($i, 2) % 2 === $i % 2 ? 1 : 0;
                 $hooks((bool) $with);
                 $o = wc_get_order($id); $t = hrtime(true); $o->payment_complete('bench-' . $id); $ms[$with][] = (hrtime(true) - $t) / 1e6;
                 if ($with && '' === $o->get_meta('_counterfoil_invoice_number')) {{ fwrite(STDERR, \"order $id: no number\\n\"); exit(1); }}
                 if (!$with && '' !== $o->get_meta('_counterfoil_invoice_number')) {{ fwrite(STDERR, \"order $id: numbered without the hooks\\n\"); exit(1); }}
             }}
             foreach ($ms as $k => $v) {{ sort($v); $ms[$k] = $v[intdiv(count($v), 2)]; }}
             echo $ms[0], ' ', $ms[1];"
        ),
    )?;
    let mut it = out.split_whitespace().map(|v| v.parse::<f64>());
    match (it.next(), it.next()) {
        (Some(Ok(without)), Some(Ok(with))) => Ok((without, with)),
        _ => bail!("unexpected answer: {out}"),
    }
}

/// Puts the plugin `version` (`current` or `compare`, kept beside the site's
/// plugins) in the site's `wp-content/plugins/counterfoil`.
fn use_plugin(wp: &WordPress, version: &str) -> Result<()> {
    let plugins = wp.dir().join("wp-content/plugins");
    let active = plugins.join("counterfoil");
    let shelf = wp.dir().join("counterfoil-versions");
    let now = std::fs::read_to_string(shelf.join("active"))?;
    if now.trim() != version {
        std::fs::rename(&active, shelf.join(now.trim()))?;
        std::fs::rename(shelf.join(version), &active)?;
        std::fs::write(shelf.join("active"), version)?;
    }
    Ok(())
}

/// Shelves the site's plugin as `current` and a copy of `dir` as `compare`.
fn shelve_compare(wp: &WordPress, dir: &Path) -> Result<()> {
    let shelf = wp.dir().join("counterfoil-versions");
    std::fs::create_dir_all(&shelf)?;
    let cp = std::process::Command::new("cp")
        .arg("-r")
        .arg(dir)
        .arg(shelf.join("compare"))
        .status()?;
    if !cp.success() {
        bail!("copy {}", dir.display());
    }
    let _ = std::fs::remove_dir_all(shelf.join("compare/tests"));
    std::fs::write(shelf.join("active"), "current")?;
    Ok(())
}

fn woocommerce_cost(
    server: &MariaDb,
    rounds: usize,
    orders: usize,
    compare: Option<&Path>,
) -> Result<()> {
    eprintln!("WooCommerce: payment_complete() with and without Counterfoil …");
    let wp = counterfoil_tests::woocommerce::install(server, "bench-woo")?;
    let versions: Vec<&str> = match compare {
        Some(dir) => {
            shelve_compare(&wp, dir)?;
            vec!["current", "compare"]
        }
        None => vec!["current"],
    };
    // (version, backend label, extension, per round: (without, with)).
    let mut cells: Vec<Cell> = Vec::new();
    for version in &versions {
        cells.push((version, "extension", true, Vec::new()));
        cells.push((version, "pure PHP", false, Vec::new()));
    }
    // Warm-up: the series exists, opcache-less CLI either way.
    payment_complete_ms(&wp, true, 3)?;
    for round in 0..rounds {
        for (version, name, extension, ms) in cells.iter_mut() {
            if compare.is_some() {
                use_plugin(&wp, version)?;
            }
            let (without, with) = payment_complete_ms(&wp, *extension, orders)?;
            eprintln!(
                "round {}/{rounds} {version:<8} {name:<10}: without {without:.2} ms, with {with:.2} ms, {:.3}×",
                round + 1,
                with / without
            );
            ms.push((without, with));
        }
    }
    if compare.is_some() {
        use_plugin(&wp, "current")?;
    }
    let version = wp.eval(false, "echo WC()->version;")?;
    println!(
        "\nWooCommerce {version}: WC_Order::payment_complete() in one PHP process per backend and round, \
         {orders} new orders with and {orders} without Counterfoil's hooks alternating, median ms of one call, \
         median of {rounds} rounds (added, with / without: the medians of the rounds' differences and ratios)"
    );
    for v in &versions {
        if let Some(dir) = compare {
            let label = if *v == "current" {
                "this tree's plugin (wp-plugin/)".to_owned()
            } else {
                format!("the plugin in {}", dir.display())
            };
            println!("\n{label}:");
        }
        println!("\n| backend | without Counterfoil | with Counterfoil | added | with / without |");
        println!("|---|---|---|---|---|");
        for (_, label, _, ms) in cells.iter().filter(|c| c.0 == *v) {
            let without = median(ms.iter().map(|m| m.0).collect());
            let with = median(ms.iter().map(|m| m.1).collect());
            let added = median(ms.iter().map(|m| m.1 - m.0).collect());
            let ratio = median(ms.iter().map(|m| m.1 / m.0).collect());
            println!("| {label} | {without:.2} | {with:.2} | {added:+.2} | {ratio:.2}× |");
        }
    }
    Ok(())
}
