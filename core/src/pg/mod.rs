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

mod awb_stock;
mod classify;
mod dialect;
mod payment_flow;
mod sql;

use std::future::Future;
use std::ops::RangeInclusive;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

use tokio::time::Instant;
use tokio_postgres::{Client, NoTls, Statement};

pub use sql::PgSql;

use crate::config::{Durability, DurabilityPolicy, StoreConfig, StoreStats};
use crate::error::{Error, Result};
use crate::flows::payments::Found;
use crate::payment::{NumberStatus, PaymentRecord, PaymentRef, UNANSWERED_REASON};
use crate::scope::ScopeKey;
use crate::series::{self, Advanced, Initialized, SeriesState};
use crate::series_life::{self, MissingSeries, PlannedSeries};
use crate::writer::Writer;

use classify::{classify, is_state};

/// How long closing a discarded connection may take.
const DISCARD_BOUND: Duration = Duration::from_millis(100);

type PgAttempt<'c, T> = Pin<Box<dyn Future<Output = PgResult<T>> + Send + 'c>>;
/// Outer error: a driver failure (retry decision); inner: the operation's answer.
type PgResult<T> = std::result::Result<Result<T>, tokio_postgres::Error>;

/// Whether a URL names the PostgreSQL engine.
pub fn is_postgres_url(url: &str) -> bool {
    let u = url.trim_start();
    u.starts_with("postgres://") || u.starts_with("postgresql://")
}

/// An open connection and the statements prepared on it (each statement is
/// parsed once per connection, then only bound and executed: one round trip).
///
/// Every transaction is opened with [`PgConn::begin`], which marks the
/// connection: after a try that did not answer a value, the store confirms
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
    /// Opens a transaction and marks the connection (see [`PgConn`]).
    async fn begin(
        &mut self,
    ) -> std::result::Result<tokio_postgres::Transaction<'_>, tokio_postgres::Error> {
        self.began = true;
        self.client.transaction().await
    }

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

impl PgStore {
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
                tokio_postgres::Config::from_str(url)
                    .map_err(|e| Error::Config(format!("database URL: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        let sql = PgSql::new(&config.table_prefix);
        Ok(Self {
            config,
            nodes,
            sql,
            client: None,
            session_timeout_ms: 0,
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

    /// Creates the series `scope` whose first number is `start` (≥ 1). An
    /// existing series is reported and never reset.
    pub async fn initialize(&mut self, scope: &ScopeKey, start: u64) -> Result<Initialized> {
        let counter = series::counter_for_start(start)?;
        let key = scope.as_str().to_owned();
        self.run("initialize", move |client, sql| {
            let key = key.clone();
            Box::pin(async move {
                let created = client
                    .query_opt(
                        &sql.initialize,
                        &[&key, &counter.to_string(), &start.to_string()],
                    )
                    .await?;
                if created.is_some() {
                    return Ok(Ok(Initialized::Created { next: start }));
                }
                Ok(read_current(client, sql, &key)
                    .await?
                    .map(|s| Initialized::Exists { current: s.current }))
            })
        })
        .await
    }

    /// Creates the series `scope` under a plan (docs/design.md §7), as on MySQL:
    /// at `configured_start` (`Create`), right after the issuer's latest
    /// earlier year (`Continue`: in one transaction under the previous
    /// series' row lock, which closes it in favour of the new one), or not at
    /// all (`Hold`). An existing series is reported, never reset.
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
                    .run("initialize_planned", move |client, sql| {
                        let pattern = pattern.clone();
                        Box::pin(async move {
                            let rows = client.query(&sql.list_like, &[&pattern]).await?;
                            Ok(rows
                                .iter()
                                .map(|r| {
                                    let current: String = r.get(1);
                                    current
                                        .parse::<u64>()
                                        .map(|c| (r.get::<_, String>(0), c))
                                        .map_err(|_| {
                                            Error::Unexpected(format!(
                                                "counter {current} is not a u64"
                                            ))
                                        })
                                })
                                .collect::<Result<Vec<_>>>())
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
        let key = scope.as_str().to_owned();
        self.run("initialize_planned", move |client, sql| {
            let (key, previous) = (key.clone(), previous.clone());
            Box::pin(async move {
                let tx = client.begin().await?;
                let mut statements = dialect::PgSeries { tx: &tx, sql };
                let outcome = crate::flows::continue_series::continue_series(
                    &mut statements,
                    &key,
                    &previous,
                    configured_start,
                )
                .await?;
                match outcome {
                    Ok(planned) => {
                        tx.commit().await?;
                        Ok(Ok(planned))
                    }
                    Err(e) => {
                        tx.rollback().await?;
                        Ok(Err(e))
                    }
                }
            })
        })
        .await
    }

    /// Moves the series so that its next number is at least `next`. Never
    /// moves it down.
    pub async fn advance(&mut self, scope: &ScopeKey, next: u64) -> Result<Advanced> {
        let counter = series::counter_for_next(next)?;
        let key = scope.as_str().to_owned();
        self.run("advance", move |client, sql| {
            let key = key.clone();
            Box::pin(async move {
                let moved = client
                    .query_opt(&sql.advance, &[&key, &counter.to_string()])
                    .await?;
                if moved.is_some() {
                    return Ok(Ok(Advanced::Moved { current: counter }));
                }
                Ok(read_current(client, sql, &key)
                    .await?
                    .map(|s| Advanced::Unchanged { current: s.current }))
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
        let key = scope.as_str().to_owned();
        self.run("allocate", move |client, sql| {
            let key = key.clone();
            Box::pin(async move {
                let allocate = client.prepared(&sql.allocate).await?;
                allocate_in(&**client, &allocate, &key, count).await
            })
        })
        .await
    }

    /// The series as it is now.
    pub async fn current(&mut self, scope: &ScopeKey) -> Result<SeriesState> {
        let key = scope.as_str().to_owned();
        self.run("current", move |client, sql| {
            let key = key.clone();
            Box::pin(async move { read_current(client, sql, &key).await })
        })
        .await
    }

    /// Allocates one number and records it as issued by `source`, in one
    /// transaction. As on MySQL: a try whose COMMIT lost its answer may have
    /// committed; the retry voids that number (only a row carrying this
    /// call's random mark) with [`UNANSWERED_REASON`].
    pub async fn allocate_recorded(&mut self, scope: &ScopeKey, source: &str) -> Result<u64> {
        self.recorded(scope, source, None).await
    }

    /// [`PgStore::allocate_recorded`] with a request key: a repeat with the
    /// same key returns the same number (as on MySQL).
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
        let key = scope.as_str().to_owned();
        let source = source.to_owned();
        let request_key = request_key.map(str::to_owned);
        let call = format!("call-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let committing = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u64>::new()));
        self.run("allocate_recorded", move |client, sql| {
            let (key, source, call, request_key) = (
                key.clone(),
                source.clone(),
                call.clone(),
                request_key.clone(),
            );
            let committing = committing.clone();
            Box::pin(async move {
                let allocate = client.prepared(&sql.allocate_open).await?;
                let insert = client.prepared(&sql.insert_number).await?;
                let found_by_key =
                    |row: Option<tokio_postgres::Row>, k: &str| -> Result<Option<(u64, String)>> {
                        let Some(row) = row else { return Ok(None) };
                        let number: String = row.get(0);
                        let number = number.parse::<u64>().map_err(|_| {
                            Error::Unexpected("a stored number is not a u64".into())
                        })?;
                        let status: String = row.get(1);
                        let mark: Option<String> = row.get(2);
                        crate::payment::repeat_of_request(&key, k, number, &status)
                            .map(|n| Some((n, mark.unwrap_or_default())))
                    };
                let tx = client.begin().await?;
                if let Some(k) = &request_key {
                    let row = tx.query_opt(&sql.find_by_request, &[&key, k]).await?;
                    match found_by_key(row, k) {
                        Ok(Some((number, mark))) => {
                            tx.commit().await?;
                            return confirm(client, sql, &key, number, &mark).await;
                        }
                        Ok(None) => {}
                        Err(e) => return Ok(Err(e)),
                    }
                } else {
                    let unanswered = committing.lock().expect("not poisoned").clone();
                    for number in unanswered {
                        tx.execute(
                            &sql.void_unanswered,
                            &[&UNANSWERED_REASON, &key, &number.to_string(), &call],
                        )
                        .await?;
                    }
                }
                let number = match crate::flows::numbering::allocate_open(
                    &mut dialect::PgNumbering {
                        tx: &tx,
                        sql,
                        allocate: &allocate,
                        insert: &insert,
                    },
                    &key,
                    1,
                )
                .await?
                {
                    Ok(n) => n,
                    Err(e) => return Ok(Err(e)),
                };
                let none: Option<&str> = None;
                let inserted = match &request_key {
                    None => {
                        tx.execute(
                            &insert,
                            &[
                                &key,
                                &number.to_string(),
                                &NumberStatus::Unconfirmed.as_str(),
                                &source,
                                &none,
                                &none,
                                &call,
                            ],
                        )
                        .await
                    }
                    Some(k) => {
                        tx.execute(
                            &sql.insert_keyed,
                            &[&key, &number.to_string(), &source, &call, k],
                        )
                        .await
                    }
                };
                if let Err(e) = inserted {
                    let duplicate = duplicate_or(e, &key, number);
                    drop(tx);
                    // The same key at the same moment: the other call
                    // committed first; this one rolled back and reads it.
                    if let (Ok(Err(Error::DuplicateNumber { .. })), Some(k)) =
                        (&duplicate, &request_key)
                    {
                        let row = client.query_opt(&sql.find_by_request, &[&key, k]).await?;
                        match found_by_key(row, k) {
                            Ok(Some((number, mark))) => {
                                return confirm(client, sql, &key, number, &mark).await
                            }
                            Ok(None) => {}
                            Err(e) => return Ok(Err(e)),
                        }
                    }
                    return duplicate;
                }
                committing.lock().expect("not poisoned").push(number);
                tx.commit().await?;
                confirm(client, sql, &key, number, &call).await
            })
        })
        .await
    }

    /// Records a payment and gives it a number, exactly once per (gateway,
    /// transaction id): in one transaction, the payment row (`ON CONFLICT DO
    /// NOTHING`), the number, its registry row as reserved. A payment seen
    /// before (one after another, or at the same moment: the second waits
    /// for the first's commit on the unique index) gets its first number.
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

    /// [`PgStore::record_payment`], with the period (the site's local year
    /// and month when the payment arrived) recorded with the payment: every
    /// later step takes year and month from this one instant.
    pub async fn record_payment_in(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Option<crate::format::Period>,
    ) -> Result<PaymentRecord> {
        crate::payment::check_payment_values(amount, currency)?;
        let stored_period = period.map(|p| p.to_string());
        let key = scope.as_str().to_owned();
        let (gateway, txn) = (
            payment.gateway().to_owned(),
            payment.transaction_id().to_owned(),
        );
        let (amount, currency) = (amount.map(str::to_owned), currency.map(str::to_owned));
        self.run("record_payment", move |client, sql| {
            let (key, gateway, txn, amount, currency, stored_period) = (
                key.clone(),
                gateway.clone(),
                txn.clone(),
                amount.clone(),
                currency.clone(),
                stored_period.clone(),
            );
            Box::pin(async move {
                let allocate = client.prepared(&sql.allocate_open).await?;
                let insert = client.prepared(&sql.insert_number).await?;
                let insert_payment = client.prepared(&sql.insert_payment).await?;
                let tx = client.begin().await?;
                let inserted = tx
                    .query_opt(
                        &insert_payment,
                        &[&gateway, &txn, &key, &amount, &currency, &stored_period],
                    )
                    .await?;
                let Some(row) = inserted else {
                    // Delivered before: that delivery committed its number,
                    // or was held for its series (then this one numbers it).
                    drop(tx);
                    return match find_payment(client, sql, &gateway, &txn).await? {
                        Ok(Found::Numbered(r)) => Ok(Ok(r)),
                        Ok(Found::Waiting) => {
                            payment_flow::complete_held(client, sql, &gateway, &txn).await
                        }
                        Err(e) => Ok(Err(e)),
                    };
                };
                let payment_id: i64 = row.get(0);
                let statements = (&allocate, &insert);
                number_payment(tx, sql, statements, payment_id, key, &gateway, &txn, period).await
            })
        })
        .await
    }

    /// Closes the connection politely.
    pub async fn close(mut self) -> Result<()> {
        self.client = None;
        Ok(())
    }

    /// Runs one operation under the one loop of both engines
    /// (`flows::call::run`: retries, reconnects, failover, fail-back and the
    /// deadline).
    async fn run<T, F>(&mut self, operation: &'static str, mut attempt: F) -> Result<T>
    where
        F: for<'c> FnMut(&'c mut PgConn, &'c PgSql) -> PgAttempt<'c, T> + Send,
        T: Send,
    {
        crate::flows::call::run(self, operation, "", move |conn, sql, _| attempt(conn, sql)).await
    }

    /// After a try that did not answer a value: if it opened a transaction,
    /// make sure that transaction is over before the call returns — a
    /// ROLLBACK awaited within the time left (harmless when it ended), or
    /// the connection closed.
    async fn end_transaction(&mut self, until: Instant) {
        let Some(conn) = self.client.as_mut() else {
            return;
        };
        if !conn.began {
            return;
        }
        conn.began = false;
        let left = until.saturating_duration_since(Instant::now());
        let ended = matches!(
            tokio::time::timeout(left, conn.client.batch_execute("ROLLBACK")).await,
            Ok(Ok(()))
        );
        if !ended {
            log::warn!("closing a connection whose transaction was not seen to end");
            self.stats.discarded += 1;
            if let Some(conn) = self.client.take() {
                conn.discard(DISCARD_BOUND).await;
            }
        }
    }

    /// Sets the server's `statement_timeout` and `lock_timeout` to the time
    /// left when it differs from the session's by more than a tenth (so the
    /// first try of a call on a settled session costs no round trip).
    async fn set_budget(&mut self, until: Instant) -> Result<()> {
        let left = until
            .saturating_duration_since(Instant::now())
            .as_millis()
            .max(1) as u64;
        if self.session_timeout_ms.abs_diff(left) * 10 <= left {
            return Ok(());
        }
        let client = self.client.as_mut().expect("connected");
        match client
            .batch_execute(&format!(
                "SET statement_timeout = {left}; SET lock_timeout = {left}"
            ))
            .await
        {
            Ok(()) => {
                self.session_timeout_ms = left;
                Ok(())
            }
            Err(e) => {
                let f = classify(e, false);
                if f.connection_broken {
                    self.client = None;
                }
                Err(f.error)
            }
        }
    }

    /// Makes sure a checked connection is open: to the first node of the list
    /// that accepts it and passes the durability check.
    async fn connection(&mut self, until: Instant) -> Result<()> {
        if let Some(c) = &self.client {
            if !c.is_closed() {
                // Failed over a while ago: try the preferred nodes again,
                // briefly, as the MySQL store does; keep the open connection
                // if none of them answers yet.
                let left = until.saturating_duration_since(Instant::now());
                let Some((earlier, probe)) = self.writer.fail_back_probe(&self.config, left) else {
                    return Ok(());
                };
                for node in earlier {
                    if let Ok((client, driver)) = self.connect_node(node, probe).await {
                        if let Some(old) = self.client.take() {
                            old.discard(DISCARD_BOUND).await;
                        }
                        self.client = Some(PgConn {
                            client,
                            prepared: Default::default(),
                            driver,
                            began: false,
                        });
                        self.writer.connected(node);
                        log::info!("failed back to node {}", node + 1);
                        return Ok(());
                    }
                }
                self.writer.stayed();
                return Ok(());
            }
            self.client = None;
        }
        let mut last = None;
        for node in 0..self.nodes.len() {
            let left = until.saturating_duration_since(Instant::now());
            match self
                .connect_node(node, self.config.connect_timeout.min(left))
                .await
            {
                Ok((client, driver)) => {
                    self.client = Some(PgConn {
                        client,
                        prepared: Default::default(),
                        driver,
                        began: false,
                    });
                    self.writer.connected(node);
                    return Ok(());
                }
                Err(e @ Error::UnsafeSetting { .. }) | Err(e @ Error::Config(_)) => return Err(e),
                Err(e) => {
                    self.writer.skipped(node, &e);
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::Config("no database node configured".into())))
    }

    async fn connect_node(
        &mut self,
        node: usize,
        timeout: Duration,
    ) -> Result<(Client, tokio::task::JoinHandle<()>)> {
        let connecting = self.nodes[node].connect(NoTls);
        let (client, connection) = match tokio::time::timeout(timeout, connecting).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(classify(e, false).error),
            Err(_) => {
                return Err(Error::Unavailable {
                    reason: format!("connect did not finish within {} ms", timeout.as_millis()),
                    may_have_run: false,
                })
            }
        };
        let driver = tokio::spawn(async move {
            if let Err(e) = connection.await {
                log::debug!("postgres connection ended: {e}");
            }
        });
        self.stats.connects += 1;
        let budget = self.config.deadline.as_millis().max(1);
        let settings = client
            .query_one(
                "SELECT current_setting('fsync'), current_setting('synchronous_commit'), \
                 current_setting('synchronous_standby_names'), pg_backend_pid(), \
                 pg_is_in_recovery(), (SELECT system_identifier::text FROM pg_control_system())",
                &[],
            )
            .await
            .map_err(|e| classify(e, false).error)?;
        // The writer rule (docs/design.md §9): a standby is skipped like a down
        // node; every node of a list is one primary's cluster.
        if settings.get::<_, bool>(4) {
            return Err(Error::Unavailable {
                reason: format!(
                    "cannot connect: node {} is a standby (pg_is_in_recovery() = true): not a writable primary",
                    node + 1
                ),
                may_have_run: false,
            });
        }
        let system: String = settings.get(5);
        let identity = (self.nodes.len() > 1).then(|| format!("PostgreSQL system {system}"));
        self.writer.admit(node, identity, self.config.node_list)?;
        let (fsync, sync_commit, standbys): (String, String, String) =
            (settings.get(0), settings.get(1), settings.get(2));
        self.backend_pid = u32::try_from(settings.get::<_, i32>(3)).ok();
        let unsafe_allowed = self.config.durability != DurabilityPolicy::Require;
        for (setting, value) in [("fsync", &fsync), ("synchronous_commit", &sync_commit)] {
            if value.eq_ignore_ascii_case("off") {
                if !unsafe_allowed {
                    return Err(Error::UnsafeSetting {
                        setting,
                        value: value.clone(),
                    });
                }
                log::warn!("{setting} = off accepted under the unsafe override: a crash can hand numbers out twice");
                self.durability = Some(Durability::Unsafe);
            }
        }
        if !fsync.eq_ignore_ascii_case("off") && !sync_commit.eq_ignore_ascii_case("off") {
            self.durability = Some(Durability::Full);
        }
        if sync_commit.eq_ignore_ascii_case("local") && !standbys.trim().is_empty() {
            log::warn!(
                "synchronous_commit = local with synchronous standbys ({standbys}): a failover to a standby can lose acknowledged numbers"
            );
            self.durability = Some(Durability::ServerCrashOnly);
        }
        // The server's own backstop against a transaction left idle (a
        // process frozen in the middle of one): no call of ours keeps one
        // open past its deadline, so the server may end it a little later.
        let idle = budget.saturating_mul(2).max(1000);
        client
            .batch_execute(&format!(
                "SET statement_timeout = {budget}; SET lock_timeout = {budget}; \
                 SET idle_in_transaction_session_timeout = {idle}"
            ))
            .await
            .map_err(|e| classify(e, false).error)?;
        self.session_timeout_ms = budget as u64;
        Ok((client, driver))
    }
}

impl crate::flows::call::CallSite for PgStore {
    type Conn = PgConn;
    type Sql = PgSql;
    type Failure = tokio_postgres::Error;

    fn config(&self) -> &StoreConfig {
        &self.config
    }

    fn stats_mut(&mut self) -> &mut StoreStats {
        &mut self.stats
    }

    async fn before_call(&mut self, until: Instant) {
        // A transaction of an earlier call that panicked.
        self.end_transaction(until).await;
    }

    async fn ready(&mut self, until: Instant) -> Result<()> {
        self.connection(until).await?;
        self.set_budget(until).await?;
        self.client.as_mut().expect("connected above").began = false;
        Ok(())
    }

    fn parts(&mut self) -> (&mut PgConn, &PgSql) {
        (self.client.as_mut().expect("ready() connected"), &self.sql)
    }

    async fn after_try(&mut self, answered: bool, until: Instant) {
        if !answered {
            self.end_transaction(until).await;
        }
    }

    fn failed(&mut self, failure: tokio_postgres::Error) -> Error {
        let f = classify(failure, true);
        if f.connection_broken {
            self.client = None;
        }
        f.error
    }

    async fn abandon(&mut self) {
        if let Some(conn) = self.client.take() {
            conn.discard(DISCARD_BOUND).await;
        }
    }
}

/// Gives a recorded payment its number on the transaction `tx` that holds
/// its row (the one flow of both engines, `flows::numbering::number_payment`),
/// and commits; any other answer drops `tx`, which rolls it back (and the
/// store confirms the end). `statements` are the prepared allocation and
/// registry INSERT.
#[allow(clippy::too_many_arguments)]
async fn number_payment(
    tx: tokio_postgres::Transaction<'_>,
    sql: &PgSql,
    statements: (&Statement, &Statement),
    payment_id: i64,
    scope: String,
    gateway: &str,
    txn: &str,
    period: Option<crate::format::Period>,
) -> PgResult<PaymentRecord> {
    let (allocate, insert) = statements;
    let Ok(id) = u64::try_from(payment_id) else {
        return Ok(Err(Error::Unexpected(format!(
            "payment id {payment_id} is negative"
        ))));
    };
    let mut numbering = dialect::PgNumbering {
        tx: &tx,
        sql,
        allocate,
        insert,
    };
    let record =
        crate::flows::numbering::number_payment(&mut numbering, id, &scope, gateway, txn, period)
            .await?;
    if record.is_ok() {
        tx.commit().await?;
    }
    Ok(record)
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

/// Reads a series.
async fn read_current(client: &mut PgConn, sql: &PgSql, key: &str) -> PgResult<SeriesState> {
    let current = client.prepared(&sql.current).await?;
    let row = client.query_opt(&current, &[&key]).await?;
    Ok(match row {
        None => Err(Error::SeriesNotFound {
            scope: key.to_owned(),
        }),
        Some(row) => {
            let current: String = row.get(0);
            let start: Option<String> = row.get(1);
            match current.parse::<u64>() {
                Ok(current) => Ok(SeriesState {
                    scope: key.to_owned(),
                    current,
                    start: start.and_then(|s| s.parse().ok()),
                }),
                Err(_) => Err(Error::Unexpected(format!("counter {current} is not a u64"))),
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

/// Marks a call's number issued once its caller has it (see the MySQL
/// store): idempotent; a failure leaves it unconfirmed, which the books show.
async fn confirm(
    client: &mut PgConn,
    sql: &PgSql,
    key: &str,
    number: u64,
    mark: &str,
) -> PgResult<u64> {
    if let Err(e) = client
        .execute(&sql.confirm_by_call, &[&key, &number.to_string(), &mark])
        .await
    {
        log::warn!("number {number} of `{key}` stays unconfirmed: {e}");
    }
    Ok(Ok(number))
}

/// Reads a payment an earlier delivery recorded (`flows::payments`).
async fn find_payment(
    client: &mut PgConn,
    sql: &PgSql,
    gateway: &str,
    txn: &str,
) -> PgResult<Found> {
    let mut reads = dialect::PgReads {
        client: &**client,
        sql,
    };
    crate::flows::payments::find_payment(&mut reads, gateway, txn).await
}
