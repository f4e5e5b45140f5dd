//! Numbering inside a transaction the store opened, written once for both
//! engines: the allocation of an open series (a closed one names its
//! successor), and a recorded payment's number (docs/design.md §2 rules 4
//! and 8, §7).
//!
//! Invariants: a number is taken only by the one-statement allocation and
//! only when exactly one row answered; a payment's number exists only with
//! its registry row (`reserved`) and the payment row that names it, all in
//! the caller's transaction; a closed series' payment is numbered by its
//! successor, along at most [`series_life::MAX_SUCCESSORS`] links; the
//! payment row takes its number in exactly one row; the number enters its
//! series' chain in the same transaction (`flows::chain`).

use std::future::Future;

use super::chain::{self, ChainStatements, PaymentFacts};
use super::Answer;
use crate::format::Period;
use crate::payment::{NumberStatus, PaymentRecord};
use crate::series_life;

/// The statements of the numbering flows, as one dialect sends them.
pub(crate) trait NumberingStatements: ChainStatements {
    /// The allocation of an open series: its new counter, only when exactly
    /// one row answered; `SeriesNotFound` when none did (missing or closed),
    /// `Overflow` when the counter would pass u64::MAX.
    fn allocate_open(
        &mut self,
        scope: &str,
        count: u64,
    ) -> impl Future<Output = Answer<u64, Self::Failure>> + Send;

    /// `scope`'s `closed_by`: `None` without a row, `Some(None)` when open.
    fn successor(
        &mut self,
        scope: &str,
    ) -> impl Future<Output = Result<Option<Option<String>>, Self::Failure>> + Send;

    /// A registry row for a payment's number; a duplicate is
    /// `DuplicateNumber` (the counter is behind the registry).
    fn insert_payment_number(
        &mut self,
        scope: &str,
        number: u64,
        status: NumberStatus,
        gateway: &str,
        txn: &str,
    ) -> impl Future<Output = Answer<(), Self::Failure>> + Send;

    /// Gives payment row `payment_id` its number and series: the rows changed.
    fn set_payment_number(
        &mut self,
        number: u64,
        scope: &str,
        payment_id: u64,
    ) -> impl Future<Output = Result<u64, Self::Failure>> + Send;
}

/// Allocates `count` numbers of an open series: a series that answered no
/// row is missing (`SeriesNotFound`) or closed (`SeriesClosed`, naming its
/// successor) by [`series_life::closed_or_missing`]; one that reads as open
/// was created between the two statements, and is allocated from again
/// ([`series_life::allocate_again`]).
pub(crate) async fn allocate_open<S: NumberingStatements + Send>(
    statements: &mut S,
    scope: &str,
    count: u64,
) -> Answer<u64, S::Failure> {
    let mut tries = 0;
    loop {
        match statements.allocate_open(scope, count).await? {
            Err(crate::error::Error::SeriesNotFound { .. }) => {
                let successor = statements.successor(scope).await?;
                if series_life::allocate_again(&successor, &mut tries) {
                    continue;
                }
                return Ok(Err(series_life::closed_or_missing(scope, successor)));
            }
            other => return Ok(other),
        }
    }
}

/// Numbers recorded payment `payment_id` of `scope` (see the module's
/// invariants), for a first delivery and a held payment alike; the number
/// is appended to its series' chain with the payment's facts.
pub(crate) async fn number_payment<S: NumberingStatements + Send>(
    statements: &mut S,
    payment_id: u64,
    scope: &str,
    facts: PaymentFacts<'_>,
    period: Option<Period>,
) -> Answer<PaymentRecord, S::Failure> {
    let (gateway, txn) = (
        facts.gateway.unwrap_or_default(),
        facts.txn.unwrap_or_default(),
    );
    let mut scope = scope.to_owned();
    let mut hops = 0;
    let number = loop {
        match allocate_open(statements, &scope, 1).await? {
            Ok(n) => break n,
            Err(e) => match series_life::forward_to(e, &mut hops) {
                Ok(successor) => scope = successor,
                Err(e) => return Ok(Err(e)),
            },
        }
    };
    let status = NumberStatus::Reserved;
    if let Err(e) = statements
        .insert_payment_number(&scope, number, status, gateway, txn)
        .await?
    {
        return Ok(Err(e));
    }
    let changed = statements
        .set_payment_number(number, &scope, payment_id)
        .await?;
    if let Err(e) = crate::payment::exactly_one_row("the payment's number", changed) {
        return Ok(Err(e));
    }
    if let Err(e) = chain::append(statements, &chain::issued(&scope, number, Some(facts))).await? {
        return Ok(Err(e));
    }
    Ok(Ok(PaymentRecord::reserved(scope, number, period)))
}
