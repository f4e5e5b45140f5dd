//! Air waybill stock on PostgreSQL: the same pools, blocks, serial-order
//! issuing and transition table as on MySQL (`crate::store::awb_stock`).
//!
//! Invariants (as on MySQL): a block is imported whole or not at all; a
//! number already in stock refuses it; `issue_next` takes the lowest ready,
//! unexpired, unfrozen serial of its pool under a row lock (`ORDER BY serial
//! LIMIT 1 FOR UPDATE OF s`: a waiting issuer re-checks the row it waited
//! for and, when that one was taken, goes on to the next serial of its
//! sorted scan), so concurrent issuers get strictly increasing serials and
//! skip no ready number. `SKIP LOCKED` is not used: it would hand serials out
//! of order. Every status write checks [`crate::awb::can_transition`] on the
//! row read under its lock; a number has at most one live assignment
//! (unique index on (stock_id, live), NULL when released).

use tokio_postgres::types::ToSql;

use super::classify::is_state;
use super::sql::{PgAwbSql, UTC_NOW};
use super::{PgResult, PgStore};
use crate::awb::{can_transition, expand_block, Awb, AwbState};
use crate::awb_stock_rules::{
    bad_awb, check_name, check_transition_request, check_valid_to, plan_transition, refused,
    LockedNumber, TransitionPlan,
};
use crate::awb_stock_rules::{AwbStock, AwbTransition, PoolReport};
use crate::error::{Error, Result};

impl PgStore {
    /// Creates the AWB tables if missing.
    pub async fn awb_ensure_schema(&mut self) -> Result<()> {
        self.run("awb_ensure_schema", |client, sql| {
            Box::pin(async move { super::create_if_missing(client, &sql.awb.create).await })
        })
        .await
    }

    /// Imports the block `first ..= last` into pool `pool` (created for the
    /// block's airline prefix if missing), in one transaction; a number
    /// already in stock refuses the whole block.
    pub async fn awb_import_block(
        &mut self,
        pool: &str,
        first: &str,
        last: &str,
        valid_to: Option<&str>,
    ) -> Result<usize> {
        check_name("pool", pool, 64)?;
        let block = expand_block(first, last).map_err(bad_awb)?;
        check_valid_to(valid_to)?;
        let prefix = i32::from(block[0].prefix());
        let (pool, valid_to) = (pool.to_owned(), valid_to.map(str::to_owned));
        self.run("awb_import_block", move |client, sql| {
            let (block, pool, valid_to) = (block.clone(), pool.clone(), valid_to.clone());
            Box::pin(async move {
                let tx = client.begin().await?;
                tx.execute(
                    &sql.awb.insert_pool,
                    &[&pool, &prefix],
                )
                .await?;
                let row = tx
                    .query_opt(&sql.awb.lock_pool, &[&pool])
                    .await?;
                let Some(row) = row else {
                    return Ok(Err(Error::Unexpected("pool vanished".into())));
                };
                let (pool_id, pool_prefix): (i64, i32) = (row.get(0), row.get(1));
                if pool_prefix != prefix {
                    return Ok(Err(refused(format!(
                        "pool {pool} holds airline prefix {pool_prefix:03}, the block is {prefix:03}; nothing imported"
                    ))));
                }
                for chunk in block.chunks(500) {
                    let mut values = Vec::with_capacity(chunk.len());
                    let owned: Vec<(String, i32, i64)> = chunk
                        .iter()
                        .map(|a| (a.to_string(), i32::from(a.prefix()), i64::from(a.serial())))
                        .collect();
                    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&pool_id, &valid_to];
                    for (i, (number, prefix, serial)) in owned.iter().enumerate() {
                        let b = 3 + i * 3;
                        values.push(format!("($1, ${b}, ${}, ${}, 'ready', $2::text::date, {UTC_NOW})", b + 1, b + 2));
                        params.extend([number as &(dyn ToSql + Sync), prefix, serial]);
                    }
                    let stmt = format!("{}{}", sql.awb.insert_stock_head, values.join(", "));
                    if let Err(e) = tx.execute(&stmt, &params).await {
                        if is_state(&e, "23505") {
                            let dup = e
                                .as_db_error()
                                .and_then(|d| d.detail())
                                .and_then(|d| d.split("=(").nth(1))
                                .and_then(|d| d.split(')').next())
                                .unwrap_or("a number")
                                .to_owned();
                            return Ok(Err(refused(format!(
                                "{dup} is already in stock; the block {} … {} was not imported",
                                block[0],
                                block[block.len() - 1]
                            ))));
                        }
                        return Err(e);
                    }
                }
                tx.commit().await?;
                Ok(Ok(block.len()))
            })
        })
        .await
    }

    /// Assigns the lowest ready, unexpired, unfrozen serial of `pool` to
    /// `shipment`, under a row lock.
    pub async fn awb_issue_next(&mut self, pool: &str, shipment: &str) -> Result<Awb> {
        check_name("shipment", shipment, 64)?;
        let (pool, shipment) = (pool.to_owned(), shipment.to_owned());
        self.run("awb_issue_next", move |client, sql| {
            let (pool, shipment) = (pool.clone(), shipment.clone());
            Box::pin(async move {
                let tx = client.begin().await?;
                let row = tx
                    .query_opt(
                        &sql.awb.lock_next_ready,
                        &[&pool],
                    )
                    .await?;
                let Some(row) = row else {
                    return Ok(Err(refused(format!(
                        "pool {pool} has no ready number (none left, or the rest are frozen or expired)"
                    ))));
                };
                let (id, number, status): (i64, String, String) = (row.get(0), row.get(1), row.get(2));
                if !can_transition(AwbState::parse(&status).unwrap_or(AwbState::Executed), AwbState::Assigned) {
                    return Ok(Err(refused(format!("{number} is {status}"))));
                }
                let assigned = assign(&tx, &sql.awb, id, &number, &shipment).await?;
                if assigned.is_ok() {
                    tx.commit().await?;
                }
                Ok(assigned)
            })
        })
        .await
    }

    /// Moves `number` to `to` through the transition table, under its row
    /// lock (as on MySQL; see `SeriesStore::awb_transition`).
    #[allow(clippy::too_many_arguments)]
    pub async fn awb_transition(
        &mut self,
        number: &str,
        to: AwbState,
        shipment: Option<&str>,
        reason: Option<&str>,
        pool: Option<&str>,
        expect_shipment: Option<&str>,
    ) -> Result<AwbTransition> {
        let canonical = check_transition_request(number, to, shipment, reason)?;
        let (shipment, reason) = (shipment.map(str::to_owned), reason.map(str::to_owned));
        let (pool, expect) = (pool.map(str::to_owned), expect_shipment.map(str::to_owned));
        self.run("awb_transition", move |client, sql| {
            let (number, shipment, reason, pool, expect) = (
                canonical.clone(),
                shipment.clone(),
                reason.clone(),
                pool.clone(),
                expect.clone(),
            );
            Box::pin(async move {
                let tx = client.begin().await?;
                let row = tx.query_opt(&sql.awb.lock_number, &[&number]).await?;
                let Some(row) = row else {
                    return Ok(Err(refused(format!("{number} is not in stock"))));
                };
                let (id, status, pool_name, frozen, current, expired): (
                    i64,
                    String,
                    String,
                    bool,
                    Option<String>,
                    bool,
                ) = (
                    row.get(0),
                    row.get(1),
                    row.get(2),
                    row.get(3),
                    row.get(4),
                    row.get(5),
                );
                let locked = LockedNumber {
                    number: &number,
                    status: &status,
                    pool: &pool_name,
                    frozen,
                    expired,
                    shipment: current.as_deref(),
                };
                let (from, release_assignment, keep_shipment) =
                    match plan_transition(&locked, to, pool.as_deref(), expect.as_deref()) {
                        Err(e) => return Ok(Err(e)),
                        Ok(TransitionPlan::Unchanged) => return Ok(Ok(AwbTransition::Unchanged)),
                        Ok(TransitionPlan::Move {
                            from,
                            release_assignment,
                            keep_shipment,
                        }) => (from, release_assignment, keep_shipment),
                    };
                if release_assignment {
                    tx.execute(&sql.awb.release_assignment, &[&id]).await?;
                }
                if to == AwbState::Assigned {
                    if let Err(e) = assign(
                        &tx,
                        &sql.awb,
                        id,
                        &number,
                        shipment.as_deref().unwrap_or(""),
                    )
                    .await?
                    {
                        return Ok(Err(e));
                    }
                } else {
                    tx.execute(
                        &sql.awb.set_status,
                        &[&to.as_str(), &reason, &keep_shipment, &id],
                    )
                    .await?;
                }
                tx.commit().await?;
                Ok(Ok(AwbTransition::Moved { from, to }))
            })
        })
        .await
    }

    /// Freezes (or unfreezes) a number: out of circulation, state unchanged.
    pub async fn awb_freeze(&mut self, number: &str, frozen: bool) -> Result<()> {
        let canonical = Awb::normalize(number).map_err(bad_awb)?;
        self.run("awb_freeze", move |client, sql| {
            let number = canonical.clone();
            Box::pin(async move {
                let n = client
                    .execute(&sql.awb.set_frozen, &[&frozen, &number])
                    .await?;
                Ok(if n == 1 {
                    Ok(())
                } else {
                    Err(refused(format!("{number} is not in stock")))
                })
            })
        })
        .await
    }

    /// A stock number as stored.
    pub async fn awb_status(&mut self, number: &str) -> Result<AwbStock> {
        let canonical = Awb::normalize(number).map_err(bad_awb)?;
        self.run("awb_status", move |client, sql| {
            let number = canonical.clone();
            Box::pin(async move {
                let row = client.query_opt(&sql.awb.find_number, &[&number]).await?;
                Ok(match row {
                    Some(r) => Ok(AwbStock {
                        number,
                        pool: r.get(0),
                        status: AwbState::parse(r.get::<_, &str>(1)).unwrap_or(AwbState::Voided),
                        frozen: r.get(2),
                        valid_to: r.get(3),
                        shipment: r.get(4),
                        reason: r.get(5),
                    }),
                    None => Err(refused(format!("{number} is not in stock"))),
                })
            })
        })
        .await
    }

    /// Counts of a pool.
    pub async fn awb_report(&mut self, pool: &str) -> Result<PoolReport> {
        let pool = pool.to_owned();
        self.run("awb_report", move |client, sql| {
            let pool = pool.clone();
            Box::pin(async move {
                let by_status = client
                    .query(&sql.awb.count_by_status, &[&pool])
                    .await?
                    .iter()
                    .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
                    .collect();
                let extra = client.query_one(&sql.awb.pool_counts, &[&pool]).await?;
                Ok(Ok(PoolReport {
                    by_status,
                    frozen: extra.get::<_, i64>(0) as u64,
                    expired: extra.get::<_, i64>(1) as u64,
                    available: extra.get::<_, i64>(2) as u64,
                }))
            })
        })
        .await
    }
}

/// Marks `id` assigned to `shipment` with one live assignment; the unique
/// index's refusal reads as the application check does.
async fn assign(
    tx: &tokio_postgres::Transaction<'_>,
    awb: &PgAwbSql,
    id: i64,
    number: &str,
    shipment: &str,
) -> PgResult<Awb> {
    if let Err(e) = tx.execute(&awb.insert_assignment, &[&id, &shipment]).await {
        if is_state(&e, "23505") {
            return Ok(Err(refused(format!(
                "{number} is already assigned to another shipment"
            ))));
        }
        return Err(e);
    }
    tx.execute(&awb.set_assigned, &[&shipment, &id]).await?;
    Ok(Awb::parse(number).map_err(bad_awb))
}
