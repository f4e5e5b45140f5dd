//! The PostgreSQL dialect of the engine-neutral flows (`crate::flows`):
//! each statement a flow sends, on the store's open transaction.
//!
//! Invariants: only statements from `pg/sql.rs` are sent; numbers cross the
//! wire as text and are parsed as u64 exactly; a conflict is an answer
//! (`false`), any other failure the driver's.

use tokio_postgres::{GenericClient, Statement, Transaction};

use super::sql::PgSql;
use crate::error::Error;
use crate::flows::continue_series::ContinueStatements;
use crate::flows::numbering::NumberingStatements;
use crate::flows::payments::{
    LockedPayment, NewPayment, PaymentLocks, PaymentReads, StoredPayment,
};
use crate::flows::Answer;
use crate::payment::NumberStatus;

/// The series statements on a transaction.
pub(super) struct PgSeries<'a, 't> {
    pub(super) tx: &'a Transaction<'t>,
    pub(super) sql: &'a PgSql,
}

/// A counter as PostgreSQL returns it (text): a u64, exactly.
fn counter_of(text: &str) -> crate::error::Result<u64> {
    text.parse::<u64>()
        .map_err(|_| Error::Unexpected(format!("counter {text} is not a u64")))
}

impl ContinueStatements for PgSeries<'_, '_> {
    type Failure = tokio_postgres::Error;

    async fn lock_series(
        &mut self,
        scope: &str,
    ) -> Answer<Option<(u64, Option<String>)>, Self::Failure> {
        Ok(
            match self.tx.query_opt(&self.sql.lock_series, &[&scope]).await? {
                None => Ok(None),
                Some(row) => counter_of(row.get(0)).map(|c| Some((c, row.get(1)))),
            },
        )
    }

    async fn insert_series(
        &mut self,
        scope: &str,
        counter: u64,
        start: u64,
    ) -> Result<bool, Self::Failure> {
        let created = self
            .tx
            .query_opt(
                &self.sql.initialize,
                &[&scope, &counter.to_string(), &start.to_string()],
            )
            .await?;
        Ok(created.is_some())
    }

    async fn counter(&mut self, scope: &str) -> Answer<Option<u64>, Self::Failure> {
        Ok(
            match self.tx.query_opt(&self.sql.current, &[&scope]).await? {
                None => Ok(None),
                Some(row) => counter_of(row.get(0)).map(Some),
            },
        )
    }

    async fn close(&mut self, successor: &str, previous: &str) -> Result<u64, Self::Failure> {
        self.tx
            .execute(&self.sql.close, &[&successor, &previous])
            .await
    }
}

/// The numbering statements on a transaction, with the allocation and the
/// registry INSERT prepared on its connection.
pub(super) struct PgNumbering<'a, 't> {
    pub(super) tx: &'a Transaction<'t>,
    pub(super) sql: &'a PgSql,
    /// [`PgSql::allocate_open`], prepared.
    pub(super) allocate: &'a Statement,
    /// [`PgSql::insert_number`], prepared.
    pub(super) insert: &'a Statement,
    /// [`PgSql::insert_payment`], prepared, where the flow records payments.
    pub(super) insert_payment: Option<&'a Statement>,
}

impl NumberingStatements for PgNumbering<'_, '_> {
    type Failure = tokio_postgres::Error;

    async fn allocate_open(&mut self, scope: &str, count: u64) -> Answer<u64, Self::Failure> {
        super::allocate_in(self.tx, self.allocate, scope, count).await
    }

    async fn successor(&mut self, scope: &str) -> Result<Option<Option<String>>, Self::Failure> {
        let row = self.tx.query_opt(&self.sql.successor, &[&scope]).await?;
        Ok(row.map(|r| r.get::<_, Option<String>>(0)))
    }

    async fn insert_payment_number(
        &mut self,
        scope: &str,
        number: u64,
        status: NumberStatus,
        gateway: &str,
        txn: &str,
    ) -> Answer<(), Self::Failure> {
        let row = [
            &scope as &(dyn tokio_postgres::types::ToSql + Sync),
            &number.to_string(),
            &status.as_str(),
            &"payment",
            &gateway,
            &txn,
            &None::<&str>,
        ];
        match self.tx.execute(self.insert, &row).await {
            Ok(_) => Ok(Ok(())),
            Err(e) => super::duplicate_or(e, scope, number),
        }
    }

    async fn set_payment_number(
        &mut self,
        number: u64,
        scope: &str,
        payment_id: u64,
    ) -> Result<u64, Self::Failure> {
        let id = i64::try_from(payment_id).unwrap_or(i64::MAX);
        self.tx
            .execute(
                &self.sql.set_payment_number,
                &[&number.to_string(), &scope, &id],
            )
            .await
    }
}

impl PaymentReads for PgNumbering<'_, '_> {
    type Failure = tokio_postgres::Error;

    async fn payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<StoredPayment>, Self::Failure> {
        read_payment(self.tx, self.sql, gateway, txn).await
    }
}

impl PaymentLocks for PgNumbering<'_, '_> {
    async fn insert_payment(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
    ) -> Result<Option<u64>, Self::Failure> {
        let params = [
            &p.gateway as &(dyn tokio_postgres::types::ToSql + Sync),
            &p.txn,
            &scope,
            &p.amount,
            &p.currency,
            &p.period,
        ];
        let row = match self.insert_payment {
            Some(prepared) => self.tx.query_opt(prepared, &params).await?,
            None => self.tx.query_opt(&self.sql.insert_payment, &params).await?,
        };
        // BIGSERIAL ids are positive.
        Ok(row.map(|r| r.get::<_, i64>(0) as u64))
    }

    async fn lock_payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<LockedPayment>, Self::Failure> {
        let Some(row) = self
            .tx
            .query_opt(&self.sql.lock_payment, &[&gateway, &txn])
            .await?
        else {
            return Ok(Ok(None));
        };
        let (id, scope, number, period): (i64, String, Option<String>, Option<String>) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        let (Ok(id), Ok(number)) = (
            u64::try_from(id),
            number.as_deref().map(counter_of).transpose(),
        ) else {
            return Ok(Err(Error::Unexpected(format!(
                "payment {gateway}/{txn}: a stored id or number is not a u64"
            ))));
        };
        Ok(Ok(Some(LockedPayment {
            id,
            scope,
            number,
            period,
        })))
    }
}

/// The payment reads on a connection outside a transaction.
pub(super) struct PgReads<'a, C> {
    pub(super) client: &'a C,
    pub(super) sql: &'a PgSql,
}

impl<C: GenericClient + Sync> PaymentReads for PgReads<'_, C> {
    type Failure = tokio_postgres::Error;

    async fn payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<StoredPayment>, Self::Failure> {
        read_payment(self.client, self.sql, gateway, txn).await
    }
}

/// The payment (gateway, transaction id) with its registry row.
async fn read_payment<C: GenericClient + Sync>(
    client: &C,
    sql: &PgSql,
    gateway: &str,
    txn: &str,
) -> Answer<Option<StoredPayment>, tokio_postgres::Error> {
    let Some(row) = client
        .query_opt(&sql.find_payment, &[&gateway, &txn])
        .await?
    else {
        return Ok(Ok(None));
    };
    let number: Option<String> = row.get(1);
    let post_id: Option<i64> = row.get(3);
    let Ok(number) = number.as_deref().map(counter_of).transpose() else {
        return Ok(Err(Error::Unexpected(
            "a stored number is not a u64".into(),
        )));
    };
    Ok(Ok(Some(StoredPayment {
        scope: row.get(0),
        number,
        status: row.get(2),
        post_id: post_id.map(|p| p as u64),
        period: row.get(4),
    })))
}
