//! Turns tokio-postgres failures into [`Error`]s and decides whether the
//! connection can be reused.
//!
//! Invariants: a server error (it has a SQLSTATE) rolled its statement back:
//! the outcome is known, except for an administrator's or a crash's
//! termination of the backend (57P01, 57P02, 57P03), treated as a lost
//! connection. Any failure without a SQLSTATE after a statement was sent is
//! a lost connection with an unknown outcome. Wrong credentials or an
//! unknown database at connect are configuration errors (no other node or
//! retry cures them).

use tokio_postgres::error::SqlState;

use crate::error::Error;

/// What a failure means.
pub(crate) struct Failure {
    pub error: Error,
    pub connection_broken: bool,
}

/// Whether `e` carries SQLSTATE `state`.
pub(crate) fn is_state(e: &tokio_postgres::Error, state: &str) -> bool {
    e.code().is_some_and(|c| c.code() == state)
}

/// Classifies `e`; `sent` says whether a statement may have reached the
/// server (false while connecting).
pub(crate) fn classify(e: tokio_postgres::Error, sent: bool) -> Failure {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let message = db.message().to_owned();
        if *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
        {
            return Failure {
                error: Error::Unavailable {
                    reason: format!("connection lost: {message} ({})", code.code()),
                    may_have_run: sent,
                },
                connection_broken: true,
            };
        }
        if !sent
            && (*code == SqlState::INVALID_PASSWORD
                || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                || *code == SqlState::INVALID_CATALOG_NAME)
        {
            return Failure {
                error: Error::Config(format!("cannot connect: {message} ({})", code.code())),
                connection_broken: true,
            };
        }
        return Failure {
            error: Error::Server {
                code: 0,
                state: code.code().to_owned(),
                message,
            },
            connection_broken: false,
        };
    }
    let reason = if sent {
        format!("connection lost: {e}")
    } else {
        format!("cannot connect: {e}")
    };
    Failure {
        error: Error::Unavailable {
            reason,
            may_have_run: sent,
        },
        connection_broken: true,
    }
}
