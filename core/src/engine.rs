//! One store API, two engines: [`Store`] is a MySQL/MariaDB
//! [`SeriesStore`] or a PostgreSQL [`PgStore`], chosen by the URL's scheme
//! (`mysql://` or `postgres://` / `postgresql://`).
//!
//! Invariants: every operation means the same on both engines (same
//! arguments, same answers, same errors for the same cause).

use std::ops::RangeInclusive;
use std::time::Duration;

use crate::awb::{Awb, AwbState};
use crate::error::{Error, Result};
use crate::format::Period;
use crate::payment::{Claim, Held, PaymentRecord, PaymentRef};
use crate::pg::{is_postgres_url, PgStore};
use crate::scope::ScopeKey;
use crate::series::{Advanced, Initialized, SeriesState};
use crate::series_life::{MissingSeries, PlannedSeries};
use crate::store::{
    AwbStock, AwbTransition, Durability, PoolReport, SeriesStore, StoreConfig, StoreStats,
};

/// Which engine a store talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// MySQL or MariaDB (Galera included).
    MySql,
    /// PostgreSQL.
    Postgres,
}

impl Engine {
    /// The engine a URL (or the first of a comma-separated node list) names.
    pub fn of_url(url: &str) -> Engine {
        if is_postgres_url(url) {
            Engine::Postgres
        } else {
            Engine::MySql
        }
    }

    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Engine::MySql => "MySQL/MariaDB",
            Engine::Postgres => "PostgreSQL",
        }
    }
}

/// A series store on either engine.
#[derive(Debug)]
pub enum Store {
    /// MySQL/MariaDB.
    MySql(Box<SeriesStore>),
    /// PostgreSQL.
    Postgres(Box<PgStore>),
}

macro_rules! both {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Store::MySql($s) => $e,
            Store::Postgres($s) => $e,
        }
    };
}

impl Store {
    /// Builds a store for the URL's engine and opens its connection.
    pub async fn connect(config: StoreConfig) -> Result<Self> {
        let mut store = Self::lazy(config)?;
        store.ping().await?;
        Ok(store)
    }

    /// Builds a store for the URL's engine without connecting. Every node of
    /// a list must name the same engine.
    pub fn lazy(config: StoreConfig) -> Result<Self> {
        let engines: Vec<Engine> = config
            .node_urls()
            .iter()
            .map(|u| Engine::of_url(u))
            .collect();
        if engines.windows(2).any(|w| w[0] != w[1]) {
            return Err(Error::Config(
                "the node list mixes MySQL and PostgreSQL URLs".into(),
            ));
        }
        Ok(match engines.first().copied().unwrap_or(Engine::MySql) {
            Engine::MySql => Store::MySql(Box::new(SeriesStore::lazy(config)?)),
            Engine::Postgres => Store::Postgres(Box::new(PgStore::lazy(config)?)),
        })
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        match self {
            Store::MySql(_) => Engine::MySql,
            Store::Postgres(_) => Engine::Postgres,
        }
    }

    /// The settings this store was built with.
    pub fn config(&self) -> &StoreConfig {
        both!(self, s => s.config())
    }

    /// The durability of the server last connected to.
    pub fn durability(&self) -> Option<Durability> {
        both!(self, s => s.durability())
    }

    /// What the store has done so far.
    pub fn stats(&self) -> StoreStats {
        both!(self, s => s.stats())
    }

    /// Why the last node passed over (down, not ready, read-only, a
    /// standby) was skipped, and how many times one was.
    pub fn skipped_nodes(&self) -> (u64, Option<&str>) {
        both!(self, s => s.skipped_nodes())
    }

    /// Which node of the list the open connection goes to.
    pub fn node(&self) -> Option<usize> {
        both!(self, s => s.node())
    }

    /// The server's id of the open connection: `CONNECTION_ID()` on MySQL
    /// (for `KILL`), `pg_backend_pid()` on PostgreSQL (for
    /// `pg_terminate_backend`).
    pub fn connection_id(&self) -> Option<u32> {
        match self {
            Store::MySql(s) => s.connection_id(),
            Store::Postgres(s) => s.backend_pid(),
        }
    }

    /// Opens the connection if needed and checks that it answers.
    pub async fn ping(&mut self) -> Result<()> {
        both!(self, s => s.ping().await)
    }

    /// Creates the sequences table if missing.
    pub async fn ensure_schema(&mut self) -> Result<()> {
        both!(self, s => s.ensure_schema().await)
    }

    /// Creates the registry and payments tables if missing.
    pub async fn ensure_registry_schema(&mut self) -> Result<()> {
        both!(self, s => s.ensure_registry_schema().await)
    }

    /// Creates a series whose first number is `start`; an existing one is
    /// reported, never reset.
    pub async fn initialize(&mut self, scope: &ScopeKey, start: u64) -> Result<Initialized> {
        both!(self, s => s.initialize(scope, start).await)
    }

    /// Creates a series under a plan (docs/design.md §7).
    pub async fn initialize_planned(
        &mut self,
        scope: &ScopeKey,
        plan: MissingSeries,
        configured_start: u64,
    ) -> Result<PlannedSeries> {
        both!(self, s => s.initialize_planned(scope, plan, configured_start).await)
    }

    /// Moves a series up so that its next number is at least `next`.
    pub async fn advance(&mut self, scope: &ScopeKey, next: u64) -> Result<Advanced> {
        both!(self, s => s.advance(scope, next).await)
    }

    /// Hands out the next number.
    pub async fn allocate(&mut self, scope: &ScopeKey) -> Result<u64> {
        both!(self, s => s.allocate(scope).await)
    }

    /// Hands out `count` contiguous numbers.
    pub async fn allocate_many(
        &mut self,
        scope: &ScopeKey,
        count: u64,
    ) -> Result<RangeInclusive<u64>> {
        both!(self, s => s.allocate_many(scope, count).await)
    }

    /// Allocates one number and records it as issued by `source`.
    pub async fn allocate_recorded(&mut self, scope: &ScopeKey, source: &str) -> Result<u64> {
        both!(self, s => s.allocate_recorded(scope, source).await)
    }

    /// A recorded allocation with a request key: a repeat with the same key
    /// in the same series returns the same number.
    pub async fn allocate_recorded_keyed(
        &mut self,
        scope: &ScopeKey,
        source: &str,
        request_key: &str,
    ) -> Result<u64> {
        both!(self, s => s.allocate_recorded_keyed(scope, source, request_key).await)
    }

    /// Records a payment and gives it a number, once per payment.
    pub async fn record_payment(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
    ) -> Result<PaymentRecord> {
        both!(self, s => s.record_payment(scope, payment, amount, currency).await)
    }

    /// Records a payment with the period it arrived in (the site's local
    /// year and month): every later step takes year and month from it.
    pub async fn record_payment_in(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Option<Period>,
    ) -> Result<PaymentRecord> {
        both!(self, s => s.record_payment_in(scope, payment, amount, currency, period).await)
    }

    /// Records a payment held without a number until its series exists.
    pub async fn hold_payment(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Period,
    ) -> Result<Held> {
        both!(self, s => s.hold_payment(scope, payment, amount, currency, period).await)
    }

    /// Claims a reserved number to create its invoice.
    pub async fn claim_number(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        stale_after: Duration,
    ) -> Result<Claim> {
        both!(self, s => s.claim_number(scope, number, claim, stale_after).await)
    }

    /// Marks a claimed number issued with its invoice.
    pub async fn issue_claimed(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        post_id: u64,
        payment: Option<&PaymentRef>,
    ) -> Result<bool> {
        both!(self, s => s.issue_claimed(scope, number, claim, post_id, payment).await)
    }

    /// Gives a claim back.
    pub async fn release_claim(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
    ) -> Result<bool> {
        both!(self, s => s.release_claim(scope, number, claim).await)
    }

    /// Creates the AWB tables if missing.
    pub async fn awb_ensure_schema(&mut self) -> Result<()> {
        both!(self, s => s.awb_ensure_schema().await)
    }

    /// Imports a block of AWB numbers into a pool, whole or not at all.
    pub async fn awb_import_block(
        &mut self,
        pool: &str,
        first: &str,
        last: &str,
        valid_to: Option<&str>,
    ) -> Result<usize> {
        both!(self, s => s.awb_import_block(pool, first, last, valid_to).await)
    }

    /// Assigns the lowest ready serial of `pool` to `shipment`.
    pub async fn awb_issue_next(&mut self, pool: &str, shipment: &str) -> Result<Awb> {
        both!(self, s => s.awb_issue_next(pool, shipment).await)
    }

    /// Moves a number through the transition table.
    #[allow(clippy::too_many_arguments)]
    pub async fn awb_transition(
        &mut self,
        number: &str,
        to: AwbState,
        shipment: Option<&str>,
        reason: Option<&str>,
        pool: Option<&str>,
        expect_shipment: Option<&str>,
    ) -> Result<AwbTransition> {
        both!(self, s => s.awb_transition(number, to, shipment, reason, pool, expect_shipment).await)
    }

    /// Freezes or unfreezes a number.
    pub async fn awb_freeze(&mut self, number: &str, frozen: bool) -> Result<()> {
        both!(self, s => s.awb_freeze(number, frozen).await)
    }

    /// A stock number as stored.
    pub async fn awb_status(&mut self, number: &str) -> Result<AwbStock> {
        both!(self, s => s.awb_status(number).await)
    }

    /// Counts of a pool.
    pub async fn awb_report(&mut self, pool: &str) -> Result<PoolReport> {
        both!(self, s => s.awb_report(pool).await)
    }

    /// The series as it is now.
    pub async fn current(&mut self, scope: &ScopeKey) -> Result<SeriesState> {
        both!(self, s => s.current(scope).await)
    }

    /// Closes the connection.
    pub async fn close(self) -> Result<()> {
        match self {
            Store::MySql(s) => s.close().await,
            Store::Postgres(s) => s.close().await,
        }
    }
}
