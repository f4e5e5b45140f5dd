//! Side-by-side benchmark of one number per web request (issue 18), the way
//! PHP runs: HTTP clients → nginx → php-fpm (as many workers as clients) →
//! one private MariaDB (durable: innodb_flush_log_at_trx_commit = 1). Each
//! request runs one script of `benches/php/request/`:
//!
//! - `extension`: `Counterfoil\configure()` then `allocate_invoice_number()`;
//!   the worker keeps the extension's connection and statement between
//!   requests;
//! - `prepared`: mysqli connects, prepares the `UPDATE … LAST_INSERT_ID`,
//!   executes, reads `insert_id` (what a careful developer writes);
//! - `persistent`: the same on mysqli's persistent connection (`p:` host);
//! - `article`: the article's two statements on a fresh connection.
//!
//! At 1, 8 and 64 clients (`--clients`), each cell run `--rounds` times
//! interleaved; prints the median requests/s, p50/p99 latency, the php-fpm
//! workers' CPU per request (user + system from `/proc`), the ratios, and a
//! check that every number handed out over the whole run is distinct.
//!
//! Usage: `cargo run --release -p counterfoil-benches --bin fpm-side-by-side -- [--seconds S] [--rounds R] [--clients 1,8,64] [--socket]`
//! (needs `cargo build --release -p counterfoil-php` first).

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use counterfoil_benches::{arg_counts, arg_number, median, series_server};
use counterfoil_tests::php::{http, repo_root, FpmSite};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Contender {
    Extension,
    Prepared,
    Persistent,
    Article,
}

const CONTENDERS: [Contender; 4] = [
    Contender::Extension,
    Contender::Prepared,
    Contender::Persistent,
    Contender::Article,
];

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Extension => "extension allocate_invoice_number()",
            Contender::Prepared => "mysqli connect + prepared UPDATE + insert_id",
            Contender::Persistent => "mysqli persistent (p:) + prepared UPDATE + insert_id",
            Contender::Article => "article PHP (mysqli connect, UPDATE + SELECT LAST_INSERT_ID())",
        }
    }

    fn column(self) -> &'static str {
        match self {
            Contender::Extension => "extension",
            Contender::Prepared => "prepared",
            Contender::Persistent => "persistent",
            Contender::Article => "article",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Contender::Extension => "/extension.php",
            Contender::Prepared => "/prepared.php",
            Contender::Persistent => "/prepared.php?persistent=1",
            Contender::Article => "/article.php",
        }
    }
}

/// One cell: requests/s, latency, workers' CPU per request.
struct Cell {
    per_second: f64,
    p50_us: u64,
    p99_us: u64,
    cpu_us: f64,
}

/// User + system CPU of `pids` so far, in µs (`/proc/PID/stat`).
fn cpu_of(pids: &[u32]) -> Result<f64> {
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut total = 0.0;
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .with_context(|| format!("read /proc/{pid}/stat"))?;
        // The fields after the command name (which is in parentheses).
        let rest = stat.rsplit_once(')').context("stat format")?.1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the whole line.
        let utime: f64 = fields[11].parse()?;
        let stime: f64 = fields[12].parse()?;
        total += (utime + stime) / ticks * 1e6;
    }
    Ok(total)
}

/// `clients` threads request `who` for `seconds`; every number is recorded.
fn run_cell(
    site: &FpmSite,
    who: Contender,
    clients: usize,
    seconds: f64,
    numbers: &Mutex<Vec<u64>>,
) -> Result<Cell> {
    let port = site.port();
    let workers = site.worker_pids();
    let cpu_before = cpu_of(&workers)?;
    let latencies: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let failed: Mutex<Option<String>> = Mutex::new(None);
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    std::thread::scope(|s| {
        for _ in 0..clients {
            s.spawn(|| {
                let mut mine = Vec::new();
                let mut got = Vec::new();
                while Instant::now() < until {
                    let t = Instant::now();
                    match http(port, "GET", who.path(), &[], b"") {
                        Ok(r) if r.status == 200 => {
                            mine.push(t.elapsed().as_micros() as u64);
                            match r
                                .body
                                .trim()
                                .strip_prefix("2019-")
                                .and_then(|n| n.parse::<u64>().ok())
                            {
                                Some(n) => got.push(n),
                                None => {
                                    *failed.lock().unwrap() =
                                        Some(format!("not a number: {:?}", r.body));
                                    return;
                                }
                            }
                        }
                        Ok(r) => {
                            *failed.lock().unwrap() = Some(format!("{} {}", r.status, r.body));
                            return;
                        }
                        Err(e) => {
                            *failed.lock().unwrap() = Some(e.to_string());
                            return;
                        }
                    }
                }
                latencies.lock().unwrap().extend(mine);
                numbers.lock().unwrap().extend(got);
            });
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(f) = failed.into_inner().unwrap() {
        bail!("{}: a request failed: {f}\n{}", who.name(), site.logs());
    }
    let cpu = cpu_of(&workers)? - cpu_before;
    let mut lat = latencies.into_inner().unwrap();
    if lat.is_empty() {
        bail!("{}: no request finished", who.name());
    }
    lat.sort_unstable();
    Ok(Cell {
        per_second: lat.len() as f64 / elapsed,
        p50_us: lat[lat.len() / 2],
        p99_us: lat[lat.len() * 99 / 100],
        cpu_us: cpu / lat.len() as f64,
    })
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: fpm-side-by-side [--seconds S] [--rounds R] [--clients 1,8,64] [--socket]

One number per web request (nginx, php-fpm with as many workers as clients, one private MariaDB): the extension beside mysqli prepared (a connection per request), mysqli's persistent connection and the article's code; requests/s, latency, the workers' CPU per request, and a check that no number was handed out twice. Over TCP on 127.0.0.1 by default; with --socket PHP connects through the server's unix socket.");
    let args: Vec<String> = std::env::args().collect();
    let seconds = arg_number(&args, "--seconds", 3.0);
    let rounds = arg_number(&args, "--rounds", 3.0) as usize;
    let clients_list = arg_counts(&args, "--clients", &[1, 8, 64]);
    let socket = args.iter().any(|a| a == "--socket");
    let (server, url) = series_server("bench-fpm", 400, socket)?;
    let docroot = repo_root().join("benches/php/request");
    let numbers: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let mut table: Vec<(usize, Contender, Cell)> = Vec::new();
    for &clients in &clients_list {
        let site = FpmSite::start_with_env(
            "bench-fpm",
            &docroot,
            clients as u32,
            true,
            &[],
            &[("BENCH_URL", url.clone())],
        )?;
        // Every worker warm (opcache, the extension's connection).
        for who in CONTENDERS {
            run_cell(&site, who, clients, 0.5, &numbers)?;
        }
        let mut samples: Vec<Vec<Cell>> = CONTENDERS.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for (i, who) in CONTENDERS.iter().enumerate() {
                let cell = run_cell(&site, *who, clients, seconds, &numbers)?;
                eprintln!(
                    "round {}/{rounds}, {clients} client(s): {:<62} {:>7.0}/s",
                    round + 1,
                    who.name(),
                    cell.per_second
                );
                samples[i].push(cell);
            }
        }
        for (i, who) in CONTENDERS.iter().enumerate() {
            let cells = &samples[i];
            table.push((
                clients,
                *who,
                Cell {
                    per_second: median(cells.iter().map(|c| c.per_second).collect()),
                    p50_us: median(cells.iter().map(|c| c.p50_us as f64).collect()) as u64,
                    p99_us: median(cells.iter().map(|c| c.p99_us as f64).collect()) as u64,
                    cpu_us: median(cells.iter().map(|c| c.cpu_us).collect()),
                },
            ));
        }
    }
    let numbers = numbers.into_inner().unwrap();
    let distinct: HashSet<u64> = numbers.iter().copied().collect();
    println!(
        "\nOne number per web request: nginx, php-fpm (workers = clients), one private MariaDB (flush=1), {}, {seconds} s per cell, median of {rounds} rounds\n",
        if socket { "unix socket" } else { "TCP on 127.0.0.1" },
    );
    let baselines = [
        Contender::Prepared,
        Contender::Persistent,
        Contender::Article,
    ];
    let columns: Vec<String> = baselines
        .iter()
        .map(|b| format!("vs {}", b.column()))
        .collect();
    println!(
        "| clients | contender | requests/s | p50 µs | p99 µs | php-fpm CPU µs/request | {} |",
        columns.join(" | ")
    );
    println!("|---|---|---|---|---|---|{}", "---|".repeat(columns.len()));
    let rate = |clients: usize, who: Contender| {
        table
            .iter()
            .find(|r| r.0 == clients && r.1 == who)
            .map(|r| &r.2)
            .expect("measured")
    };
    for (clients, who, cell) in &table {
        let ratios: Vec<String> = baselines
            .iter()
            .map(|b| format!("{:.2}×", cell.per_second / rate(*clients, *b).per_second))
            .collect();
        println!(
            "| {clients} | {} | {:.0} | {} | {} | {:.0} | {} |",
            who.name(),
            cell.per_second,
            cell.p50_us,
            cell.p99_us,
            cell.cpu_us,
            ratios.join(" | ")
        );
    }
    for &clients in &clients_list {
        let ext = rate(clients, Contender::Extension);
        let prepared = rate(clients, Contender::Prepared);
        let persistent = rate(clients, Contender::Persistent);
        let x = ext.per_second / prepared.per_second;
        let y = ext.per_second / persistent.per_second;
        println!(
            "{clients} client(s): extension {x:.2}× mysqli prepared and {y:.2}× its persistent connection (≥ 1.1×: {}); workers' CPU per request {:.0} µs vs {:.0} and {:.0} µs ({}).",
            if x >= 1.1 && y >= 1.1 { "met" } else { "NOT met" },
            ext.cpu_us,
            prepared.cpu_us,
            persistent.cpu_us,
            if ext.cpu_us <= prepared.cpu_us.min(persistent.cpu_us) {
                "no higher: met"
            } else {
                "higher: NOT met"
            },
        );
    }
    println!(
        "numbers handed out: {}, distinct: {} ({})",
        numbers.len(),
        distinct.len(),
        if distinct.len() == numbers.len() {
            "no duplicates"
        } else {
            "DUPLICATES"
        }
    );
    if distinct.len() != numbers.len() {
        bail!("a number was handed out twice");
    }
    drop(server);
    Ok(())
}
