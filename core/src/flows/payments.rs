//! The payment flow, written once for both engines (docs/design.md §2 rule
//! 8, §7): a delivery recorded with its number, a payment held for its
//! missing series, a held payment completed.
//!
//! Invariants: one payment row per (gateway, transaction id), inserted
//! first in its transaction; a repeat finds the first delivery's number;
//! a payment row is read in one statement with its registry row
//! and judged by one rule ([`crate::payment::recorded_payment`]); a held
//! payment is numbered only under its payment row's lock, from the series it
//! was held for (or that series' successor), so a concurrent delivery waits
//! and then finds the number; a payment that was numbered keeps its number.
//! In one trip ([`PaymentStatements::complete_in_one_trip`]) the lock is
//! taken by the statement that numbers the row, only while the row is still
//! held with the values read; anything else goes to [`complete_held`].
//! Where the dialect confirms commits (a Galera node), a number a
//! transaction took is told only once the payment row read back after the
//! COMMIT carries it ([`confirmed`]).

use std::future::Future;

use super::chain::PaymentFacts;
use super::numbering::{number_payment, NumberingStatements};
use super::{Answer, Dialect};
use crate::error::Error;
use crate::format::Period;
use crate::payment::{Held, PaymentRecord};

/// A payment row as stored, with its number's registry row.
pub(crate) struct StoredPayment {
    pub(crate) scope: String,
    pub(crate) number: Option<u64>,
    /// The registry row's status (none without a registry row).
    pub(crate) status: Option<String>,
    pub(crate) post_id: Option<u64>,
    pub(crate) period: Option<String>,
    pub(crate) amount: Option<String>,
    pub(crate) currency: Option<String>,
}

/// A payment held for its series, as read (not under its lock): what its
/// completion in one round trip numbers it with, and checks unchanged.
pub(crate) struct HeldPayment {
    pub(crate) scope: String,
    pub(crate) period: Option<String>,
    pub(crate) amount: Option<String>,
    pub(crate) currency: Option<String>,
}

impl HeldPayment {
    /// The record of this payment once numbered `number` in its series.
    pub(crate) fn numbered(&self, number: u64) -> PaymentRecord {
        let period = self.period.as_deref().and_then(Period::parse_stored);
        PaymentRecord::reserved(self.scope.clone(), number, period)
    }
}

/// A payment row under its lock.
pub(crate) struct LockedPayment {
    pub(crate) id: u64,
    pub(crate) scope: String,
    pub(crate) number: Option<u64>,
    pub(crate) period: Option<String>,
    pub(crate) amount: Option<String>,
    pub(crate) currency: Option<String>,
}

/// A payment recorded by an earlier delivery.
pub(crate) enum Found {
    /// It has its number.
    Numbered(PaymentRecord),
    /// It is held for its series, without a number.
    Waiting(HeldPayment),
}

impl Found {
    /// What holding this payment again answers: its number, or that it
    /// still waits (recorded by an earlier delivery, not created now).
    pub(crate) fn held_again(self) -> Held {
        match self {
            Found::Numbered(r) => Held::Numbered(r),
            Found::Waiting(_) => Held::Waiting { created: false },
        }
    }
}

/// A payment's values as recorded with it.
pub(crate) struct NewPayment<'a> {
    pub(crate) gateway: &'a str,
    pub(crate) txn: &'a str,
    pub(crate) amount: Option<&'a str>,
    pub(crate) currency: Option<&'a str>,
    /// The local period it arrived in, as stored (`YYYY-MM`).
    pub(crate) period: Option<&'a str>,
}

impl NewPayment<'_> {
    /// What the chain records of this payment.
    pub(crate) fn facts(&self) -> PaymentFacts<'_> {
        PaymentFacts {
            gateway: Some(self.gateway),
            txn: Some(self.txn),
            amount: self.amount,
            currency: self.currency,
        }
    }
}

/// How a first delivery sent in one round trip ended.
pub(crate) enum OneTrip {
    /// Recorded with its number, committed.
    Numbered(PaymentRecord),
    /// An earlier delivery recorded the payment (its row's unique key);
    /// nothing changed.
    Repeat,
    /// Not in one trip (the dialect has none, or the series is missing or
    /// closed, the counter behind the registry, …); nothing changed, and
    /// the flow of several statements decides.
    Several,
}

/// The payment statements, as one dialect sends them.
pub(crate) trait PaymentStatements: Dialect {
    /// A payment's first delivery in one round trip where the dialect has
    /// one (issue 30): the same work as [`record`]'s first transaction, its
    /// own transaction begun and ended (COMMIT, or ROLLBACK when it stopped
    /// part-way) before it answers.
    fn record_in_one_trip(
        &mut self,
        _scope: &str,
        _payment: &NewPayment<'_>,
        _period: Option<Period>,
    ) -> impl Future<Output = Answer<OneTrip, Self::Failure>> + Send {
        async { Ok(Ok(OneTrip::Several)) }
    }

    /// A held payment's completion in one round trip where the dialect has
    /// one: the same work as [`complete_held`]'s transaction for a payment
    /// still held for `held.scope` with its amount and currency, the
    /// series open; `Numbered`, or `Several` (nothing changed) for
    /// anything else: numbered meanwhile, the series missing or closed, …
    fn complete_in_one_trip(
        &mut self,
        _gateway: &str,
        _txn: &str,
        _held: &HeldPayment,
    ) -> impl Future<Output = Answer<OneTrip, Self::Failure>> + Send {
        async { Ok(Ok(OneTrip::Several)) }
    }

    /// The payment (gateway, transaction id) with its registry row.
    fn payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> impl Future<Output = Answer<Option<StoredPayment>, Self::Failure>> + Send;

    /// Inserts the payment row of `scope`: its id, or `None` when the
    /// payment was recorded before (the unique key on gateway and
    /// transaction id; nothing changed).
    fn insert_payment(
        &mut self,
        scope: &str,
        payment: &NewPayment<'_>,
    ) -> impl Future<Output = Result<Option<u64>, Self::Failure>> + Send;

    /// Inserts the payment row of `scope` without a number (held for its
    /// series); `false` when the payment was recorded before.
    fn insert_held_payment(
        &mut self,
        scope: &str,
        payment: &NewPayment<'_>,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;

    /// The payment row under its lock.
    fn lock_payment(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> impl Future<Output = Answer<Option<LockedPayment>, Self::Failure>> + Send;
}

/// Reads a payment an earlier delivery recorded.
pub(crate) async fn find_payment<S: PaymentStatements + Send>(
    statements: &mut S,
    gateway: &str,
    txn: &str,
) -> Answer<Found, S::Failure> {
    let stored = match statements.payment(gateway, txn).await? {
        Ok(Some(stored)) => stored,
        Ok(None) => {
            return Ok(Err(Error::Unexpected(format!(
                "payment {gateway}/{txn} conflicted but cannot be read"
            ))))
        }
        Err(e) => return Ok(Err(e)),
    };
    let held = HeldPayment {
        scope: stored.scope.clone(),
        period: stored.period.clone(),
        amount: stored.amount,
        currency: stored.currency,
    };
    Ok(crate::payment::recorded_payment(
        gateway,
        txn,
        stored.scope,
        stored.number,
        stored.status.as_deref(),
        stored.post_id,
        stored.period.as_deref(),
    )
    .map(|found| found.map_or(Found::Waiting(held), Found::Numbered)))
}

/// Records a delivery of a payment with its number, once per (gateway,
/// transaction id): in one transaction the payment row first, then its
/// number ([`number_payment`]). A payment recorded before (one delivery
/// after another, or at the same moment: the second waits on the unique
/// key) gets its first delivery's number, or, held for its series, is
/// numbered now ([`complete_held`]).
///
/// With `one_trip`, the first delivery is tried in one round trip first
/// ([`PaymentStatements::record_in_one_trip`]); what it cannot settle goes
/// the way of several statements.
pub(crate) async fn record<S>(
    statements: &mut S,
    scope: &str,
    payment: &NewPayment<'_>,
    period: Option<Period>,
    one_trip: bool,
) -> Answer<PaymentRecord, S::Failure>
where
    S: PaymentStatements + NumberingStatements + Send,
{
    if one_trip {
        match statements
            .record_in_one_trip(scope, payment, period)
            .await?
        {
            Ok(OneTrip::Numbered(record)) => {
                return confirmed(statements, payment.gateway, payment.txn, record).await
            }
            Ok(OneTrip::Repeat) => return recorded_before(statements, payment, one_trip).await,
            Ok(OneTrip::Several) => {}
            Err(e) => return Ok(Err(e)),
        }
    }
    statements.begin().await?;
    let outcome = record_first(statements, scope, payment, period).await;
    match statements.end(outcome).await? {
        Ok(Some(record)) => confirmed(statements, payment.gateway, payment.txn, record).await,
        Err(e) => Ok(Err(e)),
        Ok(None) => recorded_before(statements, payment, one_trip).await,
    }
}

/// A payment an earlier delivery recorded: its number, or, held for its
/// series, numbered now: with `one_trip` in one round trip first
/// ([`PaymentStatements::complete_in_one_trip`], from the values just
/// read), else, or when that cannot settle it, [`complete_held`].
async fn recorded_before<S>(
    statements: &mut S,
    payment: &NewPayment<'_>,
    one_trip: bool,
) -> Answer<PaymentRecord, S::Failure>
where
    S: PaymentStatements + NumberingStatements + Send,
{
    let held = match find_payment(statements, payment.gateway, payment.txn).await? {
        Ok(Found::Numbered(r)) => return Ok(Ok(r)),
        Ok(Found::Waiting(held)) => held,
        Err(e) => return Ok(Err(e)),
    };
    if one_trip {
        match statements
            .complete_in_one_trip(payment.gateway, payment.txn, &held)
            .await?
        {
            Ok(OneTrip::Numbered(record)) => {
                return confirmed(statements, payment.gateway, payment.txn, record).await
            }
            Ok(OneTrip::Repeat | OneTrip::Several) => {}
            Err(e) => return Ok(Err(e)),
        }
    }
    complete_held(statements, payment.gateway, payment.txn).await
}

/// Records a payment whose series does not exist yet, without a number
/// (docs/design.md §7: a payment is never lost because its series is
/// missing), once per (gateway, transaction id): a repeat reports
/// `Waiting { created: false }`, or the number it received since.
pub(crate) async fn hold<S: PaymentStatements + Send>(
    statements: &mut S,
    scope: &str,
    payment: &NewPayment<'_>,
) -> Answer<Held, S::Failure> {
    if statements.insert_held_payment(scope, payment).await? {
        return Ok(Ok(Held::Waiting { created: true }));
    }
    Ok(find_payment(statements, payment.gateway, payment.txn)
        .await?
        .map(Found::held_again))
}

/// Gives a held payment its number, in one transaction under the payment
/// row's lock: from the series chosen when it arrived (or its successor),
/// recorded as reserved, the payment row updated. A concurrent delivery
/// waits on the lock and then finds the number. A series that still does
/// not exist is `SeriesNotFound`, and nothing changes.
pub(crate) async fn complete_held<S>(
    statements: &mut S,
    gateway: &str,
    txn: &str,
) -> Answer<PaymentRecord, S::Failure>
where
    S: PaymentStatements + NumberingStatements + Send,
{
    statements.begin().await?;
    let outcome = number_held(statements, gateway, txn).await;
    match statements.end(outcome).await? {
        Ok(Some(record)) => confirmed(statements, gateway, txn, record).await,
        Err(e) => Ok(Err(e)),
        Ok(None) => Ok(numbered_meanwhile(
            find_payment(statements, gateway, txn).await?,
            gateway,
            txn,
        )),
    }
}

/// The number a transaction of this call just committed, told only when it
/// holds: where the dialect confirms commits (a Galera node), the payment
/// row is read back on the same connection and must carry `record`'s
/// number in its series; a row missing or numbered otherwise is
/// [`Error::Unconfirmed`] (a COMMIT answered OK whose write set the
/// cluster aborted: the number was not taken, and may be handed out to
/// the next payment). A failed read is the driver's failure: the call's
/// loop retries, and the retry finds the row or records the payment anew.
async fn confirmed<S: PaymentStatements + Send>(
    statements: &mut S,
    gateway: &str,
    txn: &str,
    record: PaymentRecord,
) -> Answer<PaymentRecord, S::Failure> {
    if !statements.confirms_commits() {
        return Ok(Ok(record));
    }
    let stored = match statements.payment(gateway, txn).await? {
        Ok(stored) => stored,
        Err(e) => return Ok(Err(e)),
    };
    let found = stored.as_ref().map(|p| (p.scope.as_str(), p.number));
    if found == Some((record.scope.as_str(), Some(record.number))) {
        return Ok(Ok(record));
    }
    Ok(Err(Error::Unconfirmed {
        operation: "record_payment",
        detail: format!(
            "payment {gateway}/{txn} was told number {} of `{}`; read back: {}",
            record.number,
            record.scope,
            match found {
                None => "no payment row".to_owned(),
                Some((scope, number)) => format!("series `{scope}`, number {number:?}"),
            }
        ),
    }))
}

/// A delivery's work inside its transaction: the payment row first, then
/// its number (`Some`); `None` when an earlier delivery recorded it.
async fn record_first<S>(
    statements: &mut S,
    scope: &str,
    payment: &NewPayment<'_>,
    period: Option<Period>,
) -> Answer<Option<PaymentRecord>, S::Failure>
where
    S: PaymentStatements + NumberingStatements + Send,
{
    let Some(id) = statements.insert_payment(scope, payment).await? else {
        return Ok(Ok(None));
    };
    Ok(
        number_payment(statements, id, scope, payment.facts(), period)
            .await?
            .map(Some),
    )
}

/// The work of completing a held payment inside its transaction: its number
/// (`Some`), or `None` when another delivery numbered it while this one
/// waited for the lock.
async fn number_held<S>(
    statements: &mut S,
    gateway: &str,
    txn: &str,
) -> Answer<Option<PaymentRecord>, S::Failure>
where
    S: PaymentStatements + NumberingStatements + Send,
{
    let locked = match statements.lock_payment(gateway, txn).await? {
        Ok(Some(locked)) => locked,
        Ok(None) => {
            return Ok(Err(Error::Unexpected(format!(
                "payment {gateway}/{txn} disappeared"
            ))))
        }
        Err(e) => return Ok(Err(e)),
    };
    if locked.number.is_some() {
        return Ok(Ok(None));
    }
    let period = locked.period.as_deref().and_then(Period::parse_stored);
    let facts = PaymentFacts {
        gateway: Some(gateway),
        txn: Some(txn),
        amount: locked.amount.as_deref(),
        currency: locked.currency.as_deref(),
    };
    Ok(
        number_payment(statements, locked.id, &locked.scope, facts, period)
            .await?
            .map(Some),
    )
}

/// What a payment that another delivery numbered meanwhile reads as.
fn numbered_meanwhile(
    found: crate::error::Result<Found>,
    gateway: &str,
    txn: &str,
) -> crate::error::Result<PaymentRecord> {
    match found {
        Ok(Found::Numbered(r)) => Ok(r),
        Ok(Found::Waiting(_)) => Err(Error::Unexpected(format!(
            "payment {gateway}/{txn} was numbered and then lost its number"
        ))),
        Err(e) => Err(e),
    }
}
