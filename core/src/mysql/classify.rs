//! Turns mysql_async failures into [`Error`]s.
//!
//! Invariants: a server error keeps its numeric code; a failure that leaves
//! the connection unusable (I/O error, closed connection, the connection
//! killed, server shutdown) says so, and the store then drops the connection
//! and opens a new one for the next try.

use mysql_async::Error as MyError;

use crate::error::{codes, Error};

/// A classified driver failure.
pub(crate) struct Failure {
    pub error: Error,
    pub connection_broken: bool,
}

pub(crate) fn classify(err: MyError) -> Failure {
    match err {
        MyError::Server(e) => {
            let broken = codes::breaks_connection(e.code);
            Failure {
                error: Error::Server {
                    code: e.code,
                    state: e.state,
                    message: e.message,
                },
                connection_broken: broken,
            }
        }
        MyError::Io(e) => Failure {
            error: Error::Unavailable {
                reason: format!("connection lost: {e}"),
                may_have_run: true,
            },
            connection_broken: true,
        },
        MyError::Driver(e) => Failure {
            error: Error::Unavailable {
                reason: format!("driver: {e}"),
                may_have_run: true,
            },
            connection_broken: true,
        },
        MyError::Url(e) => Failure {
            error: Error::Config(format!("database URL: {e}")),
            connection_broken: true,
        },
        other => Failure {
            error: Error::Unavailable {
                reason: other.to_string(),
                may_have_run: true,
            },
            connection_broken: true,
        },
    }
}
