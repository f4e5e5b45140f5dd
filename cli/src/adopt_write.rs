//! The writing half of `counterfoil adopt`, shared by both sources (the
//! site's invoice posts, `adopt_cmd`; WP Overnight's numbers, `adopt_wpo`):
//! the core's store with the registry's tables made, and one series adopted
//! in one transaction.
//!
//! Invariants:
//! - a series is adopted in ONE transaction: its row is locked first
//!   (`SELECT … FOR UPDATE`; a missing series is created inside the
//!   transaction, its new row locked by the insert), then its counter moves
//!   up to the highest adopted number, its registry rows are written
//!   (`INSERT IGNORE`, batched) with its findings, and the registry is read
//!   back (a locking read): the transaction commits only when every planned
//!   number has its planned owner; otherwise it rolls back and the error
//!   names the first conflicts. A series is adopted whole or not at all;
//! - while the transaction runs, a live allocation on that series (the
//!   plugin's, the core's: each starts with the UPDATE of the same row)
//!   waits for it, and then continues after the highest adopted number; an
//!   allocation that committed before the lock is seen by the read-back;
//! - the lock order is the live flows' own: the series row, then registry
//!   rows. One series row is held at a time, so two series never wait for
//!   each other; a deadlock (1213) or lock wait timeout (1205) rolls the
//!   whole series back and it is tried again, at most [`TRIES`] times;
//! - nothing pauses inside a transaction (a pause there would only hold the
//!   series row longer): the callers pause between series.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use counterfoil_core::{RegistrySql, SeriesSql, StoreConfig, TablePrefix};

use crate::cli::Global;
use crate::db::Db;

/// Attempts of one series' transaction when the server picks it as a
/// deadlock's victim or its lock wait times out.
pub(crate) const TRIES: u32 = 5;
/// Conflicts named in the error (the rest are counted).
const NAMED: usize = 5;

/// The core's store on the site's database with the registry's tables
/// made (both adopt sources write through it), and the registry's SQL names.
pub(crate) async fn registry_store(
    url: &str,
    global: &Global,
    prefix: &TablePrefix,
) -> Result<(counterfoil_core::SeriesStore, RegistrySql)> {
    let config = StoreConfig::new(url)
        .table_prefix(prefix.as_str())?
        .deadline(Duration::from_millis(global.timeout_ms.max(1)));
    let mut store = counterfoil_core::SeriesStore::connect(config).await?;
    store.ensure_registry_schema().await?;
    Ok((store, RegistrySql::new(prefix)))
}

/// A registry row adopt writes: a number issued to its owner (a post, or a
/// payment's gateway and transaction), or void with its reason.
pub(crate) struct AdoptedRow<'a> {
    pub number: u64,
    pub status: &'static str,
    pub reason: Option<&'a str>,
    pub post_id: Option<u64>,
    pub payment: Option<(&'static str, String)>,
}

impl AdoptedRow<'_> {
    /// Whether the registry row read back is this one's (the owner adopt
    /// planned, or void where adopt planned void).
    fn held_by(&self, found: &Found) -> bool {
        if self.status == "void" {
            return found.status == "void";
        }
        found.status != "void"
            && self.post_id.is_none_or(|p| found.post_id == Some(p))
            && self.payment.as_ref().is_none_or(|(g, t)| {
                found.gateway.as_deref() == Some(*g) && found.transaction.as_deref() == Some(t)
            })
    }

    fn owner(&self) -> String {
        match (&self.payment, self.post_id) {
            (Some((g, t)), _) => format!("{g}/{t}"),
            (None, Some(p)) => format!("post #{p}"),
            (None, None) => self.status.to_owned(),
        }
    }
}

/// A finding recorded with its series: (kind, number, post, other post).
pub(crate) type Finding = (&'static str, u64, u64, u64);

/// What one series' adoption writes.
pub(crate) struct SeriesWrite<'a> {
    pub scope: &'a str,
    /// The first number, should the series have to be created.
    pub start: u64,
    /// The counter moves up to at least this (the highest adopted number).
    pub highest: u64,
    pub rows: &'a [AdoptedRow<'a>],
    pub findings: &'a [Finding],
}

/// The tables one adoption writes.
pub(crate) struct Target<'a> {
    pub series: &'a SeriesSql,
    pub numbers: &'a str,
    pub findings: &'a str,
}

/// How a series' transaction went.
pub(crate) struct Adopted {
    /// From the series row's lock to the commit.
    pub held: Duration,
}

/// A registry row as read: number, status, post, gateway, transaction.
type FoundRow = (u64, String, Option<u64>, Option<String>, Option<String>);

/// A registry row as read back.
struct Found {
    status: String,
    post_id: Option<u64>,
    gateway: Option<String>,
    transaction: Option<String>,
}

impl Found {
    fn owner(&self) -> String {
        match (&self.gateway, &self.transaction, self.post_id) {
            (Some(g), Some(t), _) => format!("{} for {g}/{t}", self.status),
            (_, _, Some(p)) => format!("{} for post #{p}", self.status),
            _ => self.status.clone(),
        }
    }
}

/// Numbers of a series whose registry row is not adopt's planned one: the
/// series was rolled back.
#[derive(Debug)]
pub(crate) struct Conflicts {
    pub scope: String,
    pub total: usize,
    pub first: Vec<String>,
}

impl std::fmt::Display for Conflicts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "series {}: {} number(s) adopt was writing belong to something else in the registry ({}{}); \
             nothing of this series was written (rolled back): settle them by hand or run `counterfoil adopt` again to see the plan",
            self.scope,
            self.total,
            self.first.join("; "),
            if self.total > self.first.len() { "; …" } else { "" }
        )
    }
}

impl std::error::Error for Conflicts {}

/// Adopts one series in one transaction (see the module's invariants),
/// trying again after a deadlock or a lock wait timeout.
pub(crate) async fn adopt_series(
    db: &mut Db,
    target: &Target<'_>,
    series: &SeriesWrite<'_>,
    batch: usize,
    quiet: bool,
) -> Result<Adopted> {
    let mut tries = 0;
    loop {
        tries += 1;
        db.query_drop("START TRANSACTION").await?;
        let outcome = write(db, target, series, batch, quiet).await;
        match outcome {
            Ok(held) => {
                db.query_drop("COMMIT").await?;
                let held = held.elapsed();
                if !quiet {
                    eprintln!(
                        "adopt: {}: committed; the series row was held {} ms for {} registry rows",
                        series.scope,
                        held.as_millis(),
                        series.rows.len()
                    );
                }
                return Ok(Adopted { held });
            }
            Err(e) => {
                let _ = db.query_drop("ROLLBACK").await;
                if tries < TRIES && retryable(&e) {
                    if !quiet {
                        eprintln!("adopt: {}: {e:#}; rolled back, trying again", series.scope);
                    }
                    tokio::time::sleep(Duration::from_millis(50 * u64::from(tries))).await;
                    continue;
                }
                return Err(e);
            }
        }
    }
}

/// The transaction's statements; returns when the series row was locked.
async fn write(
    db: &mut Db,
    target: &Target<'_>,
    s: &SeriesWrite<'_>,
    batch: usize,
    quiet: bool,
) -> Result<Instant> {
    let sql = target.series;
    let mut locked: Option<(u64, Option<String>)> = db
        .rows(&sql.lock_series, (s.scope,))
        .await?
        .into_iter()
        .next();
    if locked.is_none() {
        // A new series: its row, locked by this insert until the commit.
        // Created by a live payment meanwhile (1062): lock that one.
        match db
            .exec(
                &sql.initialize,
                (s.scope, s.start.max(1) - 1, s.start.max(1)),
            )
            .await
        {
            Ok(_) => {}
            Err(e) if server_code(&e) == Some(1062) => {}
            Err(e) => return Err(e),
        }
        locked = db
            .rows(&sql.lock_series, (s.scope,))
            .await?
            .into_iter()
            .next();
    }
    let since = Instant::now();
    if locked.is_none() {
        anyhow::bail!("series {} could not be created", s.scope);
    }
    crate::adopt_pause::test_pause().await;
    if s.highest > 0 {
        db.exec(&sql.advance, (s.highest, s.scope)).await?;
    }
    insert_rows(db, target.numbers, s.scope, s.rows, batch, quiet).await?;
    let finding = format!(
        "INSERT IGNORE INTO `{}` (kind, scope_key, number, post_id, other_post_id, created_at) VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP())",
        target.findings
    );
    for (kind, number, post, other) in s.findings {
        db.exec(&finding, (*kind, s.scope, *number, *post, *other))
            .await?;
    }
    check(db, target.numbers, s).await?;
    Ok(since)
}

/// Writes the rows where missing (`INSERT IGNORE`), `batch` a statement,
/// with progress on stderr unless `quiet`.
async fn insert_rows(
    db: &mut Db,
    numbers: &str,
    scope: &str,
    rows: &[AdoptedRow<'_>],
    batch: usize,
    quiet: bool,
) -> Result<()> {
    let mut done = 0usize;
    for chunk in rows.chunks(batch.max(1)) {
        let values =
            vec!["(?, ?, ?, ?, 'adopt', ?, ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())"; chunk.len()]
                .join(", ");
        let mut params: Vec<mysql_async::Value> = Vec::with_capacity(chunk.len() * 7);
        for r in chunk {
            params.extend([
                mysql_async::Value::from(scope),
                mysql_async::Value::from(r.number),
                mysql_async::Value::from(r.status),
                mysql_async::Value::from(r.reason),
                mysql_async::Value::from(r.post_id),
                mysql_async::Value::from(r.payment.as_ref().map(|p| p.0)),
                mysql_async::Value::from(r.payment.as_ref().map(|p| p.1.as_str())),
            ]);
        }
        db.exec(
            &format!(
                "INSERT IGNORE INTO `{numbers}` (scope_key, number, status, reason, source, post_id, gateway, transaction_id, created_at, updated_at) VALUES {values}"
            ),
            params,
        )
        .await?;
        done += chunk.len();
        if !quiet {
            eprintln!("adopt: {scope}: registry {done}/{}", rows.len());
        }
    }
    Ok(())
}

/// Reads the series' registry back (a locking read: the latest committed
/// rows, not the transaction's snapshot) and fails with [`Conflicts`]
/// unless every planned number has its planned owner.
async fn check(db: &mut Db, numbers: &str, s: &SeriesWrite<'_>) -> Result<()> {
    let (Some(low), Some(high)) = (
        s.rows.iter().map(|r| r.number).min(),
        s.rows.iter().map(|r| r.number).max(),
    ) else {
        return Ok(());
    };
    let planned: BTreeMap<u64, &AdoptedRow<'_>> = s.rows.iter().map(|r| (r.number, r)).collect();
    let found: Vec<FoundRow> = db
        .rows(
            &format!(
                "SELECT number, status, post_id, gateway, transaction_id FROM `{numbers}` \
                 WHERE scope_key = ? AND number BETWEEN ? AND ? ORDER BY number LOCK IN SHARE MODE"
            ),
            (s.scope, low, high),
        )
        .await?;
    let mut seen = BTreeMap::new();
    let mut wrong = BTreeMap::new();
    for (number, status, post_id, gateway, transaction) in found {
        let Some(row) = planned.get(&number) else {
            continue;
        };
        let found = Found {
            status,
            post_id,
            gateway,
            transaction,
        };
        seen.insert(number, ());
        if !row.held_by(&found) {
            wrong.entry(number).or_insert_with(|| {
                format!(
                    "number {number} is {} in the registry, adopt's for {}",
                    found.owner(),
                    row.owner()
                )
            });
        }
    }
    for (number, row) in &planned {
        if !seen.contains_key(number) {
            wrong.insert(
                *number,
                format!(
                    "number {number} has no registry row, adopt's for {}",
                    row.owner()
                ),
            );
        }
    }
    if wrong.is_empty() {
        return Ok(());
    }
    Err(Conflicts {
        scope: s.scope.to_owned(),
        total: wrong.len(),
        first: wrong.into_values().take(NAMED).collect(),
    }
    .into())
}

/// The server's error code, if the error is the server's.
fn server_code(e: &anyhow::Error) -> Option<u16> {
    e.chain()
        .find_map(|c| match c.downcast_ref::<mysql_async::Error>() {
            Some(mysql_async::Error::Server(s)) => Some(s.code),
            _ => None,
        })
}

/// A deadlock's victim (1213) or a lock wait timeout (1205): the whole
/// series is tried again.
fn retryable(e: &anyhow::Error) -> bool {
    matches!(server_code(e), Some(1213 | 1205))
}
