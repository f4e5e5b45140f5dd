//! The same suite on both engines: a fresh database on the engine's shared
//! private server, and one-off SQL on a URL of either engine (chosen by its
//! scheme, as `counterfoil_core::Store` chooses).

use counterfoil_core::Engine;

use crate::mariadb::MariaDb;
use crate::postgres::Postgres;

/// A fresh, empty database on the engine's shared private server; its URL.
pub fn fresh_database(engine: Engine, label: &str) -> String {
    match engine {
        Engine::MySql => MariaDb::shared().fresh_database(label),
        Engine::Postgres => Postgres::shared().fresh_database(label),
    }
    .expect("a fresh database")
}

/// The first column of the first row of `sql`, as text.
pub fn scalar(url: &str, sql: &str) -> Option<String> {
    match Engine::of_url(url) {
        Engine::MySql => MariaDb::scalar(url, sql),
        Engine::Postgres => Postgres::scalar(url, sql),
    }
    .expect("the query runs")
}

/// Runs statements on the database of `url` (on the shared server).
pub fn exec(url: &str, sql: &str) {
    let db = MariaDb::database_name(url);
    match Engine::of_url(url) {
        Engine::MySql => MariaDb::shared().exec(&db, sql),
        Engine::Postgres => Postgres::shared().exec(&db, sql),
    }
    .expect("the statements run")
}
