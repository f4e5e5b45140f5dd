//! `counterfoil audit`: reads the invoice posts and reports, per series,
//! count, lowest, highest, duplicates, gaps and malformed titles, plus the
//! hazards of the server and schema. Read-only. Exit 0 clean, 1 findings.

use std::time::{Duration, Instant};

use anyhow::Result;
use counterfoil_core::audit::{AuditReport, Auditor, ScopeRule};
use counterfoil_core::{NumberFormat, TablePrefix};
use serde_json::json;

use crate::cli::{Global, SiteArgs};
use crate::db::{self, Db, Hazard, PostStream, Tables};
use crate::Outcome;

/// The audit and the hazards, as adopt and audit both need them.
pub struct Audited {
    pub report: AuditReport,
    pub hazards: Vec<Hazard>,
}

/// Reads every invoice post and audits it (progress on stderr).
pub async fn run_audit(
    db: &mut Db,
    tables: &Tables,
    site: &SiteArgs,
    quiet: bool,
) -> Result<Audited> {
    let format = NumberFormat::parse(&site.format)?;
    let rule: ScopeRule = site.scope_rule.parse()?;
    db::require_wordpress(db, tables).await?;
    let total = db::count_posts(db, tables, &site.post_type).await?;
    let mut auditor = Auditor::new(format, rule);
    let mut stream = PostStream::new(tables, &site.post_type, 20_000);
    let started = Instant::now();
    let mut last = Instant::now();
    let mut seen = 0u64;
    while let Some(chunk) = stream.next(db).await? {
        seen += chunk.len() as u64;
        for post in &chunk {
            auditor.add(post);
        }
        if !quiet && last.elapsed() > Duration::from_secs(1) {
            let rate = seen as f64 / started.elapsed().as_secs_f64();
            let eta = (total.saturating_sub(seen)) as f64 / rate.max(1.0);
            eprintln!("audit: {seen}/{total} posts ({rate:.0}/s, about {eta:.0} s left)");
            last = Instant::now();
        }
    }
    let report = auditor.finish();
    let mut hazards = db::server_hazards(db).await?;
    if !db.table_exists(&tables.numbers).await? {
        hazards.push(Hazard {
            code: "no_registry",
            message: format!(
                "no registry table `{}`: nothing stops a number being issued twice; `counterfoil adopt` creates it with its unique index",
                tables.numbers
            ),
        });
    } else if !db.has_unique_scope_number(&tables.numbers).await? {
        hazards.push(Hazard {
            code: "missing_unique_index",
            message: format!(
                "`{}` has no UNIQUE index on (scope_key, number)",
                tables.numbers
            ),
        });
    }
    if db.table_exists(&tables.sequences).await? {
        let sql = format!(
            "SELECT current_value FROM `{}` WHERE scope_key = ?",
            tables.sequences
        );
        for s in &report.series {
            let current: Vec<u64> = db.rows(&sql, (s.scope.as_str(),)).await?;
            if let Some(c) = current.first() {
                if *c < s.highest {
                    hazards.push(Hazard {
                        code: "sequence_below_titles",
                        message: format!(
                            "series {}: the sequences table is at {c} but titles go up to {}: its next numbers already exist",
                            s.scope, s.highest
                        ),
                    });
                }
            }
        }
    }
    Ok(Audited { report, hazards })
}

pub async fn run(global: &Global, site: &SiteArgs) -> Result<Outcome> {
    let url = crate::database_url(global)?;
    let prefix = TablePrefix::new(&global.table_prefix)?;
    let tables = Tables::new(&prefix);
    let mut db = Db::connect(
        &url,
        Duration::from_millis(global.timeout_ms.max(1000) * 20),
    )
    .await?;
    let Audited { report, hazards } = run_audit(&mut db, &tables, site, global.json).await?;
    print_report(global.json, &report, &hazards);
    let clean = report.duplicate_count() == 0
        && report.gap_count() == 0
        && report.malformed_count == 0
        && hazards.is_empty();
    Ok(if clean {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

fn print_report(json_out: bool, report: &AuditReport, hazards: &[Hazard]) {
    if json_out {
        for s in &report.series {
            println!(
                "{}",
                json!({"type": "series", "scope": s.scope, "count": s.count, "lowest": s.lowest,
                       "highest": s.highest, "duplicates": s.duplicates.len(), "gaps": s.gaps.len(),
                       "missing": s.missing()})
            );
            for d in &s.duplicates {
                let posts: Vec<_> = d
                    .holders
                    .iter()
                    .map(|h| json!({"id": h.post_id, "date": h.date_text()}))
                    .collect();
                println!(
                    "{}",
                    json!({"type": "duplicate", "scope": s.scope, "number": d.seq, "posts": posts})
                );
            }
            for (a, b) in &s.gaps {
                println!(
                    "{}",
                    json!({"type": "gap", "scope": s.scope, "first": a, "last": b})
                );
            }
        }
        for m in &report.malformed {
            println!(
                "{}",
                json!({"type": "malformed", "post_id": m.post_id, "title": m.title})
            );
        }
        for h in hazards {
            println!(
                "{}",
                json!({"type": "hazard", "code": h.code, "message": h.message})
            );
        }
        println!(
            "{}",
            json!({"type": "summary", "posts": report.posts, "series": report.series.len(),
                   "duplicates": report.duplicate_count(), "gaps": report.gap_count(),
                   "malformed": report.malformed_count, "hazards": hazards.len()})
        );
        return;
    }
    println!(
        "posts read: {}, series: {}, malformed titles: {}",
        report.posts,
        report.series.len(),
        report.malformed_count
    );
    println!(
        "\n{:<24} {:>9} {:>9} {:>9} {:>11} {:>6} {:>8}",
        "SERIES", "COUNT", "LOWEST", "HIGHEST", "DUPLICATES", "GAPS", "MISSING"
    );
    for s in &report.series {
        println!(
            "{:<24} {:>9} {:>9} {:>9} {:>11} {:>6} {:>8}",
            s.scope,
            s.count,
            s.lowest,
            s.highest,
            s.duplicates.len(),
            s.gaps.len(),
            s.missing()
        );
    }
    let dups: Vec<_> = report
        .series
        .iter()
        .flat_map(|s| s.duplicates.iter().map(move |d| (s, d)))
        .collect();
    if !dups.is_empty() {
        println!("\nduplicates (number: posts, the first is kept as the owner):");
        for (s, d) in dups.iter().take(200) {
            let posts: Vec<String> = d
                .holders
                .iter()
                .map(|h| format!("#{} ({})", h.post_id, h.date_text()))
                .collect();
            println!("  {} {}: {}", s.scope, d.seq, posts.join(", "));
        }
        if dups.len() > 200 {
            println!("  … {} more (use --json for all)", dups.len() - 200);
        }
    }
    let gaps: Vec<_> = report
        .series
        .iter()
        .flat_map(|s| s.gaps.iter().map(move |g| (s, g)))
        .collect();
    if !gaps.is_empty() {
        println!("\ngaps (numbers no post holds):");
        for (s, (a, b)) in gaps.iter().take(200) {
            if a == b {
                println!("  {} {a}", s.scope);
            } else {
                println!("  {} {a}–{b}", s.scope);
            }
        }
        if gaps.len() > 200 {
            println!("  … {} more (use --json for all)", gaps.len() - 200);
        }
    }
    if !report.malformed.is_empty() {
        println!("\nmalformed titles (not a rendering of the format):");
        for m in report.malformed.iter().take(50) {
            println!("  post #{}: {:?}", m.post_id, m.title);
        }
    }
    if !hazards.is_empty() {
        println!("\nhazards:");
        for h in hazards {
            println!("  [{}] {}", h.code, h.message);
        }
    }
}
