//! Servers that are unsafe, paused or down: typed errors within the deadline.
//! Each test starts its own private server, since it changes the server itself.

use std::time::{Duration, Instant};

use counterfoil_core::{
    Durability, DurabilityPolicy, Error, RetryPolicy, ScopeKey, SeriesStore, StoreConfig,
};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::MariaDb;

fn key() -> ScopeKey {
    ScopeKey::new("42:2019").unwrap()
}

#[test]
fn flush_log_at_trx_commit_0_is_refused_unless_overridden() {
    let server = MariaDb::start_with("unsafe", &["--innodb-flush-log-at-trx-commit=0"]).unwrap();
    let url = server.fresh_database("unsafe").unwrap();
    block_on(async {
        let e = SeriesStore::connect(StoreConfig::new(&url))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::UnsafeDurability { setting: 0 }), "{e:?}");
        assert!(!e.is_retryable());
        let msg = e.to_string();
        assert!(msg.contains("innodb_flush_log_at_trx_commit = 0"), "{msg}");
        assert!(msg.contains("set it to 1"), "{msg}");

        // A lazy store refuses at its first call, and writes nothing.
        let mut lazy = SeriesStore::lazy(StoreConfig::new(&url)).unwrap();
        assert!(matches!(
            lazy.initialize(&key(), 1).await,
            Err(Error::UnsafeDurability { .. })
        ));

        let config =
            StoreConfig::new(&url).durability(DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0);
        let mut s = SeriesStore::connect(config).await.unwrap();
        assert_eq!(s.durability(), Some(Durability::Unsafe));
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
        assert_eq!(s.allocate(&key()).await.unwrap(), 1);
    });
    // 2 is accepted with a warning and reported.
    server
        .exec("mysql", "SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        .unwrap();
    block_on(async {
        let s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        assert_eq!(s.durability(), Some(Durability::ServerCrashOnly));
    });
    server
        .exec("mysql", "SET GLOBAL innodb_flush_log_at_trx_commit = 1")
        .unwrap();
    block_on(async {
        let s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        assert_eq!(s.durability(), Some(Durability::Full));
    });
}

#[test]
fn a_paused_server_gives_a_timeout_within_the_deadline_then_recovers() {
    let server = MariaDb::start("paused").unwrap();
    let url = server.fresh_database("paused").unwrap();
    let deadline = Duration::from_millis(1500);
    let margin = Duration::from_millis(700);
    block_on(async {
        let config = StoreConfig::new(&url).deadline(deadline);
        let mut s = SeriesStore::connect(config.clone()).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
        assert_eq!(s.allocate(&key()).await.unwrap(), 1);

        server.pause().unwrap();
        let t = Instant::now();
        let e = s.allocate(&key()).await.unwrap_err();
        let took = t.elapsed();
        assert!(
            matches!(
                e,
                Error::Timeout {
                    operation: "allocate",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.is_retryable());
        assert!(
            took >= deadline && took < deadline + margin,
            "took {took:?}"
        );

        // A new connection to a paused server times out too.
        let t = Instant::now();
        let e = SeriesStore::connect(config.clone()).await.unwrap_err();
        assert!(
            matches!(e, Error::Timeout { .. } | Error::Unavailable { .. }),
            "{e:?}"
        );
        assert!(
            t.elapsed() < deadline + margin,
            "connect took {:?}",
            t.elapsed()
        );

        server.resume().unwrap();
        // The timed-out call may have used number 2 (a gap), never handed out twice.
        let next = s.allocate(&key()).await.unwrap();
        assert!(next == 2 || next == 3, "got {next}");
        assert_eq!(s.allocate(&key()).await.unwrap(), next + 1);
        assert_eq!(s.stats().timeouts, 1);
    });
}

#[test]
fn a_stopped_server_gives_a_typed_error_within_the_deadline() {
    let server = MariaDb::start("stopped").unwrap();
    let url = server.fresh_database("stopped").unwrap();
    let deadline = Duration::from_millis(1500);
    block_on(async {
        let config = StoreConfig::new(&url).deadline(deadline);
        let mut s = SeriesStore::connect(config.clone()).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
        assert_eq!(s.allocate(&key()).await.unwrap(), 1);
        server.stop().unwrap();

        let t = Instant::now();
        let e = s.allocate(&key()).await.unwrap_err();
        assert!(
            matches!(e, Error::Unavailable { .. } | Error::Timeout { .. }),
            "{e:?}"
        );
        assert!(
            t.elapsed() < deadline + Duration::from_millis(700),
            "{:?}",
            t.elapsed()
        );

        // Without retries, a refused connection is reported at once.
        let mut once = SeriesStore::lazy(config.clone().retry(RetryPolicy::none())).unwrap();
        let t = Instant::now();
        assert!(matches!(
            once.allocate(&key()).await,
            Err(Error::Unavailable { .. })
        ));
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );

        server.restart().unwrap();
        assert_eq!(
            s.allocate(&key()).await.unwrap(),
            2,
            "counter survived the restart"
        );
    });
}

#[test]
fn a_crash_loses_no_acknowledged_number() {
    let server = MariaDb::start("crash").unwrap();
    let url = server.fresh_database("crash").unwrap();
    let mut acknowledged = 0;
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
        for _ in 0..200 {
            acknowledged = s.allocate(&key()).await.unwrap();
        }
    });
    server.crash().unwrap();
    server.restart().unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        assert_eq!(s.current(&key()).await.unwrap().current, acknowledged);
        assert_eq!(s.allocate(&key()).await.unwrap(), acknowledged + 1);
    });
}
