//! Where `counterfoil verify` reads its facts: one connection to
//! MySQL/MariaDB or PostgreSQL ([`Source`]), and the reads of checks 1–4 on
//! each engine (the chain's reads, check 5, are `chain_sql`). Reads only:
//! nothing here writes.
//!
//! Invariants: only table names (from a checked prefix) are spliced into
//! the text; scopes and numbers are bound; a registry read returns at most
//! [`CHUNK`] rows, in the index's order.

use anyhow::Result;

use crate::db::Db;

/// Registry rows read per query: memory stays bounded at any series length.
pub(crate) const CHUNK: usize = 10_000;

/// Where the facts come from.
pub(crate) enum Source {
    MySql(Db),
    Postgres(tokio_postgres::Client),
}

pub(crate) type Duplicate = (String, u64, u64);
pub(crate) type Behind = (String, u64, Option<u64>);
pub(crate) type SeriesRow = (String, u64, Option<u64>);
pub(crate) type NumberRow = (u64, String, String, i64);

pub(crate) fn u64_of(text: &str) -> Result<u64> {
    text.parse()
        .map_err(|_| anyhow::anyhow!("`{text}` is not a u64 number"))
}

impl Source {
    pub(crate) async fn has_unique(&mut self, numbers: &str) -> Result<bool> {
        match self {
            Source::MySql(db) => db.has_unique_scope_number(numbers).await,
            Source::Postgres(c) => {
                let n: i64 = c
                    .query_one(
                        "SELECT COUNT(*) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid \
                         WHERE t.oid = to_regclass($1) AND i.indisunique AND i.indnatts = 2 \
                         AND (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord) \
                              JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) = ARRAY['scope_key', 'number']",
                        &[&format!("\"{numbers}\"")],
                    )
                    .await?
                    .get(0);
                Ok(n > 0)
            }
        }
    }

    pub(crate) async fn duplicates(&mut self, numbers: &str) -> Result<Vec<Duplicate>> {
        match self {
            Source::MySql(db) => db
                .rows(
                    &format!("SELECT scope_key, number, COUNT(*) FROM `{numbers}` GROUP BY scope_key, number HAVING COUNT(*) > 1 LIMIT 1000"),
                    (),
                )
                .await,
            Source::Postgres(c) => c
                .query(
                    &format!("SELECT scope_key, number::text, COUNT(*) FROM \"{numbers}\" GROUP BY scope_key, number HAVING COUNT(*) > 1 LIMIT 1000"),
                    &[],
                )
                .await?
                .iter()
                .map(|r| Ok((r.get(0), u64_of(r.get(1))?, r.get::<_, i64>(2) as u64)))
                .collect(),
        }
    }

    pub(crate) async fn behind(&mut self, numbers: &str, sequences: &str) -> Result<Vec<Behind>> {
        match self {
            Source::MySql(db) => db
                .rows(
                    &format!(
                        "SELECT n.scope_key, MAX(n.number), s.current_value FROM `{numbers}` n LEFT JOIN `{sequences}` s ON s.scope_key = n.scope_key \
                         GROUP BY n.scope_key, s.current_value HAVING s.current_value IS NULL OR MAX(n.number) > s.current_value"
                    ),
                    (),
                )
                .await,
            Source::Postgres(c) => c
                .query(
                    &format!(
                        "SELECT n.scope_key, MAX(n.number)::text, s.current_value::text FROM \"{numbers}\" n LEFT JOIN \"{sequences}\" s ON s.scope_key = n.scope_key \
                         GROUP BY n.scope_key, s.current_value HAVING s.current_value IS NULL OR MAX(n.number) > s.current_value"
                    ),
                    &[],
                )
                .await?
                .iter()
                .map(|r| {
                    let current: Option<&str> = r.get(2);
                    Ok((r.get(0), u64_of(r.get(1))?, current.map(u64_of).transpose()?))
                })
                .collect(),
        }
    }

    pub(crate) async fn series(&mut self, sequences: &str) -> Result<Vec<SeriesRow>> {
        match self {
            Source::MySql(db) => db
                .rows(
                    &format!("SELECT scope_key, current_value, start_value FROM `{sequences}` ORDER BY scope_key"),
                    (),
                )
                .await,
            Source::Postgres(c) => c
                .query(
                    &format!("SELECT scope_key, current_value::text, start_value::text FROM \"{sequences}\" ORDER BY scope_key"),
                    &[],
                )
                .await?
                .iter()
                .map(|r| {
                    let start: Option<&str> = r.get(2);
                    Ok((r.get(0), u64_of(r.get(1))?, start.map(u64_of).transpose()?))
                })
                .collect(),
        }
    }

    pub(crate) async fn lowest(&mut self, numbers: &str, scope: &str) -> Result<Option<u64>> {
        match self {
            Source::MySql(db) => Ok(db
                .rows::<Option<u64>, _>(
                    &format!("SELECT MIN(number) FROM `{numbers}` WHERE scope_key = ?"),
                    (scope,),
                )
                .await?
                .into_iter()
                .flatten()
                .next()),
            Source::Postgres(c) => {
                let min: Option<String> = c
                    .query_one(
                        &format!(
                            "SELECT MIN(number)::text FROM \"{numbers}\" WHERE scope_key = $1"
                        ),
                        &[&scope],
                    )
                    .await?
                    .get(0);
                min.as_deref().map(u64_of).transpose()
            }
        }
    }

    /// At most [`CHUNK`] registry rows of `scope` from `from` to `to`, in
    /// order (a keyset page on the (scope_key, number) index).
    pub(crate) async fn numbers(
        &mut self,
        numbers: &str,
        scope: &str,
        from: u64,
        to: u64,
    ) -> Result<Vec<NumberRow>> {
        match self {
            Source::MySql(db) => db
                .rows(
                    &format!(
                        "SELECT number, status, COALESCE(reason, ''), TIMESTAMPDIFF(MINUTE, updated_at, UTC_TIMESTAMP()) \
                         FROM `{numbers}` WHERE scope_key = ? AND number BETWEEN ? AND ? ORDER BY number LIMIT {CHUNK}"
                    ),
                    (scope, from, to),
                )
                .await,
            Source::Postgres(c) => c
                .query(
                    &format!(
                        "SELECT number::text, status, COALESCE(reason, ''), \
                         (EXTRACT(EPOCH FROM (timezone('UTC', now()) - updated_at)) / 60)::bigint \
                         FROM \"{numbers}\" WHERE scope_key = $1 AND number BETWEEN $2::text::numeric AND $3::text::numeric \
                         ORDER BY number LIMIT {CHUNK}"
                    ),
                    &[&scope, &from.to_string(), &to.to_string()],
                )
                .await?
                .iter()
                .map(|r| Ok((u64_of(r.get(0))?, r.get(1), r.get(2), r.get(3))))
                .collect(),
        }
    }
}
