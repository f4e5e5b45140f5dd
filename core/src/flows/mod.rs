//! The flows of the store, written once for both engines (issue 25: one
//! store, two dialects). A flow is the order of statements an operation
//! sends and what it decides from their answers; a dialect (MySQL/MariaDB in
//! `store/`, PostgreSQL in `pg/`) supplies each statement as one method of a
//! trait here, on a transaction its store opened and will end.
//!
//! Invariants:
//! - a flow never opens or ends a transaction: the store's one construct
//!   does (`store::session::Tx`, `pg::PgConn::begin`), so every transaction
//!   ends in COMMIT or ROLLBACK whatever the flow returns;
//! - a dialect method answers in the two layers every store uses: the outer
//!   `Err` is a driver failure (the store classifies it and decides on a
//!   retry), the inner `Result` the operation's own answer;
//! - the rules a flow applies are the pure ones (`series_life`, `series`,
//!   `payment`), shared with the PHP twin through `tests/vectors/`.

pub(crate) mod call;
pub(crate) mod continue_series;
pub(crate) mod numbering;
pub(crate) mod payments;

/// A dialect's answer: the outer `Err` is the driver's failure `E`.
pub(crate) type Answer<T, E> = std::result::Result<crate::error::Result<T>, E>;
