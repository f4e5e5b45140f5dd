//! The series store on MySQL/MariaDB (feature `mysql`).
//!
//! Invariants, from design.md §1–2:
//! - one dedicated connection per store, opened lazily, replaced when lost;
//! - allocation is one `UPDATE … LAST_INSERT_ID(current_value + n)` in
//!   autocommit; the number is read from that statement's OK packet and only
//!   when exactly one row changed; zero rows is [`Error::SeriesNotFound`],
//!   never a number;
//! - a failed try is retried with a fresh statement (so a fresh number); a
//!   number whose outcome is unknown is never handed out again or re-read;
//! - every public call finishes within `StoreConfig::deadline`, connect and
//!   retries included, or fails with [`Error::Timeout`];
//! - each new connection checks `innodb_flush_log_at_trx_commit` first and
//!   refuses `0` unless the unsafe override was given.

mod classify;
mod config;

use std::future::Future;
use std::ops::RangeInclusive;
use std::pin::Pin;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use tokio::time::Instant;

pub use config::{url_from_parts, Durability, DurabilityPolicy, StoreConfig};

use crate::error::{codes, Error, Result};
use crate::schema::SeriesSql;
use crate::scope::ScopeKey;
use crate::series::{self, Advanced, Initialized, SeriesState};

use classify::classify;

type Attempt<'c, T> = Pin<Box<dyn Future<Output = AttemptResult<T>> + Send + 'c>>;
/// Outer error: a driver failure (retry decision); inner: the operation's answer.
type AttemptResult<T> = std::result::Result<Result<T>, mysql_async::Error>;

/// Counters of what the store did, for tests and monitoring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Connections opened.
    pub connects: u64,
    /// Tries that failed with a retryable error and were tried again.
    pub retries: u64,
    /// Calls that hit their deadline.
    pub timeouts: u64,
}

/// A series store bound to one database connection.
pub struct SeriesStore {
    config: StoreConfig,
    opts: Opts,
    sql: SeriesSql,
    conn: Option<Conn>,
    durability: Option<Durability>,
    stats: StoreStats,
}

impl std::fmt::Debug for SeriesStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeriesStore")
            .field("table", &self.sql.table)
            .field("connected", &self.conn.is_some())
            .field("durability", &self.durability)
            .field("stats", &self.stats)
            .finish()
    }
}

impl SeriesStore {
    /// Builds a store and opens its connection (checking durability), within
    /// the deadline.
    pub async fn connect(config: StoreConfig) -> Result<Self> {
        let mut store = Self::lazy(config)?;
        store.ping().await?;
        Ok(store)
    }

    /// Builds a store without connecting; the first call connects.
    pub fn lazy(config: StoreConfig) -> Result<Self> {
        config.validate()?;
        let opts =
            Opts::from_url(&config.url).map_err(|e| Error::Config(format!("database URL: {e}")))?;
        // Rows *changed*, not matched: allocation always changes its row, and
        // advance relies on "changed" to report whether it moved.
        let opts: Opts = OptsBuilder::from_opts(opts).client_found_rows(false).into();
        let sql = SeriesSql::new(&config.table_prefix);
        Ok(Self {
            config,
            opts,
            sql,
            conn: None,
            durability: None,
            stats: StoreStats::default(),
        })
    }

    /// The settings this store was built with.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The statements this store sends.
    pub fn sql(&self) -> &SeriesSql {
        &self.sql
    }

    /// The durability of the server last connected to.
    pub fn durability(&self) -> Option<Durability> {
        self.durability
    }

    /// What the store has done so far.
    pub fn stats(&self) -> StoreStats {
        self.stats
    }

    /// The server's id of the current connection (`CONNECTION_ID()`), if open.
    pub fn connection_id(&self) -> Option<u32> {
        self.conn.as_ref().map(|c| c.id())
    }

    /// Opens the connection if needed and checks that it answers.
    pub async fn ping(&mut self) -> Result<()> {
        self.run("connect", "", |conn, _, _| {
            Box::pin(async move { conn.ping().await.map(Ok) })
        })
        .await
    }

    /// Creates the sequences table if missing, and adds `start_value` to an
    /// adopted article table that lacks it. Existing rows are untouched.
    pub async fn ensure_schema(&mut self) -> Result<()> {
        self.run("ensure_schema", "", |conn, sql, _| {
            Box::pin(async move {
                conn.query_drop(&sql.create_table).await?;
                let columns: Vec<String> = conn.exec(&sql.list_columns, (&sql.table,)).await?;
                if !columns
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case("start_value"))
                {
                    conn.query_drop(&sql.add_start_value).await?;
                }
                Ok(Ok(()))
            })
        })
        .await
    }

    /// Creates the series `scope` whose first number is `start` (≥ 1). An
    /// existing series is reported and never reset.
    pub async fn initialize(&mut self, scope: &ScopeKey, start: u64) -> Result<Initialized> {
        let counter = series::counter_for_start(start)?;
        self.run("initialize", scope.as_str(), move |conn, sql, key| {
            Box::pin(async move {
                match conn.exec_drop(&sql.initialize, (key, counter, start)).await {
                    Ok(()) => Ok(Ok(Initialized::Created { next: start })),
                    Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
                        Ok(read_current(conn, sql, key)
                            .await?
                            .map(|s| Initialized::Exists { current: s.current }))
                    }
                    Err(e) => Err(e),
                }
            })
        })
        .await
    }

    /// Moves the series so that its next number is at least `next`. Never
    /// moves it down: to start lower, create a new series.
    pub async fn advance(&mut self, scope: &ScopeKey, next: u64) -> Result<Advanced> {
        let counter = series::counter_for_next(next)?;
        self.run("advance", scope.as_str(), move |conn, sql, key| {
            Box::pin(async move {
                conn.exec_drop(&sql.advance, (counter, key)).await?;
                match conn.affected_rows() {
                    1 => Ok(Ok(Advanced::Moved { current: counter })),
                    // Unchanged or missing: the row says which.
                    0 => Ok(read_current(conn, sql, key)
                        .await?
                        .map(|s| Advanced::Unchanged { current: s.current })),
                    n => Ok(Err(Error::Unexpected(format!(
                        "advance changed {n} rows of one primary key"
                    )))),
                }
            })
        })
        .await
    }

    /// Hands out the next number of `scope`.
    pub async fn allocate(&mut self, scope: &ScopeKey) -> Result<u64> {
        self.allocate_raw(scope, 1).await
    }

    /// Hands out `count` contiguous numbers (1 ..= [`series::MAX_BATCH`]).
    pub async fn allocate_many(
        &mut self,
        scope: &ScopeKey,
        count: u64,
    ) -> Result<RangeInclusive<u64>> {
        series::check_batch(count)?;
        let last = self.allocate_raw(scope, count).await?;
        Ok(series::batch_range(last, count))
    }

    async fn allocate_raw(&mut self, scope: &ScopeKey, count: u64) -> Result<u64> {
        self.run("allocate", scope.as_str(), move |conn, sql, key| {
            Box::pin(async move {
                match conn.exec_drop(&sql.allocate, (count, key)).await {
                    Ok(()) => {}
                    Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DATA_OUT_OF_RANGE => {
                        return Ok(Err(Error::Overflow {
                            scope: key.to_owned(),
                            requested: count,
                        }))
                    }
                    Err(e) => return Err(e),
                }
                Ok(match (conn.affected_rows(), conn.last_insert_id()) {
                    (1, Some(last)) if last >= count => Ok(last),
                    (1, other) => Err(Error::Unexpected(format!(
                        "allocation matched one row but returned {other:?}"
                    ))),
                    (0, _) => Err(Error::SeriesNotFound {
                        scope: key.to_owned(),
                    }),
                    (n, _) => Err(Error::Unexpected(format!(
                        "allocation changed {n} rows of one primary key"
                    ))),
                })
            })
        })
        .await
    }

    /// The series as stored.
    pub async fn current(&mut self, scope: &ScopeKey) -> Result<SeriesState> {
        self.run("current", scope.as_str(), move |conn, sql, key| {
            Box::pin(async move { read_current(conn, sql, key).await })
        })
        .await
    }

    /// Closes the connection politely.
    pub async fn close(mut self) -> Result<()> {
        if let Some(conn) = self.conn.take() {
            conn.disconnect().await.map_err(|e| classify(e).error)?;
        }
        Ok(())
    }

    /// Runs one operation with retries, reconnects and the deadline.
    async fn run<T, F>(&mut self, operation: &'static str, key: &str, mut attempt: F) -> Result<T>
    where
        F: for<'c> FnMut(&'c mut Conn, &'c SeriesSql, &'c str) -> Attempt<'c, T>,
    {
        let deadline = self.config.deadline;
        let until = Instant::now() + deadline;
        let outcome = tokio::time::timeout_at(until, async {
            let mut tries = 0u32;
            loop {
                tries += 1;
                let failure = match self.connection().await {
                    Err(e) => e,
                    Ok(()) => {
                        let conn = self.conn.as_mut().expect("connected above");
                        match attempt(conn, &self.sql, key).await {
                            Ok(answer) => return answer,
                            Err(e) => {
                                let f = classify(e);
                                if f.connection_broken {
                                    self.conn = None;
                                }
                                f.error
                            }
                        }
                    }
                };
                if !failure.is_retryable() || !self.config.retry.allows_another(tries) {
                    return Err(failure);
                }
                self.stats.retries += 1;
                let pause = self.config.retry.backoff(tries, fastrand::f64());
                log::debug!("{operation}: try {tries} failed ({failure}); retrying in {pause:?}");
                tokio::time::sleep(pause).await;
            }
        })
        .await;
        outcome.unwrap_or_else(|_| {
            // The connection is in an unknown state: never reuse it.
            self.conn = None;
            self.stats.timeouts += 1;
            Err(Error::Timeout {
                operation,
                after: deadline,
            })
        })
    }

    /// Makes sure a checked connection is open.
    async fn connection(&mut self) -> Result<()> {
        if self.conn.is_some() {
            return Ok(());
        }
        let timeout = self.config.connect_timeout;
        let mut conn = match tokio::time::timeout(timeout, Conn::new(self.opts.clone())).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => {
                return Err(match classify(e).error {
                    // Access denied, unknown database: not worth retrying,
                    // but say plainly what happened.
                    Error::Server { code, message, .. } => {
                        Error::Config(format!("cannot connect: error {code}: {message}"))
                    }
                    Error::Unavailable { reason } => Error::Unavailable {
                        reason: format!(
                            "cannot connect: {}",
                            reason.trim_start_matches("connection lost: ")
                        ),
                    },
                    other => other,
                });
            }
            Err(_) => {
                return Err(Error::Unavailable {
                    reason: format!("connect did not finish within {} ms", timeout.as_millis()),
                })
            }
        };
        self.stats.connects += 1;
        let setting: Option<u8> = conn
            .query_first("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
            .await
            .map_err(|e| classify(e).error)?;
        self.durability = Some(match (setting, self.config.durability) {
            (Some(1), _) => Durability::Full,
            (Some(2), _) => {
                log::warn!(
                    "innodb_flush_log_at_trx_commit = 2: numbers survive a server crash \
                     but not an OS crash or power loss; set it to 1 for full durability"
                );
                Durability::ServerCrashOnly
            }
            (Some(0), DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0) => {
                log::warn!("innodb_flush_log_at_trx_commit = 0 accepted by the unsafe override");
                Durability::Unsafe
            }
            (Some(s), _) => return Err(Error::UnsafeDurability { setting: s }),
            (None, _) => {
                return Err(Error::Unexpected(
                    "server did not report innodb_flush_log_at_trx_commit".into(),
                ))
            }
        });
        self.conn = Some(conn);
        Ok(())
    }
}

/// Reads one series; `SeriesNotFound` when it does not exist.
async fn read_current(conn: &mut Conn, sql: &SeriesSql, key: &str) -> AttemptResult<SeriesState> {
    let row: Option<(u64, Option<u64>)> = conn.exec_first(&sql.current, (key,)).await?;
    Ok(match row {
        Some((current, start)) => Ok(SeriesState {
            scope: key.to_owned(),
            current,
            start,
        }),
        None => Err(Error::SeriesNotFound {
            scope: key.to_owned(),
        }),
    })
}
