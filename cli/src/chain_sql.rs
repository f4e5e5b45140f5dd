//! The facts check 5 (`chain_check`) reads, on MySQL/MariaDB and on
//! PostgreSQL: the series' heads, the chain's entries and the registry with
//! its payments in keyset chunks (each in its index's order), the statuses
//! of voided numbers, an entry's hash at a position, and the registry's
//! voids the chain never recorded.
//!
//! Invariants: only table names (from a checked prefix) are spliced into
//! the text; scopes and positions are bound. An entry's time is read as the
//! text it was hashed with (`YYYY-MM-DD HH:MM:SS`).

use anyhow::Result;
use counterfoil_core::chain::Entry;

use crate::chain_facts::{stored, ChainTables, PaymentRow, RegistryRow, CHUNK};
use crate::db;
use crate::verify_source::{u64_of, Source};

/// Findings of one comparison listed at most.
const LIMIT: usize = 1_000;

/// The registry's void numbers of a chained series (from its `chain_from`
/// on) that the chain never voided: found through the (series, status)
/// index, the chain's side index-only.
fn unchained_voids(pg: bool, t: &ChainTables<'_>) -> String {
    let q = |name: &str| {
        if pg {
            format!("\"{name}\"")
        } else {
            format!("`{name}`")
        }
    };
    let (chain, numbers, sequences) = (q(t.chain), q(t.numbers), q(t.sequences));
    let (num, force) = if pg {
        ("::text", "")
    } else {
        ("", " FORCE INDEX (scope_status)")
    };
    format!(
        "SELECT n.scope_key, n.number{num} FROM {sequences} s JOIN {numbers} n{force} \
         ON n.scope_key = s.scope_key AND n.status = 'void' AND n.number >= s.chain_from \
         LEFT JOIN {chain} c ON c.scope_key = n.scope_key AND c.number = n.number AND c.event = 'void' \
         WHERE s.chain_from IS NOT NULL AND c.scope_key IS NULL LIMIT {LIMIT}"
    )
}

impl Source {
    /// Whether `table` exists.
    pub(crate) async fn has_table(&mut self, table: &str) -> Result<bool> {
        match self {
            Source::MySql(db) => db.table_exists(table).await,
            Source::Postgres(c) => db::postgres_table_exists(c, table).await,
        }
    }

    /// Every series with its row's chain position, head and first number.
    pub(crate) async fn chain_heads(
        &mut self,
        sequences: &str,
    ) -> Result<Vec<(String, u64, Option<String>, Option<u64>)>> {
        match self {
            Source::MySql(db) => {
                db.rows(
                    &format!("SELECT scope_key, chain_seq, chain_head, chain_from FROM `{sequences}`"),
                    (),
                )
                .await
            }
            Source::Postgres(c) => c
                .query(
                    &format!("SELECT scope_key, chain_seq, chain_head::text, chain_from::text FROM \"{sequences}\""),
                    &[],
                )
                .await?
                .iter()
                .map(|r| {
                    let from: Option<&str> = r.get(3);
                    Ok((r.get(0), r.get::<_, i64>(1) as u64, r.get(2), from.map(u64_of).transpose()?))
                })
                .collect(),
        }
    }

    /// The chain's entries after (`scope`, `after`) in key order (series,
    /// then position), at most a chunk.
    pub(crate) async fn chain_entries_after(
        &mut self,
        chain: &str,
        scope: &str,
        after: u64,
    ) -> Result<Vec<(u64, Entry, String)>> {
        match self {
            Source::MySql(db) => {
                let rows: Vec<mysql_async::Row> = db
                    .rows(
                        &format!(
                            "SELECT scope_key, seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, \
                             event_at, hash FROM `{chain}` FORCE INDEX (PRIMARY) \
                             WHERE scope_key > ? OR (scope_key = ? AND seq > ?) ORDER BY scope_key, seq LIMIT {CHUNK}"
                        ),
                        (scope, scope, after),
                    )
                    .await?;
                rows.into_iter()
                    .map(|mut r| {
                        let text = |r: &mut mysql_async::Row, i: usize| -> Result<Option<String>> {
                            r.take_opt::<Option<String>, _>(i)
                                .transpose()
                                .map(Option::flatten)
                                .map_err(|e| anyhow::anyhow!("chain column {i}: {e}"))
                        };
                        let int = |r: &mut mysql_async::Row, i: usize| -> Result<Option<u64>> {
                            r.take_opt::<Option<u64>, _>(i)
                                .transpose()
                                .map(Option::flatten)
                                .map_err(|e| anyhow::anyhow!("chain column {i}: {e}"))
                        };
                        let s = text(&mut r, 0)?.unwrap_or_default();
                        let texts = [
                            text(&mut r, 4)?,
                            text(&mut r, 5)?,
                            text(&mut r, 6)?,
                            text(&mut r, 7)?,
                            text(&mut r, 9)?,
                        ];
                        let at = match r.take_opt::<mysql_async::Value, _>(10) {
                            Some(Ok(mysql_async::Value::Date(y, mo, d, h, mi, se, _))) => {
                                format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{se:02}")
                            }
                            _ => anyhow::bail!("chain column 10: not a DATETIME"),
                        };
                        Ok(stored(
                            &s,
                            int(&mut r, 1)?.unwrap_or_default(),
                            int(&mut r, 2)?.unwrap_or_default(),
                            text(&mut r, 3)?.unwrap_or_default(),
                            texts,
                            int(&mut r, 8)?,
                            at,
                            text(&mut r, 11)?.unwrap_or_default(),
                        ))
                    })
                    .collect()
            }
            Source::Postgres(client) => client
                .query(
                    &format!(
                        "SELECT scope_key, seq, number::text, event, gateway, transaction_id, amount, currency, post_id, reason, \
                         to_char(event_at, 'YYYY-MM-DD HH24:MI:SS'), hash::text FROM \"{chain}\" \
                         WHERE (scope_key, seq) > ($1, $2) ORDER BY scope_key, seq LIMIT {CHUNK}"
                    ),
                    &[&scope, &(after as i64)],
                )
                .await?
                .iter()
                .map(|r| {
                    let post: Option<i64> = r.get(8);
                    let s: String = r.get(0);
                    Ok(stored(
                        &s,
                        r.get::<_, i64>(1) as u64,
                        u64_of(r.get(2))?,
                        r.get(3),
                        [r.get(4), r.get(5), r.get(6), r.get(7), r.get(9)],
                        post.map(|p| p as u64),
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

    /// The registry's voids the chain never recorded.
    pub(crate) async fn unchained_voids(&mut self, t: &ChainTables<'_>) -> Result<Vec<String>> {
        let pg = matches!(self, Source::Postgres(_));
        let sql = unchained_voids(pg, t);
        let rows: Vec<(String, u64)> = match self {
            Source::MySql(db) => db.rows(&sql, ()).await?,
            Source::Postgres(c) => c
                .query(&sql, &[])
                .await?
                .iter()
                .map(|r| Ok((r.get(0), u64_of(r.get(1))?)))
                .collect::<Result<_>>()?,
        };
        Ok(rows
            .into_iter()
            .map(|(scope, n)| {
                format!("series {scope}: number {n} is void in the registry but the chain never voided it")
            })
            .collect())
    }

    /// Registry rows after (`scope`, `after`) in (series, number) order, at
    /// most a chunk (read on the (series, number) index: no sort).
    pub(crate) async fn registry_after(
        &mut self,
        t: &ChainTables<'_>,
        scope: &str,
        after: u64,
    ) -> Result<Vec<RegistryRow>> {
        match self {
            Source::MySql(db) => Ok(db
                .rows::<(String, u64, String, Option<String>, Option<String>), _>(
                    &format!(
                        "SELECT scope_key, number, status, gateway, transaction_id FROM `{}` FORCE INDEX (scope_number) \
                         WHERE scope_key > ? OR (scope_key = ? AND number > ?) ORDER BY scope_key, number LIMIT {CHUNK}",
                        t.numbers
                    ),
                    (scope, scope, after),
                )
                .await?
                .into_iter()
                .map(|(s, n, status, g, x)| (s, n, status, [g, x]))
                .collect()),
            Source::Postgres(c) => c
                .query(
                    &format!(
                        "SELECT scope_key, number::text, status, gateway, transaction_id::text FROM \"{}\" \
                         WHERE (scope_key, number) > ($1, $2::text::numeric) ORDER BY scope_key, number LIMIT {CHUNK}",
                        t.numbers
                    ),
                    &[&scope, &after.to_string()],
                )
                .await?
                .iter()
                .map(|r| Ok((r.get(0), u64_of(r.get(1))?, r.get(2), [r.get(3), r.get(4)])))
                .collect(),
        }
    }

    /// Numbered payments after (`scope`, `after`) in (series, number) order,
    /// at most a chunk; none without a payments table.
    pub(crate) async fn payments_after(
        &mut self,
        t: &ChainTables<'_>,
        scope: &str,
        after: u64,
    ) -> Result<Vec<PaymentRow>> {
        if !self.has_table(t.payments).await? {
            return Ok(Vec::new());
        }
        match self {
            Source::MySql(db) => {
                type Row = (String, u64, Option<String>, Option<String>, Option<String>, Option<String>);
                Ok(db
                    .rows::<Row, _>(
                        &format!(
                            "SELECT scope_key, number, gateway, transaction_id, amount, currency FROM `{}` FORCE INDEX (scope_number) \
                             WHERE number IS NOT NULL AND (scope_key > ? OR (scope_key = ? AND number > ?)) \
                             ORDER BY scope_key, number LIMIT {CHUNK}",
                            t.payments
                        ),
                        (scope, scope, after),
                    )
                    .await?
                    .into_iter()
                    .map(|(s, n, g, x, a, c)| (s, n, [g, x, a, c]))
                    .collect())
            }
            Source::Postgres(c) => c
                .query(
                    &format!(
                        "SELECT scope_key, number::text, gateway, transaction_id::text, amount, currency FROM \"{}\" \
                         WHERE number IS NOT NULL AND (scope_key, number) > ($1, $2::text::numeric) \
                         ORDER BY scope_key, number LIMIT {CHUNK}",
                        t.payments
                    ),
                    &[&scope, &after.to_string()],
                )
                .await?
                .iter()
                .map(|r| Ok((r.get(0), u64_of(r.get(1))?, [r.get(2), r.get(3), r.get(4), r.get(5)])))
                .collect(),
        }
    }

    /// The statuses of `numbers` of `scope` that the registry holds.
    pub(crate) async fn statuses(
        &mut self,
        numbers_table: &str,
        scope: &str,
        numbers: &[u64],
    ) -> Result<std::collections::HashMap<u64, String>> {
        let list = numbers
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        match self {
            Source::MySql(db) => Ok(db
                .rows::<(u64, String), _>(
                    &format!("SELECT number, status FROM `{numbers_table}` WHERE scope_key = ? AND number IN ({list})"),
                    (scope,),
                )
                .await?
                .into_iter()
                .collect()),
            Source::Postgres(c) => c
                .query(
                    &format!("SELECT number::text, status FROM \"{numbers_table}\" WHERE scope_key = $1 AND number IN ({list})"),
                    &[&scope],
                )
                .await?
                .iter()
                .map(|r| Ok((u64_of(r.get(0))?, r.get(1))))
                .collect(),
        }
    }
}
