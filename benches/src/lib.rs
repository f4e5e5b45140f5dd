//! Shared by the side-by-side benchmark binaries (the criterion benchmarks
//! live in `benches/`): timed worker processes released at one start line.
//!
//! A worker prints `start <ns>`, `end <ns>` (wall clock), `count <calls>` and
//! `lat <p50_us> <p99_us>`; see `benches/php/common.php` and
//! `src/bin/raw_alloc_worker.rs`.

use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use counterfoil_core::{ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::workers::run_together;
use counterfoil_tests::MariaDb;

/// `-h`/`--help`: prints `usage` and exits 0, before anything is started
/// (a benchmark starts servers and runs for minutes).
pub fn help_or_go(usage: &str) {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{}", usage.trim());
        std::process::exit(0);
    }
}

/// The value after `name` on the command line, parsed; `default` when it is
/// missing or does not parse.
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `cmd` to its end (its stdout captured) and measures it: exit code,
/// wall seconds and peak RSS in MB (wait4's rusage of that child alone).
pub fn run_measured(mut cmd: std::process::Command) -> Result<(Option<i32>, f64, f64, String)> {
    let started = std::time::Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .context("spawn the measured command")?;
    let pid = child.id() as i32;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    #[allow(unsafe_code)]
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child's pid with valid pointers.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = started.elapsed().as_secs_f64();
    if rc != pid {
        bail!("wait4 failed");
    }
    let out = reader.join().expect("reader")?;
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, elapsed, usage.ru_maxrss as f64 / 1024.0, out))
}

/// What one cell of a benchmark measured.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Calls per second over the wall time from the first start to the last end.
    pub per_second: f64,
    /// Median of the workers' p50 latencies.
    pub p50_us: u64,
    /// Worst of the workers' p99 latencies.
    pub p99_us: u64,
    /// CPU (user + system) per call in µs, from the workers' own rusage
    /// over their timed loops; 0 when a worker does not report it.
    pub cpu_us_per_call: f64,
}

/// This process's user and system CPU so far, in µs (getrusage).
pub fn cpu_us() -> (u64, u64) {
    // SAFETY: getrusage fills the struct we own.
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(usage.ru_utime), us(usage.ru_stime))
}

fn field(out: &str, key: &str) -> Result<Vec<u128>> {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .with_context(|| format!("no `{key}` in {out}"))?;
    line.split_whitespace()
        .map(|v| v.parse().context("number"))
        .collect()
}

/// Runs the timed workers together for about `seconds` and sums them up.
pub fn timed_workers(what: &str, commands: Vec<Command>, seconds: f64) -> Result<Measured> {
    let finished = run_together(commands, Duration::from_secs_f64(seconds * 6.0 + 120.0))?;
    let (mut first, mut last, mut total) = (u128::MAX, 0u128, 0u128);
    let (mut p50, mut p99) = (Vec::new(), Vec::new());
    let mut cpu = 0u128;
    for f in &finished {
        if !f.status.success() {
            bail!("{what} failed: {}", f.stderr);
        }
        first = first.min(field(&f.stdout, "start ")?[0]);
        last = last.max(field(&f.stdout, "end ")?[0]);
        total += field(&f.stdout, "count ")?[0];
        let lat = field(&f.stdout, "lat ")?;
        p50.push(lat[0] as u64);
        p99.push(lat[1] as u64);
        if let Ok(c) = field(&f.stdout, "cpu ") {
            cpu += c.iter().sum::<u128>();
        }
    }
    p50.sort_unstable();
    p99.sort_unstable();
    Ok(Measured {
        per_second: total as f64 / ((last - first) as f64 / 1e9),
        p50_us: p50[p50.len() / 2],
        p99_us: *p99.last().unwrap_or(&0),
        cpu_us_per_call: cpu as f64 / total.max(1) as f64,
    })
}

/// The number after `name` on the command line, or `default`.
pub fn arg_number(args: &[String], name: &str, default: f64) -> f64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The comma-separated counts after `name` (`--procs 1,8,64`), or `default`.
pub fn arg_counts(args: &[String], name: &str, default: &[usize]) -> Vec<usize> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|p| p.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

/// The value of option `name` on the command line, or `default`.
pub fn opt(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

/// A private MariaDB (durable: innodb_flush_log_at_trx_commit = 1) with the
/// counter table and the series `1:2019` from 1, and the database's URL:
/// over TCP, or with `socket` over the server's unix socket.
pub fn series_server(name: &str, max_connections: u32, socket: bool) -> Result<(MariaDb, String)> {
    eprintln!("starting a private MariaDB (innodb_flush_log_at_trx_commit=1) …");
    let server = MariaDb::start_with(name, &[&format!("--max-connections={max_connections}")])?;
    let tcp_url = server.fresh_database("bench")?;
    let url = if socket {
        server.socket_url(&MariaDb::database_name(&tcp_url))
    } else {
        tcp_url
    };
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await?;
        s.ensure_schema().await?;
        s.initialize(&ScopeKey::new("1:2019")?, 1).await?;
        anyhow::Ok(())
    })?;
    Ok((server, url))
}

/// A private MariaDB for a side-by-side benchmark (flush = 1, binary log
/// off, with the server options `extra`) and a fresh database on it with the
/// registry schema and each of `series` created at 1: the server (stopped
/// when dropped) and the database's URL.
pub fn bench_server(name: &str, extra: &[&str], series: &[String]) -> Result<(MariaDb, String)> {
    eprintln!("starting a private MariaDB (innodb_flush_log_at_trx_commit=1, binlog off) …");
    let server = MariaDb::start_with(name, extra)?;
    let url = server.fresh_database(&name.replace('-', "_"))?;
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await?;
        s.ensure_registry_schema().await?;
        for scope in series {
            s.initialize(&ScopeKey::new(scope.as_str())?, 1).await?;
        }
        anyhow::Ok(())
    })?;
    Ok((server, url))
}

/// The runtime the benchmarks' clients run on: two worker threads, as the
/// machine's two cores.
pub fn client_runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}
