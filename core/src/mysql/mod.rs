//! The MySQL/MariaDB dialect (feature `mysql`): its SQL ([`sql`]), its
//! statements for the shared flows (`dialect.rs`), its connection, vetting
//! and error classes, and [`SeriesStore`], the store on this engine.
//!
//! Invariants, from docs/design.md §1–2:
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
//!   refuses `0` unless the unsafe override was given;
//! - with a node list, the writer is the first node that accepts; a store on a
//!   later node tries the earlier ones again after `fail_back_after`.

mod classify;
mod connection;
mod dialect;
mod dialect_awb;
mod dialect_credit;
#[cfg(feature = "mysql-blocking")]
mod lane;
#[cfg(feature = "mysql-blocking")]
mod lane_exchange;
mod one_trip;
mod session;
pub mod sql;
pub mod sql_credit;
mod vetting;

use std::future::Future;
use std::pin::Pin;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use tokio::time::Instant;

pub use crate::awb_stock_rules::{AwbStock, AwbTransition, PoolReport};
pub use crate::config::{
    url_from_parts, ConfirmCommits, Durability, DurabilityPolicy, NodeListPolicy, StoreConfig,
    StoreStats,
};
#[cfg(feature = "mysql-blocking")]
pub use lane::AllocationLane;

use crate::error::{Error, Result};
use crate::scope::ScopeKey;
use crate::series;
use sql::{AwbSql, RegistrySql, SeriesSql};

use crate::writer::Writer;
use classify::classify;
use session::Session;

type Attempt<'c, T> = Pin<Box<dyn Future<Output = AttemptResult<T>> + Send + 'c>>;
/// How long closing a discarded connection may take (it is local work: the
/// goodbye goes to the socket's buffer, then the socket is closed).
const DISCARD_BOUND: std::time::Duration = std::time::Duration::from_millis(100);
/// Outer error: a driver failure (retry decision); inner: the operation's answer.
type AttemptResult<T> = std::result::Result<Result<T>, mysql_async::Error>;

/// Every statement of a store.
#[derive(Debug)]
pub(crate) struct Sql {
    series: SeriesSql,
    registry: RegistrySql,
    awb: AwbSql,
    credit: sql_credit::CreditNoteSql,
}

/// A series store bound to one database connection.
pub struct SeriesStore {
    config: StoreConfig,
    /// The nodes, in order of preference: the writer is the first healthy one.
    nodes: Vec<Opts>,
    sql: Sql,
    conn: Option<Session>,
    /// Which node writes (failover and fail-back).
    writer: Writer,
    durability: Option<Durability>,
    stats: StoreStats,
}

impl std::fmt::Debug for SeriesStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeriesStore")
            .field("table", &self.sql.series.table)
            .field("connected", &self.conn.is_some())
            .field("durability", &self.durability)
            .field("stats", &self.stats)
            .finish()
    }
}

crate::flows::api::with_operations!(crate::flows::api::engine_methods! SeriesStore);

impl SeriesStore {
    /// Builds a store without connecting; the first call connects.
    pub fn lazy(config: StoreConfig) -> Result<Self> {
        config.validate()?;
        let nodes = config
            .node_urls()
            .iter()
            .map(|url| {
                let opts =
                    Opts::from_url(url).map_err(|e| Error::Config(format!("database URL: {e}")))?;
                // An IPv6 literal keeps its URL brackets in mysql_async's host
                // (`[::1]`), which then fails as a name lookup: connect to the
                // address itself.
                let bare = opts
                    .ip_or_hostname()
                    .strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .map(str::to_owned);
                let mut builder = OptsBuilder::from_opts(opts);
                if let Some(address) = bare {
                    builder = builder.ip_or_hostname(address);
                }
                // Rows *changed*, not matched: allocation always changes its
                // row, and advance relies on "changed" to report whether it moved.
                Ok(builder.client_found_rows(false).into())
            })
            .collect::<Result<Vec<Opts>>>()?;
        let sql = Sql {
            series: SeriesSql::new(&config.table_prefix),
            registry: RegistrySql::new(&config.table_prefix),
            awb: AwbSql::new(&config.table_prefix),
            credit: sql_credit::CreditNoteSql::new(&config.table_prefix),
        };
        Ok(Self {
            config,
            nodes,
            sql,
            conn: None,
            writer: Writer::default(),
            durability: None,
            stats: StoreStats::default(),
        })
    }

    /// The settings this store was built with.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Creates the AWB tables if missing.
    pub async fn awb_ensure_schema(&mut self) -> Result<()> {
        self.run("awb_ensure_schema", "", |conn, sql, _| {
            Box::pin(async move {
                for ddl in &sql.awb.create {
                    conn.query_drop(ddl).await?;
                }
                Ok(Ok(()))
            })
        })
        .await
    }

    /// The series statements this store sends.
    pub fn sql(&self) -> &SeriesSql {
        &self.sql.series
    }

    /// The registry and payments statements this store sends.
    pub fn registry_sql(&self) -> &RegistrySql {
        &self.sql.registry
    }

    /// The durability of the server last connected to.
    pub fn durability(&self) -> Option<Durability> {
        self.durability
    }

    /// What the store has done so far.
    pub fn stats(&self) -> StoreStats {
        self.stats
    }

    /// Which node of the list the open connection goes to (0 = the first).
    pub fn node(&self) -> Option<usize> {
        self.conn.as_ref().map(|_| self.writer.node())
    }

    /// Why the last node passed over (down, not ready, read-only) was
    /// skipped, and how many times one was.
    pub fn skipped_nodes(&self) -> (u64, Option<&str>) {
        (self.writer.skips(), self.writer.last_skip())
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

    /// Creates the sequences table if missing, and adds `start_value`,
    /// `closed_by` and the chain's head to a table that lacks them (an
    /// adopted article table, or one from before series were closed or
    /// chained). Existing rows are untouched.
    pub async fn ensure_schema(&mut self) -> Result<()> {
        self.run("ensure_schema", "", |conn, sql, _| {
            Box::pin(async move {
                conn.query_drop(&sql.series.create_table).await?;
                let columns: Vec<String> = conn
                    .exec(&sql.series.list_columns, (&sql.series.table,))
                    .await?;
                if !columns
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case("start_value"))
                {
                    conn.query_drop(&sql.series.add_start_value).await?;
                }
                if !columns.iter().any(|c| c.eq_ignore_ascii_case("closed_by")) {
                    conn.query_drop(&sql.series.add_closed_by).await?;
                }
                if !columns.iter().any(|c| c.eq_ignore_ascii_case("chain_seq")) {
                    conn.query_drop(&sql.series.add_chain_head).await?;
                }
                Ok(Ok(()))
            })
        })
        .await
    }

    /// Creates the registry and payments tables if missing (and the
    /// sequences table: [`SeriesStore::ensure_schema`]).
    pub async fn ensure_registry_schema(&mut self) -> Result<()> {
        self.ensure_schema().await?;
        self.run("ensure_registry_schema", "", |conn, sql, _| {
            Box::pin(async move {
                conn.query_drop(&sql.registry.create_numbers).await?;
                conn.query_drop(&sql.registry.create_payments).await?;
                conn.query_drop(&sql.registry.create_chain).await?;
                let columns: Vec<String> = conn
                    .exec(&sql.series.list_columns, (&sql.registry.payments,))
                    .await?;
                if !columns.iter().any(|c| c.eq_ignore_ascii_case("period")) {
                    conn.query_drop(&sql.registry.add_period).await?;
                }
                if !columns
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case("refers_scope"))
                {
                    conn.query_drop(&sql.registry.add_refers).await?;
                }
                let columns: Vec<String> = conn
                    .exec(&sql.series.list_columns, (&sql.registry.numbers,))
                    .await?;
                if !columns.iter().any(|c| c.eq_ignore_ascii_case("claim")) {
                    conn.query_drop(&sql.registry.add_claim).await?;
                } else if !columns.iter().any(|c| c.eq_ignore_ascii_case("claim_node")) {
                    conn.query_drop(&sql.registry.add_claim_node).await?;
                }
                if !columns
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case("request_key"))
                {
                    conn.query_drop(&sql.registry.add_request_key).await?;
                }
                let indexes: Vec<String> = conn
                    .exec(
                        "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS \
                         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                        (&sql.registry.numbers,),
                    )
                    .await?;
                if !indexes.iter().any(|i| i == "scope_status") {
                    conn.query_drop(&sql.registry.add_book_indexes).await?;
                }
                let indexes: Vec<String> = conn
                    .exec(
                        "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS \
                         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                        (&sql.registry.payments,),
                    )
                    .await?;
                if !indexes.iter().any(|i| i == "number_id") {
                    conn.query_drop(&sql.registry.add_held_index).await?;
                }
                Ok(Ok(()))
            })
        })
        .await
    }

    /// Closes the connection politely.
    pub async fn close(mut self) -> Result<()> {
        if let Some(session) = self.conn.take() {
            session
                .into_conn()
                .disconnect()
                .await
                .map_err(|e| classify(e).error)?;
        }
        Ok(())
    }
}

/// Allocates `count` numbers of `scope` on a connection and transaction the
/// caller owns (a tool renumbering inside its own transaction): the same
/// statement and the same one-row rule as [`SeriesStore::allocate_many`],
/// without the store's retries or deadline. Returns the last number.
pub async fn allocate_on(
    conn: &mut Conn,
    sql: &SeriesSql,
    scope: &ScopeKey,
    count: u64,
) -> Result<u64> {
    series::check_batch(count)?;
    dialect::run_allocation(conn, &sql.allocate, scope.as_str(), count)
        .await
        .map_err(|e| classify(e).error)?
}
