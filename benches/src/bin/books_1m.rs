//! Benchmark of the books at scale (issue 14): 100,000 series and 1,000,000
//! registry rows (10,000 of them with an invoice post), built by SQL on a
//! private MariaDB with the harness's default buffer pool, WordPress served
//! by php-fpm + nginx. Times each screen as an administrator (median of 7
//! requests after one warm-up, loopback HTTP wall time) beside WordPress's
//! own dashboard in the same run and prints the ratios; then runs the release
//! `counterfoil export` of all rows and reads its time and peak RSS (wait4).
//!
//! Targets: every screen under 300 ms and within 3× the dashboard; the
//! export under 10 s and 100 MB.
//!
//! Usage: `cargo build --release -p counterfoil-tools -p counterfoil-benches && ./target/release/books-1m [SERIES] [PER_SERIES]`

use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Result};
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::wp_session::Session;
use counterfoil_tests::MariaDb;

fn median_ms(session: &Session, path: &str) -> Result<f64> {
    let r = session.get(path)?;
    if r.status != 200 {
        bail!("{path}: HTTP {}", r.status);
    }
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let r = session.get(path)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        if r.status != 200 {
            bail!("{path}: HTTP {}", r.status);
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(times[3])
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: books-1m [SERIES] [PER_SERIES]

Builds SERIES series (default 100000) with PER_SERIES numbers each (default 10) on a private MariaDB and WordPress, times every books screen beside the dashboard, then `counterfoil export` of all rows.");
    let series: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let per: u64 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let rows = series * per;
    let server = MariaDb::start("books-1m")?;
    let wp = WordPress::install(&server, "books1m", None)?;
    let db = wp.database().to_owned();
    let t = Instant::now();
    // Series u:2026 for users 1..series, each with `per` numbers handed out.
    server.exec(
        &db,
        &format!(
            "INSERT INTO wp_invoice_sequences (scope_key, current_value, start_value) \
             SELECT CONCAT(seq, ':2026'), {per}, 1 FROM seq_1_to_{series}"
        ),
    )?;
    // The registry: number k of series s; every 50th void, every 1000th reserved.
    server.exec(
        &db,
        &format!(
            "INSERT INTO wp_counterfoil_numbers (scope_key, number, status, reason, source, gateway, transaction_id, created_at, updated_at) \
             SELECT CONCAT(1 + (seq - 1) DIV {per}, ':2026'), 1 + (seq - 1) MOD {per}, \
             CASE WHEN seq MOD 1000 = 0 THEN 'reserved' WHEN seq MOD 50 = 0 THEN 'void' ELSE 'issued' END, \
             IF(seq MOD 50 = 0 AND seq MOD 1000 <> 0, 'cancelled order', NULL), 'payment', 'stripe', CONCAT('ch_', seq), \
             '2026-06-01 10:00:00' + INTERVAL seq SECOND, '2026-06-01 10:00:00' + INTERVAL seq SECOND FROM seq_1_to_{rows}"
        ),
    )?;
    server.exec(
        &db,
        &format!(
            "INSERT INTO wp_counterfoil_payments (gateway, transaction_id, scope_key, number, amount, currency, created_at) \
             SELECT 'stripe', CONCAT('ch_', seq), CONCAT(1 + (seq - 1) DIV {per}, ':2026'), 1 + (seq - 1) MOD {per}, '19.99', 'EUR', NOW() FROM seq_1_to_{rows}"
        ),
    )?;
    // Invoice posts for the first 10,000 numbers, linked from the registry.
    let posts = rows.min(10_000);
    server.exec(
        &db,
        &format!(
            "INSERT INTO wp_posts (ID, post_author, post_date, post_date_gmt, post_content, post_title, post_excerpt, post_status, comment_status, ping_status, post_name, to_ping, pinged, post_modified, post_modified_gmt, post_content_filtered, post_type, guid) \
             SELECT 100000 + seq, 1, NOW(), NOW(), '', CONCAT('2026-', LPAD(1 + (seq - 1) MOD {per}, 4, '0')), '', 'publish', 'closed', 'closed', CONCAT('cf-', seq), '', '', NOW(), NOW(), '', 'counterfoil_invoice', '' FROM seq_1_to_{posts};
             INSERT INTO wp_postmeta (post_id, meta_key, meta_value) SELECT 100000 + seq, '_counterfoil_scope_key', CONCAT(1 + (seq - 1) DIV {per}, ':2026') FROM seq_1_to_{posts};
             UPDATE wp_counterfoil_numbers SET post_id = 100000 + id WHERE id <= {posts};
             ANALYZE TABLE wp_counterfoil_numbers, wp_invoice_sequences, wp_posts"
        ),
    )?;
    eprintln!(
        "built {series} series and {rows} registry rows in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let site = wp.serve(false, 2)?;
    let admin = Session::login(site.port(), "admin", "admin-password")?;
    let last_series_page = series.div_ceil(20);
    let last_registry_page = rows.div_ceil(50);
    let screens = [
        ("WordPress dashboard", "/wp-admin/index.php".to_owned()),
        ("series, page 1", "/wp-admin/options-general.php?page=counterfoil".to_owned()),
        ("series, middle page", format!("/wp-admin/options-general.php?page=counterfoil&paged={}", last_series_page / 2)),
        ("series, search", "/wp-admin/options-general.php?page=counterfoil&s=4242".to_owned()),
        ("series, sorted by next", "/wp-admin/options-general.php?page=counterfoil&orderby=current_value&order=desc".to_owned()),
        ("registry, page 1", "/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-registry".to_owned()),
        ("registry, middle page", format!("/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-registry&paged={}", last_registry_page / 2)),
        ("registry, one series + gaps", "/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-registry&scope=4242:2026&gaps=1".to_owned()),
        ("registry, status void", "/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-registry&status=void".to_owned()),
        ("registry, year 2026", "/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-registry&year=2026".to_owned()),
        ("invoice list", "/wp-admin/edit.php?post_type=counterfoil_invoice".to_owned()),
        ("invoice list, one series", "/wp-admin/edit.php?post_type=counterfoil_invoice&scope=42:2026".to_owned()),
    ];
    let mut results = Vec::new();
    for (name, path) in &screens {
        results.push((name, median_ms(&admin, path)?));
    }
    let dashboard = results[0].1;
    println!("\n| screen ({series} series, {rows} registry rows) | median ms | × dashboard |");
    println!("|---|---|---|");
    for (name, ms) in &results {
        println!("| {name} | {ms:.0} | {:.2} |", ms / dashboard);
    }
    // The export of every row by the CLI: time and peak RSS.
    let bin = std::env::current_exe()?.with_file_name("counterfoil");
    let mut export = Command::new(&bin);
    export
        .args([
            "--json",
            "export",
            "--format",
            "csv",
            "--output",
            "/dev/null",
        ])
        .env("DATABASE_URL", wp.database_url());
    let (code, elapsed, peak_mb, _) = counterfoil_benches::run_measured(export)?;
    if code != Some(0) {
        bail!("counterfoil export failed ({code:?})");
    }
    println!("\ncounterfoil export of {rows} rows (CSV): {elapsed:.1} s, peak RSS {peak_mb:.0} MB");
    Ok(())
}
