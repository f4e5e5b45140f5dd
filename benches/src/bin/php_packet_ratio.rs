//! docs/design.md §9's own measurement, in one run (issue 30's goals came
//! from it): PHP CLI processes through mysqli on one hot series of one
//! private MariaDB (flush = 1, binary log off, TCP), each cell at 8 and 32
//! processes, rounds interleaved:
//!
//! - `allocation`: one prepared `UPDATE … LAST_INSERT_ID(current_value +
//!   1)`, the number from its OK packet (benches/php/mysqli_prepared.php);
//! - `statements`: the payment transaction (payment row, allocation,
//!   registry row, the payment row's number, COMMIT) as separate prepared
//!   statements (benches/php/payment_transaction.php);
//! - `packet`: the same transaction as one `multi_query` packet, as §9
//!   states it.
//!
//! §9 reports the packet at 7.4–7.9k/s, the statements at 3.9–5.1k/s and a
//! plain allocation (bench-table) at 11.9–13.4k/s: the packet at about
//! 0.6× an allocation. This prints each contender's median rate, its CPU
//! per call (the PHP process's own) and the packet's ratios against the
//! other two, measured side by side.
//!
//! Usage: `cargo build --release -p counterfoil-benches &&
//! ./target/release/php-packet-ratio [--seconds S] [--rounds R] [--procs 8,32]`

use std::process::Command;

use anyhow::Result;
use counterfoil_benches::{arg_counts, arg_number, median, timed_workers, Measured};
use counterfoil_tests::php::repo_root;

const CONTENDERS: [(&str, &str, Option<&str>); 3] = [
    ("allocation", "mysqli_prepared.php", None),
    ("statements", "payment_transaction.php", Some("statements")),
    ("packet", "payment_transaction.php", Some("packet")),
];

fn cell(url: &str, which: usize, procs: usize, seconds: f64) -> Result<Measured> {
    let (name, script, shape) = CONTENDERS[which];
    let commands = (0..procs)
        .map(|_| {
            let mut c = Command::new("php");
            c.arg(repo_root().join("benches/php").join(script))
                .env("BENCH_URL", url)
                .env("BENCH_SECONDS", seconds.to_string());
            if let Some(shape) = shape {
                c.env("BENCH_SHAPE", shape);
            }
            c
        })
        .collect();
    timed_workers(name, commands, seconds)
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go(
        "Usage: php-packet-ratio [--seconds S] [--rounds R] [--procs 8,32]

docs/design.md §9's measurement in one run: PHP processes through mysqli on one hot series, a prepared allocation beside the payment transaction as separate prepared statements and as one multi_query packet; median rates, CPU per call and the packet's ratios.",
    );
    let args: Vec<String> = std::env::args().collect();
    let seconds = arg_number(&args, "--seconds", 3.0);
    let rounds = (arg_number(&args, "--rounds", 3.0) as usize).max(1);
    let procs_list = arg_counts(&args, "--procs", &[8, 32]);
    let extra = std::env::var("BENCH_SERVER_OPTIONS").unwrap_or_default();
    let mut options = vec!["--max-connections=300", "--innodb-buffer-pool-size=256M"];
    options.extend(extra.split_whitespace());
    let (server, url) =
        counterfoil_benches::bench_server("php-packet", &options, &["1:2019".to_owned()])?;
    println!(
        "\ndocs/design.md §9's measurement: one private MariaDB (flush=1, binlog off), TCP, PHP CLI processes, {seconds} s per cell, median of {rounds} interleaved rounds\n"
    );
    println!("| processes | contender | per second | p50 µs | p99 µs | PHP CPU µs/call |");
    println!("|---|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for &procs in &procs_list {
        let mut samples: Vec<Vec<Measured>> = vec![Vec::new(); CONTENDERS.len()];
        for round in 0..rounds {
            for (i, s) in samples.iter_mut().enumerate() {
                let m = cell(&url, i, procs, seconds)?;
                eprintln!(
                    "round {}/{rounds}, {procs} processes: {:<11} {:>7.0}/s",
                    round + 1,
                    CONTENDERS[i].0,
                    m.per_second
                );
                s.push(m);
            }
        }
        let rate: Vec<f64> = samples
            .iter()
            .map(|s| median(s.iter().map(|m| m.per_second).collect()))
            .collect();
        for (i, s) in samples.iter().enumerate() {
            println!(
                "| {procs} | {} | {:.0} | {:.0} | {:.0} | {:.1} |",
                CONTENDERS[i].0,
                rate[i],
                median(s.iter().map(|m| m.p50_us as f64).collect()),
                median(s.iter().map(|m| m.p99_us as f64).collect()),
                median(s.iter().map(|m| m.cpu_us_per_call).collect()),
            );
        }
        verdicts.push(format!(
            "{procs} processes: packet {:.2}× the statements, {:.2}× an allocation",
            rate[2] / rate[1],
            rate[2] / rate[0]
        ));
    }
    println!();
    for v in verdicts {
        println!("{v}");
    }
    drop(server);
    Ok(())
}
