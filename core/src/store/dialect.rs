//! The MySQL/MariaDB dialect of the engine-neutral flows (`crate::flows`):
//! each statement a flow sends, on the store's open transaction.
//!
//! Invariants: only statements from `schema.rs` are sent, every value bound;
//! a duplicate key is an answer (`false`), any other failure the driver's.

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use crate::error::codes;
use crate::flows::continue_series::ContinueStatements;
use crate::flows::Answer;
use crate::schema::SeriesSql;

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
