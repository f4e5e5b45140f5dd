//! The MySQL/MariaDB dialect of the engine-neutral flows (`crate::flows`):
//! each statement a flow sends, on the store's open transaction.
//!
//! Invariants: only statements from `schema.rs` are sent, every value bound;
//! a duplicate key is an answer (`false`), any other failure the driver's.

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use crate::error::{codes, Error};
use crate::flows::continue_series::ContinueStatements;
use crate::flows::numbering::NumberingStatements;
use crate::flows::payments::{
    LockedPayment, NewPayment, PaymentLocks, PaymentReads, StoredPayment,
};
use crate::flows::Answer;
use crate::payment::NumberStatus;
use crate::schema::SeriesSql;

use super::{vetting, Sql};

/// The series statements on a connection inside a transaction.
pub(super) struct MysqlSeries<'a> {
    pub(super) conn: &'a mut Conn,
    pub(super) sql: &'a SeriesSql,
}

impl ContinueStatements for MysqlSeries<'_> {
    type Failure = mysql_async::Error;

    async fn lock_series(
        &mut self,
        scope: &str,
    ) -> Answer<Option<(u64, Option<String>)>, Self::Failure> {
        self.conn
            .exec_first(&self.sql.lock_series, (scope,))
            .await
            .map(Ok)
    }

    async fn insert_series(
        &mut self,
        scope: &str,
        counter: u64,
        start: u64,
    ) -> Result<bool, Self::Failure> {
        match self
            .conn
            .exec_drop(&self.sql.initialize, (scope, counter, start))
            .await
        {
            Ok(()) => Ok(true),
            Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn counter(&mut self, scope: &str) -> Answer<Option<u64>, Self::Failure> {
        let row: Option<(u64, Option<u64>)> =
            self.conn.exec_first(&self.sql.current, (scope,)).await?;
        Ok(Ok(row.map(|(current, _)| current)))
    }

    async fn close(&mut self, successor: &str, previous: &str) -> Result<u64, Self::Failure> {
        self.conn
            .exec_drop(&self.sql.close, (successor, previous))
            .await?;
        Ok(self.conn.affected_rows())
    }
}

/// The numbering statements (series and registry) on a connection inside a
/// transaction.
pub(super) struct MysqlNumbering<'a> {
    pub(super) conn: &'a mut Conn,
    pub(super) sql: &'a Sql,
}

impl NumberingStatements for MysqlNumbering<'_> {
    type Failure = mysql_async::Error;

    async fn allocate_open(&mut self, scope: &str, count: u64) -> Answer<u64, Self::Failure> {
        run_allocation(self.conn, &self.sql.series.allocate_open, scope, count).await
    }

    async fn successor(&mut self, scope: &str) -> Result<Option<Option<String>>, Self::Failure> {
        let row: Option<(Option<String>,)> = self
            .conn
            .exec_first(&self.sql.series.successor, (scope,))
            .await?;
        Ok(row.map(|(s,)| s))
    }

    async fn insert_payment_number(
        &mut self,
        scope: &str,
        number: u64,
        status: NumberStatus,
        gateway: &str,
        txn: &str,
    ) -> Answer<(), Self::Failure> {
        let row = (
            scope,
            number,
            status.as_str(),
            "payment",
            Some(gateway),
            Some(txn),
        );
        insert_registry_row(
            self.conn,
            &self.sql.registry.insert_number,
            scope,
            number,
            row,
        )
        .await
    }

    async fn set_payment_number(
        &mut self,
        number: u64,
        scope: &str,
        payment_id: u64,
    ) -> Result<u64, Self::Failure> {
        self.conn
            .exec_drop(
                &self.sql.registry.set_payment_number,
                (number, scope, payment_id),
            )
            .await?;
        Ok(self.conn.affected_rows())
    }
}

impl PaymentReads for MysqlNumbering<'_> {
    type Failure = mysql_async::Error;

    async fn payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<StoredPayment>, Self::Failure> {
        type Row = (
            String,
            Option<u64>,
            Option<String>,
            Option<u64>,
            Option<String>,
        );
        let row: Option<Row> = self
            .conn
            .exec_first(&self.sql.registry.find_payment, (gateway, txn))
            .await?;
        Ok(Ok(row.map(|(scope, number, status, post_id, period)| {
            StoredPayment {
                scope,
                number,
                status,
                post_id,
                period,
            }
        })))
    }
}

impl PaymentLocks for MysqlNumbering<'_> {
    async fn insert_payment(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
    ) -> Result<Option<u64>, Self::Failure> {
        let row = (p.gateway, p.txn, scope, p.amount, p.currency, p.period);
        match self
            .conn
            .exec_drop(&self.sql.registry.insert_payment, row)
            .await
        {
            Ok(()) => Ok(Some(self.conn.last_insert_id().unwrap_or(0))),
            Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn lock_payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<LockedPayment>, Self::Failure> {
        type Row = (u64, String, Option<u64>, Option<String>);
        let row: Option<Row> = self
            .conn
            .exec_first(&self.sql.registry.lock_payment, (gateway, txn))
            .await?;
        Ok(Ok(row.map(|(id, scope, number, period)| LockedPayment {
            id,
            scope,
            number,
            period,
        })))
    }
}

/// Runs one allocation statement (`count`, `scope`) and judges its OK
/// packet: the new counter, only when exactly one row changed.
pub(super) async fn run_allocation(
    conn: &mut Conn,
    statement: &str,
    scope: &str,
    count: u64,
) -> Answer<u64, mysql_async::Error> {
    match conn.exec_drop(statement, (count, scope)).await {
        Ok(()) => {}
        Err(mysql_async::Error::Server(e)) => {
            if let Some(refused) = vetting::allocation_refused(e.code, scope, count) {
                return Ok(Err(refused));
            }
            return Err(mysql_async::Error::Server(e));
        }
        Err(e) => return Err(e),
    }
    Ok(vetting::judge_allocation(
        conn.affected_rows(),
        conn.last_insert_id(),
        scope,
        count,
    ))
}

/// Runs a registry INSERT; a duplicate is the readable alarm of
/// docs/design.md §2 rule 7.
pub(super) async fn insert_registry_row(
    conn: &mut Conn,
    statement: &str,
    scope: &str,
    number: u64,
    params: impl Into<mysql_async::Params> + Send,
) -> Answer<(), mysql_async::Error> {
    match conn.exec_drop(statement, params).await {
        Ok(()) => Ok(Ok(())),
        Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
            Ok(Err(Error::DuplicateNumber {
                scope: scope.to_owned(),
                number,
            }))
        }
        Err(e) => Err(e),
    }
}
