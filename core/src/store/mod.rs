//! The series store on MySQL/MariaDB (feature `mysql`).
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

mod awb_stock;
mod classify;
mod dialect;
#[cfg(feature = "mysql-blocking")]
mod lane;
#[cfg(feature = "mysql-blocking")]
mod lane_exchange;
mod session;
mod vetting;

use std::future::Future;
use std::ops::RangeInclusive;
use std::pin::Pin;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use tokio::time::Instant;

pub use crate::awb_stock_rules::{AwbStock, AwbTransition, PoolReport};
pub use crate::config::{
    url_from_parts, Durability, DurabilityPolicy, NodeListPolicy, StoreConfig, StoreStats,
};
#[cfg(feature = "mysql-blocking")]
pub use lane::AllocationLane;

use crate::error::{codes, Error, Result};
use crate::flows::payments::Found;
use crate::format::Period;
use crate::payment::{Claim, Held, PaymentRecord, PaymentRef};
use crate::schema::{AwbSql, RegistrySql, SeriesSql};
use crate::scope::ScopeKey;
use crate::series::{self, Advanced, Initialized, SeriesState};
use crate::series_life::{self, MissingSeries, PlannedSeries};

use crate::writer::Writer;
use classify::classify;
use session::{Session, Tx};

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

    /// Creates the sequences table if missing, and adds `start_value` and
    /// `closed_by` to a table that lacks them (an adopted article table, or
    /// one from before series were closed). Existing rows are untouched.
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
                match conn
                    .exec_drop(&sql.series.initialize, (key, counter, start))
                    .await
                {
                    Ok(()) => Ok(Ok(Initialized::Created { next: start })),
                    Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
                        Ok(read_current(conn, &sql.series, key)
                            .await?
                            .map(|s| Initialized::Exists { current: s.current }))
                    }
                    Err(e) => Err(e),
                }
            })
        })
        .await
    }

    /// Creates the series `scope` under a plan (docs/design.md §7): at
    /// `configured_start` (`Create`), right after the issuer's latest earlier
    /// period (`Continue`, see [`series_life::previous_series`]), or not at
    /// all (`Hold`). An existing series is reported, never reset.
    ///
    /// Under `Continue` the new series is made in one transaction that holds
    /// the previous series' row lock: its first number follows the counter
    /// once no allocation of the previous series is in flight, and the
    /// previous series is closed in favour of the new one, so that it never
    /// hands out a number the new one hands out too (a format without the
    /// year prints both alike). A payment of the closed series' period is
    /// numbered by its successor ([`SeriesStore::record_payment`]).
    pub async fn initialize_planned(
        &mut self,
        scope: &ScopeKey,
        plan: MissingSeries,
        configured_start: u64,
    ) -> Result<PlannedSeries> {
        let previous = match (plan, series_life::issuer_and_year(scope.as_str())) {
            (MissingSeries::Continue, Some((issuer, _))) => {
                let pattern = series_life::issuer_pattern(issuer);
                let rows: Vec<(String, u64)> = self
                    .run("initialize_planned", scope.as_str(), move |conn, sql, _| {
                        let pattern = pattern.clone();
                        Box::pin(async move {
                            conn.exec(&sql.series.list_like, (pattern,)).await.map(Ok)
                        })
                    })
                    .await?;
                series_life::previous_series(scope, rows.iter().map(|(k, c)| (k.as_str(), *c)))
                    .map(|(key, _)| key.to_owned())
            }
            _ => None,
        };
        let Some(previous) = previous else {
            let start = series_life::start_for_new_series(plan, configured_start, None)?;
            let outcome = match start {
                Some(start) => Some(self.initialize(scope, start).await?),
                None => None,
            };
            return Ok(PlannedSeries {
                start,
                continued_from: None,
                outcome,
            });
        };
        // A table from before `closed_by` gains it here, once.
        self.ensure_schema().await?;
        self.run(
            "initialize_planned",
            scope.as_str(),
            move |conn, sql, key| {
                let previous = previous.clone();
                Box::pin(async move {
                    let mut tx = Tx::begin(conn).await?;
                    let mut statements = dialect::MysqlSeries {
                        conn: &mut tx,
                        sql: &sql.series,
                    };
                    let outcome = crate::flows::continue_series::continue_series(
                        &mut statements,
                        key,
                        &previous,
                        configured_start,
                    )
                    .await;
                    tx.end(outcome).await
                })
            },
        )
        .await
    }

    /// Moves the series so that its next number is at least `next`. Never
    /// moves it down: to start lower, create a new series.
    pub async fn advance(&mut self, scope: &ScopeKey, next: u64) -> Result<Advanced> {
        let counter = series::counter_for_next(next)?;
        self.run("advance", scope.as_str(), move |conn, sql, key| {
            Box::pin(async move {
                conn.exec_drop(&sql.series.advance, (counter, key)).await?;
                match conn.affected_rows() {
                    1 => Ok(Ok(Advanced::Moved { current: counter })),
                    // Unchanged or missing: the row says which.
                    0 => Ok(read_current(conn, &sql.series, key)
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
            Box::pin(async move { allocate_in(conn, &sql.series, key, count).await })
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
                let columns: Vec<String> = conn
                    .exec(&sql.series.list_columns, (&sql.registry.payments,))
                    .await?;
                if !columns.iter().any(|c| c.eq_ignore_ascii_case("period")) {
                    conn.query_drop(&sql.registry.add_period).await?;
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

    /// Hands out the next number of `scope` and records it in the registry
    /// as issued (`source`, e.g. `api`), in one transaction: the number exists
    /// only if its registry row does (docs/design.md §2 rule 4).
    ///
    /// The row is written `unconfirmed` with the call's random mark in
    /// `claim`, and marked `issued` once the answer to the COMMIT has
    /// arrived: a number whose caller may not have received it (the answer
    /// lost, the deadline first) stays `unconfirmed`, and the books list it.
    /// A try whose COMMIT lost its answer may have committed: the retry that
    /// replaces it voids that row, if it exists (recognised by the call's
    /// mark), with [`crate::payment::UNANSWERED_REASON`], so the books
    /// explain the number.
    pub async fn allocate_recorded(&mut self, scope: &ScopeKey, source: &str) -> Result<u64> {
        self.recorded(scope, source, None).await
    }

    /// [`SeriesStore::allocate_recorded`] with a request key (see
    /// [`crate::payment::check_request_key`]): the key is stored with the
    /// number under a unique key per series, so a repeat of the call with
    /// the same key — after a lost answer, a timeout, a crash — returns the
    /// same number (and marks it issued: its caller has it now), and only a
    /// key never seen takes a new one.
    pub async fn allocate_recorded_keyed(
        &mut self,
        scope: &ScopeKey,
        source: &str,
        request_key: &str,
    ) -> Result<u64> {
        crate::payment::check_request_key(request_key)?;
        self.recorded(scope, source, Some(request_key)).await
    }

    async fn recorded(
        &mut self,
        scope: &ScopeKey,
        source: &str,
        request_key: Option<&str>,
    ) -> Result<u64> {
        crate::payment::check_source(source)?;
        let source = source.to_owned();
        let request_key = request_key.map(str::to_owned);
        // This call's mark on its registry rows, and the numbers of its
        // tries that reached COMMIT: a retry voids only rows with this mark,
        // never a number that another call issued after a rollback. (A
        // keyed call finds its own committed row by its key instead.)
        let call = format!("call-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let committing = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u64>::new()));
        self.run(
            "allocate_recorded",
            scope.as_str(),
            move |conn, sql, key| {
                let (source, call, request_key) =
                    (source.clone(), call.clone(), request_key.clone());
                let committing = committing.clone();
                Box::pin(async move {
                    let mut tx = Tx::begin(conn).await?;
                    let outcome = async {
                        if let Some(k) = &request_key {
                            if let Some(found) = by_request_key(&mut tx, sql, key, k).await? {
                                return Ok(found);
                            }
                        } else {
                            let unanswered = committing.lock().expect("not poisoned").clone();
                            for number in unanswered {
                                tx.exec_drop(
                                    &sql.registry.void_unanswered,
                                    (crate::payment::UNANSWERED_REASON, key, number, &call),
                                )
                                .await?;
                            }
                        }
                        let number = match crate::flows::numbering::allocate_open(
                            &mut dialect::MysqlNumbering { conn: &mut tx, sql },
                            key,
                            1,
                        )
                        .await?
                        {
                            Ok(number) => number,
                            Err(e) => return Ok(Err(e)),
                        };
                        let inserted = match &request_key {
                            None => {
                                let row = (key, number, &source, &call);
                                dialect::insert_registry_row(
                                    &mut tx,
                                    &sql.registry.insert_unconfirmed_by_call,
                                    key,
                                    number,
                                    row,
                                )
                                .await?
                            }
                            Some(k) => {
                                let row = (key, number, &source, &call, k);
                                dialect::insert_registry_row(
                                    &mut tx,
                                    &sql.registry.insert_keyed_by_call,
                                    key,
                                    number,
                                    row,
                                )
                                .await?
                            }
                        };
                        Ok(inserted.map(|()| (number, call.clone())))
                    }
                    .await;
                    if let Ok(Ok((number, _))) = &outcome {
                        committing.lock().expect("not poisoned").push(*number);
                    }
                    let (number, mark) = match tx.end(outcome).await? {
                        Ok(taken) => taken,
                        // The same key at the same moment: the other call
                        // committed first; this one rolled back and reads it.
                        Err(e @ Error::DuplicateNumber { .. }) if request_key.is_some() => {
                            let k = request_key.as_deref().unwrap_or_default();
                            match by_request_key(conn, sql, key, k).await? {
                                Some(Ok(found)) => found,
                                Some(Err(refused)) => return Ok(Err(refused)),
                                // Not the key: the registry's readable alarm.
                                None => return Ok(Err(e)),
                            }
                        }
                        Err(e) => return Ok(Err(e)),
                    };
                    // The COMMIT was answered (or a repeat found its number):
                    // this caller has the number. Marking it issued is
                    // idempotent; if this answer is lost, or the deadline
                    // ends the call first, the number stays unconfirmed,
                    // which is what the books must say.
                    if let Err(e) = conn
                        .exec_drop(&sql.registry.confirm_by_call, (key, number, &mark))
                        .await
                    {
                        log::warn!("number {number} of `{key}` stays unconfirmed: {e}");
                    }
                    Ok(Ok(number))
                })
            },
        )
        .await
    }

    /// Records a payment and gives it a number, exactly once per
    /// (gateway, transaction id): in one transaction, inserts the payment row,
    /// allocates from `scope`, records the number as reserved for the payment,
    /// and commits. A payment seen before (one after another, or at the same
    /// moment) gets the number of its first delivery and changes nothing.
    pub async fn record_payment(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
    ) -> Result<PaymentRecord> {
        self.record_payment_in(scope, payment, amount, currency, None)
            .await
    }

    /// [`SeriesStore::record_payment`], with the period recorded.
    ///
    /// `period` is the site's local year and month at the instant the
    /// payment arrived, recorded with it: every later step (the invoice's
    /// rendered number, a completion after midnight) takes year and month
    /// from this one instant.
    pub async fn record_payment_in(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Option<Period>,
    ) -> Result<PaymentRecord> {
        crate::payment::check_payment_values(amount, currency)?;
        let stored_period = period.map(|p| p.to_string());
        let (gateway, txn) = (
            payment.gateway().to_owned(),
            payment.transaction_id().to_owned(),
        );
        let (amount, currency) = (amount.map(str::to_owned), currency.map(str::to_owned));
        self.run("record_payment", scope.as_str(), move |conn, sql, key| {
            let (gateway, txn, amount, currency, stored_period) = (
                gateway.clone(),
                txn.clone(),
                amount.clone(),
                currency.clone(),
                stored_period.clone(),
            );
            Box::pin(async move {
                let mut tx = Tx::begin(conn).await?;
                let outcome = async {
                    let inserted = tx
                        .exec_drop(
                            &sql.registry.insert_payment,
                            (&gateway, &txn, key, &amount, &currency, &stored_period),
                        )
                        .await;
                    match inserted {
                        Ok(()) => {}
                        // Delivered before: answered after this transaction ends.
                        Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
                            return Ok(Ok(None));
                        }
                        Err(e) => return Err(e),
                    }
                    let payment_id = tx.last_insert_id().unwrap_or(0);
                    number_payment(&mut tx, sql, payment_id, key, &gateway, &txn, period)
                        .await
                        .map(|numbered| numbered.map(Some))
                }
                .await;
                match tx.end(outcome).await? {
                    Ok(Some(record)) => Ok(Ok(record)),
                    Err(e) => Ok(Err(e)),
                    // That delivery committed its number, or was held for
                    // its series (then this one numbers it).
                    Ok(None) => match find_payment(conn, sql, &gateway, &txn).await? {
                        Ok(Found::Numbered(r)) => Ok(Ok(r)),
                        Ok(Found::Waiting) => complete_held(conn, sql, &gateway, &txn).await,
                        Err(e) => Ok(Err(e)),
                    },
                }
            })
        })
        .await
    }

    /// Records a payment whose series does not exist yet, without a number
    /// (docs/design.md §7: a payment is never lost because its series is missing).
    /// `period` is the site's local year and month when it arrived. A later
    /// [`SeriesStore::record_payment`] of the same payment, once the series
    /// exists, gives it its number. Once per (gateway, transaction id): a
    /// repeat reports `Waiting { created: false }`, or the number it received.
    pub async fn hold_payment(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Period,
    ) -> Result<Held> {
        crate::payment::check_payment_values(amount, currency)?;
        let (gateway, txn) = (
            payment.gateway().to_owned(),
            payment.transaction_id().to_owned(),
        );
        let (amount, currency) = (amount.map(str::to_owned), currency.map(str::to_owned));
        let period = period.to_string();
        self.run("hold_payment", scope.as_str(), move |conn, sql, key| {
            let (gateway, txn, amount, currency, period) = (
                gateway.clone(),
                txn.clone(),
                amount.clone(),
                currency.clone(),
                period.clone(),
            );
            Box::pin(async move {
                match conn
                    .exec_drop(
                        &sql.registry.insert_held_payment,
                        (&gateway, &txn, key, &amount, &currency, &period),
                    )
                    .await
                {
                    Ok(()) => Ok(Ok(Held::Waiting { created: true })),
                    Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
                        Ok(find_payment(conn, sql, &gateway, &txn).await?.map(
                            |found| match found {
                                Found::Numbered(r) => Held::Numbered(r),
                                Found::Waiting => Held::Waiting { created: false },
                            },
                        ))
                    }
                    Err(e) => Err(e),
                }
            })
        })
        .await
    }

    /// Claims a reserved number of `scope` to create its invoice (the payment
    /// flow's second phase). The claim is committed on this store's own
    /// connection, so it survives whatever happens to the caller's other
    /// connections; a claim older than `stale_after` is taken over (its
    /// holder died). `claim` is the caller's random id (1–40 characters).
    pub async fn claim_number(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        stale_after: std::time::Duration,
    ) -> Result<Claim> {
        crate::payment::check_claim_id(claim)?;
        let (claim, stale) = (claim.to_owned(), stale_after.as_secs());
        self.run("claim_number", scope.as_str(), move |conn, sql, key| {
            let claim = claim.clone();
            Box::pin(async move {
                conn.exec_drop(&sql.registry.claim_number, (&claim, key, number, stale))
                    .await?;
                if conn.affected_rows() == 1 {
                    return Ok(Ok(Claim::Claimed));
                }
                let row: Option<(String, Option<u64>, Option<String>)> = conn
                    .exec_first(&sql.registry.number_state, (key, number))
                    .await?;
                Ok(match row {
                    None => Err(Error::Unexpected(format!(
                        "number {number} of series `{key}` is not in the registry"
                    ))),
                    Some((status, post_id, holder)) => crate::payment::claim_from_state(
                        key,
                        number,
                        &claim,
                        &status,
                        post_id,
                        holder.as_deref(),
                    ),
                })
            })
        })
        .await
    }

    /// Marks a number this caller claimed as issued to `post_id`, and the
    /// payment's row with its post, in one transaction. `false` when the
    /// claim was lost (taken over as stale): nothing changed.
    pub async fn issue_claimed(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        post_id: u64,
        payment: Option<&PaymentRef>,
    ) -> Result<bool> {
        crate::payment::check_claim_id(claim)?;
        let claim = claim.to_owned();
        let payment = payment.map(|p| (p.gateway().to_owned(), p.transaction_id().to_owned()));
        self.run("issue_claimed", scope.as_str(), move |conn, sql, key| {
            let (claim, payment) = (claim.clone(), payment.clone());
            Box::pin(async move {
                let mut tx = Tx::begin(conn).await?;
                let outcome = async {
                    tx.exec_drop(&sql.registry.issue_claimed, (post_id, key, number, &claim))
                        .await?;
                    if tx.affected_rows() != 1 {
                        // Lost, or issued by this call's earlier try whose
                        // COMMIT answer was lost.
                        let row: Option<(String, Option<u64>, Option<String>)> = tx
                            .exec_first(&sql.registry.number_state, (key, number))
                            .await?;
                        let ours = row.is_some_and(|(status, issued, _)| {
                            crate::payment::issued_to(&status, issued, post_id)
                        });
                        if !ours {
                            return Ok(Ok(false));
                        }
                    }
                    if let Some((gateway, txn)) = &payment {
                        tx.exec_drop(&sql.registry.set_payment_post, (post_id, gateway, txn))
                            .await?;
                    }
                    Ok(Ok(true))
                }
                .await;
                tx.end(outcome).await
            })
        })
        .await
    }

    /// Gives a claim back after a failure: the number is reserved again and
    /// the next delivery completes it. `false` when the claim was not held.
    pub async fn release_claim(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
    ) -> Result<bool> {
        crate::payment::check_claim_id(claim)?;
        let claim = claim.to_owned();
        self.run("release_claim", scope.as_str(), move |conn, sql, key| {
            let claim = claim.clone();
            Box::pin(async move {
                conn.exec_drop(&sql.registry.release_claim, (key, number, &claim))
                    .await?;
                Ok(Ok(conn.affected_rows() == 1))
            })
        })
        .await
    }

    /// The series as stored.
    pub async fn current(&mut self, scope: &ScopeKey) -> Result<SeriesState> {
        self.run("current", scope.as_str(), move |conn, sql, key| {
            Box::pin(async move { read_current(conn, &sql.series, key).await })
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

    /// Runs one operation under the one loop of both engines
    /// (`flows::call::run`: retries, reconnects, failover and the deadline).
    async fn run<T, F>(&mut self, operation: &'static str, key: &str, attempt: F) -> Result<T>
    where
        F: for<'c> FnMut(&'c mut Session, &'c Sql, &'c str) -> Attempt<'c, T> + Send,
        T: Send,
    {
        crate::flows::call::run(self, operation, key, attempt).await
    }

    /// Closes the connection if a transaction may still be open on it.
    async fn discard_if_open(&mut self) {
        if self.conn.as_ref().is_some_and(Session::open) {
            log::warn!("closing a connection whose transaction was not seen to end");
            self.stats.discarded += 1;
            if let Some(session) = self.conn.take() {
                session.discard(DISCARD_BOUND).await;
            }
        }
    }

    /// Makes sure a checked connection is open: to the first node of the list
    /// that accepts it, is ready (a Galera node must report `wsrep_ready`)
    /// and passes the durability check. So every allocation of a series goes
    /// to one writer node, and moves to the next only when it fails.
    async fn connection(&mut self) -> Result<()> {
        if self.conn.is_some() {
            // Failed over a while ago: try the preferred nodes again, briefly;
            // keep the current connection if none of them answers yet. (The
            // call's own deadline bounds the probes too.)
            let Some((earlier, probe)) = self
                .writer
                .fail_back_probe(&self.config, self.config.deadline)
            else {
                return Ok(());
            };
            for node in earlier {
                if let Ok(conn) = self.connect_node(node, probe).await {
                    self.conn = Some(Session::new(conn));
                    self.writer.connected(node);
                    return Ok(());
                }
            }
            self.writer.stayed();
            return Ok(());
        }
        let mut last = None;
        for node in 0..self.nodes.len() {
            match self.connect_node(node, self.config.connect_timeout).await {
                Ok(conn) => {
                    self.conn = Some(Session::new(conn));
                    self.writer.connected(node);
                    return Ok(());
                }
                // A server refusing us by policy is the same on every node.
                Err(e) if vetting::ends_node_search(&e) => return Err(e),
                Err(e) => {
                    self.writer.skipped(node, &e);
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::Config("no database node configured".into())))
    }

    async fn connect_node(&mut self, node: usize, timeout: std::time::Duration) -> Result<Conn> {
        let mut conn =
            match tokio::time::timeout(timeout, Conn::new(self.nodes[node].clone())).await {
                Ok(Ok(conn)) => conn,
                Ok(Err(e)) => return Err(vetting::connect_failure(classify(e).error)),
                Err(_) => {
                    return Err(Error::Unavailable {
                        reason: format!("connect did not finish within {} ms", timeout.as_millis()),
                        may_have_run: false,
                    })
                }
            };
        self.stats.connects += 1;
        let vars: Vec<(String, String)> = conn
            .query(vetting::SERVER_CHECK_SQL)
            .await
            .map_err(before_any_statement)?;
        let check = vetting::judge_server(&vars, self.config.durability)?;
        let mut cluster = None;
        if check.galera {
            let rows: Vec<(String, String)> = conn
                .query(vetting::GALERA_READY_SQL)
                .await
                .map_err(before_any_statement)?;
            cluster = vetting::judge_ready(node, &rows)?;
            conn.query_drop(vetting::GALERA_CAUSAL_READS_SQL)
                .await
                .map_err(before_any_statement)?;
        }
        let policy = self.config.node_list;
        let identity = vetting::judge_writer(node, self.nodes.len(), &check, cluster, policy)?;
        self.writer.admit(node, identity, policy)?;
        // The server's own backstop against a transaction left idle (a
        // process frozen in the middle of one): no call of ours keeps one
        // open past its deadline. MariaDB only; MySQL does not know the
        // variable (1193), and relies on the store's own ending alone.
        let idle = self.config.deadline.as_secs().saturating_mul(2).max(2);
        match conn
            .query_drop(format!("SET SESSION idle_transaction_timeout = {idle}"))
            .await
        {
            Err(mysql_async::Error::Server(e)) if e.code == codes::ER_UNKNOWN_SYSTEM_VARIABLE => {}
            other => other.map_err(before_any_statement)?,
        }
        self.durability = Some(check.durability);
        Ok(conn)
    }
}

impl crate::flows::call::CallSite for SeriesStore {
    type Conn = Session;
    type Sql = Sql;
    type Failure = mysql_async::Error;

    fn config(&self) -> &StoreConfig {
        &self.config
    }

    fn stats_mut(&mut self) -> &mut StoreStats {
        &mut self.stats
    }

    async fn before_call(&mut self, _until: Instant) {
        self.discard_if_open().await;
    }

    async fn ready(&mut self, _until: Instant) -> Result<()> {
        self.connection().await
    }

    fn parts(&mut self) -> (&mut Session, &Sql) {
        (self.conn.as_mut().expect("ready() connected"), &self.sql)
    }

    async fn after_try(&mut self, _answered: bool, _until: Instant) {
        self.discard_if_open().await;
    }

    fn failed(&mut self, failure: mysql_async::Error) -> Error {
        let f = classify(failure);
        if f.connection_broken {
            self.conn = None;
        }
        f.error
    }

    async fn abandon(&mut self) {
        if let Some(session) = self.conn.take() {
            session.discard(DISCARD_BOUND).await;
        }
    }
}

/// A failure while connecting: no statement of the caller ran.
fn before_any_statement(e: mysql_async::Error) -> Error {
    vetting::before_any_statement(classify(e).error)
}

/// The number request key `k` took in series `key`, with its call's mark
/// (`None`: the key is new); a number no longer handed out is refused
/// ([`crate::payment::repeat_of_request`]).
async fn by_request_key(
    conn: &mut Conn,
    sql: &Sql,
    key: &str,
    k: &str,
) -> std::result::Result<Option<Result<(u64, String)>>, mysql_async::Error> {
    let found: Option<(u64, String, Option<String>)> = conn
        .exec_first(&sql.registry.find_by_request, (key, k))
        .await?;
    Ok(found.map(|(number, status, mark)| {
        crate::payment::repeat_of_request(key, k, number, &status)
            .map(|n| (n, mark.unwrap_or_default()))
    }))
}

/// Reads one series; `SeriesNotFound` when it does not exist.
async fn read_current(conn: &mut Conn, sql: &SeriesSql, key: &str) -> AttemptResult<SeriesState> {
    let row: Option<(u64, Option<u64>)> = conn.exec_first(&sql.current, (key,)).await?;
    Ok(series::state_of_row(key, row))
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
    allocate_in(conn, sql, scope.as_str(), count)
        .await
        .map_err(|e| classify(e).error)?
}

/// The allocation statement on `conn`: the new counter from the statement's
/// own OK packet, only when exactly one row changed.
async fn allocate_in(
    conn: &mut Conn,
    sql: &SeriesSql,
    key: &str,
    count: u64,
) -> AttemptResult<u64> {
    dialect::run_allocation(conn, &sql.allocate, key, count).await
}

/// Reads a payment recorded by an earlier delivery (`flows::payments`).
async fn find_payment(
    conn: &mut Conn,
    sql: &Sql,
    gateway: &str,
    txn: &str,
) -> AttemptResult<Found> {
    crate::flows::payments::find_payment(&mut dialect::MysqlNumbering { conn, sql }, gateway, txn)
        .await
}

/// Numbers a recorded payment (row `payment_id`) on a transaction the caller
/// opened: the one flow of both engines (`flows::numbering::number_payment`).
async fn number_payment(
    conn: &mut Conn,
    sql: &Sql,
    payment_id: u64,
    key: &str,
    gateway: &str,
    txn: &str,
    period: Option<Period>,
) -> AttemptResult<PaymentRecord> {
    let mut statements = dialect::MysqlNumbering { conn, sql };
    crate::flows::numbering::number_payment(&mut statements, payment_id, key, gateway, txn, period)
        .await
}

/// Gives a held payment its number, in one transaction under the payment
/// row's lock (`flows::payments::complete_held`): the series chosen when the
/// payment arrived (or its successor), the number recorded as reserved, the
/// payment row updated. A concurrent delivery waits on the lock and then
/// finds the number. A series that still does not exist is
/// `SeriesNotFound`, and nothing changes.
async fn complete_held(
    conn: &mut Session,
    sql: &Sql,
    gateway: &str,
    txn: &str,
) -> AttemptResult<PaymentRecord> {
    let mut tx = Tx::begin(conn).await?;
    let outcome = crate::flows::payments::complete_held(
        &mut dialect::MysqlNumbering { conn: &mut tx, sql },
        gateway,
        txn,
    )
    .await;
    match tx.end(outcome).await? {
        Ok(Some(record)) => Ok(Ok(record)),
        Err(e) => Ok(Err(e)),
        Ok(None) => Ok(crate::flows::payments::numbered_meanwhile(
            find_payment(conn, sql, gateway, txn).await?,
            gateway,
            txn,
        )),
    }
}
