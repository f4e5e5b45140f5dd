//! Servers that are unsafe, paused or down: typed errors within the deadline.
//! Each test starts its own private server, since it changes the server itself.

use std::time::{Duration, Instant};

use counterfoil_core::{
    Durability, DurabilityPolicy, Error, RetryPolicy, ScopeKey, SeriesStore, StoreConfig,
};
use counterfoil_tests::mariadb::{block_on, row_lock_waits};
use counterfoil_tests::waiting::assert_kept_deadline;
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
        assert_kept_deadline(took, deadline, true, "allocate on a paused server");

        // A new connection to a paused server times out too.
        let t = Instant::now();
        let e = SeriesStore::connect(config.clone()).await.unwrap_err();
        assert!(
            matches!(e, Error::Timeout { .. } | Error::Unavailable { .. }),
            "{e:?}"
        );
        assert_kept_deadline(t.elapsed(), deadline, false, "connect to a paused server");

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
        assert_kept_deadline(t.elapsed(), deadline, false, "allocate on a stopped server");

        // Without retries, a refused connection is reported at once.
        let mut once = SeriesStore::lazy(config.clone().retry(RetryPolicy::none())).unwrap();
        let t = Instant::now();
        assert!(matches!(
            once.allocate(&key()).await,
            Err(Error::Unavailable { .. })
        ));
        // At once: well before the deadline the retries would have used.
        assert!(t.elapsed() < deadline, "{:?}", t.elapsed());

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

#[test]
fn a_lock_wait_timeout_is_retried_with_a_fresh_statement() {
    use mysql_async::prelude::Queryable;
    let server = MariaDb::start_with("lockwait", &["--innodb-lock-wait-timeout=1"]).unwrap();
    let url = server.fresh_database("lockwait").unwrap();
    block_on(async {
        let config = StoreConfig::new(&url).deadline(Duration::from_secs(10));
        let mut s = SeriesStore::connect(config).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
        // Another client holds the row lock until the server has seen two
        // lock waits (the first try's, which ends in 1205 after 1 s, and the
        // retry's): then it lets go, and the retry succeeds.
        let mut holder = mysql_async::Conn::new(mysql_async::Opts::from_url(&url).unwrap())
            .await
            .unwrap();
        holder.query_drop("BEGIN").await.unwrap();
        holder
            .query_drop("SELECT * FROM wp_invoice_sequences FOR UPDATE")
            .await
            .unwrap();
        let waits_before = row_lock_waits(&url).await;
        let release = async {
            let started = std::time::Instant::now();
            while row_lock_waits(&url).await < waits_before + 2 {
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "no retry waited"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            holder.query_drop("COMMIT").await.unwrap();
            holder
        };
        let k = key();
        let (n, holder) = tokio::join!(s.allocate(&k), release);
        assert_eq!(n.unwrap(), 1, "the retried statement got the first number");
        assert!(s.stats().retries >= 1, "{:?}", s.stats());

        // A lock held past five lock-wait timeouts, with a deadline long
        // enough for all of them: exactly the configured tries, then the
        // typed 1205 — and no number used.
        let mut patient =
            SeriesStore::connect(StoreConfig::new(&url).deadline(Duration::from_secs(30)))
                .await
                .unwrap();
        let attempts = patient.config().retry.max_attempts;
        assert_eq!(attempts, 5);
        let mut holder = holder;
        holder.query_drop("BEGIN").await.unwrap();
        holder
            .query_drop("SELECT * FROM wp_invoice_sequences FOR UPDATE")
            .await
            .unwrap();
        let before = patient.stats().retries;
        let started = std::time::Instant::now();
        let e = patient.allocate(&key()).await.unwrap_err();
        assert_eq!(e.server_code(), Some(1205), "{e:?}");
        assert_eq!(
            patient.stats().retries - before,
            u64::from(attempts - 1),
            "exactly {attempts} tries"
        );
        assert!(
            started.elapsed() >= Duration::from_secs(u64::from(attempts)),
            "each try waited out the lock"
        );
        holder.query_drop("ROLLBACK").await.unwrap();
        assert_eq!(
            patient.allocate(&key()).await.unwrap(),
            2,
            "the failed tries used no number"
        );
        holder.disconnect().await.unwrap();

        // Without retries, the 1205 reaches the caller, typed and retryable.
        let mut once = SeriesStore::connect(StoreConfig::new(&url).retry(RetryPolicy::none()))
            .await
            .unwrap();
        let mut holder = mysql_async::Conn::new(mysql_async::Opts::from_url(&url).unwrap())
            .await
            .unwrap();
        holder.query_drop("BEGIN").await.unwrap();
        holder
            .query_drop("SELECT * FROM wp_invoice_sequences FOR UPDATE")
            .await
            .unwrap();
        let e = once.allocate(&key()).await.unwrap_err();
        assert_eq!(e.server_code(), Some(1205), "{e:?}");
        assert!(e.is_retryable());
        holder.query_drop("ROLLBACK").await.unwrap();
        assert_eq!(
            once.allocate(&key()).await.unwrap(),
            3,
            "the failed try used no number"
        );
        holder.disconnect().await.unwrap();
    });
}
