//! `counterfoil adopt`: takes over a site that numbered invoices itself.
//!
//! Invariants: without `--execute` nothing is written (the plan is computed
//! from reads only); with it, a named lock keeps two runs apart; every step
//! is idempotent (tables IF NOT EXISTS, series moved with GREATEST, registry
//! rows inserted only where missing), so an interrupted run is finished by
//! running it again, and a run that did not finish is visible in
//! `{prefix}counterfoil_adopt_runs`. History is never renumbered unless
//! `--resolve-duplicates=renumber`. Safe while the site takes payments:
//! each series is adopted in one transaction holding its row (`adopt_write`),
//! so a live allocation on it waits and continues after the adopted numbers,
//! and a number that became another post's meanwhile rolls the series back
//! (exit 2, the conflicts named) instead of being silently skipped.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use counterfoil_core::audit::{Holder, SeriesAudit};
use counterfoil_core::{NumberFormat, Period, RegistrySql, ScopeKey, SeriesSql, TablePrefix};
use serde_json::json;

use crate::adopt_write::{adopt_series, registry_store, AdoptedRow, SeriesWrite, Target};
use crate::audit_cmd::{run_audit, Audited};
use crate::cli::{AdoptArgs, Global};
use crate::db::{Db, Tables};
use crate::Outcome;

const VOID_REASON: &str = "missing before adoption (found by counterfoil adopt)";

/// What adopt will do for one series.
struct SeriesPlan<'a> {
    audit: &'a SeriesAudit,
    current: Option<u64>,
    /// (number, post) owners not yet in the registry.
    backfill: Vec<Holder>,
    /// Owners whose number the registry gives to another post.
    conflicts: Vec<(Holder, u64)>,
    /// Gap numbers not yet in the registry.
    voids: Vec<u64>,
    /// Later duplicates not yet recorded (or, with renumber, not yet renumbered).
    pending_duplicates: usize,
}

impl SeriesPlan<'_> {
    fn target(&self) -> u64 {
        self.current.unwrap_or(0).max(self.audit.highest)
    }
}

pub async fn run(global: &Global, args: &AdoptArgs) -> Result<Outcome> {
    let url = crate::database_url(global)?;
    let prefix = TablePrefix::new(&global.table_prefix)?;
    let tables = Tables::new(&prefix);
    let format = NumberFormat::parse(&args.site.format)?;
    let deadline = Duration::from_millis(global.timeout_ms.max(1000) * 20);
    let mut db = Db::connect(&url, deadline).await?;
    let Audited { report, hazards } = run_audit(&mut db, &tables, &args.site, global.json).await?;

    if report.series.is_empty() {
        bail!(
            "nothing to adopt: none of the {} `{}` posts has a title of the form {}; check --format and --post-type",
            report.posts,
            args.site.post_type,
            args.site.format
        );
    }
    if report.malformed_count > 0 && !args.skip_malformed {
        let first = report
            .malformed
            .first()
            .map(|m| format!("post #{} {:?}", m.post_id, m.title))
            .unwrap_or_default();
        bail!(
            "{} titles do not match {} (first: {first}); fix --format, or pass --skip-malformed to adopt the rest",
            report.malformed_count,
            args.site.format
        );
    }
    if let Some(h) = hazards
        .iter()
        .find(|h| h.code == "flush_log_at_trx_commit_0")
    {
        bail!("refusing to adopt: {}", h.message);
    }

    // The plan, from reads only.
    let registry_exists = db.table_exists(&tables.numbers).await?;
    let findings_exist = db.table_exists(&tables.adopt_findings).await?;
    let wanted_kind = if args.resolve_duplicates == "renumber" {
        "renumbered"
    } else {
        "duplicate"
    };
    let mut plans = Vec::new();
    for audit in &report.series {
        ScopeKey::new(audit.scope.as_str())?;
        let current = db.series_current(&tables, audit.scope.as_str()).await?;
        let existing: HashMap<u64, Option<u64>> = if registry_exists {
            db.rows::<(u64, Option<u64>), _>(
                &format!(
                    "SELECT number, post_id FROM `{}` WHERE scope_key = ?",
                    tables.numbers
                ),
                (audit.scope.as_str(),),
            )
            .await?
            .into_iter()
            .collect()
        } else {
            HashMap::new()
        };
        let recorded: std::collections::HashSet<u64> = if findings_exist {
            db.rows::<u64, _>(
                &format!(
                    "SELECT post_id FROM `{}` WHERE scope_key = ? AND kind = ?",
                    tables.adopt_findings
                ),
                (audit.scope.as_str(), wanted_kind),
            )
            .await?
            .into_iter()
            .collect()
        } else {
            Default::default()
        };
        let pending_duplicates = audit
            .later_duplicates()
            .filter(|h| !recorded.contains(&h.post_id))
            .count();
        let mut plan = SeriesPlan {
            audit,
            current,
            backfill: Vec::new(),
            conflicts: Vec::new(),
            voids: Vec::new(),
            pending_duplicates,
        };
        for h in &audit.owners {
            match existing.get(&h.seq) {
                None => plan.backfill.push(*h),
                Some(Some(other)) if *other != h.post_id => plan.conflicts.push((*h, *other)),
                Some(_) => {}
            }
        }
        for (a, b) in &audit.gaps {
            plan.voids
                .extend((*a..=*b).filter(|n| !existing.contains_key(n)));
        }
        plans.push(plan);
    }
    print_plan(global.json, args, &plans, registry_exists);
    if !args.execute {
        if !global.json {
            println!("\ndry run: nothing was changed. Run again with --execute to adopt.");
        }
        return Ok(Outcome::Ok);
    }

    // Execute.
    // GET_LOCK names are server-wide: the database is part of the name.
    let database: Option<String> = db.scalar("SELECT DATABASE()").await?;
    let lock = format!(
        "counterfoil_adopt:{}.{}",
        database.unwrap_or_default(),
        tables.posts
    );
    let got: Option<i64> = db
        .rows::<Option<i64>, _>("SELECT GET_LOCK(?, 0)", (lock.as_str(),))
        .await?
        .into_iter()
        .flatten()
        .next();
    if got != Some(1) {
        bail!("another `counterfoil adopt` is running on this site (lock {lock}); wait for it to finish");
    }
    let result = execute(
        &url, global, args, &mut db, &tables, &prefix, &format, &plans,
    )
    .await;
    let _ = db.exec("SELECT RELEASE_LOCK(?)", (lock.as_str(),)).await;
    result?;
    Ok(Outcome::Ok)
}

#[allow(clippy::too_many_arguments)]
async fn execute(
    url: &str,
    global: &Global,
    args: &AdoptArgs,
    db: &mut Db,
    tables: &Tables,
    prefix: &TablePrefix,
    format: &NumberFormat,
    plans: &[SeriesPlan<'_>],
) -> Result<()> {
    // 1. Tables.
    let (store, registry) = registry_store(url, global, prefix).await?;
    db.query_drop(&format!(
        "CREATE TABLE IF NOT EXISTS `{}` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, started_at DATETIME NOT NULL, \
         finished_at DATETIME NULL, arguments TEXT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
        tables.adopt_runs
    ))
    .await?;
    db.ensure_adopt_findings(tables).await?;
    let unfinished: Vec<u64> = db
        .rows(
            &format!(
                "SELECT id FROM `{}` WHERE finished_at IS NULL",
                tables.adopt_runs
            ),
            (),
        )
        .await?;
    if !unfinished.is_empty() && !global.json {
        eprintln!("adopt: run(s) {unfinished:?} did not finish; this run completes them");
    }
    db.exec(
        &format!(
            "INSERT INTO `{}` (started_at, arguments) VALUES (UTC_TIMESTAMP(), ?)",
            tables.adopt_runs
        ),
        (format!(
            "format={} scope_rule={} post_type={} resolve_duplicates={}",
            args.site.format, args.site.scope_rule, args.site.post_type, args.resolve_duplicates
        ),),
    )
    .await?;
    let run_id = db.conn.last_insert_id().unwrap_or(0);

    let total: usize = plans.iter().map(|p| p.backfill.len() + p.voids.len()).sum();
    let target = Target {
        series: store.sql(),
        numbers: &registry.numbers,
        findings: &tables.adopt_findings,
    };
    let mut held = Duration::ZERO;
    for (i, plan) in plans.iter().enumerate() {
        let scope = plan.audit.scope.as_str();
        ScopeKey::new(scope)?;
        // 2.–4. One transaction per series, holding its row: created at its
        // lowest number and moved up to its highest; every owner issued,
        // every gap void with its reason; the findings (later duplicates,
        // owners whose number the registry gives to another post); read back.
        let rows: Vec<AdoptedRow> = plan
            .backfill
            .iter()
            .map(|h| AdoptedRow {
                number: h.seq,
                status: "issued",
                reason: None,
                post_id: Some(h.post_id),
                payment: None,
            })
            .chain(plan.voids.iter().map(|n| AdoptedRow {
                number: *n,
                status: "void",
                reason: Some(VOID_REASON),
                post_id: None,
                payment: None,
            }))
            .collect();
        let mut findings = Vec::new();
        for d in &plan.audit.duplicates {
            let owner = d.holders[0].post_id;
            for h in &d.holders[1..] {
                findings.push(("duplicate", h.seq, h.post_id, owner));
            }
        }
        for (h, other) in &plan.conflicts {
            findings.push(("conflict", h.seq, h.post_id, *other));
        }
        let series = SeriesWrite {
            scope,
            start: plan.audit.lowest.max(1),
            highest: plan.audit.highest,
            rows: &rows,
            findings: &findings,
        };
        let done = adopt_series(db, &target, &series, args.batch_size, global.json)
            .await
            .map_err(|e| {
                if i > 0 {
                    e.context(format!(
                        "{i} series before it were adopted whole; run adopt again once this one is settled"
                    ))
                } else {
                    e
                }
            })?;
        held = held.max(done.held);
        if args.resolve_duplicates == "renumber" {
            renumber(db, tables, &registry, store.sql(), format, plan).await?;
        }
        if i + 1 < plans.len() && args.pause_ms > 0 {
            tokio::time::sleep(Duration::from_millis(args.pause_ms)).await;
        }
    }
    // 5. The unique index, last (an older registry table may lack it).
    if !db.has_unique_scope_number(&registry.numbers).await? {
        db.query_drop(&format!(
            "ALTER TABLE `{}` ADD UNIQUE KEY scope_number (scope_key, number)",
            registry.numbers
        ))
        .await
        .context(
            "adding the unique index (the registry holds a number twice: run `counterfoil verify`)",
        )?;
    }
    db.exec(
        &format!(
            "UPDATE `{}` SET finished_at = UTC_TIMESTAMP() WHERE finished_at IS NULL AND id <= ?",
            tables.adopt_runs
        ),
        (run_id,),
    )
    .await?;
    if global.json {
        println!(
            "{}",
            json!({"type": "done", "run": run_id, "registry_rows_written": total,
                   "longest_series_lock_ms": held.as_millis() as u64})
        );
    } else {
        println!(
            "\nadopted: {} series, {total} registry rows written (run #{run_id}; each series in one transaction, its row held at most {} ms).",
            plans.len(),
            held.as_millis()
        );
    }
    Ok(())
}

/// Gives each later duplicate a new number, in one transaction per post:
/// allocation, registry row, new title, old title in post meta, finding.
async fn renumber(
    db: &mut Db,
    tables: &Tables,
    registry: &RegistrySql,
    series: &SeriesSql,
    format: &NumberFormat,
    plan: &SeriesPlan<'_>,
) -> Result<()> {
    let scope = plan.audit.scope.as_str();
    for h in plan.audit.later_duplicates() {
        let done: Vec<u64> = db
            .rows(
                &format!("SELECT id FROM `{}` WHERE kind = 'renumbered' AND post_id = ? AND scope_key = ?", tables.adopt_findings),
                (h.post_id, scope),
            )
            .await?;
        if !done.is_empty() {
            continue;
        }
        let old_title: Option<String> = db
            .rows(
                &format!("SELECT post_title FROM `{}` WHERE ID = ?", tables.posts),
                (h.post_id,),
            )
            .await?
            .into_iter()
            .next();
        let Some(old_title) = old_title else { continue };
        let parsed = format.parse_rendered(&old_title);
        let date = h.date_text();
        let year = parsed
            .and_then(|p| p.year)
            .or_else(|| date[..4].parse().ok())
            .unwrap_or(1);
        let month: u32 = date[5..7].parse().unwrap_or(1);
        db.query_drop("START TRANSACTION").await?;
        let outcome = async {
            let new =
                counterfoil_core::mysql::allocate_on(&mut db.conn, series, &ScopeKey::new(scope)?, 1)
                    .await?;
            let title = format.render(new, Period::new(year, month.clamp(1, 12))?);
            db.exec(
                &format!(
                    "INSERT INTO `{}` (scope_key, number, status, source, post_id, created_at, updated_at) \
                     VALUES (?, ?, 'issued', 'renumber', ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())",
                    registry.numbers
                ),
                (scope, new, h.post_id),
            )
            .await?;
            db.exec(&format!("UPDATE `{}` SET post_title = ? WHERE ID = ?", tables.posts), (title.as_str(), h.post_id)).await?;
            db.exec(
                &format!("INSERT INTO `{}` (post_id, meta_key, meta_value) VALUES (?, '_counterfoil_old_title', ?)", tables.postmeta),
                (h.post_id, old_title.as_str()),
            )
            .await?;
            db.exec(
                &format!(
                    "INSERT INTO `{}` (kind, scope_key, number, post_id, new_number, created_at) VALUES ('renumbered', ?, ?, ?, ?, UTC_TIMESTAMP())",
                    tables.adopt_findings
                ),
                (scope, h.seq, h.post_id, new),
            )
            .await?;
            anyhow::Ok(())
        }
        .await;
        match outcome {
            Ok(()) => db.query_drop("COMMIT").await?,
            Err(e) => {
                let _ = db.query_drop("ROLLBACK").await;
                return Err(e);
            }
        }
    }
    Ok(())
}

fn print_plan(json_out: bool, args: &AdoptArgs, plans: &[SeriesPlan<'_>], registry_exists: bool) {
    if json_out {
        for p in plans {
            println!(
                "{}",
                json!({"type": "plan", "scope": p.audit.scope, "current": p.current, "target": p.target(),
                       "start": p.audit.lowest, "backfill": p.backfill.len(), "voids": p.voids.len(),
                       "duplicates": p.audit.later_duplicates().count(), "conflicts": p.conflicts.len(),
                       "execute": args.execute})
            );
        }
        return;
    }
    println!("\nplan{}:", if args.execute { "" } else { " (dry run)" });
    if !registry_exists {
        println!(
            "  create the Counterfoil tables (sequences, registry with its unique index, payments)"
        );
    }
    for p in plans {
        let series = match p.current {
            None => format!(
                "create series {} at {}, continuing after {}",
                p.audit.scope, p.audit.lowest, p.audit.highest
            ),
            Some(c) if c >= p.audit.highest => format!(
                "series {} stays at {c} (already at or past {})",
                p.audit.scope, p.audit.highest
            ),
            Some(c) => format!(
                "move series {} up from {c} to {}",
                p.audit.scope, p.audit.highest
            ),
        };
        println!("  {series}");
        println!(
            "    registry: {} invoices to record as issued, {} missing numbers to record as void (\"{VOID_REASON}\")",
            p.backfill.len(),
            p.voids.len()
        );
        let dups = p.pending_duplicates;
        if dups > 0 {
            if args.resolve_duplicates == "renumber" {
                println!("    {dups} later duplicates: renumber (new number; old title kept in post meta _counterfoil_old_title)");
            } else {
                println!("    {dups} later duplicates: record as findings; history untouched");
            }
        }
        if !p.conflicts.is_empty() {
            println!("    {} invoices whose number the registry already gives to another post: record as findings", p.conflicts.len());
        }
    }
    if registry_exists
        && plans.iter().all(|p| {
            p.backfill.is_empty()
                && p.voids.is_empty()
                && p.pending_duplicates == 0
                && p.current.unwrap_or(0) >= p.audit.highest
        })
    {
        println!("  nothing to do: the site is already adopted");
    }
}
