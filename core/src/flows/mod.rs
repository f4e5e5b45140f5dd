//! The flows of the store, written once for both engines (issue 25: one
//! store, two dialects). A flow is the order of statements an operation
//! sends and what it decides from their answers; a dialect (MySQL/MariaDB in
//! `mysql/dialect.rs`, PostgreSQL in `pg/dialect.rs`) supplies each statement
//! as one method of a trait here, and the begin and end of a transaction.
//!
//! Invariants:
//! - a flow that opens a transaction ([`Dialect::begin`]) ends it with
//!   [`Dialect::end`] on every path, and the end is awaited: COMMIT when the
//!   work answered a value, ROLLBACK on anything else; an end that was not
//!   confirmed leaves the connection marked, and the store closes it before
//!   anything else runs on it (`flows::call`, rule "a transaction left open
//!   is a locked series", docs/design.md §9);
//! - a dialect method answers in the two layers every store uses: the outer
//!   `Err` is a driver failure (the store classifies it and decides on a
//!   retry), the inner `Result` the operation's own answer;
//! - where the dialect confirms commits ([`Dialect::confirms_commits`]), a
//!   number taken by a transaction is told only after its rows were read
//!   back on the same connection once the COMMIT was answered;
//! - the rules a flow applies are the pure ones (`series_life`, `series`,
//!   `payment`), shared with the PHP twin through `tests/vectors/`.

use std::future::Future;

pub(crate) mod api;
pub(crate) mod awb;
pub(crate) mod call;
pub(crate) mod chain;
pub(crate) mod claims;
pub(crate) mod credit_notes;
pub(crate) mod numbering;
pub(crate) mod operations;
pub(crate) mod payments;
pub(crate) mod recorded;
pub(crate) mod series;

/// A dialect's answer: the outer `Err` is the driver's failure `E`.
pub(crate) type Answer<T, E> = std::result::Result<crate::error::Result<T>, E>;

/// What every dialect's statements share: the driver's failure, and the
/// transaction on their connection.
pub(crate) trait Dialect {
    /// The driver's failure.
    type Failure: std::fmt::Display + Send;

    /// Opens a transaction; the connection counts as holding one from
    /// before it is sent until [`Dialect::end`] confirms its end.
    fn begin(&mut self) -> impl Future<Output = Result<(), Self::Failure>> + Send;

    /// Ends the transaction by `outcome`: COMMIT when it answered a value,
    /// ROLLBACK otherwise, awaited. A failed COMMIT is the answer (its
    /// outcome is unknown); an end not confirmed leaves the mark.
    fn end<T: Send>(
        &mut self,
        outcome: Answer<T, Self::Failure>,
    ) -> impl Future<Output = Answer<T, Self::Failure>> + Send;

    /// Whether a transaction that took a number is read back after its
    /// COMMIT was answered, before the number is told (a node of a cluster
    /// where every node writes: Galera; see `mysql::session`). The flows
    /// that number ([`payments`], [`recorded`]) then tell a number only
    /// when the read finds it, and answer [`crate::error::Error::Unconfirmed`]
    /// otherwise.
    fn confirms_commits(&self) -> bool {
        false
    }
}

/// Every statement trait of the flows: what a dialect implements.
pub(crate) trait Statements:
    awb::AwbStatements
    + series::SeriesStatements
    + numbering::NumberingStatements
    + recorded::RecordedStatements
    + payments::PaymentStatements
    + claims::ClaimStatements
    + credit_notes::CreditNoteStatements
    + Send
{
}

impl<S> Statements for S where
    S: awb::AwbStatements
        + series::SeriesStatements
        + numbering::NumberingStatements
        + recorded::RecordedStatements
        + payments::PaymentStatements
        + claims::ClaimStatements
        + credit_notes::CreditNoteStatements
        + Send
{
}
