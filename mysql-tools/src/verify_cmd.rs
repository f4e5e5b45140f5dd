//! `counterfoil verify`: the invariants on a live site.
//!
//! 1. the registry has its UNIQUE (scope_key, number) index and holds no
//!    number twice;
//! 2. every counter is at or above its highest registry number;
//! 3. every number start..current of every series is accounted for: issued,
//!    void with a reason, or reserved for less than the grace period;
//! 4. every invoice post is in the registry (or is a duplicate recorded by
//!    `counterfoil adopt`).
//!
//! Exit 0 when all hold, 1 with a listing of every violation.

use std::time::Duration;

use anyhow::Result;
use counterfoil_core::TablePrefix;
use serde_json::json;

use crate::cli::{Global, VerifyArgs};
use crate::db::{self, Db, Tables};
use crate::Outcome;

struct Violation {
    check: &'static str,
    detail: String,
}

pub async fn run(global: &Global, args: &VerifyArgs) -> Result<Outcome> {
    let url = crate::database_url(global)?;
    let tables = Tables::new(&TablePrefix::new(&global.table_prefix)?);
    let mut db = Db::connect(
        &url,
        Duration::from_millis(global.timeout_ms.max(1000) * 20),
    )
    .await?;
    db::require_wordpress(&mut db, &tables).await?;
    for t in [&tables.sequences, &tables.numbers] {
        if !db.table_exists(t).await? {
            anyhow::bail!("table `{t}` does not exist: this site is not set up for Counterfoil (run `counterfoil adopt`)");
        }
    }
    let mut v: Vec<Violation> = Vec::new();
    let mut push = |check: &'static str, detail: String| v.push(Violation { check, detail });

    // 1. Unique per series.
    if !db.has_unique_scope_number(&tables.numbers).await? {
        push(
            "unique_index",
            format!(
                "`{}` has no UNIQUE index on (scope_key, number)",
                tables.numbers
            ),
        );
    }
    let dups: Vec<(String, u64, u64)> = db
        .rows(
            &format!("SELECT scope_key, number, COUNT(*) FROM `{}` GROUP BY scope_key, number HAVING COUNT(*) > 1 LIMIT 1000", tables.numbers),
            (),
        )
        .await?;
    for (scope, n, c) in dups {
        push(
            "duplicate",
            format!("series {scope}: number {n} is in the registry {c} times"),
        );
    }

    // 2. Counters at or above the registry.
    let behind: Vec<(String, u64, Option<u64>)> = db
        .rows(
            &format!(
                "SELECT n.scope_key, MAX(n.number), s.current_value FROM `{}` n LEFT JOIN `{}` s ON s.scope_key = n.scope_key \
                 GROUP BY n.scope_key, s.current_value HAVING s.current_value IS NULL OR MAX(n.number) > s.current_value",
                tables.numbers, tables.sequences
            ),
            (),
        )
        .await?;
    for (scope, max, current) in behind {
        match current {
            None => push("counter", format!("series {scope}: registry numbers up to {max} but no counter")),
            Some(c) => push("counter", format!("series {scope}: counter {c} is below its highest registry number {max}: the next allocations would repeat numbers")),
        }
    }

    // 3. Every number accounted for.
    let series: Vec<(String, u64, Option<u64>)> = db
        .rows(
            &format!(
                "SELECT scope_key, current_value, start_value FROM `{}` ORDER BY scope_key",
                tables.sequences
            ),
            (),
        )
        .await?;
    let numbers_sql = format!(
        "SELECT number, status, COALESCE(reason, ''), TIMESTAMPDIFF(MINUTE, updated_at, UTC_TIMESTAMP()) \
         FROM `{}` WHERE scope_key = ? AND number BETWEEN ? AND ? ORDER BY number",
        tables.numbers
    );
    let min_sql = format!(
        "SELECT MIN(number) FROM `{}` WHERE scope_key = ?",
        tables.numbers
    );
    for (scope, current, start) in &series {
        let start = match start {
            Some(s) => *s,
            None => db
                .rows::<Option<u64>, _>(&min_sql, (scope.as_str(),))
                .await?
                .into_iter()
                .flatten()
                .next()
                .unwrap_or(current + 1),
        };
        if start > *current {
            continue;
        }
        let rows: Vec<(u64, String, String, i64)> = db
            .rows(&numbers_sql, (scope.as_str(), start, *current))
            .await?;
        let mut expect = start;
        let mut holes = Vec::new();
        for (n, status, reason, age) in &rows {
            if *n > expect {
                holes.push((expect, n - 1));
            }
            expect = n + 1;
            match status.as_str() {
                "issued" => {}
                "void" if !reason.trim().is_empty() => {}
                "void" => push("accounted", format!("series {scope}: number {n} is void without a reason")),
                "reserved" | "creating" if (*age as u64) < args.reserved_grace_minutes => {}
                "reserved" | "creating" => push("accounted", format!("series {scope}: number {n} has been {status} for {age} minutes: its invoice was never completed (deliver the payment again)")),
                other => push("accounted", format!("series {scope}: number {n} has unknown status `{other}`")),
            }
        }
        if expect <= *current {
            holes.push((expect, *current));
        }
        for (a, b) in holes {
            let range = if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            };
            push("accounted", format!("series {scope}: number(s) {range} are neither issued nor void: unexplained gap"));
        }
    }

    // 4. Every invoice post in the registry.
    let findings = if db.table_exists(&tables.adopt_findings).await? {
        format!(
            " AND p.ID NOT IN (SELECT post_id FROM `{}` WHERE kind IN ('duplicate', 'conflict'))",
            tables.adopt_findings
        )
    } else {
        String::new()
    };
    let orphans: Vec<(u64, String)> = db
        .rows(
            &format!(
                "SELECT p.ID, p.post_title FROM `{}` p WHERE p.post_type = ? AND p.post_status NOT IN ('trash', 'auto-draft', 'inherit') \
                 AND NOT EXISTS (SELECT 1 FROM `{}` n WHERE n.post_id = p.ID){findings} ORDER BY p.ID LIMIT 1000",
                tables.posts, tables.numbers
            ),
            (args.site.post_type.as_str(),),
        )
        .await?;
    for (id, title) in orphans {
        push(
            "posts",
            format!("invoice post #{id} {title:?} is not in the registry"),
        );
    }

    if global.json {
        for x in &v {
            println!(
                "{}",
                json!({"type": "violation", "check": x.check, "detail": x.detail})
            );
        }
        println!(
            "{}",
            json!({"type": "summary", "series": series.len(), "violations": v.len()})
        );
    } else if v.is_empty() {
        println!("verify: all invariants hold ({} series).", series.len());
    } else {
        println!("verify: {} violation(s):", v.len());
        for x in &v {
            println!("  [{}] {}", x.check, x.detail);
        }
    }
    Ok(if v.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
