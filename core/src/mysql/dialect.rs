//! The MySQL/MariaDB dialect of the engine-neutral flows (`crate::flows`):
//! each statement a flow sends, and the begin and end of its transactions,
//! on the store's session.
//!
//! Invariants: only statements from `sql.rs` are sent, every value bound;
//! "rows changed" is the server's (the store connects with
//! `client_found_rows(false)`); a duplicate key is an answer (`false`,
//! `None` or `DuplicateNumber`), any other failure the driver's.

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use crate::chain::Entry;
use crate::error::{codes, Error};
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

use super::session::Session;
use super::{vetting, Sql};

pub(super) type Failure = mysql_async::Error;

/// The flows' statements on the store's session.
pub(crate) struct MysqlStatements<'a> {
    pub(super) session: &'a mut Session,
    pub(super) sql: &'a Sql,
}

impl MysqlStatements<'_> {
    /// The number a one-trip packet that committed took: its allocation's
    /// OK packet carries it; when that says 0 (a trigger on the series'
    /// table that inserts rows resets it), the packet's own user variable,
    /// which only this session's packet set.
    async fn number_of_packet(&mut self, ids: &[u64], packet: &str) -> Answer<u64, Failure> {
        if let Some(&n) = ids.get(super::sql::ONE_TRIP_ALLOCATION).filter(|n| **n > 0) {
            return Ok(Ok(n));
        }
        let taken: Option<Option<u64>> = self.conn().query_first("SELECT @cf_number").await?;
        Ok(match taken.flatten() {
            Some(n) if n > 0 => Ok(n),
            other => Err(Error::Unexpected(format!(
                "the one-trip {packet} packet committed but its allocation answered {ids:?}, @cf_number {other:?}"
            ))),
        })
    }

    /// Sends the one-trip packet `text` (a transaction ending in COMMIT):
    /// the number it took when it committed; else, its transaction rolled
    /// back first, `Repeat` for a 1062 at `repeat_at`, `Several` for a
    /// refusal the flow of several statements names ([`hands_over`] up to
    /// `last`), or the failure.
    async fn send_one_trip(
        &mut self,
        text: &str,
        packet: &str,
        last: usize,
        repeat_at: Option<usize>,
    ) -> Answer<PacketEnd, Failure> {
        let (at, failed) = match self.session.send_transaction(text).await {
            Ok(ids) => {
                let number = self.number_of_packet(&ids, packet).await?;
                return Ok(number.map(PacketEnd::Numbered));
            }
            Err(stopped) => stopped,
        };
        // Stopped part-way: the transaction is open; roll it back first.
        let answer = match &failed {
            mysql_async::Error::Server(e)
                if Some(at) == repeat_at && e.code == codes::ER_DUP_ENTRY =>
            {
                Ok(Ok(PacketEnd::Repeat))
            }
            _ if hands_over(&failed, at, last) => Ok(Ok(PacketEnd::Several)),
            _ => Err(failed),
        };
        self.session.roll_back(answer).await
    }

    pub(super) fn conn(&mut self) -> &mut Conn {
        self.session
    }

    /// Runs `statement`: the rows it changed.
    pub(super) async fn changed(
        &mut self,
        statement: &str,
        params: impl Into<mysql_async::Params> + Send,
    ) -> Result<u64, Failure> {
        let conn = self.conn();
        conn.exec_drop(statement, params).await?;
        Ok(conn.affected_rows())
    }

    /// Runs an INSERT: `false` when the key exists already.
    pub(super) async fn inserted(
        &mut self,
        statement: &str,
        params: impl Into<mysql_async::Params> + Send,
    ) -> Result<bool, Failure> {
        match self.conn().exec_drop(statement, params).await {
            Ok(()) => Ok(true),
            Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl Dialect for MysqlStatements<'_> {
    type Failure = Failure;

    async fn begin(&mut self) -> Result<(), Failure> {
        self.session.begin().await
    }

    async fn end<T: Send>(&mut self, outcome: Answer<T, Failure>) -> Answer<T, Failure> {
        self.session.end(outcome).await
    }

    fn confirms_commits(&self) -> bool {
        self.session.confirms_commits()
    }
}

impl SeriesStatements for MysqlStatements<'_> {
    async fn insert_series(
        &mut self,
        scope: &str,
        counter: u64,
        start: u64,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.series.initialize;
        self.inserted(sql, (scope, counter, start)).await
    }

    async fn series_row(&mut self, scope: &str) -> Answer<Option<(u64, Option<u64>)>, Failure> {
        let sql = &self.sql.series.current;
        self.conn().exec_first(sql, (scope,)).await.map(Ok)
    }

    async fn raise_counter(&mut self, scope: &str, counter: u64) -> Result<u64, Failure> {
        let sql = &self.sql.series.advance;
        self.changed(sql, (counter, scope)).await
    }

    async fn allocate(&mut self, scope: &str, count: u64) -> Answer<u64, Failure> {
        let sql = &self.sql.series.allocate;
        run_allocation(self.conn(), sql, scope, count).await
    }

    async fn series_like(&mut self, pattern: &str) -> Answer<Vec<(String, u64)>, Failure> {
        let sql = &self.sql.series.list_like;
        self.conn().exec(sql, (pattern,)).await.map(Ok)
    }

    async fn lock_series(&mut self, scope: &str) -> Answer<Option<(u64, Option<String>)>, Failure> {
        let sql = &self.sql.series.lock_series;
        self.conn().exec_first(sql, (scope,)).await.map(Ok)
    }

    async fn close(&mut self, successor: &str, previous: &str) -> Result<u64, Failure> {
        let sql = &self.sql.series.close;
        self.changed(sql, (successor, previous)).await
    }
}

impl NumberingStatements for MysqlStatements<'_> {
    async fn allocate_open(&mut self, scope: &str, count: u64) -> Answer<u64, Failure> {
        let sql = &self.sql.series.allocate_open;
        run_allocation(self.conn(), sql, scope, count).await
    }

    async fn successor(&mut self, scope: &str) -> Result<Option<Option<String>>, Failure> {
        let sql = &self.sql.series.successor;
        let row: Option<(Option<String>,)> = self.conn().exec_first(sql, (scope,)).await?;
        Ok(row.map(|(s,)| s))
    }

    async fn insert_payment_number(
        &mut self,
        scope: &str,
        number: u64,
        status: NumberStatus,
        gateway: &str,
        txn: &str,
    ) -> Answer<(), Failure> {
        let row = (scope, number, status.as_str(), "payment", gateway, txn);
        let sql = &self.sql.registry.insert_number;
        insert_registry_row(self.conn(), sql, scope, number, row).await
    }

    async fn set_payment_number(
        &mut self,
        number: u64,
        scope: &str,
        payment_id: u64,
    ) -> Result<u64, Failure> {
        let sql = &self.sql.registry.set_payment_number;
        self.changed(sql, (number, scope, payment_id)).await
    }
}

impl RecordedStatements for MysqlStatements<'_> {
    async fn find_by_request(
        &mut self,
        scope: &str,
        key: &str,
    ) -> Answer<Option<(u64, String, Option<String>)>, Failure> {
        let sql = &self.sql.registry.find_by_request;
        self.conn().exec_first(sql, (scope, key)).await.map(Ok)
    }

    async fn void_unanswered(
        &mut self,
        scope: &str,
        number: u64,
        call: &str,
    ) -> Result<u64, Failure> {
        let sql = &self.sql.registry.void_unanswered;
        let params = (UNANSWERED_REASON, scope, number, call);
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
        let registry = &self.sql.registry;
        let conn = &mut **self.session;
        match request_key {
            None => {
                let row = (scope, number, source, call);
                let sql = &registry.insert_unconfirmed_by_call;
                insert_registry_row(conn, sql, scope, number, row).await
            }
            Some(key) => {
                let row = (scope, number, source, call, key);
                let sql = &registry.insert_keyed_by_call;
                insert_registry_row(conn, sql, scope, number, row).await
            }
        }
    }

    async fn confirm(&mut self, scope: &str, number: u64, call: &str) -> Result<u64, Failure> {
        let sql = &self.sql.registry.confirm_by_call;
        self.changed(sql, (scope, number, call)).await
    }

    async fn record_in_one_trip(
        &mut self,
        scope: &str,
        call: &RecordedCall,
    ) -> Answer<RecordedOneTrip, Failure> {
        if self.session.multi_writer() {
            return Ok(Ok(RecordedOneTrip::Several));
        }
        let at = crate::flows::chain::now();
        let values = super::sql::OneTripRecorded {
            scope,
            source: &call.source,
            call: &call.mark,
            request_key: call.request_key.as_deref(),
            at: &at,
        };
        let template = &self.sql.registry.recorded_one_trip;
        let text = super::sql::one_trip_recorded_packet(template, &values);
        let last = super::sql::ONE_TRIP_RECORDED_CHAIN_ENTRY;
        let end = self.send_one_trip(&text, "recorded", last, None).await?;
        Ok(end.map(|end| match end {
            PacketEnd::Numbered(number) => RecordedOneTrip::Numbered(number),
            PacketEnd::Repeat | PacketEnd::Several => RecordedOneTrip::Several,
        }))
    }

    async fn unconfirmed_of_call(&mut self, scope: &str, call: &str) -> Result<Vec<u64>, Failure> {
        let sql = &self.sql.registry.unconfirmed_of_call;
        self.conn().exec(sql, (scope, call)).await
    }
}

impl PaymentStatements for MysqlStatements<'_> {
    async fn record_in_one_trip(
        &mut self,
        scope: &str,
        payment: &NewPayment<'_>,
        period: Option<crate::format::Period>,
    ) -> Answer<OneTrip, Failure> {
        use super::sql::{ONE_TRIP_CHAIN_ENTRY, ONE_TRIP_PAYMENT_ROW};
        if self.session.multi_writer() {
            return Ok(Ok(OneTrip::Several));
        }
        let at = crate::flows::chain::now();
        let values = super::sql::OneTripPayment {
            scope,
            gateway: payment.gateway,
            txn: payment.txn,
            amount: payment.amount,
            currency: payment.currency,
            period: payment.period,
            at: &at,
        };
        let template = &self.sql.registry.payment_one_trip;
        let text = super::sql::one_trip_payment_packet(template, &values);
        let end = self
            .send_one_trip(
                &text,
                "payment",
                ONE_TRIP_CHAIN_ENTRY,
                Some(ONE_TRIP_PAYMENT_ROW),
            )
            .await?;
        Ok(end.map(|end| match end {
            PacketEnd::Numbered(number) => {
                OneTrip::Numbered(PaymentRecord::reserved(scope.to_owned(), number, period))
            }
            PacketEnd::Repeat => OneTrip::Repeat,
            PacketEnd::Several => OneTrip::Several,
        }))
    }

    async fn payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<StoredPayment>, Failure> {
        type Row = (
            String,
            Option<u64>,
            Option<String>,
            Option<u64>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let sql = &self.sql.registry.find_payment;
        let row: Option<Row> = self.conn().exec_first(sql, (gateway, txn)).await?;
        Ok(Ok(row.map(
            |(scope, number, status, post_id, period, amount, currency)| StoredPayment {
                scope,
                number,
                status,
                post_id,
                period,
                amount,
                currency,
            },
        )))
    }

    async fn complete_in_one_trip(
        &mut self,
        gateway: &str,
        txn: &str,
        held: &HeldPayment,
    ) -> Answer<OneTrip, Failure> {
        if self.session.multi_writer() {
            return Ok(Ok(OneTrip::Several));
        }
        let at = crate::flows::chain::now();
        let values = super::sql::OneTripPayment {
            scope: &held.scope,
            gateway,
            txn,
            amount: held.amount.as_deref(),
            currency: held.currency.as_deref(),
            period: held.period.as_deref(),
            at: &at,
        };
        let template = &self.sql.registry.complete_one_trip;
        let text = super::sql::one_trip_payment_packet(template, &values);
        let last = super::sql::ONE_TRIP_CHAIN_ENTRY;
        let end = self.send_one_trip(&text, "completion", last, None).await?;
        Ok(end.map(|end| match end {
            PacketEnd::Numbered(number) => OneTrip::Numbered(held.numbered(number)),
            PacketEnd::Repeat | PacketEnd::Several => OneTrip::Several,
        }))
    }

    async fn insert_payment(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
    ) -> Result<Option<u64>, Failure> {
        let row = (p.gateway, p.txn, scope, p.amount, p.currency, p.period);
        let sql = &self.sql.registry.insert_payment;
        Ok(match self.inserted(sql, row).await? {
            true => Some(self.conn().last_insert_id().unwrap_or(0)),
            false => None,
        })
    }

    async fn insert_held_payment(
        &mut self,
        scope: &str,
        p: &NewPayment<'_>,
    ) -> Result<bool, Failure> {
        let row = (p.gateway, p.txn, scope, p.amount, p.currency, p.period);
        let sql = &self.sql.registry.insert_held_payment;
        self.inserted(sql, row).await
    }

    async fn lock_payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> Answer<Option<LockedPayment>, Failure> {
        type Row = (
            u64,
            String,
            Option<u64>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let sql = &self.sql.registry.lock_payment;
        let row: Option<Row> = self.conn().exec_first(sql, (gateway, txn)).await?;
        Ok(Ok(row.map(
            |(id, scope, number, period, amount, currency)| LockedPayment {
                id,
                scope,
                number,
                period,
                amount,
                currency,
            },
        )))
    }
}

impl ClaimStatements for MysqlStatements<'_> {
    async fn take_claim(
        &mut self,
        claim: &str,
        scope: &str,
        number: u64,
        stale: std::time::Duration,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.registry.claim_number;
        let params = (claim, scope, number, stale.as_secs());
        Ok(self.changed(sql, params).await? == 1)
    }

    async fn number_state(
        &mut self,
        scope: &str,
        number: u64,
    ) -> Answer<Option<(String, Option<u64>, Option<String>)>, Failure> {
        let sql = &self.sql.registry.number_state;
        self.conn().exec_first(sql, (scope, number)).await.map(Ok)
    }

    async fn issue_claimed(
        &mut self,
        post_id: u64,
        scope: &str,
        number: u64,
        claim: &str,
    ) -> Answer<u64, Failure> {
        let sql = &self.sql.registry.issue_claimed;
        self.changed(sql, (post_id, scope, number, claim))
            .await
            .map(Ok)
    }

    async fn set_payment_post(
        &mut self,
        post_id: u64,
        gateway: &str,
        txn: &str,
    ) -> Answer<(), Failure> {
        let sql = &self.sql.registry.set_payment_post;
        self.conn()
            .exec_drop(sql, (post_id, gateway, txn))
            .await
            .map(Ok)
    }

    async fn release_claim(
        &mut self,
        scope: &str,
        number: u64,
        claim: &str,
    ) -> Result<bool, Failure> {
        let sql = &self.sql.registry.release_claim;
        Ok(self.changed(sql, (scope, number, claim)).await? == 1)
    }
}

impl ChainStatements for MysqlStatements<'_> {
    async fn chain_head(&mut self, scope: &str) -> Answer<Option<(u64, Option<String>)>, Failure> {
        let sql = &self.sql.registry.chain_head;
        self.conn().exec_first(sql, (scope,)).await.map(Ok)
    }

    async fn chain_append(
        &mut self,
        seq: u64,
        entry: &Entry,
        prev: &str,
        hash: &str,
    ) -> Answer<(), Failure> {
        let [_, _, _, gateway, txn, amount, currency, post_id, reason, _] = entry.values();
        let row: Vec<mysql_async::Value> = vec![
            entry.scope_key.as_str().into(),
            seq.into(),
            entry.number.into(),
            entry.event.as_str().into(),
            gateway.into(),
            txn.into(),
            amount.into(),
            currency.into(),
            post_id.into(),
            reason.into(),
            entry.at.as_str().into(),
            prev.into(),
            hash.into(),
        ];
        let sql = &self.sql.registry.chain_append;
        if !self.inserted(sql, row).await? {
            return Ok(Err(crate::flows::chain::moved(&entry.scope_key, seq)));
        }
        let sql = &self.sql.registry.chain_move_head;
        let first = (entry.event == "issued").then_some(entry.number);
        let params = (seq, hash, first, entry.scope_key.as_str(), seq - 1);
        let moved = self.changed(sql, params).await?;
        Ok(if moved == 1 {
            Ok(())
        } else {
            Err(crate::flows::chain::moved(&entry.scope_key, seq))
        })
    }
}

/// Runs one allocation statement (`count`, `scope`) and judges its OK
/// packet: the new counter, only when exactly one row changed.
pub(super) async fn run_allocation(
    conn: &mut Conn,
    statement: &str,
    scope: &str,
    count: u64,
) -> Answer<u64, Failure> {
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
async fn insert_registry_row(
    conn: &mut Conn,
    statement: &str,
    scope: &str,
    number: u64,
    params: impl Into<mysql_async::Params> + Send,
) -> Answer<(), Failure> {
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

/// How a one-trip packet ended ([`MysqlStatements::send_one_trip`]).
enum PacketEnd {
    /// Committed; the number it took.
    Numbered(u64),
    /// Stopped at the payment's unique key: recorded before; rolled back.
    Repeat,
    /// Stopped at a refusal the several statements name; rolled back.
    Several,
}

/// Whether a one-trip packet stopped at `at` by a refusal the flow of
/// several statements names exactly (the series missing or closed, an
/// overflow, the counter behind the registry, a request key taken, a chain
/// that moved: 1048, 1062 or 1690 from the allocation up to `last`):
/// nothing stays of that try, and the several statements decide.
fn hands_over(failed: &mysql_async::Error, at: usize, last: usize) -> bool {
    matches!(failed, mysql_async::Error::Server(e)
    if (super::sql::ONE_TRIP_ALLOCATION..=last).contains(&at)
        && matches!(
            e.code,
            codes::ER_BAD_NULL_ERROR | codes::ER_DUP_ENTRY | codes::ER_DATA_OUT_OF_RANGE
        ))
}
