//! The series store on PostgreSQL (feature `postgres`), behind the same
//! [`crate::Store`] as MySQL/MariaDB.
//!
//! Invariants, from docs/design.md §1–2 and §8:
//! - one dedicated connection per store (tokio-postgres), opened lazily,
//!   replaced when lost; with a node list, the first node that accepts;
//! - allocation is one `UPDATE … SET current_value = current_value + $2
//!   WHERE scope_key = $1 RETURNING current_value` in autocommit, accepted
//!   only when exactly one row came back; none is [`Error::SeriesNotFound`];
//!   there is no connection-level "last id" to go stale;
//! - counters are `NUMERIC(20,0)` checked to 0..=u64::MAX: passing u64::MAX
//!   is [`Error::Overflow`] with the counter unchanged, as on MySQL;
//! - every public call finishes within `StoreConfig::deadline` (client side),
//!   and the server's `statement_timeout` / `lock_timeout` are set from the
//!   budget left, so a statement stuck on the server is cancelled there too;
//! - serialization failures (40001), deadlocks (40P01), lock timeouts
//!   (55P03), our own statement timeout (57014) and lost connections are
//!   retried with a fresh statement, bounded and jittered; a connection lost
//!   after a statement was sent makes the outcome unknown (a gap at most);
//! - each new connection refuses `fsync = off` and `synchronous_commit = off`
//!   unless the unsafe override was given, and warns on
//!   `synchronous_commit = local` with synchronous standbys configured.

mod classify;
mod connection;
mod dialect;
mod dialect_awb;
mod dialect_credit;
mod replication;
mod sql;
mod sql_credit;

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

use tokio::time::Instant;
use tokio_postgres::{Client, NoTls, Statement};

pub use sql::PgSql;

use crate::config::{Durability, DurabilityPolicy, NodeListPolicy, StoreConfig, StoreStats};
use crate::error::{Error, Result};
use crate::writer::Writer;

use classify::{classify, is_state};

/// How long closing a discarded connection may take.
const DISCARD_BOUND: Duration = Duration::from_millis(100);

type PgAttempt<'c, T> = Pin<Box<dyn Future<Output = PgResult<T>> + Send + 'c>>;
/// Outer error: a driver failure (retry decision); inner: the operation's answer.
type PgResult<T> = std::result::Result<Result<T>, tokio_postgres::Error>;

pub use crate::config::is_postgres_url;

/// An open connection and the statements prepared on it (each statement is
/// parsed once per connection, then only bound and executed: one round trip).
///
/// Every transaction is opened by the dialect's `begin` (`pg/dialect.rs`),
/// which marks the connection (`began`) until its `end` confirms COMMIT or
/// ROLLBACK: after a try that did not answer a value, the store confirms
/// the end of a marked connection's transaction with a ROLLBACK it awaits,
/// or closes the connection (docs/design.md §9). tokio-postgres rolls a dropped
/// transaction back only when the connection is next used: in a PHP worker
/// that idles, that would keep the series' row locked.
pub struct PgConn {
    client: Client,
    prepared: std::collections::HashMap<String, Statement>,
    /// The task that drives the socket; aborting it closes the socket.
    driver: tokio::task::JoinHandle<()>,
    /// A transaction was opened during the current try.
    began: bool,
}

impl PgConn {
    /// Closes the socket now, whatever it holds (the server then rolls back).
    async fn discard(self, bound: Duration) {
        self.driver.abort();
        drop(self.client);
        let _ = tokio::time::timeout(bound, self.driver).await;
    }

    /// The statement `sql`, prepared on this connection on first use.
    async fn prepared(
        &mut self,
        sql: &str,
    ) -> std::result::Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).await?;
        self.prepared.insert(sql.to_owned(), s.clone());
        Ok(s)
    }
}

impl std::ops::Deref for PgConn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl std::ops::DerefMut for PgConn {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// The series store on PostgreSQL.
pub struct PgStore {
    config: StoreConfig,
    nodes: Vec<tokio_postgres::Config>,
    sql: PgSql,
    client: Option<PgConn>,
    /// The session's `statement_timeout` and `lock_timeout`, in ms.
    session_timeout_ms: u64,
    /// The open connection's commits wait for a synchronous standby (then
    /// no `statement_timeout` is set: see `set_budget`).
    waits_for_standby: bool,
    /// The server process of the open connection (`pg_backend_pid()`).
    backend_pid: Option<u32>,
    durability: Option<Durability>,
    stats: StoreStats,
    /// The list's cluster identity (one `system_identifier`) and the
    /// nodes passed over: the same bookkeeping as on MySQL.
    writer: Writer,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("node", &self.writer.node())
            .field("connected", &self.client.is_some())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

crate::flows::api::with_operations!(crate::flows::api::engine_methods! PgStore);

impl PgStore {
    /// Builds a store without connecting; the first call connects.
    pub fn lazy(config: StoreConfig) -> Result<Self> {
        config.validate()?;
        let nodes = config
            .node_urls()
            .iter()
            .map(|url| {
                let mut node = tokio_postgres::Config::from_str(url)
                    .map_err(|e| Error::Config(format!("database URL: {e}")))?;
                // The store vets every node itself (a standby is passed over
                // with its reason: `connection.rs`), so the driver's own
                // `target_session_attrs=read-write` check, which fails with
                // no reason, is not needed.
                node.target_session_attrs(tokio_postgres::config::TargetSessionAttrs::Any);
                Ok(node)
            })
            .collect::<Result<Vec<_>>>()?;
        let sql = PgSql::new(&config.table_prefix);
        Ok(Self {
            config,
            nodes,
            sql,
            client: None,
            session_timeout_ms: 0,
            waits_for_standby: false,
            backend_pid: None,
            durability: None,
            stats: StoreStats::default(),
            writer: Writer::default(),
        })
    }

    /// The settings this store was built with.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Creates the AWB tables if missing.
    pub async fn awb_ensure_schema(&mut self) -> Result<()> {
        self.run("awb_ensure_schema", |client, sql| {
            Box::pin(async move { create_if_missing(client, &sql.awb.create).await })
        })
        .await
    }

    /// The statements this store sends.
    pub fn sql(&self) -> &PgSql {
        &self.sql
    }

    /// The durability of the server last connected to.
    pub fn durability(&self) -> Option<Durability> {
        self.durability
    }

    /// Why the last node passed over (down, a standby) was skipped, and how
    /// many times one was.
    pub fn skipped_nodes(&self) -> (u64, Option<&str>) {
        (self.writer.skips(), self.writer.last_skip())
    }

    /// What the store has done so far.
    pub fn stats(&self) -> StoreStats {
        self.stats
    }

    /// Which node of the list the open connection goes to (0 = the first).
    pub fn node(&self) -> Option<usize> {
        self.client.as_ref().map(|_| self.writer.node())
    }

    /// The server process of the open connection (`pg_backend_pid()`), the
    /// id `pg_terminate_backend` takes.
    pub fn backend_pid(&self) -> Option<u32> {
        self.client.as_ref().and(self.backend_pid)
    }

    /// Opens the connection if needed and checks that it answers.
    pub async fn ping(&mut self) -> Result<()> {
        self.run("connect", |client, _| {
            Box::pin(async move { client.batch_execute("SELECT 1").await.map(Ok) })
        })
        .await
    }

    /// Creates the sequences table if missing. Existing rows are untouched.
    pub async fn ensure_schema(&mut self) -> Result<()> {
        self.run("ensure_schema", |client, sql| {
            Box::pin(async move { create_if_missing(client, &sql.create_sequences).await })
        })
        .await
    }

    /// Creates the registry and payments tables if missing (and the
    /// sequences table).
    pub async fn ensure_registry_schema(&mut self) -> Result<()> {
        self.ensure_schema().await?;
        self.run("ensure_registry_schema", |client, sql| {
            Box::pin(async move { create_if_missing(client, &sql.create_registry).await })
        })
        .await
    }

    /// Closes the connection politely.
    pub async fn close(mut self) -> Result<()> {
        self.client = None;
        Ok(())
    }
}

/// Runs `CREATE … IF NOT EXISTS` statements; two processes creating the same
/// table at once can collide on the catalog (23505, 42P07): then it exists.
async fn create_if_missing(client: &mut PgConn, statements: &str) -> PgResult<()> {
    match client.batch_execute(statements).await {
        Ok(()) => Ok(Ok(())),
        Err(e) if is_state(&e, "23505") || is_state(&e, "42P07") => {
            client.batch_execute(statements).await.map(Ok)
        }
        Err(e) => Err(e),
    }
}

/// The allocation statement: the new counter from its own `RETURNING`, only
/// when exactly one row came back.
pub(super) async fn allocate_in<C: tokio_postgres::GenericClient + Sync>(
    client: &C,
    allocate: &Statement,
    key: &str,
    count: u64,
) -> PgResult<u64> {
    let row = match client
        .query_opt(allocate, &[&key, &count.to_string()])
        .await
    {
        Ok(row) => row,
        // The CHECK (≤ u64::MAX) or NUMERIC(20,0) refused the new counter.
        Err(e) if is_state(&e, "23514") || is_state(&e, "22003") => {
            return Ok(Err(Error::Overflow {
                scope: key.to_owned(),
                requested: count,
            }))
        }
        Err(e) => return Err(e),
    };
    Ok(match row {
        None => Err(Error::SeriesNotFound {
            scope: key.to_owned(),
        }),
        Some(row) => {
            let text: String = row.get(0);
            match text.parse::<u64>() {
                Ok(last) if last >= count => Ok(last),
                _ => Err(Error::Unexpected(format!(
                    "allocation returned counter {text} for {count} number(s)"
                ))),
            }
        }
    })
}

/// A registry INSERT failed: a duplicate is the readable alarm of rule 7.
pub(super) fn duplicate_or<T>(e: tokio_postgres::Error, key: &str, number: u64) -> PgResult<T> {
    if is_state(&e, "23505") {
        Ok(Err(Error::DuplicateNumber {
            scope: key.to_owned(),
            number,
        }))
    } else {
        Err(e)
    }
}
