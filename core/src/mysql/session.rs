//! The store's connection and the one construct that ends its transactions.
//!
//! Invariants (docs/design.md §9, "a transaction left open is a locked series"):
//! - every transaction the MySQL/MariaDB store opens is opened by
//!   [`Session::begin`] and ended by [`Session::end`] (the flows' `Dialect`
//!   begin and end): COMMIT when the work answered a value, ROLLBACK on
//!   anything else (a typed refusal, a driver error), and the end is awaited
//!   before the call returns;
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
use crate::config::ConfirmCommits;

/// A connection of the store and whether a transaction may be open on it.
pub(crate) struct Session {
    conn: Conn,
    open: bool,
    multi_writer: bool,
    confirm_commits: bool,
}

impl Session {
    /// A checked connection; `multi_writer`: to a node of a cluster where
    /// every node writes (`vetting::ServerCheck::multi_writer`);
    /// `confirm`: the store's setting (`StoreConfig::confirm_commits`).
    pub(crate) fn new(conn: Conn, multi_writer: bool, confirm: ConfirmCommits) -> Self {
        Self {
            conn,
            open: false,
            multi_writer,
            confirm_commits: confirm.applies(multi_writer),
        }
    }

    /// Whether a numbering transaction's COMMIT answered OK is read back
    /// before its number is told: by default on a node of a cluster where
    /// every node writes ([`ConfirmCommits`]). There a transaction that another node's write set aborts
    /// after its last statement has been seen to answer its COMMIT with OK
    /// and vanish (`galera_payments_through_every_node`: a payment told a
    /// number the cluster does not hold, the number told again to the next
    /// payment; MDEV-24775's family). A plain read on the same connection
    /// sees only committed rows, so a row found is a commit that happened.
    pub(crate) fn confirms_commits(&self) -> bool {
        self.confirm_commits
    }

    /// Whether the connection is to a node of a cluster where every node
    /// writes (a Galera node, a Group Replication member in multi-primary
    /// mode): no one-trip packets there. A transaction that a conflicting write set aborts
    /// while a statement of a multi-statement packet runs gets no error: the
    /// packet runs on, its later statements each committing alone, and its
    /// answer says every statement succeeded (the Galera suite's
    /// `galera_payments_through_every_node`, with packets: payment rows
    /// committed without their allocation, numbers told twice). Sent one by
    /// one, each statement gets the abort's 1213.
    pub(crate) fn multi_writer(&self) -> bool {
        self.multi_writer
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

impl Session {
    /// Sends `START TRANSACTION`. The session counts as open from before it
    /// is sent.
    pub(crate) async fn begin(&mut self) -> Result<(), mysql_async::Error> {
        self.open = true;
        self.conn.query_drop("START TRANSACTION").await
    }

    /// Sends a packet of statements that opens its own transaction and ends
    /// it with COMMIT (`one_trip`): the session counts as open from before
    /// it is sent until every statement has answered. A packet that stopped
    /// part-way leaves the session open; end it with [`Session::roll_back`].
    pub(crate) async fn send_transaction(&mut self, text: &str) -> super::one_trip::Sent {
        self.open = true;
        let sent = super::one_trip::send(&mut self.conn, text).await;
        if sent.is_ok() {
            self.open = false;
        }
        sent
    }

    /// Ends a transaction whose work stopped part-way with ROLLBACK,
    /// awaited: `answer` once the ROLLBACK is confirmed; otherwise its
    /// failure, and the session stays open (so it is discarded).
    pub(crate) async fn roll_back<T>(&mut self, answer: AttemptResult<T>) -> AttemptResult<T> {
        match self.conn.query_drop("ROLLBACK").await {
            Ok(()) => {
                self.open = false;
                answer
            }
            Err(failed) => match answer {
                Ok(_) => Err(failed),
                other => other,
            },
        }
    }

    /// Ends the transaction by the work's `outcome`: COMMIT when it answered
    /// a value, ROLLBACK on a typed refusal or a driver error; the end is
    /// awaited. A failed end is reported (a COMMIT whose answer was lost has
    /// an unknown outcome) and leaves the session open, so it is discarded.
    pub(crate) async fn end<T>(&mut self, outcome: AttemptResult<T>) -> AttemptResult<T> {
        let end = if matches!(outcome, Ok(Ok(_))) {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        match self.conn.query_drop(end).await {
            Ok(()) => {
                self.open = false;
                outcome
            }
            Err(failed) => {
                // A server error at COMMIT (a Galera certification failure)
                // has rolled back already; a second ROLLBACK confirms that
                // the session is clean. A lost connection fails here too
                // and stays open.
                if matches!(failed, mysql_async::Error::Server(_))
                    && self.conn.query_drop("ROLLBACK").await.is_ok()
                {
                    self.open = false;
                }
                match outcome {
                    Ok(Ok(_)) => Err(failed),
                    other => other,
                }
            }
        }
    }
}
