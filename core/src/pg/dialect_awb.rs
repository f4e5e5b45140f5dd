//! The PostgreSQL dialect's AWB stock statements (`crate::flows::awb`).
//!
//! Invariants: as the rest of the dialect (`dialect.rs`): statements from
//! `pg/sql.rs` only, ids and counts converted exactly; a unique-key conflict
//! is an answer (`Some(number)`, `false`), any other failure the driver's.

use tokio_postgres::types::ToSql;

use super::classify::is_state;
use super::dialect::{Failure, Params, PgStatements};
use super::sql::UTC_NOW;
use crate::awb::{Awb, AwbState};
use crate::awb_stock_rules::{AwbStock, PoolReport};
use crate::error::Error;
use crate::flows::awb::{AwbStatements, LockedStock};
use crate::flows::Answer;

/// A stock or pool id as stored (BIGSERIAL: positive).
fn id_param(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(i64::MAX)
}

/// A count as PostgreSQL returns it (BIGINT, never negative).
fn count_of(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl AwbStatements for PgStatements<'_> {
    async fn insert_pool(&mut self, pool: &str, prefix: u16) -> Result<(), Failure> {
        let sql = &self.sql.awb.insert_pool;
        self.changed(sql, &[&pool, &i32::from(prefix)])
            .await
            .map(drop)
    }

    async fn lock_pool(&mut self, pool: &str) -> Answer<Option<(u64, u16)>, Failure> {
        let sql = &self.sql.awb.lock_pool;
        let row = self.row(sql, &[&pool]).await?;
        Ok(Ok(row.map(|r| {
            let (id, prefix): (i64, i32) = (r.get(0), r.get(1));
            (count_of(id), u16::try_from(prefix).unwrap_or(u16::MAX))
        })))
    }

    async fn insert_stock(
        &mut self,
        pool_id: u64,
        numbers: &[Awb],
        valid_to: Option<&str>,
    ) -> Result<Option<String>, Failure> {
        let pool_id = id_param(pool_id);
        let owned: Vec<(String, i32, i64)> = numbers
            .iter()
            .map(|a| (a.to_string(), i32::from(a.prefix()), i64::from(a.serial())))
            .collect();
        let mut values = Vec::with_capacity(owned.len());
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&pool_id, &valid_to];
        for (i, (number, prefix, serial)) in owned.iter().enumerate() {
            let b = 3 + i * 3;
            values.push(format!(
                "($1, ${b}, ${}, ${}, 'ready', $2::text::date, {UTC_NOW})",
                b + 1,
                b + 2
            ));
            params.extend([number as &(dyn ToSql + Sync), prefix, serial]);
        }
        let statement = format!("{}{}", self.sql.awb.insert_stock_head, values.join(", "));
        match self.conn.client.execute(&statement, &params).await {
            Ok(_) => Ok(None),
            Err(e) if is_state(&e, "23505") => Ok(Some(
                e.as_db_error()
                    .and_then(|d| d.detail())
                    .and_then(|d| d.split("=(").nth(1))
                    .and_then(|d| d.split(')').next())
                    .unwrap_or("a number")
                    .to_owned(),
            )),
            Err(e) => Err(e),
        }
    }

    async fn lock_next_ready(
        &mut self,
        pool: &str,
    ) -> Answer<Option<(u64, String, String)>, Failure> {
        let sql = &self.sql.awb.lock_next_ready;
        let row = self.row(sql, &[&pool]).await?;
        Ok(Ok(row.map(|r| (count_of(r.get(0)), r.get(1), r.get(2)))))
    }

    async fn lock_number(&mut self, number: &str) -> Answer<Option<LockedStock>, Failure> {
        let sql = &self.sql.awb.lock_number;
        let row = self.row(sql, &[&number]).await?;
        Ok(Ok(row.map(|r| LockedStock {
            id: count_of(r.get(0)),
            status: r.get(1),
            pool: r.get(2),
            frozen: r.get(3),
            shipment: r.get(4),
            expired: r.get(5),
        })))
    }

    async fn release_assignment(&mut self, id: u64) -> Result<(), Failure> {
        let sql = &self.sql.awb.release_assignment;
        self.changed(sql, &[&id_param(id)]).await.map(drop)
    }

    async fn insert_assignment(&mut self, id: u64, shipment: &str) -> Result<bool, Failure> {
        let sql = &self.sql.awb.insert_assignment;
        match self.changed(sql, &[&id_param(id), &shipment]).await {
            Ok(_) => Ok(true),
            Err(e) if is_state(&e, "23505") => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn set_assigned(&mut self, id: u64, shipment: &str) -> Result<(), Failure> {
        let sql = &self.sql.awb.set_assigned;
        self.changed(sql, &[&shipment, &id_param(id)])
            .await
            .map(drop)
    }

    async fn set_status(
        &mut self,
        id: u64,
        to: AwbState,
        reason: Option<&str>,
        keep_shipment: bool,
    ) -> Result<(), Failure> {
        let sql = &self.sql.awb.set_status;
        let params: &Params = &[&to.as_str(), &reason, &keep_shipment, &id_param(id)];
        self.changed(sql, params).await.map(drop)
    }

    async fn set_frozen(&mut self, number: &str, frozen: bool) -> Result<bool, Failure> {
        // Rows matched: 1 when the number is in stock.
        let sql = &self.sql.awb.set_frozen;
        Ok(self.changed(sql, &[&frozen, &number]).await? == 1)
    }

    async fn stock(&mut self, number: &str) -> Answer<Option<AwbStock>, Failure> {
        let sql = &self.sql.awb.find_number;
        let row = self.row(sql, &[&number]).await?;
        Ok(Ok(row.map(|r| AwbStock {
            number: number.to_owned(),
            pool: r.get(0),
            status: AwbState::parse(r.get::<_, &str>(1)).unwrap_or(AwbState::Voided),
            frozen: r.get(2),
            valid_to: r.get(3),
            shipment: r.get(4),
            reason: r.get(5),
        })))
    }

    async fn pool_report(&mut self, pool: &str) -> Answer<PoolReport, Failure> {
        let sql = &self.sql.awb.count_by_status;
        let by_status = self
            .rows(sql, &[&pool])
            .await?
            .iter()
            .map(|r| (r.get::<_, String>(0), count_of(r.get(1))))
            .collect();
        let sql = &self.sql.awb.pool_counts;
        let Some(extra) = self.row(sql, &[&pool]).await? else {
            return Ok(Err(Error::Unexpected("pool counts returned no row".into())));
        };
        Ok(Ok(PoolReport {
            by_status,
            frozen: count_of(extra.get(0)),
            expired: count_of(extra.get(1)),
            available: count_of(extra.get(2)),
        }))
    }
}
