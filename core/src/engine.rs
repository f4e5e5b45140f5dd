//! One store API, two engines: [`Store`] is a MySQL/MariaDB
//! [`SeriesStore`] or a PostgreSQL [`PgStore`], chosen by the URL's scheme
//! (`mysql://` or `postgres://` / `postgresql://`).
//!
//! Invariants: every operation means the same on both engines (same
//! arguments, same answers, same errors for the same cause): the numbering,
//! registry and payment operations are declared once (`flows::api`) and run
//! one flow (`flows::operations`) on either engine's dialect, so `Store`,
//! `SeriesStore` and `PgStore` are generated from one list.

use crate::error::{Error, Result};
use crate::mysql::{Durability, SeriesStore, StoreConfig, StoreStats};
use crate::pg::{is_postgres_url, PgStore};

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

/// `Store`'s operations of `flows::api`: each calls its engine's method.
macro_rules! either_engine_methods {
    ($target:ty; $(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $answer:ty
            = $operation:ident($($value:expr),* $(,)?);
    )*) => {
        impl $target {
            $(
                $(#[$doc])*
                pub async fn $name(&mut self, $($arg: $ty),*) -> Result<$answer> {
                    match self {
                        Store::MySql(s) => s.$name($($arg),*).await,
                        Store::Postgres(s) => s.$name($($arg),*).await,
                    }
                }
            )*
        }
    };
}

crate::flows::api::with_operations!(either_engine_methods! Store);

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

    /// Creates the AWB tables if missing.
    pub async fn awb_ensure_schema(&mut self) -> Result<()> {
        both!(self, s => s.awb_ensure_schema().await)
    }

    /// Closes the connection.
    pub async fn close(self) -> Result<()> {
        match self {
            Store::MySql(s) => s.close().await,
            Store::Postgres(s) => s.close().await,
        }
    }
}
