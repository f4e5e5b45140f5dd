//! The facts check 5 (`chain_check`) reads, on MySQL/MariaDB and on
//! PostgreSQL: the series' heads, a series' entries in keyset chunks, an
//! entry's hash at a position, and the comparisons of the chain with the
//! registry and the payments (as SQL, so they run on the server's indexes
//! in bounded client memory).
//!
//! Invariants: only table names (from a checked prefix) are spliced into
//! the text; scopes and positions are bound. An entry's time is read as the
//! text it was hashed with (`YYYY-MM-DD HH:MM:SS`).

use anyhow::Result;
use counterfoil_core::chain::Entry;

use crate::chain_check::{stored, ChainTables, CHUNK};
use crate::db;
use crate::verify_cmd::Source;

/// Findings of one comparison listed at most.
const LIMIT: usize = 1_000;

fn u64_of(text: &str) -> Result<u64> {
    text.parse()
        .map_err(|_| anyhow::anyhow!("`{text}` is not a u64 number"))
}

/// `a` equals `b`, NULL equal to NULL.
fn same(pg: bool, a: &str, b: &str) -> String {
    if pg {
        format!("{a} IS NOT DISTINCT FROM {b}")
    } else {
        format!("{a} <=> {b}")
    }
}

/// The comparisons of the chain with the registry and payments: SQL (with
/// `{chain}`, `{numbers}`, `{payments}` quoted for the engine) and the
/// finding each row gives.
fn comparisons(pg: bool, t: &ChainTables<'_>) -> Vec<(String, &'static str)> {
    let q = |name: &str| {
        if pg {
            format!("\"{name}\"")
        } else {
            format!("`{name}`")
        }
    };
    let (chain, numbers, payments) = (q(t.chain), q(t.numbers), q(t.payments));
    let num = if pg { "::text" } else { "" };
    let first = format!(
        "(SELECT scope_key, MIN(number) AS first FROM {chain} WHERE event = 'issued' GROUP BY scope_key)"
    );
    let voided = format!(
        "EXISTS (SELECT 1 FROM {chain} c WHERE c.scope_key = n.scope_key AND c.number = n.number AND c.event = 'void')"
    );
    let facts = |a: &str, b: &str| {
        ["gateway", "transaction_id", "amount", "currency"]
            .iter()
            .map(|f| same(pg, &format!("{a}.{f}"), &format!("{b}.{f}")))
            .collect::<Vec<_>>()
            .join(" AND ")
    };
    vec![
        (
            format!(
                "SELECT DISTINCT c.scope_key, c.number{num} FROM {chain} c LEFT JOIN {numbers} n \
                 ON n.scope_key = c.scope_key AND n.number = c.number WHERE n.id IS NULL \
                 ORDER BY 1, 2 LIMIT {LIMIT}"
            ),
            "is in the chain but not in the registry: its row was deleted",
        ),
        (
            format!(
                "SELECT n.scope_key, n.number{num} FROM {numbers} n JOIN {first} f ON f.scope_key = n.scope_key \
                 AND n.number >= f.first WHERE NOT EXISTS (SELECT 1 FROM {chain} c WHERE c.scope_key = n.scope_key \
                 AND c.number = n.number) ORDER BY 1, 2 LIMIT {LIMIT}"
            ),
            "is in the registry but not in the chain: it was written behind the books' back",
        ),
        (
            format!(
                "SELECT n.scope_key, n.number{num} FROM {numbers} n LEFT JOIN {first} f ON f.scope_key = n.scope_key \
                 WHERE n.status <> 'void' AND {voided} ORDER BY 1, 2 LIMIT {LIMIT}"
            ),
            "was voided in the chain but the registry says it is not void: a void was turned back",
        ),
        (
            format!(
                "SELECT n.scope_key, n.number{num} FROM {numbers} n JOIN {first} f ON f.scope_key = n.scope_key \
                 AND n.number >= f.first WHERE n.status = 'void' AND NOT {voided} ORDER BY 1, 2 LIMIT {LIMIT}"
            ),
            "is void in the registry but the chain never voided it",
        ),
        (
            format!(
                "SELECT p.scope_key, p.number{num} FROM {payments} p JOIN {chain} c ON c.scope_key = p.scope_key \
                 AND c.number = p.number AND c.event = 'issued' WHERE NOT ({}) ORDER BY 1, 2 LIMIT {LIMIT}",
                facts("p", "c")
            ),
            "belongs to a payment whose gateway, transaction, amount or currency differ from what the chain recorded: the payment was edited",
        ),
        (
            format!(
                "SELECT n.scope_key, n.number{num} FROM {numbers} n JOIN {chain} c ON c.scope_key = n.scope_key \
                 AND c.number = n.number AND c.event = 'issued' WHERE c.gateway IS NOT NULL AND NOT ({} AND {}) \
                 ORDER BY 1, 2 LIMIT {LIMIT}",
                same(pg, "n.gateway", "c.gateway"),
                same(pg, "n.transaction_id", "c.transaction_id")
            ),
            "has a registry row whose payment differs from what the chain recorded: the row was edited",
        ),
    ]
}

impl Source {
    /// Whether `table` exists.
    pub(crate) async fn has_table(&mut self, table: &str) -> Result<bool> {
        match self {
            Source::MySql(db) => db.table_exists(table).await,
            Source::Postgres(c) => db::postgres_table_exists(c, table).await,
        }
    }

    /// Every series with its row's chain position and head.
    pub(crate) async fn chain_heads(
        &mut self,
        sequences: &str,
    ) -> Result<Vec<(String, u64, Option<String>)>> {
        match self {
            Source::MySql(db) => {
                db.rows(
                    &format!("SELECT scope_key, chain_seq, chain_head FROM `{sequences}` ORDER BY scope_key"),
                    (),
                )
                .await
            }
            Source::Postgres(c) => c
                .query(
                    &format!("SELECT scope_key, chain_seq, chain_head::text FROM \"{sequences}\" ORDER BY scope_key"),
                    &[],
                )
                .await?
                .iter()
                .map(|r| Ok((r.get(0), r.get::<_, i64>(1) as u64, r.get(2))))
                .collect(),
        }
    }

    /// The entries of `scope` after position `after`, at most a chunk.
    pub(crate) async fn chain_entries(
        &mut self,
        chain: &str,
        scope: &str,
        after: u64,
    ) -> Result<Vec<(u64, Entry, String, String)>> {
        match self {
            Source::MySql(db) => {
                type Row = (
                    u64,
                    u64,
                    String,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                    Option<u64>,
                    Option<String>,
                    String,
                    String,
                    String,
                );
                let rows: Vec<Row> = db
                    .rows(
                        &format!(
                            "SELECT seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, \
                             DATE_FORMAT(event_at, '%Y-%m-%d %H:%i:%s'), prev_hash, hash FROM `{chain}` \
                             WHERE scope_key = ? AND seq > ? ORDER BY seq LIMIT {CHUNK}"
                        ),
                        (scope, after),
                    )
                    .await?;
                Ok(rows
                    .into_iter()
                    .map(|(seq, n, event, g, x, a, c, post, reason, at, prev, hash)| {
                        stored(scope, seq, n, event, [g, x, a, c, reason], post, at, prev, hash)
                    })
                    .collect())
            }
            Source::Postgres(client) => client
                .query(
                    &format!(
                        "SELECT seq, number::text, event, gateway, transaction_id, amount, currency, post_id, reason, \
                         to_char(event_at, 'YYYY-MM-DD HH24:MI:SS'), prev_hash::text, hash::text FROM \"{chain}\" \
                         WHERE scope_key = $1 AND seq > $2 ORDER BY seq LIMIT {CHUNK}"
                    ),
                    &[&scope, &(after as i64)],
                )
                .await?
                .iter()
                .map(|r| {
                    let post: Option<i64> = r.get(7);
                    Ok(stored(
                        scope,
                        r.get::<_, i64>(0) as u64,
                        u64_of(r.get(1))?,
                        r.get(2),
                        [r.get(3), r.get(4), r.get(5), r.get(6), r.get(8)],
                        post.map(|p| p as u64),
                        r.get(9),
                        r.get(10),
                        r.get(11),
                    ))
                })
                .collect(),
        }
    }

    /// The hash at position `seq` of `scope`'s chain, if that entry exists.
    pub(crate) async fn chain_hash_at(
        &mut self,
        chain: &str,
        scope: &str,
        seq: u64,
    ) -> Result<Option<String>> {
        match self {
            Source::MySql(db) => Ok(db
                .rows::<String, _>(
                    &format!("SELECT hash FROM `{chain}` WHERE scope_key = ? AND seq = ?"),
                    (scope, seq),
                )
                .await?
                .into_iter()
                .next()),
            Source::Postgres(c) => Ok(c
                .query_opt(
                    &format!(
                        "SELECT hash::text FROM \"{chain}\" WHERE scope_key = $1 AND seq = $2"
                    ),
                    &[&scope, &(seq as i64)],
                )
                .await?
                .map(|r| r.get(0))),
        }
    }

    /// The findings of the chain compared with the registry and payments.
    pub(crate) async fn chain_against_registry(
        &mut self,
        t: &ChainTables<'_>,
    ) -> Result<Vec<String>> {
        let pg = matches!(self, Source::Postgres(_));
        let payments = self.has_table(t.payments).await?;
        let mut findings = Vec::new();
        for (i, (sql, what)) in comparisons(pg, t).into_iter().enumerate() {
            if !payments && i == 4 {
                continue;
            }
            let rows: Vec<(String, u64)> = match self {
                Source::MySql(db) => db.rows(&sql, ()).await?,
                Source::Postgres(c) => c
                    .query(&sql, &[])
                    .await?
                    .iter()
                    .map(|r| Ok((r.get(0), u64_of(r.get(1))?)))
                    .collect::<Result<_>>()?,
            };
            findings.extend(
                rows.into_iter()
                    .map(|(scope, n)| format!("series {scope}: number {n} {what}")),
            );
        }
        Ok(findings)
    }
}
