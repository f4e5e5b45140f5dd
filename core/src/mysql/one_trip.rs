//! A payment's first delivery in one round trip (issue 30) on MySQL/MariaDB:
//! the statements of `sql::one_trip_payment` filled with the payment's
//! values and sent as one multi-statement packet, so the series' row lock
//! is held only while the server works (InnoDB releases it at COMMIT,
//! before the log flush), not across client round trips.
//!
//! Invariants:
//! - every value enters the packet as a hex literal (`sql::text_literal`:
//!   `_utf8mb4` introducer where it is compared with or stored in a text
//!   column), so no value can end a string or start a statement, whatever
//!   the connection's character set or `NO_BACKSLASH_ESCAPES`; a missing
//!   value is `NULL`;
//! - the session counts as holding a transaction from before the packet is
//!   sent until the packet's own COMMIT has answered; a packet that stopped
//!   at an error left its transaction open, and the caller ends it with
//!   ROLLBACK (`Session::roll_back`) before anything else: one more round trip,
//!   never an open transaction;
//! - the statement that failed is known by its position in the packet, so
//!   a repeat (1062 on the payment row), a series that took no number (1048
//!   on the registry row) and a broken chain are told apart by where they
//!   stopped, not by message text.

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

/// How a packet ended: every statement's last insert id, from its own
/// OK packet (0 where it set none), or the position of the statement that
/// failed and its error.
pub(super) type Sent = Result<Vec<u64>, (usize, mysql_async::Error)>;

/// Sends `text` and reads every statement's answer: each one's last insert
/// id, or where it stopped. Position 0 is the first statement.
///
/// The driver holds a server error that ends a multi-statement packet as
/// the next result set and reports it when that set is read, so the answers
/// are read until none is left, one more read included: the error then
/// comes with the position of the statement that raised it.
pub(super) async fn send(conn: &mut Conn, text: &str) -> Sent {
    let mut result = conn.query_iter(text).await.map_err(|e| (0, e))?;
    let mut ids = Vec::new();
    loop {
        // The set's own OK packet has been read when it is reached; its
        // rows collected, the driver reads on into the next set's.
        let at = ids.len();
        ids.push(result.last_insert_id().unwrap_or(0));
        let _rows: Vec<mysql_async::Row> = result.collect().await.map_err(|e| (at, e))?;
        if result.is_empty() {
            let held: Vec<mysql_async::Row> = result.collect().await.map_err(|e| (ids.len(), e))?;
            debug_assert!(held.is_empty());
            break;
        }
    }
    Ok(ids)
}
