//! Appending to a series' tamper-evident chain (`crate::chain`), written
//! once for both engines: every event of a number's life is an entry,
//! written in the same transaction as the event.
//!
//! Invariants:
//! - the head of a series' chain (its last position and hash) lives on the
//!   series' row and is read under that row's lock, so the appends of one
//!   series are serialized by the lock the allocation already holds (a
//!   void, which allocates nothing, takes it here), and positions run
//!   1, 2, 3 … without a hole;
//! - an entry is inserted at the head's position + 1 and the head moved
//!   from that position only: anything else is refused (`Unexpected`) and
//!   rolls the event back with it — no event without its entry;
//! - an entry's time is the client's UTC clock, stored as the text it was
//!   hashed with (`chain::utc_text`).

use std::future::Future;

use super::{Answer, Dialect};
use crate::chain::{self, Entry, GENESIS};
use crate::error::Error;

/// The chain's statements, as one dialect sends them.
pub(crate) trait ChainStatements: Dialect {
    /// The head of `scope`'s chain under the series row's lock: its
    /// position (0 before the first entry) and hash; `None` without a
    /// series row.
    fn chain_head(
        &mut self,
        scope: &str,
    ) -> impl Future<Output = Answer<Option<(u64, Option<String>)>, Self::Failure>> + Send;

    /// Inserts `entry` at `seq` with its previous hash and hash, and moves
    /// the series' head from `seq - 1` to it; a position taken or a head
    /// that moved meanwhile is `Unexpected`.
    fn chain_append(
        &mut self,
        seq: u64,
        entry: &Entry,
        prev: &str,
        hash: &str,
    ) -> impl Future<Output = Answer<(), Self::Failure>> + Send;
}

/// Now, as an entry's `at`.
pub(crate) fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    chain::utc_text(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// The entry of a number handed out: to a payment (gateway, transaction,
/// amount, currency), or by a recorded allocation (none of them).
pub(crate) fn issued(scope: &str, number: u64, payment: Option<PaymentFacts<'_>>) -> Entry {
    issued_at(scope, number, payment, now())
}

/// [`issued`], at `at` (a one-trip packet's entry, whose time goes in its
/// text as well).
pub(crate) fn issued_at(
    scope: &str,
    number: u64,
    payment: Option<PaymentFacts<'_>>,
    at: String,
) -> Entry {
    let p = payment.unwrap_or_default();
    Entry {
        scope_key: scope.to_owned(),
        number,
        event: "issued".to_owned(),
        gateway: p.gateway.map(str::to_owned),
        transaction_id: p.txn.map(str::to_owned),
        amount: p.amount.map(str::to_owned),
        currency: p.currency.map(str::to_owned),
        post_id: None,
        reason: None,
        at,
    }
}

/// The entry of a number voided with `reason`.
pub(crate) fn void(scope: &str, number: u64, reason: &str) -> Entry {
    Entry {
        scope_key: scope.to_owned(),
        number,
        event: "void".to_owned(),
        reason: Some(reason.to_owned()),
        at: now(),
        ..Entry::default()
    }
}

/// What the chain records of a payment with its number.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PaymentFacts<'a> {
    pub(crate) gateway: Option<&'a str>,
    pub(crate) txn: Option<&'a str>,
    pub(crate) amount: Option<&'a str>,
    pub(crate) currency: Option<&'a str>,
}

/// Appends `entry` to its series' chain, inside the caller's transaction
/// (see the module's invariants).
pub(crate) async fn append<S: ChainStatements + Send>(
    statements: &mut S,
    entry: &Entry,
) -> Answer<(), S::Failure> {
    let (seq, prev) = match statements.chain_head(&entry.scope_key).await? {
        Ok(Some((seq, head))) => (seq, head.unwrap_or_else(|| GENESIS.to_owned())),
        Ok(None) => {
            return Ok(Err(Error::SeriesNotFound {
                scope: entry.scope_key.clone(),
            }))
        }
        Err(e) => return Ok(Err(e)),
    };
    let hash = chain::hash(&prev, entry);
    statements.chain_append(seq + 1, entry, &prev, &hash).await
}

/// A chain position already taken, or a head that moved under the lock.
pub(crate) fn moved(scope: &str, seq: u64) -> Error {
    Error::Unexpected(format!(
        "the chain of series `{scope}` changed under its lock at position {seq}: \
         run `counterfoil verify`"
    ))
}
