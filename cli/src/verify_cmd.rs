//! `counterfoil verify`: the invariants on a live site.
//!
//! 1. the registry has its UNIQUE (scope_key, number) index and holds no
//!    number twice;
//! 2. every counter is at or above its highest registry number;
//! 3. every number start..current of every series is accounted for: issued,
//!    void with a reason, or reserved (or unconfirmed: its caller may not
//!    have received it) for less than the grace period;
//! 4. every invoice post (of `--post-type`, and the plugin's invoices and
//!    credit notes) is in the registry (or is a duplicate recorded by
//!    `counterfoil adopt`).
//!
//! 5. every series' tamper-evident chain holds and tells the registry's
//!    story (`chain_check`); with `--against FILE`, the heads kept in FILE
//!    are still in their chains;
//! 6. every issued number's invoice or credit-note post shows what the
//!    books hold: its series, number, gateway, transaction, amount and
//!    currency (`post_check`).
//!
//! Exit 0 when all hold, 1 with a listing of every violation. `--heads`
//! prints each series' chain head instead of the report.
//!
//! Check 3 reads each series in keyset chunks of [`CHUNK`] rows, so its
//! memory is bounded at any series length.
//!
//! On PostgreSQL (a `postgres://` URL: the core's registry, no WordPress)
//! checks 1–3 and 5 run on the same facts, read with PostgreSQL's SQL;
//! checks 4 and 6 have no posts to read.

use std::time::Duration;

use anyhow::Result;
use counterfoil_core::TablePrefix;
use serde_json::json;

use crate::chain_check;
use crate::chain_facts::ChainTables;
use crate::cli::{Global, VerifyArgs};
use crate::db::{self, Db, Tables};
use crate::post_check;
use crate::verify_source::{Source, CHUNK};
use crate::Outcome;

/// Findings listed per series of check 3; more are counted in one line.
const MAX_FINDINGS: usize = 1_000;

/// The finding for numbers `a..=b` of `scope` without a record.
fn unexplained(scope: &str, a: u64, b: u64) -> String {
    let range = if a == b {
        a.to_string()
    } else {
        format!("{a}–{b}")
    };
    format!("series {scope}: number(s) {range} are neither issued nor void: unexplained gap")
}

struct Violation {
    check: &'static str,
    detail: String,
}

pub async fn run(global: &Global, args: &VerifyArgs) -> Result<Outcome> {
    let url = crate::database_url(global)?;
    let tables = Tables::new(&TablePrefix::new(&global.table_prefix)?);
    if counterfoil_core::Engine::of_url(&url) == counterfoil_core::Engine::Postgres {
        let client =
            db::connect_postgres(&url, Duration::from_millis(global.timeout_ms.max(1))).await?;
        for t in [&tables.sequences, &tables.numbers] {
            if !db::postgres_table_exists(&client, t).await? {
                anyhow::bail!("table `{t}` does not exist: no Counterfoil registry here");
            }
        }
        return judge(global, args, &tables, Source::Postgres(client)).await;
    }
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
    judge(global, args, &tables, Source::MySql(db)).await
}

/// Checks the invariants on the facts of `src` and reports.
async fn judge(
    global: &Global,
    args: &VerifyArgs,
    tables: &Tables,
    mut src: Source,
) -> Result<Outcome> {
    let mut v: Vec<Violation> = Vec::new();
    let mut push = |check: &'static str, detail: String| v.push(Violation { check, detail });

    // 1. Unique per series.
    if !src.has_unique(&tables.numbers).await? {
        push(
            "unique_index",
            format!(
                "`{}` has no UNIQUE index on (scope_key, number)",
                tables.numbers
            ),
        );
    }
    let dups = src.duplicates(&tables.numbers).await?;
    for (scope, n, c) in dups {
        push(
            "duplicate",
            format!("series {scope}: number {n} is in the registry {c} times"),
        );
    }

    // 2. Counters at or above the registry.
    let behind = src.behind(&tables.numbers, &tables.sequences).await?;
    for (scope, max, current) in behind {
        match current {
            None => push("counter", format!("series {scope}: registry numbers up to {max} but no counter")),
            Some(c) => push("counter", format!("series {scope}: counter {c} is below its highest registry number {max}: the next allocations would repeat numbers")),
        }
    }

    // 3. Every number accounted for.
    let started = std::time::Instant::now();
    let series = src.series(&tables.sequences).await?;
    for (scope, current, start) in &series {
        let start = match start {
            Some(s) => *s,
            None => src
                .lowest(&tables.numbers, scope)
                .await?
                .unwrap_or(current + 1),
        };
        if start > *current {
            continue;
        }
        // The series in keyset chunks: memory stays bounded however long
        // it is; past MAX_FINDINGS per series the findings are counted.
        let mut expect = start;
        let mut found = 0usize;
        let mut note = |detail: String| {
            found += 1;
            if found <= MAX_FINDINGS {
                push("accounted", detail);
            }
        };
        loop {
            let rows = src
                .numbers(&tables.numbers, scope, expect, *current)
                .await?;
            for (n, status, reason, age) in &rows {
                if *n > expect {
                    note(unexplained(scope, expect, n - 1));
                }
                expect = n + 1;
                match status.as_str() {
                    "issued" => {}
                    "void" if !reason.trim().is_empty() => {}
                    "void" => note(format!("series {scope}: number {n} is void without a reason")),
                    "reserved" | "creating" if (*age as u64) < args.reserved_grace_minutes => {}
                    "reserved" | "creating" => note(format!("series {scope}: number {n} has been {status} for {age} minutes: its invoice was never completed (deliver the payment again)")),
                    "unconfirmed" if (*age as u64) < args.reserved_grace_minutes => {}
                    "unconfirmed" => note(format!("series {scope}: number {n} is unconfirmed ({age} minutes): the call that took it never got the answer to its COMMIT, so its caller may not have received it (void it with a reason if it was not used)")),
                    other => note(format!("series {scope}: number {n} has unknown status `{other}`")),
                }
            }
            if rows.len() < CHUNK || expect > *current {
                break;
            }
        }
        if expect <= *current {
            note(unexplained(scope, expect, *current));
        }
        if found > MAX_FINDINGS {
            push(
                "accounted",
                format!(
                    "series {scope}: {} more findings not listed (the first {MAX_FINDINGS} are)",
                    found - MAX_FINDINGS
                ),
            );
        }
    }

    eprintln!(
        "verify: every number accounted for, {} series in {:.1} s",
        series.len(),
        started.elapsed().as_secs_f64()
    );
    // 4. Every invoice post in the registry (a WordPress site: MySQL only).
    if let Source::MySql(db) = &mut src {
        orphan_posts(db, tables, args, &mut push).await?;
    }

    // 5. The chains.
    let names = ChainTables {
        sequences: &tables.sequences,
        numbers: &tables.numbers,
        payments: &tables.payments,
        chain: &tables.chain,
    };
    let started = std::time::Instant::now();
    let chains = chain_check::check(&mut src, &names).await?;
    eprintln!(
        "verify: {} chain entries walked and held against the registry in {:.1} s",
        chains.entries,
        started.elapsed().as_secs_f64()
    );
    for finding in &chains.findings {
        push("chain", finding.clone());
    }
    // 6. Each issued number's post shows what the books hold (MySQL only).
    if let Source::MySql(db) = &mut src {
        if db.table_exists(&tables.posts).await? {
            let started = std::time::Instant::now();
            let posts = post_check::check(db, tables, &mut push).await?;
            eprintln!(
                "verify: {posts} invoice posts held against the registry and payments in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    if let Some(path) = &args.against {
        let kept = chain_check::read_heads(path)?;
        for finding in chain_check::against(&mut src, &names, &kept).await? {
            push("chain", finding);
        }
    }
    if args.heads {
        for head in &chains.heads {
            println!("{}", head.to_json());
        }
        for x in &v {
            eprintln!("verify: [{}] {}", x.check, x.detail);
        }
        return Ok(if v.is_empty() {
            Outcome::Ok
        } else {
            Outcome::Findings
        });
    }
    report(global, &v, series.len(), chains.entries)
}

/// The plugin's post types: its invoices and its credit notes.
const PLUGIN_INVOICE: &str = "counterfoil_invoice";
const PLUGIN_CREDIT_NOTE: &str = "counterfoil_cnote";

/// Check 4 on a WordPress site.
async fn orphan_posts(
    db: &mut Db,
    tables: &Tables,
    args: &VerifyArgs,
    push: &mut impl FnMut(&'static str, String),
) -> Result<()> {
    let findings = if db.table_exists(&tables.adopt_findings).await? {
        format!(
            " AND p.ID NOT IN (SELECT post_id FROM `{}` WHERE kind IN ('duplicate', 'conflict'))",
            tables.adopt_findings
        )
    } else {
        String::new()
    };
    let orphans: Vec<(u64, String, String)> = db
        .rows(
            &format!(
                "SELECT p.ID, p.post_title, p.post_type FROM `{}` p \
                 WHERE p.post_type IN (?, '{PLUGIN_INVOICE}', '{PLUGIN_CREDIT_NOTE}') \
                 AND p.post_status NOT IN ('trash', 'auto-draft', 'inherit') \
                 AND NOT EXISTS (SELECT 1 FROM `{}` n WHERE n.post_id = p.ID){findings} ORDER BY p.ID LIMIT 1000",
                tables.posts, tables.numbers
            ),
            (args.site.post_type.as_str(),),
        )
        .await?;
    for (id, title, kind) in orphans {
        push(
            "posts",
            format!("{kind} post #{id} {title:?} is not in the registry"),
        );
    }
    Ok(())
}

fn report(global: &Global, v: &[Violation], series: usize, chained: u64) -> Result<Outcome> {
    if global.json {
        for x in v {
            println!(
                "{}",
                json!({"type": "violation", "check": x.check, "detail": x.detail})
            );
        }
        println!(
            "{}",
            json!({"type": "summary", "series": series, "chain_entries": chained, "violations": v.len()})
        );
    } else if v.is_empty() {
        println!("verify: all invariants hold ({series} series, {chained} chain entries checked).");
    } else {
        println!("verify: {} violation(s):", v.len());
        for x in v {
            println!("  [{}] {}", x.check, x.detail);
        }
    }
    Ok(if v.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
