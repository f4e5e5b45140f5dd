//! The store's connection and the one construct that ends its transactions.
//!
//! Invariants (docs/design.md §9, "a transaction left open is a locked series"):
//! - every transaction the MySQL/MariaDB store opens is a [`Tx`]: [`Tx::end`] ends in COMMIT when the work answered a value and
//!   in ROLLBACK on anything else (a typed refusal, a driver error, an early
//!   return), and the end is awaited before the call returns;
//! - [`Session::open`] is true from the moment `START TRANSACTION` is sent
//!   until its COMMIT or ROLLBACK is confirmed; a session still open when the
//!   store regains control (the end failed, the work panicked or was
//!   cancelled by the deadline) is never used again: the store closes its
//!   socket ([`Session::discard`]), and the server rolls the work back;
//! - a connection is never left holding a transaction while its process
//!   idles, so a failed call cannot keep a series' row locked, and MySQL's
//!   implicit COMMIT at the next `START TRANSACTION` can never publish half
//!   of a failed call.

use std::ops::{Deref, DerefMut};
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use super::AttemptResult;

/// A connection of the store and whether a transaction may be open on it.
pub(crate) struct Session {
    conn: Conn,
    open: bool,
}

impl Session {
    pub(crate) fn new(conn: Conn) -> Self {
        Self { conn, open: false }
    }

    /// Whether a transaction may be open (its end was not confirmed).
    pub(crate) fn open(&self) -> bool {
        self.open
    }

    /// The connection, to close politely (no transaction is open).
    pub(crate) fn into_conn(self) -> Conn {
        self.conn
    }

    /// Closes the socket now (the server then rolls back whatever is open),
    /// waiting at most `bound` for the polite goodbye. A dropped `Conn` would
    /// only close on the runtime's next turn, which in a PHP worker comes
    /// with the next call: too late for the lock it holds.
    pub(crate) async fn discard(self, bound: Duration) {
        // `disconnect` marks the connection closed before it writes, so
        // cutting it short drops the socket without a deferred task.
        let _ = tokio::time::timeout(bound, self.conn.disconnect()).await;
    }
}

impl Deref for Session {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.conn
    }
}

impl DerefMut for Session {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.conn
    }
}

/// An open transaction on a session: the work runs on it (it derefs to the
/// connection) and [`Tx::end`] commits or rolls back. A `Tx` dropped without
/// `end` (an early return, a panic, the deadline) leaves its session marked
/// open, and the store discards that connection before anything else runs.
#[must_use = "a transaction must be ended with Tx::end"]
pub(crate) struct Tx<'s> {
    session: &'s mut Session,
}

impl<'s> Tx<'s> {
    /// Sends `START TRANSACTION`. The session counts as open from before
    /// it is sent.
    pub(crate) async fn begin(session: &'s mut Session) -> Result<Tx<'s>, mysql_async::Error> {
        session.open = true;
        session.conn.query_drop("START TRANSACTION").await?;
        Ok(Tx { session })
    }

    /// Ends the transaction by the work's `outcome`: COMMIT when it answered
    /// a value, ROLLBACK on a typed refusal or a driver error; the end is
    /// awaited. A failed end is reported (a COMMIT whose answer was lost has
    /// an unknown outcome) and leaves the session open, so it is discarded.
    pub(crate) async fn end<T>(self, outcome: AttemptResult<T>) -> AttemptResult<T> {
        let conn = &mut self.session.conn;
        let end = if matches!(outcome, Ok(Ok(_))) {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        match conn.query_drop(end).await {
            Ok(()) => {
                self.session.open = false;
                outcome
            }
            Err(failed) => {
                // A server error at COMMIT (a Galera certification failure)
                // has rolled back already; a second ROLLBACK confirms that
                // the session is clean. A lost connection fails here too
                // and stays open.
                if matches!(failed, mysql_async::Error::Server(_))
                    && conn.query_drop("ROLLBACK").await.is_ok()
                {
                    self.session.open = false;
                }
                match outcome {
                    Ok(Ok(_)) => Err(failed),
                    other => other,
                }
            }
        }
    }
}

impl Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.session.conn
    }
}

impl DerefMut for Tx<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.session.conn
    }
}
