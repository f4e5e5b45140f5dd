//! What commit confirmation costs on a routed Galera cluster: the core's
//! payment flow (`record_payment`, a new payment per call) and its recorded
//! allocation (`allocate_recorded`) on one hot series of a 3-node MariaDB
//! Galera cluster (the test harness's, `innodb_flush_log_at_trx_commit=1`),
//! every worker given the node list (so all write through node 1), with
//! confirmation on (the default on a Galera node: the transaction read back
//! on the same connection after its COMMIT was answered) and off
//! (`ConfirmCommits::Never`, the baseline), interleaved in rounds, the
//! order of the two modes alternating from round to round so that the
//! machine's noise hits both alike.
//!
//! Prints each round's calls/s per mode, the medians, the ratio
//! (confirmed / unconfirmed throughput) and the cost in percent against
//! the budget of 10 % (after a warm-up of a second per flow and mode, not
//! counted): a measurement, so a cost over budget is reported, not
//! a failure; the process fails only when the run itself does (a worker
//! failing, no call told a number).
//!
//! Usage: `cargo build --release -p counterfoil-benches &&
//! ./target/release/galera-confirm-cost [--seconds S] [--rounds R] [--workers N] [--flows payment,recorded]`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use counterfoil_benches::{arg, median};
use counterfoil_core::{ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::galera::Galera;
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::workers::run_together;
use mysql_async::prelude::Queryable;

/// The hot series (the worker's `SCOPE`).
const SCOPE: &str = "hot";
/// The cost the confirmation may have (confirmed throughput at least 90 %
/// of unconfirmed).
const BUDGET_PERCENT: f64 = 10.0;
/// The two modes: name, and the worker's BENCH_CONFIRM.
const MODES: [(&str, &str); 2] = [("confirmed", "on"), ("unconfirmed", "never")];

/// What one cell (a flow in a mode, in one round) measured.
#[derive(Clone, Debug, Default)]
struct Cell {
    /// Calls told their number per second, first start to last end.
    rate: f64,
    /// Median of the workers' p50 latencies, and the worst p99, in µs.
    p50_us: u64,
    p99_us: u64,
    /// The workers' CPU per call told, in µs.
    worker_cpu_us: f64,
    /// The three nodes' CPU per call told, in µs (0 without their pids).
    cluster_cpu_us: f64,
    /// Statements node 1 received per call told (its `Questions`).
    statements: f64,
    /// Certification failures and brute-force aborts on node 1.
    conflicts: u64,
    /// Calls that failed, and the first failure's message.
    errors: u64,
    first_error: String,
    /// Calls that ended on a node other than node 1.
    off_writer: u64,
}

fn worker_bin() -> PathBuf {
    std::env::current_exe()
        .expect("current exe")
        .with_file_name("galera-confirm-worker")
}

/// The value after `key` on the worker's line `key …`.
fn line<'a>(out: &'a str, key: &str) -> Result<&'a str> {
    out.lines()
        .find_map(|l| l.strip_prefix(key))
        .with_context(|| format!("no `{key}` in the worker's output: {out}"))
}

fn numbers(out: &str, key: &str) -> Result<Vec<u128>> {
    line(out, key)?
        .split_whitespace()
        .map(|v| v.parse().context("a number"))
        .collect()
}

/// utime + stime of `pid` in clock ticks (USER_HZ, 100 a second).
fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let field = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .context("a short /proc stat line")?
            .parse()
            .context("a tick count")
    };
    Ok(field(11)? + field(12)?)
}

/// The nodes' server pids (from their pid files), for their CPU.
fn node_pids(g: &Galera) -> Vec<u32> {
    (0..3)
        .filter_map(|i| {
            std::fs::read_to_string(g.node_dir(i).join("mariadbd.pid"))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
        .collect()
}

fn cluster_ticks(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|&p| cpu_ticks(p).ok()).sum()
}

/// Node 1's `Questions`, `wsrep_local_cert_failures` and
/// `wsrep_local_bf_aborts`.
fn writer_status(url: &str) -> Result<(u64, u64)> {
    block_on(async {
        let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(url)?).await?;
        let rows: Vec<(String, String)> = c
            .query(
                "SHOW GLOBAL STATUS WHERE Variable_name IN \
                 ('Questions', 'wsrep_local_cert_failures', 'wsrep_local_bf_aborts')",
            )
            .await?;
        c.disconnect().await?;
        let mut questions = 0;
        let mut conflicts = 0;
        for (name, value) in rows {
            let v: u64 = value.parse().unwrap_or(0);
            if name.eq_ignore_ascii_case("Questions") {
                questions = v;
            } else {
                conflicts += v;
            }
        }
        anyhow::Ok((questions, conflicts))
    })
}

/// `workers` processes running `flow` in `confirm` mode for `seconds`,
/// released together.
fn cell(
    g: &Galera,
    pids: &[u32],
    flow: &str,
    confirm: &str,
    tag: &str,
    workers: usize,
    seconds: f64,
) -> Result<Cell> {
    let urls = g.urls("cf");
    let commands = (0..workers)
        .map(|w| {
            let mut c = Command::new(worker_bin());
            c.env("BENCH_URL", &urls)
                .env("BENCH_SECONDS", seconds.to_string())
                .env("BENCH_FLOW", flow)
                .env("BENCH_CONFIRM", confirm)
                .env("BENCH_TAG", format!("{tag}-w{w}"));
            c
        })
        .collect();
    let status_url = g.url(0, "mysql");
    let (questions0, conflicts0) = writer_status(&status_url)?;
    let ticks0 = cluster_ticks(pids);
    let finished = run_together(commands, Duration::from_secs_f64(seconds * 6.0 + 120.0))?;
    let ticks1 = cluster_ticks(pids);
    let (questions1, conflicts1) = writer_status(&status_url)?;
    let (mut first, mut last, mut total, mut cpu) = (u128::MAX, 0u128, 0u128, 0u128);
    let (mut p50, mut p99) = (Vec::new(), Vec::new());
    let mut m = Cell::default();
    for f in &finished {
        if !f.status.success() {
            bail!("a {flow} worker ({confirm}) failed: {}", f.stderr);
        }
        let out = f.stdout.as_str();
        first = first.min(numbers(out, "start ")?[0]);
        last = last.max(numbers(out, "end ")?[0]);
        total += numbers(out, "count ")?[0];
        let lat = numbers(out, "lat ")?;
        p50.push(lat[0] as u64);
        p99.push(lat[1] as u64);
        cpu += numbers(out, "cpu ")?.iter().sum::<u128>();
        let errors = line(out, "errors ")?;
        let (n, message) = errors.split_once(' ').unwrap_or((errors, ""));
        let n: u64 = n.trim().parse().context("an error count")?;
        m.errors += n;
        if n > 0 && m.first_error.is_empty() {
            m.first_error = message.trim().to_owned();
        }
        for entry in line(out, "nodes ")?.split_whitespace() {
            let (node, count) = entry.split_once(':').context("node:count")?;
            if node != "1" {
                m.off_writer += count.parse::<u64>().context("a call count")?;
            }
        }
    }
    if total == 0 {
        bail!(
            "no {flow} call ({confirm}) was told a number: {}",
            m.first_error
        );
    }
    p50.sort_unstable();
    p99.sort_unstable();
    let calls = total as f64;
    m.rate = calls / ((last - first) as f64 / 1e9);
    m.p50_us = p50[p50.len() / 2];
    m.p99_us = *p99.last().unwrap_or(&0);
    m.worker_cpu_us = cpu as f64 / calls;
    m.cluster_cpu_us = (ticks1 - ticks0) as f64 * 1e4 / calls;
    // Minus this function's own two status reads.
    m.statements = questions1.saturating_sub(questions0 + 2) as f64 / calls;
    m.conflicts = conflicts1 - conflicts0;
    Ok(m)
}

/// A cluster with the registry's tables and the hot series, database `cf`.
fn cluster() -> Result<Galera> {
    eprintln!("starting a 3-node MariaDB Galera cluster (innodb_flush_log_at_trx_commit=1) …");
    let g = Galera::start("confirm-cost")?;
    g.exec("CREATE DATABASE cf")?;
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(g.url(0, "cf"))).await?;
        s.ensure_registry_schema().await?;
        s.initialize(&ScopeKey::new(SCOPE)?, 1).await?;
        anyhow::Ok(())
    })?;
    Ok(g)
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go(
        "Usage: galera-confirm-cost [--seconds S] [--rounds R] [--workers N] [--flows payment,recorded]

What commit confirmation costs on a routed 3-node MariaDB Galera cluster (the test harness's, flush = 1): N worker processes (default 6), each given the node list so that all write through node 1, run the core's payment flow (record_payment) and recorded allocation (allocate_recorded) on one hot series with confirmation on (the default) and off (ConfirmCommits::Never), S seconds a cell (default 3), R rounds (default 5) interleaved, the modes' order alternating; prints every round, the medians, the ratio confirmed/unconfirmed and the cost against the 10 % budget.",
    );
    let seconds: f64 = arg("--seconds", 3.0);
    let rounds: usize = arg("--rounds", 5).max(1);
    let workers: usize = arg("--workers", 6).max(1);
    let flows_arg: String = arg("--flows", "payment,recorded".to_owned());
    let flows: Vec<&str> = flows_arg.split(',').map(str::trim).collect();
    for f in &flows {
        if !matches!(*f, "payment" | "recorded") {
            bail!("--flows: payment and/or recorded, not {f}");
        }
    }
    let worker = worker_bin();
    if !Path::new(&worker).exists() {
        bail!(
            "{} is missing: cargo build --release -p counterfoil-benches",
            worker.display()
        );
    }
    let g = cluster()?;
    let pids = node_pids(&g);
    println!(
        "\nCommit confirmation on a routed 3-node Galera cluster (loopback, flush=1): {workers} worker processes, node list node1,node2,node3 (all write through node 1), one hot series, {seconds} s a cell, {rounds} rounds, the modes' order alternating\n"
    );
    println!("| round | flow | mode | calls/s | p50 µs | p99 µs | worker CPU µs/call | cluster CPU µs/call | statements/call on node 1 | conflicts | errors |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    // A warm-up, not counted: each flow in each mode for a second (the
    // connections, the buffer pool, the nodes' appliers).
    for flow in &flows {
        for (mode, confirm) in MODES {
            g.wait_caught_up()?;
            let c = cell(
                &g,
                &pids,
                flow,
                confirm,
                &format!("warm-{mode}"),
                workers,
                1.0,
            )?;
            eprintln!("warm-up: {flow} {mode} {:.0}/s", c.rate);
        }
    }
    // samples[flow][mode]
    let mut samples: Vec<Vec<Vec<Cell>>> = vec![vec![Vec::new(); MODES.len()]; flows.len()];
    for round in 0..rounds {
        for (fi, flow) in flows.iter().enumerate() {
            let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for mi in order {
                let (mode, confirm) = MODES[mi];
                // Every node has applied the last cell's write sets.
                g.wait_caught_up()?;
                let tag = format!("r{round}-{mode}");
                let c = cell(&g, &pids, flow, confirm, &tag, workers, seconds)?;
                println!(
                    "| {} | {flow} | {mode} | {:.0} | {} | {} | {:.0} | {:.0} | {:.2} | {} | {}{} |",
                    round + 1,
                    c.rate,
                    c.p50_us,
                    c.p99_us,
                    c.worker_cpu_us,
                    c.cluster_cpu_us,
                    c.statements,
                    c.conflicts,
                    c.errors,
                    if c.errors > 0 {
                        format!(" (first: {})", c.first_error)
                    } else {
                        String::new()
                    }
                );
                if c.off_writer > 0 {
                    eprintln!(
                        "warning: {} {flow} calls ({mode}) ended on a node other than node 1",
                        c.off_writer
                    );
                }
                samples[fi][mi].push(c);
            }
        }
    }
    println!("\nMedians of {rounds} rounds:\n");
    println!("| flow | confirmed calls/s | unconfirmed calls/s | ratio (confirmed / unconfirmed) | the rounds' ratios: median (min–max) | cost | p50 µs confirmed / unconfirmed | CPU µs/call (workers + cluster) confirmed / unconfirmed | statements/call confirmed / unconfirmed | errors |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for (fi, flow) in flows.iter().enumerate() {
        let of =
            |mi: usize, get: fn(&Cell) -> f64| median(samples[fi][mi].iter().map(get).collect());
        let (on, off) = (of(0, |c| c.rate), of(1, |c| c.rate));
        let ratio = on / off;
        // Each round's two cells ran back to back: their ratio cancels a
        // drift of the machine over the run.
        let ratios: Vec<f64> = samples[fi][0]
            .iter()
            .zip(&samples[fi][1])
            .map(|(a, b)| a.rate / b.rate)
            .collect();
        let round_ratio = median(ratios.clone());
        let (low, high) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
        let cost = (1.0 - ratio) * 100.0;
        let round_cost = (1.0 - round_ratio) * 100.0;
        let errors: u64 = samples[fi].iter().flatten().map(|c| c.errors).sum();
        println!(
            "| {flow} | {on:.0} | {off:.0} | {ratio:.3} | {round_ratio:.3} ({low:.3}–{high:.3}) | {cost:.1} % | {:.0} / {:.0} | {:.0} / {:.0} | {:.2} / {:.2} | {errors} |",
            of(0, |c| c.p50_us as f64),
            of(1, |c| c.p50_us as f64),
            of(0, |c| c.worker_cpu_us + c.cluster_cpu_us),
            of(1, |c| c.worker_cpu_us + c.cluster_cpu_us),
            of(0, |c| c.statements),
            of(1, |c| c.statements),
        );
        let judged = match (cost <= BUDGET_PERCENT, round_cost <= BUDGET_PERCENT) {
            (true, true) => "within",
            (false, false) => "OVER",
            _ => "at the edge (the two estimates fall on both sides of it)",
        };
        verdicts.push(format!(
            "verdict: {flow}: confirmation costs {cost:.1} % of the routed throughput (confirmed/unconfirmed {ratio:.3}; by the median of the rounds' ratios {round_cost:.1} %, {round_ratio:.3}); budget {BUDGET_PERCENT:.0} %: {judged}{}",
            if errors > 0 { format!("; {errors} calls failed") } else { String::new() }
        ));
    }
    if flows.contains(&"recorded") {
        verdicts.push(
            "note: the recorded allocation sends the same statements in both modes (it marks its row issued either way; confirmed, it awaits that statement's answer before telling the number): its cost is this run's noise".to_owned(),
        );
    }
    println!();
    for v in verdicts {
        println!("{v}");
    }
    drop(g);
    Ok(())
}
