//! Errors of every Counterfoil operation.
//!
//! Invariants: every failure is a typed variant, never a stringly panic; server
//! failures keep the server's numeric error code (1062, 1205, 1213, …) so that
//! callers match on numbers, not messages; [`Error::is_retryable`] is the one
//! place that decides which failures may be retried with a fresh statement.
//! This module has no database dependency, so the pure build (and wasm) shares
//! the same error type as the MySQL store.

use std::time::Duration;

/// Why a scope key was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeKeyError {
    /// The key is the empty string.
    #[error("scope key is empty")]
    Empty,
    /// The key is longer than the column holds.
    #[error("scope key is {len} bytes long; the maximum is {max}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The maximum length in bytes.
        max: usize,
    },
    /// The key holds a control character (newline, NUL, …).
    #[error("scope key holds control character U+{code:04X} at byte {at}")]
    ControlCharacter {
        /// Byte offset of the character.
        at: usize,
        /// Its code point.
        code: u32,
    },
    /// The key starts or ends with whitespace.
    #[error("scope key starts or ends with whitespace")]
    SurroundingWhitespace,
    /// A `{user}:{year}` key with a year outside 1..=9999.
    #[error("year {year} is outside 1..=9999")]
    YearOutOfRange {
        /// The year given.
        year: u32,
    },
}

impl ScopeKeyError {
    /// A stable snake_case name (shared test vectors, bindings, JSON).
    pub fn name(&self) -> &'static str {
        match self {
            ScopeKeyError::Empty => "empty",
            ScopeKeyError::TooLong { .. } => "too_long",
            ScopeKeyError::ControlCharacter { .. } => "control_character",
            ScopeKeyError::SurroundingWhitespace => "surrounding_whitespace",
            ScopeKeyError::YearOutOfRange { .. } => "year_out_of_range",
        }
    }
}

/// What is wrong with a number template.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatErrorKind {
    /// `{` with no matching `}`.
    Unclosed,
    /// `}` with no `{` before it (write `}}` for a literal brace).
    UnmatchedClose,
    /// `{}`.
    EmptyToken,
    /// A token name that is not `seq`, `year`, `yy` or `month`.
    UnknownToken(String),
    /// A `:spec` on a token that takes none.
    UnexpectedSpec(String),
    /// A `{seq:…}` padding that is not `0N` with N in 1..=20.
    BadPadding(String),
    /// No `{seq}` token: numbers would not be distinguishable.
    MissingSeq,
    /// More than one `{seq}` token.
    DuplicateSeq,
    /// A control character in the template.
    ControlCharacter,
    /// A year outside 1..=9999 given to render.
    YearOutOfRange(u32),
    /// A month outside 1..=12 given to render.
    MonthOutOfRange(u32),
}

impl FormatErrorKind {
    /// A stable snake_case name (shared test vectors, bindings, JSON).
    pub fn name(&self) -> &'static str {
        match self {
            FormatErrorKind::Unclosed => "unclosed",
            FormatErrorKind::UnmatchedClose => "unmatched_close",
            FormatErrorKind::EmptyToken => "empty_token",
            FormatErrorKind::UnknownToken(_) => "unknown_token",
            FormatErrorKind::UnexpectedSpec(_) => "unexpected_spec",
            FormatErrorKind::BadPadding(_) => "bad_padding",
            FormatErrorKind::MissingSeq => "missing_seq",
            FormatErrorKind::DuplicateSeq => "duplicate_seq",
            FormatErrorKind::ControlCharacter => "control_character",
            FormatErrorKind::YearOutOfRange(_) => "year_out_of_range",
            FormatErrorKind::MonthOutOfRange(_) => "month_out_of_range",
        }
    }
}

/// A number template that could not be parsed, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} (at byte {at})", describe(kind))]
pub struct FormatError {
    /// What is wrong.
    pub kind: FormatErrorKind,
    /// Byte offset in the template where the problem starts.
    pub at: usize,
}

impl FormatError {
    pub(crate) fn new(kind: FormatErrorKind, at: usize) -> Self {
        Self { kind, at }
    }
}

fn describe(kind: &FormatErrorKind) -> String {
    match kind {
        FormatErrorKind::Unclosed => "`{` is never closed".into(),
        FormatErrorKind::UnmatchedClose => {
            "`}` without `{` (write `}}` for a literal brace)".into()
        }
        FormatErrorKind::EmptyToken => "empty token `{}`".into(),
        FormatErrorKind::UnknownToken(t) => {
            format!("unknown token `{{{t}}}`; known tokens are seq, year, yy, month, fy, fy_end")
        }
        FormatErrorKind::UnexpectedSpec(t) => format!("token `{t}` takes no `:` option"),
        FormatErrorKind::BadPadding(s) => {
            format!("padding `{s}` is not of the form 0N with N from 1 to 20 (e.g. `{{seq:04}}`)")
        }
        FormatErrorKind::MissingSeq => "the template has no `{seq}` token".into(),
        FormatErrorKind::DuplicateSeq => "the template has more than one `{seq}` token".into(),
        FormatErrorKind::ControlCharacter => "control character in the template".into(),
        FormatErrorKind::YearOutOfRange(y) => format!("year {y} is outside 1..=9999"),
        FormatErrorKind::MonthOutOfRange(m) => format!("month {m} is outside 1..=12"),
    }
}

/// Server error codes Counterfoil reacts to.
pub mod codes {
    /// Duplicate key.
    pub const ER_DUP_ENTRY: u16 = 1062;
    /// Lock wait timeout: only the statement was rolled back.
    pub const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
    /// Deadlock, or a Galera certification conflict: the transaction was rolled back.
    pub const ER_LOCK_DEADLOCK: u16 = 1213;
    /// BIGINT UNSIGNED value is out of range.
    pub const ER_DATA_OUT_OF_RANGE: u16 = 1690;
    /// A NULL into a NOT NULL column (the one-trip payment flow's refusal:
    /// no number was taken, or its chain did not move in one row).
    pub const ER_BAD_NULL_ERROR: u16 = 1048;
    /// The server is shutting down.
    pub const ER_SERVER_SHUTDOWN: u16 = 1053;
    /// MariaDB: the connection was killed.
    pub const ER_CONNECTION_KILLED: u16 = 1927;
    /// The query was interrupted (KILL QUERY).
    pub const ER_QUERY_INTERRUPTED: u16 = 1317;
    /// Unknown table.
    pub const ER_NO_SUCH_TABLE: u16 = 1146;
    /// Galera: the node is not ready for application use (not synced).
    pub const ER_WSREP_NOT_READY: u16 = 1047;
    /// MySQL Group Replication: the transaction failed certification at
    /// commit and was rolled back (`ER_TRANSACTION_ROLLBACK_DURING_COMMIT`).
    pub const ER_TRANSACTION_ROLLBACK_DURING_COMMIT: u16 = 3101;
    /// Unknown system variable (a MariaDB-only setting on MySQL).
    pub const ER_UNKNOWN_SYSTEM_VARIABLE: u16 = 1193;
    /// Access denied to the database (`ER_DBACCESS_DENIED_ERROR`).
    pub const ER_DBACCESS_DENIED: u16 = 1044;
    /// Access denied for the user (`ER_ACCESS_DENIED_ERROR`).
    pub const ER_ACCESS_DENIED: u16 = 1045;
    /// Unknown database (`ER_BAD_DB_ERROR`).
    pub const ER_BAD_DB: u16 = 1049;
    /// Access denied, no password given (`ER_ACCESS_DENIED_NO_PASSWORD_ERROR`).
    pub const ER_ACCESS_DENIED_NO_PASSWORD: u16 = 1698;

    /// Server errors after which the connection is gone (killed, the server
    /// shutting down, a Galera node leaving the cluster): the next try opens
    /// a new one.
    pub fn breaks_connection(code: u16) -> bool {
        matches!(
            code,
            ER_CONNECTION_KILLED | ER_SERVER_SHUTDOWN | ER_WSREP_NOT_READY
        )
    }

    /// Errors at connect that the next node (or a retry) cannot cure: the
    /// credentials or the database name are wrong. Every other refusal at
    /// connect — too many connections (1040), host blocked (1129), a user's
    /// connection limit (1226), a node not ready (1047) — tries the next node.
    pub fn is_configuration_error(code: u16) -> bool {
        matches!(
            code,
            ER_DBACCESS_DENIED | ER_ACCESS_DENIED | ER_BAD_DB | ER_ACCESS_DENIED_NO_PASSWORD
        )
    }
}

/// Every failure of a Counterfoil operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The scope key was refused before anything was sent.
    #[error("invalid scope key: {0}")]
    InvalidScopeKey(#[from] ScopeKeyError),
    /// The number template was refused.
    #[error("invalid number format: {0}")]
    InvalidFormat(#[from] FormatError),
    /// An argument was out of range; nothing was written.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// Why it was refused.
        reason: String,
    },
    /// No series has this scope key. Numbers are never handed out from a
    /// series that was not initialized.
    #[error("series `{scope}` does not exist; create it with initialize(scope, start) first")]
    SeriesNotFound {
        /// The scope key.
        scope: String,
    },
    /// The series was closed when the issuer's next period's series was
    /// created from it under the `continue` plan (docs/design.md §7): it hands out
    /// no more numbers, so that the two never print the same one. A payment's
    /// number comes from the successor instead; a caller naming the series
    /// itself gets this error, and nothing was written.
    #[error("series `{scope}` is closed: series `{successor}` continues it and hands out its numbers; nothing was written")]
    SeriesClosed {
        /// The scope key.
        scope: String,
        /// The series that continues it.
        successor: String,
    },
    /// The series already exists (for callers that asked for strict creation).
    #[error("series `{scope}` already exists (current value {current}); it was left unchanged")]
    SeriesExists {
        /// The scope key.
        scope: String,
        /// Its counter, untouched.
        current: u64,
    },
    /// The registry already holds this number: the counter is behind the
    /// registry (lowered by hand, or restored from an old backup). Nothing was
    /// issued; the unique index refused it (docs/design.md §2 rule 7).
    #[error("number {number} of series `{scope}` is already in the registry: the counter is behind the numbers already issued (lowered by hand or restored from an old backup?); nothing was issued; run `counterfoil verify` and advance the series past its highest number")]
    DuplicateNumber {
        /// The scope key.
        scope: String,
        /// The number the counter handed out again.
        number: u64,
    },
    /// A business rule refused the operation (an illegal state transition, no
    /// number left in a pool, a number of another pool); nothing was changed.
    #[error("refused: {0}")]
    Refused(String),
    /// The counter would pass u64::MAX; nothing was changed.
    #[error("series `{scope}` cannot hand out {requested} more number(s) without passing 18446744073709551615; the counter was left unchanged; start a new series")]
    Overflow {
        /// The scope key.
        scope: String,
        /// How many numbers were asked for.
        requested: u64,
    },
    /// The server runs with `innodb_flush_log_at_trx_commit = 0`: a crash
    /// would hand out numbers again.
    #[error("refusing to use this server: innodb_flush_log_at_trx_commit = {setting}, so a server crash can roll the counter back and issue numbers twice; set it to 1 (SET GLOBAL innodb_flush_log_at_trx_commit = 1 and in my.cnf), or pass the explicit unsafe override")]
    UnsafeDurability {
        /// The server's setting.
        setting: u8,
    },
    /// A PostgreSQL server runs with `fsync = off` or `synchronous_commit =
    /// off`: a crash can lose acknowledged commits and hand the same numbers
    /// out again.
    #[error("refusing to use this server: {setting} = {value}, so a crash can lose acknowledged commits and hand the same numbers out again; set {setting} = on (postgresql.conf), or pass the explicit unsafe override")]
    UnsafeSetting {
        /// The setting.
        setting: &'static str,
        /// Its value.
        value: String,
    },
    /// The primary of a PostgreSQL node list acknowledges a commit before a
    /// standby has it (no synchronous standby, or `synchronous_commit` below
    /// `on`): after a failover the promoted standby can lack the last
    /// numbers and hand them out again.
    #[error("refusing to number on this PostgreSQL node list: {setting} = '{value}' on the primary, so a commit is acknowledged before any standby has it, and after a failover the promoted standby can lack the last numbers and hand them out again; configure a synchronous standby (synchronous_standby_names = 'FIRST 1 (standby)' or '*', with synchronous_commit = on or remote_apply), or pass the explicit unsafe override")]
    UnsafeReplication {
        /// The setting.
        setting: &'static str,
        /// Its value on the primary.
        value: String,
    },
    /// The operation did not finish within its deadline. Its outcome is
    /// unknown: an allocation may have used a number (a gap), never a duplicate.
    #[error("{operation} did not finish within {} ms; the database is slow or unreachable; the outcome is unknown (a number may have been skipped, never repeated)", after.as_millis())]
    Timeout {
        /// What was being done.
        operation: &'static str,
        /// The deadline.
        after: Duration,
    },
    /// The database could not be reached or the connection was lost and
    /// retries did not help.
    #[error("database unavailable: {reason}")]
    Unavailable {
        /// What the driver said.
        reason: String,
        /// False when it failed before any statement was sent (connecting);
        /// true when the connection was lost while a statement may have run,
        /// so its outcome is unknown.
        may_have_run: bool,
    },
    /// The server refused a statement. On PostgreSQL `code` is 0 and
    /// `state` is the SQLSTATE.
    #[error("{}", server_text(*code, state, message))]
    Server {
        /// The server's numeric error code (1062, 1213, …).
        code: u16,
        /// The SQLSTATE.
        state: String,
        /// The server's message.
        message: String,
    },
    /// On a node of a cluster where every node writes (Galera), the COMMIT
    /// of a transaction that took a number was answered OK, but reading its
    /// rows back on the same connection did not find them (or the read
    /// failed): the number is not told. Its outcome is unknown: a number
    /// that did commit stays `unconfirmed` in the registry (a gap with a
    /// reason, never a number told twice); a payment delivered again finds
    /// its row if it committed, or is numbered anew.
    #[error("{operation}: the database answered the COMMIT, but the work was not found when read back on the same node ({detail}); the number was not handed out; the outcome is unknown (a number may have been skipped, never repeated): try again")]
    Unconfirmed {
        /// What was being done.
        operation: &'static str,
        /// What the read back found.
        detail: String,
    },
    /// The connection settings are unusable (bad URL, bad table prefix, …).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The database answered something that breaks an invariant (e.g. an
    /// update matched two rows of a primary key). Nothing was handed out.
    #[error("unexpected answer from the database: {0}")]
    Unexpected(String),
}

impl Error {
    /// Whether running the operation again (with a fresh statement and a fresh
    /// number) may succeed. Never true for bad input or a missing series.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Timeout { .. } | Error::Unavailable { .. } | Error::Unconfirmed { .. } => true,
            // PostgreSQL (no numeric code): serialization failure, deadlock,
            // lock timeout, and our own statement timeout (the retry loop
            // stays inside the deadline).
            Error::Server { code: 0, state, .. } => {
                matches!(state.as_str(), "40001" | "40P01" | "55P03" | "57014")
            }
            Error::Server { code, .. } => matches!(
                *code,
                codes::ER_LOCK_DEADLOCK
                    | codes::ER_LOCK_WAIT_TIMEOUT
                    | codes::ER_SERVER_SHUTDOWN
                    | codes::ER_CONNECTION_KILLED
                    | codes::ER_QUERY_INTERRUPTED
                    | codes::ER_WSREP_NOT_READY
                    | codes::ER_TRANSACTION_ROLLBACK_DURING_COMMIT
            ),
            _ => false,
        }
    }

    /// Whether the operation may have taken effect although it failed: the
    /// deadline hit, or the connection was lost (or killed) after a statement
    /// was sent. An allocation with an unknown outcome may have used a number
    /// (a gap), never one handed out twice. False means it certainly did not
    /// happen (refused before running, or rolled back).
    pub fn outcome_unknown(&self) -> bool {
        match self {
            Error::Timeout { .. } | Error::Unexpected(_) | Error::Unconfirmed { .. } => true,
            Error::Unavailable { may_have_run, .. } => *may_have_run,
            Error::Server { code, .. } => {
                matches!(
                    *code,
                    codes::ER_CONNECTION_KILLED | codes::ER_SERVER_SHUTDOWN
                )
            }
            _ => false,
        }
    }

    /// The server's error code, when the server refused a statement.
    pub fn server_code(&self) -> Option<u16> {
        match self {
            Error::Server { code, .. } if *code != 0 => Some(*code),
            _ => None,
        }
    }

    /// A stable snake_case name of the variant, for bindings, logs and JSON.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Error::InvalidScopeKey(_) => "invalid_scope_key",
            Error::InvalidFormat(_) => "invalid_format",
            Error::InvalidArgument { .. } => "invalid_argument",
            Error::SeriesNotFound { .. } => "series_not_found",
            Error::SeriesClosed { .. } => "series_closed",
            Error::SeriesExists { .. } => "series_exists",
            Error::Overflow { .. } => "overflow",
            Error::DuplicateNumber { .. } => "duplicate_number",
            Error::Refused(_) => "refused",
            Error::UnsafeDurability { .. }
            | Error::UnsafeSetting { .. }
            | Error::UnsafeReplication { .. } => "unsafe_durability",
            Error::Timeout { .. } => "timeout",
            Error::Unavailable { .. } => "unavailable",
            Error::Unconfirmed { .. } => "unconfirmed",
            Error::Server { .. } => "server",
            Error::Config(_) => "config",
            Error::Unexpected(_) => "unexpected",
        }
    }

    /// Whether the caller's input was at fault (nothing was written).
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidScopeKey(_) | Error::InvalidFormat(_) | Error::InvalidArgument { .. }
        )
    }
}

/// A server's refusal as text: MySQL's numeric code and SQLSTATE, or
/// PostgreSQL's SQLSTATE alone (it has no numeric code: `code` 0).
fn server_text(code: u16, state: &str, message: &str) -> String {
    if code == 0 {
        format!("database error {state}: {message}")
    } else {
        format!("database error {code} ({state}): {message}")
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_by_code_not_message() {
        let s = |code| Error::Server {
            code,
            state: "HY000".into(),
            message: "whatever".into(),
        };
        assert!(s(1213).is_retryable());
        assert!(s(1205).is_retryable());
        assert!(s(3101).is_retryable(), "Group Replication's certification");
        assert!(!s(1062).is_retryable());
        assert!(!Error::SeriesNotFound { scope: "x".into() }.is_retryable());
        assert!(Error::Timeout {
            operation: "allocate",
            after: Duration::from_secs(1)
        }
        .is_retryable());
        assert_eq!(s(1062).server_code(), Some(1062));
    }

    #[test]
    fn unknown_outcomes_are_told_apart_from_certain_failures() {
        let lost = |may_have_run| Error::Unavailable {
            reason: "x".into(),
            may_have_run,
        };
        assert!(lost(true).outcome_unknown());
        assert!(
            !lost(false).outcome_unknown(),
            "connect failed: nothing ran"
        );
        assert!(Error::Timeout {
            operation: "allocate",
            after: Duration::from_secs(1)
        }
        .outcome_unknown());
        let server = |code| Error::Server {
            code,
            state: "HY000".into(),
            message: "m".into(),
        };
        assert!(!server(1213).outcome_unknown(), "a deadlock rolled back");
        assert!(
            !server(1205).outcome_unknown(),
            "a lock wait timeout rolled the statement back"
        );
        assert!(server(1927).outcome_unknown(), "killed mid-statement");
        assert!(!Error::SeriesNotFound { scope: "x".into() }.outcome_unknown());
    }
}
