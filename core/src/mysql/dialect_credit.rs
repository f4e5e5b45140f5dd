//! The MySQL/MariaDB dialect's credit-note statements
//! (`crate::flows::credit_notes`).
//!
//! Invariants: as the rest of the dialect (`dialect.rs`): statements from
//! `sql_credit.rs` only, every value bound; a duplicate key is an answer
//! (`false`), any other failure the driver's.

use mysql_async::prelude::Queryable;

use super::dialect::{Failure, MysqlStatements};
use crate::flows::credit_notes::{CreditNoteStatements, Refers, RefundRow};
use crate::flows::payments::NewPayment;
use crate::flows::Answer;

impl CreditNoteStatements for MysqlStatements<'_> {
    async fn lock_invoice(&mut self, scope: &str, number: u64) -> Answer<Option<String>, Failure> {
        let sql = &self.sql.credit.lock_invoice;
        self.conn().exec_first(sql, (scope, number)).await.map(Ok)
    }

    async fn refund_row(&mut self, gateway: &str, txn: &str) -> Answer<Option<RefundRow>, Failure> {
        type Row = (String, Option<String>, Option<String>, Option<u64>);
        let sql = &self.sql.credit.refund_row;
        let row: Option<Row> = self.conn().exec_first(sql, (gateway, txn)).await?;
        Ok(Ok(row.map(
            |(scope, amount, refers_scope, refers_number)| RefundRow {
                scope,
                amount,
                refers_scope,
                refers_number,
            },
        )))
    }

    async fn credited_amounts(
        &mut self,
        scope: &str,
        number: u64,
    ) -> Result<Vec<Option<String>>, Failure> {
        let sql = &self.sql.credit.credited;
        self.conn().exec(sql, (scope, number)).await
    }

    async fn insert_credit_note(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
        refers: &Refers<'_>,
    ) -> Result<bool, Failure> {
        let row = (
            p.gateway,
            p.txn,
            scope,
            p.amount,
            p.currency,
            p.period,
            refers.scope,
            refers.number,
            refers.reason,
        );
        let sql = &self.sql.credit.insert_credit_note;
        self.inserted(sql, row).await
    }

    async fn link_credit_note(
        &mut self,
        gateway: &str,
        txn: &str,
        refers: &Refers<'_>,
    ) -> Result<u64, Failure> {
        let sql = &self.sql.credit.link_credit_note;
        let params = (refers.scope, refers.number, refers.reason, gateway, txn);
        self.changed(sql, params).await
    }
}
