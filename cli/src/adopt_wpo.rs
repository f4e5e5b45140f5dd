//! `counterfoil adopt --from wp-overnight`: takes over the numbering of WP
//! Overnight's "PDF Invoices & Packing Slips for WooCommerce".
//!
//! What is read: its number stores (`{prefix}wcpdf_invoice_number`, one
//! sequence; `{prefix}wcpdf_invoice_number_{year}`, reset each year: rows of
//! `id` = the number, `order_id`, `date` in the site's time), and the number
//! each order carries (meta `_wcpdf_invoice_number`, its local date in
//! `_wcpdf_invoice_date_formatted`), in both order storages (posts, and
//! WooCommerce's order tables).
//!
//! Invariants:
//! - nothing is renumbered: every number an order carries stays that
//!   order's, registered as issued (gateway `woocommerce`, the order's id);
//! - every number is accounted for: a number the store handed out that no
//!   order carries, and a number missing below the series' highest, is
//!   registered void with its reason;
//! - a number two orders carry (WP Overnight's own race, its issue #951) is
//!   owned by the lower order id; the other is recorded as a finding;
//! - a series is `{issuer}:{year}`, the year its number was issued in (the
//!   yearly store's year); a single sequence that ran across years starts
//!   each year's series at that year's lowest number; every counter moves up
//!   to its highest, so the next order continues the sequence;
//! - without `--execute` nothing is written; with it every step is
//!   idempotent (INSERT IGNORE, counters only moved up);
//! - each series is adopted in one transaction holding its row
//!   (`adopt_write`): a number the live shop hands out meanwhile is never
//!   silently the registry's for another order — adopt rolls that series
//!   back and fails naming it.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use anyhow::{bail, Result};
use counterfoil_core::{ScopeKey, TablePrefix};
use serde_json::json;

use crate::adopt_write::{adopt_series, registry_store, AdoptedRow, SeriesWrite, Target};
use crate::cli::{AdoptArgs, Global};
use crate::db::{Db, Tables};
use crate::Outcome;

/// The reason of a number WP Overnight's store handed out that no order carries.
const STORE_ONLY: &str =
    "taken from WP Overnight's number store, on no order (found by counterfoil adopt)";
/// The reason of a number missing below a series' highest.
const MISSING: &str = "missing before adoption from WP Overnight (found by counterfoil adopt)";

/// A number as WP Overnight left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The number.
    pub number: u64,
    /// The year it belongs to.
    pub year: u32,
    /// The order carrying it (meta), or named by the store.
    pub order: Option<u64>,
    /// Whether an order carries it (else only the store knows it).
    pub on_order: bool,
}

/// One series' adoption.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SeriesPlan {
    pub scope: String,
    /// The first number of the series (1 for a yearly store).
    pub start: u64,
    pub highest: u64,
    /// number → owning order.
    pub issued: BTreeMap<u64, u64>,
    /// Numbers made void, with their reason.
    pub voids: Vec<(u64, &'static str)>,
    /// (number, later order, owning order).
    pub duplicates: Vec<(u64, u64, u64)>,
}

/// The plan of every series, from what was read. `yearly`: WP Overnight
/// reset its numbers each year (each year's series starts at 1).
pub fn plan(issuer: u64, yearly: bool, taken: &[Taken]) -> Vec<SeriesPlan> {
    let mut by_year: BTreeMap<u32, Vec<Taken>> = BTreeMap::new();
    for t in taken {
        by_year.entry(t.year).or_default().push(*t);
    }
    let mut plans = Vec::new();
    for (year, mut all) in by_year {
        all.sort_by_key(|t| (t.number, !t.on_order, t.order));
        let mut p = SeriesPlan {
            scope: format!("{issuer}:{year}"),
            start: if yearly {
                1
            } else {
                all.first().map_or(1, |t| t.number.max(1))
            },
            highest: all.last().map_or(0, |t| t.number),
            ..SeriesPlan::default()
        };
        let mut seen_store: HashMap<u64, ()> = HashMap::new();
        for t in &all {
            match (t.on_order, t.order) {
                (true, Some(order)) => match p.issued.get(&t.number) {
                    None => {
                        p.issued.insert(t.number, order);
                    }
                    Some(owner) if *owner != order => p.duplicates.push((t.number, order, *owner)),
                    Some(_) => {}
                },
                _ => {
                    seen_store.insert(t.number, ());
                }
            }
        }
        for n in p.start..=p.highest {
            if p.issued.contains_key(&n) {
                continue;
            }
            p.voids.push((
                n,
                if seen_store.contains_key(&n) {
                    STORE_ONLY
                } else {
                    MISSING
                },
            ));
        }
        plans.push(p);
    }
    plans
}

/// The year of a local date `YYYY-MM-DD…`.
fn year_of(date: &str) -> Option<u32> {
    date.get(..4)?.parse().ok().filter(|y| *y > 0)
}

/// Reads WP Overnight's stores and the orders' numbers: (taken, yearly).
async fn read(db: &mut Db, prefix: &str) -> Result<(Vec<Taken>, bool)> {
    let base = format!("{prefix}wcpdf_invoice_number");
    let like = format!("{}%", base.replace('_', "\\_"));
    let stores: Vec<String> = db
        .rows::<String, _>(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME",
            (like.as_str(),),
        )
        .await?;
    let mut taken = Vec::new();
    let mut yearly = false;
    for table in &stores {
        let year = match table.strip_prefix(&base) {
            Some("") => None,
            Some(rest) => match rest.strip_prefix('_').and_then(|y| y.parse::<u32>().ok()) {
                Some(y) => {
                    yearly = true;
                    Some(y)
                }
                None => continue, // another table of its (…_number_data, say).
            },
            None => continue,
        };
        let rows: Vec<(u64, Option<u64>, Option<String>)> = db
            .rows(
                &format!("SELECT id, order_id, CAST(date AS CHAR) FROM `{table}` ORDER BY id"),
                (),
            )
            .await?;
        for (number, order, date) in rows {
            let Some(year) = year.or_else(|| date.as_deref().and_then(year_of)) else {
                continue;
            };
            taken.push(Taken {
                number,
                year,
                order: order.filter(|o| *o > 0),
                on_order: false,
            });
        }
    }
    // The orders' numbers: posts storage, and WooCommerce's order tables.
    let tables = Tables::new(&TablePrefix::new(prefix)?);
    let mut carried: BTreeMap<u64, (u64, Option<String>)> = BTreeMap::new();
    // (order table, its id column, meta table, its order column, type column)
    let mut stores = vec![(
        tables.posts.clone(),
        "ID",
        tables.postmeta.clone(),
        "post_id",
        "post_type",
    )];
    let orders_table = format!("{prefix}wc_orders");
    let orders_meta = format!("{prefix}wc_orders_meta");
    if db.table_exists(&orders_table).await? && db.table_exists(&orders_meta).await? {
        stores.push((orders_table, "id", orders_meta, "order_id", "type"));
    }
    let mut rows: Vec<(u64, String, Option<String>)> = Vec::new();
    for (orders, id, meta, order_col, type_col) in &stores {
        rows.extend(
            db.rows::<(u64, String, Option<String>), _>(
                &format!(
                    "SELECT o.{id}, m.meta_value, (SELECT d.meta_value FROM `{meta}` d WHERE d.{order_col} = o.{id} \
                     AND d.meta_key = '_wcpdf_invoice_date_formatted' LIMIT 1) \
                     FROM `{orders}` o JOIN `{meta}` m ON m.{order_col} = o.{id} AND m.meta_key = '_wcpdf_invoice_number' \
                     WHERE o.{type_col} = 'shop_order'"
                ),
                (),
            )
            .await?,
        );
    }
    for (order, value, date) in rows {
        if let Ok(number) = value.trim().parse::<u64>() {
            if number > 0 {
                carried.insert(order, (number, date));
            }
        }
    }
    // Where the store knows the number, its year; else the order's own date.
    let store_year: HashMap<(u64, Option<u64>), u32> = taken
        .iter()
        .map(|t| ((t.number, t.order), t.year))
        .collect();
    for (order, (number, date)) in carried {
        let year = store_year
            .get(&(number, Some(order)))
            .copied()
            .or_else(|| date.as_deref().and_then(year_of));
        let Some(year) = year else {
            bail!("order {order} carries WP Overnight number {number} but no invoice date (_wcpdf_invoice_date_formatted) and no store row: its year is unknown");
        };
        taken.push(Taken {
            number,
            year,
            order: Some(order),
            on_order: true,
        });
    }
    Ok((taken, yearly))
}

/// The command.
pub async fn run(global: &Global, args: &AdoptArgs) -> Result<Outcome> {
    let url = crate::database_url(global)?;
    let prefix = TablePrefix::new(&global.table_prefix)?;
    let tables = Tables::new(&prefix);
    let deadline = Duration::from_millis(global.timeout_ms.max(1000) * 20);
    let mut db = Db::connect(&url, deadline).await?;
    crate::db::require_wordpress(&mut db, &tables).await?;
    let (taken, yearly) = read(&mut db, prefix.as_str()).await?;
    if taken.is_empty() {
        bail!(
            "nothing to adopt: no WP Overnight number store ({}wcpdf_invoice_number…) and no order with _wcpdf_invoice_number",
            prefix.as_str()
        );
    }
    let plans = plan(args.issuer, yearly, &taken);
    let mut current = Vec::new();
    for p in &plans {
        ScopeKey::new(p.scope.as_str())?;
        current.push(db.series_current(&tables, p.scope.as_str()).await?);
    }
    print_plan(global.json, yearly, &plans, &current);
    let conflicts = conflicts(&mut db, &tables, &plans).await?;
    for c in &conflicts {
        if global.json {
            println!("{}", json!({"type": "conflict", "message": c}));
        } else {
            println!("conflict: {c}");
        }
    }
    if !conflicts.is_empty() {
        bail!(
            "{} number(s) WP Overnight gave an order are already Counterfoil's for something else:              adopt before Counterfoil numbers orders, or settle these by hand (nothing was changed)",
            conflicts.len()
        );
    }
    if !args.execute {
        if !global.json {
            println!("\ndry run: nothing was changed. Run again with --execute to adopt.");
        }
        return Ok(Outcome::Ok);
    }
    execute(&url, global, args, &mut db, &tables, &prefix, &plans).await?;
    Ok(Outcome::Ok)
}

/// Numbers an order carries that the registry already gives to another
/// payment (Counterfoil numbered orders in the series before the adoption).
async fn conflicts(db: &mut Db, tables: &Tables, plans: &[SeriesPlan]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if !db.table_exists(&tables.numbers).await? {
        return Ok(out);
    }
    for p in plans {
        let rows: Vec<(u64, Option<String>, Option<String>)> = db
            .rows(
                &format!(
                    "SELECT number, gateway, transaction_id FROM `{}` WHERE scope_key = ?",
                    tables.numbers
                ),
                (p.scope.as_str(),),
            )
            .await?;
        for (n, gateway, transaction) in rows {
            let Some(order) = p.issued.get(&n) else {
                continue;
            };
            let ours = gateway.as_deref() == Some("woocommerce")
                && transaction.as_deref() == Some(order.to_string().as_str());
            if !ours {
                out.push(format!(
                    "{} number {n}: WP Overnight gave it to order {order}; the registry has it for {}/{}",
                    p.scope,
                    gateway.as_deref().unwrap_or("-"),
                    transaction.as_deref().unwrap_or("-")
                ));
            }
        }
    }
    Ok(out)
}

fn print_plan(json_out: bool, yearly: bool, plans: &[SeriesPlan], current: &[Option<u64>]) {
    for (p, now) in plans.iter().zip(current) {
        let next = p.highest.max(now.unwrap_or(0)) + 1;
        if json_out {
            println!(
                "{}",
                json!({
                    "type": "plan", "scope": p.scope, "start": p.start, "highest": p.highest,
                    "issued": p.issued.len(), "void": p.voids.len(), "duplicates": p.duplicates.len(),
                    "counter_now": now, "next_number": next,
                })
            );
        } else {
            println!(
                "{}: numbers {}..={} — {} issued on orders, {} void, {} duplicate(s); counter {} → next number {next}",
                p.scope,
                p.start,
                p.highest,
                p.issued.len(),
                p.voids.len(),
                p.duplicates.len(),
                now.map_or("(new series)".to_owned(), |n| n.to_string()),
            );
            for (n, later, owner) in &p.duplicates {
                println!("  number {n}: order {later} carries it too (kept by order {owner}, recorded as a finding)");
            }
        }
    }
    if !yearly && !json_out {
        println!(
            "\nWP Overnight numbered in one sequence across years: set \"When a series is missing\" to \
             continue (Settings → Invoice numbers) so that next year's series goes on from this one."
        );
    }
}

async fn execute(
    url: &str,
    global: &Global,
    args: &AdoptArgs,
    db: &mut Db,
    tables: &Tables,
    prefix: &TablePrefix,
    plans: &[SeriesPlan],
) -> Result<()> {
    let (store, registry) = registry_store(url, global, prefix).await?;
    db.ensure_adopt_findings(tables).await?;
    let target = Target {
        series: store.sql(),
        numbers: &registry.numbers,
        findings: &tables.adopt_findings,
    };
    let total: usize = plans.iter().map(|p| p.issued.len() + p.voids.len()).sum();
    let mut held = Duration::ZERO;
    for (i, p) in plans.iter().enumerate() {
        ScopeKey::new(p.scope.as_str())?;
        let rows: Vec<AdoptedRow> = p
            .issued
            .iter()
            .map(|(n, order)| AdoptedRow {
                number: *n,
                status: "issued",
                reason: None,
                post_id: None,
                payment: Some(("woocommerce", order.to_string())),
            })
            .chain(p.voids.iter().map(|(n, why)| AdoptedRow {
                number: *n,
                status: "void",
                reason: Some(*why),
                post_id: None,
                payment: None,
            }))
            .collect();
        let findings: Vec<_> = p
            .duplicates
            .iter()
            .map(|(n, later, owner)| ("duplicate", *n, *later, *owner))
            .collect();
        let series = SeriesWrite {
            scope: &p.scope,
            start: p.start,
            highest: p.highest,
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
        if i + 1 < plans.len() && args.pause_ms > 0 {
            tokio::time::sleep(Duration::from_millis(args.pause_ms)).await;
        }
    }
    if global.json {
        println!(
            "{}",
            json!({"type": "done", "series": plans.len(), "registry_rows_written": total,
                   "longest_series_lock_ms": held.as_millis() as u64})
        );
    } else {
        println!(
            "\nadopted from WP Overnight: {} series, {total} registry rows written (each series in one transaction; its row held at most {} ms).",
            plans.len(),
            held.as_millis()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_order(number: u64, year: u32, order: u64) -> Taken {
        Taken {
            number,
            year,
            order: Some(order),
            on_order: true,
        }
    }

    fn in_store(number: u64, year: u32, order: u64) -> Taken {
        Taken {
            number,
            year,
            order: Some(order),
            on_order: false,
        }
    }

    #[test]
    fn a_yearly_store_starts_each_series_at_one_and_voids_what_no_order_carries() {
        let taken = [
            in_store(1, 2025, 10),
            on_order(1, 2025, 10),
            in_store(2, 2025, 11), // allocated, its PDF never saved
            in_store(3, 2025, 12),
            on_order(3, 2025, 12),
            on_order(3, 2025, 13), // WP Overnight's race: a second order
            on_order(5, 2025, 14), // 4 nowhere
            in_store(1, 2026, 20),
            on_order(1, 2026, 20),
        ];
        let plans = plan(0, true, &taken);
        assert_eq!(plans.len(), 2);
        let p = &plans[0];
        assert_eq!((p.scope.as_str(), p.start, p.highest), ("0:2025", 1, 5));
        assert_eq!(p.issued, BTreeMap::from([(1, 10), (3, 12), (5, 14)]));
        assert_eq!(p.voids, vec![(2, STORE_ONLY), (4, MISSING)]);
        assert_eq!(p.duplicates, vec![(3, 13, 12)]);
        assert_eq!(plans[1].scope, "0:2026");
        assert_eq!(plans[1].issued, BTreeMap::from([(1, 20)]));
    }

    #[test]
    fn one_sequence_across_years_starts_each_series_at_its_lowest() {
        let taken = [
            on_order(7, 2025, 1),
            on_order(8, 2025, 2),
            on_order(9, 2026, 3),
            on_order(11, 2026, 4),
        ];
        let plans = plan(3, false, &taken);
        assert_eq!(
            (plans[0].scope.as_str(), plans[0].start, plans[0].highest),
            ("3:2025", 7, 8)
        );
        assert!(plans[0].voids.is_empty());
        assert_eq!(
            (plans[1].scope.as_str(), plans[1].start, plans[1].highest),
            ("3:2026", 9, 11)
        );
        assert_eq!(plans[1].voids, vec![(10, MISSING)]);
    }
}
