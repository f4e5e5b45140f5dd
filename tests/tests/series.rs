//! The series semantics on a real MariaDB: the article's cases, the stale
//! LAST_INSERT_ID trap, adoption of the article's table, bad input, overflow;
//! and a node list's failover and fail-back, on both engines.

use counterfoil_core::{
    Advanced, Engine, Error, Initialized, NumberFormat, Period, ScopeKey, SeriesStore, Store,
    StoreConfig, MAX_BATCH,
};
use counterfoil_tests::engines::{exec, fresh_database};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::postgres::Postgres;
use counterfoil_tests::MariaDb;
use mysql_async::prelude::Queryable;

fn fresh(label: &str) -> String {
    MariaDb::shared().fresh_database(label).unwrap()
}

async fn store(url: &str) -> SeriesStore {
    let mut s = SeriesStore::connect(StoreConfig::new(url)).await.unwrap();
    s.ensure_schema().await.unwrap();
    s
}

fn count_rows(url: &str) -> u64 {
    MariaDb::scalar(url, "SELECT COUNT(*) FROM wp_invoice_sequences")
        .unwrap()
        .unwrap()
        .parse()
        .unwrap()
}

fn key(s: &str) -> ScopeKey {
    ScopeKey::new(s).unwrap()
}

#[test]
fn the_articles_semantics() {
    let url = fresh("article");
    block_on(async {
        let mut s = store(&url).await;
        let scope = ScopeKey::for_user_year(42, 2019).unwrap();
        assert_eq!(
            s.initialize(&scope, 2).await.unwrap(),
            Initialized::Created { next: 2 }
        );
        let f = NumberFormat::default();
        let p = Period::new(2019, 1).unwrap();
        let a = s.allocate(&scope).await.unwrap();
        let b = s.allocate(&scope).await.unwrap();
        assert_eq!((a, b), (2, 3));
        assert_eq!(f.render(a, p), "2019-0002");
        assert_eq!(f.render(b, p), "2019-0003");

        // Initialize again: "exists", counter unchanged.
        assert_eq!(
            s.initialize(&scope, 2).await.unwrap(),
            Initialized::Exists { current: 3 }
        );
        assert_eq!(
            s.initialize(&scope, 500).await.unwrap(),
            Initialized::Exists { current: 3 }
        );
        assert_eq!(s.current(&scope).await.unwrap().current, 3);

        // Start 0: invalid argument, nothing written.
        let other = key("42:2020");
        let e = s.initialize(&other, 0).await.unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { name: "start", .. }),
            "{e:?}"
        );
        assert!(matches!(
            s.current(&other).await,
            Err(Error::SeriesNotFound { .. })
        ));

        // GREATEST(current_value, 199): the next number is 200.
        assert_eq!(
            s.advance(&scope, 200).await.unwrap(),
            Advanced::Moved { current: 199 }
        );
        assert_eq!(s.allocate(&scope).await.unwrap(), 200);
        // Advancing to 50 afterwards changes nothing.
        assert_eq!(
            s.advance(&scope, 50).await.unwrap(),
            Advanced::Unchanged { current: 200 }
        );
        assert_eq!(
            s.advance(&scope, 201).await.unwrap(),
            Advanced::Unchanged { current: 200 }
        );
        assert_eq!(s.allocate(&scope).await.unwrap(), 201);
        let state = s.current(&scope).await.unwrap();
        assert_eq!(
            (state.current, state.start, state.next()),
            (201, Some(2), Some(202))
        );
    });
    assert_eq!(count_rows(&url), 1);
}

#[test]
fn unknown_scope_is_an_error_even_after_a_successful_allocation() {
    let url = fresh("stale");
    block_on(async {
        let mut s = store(&url).await;
        let known = key("7:2024");
        s.initialize(&known, 1000).await.unwrap();
        assert_eq!(s.allocate(&known).await.unwrap(), 1000);
        // Same connection: LAST_INSERT_ID() still holds 1000 here.
        let e = s.allocate(&key("7:2025")).await.unwrap_err();
        assert!(
            matches!(&e, Error::SeriesNotFound { scope } if scope == "7:2025"),
            "{e:?}"
        );
        assert!(!e.is_retryable());
        assert!(matches!(
            s.allocate_many(&key("nope"), 5).await,
            Err(Error::SeriesNotFound { .. })
        ));
        assert!(matches!(
            s.advance(&key("nope"), 5).await,
            Err(Error::SeriesNotFound { .. })
        ));
        assert_eq!(s.allocate(&known).await.unwrap(), 1001);
        assert_eq!(s.stats().connects, 1, "all on one connection");

        // The trap is real: the naive read-back returns the stale number.
        let mut raw = mysql_async::Conn::new(mysql_async::Opts::from_url(&url).unwrap())
            .await
            .unwrap();
        let sql = s.sql().allocate.clone();
        raw.exec_drop(&sql, (1u64, "7:2024")).await.unwrap();
        raw.exec_drop(&sql, (1u64, "7:2025")).await.unwrap();
        assert_eq!(raw.affected_rows(), 0);
        let stale: u64 = raw
            .query_first("SELECT LAST_INSERT_ID()")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stale, 1002, "the naive read-back hands out a stale number");
        raw.disconnect().await.unwrap();
    });
}

#[test]
fn batches_are_contiguous_and_bounded() {
    let url = fresh("batch");
    block_on(async {
        let mut s = store(&url).await;
        let k = key("batch");
        s.initialize(&k, 1).await.unwrap();
        assert_eq!(s.allocate_many(&k, 10).await.unwrap(), 1..=10);
        assert_eq!(s.allocate(&k).await.unwrap(), 11);
        assert_eq!(s.allocate_many(&k, 1).await.unwrap(), 12..=12);
        for bad in [0, MAX_BATCH + 1, u64::MAX] {
            let e = s.allocate_many(&k, bad).await.unwrap_err();
            assert!(
                matches!(e, Error::InvalidArgument { name: "count", .. }),
                "{e:?}"
            );
        }
        assert_eq!(
            s.allocate_many(&k, MAX_BATCH).await.unwrap(),
            13..=(12 + MAX_BATCH)
        );
        assert_eq!(s.current(&k).await.unwrap().current, 12 + MAX_BATCH);
    });
}

#[test]
fn overflow_at_the_top_of_u64_changes_nothing() {
    let url = fresh("overflow");
    block_on(async {
        let mut s = store(&url).await;
        let k = key("top");
        s.initialize(&k, 1).await.unwrap();
        assert_eq!(
            s.advance(&k, u64::MAX).await.unwrap(),
            Advanced::Moved {
                current: u64::MAX - 1
            }
        );
        let e = s.allocate_many(&k, 2).await.unwrap_err();
        assert!(matches!(e, Error::Overflow { requested: 2, .. }), "{e:?}");
        assert_eq!(s.current(&k).await.unwrap().current, u64::MAX - 1);
        assert_eq!(s.allocate(&k).await.unwrap(), u64::MAX);
        let e = s.allocate(&k).await.unwrap_err();
        assert!(matches!(e, Error::Overflow { requested: 1, .. }), "{e:?}");
        assert!(e.to_string().contains("left unchanged"));
        let state = s.current(&k).await.unwrap();
        assert_eq!((state.current, state.next()), (u64::MAX, None));
        // A counter set to u64::MAX directly (an adopted site) behaves the same.
        s.initialize(&key("direct"), 1).await.unwrap();
    });
    MariaDb::shared()
        .exec(
            &MariaDb::database_name(&url),
            "UPDATE wp_invoice_sequences SET current_value = 18446744073709551615 WHERE scope_key = 'direct'",
        )
        .unwrap();
    block_on(async {
        let mut s = store(&url).await;
        assert!(matches!(
            s.allocate(&key("direct")).await,
            Err(Error::Overflow { .. })
        ));
        assert_eq!(s.current(&key("direct")).await.unwrap().current, u64::MAX);
    });
}

#[test]
fn hostile_scope_keys_are_data() {
    let url = fresh("hostile");
    let keys = [
        "a'b",
        "a\"b",
        "back\\slash",
        "x'; DROP TABLE wp_invoice_sequences; --",
        "1 OR 1=1",
        "%",
        "_",
        "ünïcødé:2019",
        "A",
        "a",
    ];
    block_on(async {
        let mut s = store(&url).await;
        for (i, k) in keys.iter().enumerate() {
            let start = 10 * (i as u64 + 1);
            assert_eq!(
                s.initialize(&key(k), start).await.unwrap(),
                Initialized::Created { next: start },
                "{k}"
            );
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(
                s.allocate(&key(k)).await.unwrap(),
                10 * (i as u64 + 1),
                "{k}"
            );
            let state = s.current(&key(k)).await.unwrap();
            assert_eq!(state.scope, *k);
        }
    });
    let stored = MariaDb::query(&url, "SELECT scope_key FROM wp_invoice_sequences").unwrap();
    let mut stored: Vec<String> = stored.into_iter().map(|r| r[0].clone().unwrap()).collect();
    let mut expected: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
    stored.sort();
    expected.sort();
    assert_eq!(
        stored, expected,
        "stored verbatim, one row each ('A' and 'a' differ)"
    );
}

#[test]
fn bad_scope_keys_never_reach_the_database() {
    for (bad, what) in [
        (String::new(), "empty"),
        ("x".repeat(192), "192 bytes"),
        ("a\nb".into(), "newline"),
        ("a\0b".into(), "NUL"),
        ("tab\t".into(), "tab"),
        (" padded".into(), "leading space"),
    ] {
        let e = ScopeKey::new(bad).unwrap_err();
        let e = Error::from(e);
        assert!(e.is_invalid_input(), "{what}: {e}");
    }
}

#[test]
fn adopts_the_articles_table_with_its_data() {
    let url = fresh("adopt");
    let db = MariaDb::database_name(&url);
    MariaDb::shared()
        .exec(
            &db,
            "CREATE TABLE wp_invoice_sequences (
                scope_key VARCHAR(191) NOT NULL,
                current_value BIGINT UNSIGNED NOT NULL,
                PRIMARY KEY (scope_key)
            ) ENGINE=InnoDB;
            INSERT INTO wp_invoice_sequences VALUES ('42:2019', 57), ('43:2019', 3)",
        )
        .unwrap();
    block_on(async {
        let mut s = store(&url).await;
        let k = key("42:2019");
        let state = s.current(&k).await.unwrap();
        assert_eq!((state.current, state.start), (57, None));
        assert_eq!(s.allocate(&k).await.unwrap(), 58);
        assert_eq!(
            s.initialize(&k, 1).await.unwrap(),
            Initialized::Exists { current: 58 }
        );
        // ensure_schema twice is harmless.
        s.ensure_schema().await.unwrap();
        assert_eq!(s.allocate(&key("43:2019")).await.unwrap(), 4);
    });
}

#[test]
fn table_prefix_is_honoured_and_validated() {
    let url = fresh("prefix");
    block_on(async {
        let config = StoreConfig::new(&url).table_prefix("shop2_").unwrap();
        let mut s = SeriesStore::connect(config).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key("k"), 5).await.unwrap();
        assert_eq!(s.allocate(&key("k")).await.unwrap(), 5);
    });
    assert_eq!(
        MariaDb::scalar(&url, "SELECT current_value FROM shop2_invoice_sequences").unwrap(),
        Some("5".into())
    );
    let e = StoreConfig::new(&url).table_prefix("wp`; --").unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                name: "table_prefix",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn a_killed_connection_is_replaced_and_no_number_repeats() {
    let url = fresh("killed");
    block_on(async {
        let mut s = store(&url).await;
        let k = key("k");
        s.initialize(&k, 1).await.unwrap();
        assert_eq!(s.allocate(&k).await.unwrap(), 1);
        let id = s.connection_id().unwrap();
        let mut admin = mysql_async::Conn::new(mysql_async::Opts::from_url(&url).unwrap())
            .await
            .unwrap();
        admin.query_drop(format!("KILL {id}")).await.unwrap();
        admin.disconnect().await.unwrap();
        assert_eq!(s.allocate(&k).await.unwrap(), 2);
        assert_eq!(s.stats().connects, 2);
        assert_ne!(s.connection_id(), Some(id));
    });
}

/// A node that refuses connections for a reason of its own (here a user's
/// connection limit: MySQL's error 1226, PostgreSQL's 53300; too many
/// connections and a blocked host are alike) is skipped for the next node of
/// the list, and the store comes back to it once it answers again and the
/// fail-back time has passed — on both engines, through the one `Store`. On
/// MySQL/MariaDB, wrong credentials are a configuration error at once, on
/// every node, retried nowhere (the PostgreSQL harness trusts every login).
#[test]
fn a_node_refusing_connections_fails_over_and_back_mariadb() {
    fails_over_and_back(Engine::MySql);
}

#[test]
fn a_node_refusing_connections_fails_over_and_back_postgres() {
    fails_over_and_back(Engine::Postgres);
}

fn fails_over_and_back(engine: Engine) {
    let url = fresh_database(engine, "node_refusal");
    // A user allowed one connection, on the same server (so one cluster).
    let limited = match engine {
        Engine::MySql => {
            let db = MariaDb::database_name(&url);
            exec(
                &url,
                &format!(
                    "CREATE USER 'limited_{db}'@'%' IDENTIFIED BY 'lim' WITH MAX_USER_CONNECTIONS 1;
                     GRANT ALL PRIVILEGES ON *.* TO 'limited_{db}'@'%'"
                ),
            );
            let port = MariaDb::shared().port();
            format!("mysql://limited_{db}:lim@127.0.0.1:{port}/{db}")
        }
        Engine::Postgres => {
            let db = url.rsplit('/').next().unwrap().to_owned();
            exec(
                &url,
                &format!(
                    "CREATE ROLE limited_{db} LOGIN PASSWORD 'lim' CONNECTION LIMIT 1;
                     GRANT ALL ON SCHEMA public TO limited_{db};
                     ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO limited_{db}"
                ),
            );
            let port = Postgres::shared().port();
            format!("postgres://limited_{db}:lim@127.0.0.1:{port}/{db}")
        }
    };
    block_on(async {
        // The limited user's one connection is taken.
        let held = Held::take(engine, &limited).await;
        // MySQL's two users of one server are not a cluster by its rule (no
        // cluster identity): the override says so. PostgreSQL's list is one
        // system, allowed as it is.
        let window = std::time::Duration::from_secs(1);
        let mut config = StoreConfig::new(format!("{limited},{url}")).fail_back_after(window);
        if engine == Engine::MySql {
            config =
                config.node_list(counterfoil_core::NodeListPolicy::UnsafeAllowIndependentServers);
        }
        // The move to the second node happens from here on (at connect).
        let moved = std::time::Instant::now();
        let mut s = Store::connect(config).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key("n:2026"), 1).await.unwrap();
        assert_eq!(s.allocate(&key("n:2026")).await.unwrap(), 1);
        assert_eq!(s.node(), Some(1), "written through the second node");
        // Not before the fail-back time, even with the first node back, and
        // after it back to the first node, the series continuing: calls
        // until it fails back (bounded), each judged by when it began.
        held.release().await;
        let mut n = 2;
        let back_at = loop {
            assert!(moved.elapsed().as_secs() < 60, "never failed back");
            let began = moved.elapsed();
            assert_eq!(s.allocate(&key("n:2026")).await.unwrap(), n, "one series");
            n += 1;
            if s.node() == Some(0) {
                break began;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        println!(
            "{engine:?}: {} call(s) on the second node, failed back after {back_at:?}",
            n - 2
        );
        assert!(
            back_at >= window,
            "failed back after {back_at:?}, within {window:?}"
        );
        if engine == Engine::MySql {
            // A wrong password on the first node: Config, no failover, no retry.
            let db = MariaDb::database_name(&url);
            let port = MariaDb::shared().port();
            let wrong = format!("mysql://cf:not-the-password@127.0.0.1:{port}/{db},{url}");
            let e = Store::connect(StoreConfig::new(wrong)).await.unwrap_err();
            assert!(matches!(e, Error::Config(_)), "{e:?}");
            assert!(e.to_string().contains("1045"), "{e}");
        }
    });
}

/// A connection held open, to use up a user's only one.
enum Held {
    MySql(mysql_async::Conn),
    Postgres(tokio_postgres::Client, tokio::task::JoinHandle<()>),
}

impl Held {
    async fn take(engine: Engine, url: &str) -> Self {
        match engine {
            Engine::MySql => Held::MySql(
                mysql_async::Conn::new(mysql_async::Opts::from_url(url).unwrap())
                    .await
                    .unwrap(),
            ),
            Engine::Postgres => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                let task = tokio::spawn(async move {
                    let _ = conn.await;
                });
                Held::Postgres(client, task)
            }
        }
    }

    async fn release(self) {
        match self {
            Held::MySql(conn) => conn.disconnect().await.unwrap(),
            Held::Postgres(client, task) => {
                drop(client);
                let _ = task.await;
            }
        }
    }
}
