//! Counterfoil core: sequential business numbers that are never issued twice.
//!
//! The design in one paragraph (the whole of it: `docs/design.md`, and where
//! each rule lives: `docs/architecture.md`): a series is one row (`scope_key`,
//! `current_value`); allocation is one atomic statement,
//! `UPDATE … SET current_value = LAST_INSERT_ID(current_value + n) WHERE
//! scope_key = ?`, and the number is read from that statement's own OK packet,
//! only when exactly one row matched. Nothing is read back with a second
//! query, so an unknown series is an error, never a stale number.
//!
//! Modules:
//! - [`scope`], [`format`], [`series`], [`series_life`], [`export`], [`payment`], [`money`], [`audit`], [`awb`], [`awb_stock_rules`], [`einvoice`], [`table_prefix`], [`retry`], [`error`]: pure
//!   logic, no I/O; they build with `--no-default-features` and for
//!   `wasm32-unknown-unknown`.
//! - `mysql` (feature `mysql`, on by default): the MySQL/MariaDB dialect —
//!   its SQL text (`mysql::sql`), its statements for the shared flows, and
//!   `SeriesStore` on mysql_async and tokio, with the durability check; with
//!   `mysql-blocking`, [`AllocationLane`]: the allocation statement on a
//!   blocking connection under the same rules, for the PHP extension.
//! - `pg` (feature `postgres`, on by default): the PostgreSQL dialect
//!   (tokio-postgres, `UPDATE … RETURNING`) and `PgStore`; it builds without
//!   `mysql`.
//! - [`config`], the writer's bookkeeping and the flows (`flows/`): what both
//!   stores share — a connection's settings and patience, which node of a
//!   list writes, one call's loop, and every operation's flow, written once.
//! - `engine` (both features): `Store`, one API over both engines, chosen
//!   by the URL's scheme.
// Four audited exceptions, each `#[allow(unsafe_code)]` with its SAFETY
// note: the lane's socket timeout (mysql/lane.rs) and its poll, receive and
// send on that socket (mysql/lane_exchange.rs).
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod audit;
pub mod awb;
pub mod awb_stock_rules;
pub mod chain;
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub mod config;
pub mod credit_note;
pub mod einvoice;
pub mod error;
pub mod export;
pub mod fiscal;
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) mod flows;
pub mod format;
#[doc(hidden)]
pub mod fuzz_checks;
pub mod money;
pub mod payment;
pub mod retry;
pub mod scope;
pub mod series;
pub mod series_life;
pub mod table_prefix;
#[cfg(any(feature = "mysql", feature = "postgres"))]
pub(crate) mod writer;

#[cfg(feature = "mysql")]
pub mod mysql;

#[cfg(all(feature = "mysql", feature = "postgres"))]
pub mod engine;
#[cfg(feature = "postgres")]
pub mod pg;

pub use error::{Error, FormatError, FormatErrorKind, Result, ScopeKeyError};
pub use format::{NumberFormat, Period, DEFAULT_TEMPLATE};
pub use payment::{Claim, Held, NumberStatus, PaymentRecord, PaymentRef};
pub use retry::RetryPolicy;
pub use scope::ScopeKey;
pub use series::{Advanced, Initialized, SeriesState, MAX_BATCH};
pub use series_life::{MissingSeries, PlannedSeries};
pub use table_prefix::TablePrefix;

#[cfg(any(feature = "mysql", feature = "postgres"))]
pub use config::{
    ConfirmCommits, Durability, DurabilityPolicy, NodeListPolicy, StoreConfig, StoreStats,
};
#[cfg(feature = "mysql")]
pub use mysql::sql::{AwbSql, RegistrySql, SeriesSql};
#[cfg(feature = "mysql-blocking")]
pub use mysql::AllocationLane;
#[cfg(feature = "mysql")]
pub use mysql::SeriesStore;

#[cfg(all(feature = "mysql", feature = "postgres"))]
pub use engine::{Engine, Store};
#[cfg(feature = "postgres")]
pub use pg::PgStore;
