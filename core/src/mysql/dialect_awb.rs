//! The MySQL/MariaDB dialect's AWB stock statements (`crate::flows::awb`).
//!
//! Invariants: as the rest of the dialect (`dialect.rs`): statements from
//! `sql.rs` only, every value bound; a duplicate key is an answer
//! (`Some(number)`, `false`), any other failure the driver's.

use mysql_async::prelude::Queryable;
use mysql_async::Value;

use super::dialect::{Failure, MysqlStatements};
use crate::awb::{Awb, AwbState};
use crate::awb_stock_rules::{AwbStock, PoolReport};
use crate::error::codes;
use crate::flows::awb::{AwbStatements, LockedStock};
use crate::flows::Answer;

impl AwbStatements for MysqlStatements<'_> {
    async fn insert_pool(&mut self, pool: &str, prefix: u16) -> Result<(), Failure> {
        let sql = &self.sql.awb.insert_pool;
        self.conn().exec_drop(sql, (pool, prefix)).await
    }

    async fn lock_pool(&mut self, pool: &str) -> Answer<Option<(u64, u16)>, Failure> {
        let sql = &self.sql.awb.lock_pool;
        self.conn().exec_first(sql, (pool,)).await.map(Ok)
    }

    async fn insert_stock(
        &mut self,
        pool_id: u64,
        numbers: &[Awb],
        valid_to: Option<&str>,
    ) -> Result<Option<String>, Failure> {
        let values = vec!["(?, ?, ?, ?, 'ready', ?, UTC_TIMESTAMP())"; numbers.len()].join(", ");
        let mut params: Vec<Value> = Vec::with_capacity(numbers.len() * 5);
        for a in numbers {
            params.extend([
                Value::from(pool_id),
                Value::from(a.to_string()),
                Value::from(a.prefix()),
                Value::from(a.serial()),
                Value::from(valid_to),
            ]);
        }
        let statement = format!("{}{values}", self.sql.awb.insert_stock_head);
        match self.conn().exec_drop(statement, params).await {
            Ok(()) => Ok(None),
            Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => Ok(Some(
                e.message
                    .split('\'')
                    .nth(1)
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
        self.conn().exec_first(sql, (pool,)).await.map(Ok)
    }

    async fn lock_number(&mut self, number: &str) -> Answer<Option<LockedStock>, Failure> {
        type Row = (
            u64,
            String,
            String,
            i8,
            Option<String>,
            Option<String>,
            String,
        );
        let sql = &self.sql.awb.lock_number;
        let row: Option<Row> = self.conn().exec_first(sql, (number,)).await?;
        Ok(Ok(row.map(
            |(id, status, pool, frozen, _valid_to, shipment, expiry)| LockedStock {
                id,
                status,
                pool,
                frozen: frozen != 0,
                shipment,
                expired: expiry == "expired",
            },
        )))
    }

    async fn release_assignment(&mut self, id: u64) -> Result<(), Failure> {
        let sql = &self.sql.awb.release_assignment;
        self.conn().exec_drop(sql, (id,)).await
    }

    async fn insert_assignment(&mut self, id: u64, shipment: &str) -> Result<bool, Failure> {
        let sql = &self.sql.awb.insert_assignment;
        self.inserted(sql, (id, shipment)).await
    }

    async fn set_assigned(&mut self, id: u64, shipment: &str) -> Result<(), Failure> {
        let sql = &self.sql.awb.set_assigned;
        self.conn().exec_drop(sql, (shipment, id)).await
    }

    async fn set_status(
        &mut self,
        id: u64,
        to: AwbState,
        reason: Option<&str>,
        keep_shipment: bool,
    ) -> Result<(), Failure> {
        let sql = &self.sql.awb.set_status;
        let params = (to.as_str(), reason, keep_shipment, id);
        self.conn().exec_drop(sql, params).await
    }

    async fn set_frozen(&mut self, number: &str, frozen: bool) -> Result<bool, Failure> {
        // Rows changed: an unchanged flag is 0, so ask whether it exists.
        let sql = &self.sql.awb.set_frozen;
        if self.changed(sql, (frozen, number)).await? > 1 {
            return Ok(false);
        }
        let sql = &self.sql.awb.count_number;
        let n: Option<u64> = self.conn().exec_first(sql, (number,)).await?;
        Ok(n.unwrap_or(0) > 0)
    }

    async fn stock(&mut self, number: &str) -> Answer<Option<AwbStock>, Failure> {
        type Row = (
            String,
            String,
            i8,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let sql = &self.sql.awb.find_number;
        let row: Option<Row> = self.conn().exec_first(sql, (number,)).await?;
        Ok(Ok(row.map(
            |(pool, status, frozen, valid_to, shipment, reason)| AwbStock {
                number: number.to_owned(),
                pool,
                status: AwbState::parse(&status).unwrap_or(AwbState::Voided),
                frozen: frozen != 0,
                valid_to,
                shipment,
                reason,
            },
        )))
    }

    async fn pool_report(&mut self, pool: &str) -> Answer<PoolReport, Failure> {
        let sql = &self.sql.awb.count_by_status;
        let by_status: Vec<(String, u64)> = self.conn().exec(sql, (pool,)).await?;
        let sql = &self.sql.awb.pool_counts;
        let extra: Option<(u64, u64, u64)> = self.conn().exec_first(sql, (pool,)).await?;
        let (frozen, expired, available) = extra.unwrap_or_default();
        Ok(Ok(PoolReport {
            by_status,
            frozen,
            expired,
            available,
        }))
    }
}
