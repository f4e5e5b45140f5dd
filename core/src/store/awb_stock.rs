//! Air waybill stock on MySQL/MariaDB: pools, blocks, issuing in serial order,
//! and every status change through the one transition table.
//!
//! Invariants: a block is imported whole or not at all (one transaction; a
//! number already in stock refuses it); `issue_next` takes the lowest ready,
//! unexpired, unfrozen serial of its pool under a row lock (lock, re-read,
//! decide, write), so concurrent issuers get strictly increasing serials and
//! skip no ready number; every status write checks
//! [`crate::awb::can_transition`] on the row read under its lock; a number
//! has at most one live assignment (unique index), and that index's refusal
//! reads the same as the application's check; a release or reassign naming
//! the shipment it expects is a no-op when the number moved on meanwhile (a
//! stale second click).

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Value};

use super::{AttemptResult, SeriesStore, Tx};
use crate::awb::{can_transition, expand_block, Awb, AwbState};
use crate::awb_stock_rules::{
    bad_awb, check_name, check_transition_request, check_valid_to, plan_transition, refused,
    AwbStock, AwbTransition, LockedNumber, PoolReport, TransitionPlan,
};
use crate::error::{codes, Error, Result};
use crate::schema::AwbSql;

type StockRow = (
    u64,
    String,
    String,
    i8,
    Option<String>,
    Option<String>,
    String,
);

async fn lock_number(
    conn: &mut Conn,
    sql: &AwbSql,
    number: &str,
) -> std::result::Result<Option<StockRow>, mysql_async::Error> {
    conn.exec_first(&sql.lock_number, (number,)).await
}

impl SeriesStore {
    /// Creates the AWB tables if missing.
    pub async fn awb_ensure_schema(&mut self) -> Result<()> {
        self.run("awb_ensure_schema", "", |conn, sql, _| {
            Box::pin(async move {
                for ddl in &sql.awb.create {
                    conn.query_drop(ddl).await?;
                }
                Ok(Ok(()))
            })
        })
        .await
    }

    /// Imports the block `first ..= last` into pool `pool` (created for the
    /// block's airline prefix if missing): validated first, then inserted in
    /// one transaction; a number already in stock refuses the whole block.
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
        let prefix = block[0].prefix();
        let valid_to = valid_to.map(str::to_owned);
        self.run("awb_import_block", pool, move |conn, sql, pool| {
            let block = block.clone();
            let valid_to = valid_to.clone();
            Box::pin(async move {
                let mut tx = Tx::begin(conn).await?;
                let conn = &mut *tx;
                let work = async {
                    conn.exec_drop(
                        &sql.awb.insert_pool,
                        (pool, prefix),
                    )
                    .await?;
                    let row: Option<(u64, u16)> = conn
                        .exec_first(&sql.awb.lock_pool, (pool,))
                        .await?;
                    let Some((pool_id, pool_prefix)) = row else {
                        return Ok(Err(Error::Unexpected("pool vanished".into())));
                    };
                    if pool_prefix != prefix {
                        return Ok(Err(refused(format!(
                            "pool {pool} holds airline prefix {pool_prefix:03}, the block is {prefix:03}; nothing imported"
                        ))));
                    }
                    for chunk in block.chunks(500) {
                        let values = vec!["(?, ?, ?, ?, 'ready', ?, UTC_TIMESTAMP())"; chunk.len()].join(", ");
                        let mut params: Vec<Value> = Vec::with_capacity(chunk.len() * 5);
                        for a in chunk {
                            params.extend([
                                Value::from(pool_id),
                                Value::from(a.to_string()),
                                Value::from(a.prefix()),
                                Value::from(a.serial()),
                                Value::from(valid_to.clone()),
                            ]);
                        }
                        let stmt = format!("{}{values}", sql.awb.insert_stock_head);
                        match conn.exec_drop(stmt, params).await {
                            Ok(()) => {}
                            Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
                                let dup = e.message.split('\'').nth(1).unwrap_or("a number").to_owned();
                                return Ok(Err(refused(format!(
                                    "{dup} is already in stock; the block {} … {} was not imported",
                                    block[0],
                                    block[block.len() - 1]
                                ))));
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    Ok(Ok(block.len()))
                }
                .await;
                tx.end(work).await
            })
        })
        .await
    }

    /// Assigns the lowest ready, unexpired, unfrozen serial of `pool` to
    /// `shipment`, under a row lock.
    pub async fn awb_issue_next(&mut self, pool: &str, shipment: &str) -> Result<Awb> {
        check_name("shipment", shipment, 64)?;
        let shipment = shipment.to_owned();
        self.run("awb_issue_next", pool, move |conn, sql, pool| {
            let shipment = shipment.clone();
            Box::pin(async move {
                let mut tx = Tx::begin(conn).await?;
                let conn = &mut *tx;
                let work = async {
                    let row: Option<(u64, String, String)> = conn
                        .exec_first(
                            &sql.awb.lock_next_ready,
                            (pool,),
                        )
                        .await?;
                    let Some((id, number, status)) = row else {
                        return Ok(Err(refused(format!(
                            "pool {pool} has no ready number (none left, or the rest are frozen or expired)"
                        ))));
                    };
                    // Re-read under the lock, decide by the table.
                    if !can_transition(AwbState::parse(&status).unwrap_or(AwbState::Executed), AwbState::Assigned) {
                        return Ok(Err(refused(format!("{number} is {status}"))));
                    }
                    assign(conn, &sql.awb, id, &number, &shipment).await
                }
                .await;
                tx.end(work).await
            })
        })
        .await
    }

    /// Moves `number` to `to` through the transition table, under its row
    /// lock. `shipment` names the new shipment for an assignment; `reason` is
    /// required for voided and cancelled; `pool`, when given, must be the
    /// number's pool; `expect_shipment`, when given, makes the call a no-op if
    /// the number is no longer assigned to it (a stale second click).
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
        self.run("awb_transition", &canonical, move |conn, sql, number| {
            let (shipment, reason, pool, expect) = (
                shipment.clone(),
                reason.clone(),
                pool.clone(),
                expect.clone(),
            );
            Box::pin(async move {
                let mut tx = Tx::begin(conn).await?;
                let conn = &mut *tx;
                let work = async {
                    let Some((id, status, pool_name, frozen, _valid_to, current, expiry)) =
                        lock_number(conn, &sql.awb, number).await?
                    else {
                        return Ok(Err(refused(format!("{number} is not in stock"))));
                    };
                    let locked = LockedNumber {
                        number,
                        status: &status,
                        pool: &pool_name,
                        frozen: frozen != 0,
                        expired: expiry == "expired",
                        shipment: current.as_deref(),
                    };
                    let (from, release_assignment, keep_shipment) =
                        match plan_transition(&locked, to, pool.as_deref(), expect.as_deref()) {
                            Err(e) => return Ok(Err(e)),
                            Ok(TransitionPlan::Unchanged) => {
                                return Ok(Ok(AwbTransition::Unchanged))
                            }
                            Ok(TransitionPlan::Move {
                                from,
                                release_assignment,
                                keep_shipment,
                            }) => (from, release_assignment, keep_shipment),
                        };
                    if release_assignment {
                        conn.exec_drop(&sql.awb.release_assignment, (id,)).await?;
                    }
                    if to == AwbState::Assigned {
                        if let Err(e) = assign(
                            conn,
                            &sql.awb,
                            id,
                            number,
                            shipment.as_deref().unwrap_or(""),
                        )
                        .await?
                        {
                            return Ok(Err(e));
                        }
                    } else {
                        conn.exec_drop(
                            &sql.awb.set_status,
                            (to.as_str(), reason.as_deref(), keep_shipment, id),
                        )
                        .await?;
                    }
                    Ok(Ok(AwbTransition::Moved { from, to }))
                }
                .await;
                tx.end(work).await
            })
        })
        .await
    }

    /// Freezes (or unfreezes) a number: out of circulation, state unchanged.
    pub async fn awb_freeze(&mut self, number: &str, frozen: bool) -> Result<()> {
        let canonical = Awb::normalize(number).map_err(bad_awb)?;
        self.run("awb_freeze", &canonical, move |conn, sql, number| {
            Box::pin(async move {
                conn.exec_drop(&sql.awb.set_frozen, (frozen, number))
                    .await?;
                Ok(
                    if conn.affected_rows() <= 1 && exists(conn, &sql.awb, number).await? {
                        Ok(())
                    } else {
                        Err(refused(format!("{number} is not in stock")))
                    },
                )
            })
        })
        .await
    }

    /// A stock number as stored.
    pub async fn awb_status(&mut self, number: &str) -> Result<AwbStock> {
        let canonical = Awb::normalize(number).map_err(bad_awb)?;
        self.run("awb_status", &canonical, |conn, sql, number| {
            Box::pin(async move {
                type Row = (
                    String,
                    String,
                    i8,
                    Option<String>,
                    Option<String>,
                    Option<String>,
                );
                let row: Option<Row> = conn.exec_first(&sql.awb.find_number, (number,)).await?;
                Ok(match row {
                    Some((pool, status, frozen, valid_to, shipment, reason)) => Ok(AwbStock {
                        number: number.to_owned(),
                        pool,
                        status: AwbState::parse(&status).unwrap_or(AwbState::Voided),
                        frozen: frozen != 0,
                        valid_to,
                        shipment,
                        reason,
                    }),
                    None => Err(refused(format!("{number} is not in stock"))),
                })
            })
        })
        .await
    }

    /// Counts of a pool.
    pub async fn awb_report(&mut self, pool: &str) -> Result<PoolReport> {
        self.run("awb_report", pool, |conn, sql, pool| {
            Box::pin(async move {
                let by_status: Vec<(String, u64)> =
                    conn.exec(&sql.awb.count_by_status, (pool,)).await?;
                let extra: Option<(u64, u64, u64)> =
                    conn.exec_first(&sql.awb.pool_counts, (pool,)).await?;
                let (frozen, expired, available) = extra.unwrap_or_default();
                Ok(Ok(PoolReport {
                    by_status,
                    frozen,
                    expired,
                    available,
                }))
            })
        })
        .await
    }
}

async fn exists(
    conn: &mut Conn,
    sql: &AwbSql,
    number: &str,
) -> std::result::Result<bool, mysql_async::Error> {
    let n: Option<u64> = conn.exec_first(&sql.count_number, (number,)).await?;
    Ok(n.unwrap_or(0) > 0)
}

/// Marks `id` assigned to `shipment` with one live assignment; the unique
/// index's refusal reads as the application check does.
async fn assign(
    conn: &mut Conn,
    sql: &AwbSql,
    id: u64,
    number: &str,
    shipment: &str,
) -> AttemptResult<Awb> {
    match conn.exec_drop(&sql.insert_assignment, (id, shipment)).await {
        Ok(()) => {}
        Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
            return Ok(Err(refused(format!(
                "{number} is already assigned to another shipment"
            ))));
        }
        Err(e) => return Err(e),
    }
    conn.exec_drop(&sql.set_assigned, (shipment, id)).await?;
    Ok(Awb::parse(number).map_err(bad_awb))
}
