//! `counterfoil adopt --from wp-overnight`: takes over the numbering of WP
//! Overnight's "PDF Invoices & Packing Slips for WooCommerce".
//!
//! What is read (as its 5.16.1 writes it, and its older versions did):
//! - its number stores, `{prefix}wcpdf_invoice_number` and, where it resets
//!   yearly, `{prefix}wcpdf_invoice_number_{year}` (a lapsed year's): rows of
//!   `id`, `order_id`, `date` (the site's time) and, in its `calculate` mode,
//!   `calculated_number`, which then is the number (else `id` is); a row on
//!   no order (`order_id` 0) is the one its "next invoice number" setting
//!   writes (the number before the next), not a number handed out;
//! - its invoice settings (option `wpo_wcpdf_documents_settings_invoice`,
//!   serialized): whether it resets yearly (`reset_number_yearly`);
//! - each order's number: `_wcpdf_invoice_number_data`, a serialized array of
//!   its parts (`number`, `prefix`, `suffix`, `padding`, `formatted_number`,
//!   `document_type`, `order_id`) — the plain `number` is the registry's;
//!   `_wcpdf_invoice_number` is the FORMATTED number (`INV-0001`) since its
//!   2.0, the plain one before (read only where the parts are missing);
//!   without either, the store's row of that order; its local date in
//!   `_wcpdf_invoice_date_formatted`; in both order storages (posts, and
//!   WooCommerce's order tables). An order that carries Counterfoil's own
//!   number (`_counterfoil_invoice_number`: WP Overnight then keeps a copy
//!   of it) is Counterfoil's already and not read.
//!
//! Invariants:
//! - nothing is renumbered: every number an order carries stays that
//!   order's, registered as issued (gateway `woocommerce`, the order's id),
//!   whatever its prefix, suffix or padding; an order whose plain number
//!   cannot be told stops the adoption (nothing written) rather than be
//!   guessed;
//! - every number is accounted for: a number the store handed out that no
//!   order carries, and a number missing below the series' highest, is
//!   registered void with its reason;
//! - a number two orders carry (WP Overnight's own race, its issue #951) is
//!   owned by the lower order id; the other is recorded as a finding;
//! - a series is `{issuer}:{year}`, the year its number was issued in (the
//!   yearly store's year); a yearly series starts at 1, or where the shop
//!   set that year's next number (below any number an order carries); a
//!   single sequence that ran across years starts each year's series at that
//!   year's lowest number; every counter moves up to its highest, so the
//!   next order continues the sequence;
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
/// reset its numbers each year (each year's series starts at 1, or at
/// `floors`' number for that year: the next number the shop set).
pub fn plan(
    issuer: u64,
    yearly: bool,
    taken: &[Taken],
    floors: &BTreeMap<u32, u64>,
) -> Vec<SeriesPlan> {
    let mut by_year: BTreeMap<u32, Vec<Taken>> = BTreeMap::new();
    for t in taken {
        by_year.entry(t.year).or_default().push(*t);
    }
    let mut plans = Vec::new();
    for (year, mut all) in by_year {
        all.sort_by_key(|t| (t.number, !t.on_order, t.order));
        let lowest = all.first().map_or(1, |t| t.number.max(1));
        let mut p = SeriesPlan {
            scope: format!("{issuer}:{year}"),
            start: match (yearly, floors.get(&year)) {
                (true, Some(floor)) => (*floor).clamp(1, lowest),
                (true, None) => 1,
                (false, _) => lowest,
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

/// A value of PHP's serialize(), as WordPress stores arrays in meta and
/// options.
#[derive(Clone, Debug, PartialEq)]
enum Php {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    /// Keys as text (an integer key as its digits), in order.
    Array(Vec<(String, Php)>),
}

impl Php {
    /// The value under `key` of an array.
    fn get(&self, key: &str) -> Option<&Php> {
        match self {
            Php::Array(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A positive integer, from an integer or a string of digits (older
    /// versions stored numbers as strings).
    fn positive(&self) -> Option<u64> {
        match self {
            Php::Int(n) => u64::try_from(*n).ok().filter(|n| *n > 0),
            Php::Str(b) => std::str::from_utf8(b)
                .ok()?
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0),
            _ => None,
        }
    }

    /// Whether a setting is on (a checkbox: present and not empty).
    fn truthy(&self) -> bool {
        match self {
            Php::Null => false,
            Php::Bool(b) => *b,
            Php::Int(n) => *n != 0,
            Php::Float(f) => *f != 0.0,
            Php::Str(b) => !b.is_empty() && b.as_slice() != b"0",
            Php::Array(items) => !items.is_empty(),
        }
    }
}

/// Parses PHP's serialize() output (null, booleans, integers, floats,
/// strings, arrays; an object is not read): the value, or None.
fn unserialize(bytes: &[u8]) -> Option<Php> {
    fn until(b: &[u8], at: &mut usize, end: u8) -> Option<String> {
        let from = *at;
        let len = b.get(from..)?.iter().position(|c| *c == end)?;
        *at = from + len + 1;
        String::from_utf8(b[from..from + len].to_vec()).ok()
    }
    fn value(b: &[u8], at: &mut usize, depth: usize) -> Option<Php> {
        if depth > 32 {
            return None;
        }
        let kind = *b.get(*at)?;
        if kind == b'N' {
            (b.get(*at + 1) == Some(&b';')).then_some(())?;
            *at += 2;
            return Some(Php::Null);
        }
        (b.get(*at + 1) == Some(&b':')).then_some(())?;
        *at += 2;
        match kind {
            b'b' => Some(Php::Bool(until(b, at, b';')? == "1")),
            b'i' => until(b, at, b';')?.parse().ok().map(Php::Int),
            b'd' => until(b, at, b';')?.parse().ok().map(Php::Float),
            b's' => {
                let len: usize = until(b, at, b':')?.parse().ok()?;
                (b.get(*at) == Some(&b'"')).then_some(())?;
                let from = *at + 1;
                let text = b.get(from..from.checked_add(len)?)?.to_vec();
                (b.get(from + len..from + len + 2) == Some(b"\";".as_slice())).then_some(())?;
                *at = from + len + 2;
                Some(Php::Str(text))
            }
            b'a' => {
                let count: usize = until(b, at, b':')?.parse().ok()?;
                (b.get(*at) == Some(&b'{')).then_some(())?;
                *at += 1;
                let mut items = Vec::with_capacity(count.min(64));
                for _ in 0..count {
                    let key = match value(b, at, depth + 1)? {
                        Php::Int(n) => n.to_string(),
                        Php::Str(s) => String::from_utf8(s).ok()?,
                        _ => return None,
                    };
                    items.push((key, value(b, at, depth + 1)?));
                }
                (b.get(*at) == Some(&b'}')).then_some(())?;
                *at += 1;
                Some(Php::Array(items))
            }
            _ => None,
        }
    }
    let mut at = 0;
    let v = value(bytes, &mut at, 0)?;
    (at == bytes.len()).then_some(v)
}

/// The plain number an order's WP Overnight meta gives: its parts'
/// `number` (`_wcpdf_invoice_number_data`), else `_wcpdf_invoice_number`
/// when it is a plain number (WP Overnight before 2.0 kept the plain number
/// there; since, the formatted one), else None.
fn plain_number(formatted: Option<&[u8]>, data: Option<&[u8]>) -> Option<u64> {
    let parts = data.and_then(unserialize);
    if let Some(n) = parts
        .as_ref()
        .and_then(|p| p.get("number"))
        .and_then(Php::positive)
    {
        return Some(n);
    }
    formatted.and_then(|f| Php::Str(f.to_vec()).positive())
}

/// What WP Overnight left: the numbers, whether it reset yearly, and per
/// year the next number its "next invoice number" setting set (a floor).
struct Read {
    taken: Vec<Taken>,
    yearly: bool,
    floors: BTreeMap<u32, u64>,
}

/// Reads WP Overnight's stores, its settings and the orders' numbers.
async fn read(db: &mut Db, prefix: &str) -> Result<Read> {
    let base = format!("{prefix}wcpdf_invoice_number");
    let like = format!("{}%", base.replace('_', "\\_"));
    let stores: Vec<String> = db
        .rows::<String, _>(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME",
            (like.as_str(),),
        )
        .await?;
    let mut taken = Vec::new();
    let mut floors: BTreeMap<u32, u64> = BTreeMap::new();
    // Its setting, where the option is there (a suffixed store says so too).
    let settings: Vec<Vec<u8>> = db
        .rows(
            &format!(
                "SELECT option_value FROM `{prefix}options` WHERE option_name = 'wpo_wcpdf_documents_settings_invoice'"
            ),
            (),
        )
        .await?;
    let mut yearly = settings
        .first()
        .and_then(|v| unserialize(v))
        .and_then(|s| s.get("reset_number_yearly").map(Php::truthy))
        .unwrap_or(false);
    // order → the numbers the store gave it (for an order without its parts).
    let mut store_of: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
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
        let calculated: Vec<u64> = db
            .rows(
                "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'calculated_number'",
                (table.as_str(),),
            )
            .await?;
        let number = if calculated.first().copied().unwrap_or(0) > 0 {
            "COALESCE(NULLIF(calculated_number, 0), id)"
        } else {
            "id"
        };
        let rows: Vec<(u64, Option<u64>, Option<String>)> = db
            .rows(
                &format!(
                    "SELECT {number}, order_id, CAST(date AS CHAR) FROM `{table}` ORDER BY id"
                ),
                (),
            )
            .await?;
        for (number, order, date) in rows {
            let Some(year) = year.or_else(|| date.as_deref().and_then(year_of)) else {
                continue;
            };
            match order.filter(|o| *o > 0) {
                // Its "next invoice number" setting: the number before the next, on no order.
                None => {
                    let floor = floors.entry(year).or_insert(0);
                    *floor = (*floor).max(number + 1);
                }
                Some(order) => {
                    store_of.entry(order).or_default().push(number);
                    taken.push(Taken {
                        number,
                        year,
                        order: Some(order),
                        on_order: false,
                    });
                }
            }
        }
    }
    // The orders' numbers: posts storage, and WooCommerce's order tables.
    let tables = Tables::new(&TablePrefix::new(prefix)?);
    let mut carried: BTreeMap<u64, (u64, Option<String>)> = BTreeMap::new();
    // (order table, its id column, meta table, its order column, type column)
    let mut storages = vec![(
        tables.posts.clone(),
        "ID",
        tables.postmeta.clone(),
        "post_id",
        "post_type",
    )];
    let orders_table = format!("{prefix}wc_orders");
    let orders_meta = format!("{prefix}wc_orders_meta");
    if db.table_exists(&orders_table).await? && db.table_exists(&orders_meta).await? {
        storages.push((orders_table, "id", orders_meta, "order_id", "type"));
    }
    type OrderRow = (u64, Option<Vec<u8>>, Option<Vec<u8>>, Option<String>);
    let mut rows: Vec<OrderRow> = Vec::new();
    for (orders, id, meta, order_col, type_col) in &storages {
        let of = |key: &str| {
            format!(
                "(SELECT d.meta_value FROM `{meta}` d WHERE d.{order_col} = o.{id} AND d.meta_key = '{key}' ORDER BY d.meta_value = '' LIMIT 1)"
            )
        };
        rows.extend(
            db.rows::<OrderRow, _>(
                &format!(
                    "SELECT o.{id}, {}, {}, {} FROM `{orders}` o \
                     WHERE o.{type_col} = 'shop_order' \
                     AND EXISTS (SELECT 1 FROM `{meta}` m WHERE m.{order_col} = o.{id} \
                         AND m.meta_key IN ('_wcpdf_invoice_number', '_wcpdf_invoice_number_data') AND m.meta_value <> '') \
                     AND NOT EXISTS (SELECT 1 FROM `{meta}` c WHERE c.{order_col} = o.{id} \
                         AND c.meta_key = '_counterfoil_invoice_number' AND c.meta_value <> '')",
                    of("_wcpdf_invoice_number"),
                    of("_wcpdf_invoice_number_data"),
                    of("_wcpdf_invoice_date_formatted"),
                ),
                (),
            )
            .await?,
        );
    }
    for (order, formatted, data, date) in rows {
        let number = match plain_number(formatted.as_deref(), data.as_deref()) {
            Some(n) => n,
            None => match store_of.get(&order).map(Vec::as_slice) {
                Some([n]) => *n,
                _ => bail!(
                    "order {order} carries WP Overnight number {:?} without its parts (_wcpdf_invoice_number_data) and no single store row names it: its plain number is unknown; settle it by hand (nothing was changed)",
                    String::from_utf8_lossy(formatted.as_deref().unwrap_or_default())
                ),
            },
        };
        carried.insert(order, (number, date));
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
    Ok(Read {
        taken,
        yearly,
        floors,
    })
}

/// The command.
pub async fn run(global: &Global, args: &AdoptArgs) -> Result<Outcome> {
    let url = crate::database_url(global)?;
    let prefix = TablePrefix::new(&global.table_prefix)?;
    let tables = Tables::new(&prefix);
    let deadline = Duration::from_millis(global.timeout_ms.max(1000) * 20);
    let mut db = Db::connect(&url, deadline).await?;
    crate::db::require_wordpress(&mut db, &tables).await?;
    let Read {
        taken,
        yearly,
        floors,
    } = read(&mut db, prefix.as_str()).await?;
    if taken.is_empty() {
        bail!(
            "nothing to adopt: no WP Overnight number store ({}wcpdf_invoice_number…) and no order with _wcpdf_invoice_number",
            prefix.as_str()
        );
    }
    let plans = plan(args.issuer, yearly, &taken, &floors);
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
        let plans = plan(0, true, &taken, &BTreeMap::new());
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
        let plans = plan(3, false, &taken, &BTreeMap::new());
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

    #[test]
    fn a_yearly_series_starts_where_the_shop_set_its_next_number() {
        let taken = [on_order(101, 2026, 1), on_order(103, 2026, 2)];
        let floors = BTreeMap::from([(2026, 101)]);
        let p = &plan(0, true, &taken, &floors)[0];
        assert_eq!((p.start, p.highest), (101, 103));
        assert_eq!(p.voids, vec![(102, MISSING)]);
        // A number an order carries below the floor still starts the series.
        let taken = [on_order(7, 2026, 1), on_order(101, 2026, 2)];
        assert_eq!(plan(0, true, &taken, &floors)[0].start, 7);
    }

    #[test]
    fn the_plain_number_is_the_parts_number_never_the_formatted_one() {
        // As WP Overnight 5.16.1 saves a DocumentNumber's to_array().
        let data = br#"a:7:{s:6:"number";i:101;s:16:"formatted_number";s:8:"INV-0101";s:6:"prefix";s:4:"INV-";s:6:"suffix";s:0:"";s:13:"document_type";s:7:"invoice";s:8:"order_id";i:12;s:7:"padding";i:4;}"#;
        assert_eq!(plain_number(Some(b"INV-0101"), Some(data)), Some(101));
        // Older versions stored the number as a string; a multibyte prefix.
        let data = "a:3:{s:6:\"number\";s:1:\"7\";s:16:\"formatted_number\";s:5:\"\u{20ac}-7\";s:6:\"prefix\";s:4:\"\u{20ac}-\";}";
        let parsed = unserialize(data.as_bytes()).unwrap();
        assert_eq!(
            parsed.get("prefix"),
            Some(&Php::Str("\u{20ac}-".as_bytes().to_vec()))
        );
        assert_eq!(plain_number(None, Some(data.as_bytes())), Some(7));
        // Before its 2.0: the plain number in _wcpdf_invoice_number, no parts.
        assert_eq!(plain_number(Some(b"42"), None), Some(42));
        // A formatted number alone is not guessed at.
        assert_eq!(plain_number(Some(b"INV-0001"), None), None);
        assert_eq!(
            plain_number(Some(b"INV-0001"), Some(b"a:1:{s:6:\"number\";N;}")),
            None
        );
        // Not PHP's serialize(): nothing.
        for bad in [
            &b"a:2:{s:6:\"number\";i:1;}"[..],
            b"s:9:\"short\";",
            b"O:8:\"stdClass\":0:{}",
            b"i:1;x",
        ] {
            assert_eq!(unserialize(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        let settings = br#"a:2:{s:7:"enabled";s:1:"1";s:19:"reset_number_yearly";s:1:"1";}"#;
        assert!(unserialize(settings)
            .unwrap()
            .get("reset_number_yearly")
            .unwrap()
            .truthy());
    }
}
