//! The PostgreSQL dialect of the engine-neutral flows (`crate::flows`):
//! each statement a flow sends, and the begin and end of its transactions,
//! on the store's connection.
//!
//! Invariants: only statements from `pg/sql.rs` are sent, each prepared once
//! per connection ([`PgConn::prepared`]) and then only bound and executed;
//! numbers cross the wire as text and are parsed as u64 exactly; a conflict
//! is an answer (`false`, `None` or `DuplicateNumber`), any other failure
//! the driver's.

use std::time::Duration;

use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use super::sql::PgSql;
use super::PgConn;
use crate::chain::Entry;
use crate::error::Error;
use crate::flows::chain::ChainStatements;
use crate::flows::claims::ClaimStatements;
use crate::flows::numbering::NumberingStatements;
use crate::flows::payments::{
    HeldPayment, LockedPayment, NewPayment, OneTrip, PaymentStatements, StoredPayment,
};
use crate::flows::recorded::{RecordedCall, RecordedOneTrip, RecordedStatements};
use crate::flows::series::SeriesStatements;
use crate::flows::{Answer, Dialect};
use crate::payment::{NumberStatus, PaymentRecord, UNANSWERED_REASON};

pub(super) type Failure = tokio_postgres::Error;
pub(super) type Params<'p> = [&'p (dyn ToSql + Sync)];

/// The flows' statements on the store's connection.
pub(crate) struct PgStatements<'a> {
    pub(super) conn: &'a mut PgConn,
    pub(super) sql: &'a PgSql,
}

/// A number or counter as PostgreSQL returns it (text): a u64, exactly.
fn counter_of(text: &str) -> crate::error::Result<u64> {
    text.parse::<u64>()
        .map_err(|_| Error::Unexpected(format!("counter {text} is not a u64")))
}

/// A post id as stored (BIGINT).
fn post_of(post: Option<i64>) -> Option<u64> {
    post.and_then(|p| u64::try_from(p).ok())
}

/// A post id as PostgreSQL stores it (BIGINT).
fn post_param(post_id: u64) -> crate::error::Result<i64> {
    i64::try_from(post_id).map_err(|_| Error::InvalidArgument {
        name: "post_id",
        reason: format!("{post_id} is above {}", i64::MAX),
    })
}

impl PgStatements<'_> {
    /// Runs `sql` (prepared once per connection): the row, if any.
    pub(super) async fn row(
        &mut self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Option<Row>, Failure> {
        let statement = self.conn.prepared(sql).await?;
        self.conn.client.query_opt(&statement, params).await
    }

    /// Runs `sql`: every row.
    pub(super) async fn rows(
        &mut self,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Vec<Row>, Failure> {
        let statement = self.conn.prepared(sql).await?;
        self.conn.client.query(&statement, params).await
    }

    /// Runs `sql`: the rows it changed.
    pub(super) async fn changed(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, Failure> {
        let statement = self.conn.prepared(sql).await?;
        self.conn.client.execute(&statement, params).await
    }

    /// Runs a one-statement flow (one implicit transaction) whose answer is
    /// the number it took: the number; `None` when the statement rolled
    /// back whole at a refusal the flow of several statements names
    /// ([`hands_over`]); `what` names it in an unexpected answer.
    async fn one_statement_number(
        &mut self,
        sql: &str,
        params: &Params<'_>,
        what: &str,
    ) -> Answer<Option<u64>, Failure> {
        match self.row(sql, params).await {
            Ok(row) => Ok(match row.and_then(|r| r.get::<_, Option<String>>(0)) {
                Some(number) => counter_of(&number).map(Some),
                None => Err(Error::Unexpected(format!(
                    "the one-trip {what} statement answered no number"
                ))),
            }),
            Err(failed) => match failed.as_db_error() {
                Some(db) if hands_over(db) => Ok(Ok(None)),
                _ => Err(failed),
            },
        }
    }

    /// Runs a registry INSERT; a duplicate is the readable alarm of
    /// docs/design.md §2 rule 7.
    async fn insert_number_row(
        &mut self,
        sql: &str,
        scope: &str,
        number: u64,
        params: &Params<'_>,
    ) -> Answer<(), Failure> {
        match self.changed(sql, params).await {
            Ok(_) => Ok(Ok(())),
            Err(e) => super::duplicate_or(e, scope, number),
        }
    }
}

impl Dialect for PgStatements<'_> {
    type Failure = Failure;

    async fn begin(&mut self) -> Result<(), Failure> {
        self.conn.began = true;
        self.conn.client.batch_execute("BEGIN").await
    }

    async fn end<T: Send>(&mut self, outcome: Answer<T, Failure>) -> Answer<T, Failure> {
        let end = if matches!(outcome, Ok(Ok(_))) {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        match self.conn.client.batch_execute(end).await {
            Ok(()) => {
                self.conn.began = false;
                outcome
            }
            Err(failed) => {
                // A server's refusal ended the transaction; a ROLLBACK
                // confirms that the connection is clean. A lost connection
                // fails here too and stays marked.
                if failed.as_db_error().is_some()
                    && self.conn.client.batch_execute("ROLLBACK").await.is_ok()
                {
                    self.conn.began = false;
                }
                match outcome {
                    Ok(Ok(_)) => Err(failed),
                    other => other,
                }
            }
        }
    }
}

impl SeriesStatements for PgStatements<'_> {
    async fn insert_series(
        &mut self,
        scope: &str,
        counter: u64,
        start: u64,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.initialize;
        let params: &Params = &[&scope, &counter.to_string(), &start.to_string()];
        Ok(self.row(sql, params).await?.is_some())
    }

    async fn series_row(&mut self, scope: &str) -> Answer<Option<(u64, Option<u64>)>, Failure> {
        let sql = &self.sql.current;
        let Some(row) = self.row(sql, &[&scope]).await? else {
            return Ok(Ok(None));
        };
        let start: Option<String> = row.get(1);
        Ok(counter_of(row.get(0))
            .map(|current| Some((current, start.and_then(|s| s.parse().ok())))))
    }

    async fn raise_counter(&mut self, scope: &str, counter: u64) -> Result<u64, Failure> {
        let sql = &self.sql.advance;
        self.changed(sql, &[&scope, &counter.to_string()]).await
    }

    async fn allocate(&mut self, scope: &str, count: u64) -> Answer<u64, Failure> {
        let statement = self.conn.prepared(&self.sql.allocate).await?;
        super::allocate_in(&self.conn.client, &statement, scope, count).await
    }

    async fn series_like(&mut self, pattern: &str) -> Answer<Vec<(String, u64)>, Failure> {
        let sql = &self.sql.list_like;
        let rows = self.rows(sql, &[&pattern]).await?;
        Ok(rows
            .iter()
            .map(|r| counter_of(r.get(1)).map(|c| (r.get::<_, String>(0), c)))
            .collect())
    }

    async fn lock_series(&mut self, scope: &str) -> Answer<Option<(u64, Option<String>)>, Failure> {
        let sql = &self.sql.lock_series;
        Ok(match self.row(sql, &[&scope]).await? {
            None => Ok(None),
            Some(row) => counter_of(row.get(0)).map(|c| Some((c, row.get(1)))),
        })
    }

    async fn close(&mut self, successor: &str, previous: &str) -> Result<u64, Failure> {
        let sql = &self.sql.close;
        self.changed(sql, &[&successor, &previous]).await
    }
}

impl NumberingStatements for PgStatements<'_> {
    async fn allocate_open(&mut self, scope: &str, count: u64) -> Answer<u64, Failure> {
        let statement = self.conn.prepared(&self.sql.allocate_open).await?;
        super::allocate_in(&self.conn.client, &statement, scope, count).await
    }

    async fn successor(&mut self, scope: &str) -> Result<Option<Option<String>>, Failure> {
        let sql = &self.sql.successor;
        let row = self.row(sql, &[&scope]).await?;
        Ok(row.map(|r| r.get::<_, Option<String>>(0)))
    }

    async fn insert_payment_number(
        &mut self,
        scope: &str,
        number: u64,
        status: NumberStatus,
        gateway: &str,
        txn: &str,
    ) -> Answer<(), Failure> {
        let sql = &self.sql.insert_number;
        let params: &Params = &[
            &scope,
            &number.to_string(),
            &status.as_str(),
            &"payment",
            &gateway,
            &txn,
            &None::<&str>,
        ];
        self.insert_number_row(sql, scope, number, params).await
    }

    async fn set_payment_number(
        &mut self,
        number: u64,
        scope: &str,
        payment_id: u64,
    ) -> Result<u64, Failure> {
        let id = i64::try_from(payment_id).unwrap_or(i64::MAX);
        let sql = &self.sql.set_payment_number;
        self.changed(sql, &[&number.to_string(), &scope, &id]).await
    }
}

impl RecordedStatements for PgStatements<'_> {
    async fn find_by_request(
        &mut self,
        scope: &str,
        key: &str,
    ) -> Answer<Option<(u64, String, Option<String>)>, Failure> {
        let sql = &self.sql.find_by_request;
        let Some(row) = self.row(sql, &[&scope, &key]).await? else {
            return Ok(Ok(None));
        };
        Ok(counter_of(row.get(0)).map(|number| Some((number, row.get(1), row.get(2)))))
    }

    async fn void_unanswered(
        &mut self,
        scope: &str,
        number: u64,
        call: &str,
    ) -> Result<u64, Failure> {
        let sql = &self.sql.void_unanswered;
        let params: &Params = &[&UNANSWERED_REASON, &scope, &number.to_string(), &call];
        self.changed(sql, params).await
    }

    async fn insert_recorded(
        &mut self,
        scope: &str,
        number: u64,
        source: &str,
        call: &str,
        request_key: Option<&str>,
    ) -> Answer<(), Failure> {
        let n = number.to_string();
        let none = None::<&str>;
        let sql = self.sql;
        match request_key {
            None => {
                let status = NumberStatus::Unconfirmed.as_str();
                let params: &Params = &[&scope, &n, &status, &source, &none, &none, &call];
                self.insert_number_row(&sql.insert_number, scope, number, params)
                    .await
            }
            Some(key) => {
                let params: &Params = &[&scope, &n, &source, &call, &key];
                self.insert_number_row(&sql.insert_keyed, scope, number, params)
                    .await
            }
        }
    }

    async fn confirm(&mut self, scope: &str, number: u64, call: &str) -> Result<u64, Failure> {
        let sql = &self.sql.confirm_by_call;
        let params: &Params = &[&scope, &number.to_string(), &call];
        self.changed(sql, params).await
    }

    async fn record_in_one_trip(
        &mut self,
        scope: &str,
        call: &RecordedCall,
    ) -> Answer<RecordedOneTrip, Failure> {
        let (at, parts, after) = chain_input_now(scope, None);
        let params: &Params = &[
            &scope,
            &call.source,
            &call.mark,
            &call.request_key,
            &at,
            &parts.before_prev,
            &parts.before_number,
            &after,
        ];
        let sql = &self.sql.recorded_one_trip;
        let number = self.one_statement_number(sql, params, "recorded").await?;
        Ok(number.map(|n| n.map_or(RecordedOneTrip::Several, RecordedOneTrip::Numbered)))
    }

    async fn unconfirmed_of_call(&mut self, scope: &str, call: &str) -> Result<Vec<u64>, Failure> {
        let sql = &self.sql.unconfirmed_of_call;
        let rows = self.rows(sql, &[&scope, &call]).await?;
        // A stored number is a u64 (the column's check): anything else is
        // skipped here and found by the books' checks.
        Ok(rows
            .iter()
            .filter_map(|r| counter_of(r.get(0)).ok())
            .collect())
    }
}

impl PaymentStatements for PgStatements<'_> {
    async fn payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<StoredPayment>, Failure> {
        let sql = &self.sql.find_payment;
        let Some(row) = self.row(sql, &[&gateway, &txn]).await? else {
            return Ok(Ok(None));
        };
        let number: Option<String> = row.get(1);
        let Ok(number) = number.as_deref().map(counter_of).transpose() else {
            return Ok(Err(Error::Unexpected(
                "a stored number is not a u64".into(),
            )));
        };
        Ok(Ok(Some(StoredPayment {
            scope: row.get(0),
            number,
            status: row.get(2),
            post_id: post_of(row.get(3)),
            period: row.get(4),
            amount: row.get(5),
            currency: row.get(6),
        })))
    }

    async fn complete_in_one_trip(
        &mut self,
        gateway: &str,
        txn: &str,
        held: &HeldPayment,
    ) -> Answer<OneTrip, Failure> {
        let facts = crate::flows::chain::PaymentFacts {
            gateway: Some(gateway),
            txn: Some(txn),
            amount: held.amount.as_deref(),
            currency: held.currency.as_deref(),
        };
        let (at, parts, after) = chain_input_now(&held.scope, Some(facts));
        let params: &Params = &[
            &held.scope,
            &gateway,
            &txn,
            &held.amount,
            &held.currency,
            &at,
            &parts.before_prev,
            &parts.before_number,
            &after,
        ];
        let sql = &self.sql.complete_one_trip;
        let number = self.one_statement_number(sql, params, "completion").await?;
        Ok(number.map(|n| n.map_or(OneTrip::Several, |n| OneTrip::Numbered(held.numbered(n)))))
    }

    async fn record_in_one_trip(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
        period: Option<crate::format::Period>,
    ) -> Answer<OneTrip, Failure> {
        use tokio_postgres::error::SqlState;
        let (at, parts, after) = chain_input_now(scope, Some(p.facts()));
        let params: &Params = &[
            &scope,
            &p.gateway,
            &p.txn,
            &p.amount,
            &p.currency,
            &p.period,
            &at,
            &parts.before_prev,
            &parts.before_number,
            &after,
        ];
        let sql = &self.sql.payment_one_trip;
        let failed = match self.row(sql, params).await {
            Ok(row) => {
                let answer =
                    row.map(|r| (r.get::<_, Option<i64>>(0), r.get::<_, Option<String>>(1)));
                return Ok(match answer {
                    Some((Some(_), Some(number))) => counter_of(&number).map(|number| {
                        OneTrip::Numbered(PaymentRecord::reserved(scope.to_owned(), number, period))
                    }),
                    other => Err(Error::Unexpected(format!(
                        "the one-trip payment statement answered {other:?}, not its number"
                    ))),
                });
            }
            Err(e) => e,
        };
        // The statement rolled back whole (one implicit transaction).
        let Some(db) = failed.as_db_error() else {
            return Err(failed);
        };
        if db.code() == &SqlState::UNIQUE_VIOLATION
            && db.constraint() == Some(self.sql.payment_unique.as_str())
        {
            return Ok(Ok(OneTrip::Repeat));
        }
        // A refusal the flow of several statements names exactly: the series
        // missing or closed (the number NULL), an overflow, the counter
        // behind the registry, a chain position taken.
        if hands_over(db) {
            return Ok(Ok(OneTrip::Several));
        }
        Err(failed)
    }

    async fn insert_payment(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
    ) -> Result<Option<u64>, Failure> {
        let sql = &self.sql.insert_payment;
        let params: &Params = &[
            &p.gateway,
            &p.txn,
            &scope,
            &p.amount,
            &p.currency,
            &p.period,
        ];
        // BIGSERIAL ids are positive.
        Ok(self
            .row(sql, params)
            .await?
            .map(|r| r.get::<_, i64>(0) as u64))
    }

    async fn insert_held_payment(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.insert_held_payment;
        let params: &Params = &[
            &p.gateway,
            &p.txn,
            &scope,
            &p.amount,
            &p.currency,
            &p.period,
        ];
        Ok(self.row(sql, params).await?.is_some())
    }

    async fn lock_payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<LockedPayment>, Failure> {
        let sql = &self.sql.lock_payment;
        let Some(row) = self.row(sql, &[&gateway, &txn]).await? else {
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
            amount: row.get(4),
            currency: row.get(5),
        })))
    }
}

impl ChainStatements for PgStatements<'_> {
    async fn chain_head(&mut self, scope: &str) -> Answer<Option<(u64, Option<String>)>, Failure> {
        let sql = &self.sql.chain_head;
        let Some(row) = self.row(sql, &[&scope]).await? else {
            return Ok(Ok(None));
        };
        let (seq, head): (i64, Option<String>) = (row.get(0), row.get(1));
        Ok(u64::try_from(seq)
            .map(|seq| Some((seq, head)))
            .map_err(|_| Error::Unexpected(format!("series `{scope}`: chain position {seq}"))))
    }

    async fn chain_append(
        &mut self,
        seq: u64,
        entry: &Entry,
        prev: &str,
        hash: &str,
    ) -> Answer<(), Failure> {
        let (Ok(at), Ok(before)) = (i64::try_from(seq), i64::try_from(seq - 1)) else {
            return Ok(Err(crate::flows::chain::moved(&entry.scope_key, seq)));
        };
        let post_id = match entry.post_id.map(post_param).transpose() {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let number = entry.number.to_string();
        let e = entry;
        let params: &Params = &[
            &e.scope_key,
            &at,
            &number,
            &e.event,
            &e.gateway,
            &e.transaction_id,
            &e.amount,
            &e.currency,
            &post_id,
            &e.reason,
            &e.at,
            &prev,
            &hash,
        ];
        let sql = &self.sql.chain_append;
        if self.changed(sql, params).await? != 1 {
            return Ok(Err(crate::flows::chain::moved(&e.scope_key, seq)));
        }
        let sql = &self.sql.chain_move_head;
        let first = (e.event == "issued").then(|| e.number.to_string());
        let params: &Params = &[&at, &hash, &first, &e.scope_key, &before];
        let moved = self.changed(sql, params).await?;
        Ok(if moved == 1 {
            Ok(())
        } else {
            Err(crate::flows::chain::moved(&e.scope_key, seq))
        })
    }
}

impl ClaimStatements for PgStatements<'_> {
    async fn take_claim(
        &mut self,
        claim: &str,
        scope: &str,
        number: u64,
        stale: Duration,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.claim_number;
        let stale = stale.as_secs().to_string();
        let params: &Params = &[&claim, &scope, &number.to_string(), &stale];
        Ok(self.row(sql, params).await?.is_some())
    }

    async fn number_state(
        &mut self,
        scope: &str,
        number: u64,
    ) -> Answer<Option<(String, Option<u64>, Option<String>)>, Failure> {
        let sql = &self.sql.number_state;
        let row = self.row(sql, &[&scope, &number.to_string()]).await?;
        Ok(Ok(row.map(|r| (r.get(0), post_of(r.get(1)), r.get(2)))))
    }

    async fn issue_claimed(
        &mut self,
        post_id: u64,
        scope: &str,
        number: u64,
        claim: &str,
    ) -> Answer<u64, Failure> {
        let post = match post_param(post_id) {
            Ok(post) => post,
            Err(e) => return Ok(Err(e)),
        };
        let sql = &self.sql.issue_claimed;
        let params: &Params = &[&post, &scope, &number.to_string(), &claim];
        self.changed(sql, params).await.map(Ok)
    }

    async fn set_payment_post(
        &mut self,
        post_id: u64,
        gateway: &str,
        txn: &str,
    ) -> Answer<(), Failure> {
        let post = match post_param(post_id) {
            Ok(post) => post,
            Err(e) => return Ok(Err(e)),
        };
        let sql = &self.sql.set_payment_post;
        self.changed(sql, &[&post, &gateway, &txn])
            .await
            .map(|_| Ok(()))
    }

    async fn release_claim(
        &mut self,
        scope: &str,
        number: u64,
        claim: &str,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.release_claim;
        let params: &Params = &[&scope, &number.to_string(), &claim];
        Ok(self.changed(sql, params).await? == 1)
    }
}

/// A one-statement flow's chain input for the entry issued now in `scope`
/// (to a payment with `facts`, or by a recorded allocation): the entry's
/// time, the canonical input around the previous hash and the number, and
/// the part after the number starting with the number line's newline.
fn chain_input_now(
    scope: &str,
    facts: Option<crate::flows::chain::PaymentFacts<'_>>,
) -> (String, crate::chain::CanonicalParts, String) {
    let at = crate::flows::chain::now();
    let entry = crate::flows::chain::issued_at(scope, 0, facts, at.clone());
    let parts = crate::chain::canonical_parts(&entry);
    let after = format!("\n{}", parts.after_number);
    (at, parts, after)
}

/// Whether a one-statement flow failed by a refusal the flow of several
/// statements names exactly: the series missing or closed (the number
/// NULL), an overflow, the counter behind the registry, a request key
/// taken, a chain position taken. The statement rolled back whole.
fn hands_over(db: &tokio_postgres::error::DbError) -> bool {
    use tokio_postgres::error::SqlState;
    [
        SqlState::NOT_NULL_VIOLATION,
        SqlState::UNIQUE_VIOLATION,
        SqlState::CHECK_VIOLATION,
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
    ]
    .contains(db.code())
}
