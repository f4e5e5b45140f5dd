//! How long `counterfoil export --format documents` takes for a year of
//! invoices (issue 40 asks for 100,000 in under 2 minutes): a WordPress
//! site's `wp_counterfoil_documents` filled with N frozen inputs (3 lines,
//! 2 VAT rates, the shape the plugin writes), then the release CLI run
//! against it — UBL only (the baseline of the same run), UBL + CII + PDF
//! into a folder, and the same into a zip. Medians of R runs each.
//!
//! Usage: `cargo build --release -p counterfoil-tools && cargo run --release -p counterfoil-benches --bin export-documents-speed -- [--documents N] [--rounds R]`

use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Result};
use counterfoil_benches::{median, opt};
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn main() -> Result<()> {
    counterfoil_benches::help_or_go(
        "Usage: export-documents-speed [--documents N] [--rounds R]

A year of N invoices (default 100000) exported as e-invoices by the release CLI: UBL only, then UBL + CII + PDF into a folder and into a zip.",
    );
    let args: Vec<String> = std::env::args().collect();
    let n = opt(&args, "--documents", 100_000);
    let rounds = opt(&args, "--rounds", 3);
    let server = MariaDb::start("export-docs")?;
    let wp = WordPress::install(&server, "exportdocs", None)?;
    let t = Instant::now();
    let party = |name: &str, country: &str, vat: &str| {
        format!(
            r#"{{"name":"{name}","street":"Rue Haute 1","city":"Brussels","postcode":"1000","country":"{country}","vat_id":"{vat}","email":"billing@example.invalid","electronic_address":"0123456749","electronic_address_scheme":"0208","iban":"BE68539007547034"}}"#
        )
    };
    let lines = r#"[{"name":"Book","quantity":"3","unit_price":"19.99","vat_rate":"6","vat_category":"S"},{"name":"Pen","quantity":"1","unit_price":"2.35","vat_rate":"21","vat_category":"S"},{"name":"Bag","quantity":"2","unit_price":"10","vat_rate":"21","vat_category":"S"}]"#;
    let head = r#"{"kind":"invoice","number":"2026-"#;
    let rest = format!(
        r#"","issue_date":"2026-06-15","currency":"EUR","buyer_reference":"order","paid":true,"seller":{},"buyer":{},"lines":{lines}}}"#,
        party("Counterfoil Shop BV", "BE", "BE0123456749"),
        party("Acme GmbH", "DE", "DE123456789")
    );
    server.exec(
        wp.database(),
        &format!(
            "INSERT INTO wp_counterfoil_documents (post_id, number, kind, issue_date, input, created_at)
             SELECT seq, CONCAT('2026-', LPAD(seq, 6, '0')), 'invoice', '2026-06-15',
                    CONCAT('{head}', LPAD(seq, 6, '0'), '{rest}'), UTC_TIMESTAMP() FROM seq_1_to_{n}"
        ),
    )?;
    eprintln!(
        "{n} frozen inputs written in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let cli = counterfoil_tests::target_dir().join("release/counterfoil");
    if !cli.exists() {
        bail!(
            "{} is missing: cargo build --release -p counterfoil-tools",
            cli.display()
        );
    }
    let out = counterfoil_tests::target_dir().join("export-documents-speed");
    let runs: [(&str, &str, &str); 3] = [
        ("UBL only, a folder (baseline)", "ubl", ""),
        ("UBL + CII + PDF, a folder", "ubl,cii,pdf", ""),
        ("UBL + CII + PDF, a zip", "ubl,cii,pdf", ".zip"),
    ];
    let mut medians = Vec::new();
    for (what, formats, ending) in runs {
        let mut secs = Vec::new();
        for round in 0..rounds {
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out)?;
            let target = out.join(format!("run-{round}{ending}"));
            let t = Instant::now();
            let done = Command::new(&cli)
                .args([
                    "export",
                    "--format",
                    "documents",
                    "--year",
                    "2026",
                    "--json",
                    "--document-formats",
                    formats,
                    "--output",
                ])
                .arg(&target)
                .env("DATABASE_URL", wp.database_url())
                .output()?;
            let s = t.elapsed().as_secs_f64();
            let report: serde_json::Value =
                serde_json::from_slice(&done.stdout).unwrap_or_default();
            if done.status.code() != Some(0) || report["documents"] != n {
                bail!(
                    "{what}: exit {:?}: {}{}",
                    done.status.code(),
                    String::from_utf8_lossy(&done.stdout),
                    String::from_utf8_lossy(&done.stderr)
                );
            }
            eprintln!("{what}: {s:.1} s");
            secs.push(s);
        }
        medians.push((what, median(secs)));
    }
    let _ = std::fs::remove_dir_all(&out);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!("\n{n} invoices of one year exported by the release CLI on {cores} cores, median of {rounds} runs\n");
    println!("| what | seconds | documents/s | vs UBL only |");
    println!("|---|---|---|---|");
    let base = medians[0].1;
    for (what, s) in &medians {
        println!(
            "| {what} | {s:.1} | {:.0} | {:.2}× |",
            n as f64 / s,
            s / base
        );
    }
    Ok(())
}
