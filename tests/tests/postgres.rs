//! The PostgreSQL engine against private PostgreSQL 15 servers (the harness
//! in `tests/src/postgres.rs`): the article's seed semantics, bad input,
//! overflow at u64::MAX, the durability refusal, a frozen and a stopped
//! server within the deadline, `pg_terminate_backend` of the connections,
//! and kill -9 of the server under load from six OS processes, judged by
//! the history checker. The concurrency suites (8 processes × 2,000, batches,
//! 400 short-lived processes, the payment flow from 8 processes) run on both
//! engines in `concurrency.rs` and `registry.rs`.

use std::process::Command;
use std::time::{Duration, Instant};

use counterfoil_core::{
    Advanced, DurabilityPolicy, Engine, Error, Initialized, PaymentRef, ScopeKey, Store,
    StoreConfig,
};
use counterfoil_tests::history::{check, Completion, History};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::postgres::Postgres;
use counterfoil_tests::waiting::assert_kept_deadline;
use counterfoil_tests::workers::{overlap, start_together};

fn key(s: &str) -> ScopeKey {
    ScopeKey::new(s).unwrap()
}

/// Runs a harness call (which has its own runtime) from another thread.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|t| t.spawn(f).join().unwrap())
}

async fn store(url: &str) -> Store {
    let mut s = Store::connect(StoreConfig::new(url)).await.unwrap();
    s.ensure_registry_schema().await.unwrap();
    s
}

#[test]
fn seed_semantics_batches_and_overflow() {
    let url = Postgres::shared().fresh_database("seed").unwrap();
    block_on(async {
        let mut s = store(&url).await;
        assert_eq!(s.engine(), Engine::Postgres);
        let k = key("42:2019");
        assert_eq!(
            s.initialize(&k, 2).await.unwrap(),
            Initialized::Created { next: 2 }
        );
        assert_eq!(s.allocate(&k).await.unwrap(), 2);
        assert_eq!(s.allocate(&k).await.unwrap(), 3);
        assert_eq!(
            s.initialize(&k, 2).await.unwrap(),
            Initialized::Exists { current: 3 },
            "init again reports the series and changes nothing"
        );
        assert!(matches!(
            s.initialize(&key("x:1"), 0).await,
            Err(Error::InvalidArgument { .. })
        ));
        assert_eq!(
            s.advance(&k, 200).await.unwrap(),
            Advanced::Moved { current: 199 }
        );
        assert_eq!(s.allocate(&k).await.unwrap(), 200);
        assert_eq!(
            s.advance(&k, 10).await.unwrap(),
            Advanced::Unchanged { current: 200 },
            "never lower"
        );
        assert_eq!(s.allocate_many(&k, 5).await.unwrap(), 201..=205);
        assert!(matches!(
            s.allocate_many(&k, 0).await,
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            s.allocate(&key("nobody:2019")).await,
            Err(Error::SeriesNotFound { .. })
        ));
        assert!(matches!(
            s.advance(&key("nobody:2019"), 5).await,
            Err(Error::SeriesNotFound { .. })
        ));
        // u64 range as on MySQL's BIGINT UNSIGNED.
        let top = key("top:2019");
        s.initialize(&top, u64::MAX - 1).await.unwrap();
        assert_eq!(s.allocate(&top).await.unwrap(), u64::MAX - 1);
        assert_eq!(s.allocate(&top).await.unwrap(), u64::MAX);
        assert!(matches!(
            s.allocate(&top).await,
            Err(Error::Overflow { .. })
        ));
        assert_eq!(
            s.current(&top).await.unwrap().current,
            u64::MAX,
            "unchanged"
        );
        // Hostile keys are bound, stored verbatim.
        let hostile = key("o'brien\\\"; DROP TABLE wp_invoice_sequences; --");
        s.initialize(&hostile, 1).await.unwrap();
        assert_eq!(s.allocate(&hostile).await.unwrap(), 1);
        assert_eq!(s.current(&k).await.unwrap().current, 205);
        // The registry path and the payment flow.
        assert_eq!(s.allocate_recorded(&k, "test").await.unwrap(), 206);
        let p = PaymentRef::new("stripe", "pi_1").unwrap();
        let first = s
            .record_payment(&k, &p, Some("10.00"), Some("EUR"))
            .await
            .unwrap();
        let again = s.record_payment(&k, &p, None, None).await.unwrap();
        assert!(first.created && !again.created);
        assert_eq!((first.number, again.number), (207, 207));
        // The socket form of the URL reaches the same database.
        let mut over_socket = Store::connect(StoreConfig::new(
            Postgres::shared().socket_url(&counterfoil_tests::MariaDb::database_name(&url)),
        ))
        .await
        .unwrap();
        assert_eq!(over_socket.current(&k).await.unwrap().current, 207);
        // The claim of the payment flow's second phase.
        assert_eq!(
            s.claim_number(&k, 207, "c1", Duration::from_secs(60))
                .await
                .unwrap(),
            counterfoil_core::Claim::Claimed
        );
        assert!(s.issue_claimed(&k, 207, "c1", 42, Some(&p)).await.unwrap());
    });
    assert_eq!(
        Postgres::scalar(
            &url,
            "SELECT string_agg(number::text || ' ' || status, ',' ORDER BY number) FROM wp_counterfoil_numbers"
        )
        .unwrap(),
        Some("206 issued,207 issued".into())
    );
}

#[test]
fn fsync_off_and_synchronous_commit_off_are_refused() {
    for (setting, value) in [("fsync", "off"), ("synchronous_commit", "off")] {
        let server = Postgres::start_with("unsafe", &[(setting, value)]).unwrap();
        let url = server.fresh_database("unsafe").unwrap();
        block_on(async {
            let refused = Store::connect(StoreConfig::new(url.as_str())).await;
            match refused {
                Err(e @ Error::UnsafeSetting { .. }) => {
                    assert!(e.to_string().contains(setting), "{e}");
                    assert_eq!(e.kind_name(), "unsafe_durability");
                }
                other => panic!("{setting} = off accepted: {other:?}"),
            }
            // Accepted only under the explicitly named override.
            let config = StoreConfig::new(url.as_str())
                .durability(DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0);
            let mut s = Store::connect(config).await.unwrap();
            s.ensure_schema().await.unwrap();
        });
    }
}

/// SIGSTOP of every server process: a typed timeout within the deadline,
/// then recovery; a stopped server: a typed error within the deadline, then
/// recovery after restart; `pg_terminate_backend` of the store's backend:
/// the next call reconnects and goes on.
#[test]
fn frozen_stopped_and_terminated_within_the_deadline() {
    let server = Postgres::start("outage").unwrap();
    let url = server.fresh_database("outage").unwrap();
    let deadline = Duration::from_millis(1500);
    block_on(async {
        let mut s = Store::connect(StoreConfig::new(url.as_str()).deadline(deadline))
            .await
            .unwrap();
        s.ensure_schema().await.unwrap();
        let k = key("out:2026");
        s.initialize(&k, 1).await.unwrap();
        assert_eq!(s.allocate(&k).await.unwrap(), 1);

        server.pause().unwrap();
        let t = Instant::now();
        let frozen = s.allocate(&k).await;
        let took = t.elapsed();
        server.resume().unwrap();
        assert!(matches!(frozen, Err(Error::Timeout { .. })), "{frozen:?}");
        assert_kept_deadline(took, deadline, false, "a call to a frozen server");
        let after = s.allocate(&k).await.unwrap();
        assert!(after == 2 || after == 3, "after SIGCONT: {after}");

        // Terminate the store's backend from another session.
        let killed = off_runtime(|| {
            Postgres::scalar(
                &url,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
            )
        })
        .unwrap();
        assert_eq!(killed.as_deref(), Some("1"), "one backend terminated");
        let next = s.allocate(&k).await.unwrap();
        assert_eq!(next, after + 1, "reconnected, next number");
        assert!(s.stats().connects >= 2);

        server.stop().unwrap();
        let t = Instant::now();
        let stopped = s.allocate(&k).await;
        let took = t.elapsed();
        assert!(
            matches!(
                stopped,
                Err(Error::Unavailable { .. }) | Err(Error::Timeout { .. })
            ),
            "{stopped:?}"
        );
        assert_kept_deadline(took, deadline, false, "a call to a stopped server");
        off_runtime(|| server.restart()).unwrap();
        assert_eq!(s.allocate(&k).await.unwrap(), next + 1, "recovered");
    });
}

/// kill -9 of the postmaster under load from six `history-worker`
/// processes (allocations, one try per call), twice, then restart: no
/// number twice, gaps only where a call's outcome was unknown, the counter at
/// or above every acknowledged number. The same for the payment flow: every
/// payment delivered again after the faults keeps one number.
#[test]
fn kill_nine_under_load_loses_nothing_acknowledged() {
    for mode in ["allocate", "payment"] {
        let server = Postgres::start(&format!("kill9-{mode}")).unwrap();
        let url = server.fresh_database("kill9").unwrap();
        block_on(async {
            let mut s = store(&url).await;
            s.initialize(&key("hot"), 1).await.unwrap();
        });
        let commands = (0..6)
            .map(|w| {
                let mut c = Command::new(env!("CARGO_BIN_EXE_history-worker"));
                c.args([mode, &url, "hot", "1200", &w.to_string()]);
                c
            })
            .collect();
        let running = start_together(commands).unwrap();
        let mut crashes = Vec::new();
        for _ in 0..2 {
            std::thread::sleep(Duration::from_millis(800));
            let from = counterfoil_tests::workers::now_ns();
            server.crash().unwrap();
            std::thread::sleep(Duration::from_millis(300));
            server.restart().unwrap();
            crashes.push((from, counterfoil_tests::workers::now_ns()));
        }
        std::thread::sleep(Duration::from_millis(800));
        let finished = running.stop(Duration::from_secs(120)).unwrap();
        for f in &finished {
            assert!(f.status.success(), "worker failed: {}", f.stderr);
        }
        assert!(overlap(&finished).unwrap().all_overlapped());
        let ops = History::from_outputs(finished.iter().map(|f| f.stdout.as_str()));
        for (from, to) in &crashes {
            assert!(
                ops.iter().any(|o| o.invoked <= to + 500_000_000
                    && o.completed >= *from
                    && !matches!(o.completion, Completion::Ok(..))),
                "{mode}: a crash had no effect on any call"
            );
        }
        // Read with psql, not through the store under test.
        let counter: u64 = Postgres::client_scalar(
            &url,
            "SELECT current_value FROM wp_invoice_sequences WHERE scope_key = 'hot'",
        )
        .unwrap()
        .parse()
        .unwrap();
        let verdict = check(&ops, 1, counter);
        println!(
            "PostgreSQL kill -9 ×2, {mode}: {} ok, {} fail, {} unknown; duplicates {}; gaps {}; counter {counter}",
            verdict.ok, verdict.fail, verdict.unknown, verdict.duplicates.len(), verdict.gaps
        );
        assert!(verdict.ok > 100, "{mode}: the load ran: {verdict:?}");
        if mode == "allocate" {
            assert!(verdict.holds(true), "{verdict:?}");
            continue;
        }
        // Payments: deliver again every payment that got no answer; each
        // keeps (or gets) one number; the registry has no hole.
        assert!(verdict.duplicates.is_empty(), "{verdict:?}");
        counterfoil_tests::postgres::redeliver_and_check_payments(&url, "hot", &ops);
    }
}
