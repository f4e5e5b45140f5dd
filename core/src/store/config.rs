//! How a [`SeriesStore`](super::SeriesStore) connects and how patient it is.
//!
//! Invariants: every store has a finite deadline for each call (connect and
//! retries included) and a finite connect timeout; the durability policy is
//! `Require` unless the caller names the unsafe override explicitly.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::retry::RetryPolicy;
use crate::schema::TablePrefix;

/// What to do with a server's `innodb_flush_log_at_trx_commit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DurabilityPolicy {
    /// Refuse `0` (a crash can roll the counter back); accept `2` with a warning.
    #[default]
    Require,
    /// Accept `0`. A crash of the server may then issue numbers twice:
    /// only for throwaway test servers.
    UnsafeAllowFlushLogAtTrxCommit0,
}

/// The durability the connected server offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `innodb_flush_log_at_trx_commit = 1`: every commit is on disk.
    Full,
    /// `= 2`: safe against a server crash, not against an OS crash or power
    /// loss. A warning is logged.
    ServerCrashOnly,
    /// `= 0`, accepted only under the explicit unsafe override.
    Unsafe,
}

/// Connection settings of a store.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// `mysql://user:pass@host:port/db`, or `mysql://user@localhost/db?socket=/path`.
    pub url: String,
    /// Table prefix (default `wp_`).
    pub table_prefix: TablePrefix,
    /// The deadline of one call, retries and reconnects included.
    pub deadline: Duration,
    /// The longest one connection attempt may take.
    pub connect_timeout: Duration,
    /// Retries of deadlocks, lock wait timeouts and lost connections.
    pub retry: RetryPolicy,
    /// What to do with `innodb_flush_log_at_trx_commit`.
    pub durability: DurabilityPolicy,
}

impl StoreConfig {
    /// Default deadline of a call.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);
    /// Default connect timeout.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

    /// Settings for `url` with the defaults: prefix `wp_`, 5 s deadline.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            table_prefix: TablePrefix::default(),
            deadline: Self::DEFAULT_DEADLINE,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            durability: DurabilityPolicy::Require,
        }
    }

    /// Sets the table prefix (validated).
    pub fn table_prefix(mut self, prefix: &str) -> Result<Self> {
        self.table_prefix = TablePrefix::new(prefix)?;
        Ok(self)
    }

    /// Sets the deadline of each call; the connect timeout never exceeds it.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self.connect_timeout = self.connect_timeout.min(deadline);
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the durability policy.
    pub fn durability(mut self, policy: DurabilityPolicy) -> Self {
        self.durability = policy;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.deadline.is_zero() || self.connect_timeout.is_zero() {
            return Err(Error::Config(
                "deadline and connect timeout must be above zero".into(),
            ));
        }
        Ok(())
    }
}
