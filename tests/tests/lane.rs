//! The blocking allocation lane (the PHP extension's allocation path) under
//! the store's rules: the same counter and answers as the async store, the
//! durability check, a killed connection replaced without reusing a number,
//! a paused or stopped server reported within the deadline, and a lock wait
//! retried with a fresh statement. Faults change the server itself, so those
//! tests start their own private server.

use std::time::{Duration, Instant};

use counterfoil_core::{
    AllocationLane, Durability, DurabilityPolicy, Error, NodeListPolicy, RetryPolicy, ScopeKey,
    SeriesStore, StoreConfig,
};
use counterfoil_tests::mariadb::{block_on, row_lock_waits};
use counterfoil_tests::waiting::assert_kept_deadline;
use counterfoil_tests::MariaDb;

fn key() -> ScopeKey {
    ScopeKey::new("42:2019").unwrap()
}

/// A store with the series `42:2019` starting at `start`.
fn series(url: &str, start: u64) -> SeriesStore {
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(url)).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), start).await.unwrap();
        s
    })
}

/// Voluntary context switches of the calling thread so far.
#[allow(unsafe_code)]
fn voluntary_switches() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(rc, 0);
    usage.ru_nvcsw
}

/// A number costs the caller one sleep while the server works, not two: a
/// thread blocked in `recv()` on a unix socket is also woken when the server
/// reads the request, and sleeps again (found costing about 10 µs of CPU per
/// number; the lane now waits in `poll()`, which only data wakes).
#[test]
fn the_lane_sleeps_once_per_number_over_the_socket_and_tcp() {
    let server = MariaDb::shared();
    let tcp = server.fresh_database("lane_sleeps").unwrap();
    let socket = server.socket_url(&MariaDb::database_name(&tcp));
    let _store = series(&tcp, 1);
    let mut expected = 1;
    for url in [socket, tcp] {
        let mut lane = AllocationLane::new(StoreConfig::new(&url)).unwrap();
        assert_eq!(lane.allocate(&key()).unwrap(), expected, "{url}");
        expected += 1;
        const CALLS: i64 = 300;
        let before = voluntary_switches();
        for _ in 0..CALLS {
            assert_eq!(lane.allocate(&key()).unwrap(), expected);
            expected += 1;
        }
        let switches = voluntary_switches() - before;
        assert!(
            switches <= CALLS * 3 / 2,
            "{switches} voluntary context switches for {CALLS} numbers over {url}"
        );
        assert_eq!(lane.stats().connects, 1);
    }
}

#[test]
fn the_lane_and_the_store_hand_out_one_counter_with_the_same_answers() {
    let url = MariaDb::shared().fresh_database("lane_same").unwrap();
    let mut store = series(&url, 10);
    let mut lane = AllocationLane::new(StoreConfig::new(&url)).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 10);
    assert_eq!(block_on(store.allocate(&key())).unwrap(), 11);
    assert_eq!(lane.allocate_many(&key(), 5).unwrap(), 12..=16);
    assert_eq!(lane.allocate(&key()).unwrap(), 17);
    assert_eq!(block_on(store.current(&key())).unwrap().current, 17);
    assert_eq!(lane.durability(), Some(Durability::Full));
    assert_eq!(lane.stats().connects, 1);
    assert!(lane.connection_id().is_some());

    // A missing series is an error, never a number (the OK packet of zero
    // rows carries the previous statement's LAST_INSERT_ID).
    let missing = ScopeKey::new("no:such").unwrap();
    let e = lane.allocate(&missing).unwrap_err();
    assert!(matches!(e, Error::SeriesNotFound { .. }), "{e:?}");
    // A bad batch changes nothing.
    assert!(matches!(
        lane.allocate_many(&key(), 0),
        Err(Error::InvalidArgument { name: "count", .. })
    ));
    // The counter cannot pass u64::MAX: Overflow, and nothing moves.
    let top = ScopeKey::new("top:1").unwrap();
    block_on(store.initialize(&top, u64::MAX - 2)).unwrap();
    assert_eq!(
        lane.allocate_many(&top, 2).unwrap(),
        u64::MAX - 2..=u64::MAX - 1
    );
    assert!(matches!(
        lane.allocate_many(&top, 2),
        Err(Error::Overflow { requested: 2, .. })
    ));
    assert_eq!(lane.allocate(&top).unwrap(), u64::MAX);
    assert!(matches!(lane.allocate(&top), Err(Error::Overflow { .. })));
    assert_eq!(lane.stats().connects, 1, "one connection throughout");
    // A table prefix with no table: the server's error, typed, not retried.
    let mut other = AllocationLane::new(
        StoreConfig::new(&url)
            .table_prefix("nothing_")
            .unwrap()
            .retry(RetryPolicy::none()),
    )
    .unwrap();
    let e = other.allocate(&key()).unwrap_err();
    assert!(matches!(e, Error::Server { code: 1146, .. }), "{e:?}");
}

#[test]
fn a_killed_lane_connection_is_replaced_without_reusing_a_number() {
    let url = MariaDb::shared().fresh_database("lane_kill").unwrap();
    let _store = series(&url, 1);
    let mut lane = AllocationLane::new(StoreConfig::new(&url)).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 1);
    let id = lane.connection_id().unwrap();
    MariaDb::scalar(&url, &format!("KILL {id}")).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 2);
    assert_ne!(lane.connection_id(), Some(id));
    assert_eq!(lane.stats().connects, 2);
    assert_eq!(lane.stats().retries, 1);
}

#[test]
fn the_lane_refuses_flush_0_unless_overridden() {
    let server =
        MariaDb::start_with("lane_unsafe", &["--innodb-flush-log-at-trx-commit=0"]).unwrap();
    let url = server.fresh_database("lane_unsafe").unwrap();
    let unsafe_ok =
        StoreConfig::new(&url).durability(DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0);
    block_on(async {
        let mut s = SeriesStore::connect(unsafe_ok.clone()).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
    });
    let mut lane = AllocationLane::new(StoreConfig::new(&url)).unwrap();
    let e = lane.allocate(&key()).unwrap_err();
    assert!(matches!(e, Error::UnsafeDurability { setting: 0 }), "{e:?}");
    let mut lane = AllocationLane::new(unsafe_ok).unwrap();
    assert_eq!(
        lane.allocate(&key()).unwrap(),
        1,
        "nothing was taken before"
    );
    assert_eq!(lane.durability(), Some(Durability::Unsafe));
}

#[test]
fn a_paused_server_gives_a_timeout_within_the_deadline_then_recovers() {
    let server = MariaDb::start("lane_paused").unwrap();
    let url = server.fresh_database("lane_paused").unwrap();
    let _store = series(&url, 1);
    let deadline = Duration::from_millis(1500);
    let config = StoreConfig::new(&url).deadline(deadline);
    let mut lane = AllocationLane::new(config.clone()).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 1);

    server.pause().unwrap();
    let t = Instant::now();
    let e = lane.allocate(&key()).unwrap_err();
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
    assert_kept_deadline(took, deadline, true, "allocate on a paused server");
    // A new connection to a paused server gives up within the deadline too.
    let mut fresh = AllocationLane::new(config).unwrap();
    let t = Instant::now();
    let e = fresh.allocate(&key()).unwrap_err();
    assert!(
        matches!(e, Error::Timeout { .. } | Error::Unavailable { .. }),
        "{e:?}"
    );
    assert_kept_deadline(t.elapsed(), deadline, false, "connect to a paused server");

    server.resume().unwrap();
    // The timed-out call's UPDATE sat in the paused server's socket: after
    // the resume it may run (a gap: its number is never handed out), before
    // or between the two calls below — so they are increasing and at most one
    // number apart beyond that gap, never equal.
    let next = lane.allocate(&key()).unwrap();
    assert!(next == 2 || next == 3, "got {next}");
    let after = lane.allocate(&key()).unwrap();
    assert!(after > next && after <= 4, "{next} then {after}");
    assert_eq!(lane.stats().timeouts, 1);
    assert_eq!(
        lane.stats().connects,
        2,
        "the timed-out connection was closed"
    );
}

#[test]
fn a_stopped_server_gives_a_typed_error_within_the_deadline() {
    let server = MariaDb::start("lane_stopped").unwrap();
    let url = server.fresh_database("lane_stopped").unwrap();
    let _store = series(&url, 1);
    let deadline = Duration::from_millis(1500);
    let mut lane = AllocationLane::new(StoreConfig::new(&url).deadline(deadline)).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 1);
    server.stop().unwrap();

    let t = Instant::now();
    let e = lane.allocate(&key()).unwrap_err();
    assert!(
        matches!(e, Error::Unavailable { .. } | Error::Timeout { .. }),
        "{e:?}"
    );
    assert_kept_deadline(t.elapsed(), deadline, false, "allocate on a stopped server");
    // Without retries, a refused connection is reported at once.
    let mut once = AllocationLane::new(StoreConfig::new(&url).retry(RetryPolicy::none())).unwrap();
    let t = Instant::now();
    let e = once.allocate(&key()).unwrap_err();
    assert!(matches!(e, Error::Unavailable { .. }), "{e:?}");
    // At once: well before the deadline the retries would have used.
    assert!(t.elapsed() < deadline, "{:?}", t.elapsed());

    server.restart().unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 2, "the counter survived");
}

#[test]
fn a_lock_wait_timeout_is_retried_with_a_fresh_statement() {
    use mysql_async::prelude::Queryable;
    let server = MariaDb::start_with("lane_lockwait", &["--innodb-lock-wait-timeout=1"]).unwrap();
    let url = server.fresh_database("lane_lockwait").unwrap();
    let _store = series(&url, 1);
    let mut lane =
        AllocationLane::new(StoreConfig::new(&url).deadline(Duration::from_secs(10))).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 1);
    // Another client holds the row lock until the server has seen two lock
    // waits (the first try's, which ends in 1205 after 1 s, and the retry's);
    // then it lets go and the retry succeeds. The lane starts only once the
    // lock is held (the holder says so), never after a guessed pause.
    let (held, lock_is_held) = std::sync::mpsc::channel();
    let holder = std::thread::spawn({
        let url = url.clone();
        move || {
            block_on(async {
                let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(&url).unwrap())
                    .await
                    .unwrap();
                c.query_drop("BEGIN").await.unwrap();
                c.query_drop(
                    "UPDATE wp_invoice_sequences SET current_value = current_value \
                     WHERE scope_key = '42:2019'",
                )
                .await
                .unwrap();
                let before = row_lock_waits(&url).await;
                held.send(()).unwrap();
                let started = Instant::now();
                while row_lock_waits(&url).await < before + 2 {
                    assert!(
                        started.elapsed() < Duration::from_secs(60),
                        "no retry waited"
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                c.query_drop("COMMIT").await.unwrap();
            })
        }
    });
    lock_is_held.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 2);
    assert!(lane.stats().retries >= 1, "{:?}", lane.stats());
    holder.join().unwrap();
}

#[test]
fn the_lane_fails_over_to_the_next_node_and_back() {
    // Two servers, each with its own counter, so the number says which
    // node answered.
    let first = MariaDb::start("lane_node1").unwrap();
    let second = MariaDb::start("lane_node2").unwrap();
    let url1 = first.fresh_database("lane_nodes").unwrap();
    let url2 = second.fresh_database("lane_nodes").unwrap();
    let _s1 = series(&url1, 1);
    let _s2 = series(&url2, 501);
    // Independent servers: allowed only by the explicit override.
    let window = Duration::from_secs(2);
    let config = StoreConfig::new(format!("{url1},{url2}"))
        .deadline(Duration::from_secs(3))
        .fail_back_after(window)
        .node_list(NodeListPolicy::UnsafeAllowIndependentServers);
    let mut lane = AllocationLane::new(config).unwrap();
    assert_eq!(lane.allocate(&key()).unwrap(), 1);
    assert_eq!(lane.node(), Some(0));

    first.stop().unwrap();
    let moved = Instant::now();
    assert_eq!(
        lane.allocate(&key()).unwrap(),
        501,
        "the second node took over"
    );
    assert_eq!(lane.node(), Some(1));
    first.restart().unwrap();
    // Calls until the lane is back on the first node (bounded), each judged
    // by when it began, not by a guessed pause: the second node's series one
    // after another, then the first node's, never before the fail-back time
    // counted from the call that moved.
    let mut next_on_second = 502;
    let back_at = loop {
        assert!(
            moved.elapsed() < Duration::from_secs(60),
            "never failed back"
        );
        let began = moved.elapsed();
        let n = lane.allocate(&key()).unwrap();
        if lane.node() == Some(0) {
            assert_eq!(n, 2, "back on the first node, its series continuing");
            break began;
        }
        assert_eq!(n, next_on_second, "the second node's series, in order");
        next_on_second += 1;
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        back_at >= window,
        "failed back after {back_at:?}, within {window:?}"
    );
    assert_eq!(lane.allocate(&key()).unwrap(), 3);
}
