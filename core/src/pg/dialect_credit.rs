//! The PostgreSQL dialect's credit-note statements
//! (`crate::flows::credit_notes`).
//!
//! Invariants: as the rest of the dialect (`dialect.rs`): statements from
//! `sql_credit.rs` only, each prepared once per connection; numbers cross
//! the wire as text and are parsed as u64 exactly; a conflict is an answer
//! (`false`), any other failure the driver's.

use super::dialect::{Failure, Params, PgStatements};
use crate::error::Error;
use crate::flows::credit_notes::{CreditNoteStatements, Refers, RefundRow};
use crate::flows::payments::NewPayment;
use crate::flows::Answer;

impl CreditNoteStatements for PgStatements<'_> {
    async fn lock_invoice(&mut self, scope: &str, number: u64) -> Answer<Option<String>, Failure> {
        let sql = &self.sql.credit.lock_invoice;
        let row = self.row(sql, &[&scope, &number.to_string()]).await?;
        Ok(Ok(row.map(|r| r.get(0))))
    }

    async fn refund_row(&mut self, gateway: &str, txn: &str) -> Answer<Option<RefundRow>, Failure> {
        let sql = &self.sql.credit.refund_row;
        let Some(row) = self.row(sql, &[&gateway, &txn]).await? else {
            return Ok(Ok(None));
        };
        let refers_number: Option<String> = row.get(3);
        let Ok(refers_number) = refers_number.as_deref().map(str::parse::<u64>).transpose() else {
            return Ok(Err(Error::Unexpected(format!(
                "refund {gateway}/{txn}: its invoice's number is not a u64"
            ))));
        };
        Ok(Ok(Some(RefundRow {
            scope: row.get(0),
            amount: row.get(1),
            refers_scope: row.get(2),
            refers_number,
        })))
    }

    async fn credited_amounts(
        &mut self,
        scope: &str,
        number: u64,
    ) -> Result<Vec<Option<String>>, Failure> {
        let sql = &self.sql.credit.credited;
        let rows = self.rows(sql, &[&scope, &number.to_string()]).await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn insert_credit_note(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
        refers: &Refers<'_>,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.credit.insert_credit_note;
        let number = refers.number.to_string();
        let params: &Params = &[
            &p.gateway,
            &p.txn,
            &scope,
            &p.amount,
            &p.currency,
            &p.period,
            &refers.scope,
            &number,
            &refers.reason,
        ];
        Ok(self.row(sql, params).await?.is_some())
    }

    async fn link_credit_note(
        &mut self,
        gateway: &str,
        txn: &str,
        refers: &Refers<'_>,
    ) -> Result<u64, Failure> {
        let sql = &self.sql.credit.link_credit_note;
        let number = refers.number.to_string();
        let params: &Params = &[&refers.scope, &number, &refers.reason, &gateway, &txn];
        self.changed(sql, params).await
    }
}
