//! Benchmark of `counterfoil audit` over 1,000,000 invoice posts (issue 5):
//! target under 30 s and under 200 MB peak memory. Builds the posts in a real
//! WordPress schema (Debian's package, installed by the harness) with one
//! INSERT … SELECT from MariaDB's sequence engine: 50 authors, titles
//! `2026-NNNN`, one duplicate every 1,000 posts and a gap every 997 numbers.
//! Runs the release `counterfoil audit --json` and reads its peak RSS from
//! wait4(2).
//!
//! Usage: `cargo build --release -p counterfoil-tools -p counterfoil-benches && ./target/release/audit-1m [POSTS]`

use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Result};
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn main() -> Result<()> {
    counterfoil_benches::help_or_go("Usage: audit-1m [POSTS]

Builds POSTS invoice posts (default 1000000) in a private WordPress schema and times `counterfoil audit` over them (time and peak RSS). Needs the release `counterfoil` beside it.");
    let posts: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let server = MariaDb::start_with("audit-1m", &["--innodb-buffer-pool-size=512M"])?;
    let wp = WordPress::install_with(&server, "audit1m", None, false)?;
    let t = Instant::now();
    server.exec(
        wp.database(),
        &format!(
            "INSERT INTO wp_posts (post_author, post_date, post_date_gmt, post_content, post_title, post_excerpt, \
             post_status, comment_status, ping_status, post_name, to_ping, pinged, post_modified, post_modified_gmt, \
             post_content_filtered, post_type, guid) \
             SELECT 1 + seq % 50, '2026-03-01 10:00:00', '2026-03-01 10:00:00', '', \
             CONCAT('2026-', LPAD(IF(seq % 1000 = 0, seq DIV 50, seq DIV 50 + 1 + (seq DIV 50) DIV 997), 4, '0')), '', \
             'publish', 'closed', 'closed', '', '', '', NOW(), NOW(), '', 'invoice', '' FROM seq_1_to_{posts}"
        ),
    )?;
    eprintln!("built {posts} posts in {:.1} s", t.elapsed().as_secs_f64());
    let bin = std::env::current_exe()?.with_file_name("counterfoil");
    let mut audit = Command::new(&bin);
    audit
        .args(["--json", "audit"])
        .env("DATABASE_URL", wp.database_url());
    let (exit, elapsed, peak_mb, out) = counterfoil_benches::run_measured(audit)?;
    let summary = out
        .lines()
        .find(|l| l.contains("\"summary\""))
        .unwrap_or("");
    println!("audit of {posts} invoice posts: {elapsed:.1} s, peak RSS {peak_mb:.0} MB (targets: < 30 s, < 200 MB)");
    println!("summary: {summary}");
    println!(
        "verdict: time {}, memory {}",
        if elapsed < 30.0 { "met" } else { "NOT met" },
        if peak_mb < 200.0 { "met" } else { "NOT met" }
    );
    // The audit must have found what was planted: exit 1 (findings), one
    // duplicate per 1,000 posts, and gaps.
    if exit != Some(1) {
        bail!("the audit exited with {exit:?}, not 1 (findings)");
    }
    let v: serde_json::Value = serde_json::from_str(summary)?;
    if v["duplicates"].as_u64() != Some(posts / 1000) || v["gaps"].as_u64().unwrap_or(0) == 0 {
        bail!(
            "the audit missed what was planted: {summary} (expected {} duplicates and some gaps)",
            posts / 1000
        );
    }
    println!(
        "planted findings reported: {} duplicates, {} gaps",
        posts / 1000,
        v["gaps"]
    );
    Ok(())
}
