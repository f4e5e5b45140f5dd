//! PostgreSQL beyond one machine (issue 26): a primary with a streaming
//! standby (`Postgres::start_cluster`, `pg_basebackup -R`), named in one
//! libpq multi-host URL. A standby listed first is skipped; a primary with
//! a standby whose commits do not wait for it (asynchronous, or
//! `synchronous_commit` below `on`) is refused for a node list (unless
//! overridden), while a promoted primary alone is numbered on; no number is acknowledged that the standby has not
//! confirmed; the primary lost under load from six OS processes (a host
//! crash, and `pg_ctl stop -m immediate`) and the standby promoted: no
//! number twice, gaps only where a call's outcome was unknown, every payment
//! numbered once — judged by the history checker.

use std::process::Command;
use std::time::Duration;

use counterfoil_core::{DurabilityPolicy, Error, RetryPolicy, ScopeKey, Store, StoreConfig};
use counterfoil_tests::history::{check, Completion, History};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::postgres::Postgres;
use counterfoil_tests::workers::{overlap, start_together};

fn key(s: &str) -> ScopeKey {
    ScopeKey::new(s).unwrap()
}

/// A fresh database on the primary, and the multi-host URL naming `first`
/// then `second` (libpq's form, as a shop writes it).
fn cluster_url(primary: &Postgres, first: &Postgres, second: &Postgres, label: &str) -> String {
    let single = primary.fresh_database(label).unwrap();
    let db = single.rsplit('/').next().unwrap().to_owned();
    for node in [first, second] {
        node.wait_for_database(&db).unwrap();
    }
    format!(
        "postgres://cf:cf@127.0.0.1:{},127.0.0.1:{}/{db}?target_session_attrs=read-write",
        first.port(),
        second.port()
    )
}

async fn store(url: &str) -> Store {
    let mut s = Store::connect(StoreConfig::new(url)).await.unwrap();
    s.ensure_registry_schema().await.unwrap();
    s
}

#[test]
fn a_standby_listed_first_is_skipped() {
    let (primary, standby) = Postgres::start_cluster("first", true).unwrap();
    let url = cluster_url(&primary, &standby, &primary, "standby_first");
    block_on(async {
        let mut s = store(&url).await;
        assert_eq!(s.node(), Some(1), "the primary, second in the list, writes");
        let (skips, why) = s.skipped_nodes();
        assert!(skips >= 1, "the standby was tried and passed over");
        assert!(
            why.is_some_and(|w| w.contains("standby")),
            "the reason names the standby: {why:?}"
        );
        s.initialize(&key("42:2026"), 1).await.unwrap();
        for want in 1..=3 {
            assert_eq!(s.allocate(&key("42:2026")).await.unwrap(), want);
        }
    });
}

#[test]
fn a_primary_without_a_synchronous_standby_is_refused_for_a_node_list() {
    let (primary, standby) = Postgres::start_cluster("async", false).unwrap();
    let url = cluster_url(&primary, &primary, &standby, "async");
    block_on(async {
        match Store::connect(StoreConfig::new(url.as_str())).await {
            Err(e @ Error::UnsafeReplication { .. }) => {
                let text = e.to_string();
                assert!(text.contains("synchronous_standby_names"), "{text}");
                assert!(text.contains("failover"), "says why: {text}");
                assert_eq!(e.kind_name(), "unsafe_durability");
            }
            other => panic!("an asynchronous standby must be refused: {other:?}"),
        }
        // One node alone is not a failover list: accepted.
        let single = url.replace(&format!(",127.0.0.1:{}", standby.port()), "");
        assert!(Store::connect(StoreConfig::new(single.as_str()))
            .await
            .is_ok());
        // The explicit override accepts the list.
        let config = StoreConfig::new(url.as_str())
            .durability(DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0);
        let mut s = Store::connect(config).await.unwrap();
        s.ensure_schema().await.unwrap();
    });
    // A synchronous standby with commits acknowledged before it flushed
    // them (`remote_write`) is refused too, naming the setting.
    let (primary, standby) = Postgres::start_cluster("remote-write", true).unwrap();
    let url = cluster_url(&primary, &primary, &standby, "remote_write");
    let db = url.rsplit('/').next().unwrap().split('?').next().unwrap();
    primary
        .exec(
            "postgres",
            &format!("ALTER DATABASE {db} SET synchronous_commit = remote_write"),
        )
        .unwrap();
    block_on(async {
        match Store::connect(StoreConfig::new(url.as_str())).await {
            Err(e @ Error::UnsafeReplication { .. }) => {
                assert!(
                    e.to_string()
                        .contains("synchronous_commit = 'remote_write'"),
                    "{e}"
                );
            }
            other => panic!("remote_write must be refused: {other:?}"),
        }
    });
}

/// The standby stops confirming (frozen): a call that commits must not
/// answer a number, for the standby may never have it. Then the primary's
/// host crashes and the standby is promoted: the numbers it hands out
/// repeat none that a caller was given. The store never lets the server's
/// `statement_timeout` cut the commit's wait for the standby short (that
/// acknowledges the commit with a mere warning): the primary's statement log
/// shows `statement_timeout = 0` for the store's sessions.
#[test]
fn no_number_is_acknowledged_that_the_standby_has_not_confirmed() {
    let (primary, standby) = Postgres::start_cluster("unconfirmed", true).unwrap();
    primary.configure("log_statement", "'all'").unwrap();
    let url = cluster_url(&primary, &primary, &standby, "unconfirmed");
    let config = StoreConfig::new(url.as_str())
        .deadline(Duration::from_millis(1500))
        .retry(RetryPolicy::none());
    let mut given = Vec::new();
    block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key("hot"), 1).await.unwrap();
        for _ in 0..5 {
            given.push(s.allocate(&key("hot")).await.unwrap());
        }
    });
    standby.pause().unwrap();
    block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        for _ in 0..3 {
            match s.allocate(&key("hot")).await {
                Ok(n) => {
                    given.push(n);
                    panic!("{n} was answered while the standby confirmed nothing");
                }
                Err(e) => assert!(!e.is_invalid_input(), "{e}"),
            }
        }
    });
    let log = primary.log().unwrap();
    assert!(
        log.contains("SET statement_timeout = 0"),
        "the store's sessions on a primary with a synchronous standby have no statement_timeout"
    );
    assert!(
        !log.contains("canceling wait for synchronous replication"),
        "no commit's wait for the standby was cut short"
    );
    primary.crash_host().unwrap();
    standby.resume().unwrap();
    standby.promote().unwrap();
    block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        for _ in 0..5 {
            let n = s.allocate(&key("hot")).await.unwrap();
            assert!(
                !given.contains(&n),
                "{n} was given before the failover and again after: {given:?}"
            );
            given.push(n);
        }
    });
    assert_eq!(
        given.len(),
        10,
        "every call before the freeze and after the promotion answered: {given:?}"
    );
}

/// Six OS processes allocate (then record payments) on the multi-host URL;
/// the primary is lost — its host crashes (SIGKILL to every process), or
/// `pg_ctl stop -m immediate` — and the standby is promoted while they run.
#[test]
fn the_primary_lost_under_load_and_the_standby_promoted_loses_nothing_acknowledged() {
    for (mode, fault) in [
        ("allocate", "host crash"),
        ("allocate", "stop -m immediate"),
        ("payment", "host crash"),
        ("payment", "stop -m immediate"),
    ] {
        let (primary, standby) =
            Postgres::start_cluster(&format!("failover-{mode}"), true).unwrap();
        let url = cluster_url(&primary, &primary, &standby, "failover");
        block_on(async {
            let mut s = store(&url).await;
            s.initialize(&key("hot"), 1).await.unwrap();
        });
        let commands = (0..6)
            .map(|w| {
                let mut c = Command::new(env!("CARGO_BIN_EXE_history-worker"));
                c.args([mode, &url, "hot", "2000", &w.to_string()]);
                c
            })
            .collect();
        let running = start_together(commands).unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        let from = counterfoil_tests::workers::now_ns();
        match fault {
            "host crash" => primary.crash_host().unwrap(),
            _ => primary.stop_immediate().unwrap(),
        }
        let dead = counterfoil_tests::workers::now_ns();
        standby.promote().unwrap();
        let to = counterfoil_tests::workers::now_ns();
        std::thread::sleep(Duration::from_millis(1500));
        let finished = running.stop(Duration::from_secs(120)).unwrap();
        for f in &finished {
            assert!(f.status.success(), "worker failed: {}", f.stderr);
        }
        assert!(overlap(&finished).unwrap().all_overlapped());
        let ops = History::from_outputs(finished.iter().map(|f| f.stdout.as_str()));
        assert!(
            ops.iter().any(|o| o.invoked <= to
                && o.completed >= from
                && !matches!(o.completion, Completion::Ok(..))),
            "{mode}, {fault}: the failover had no effect on any call"
        );
        assert!(
            ops.iter()
                .any(|o| o.invoked > to && matches!(o.completion, Completion::Ok(..))),
            "{mode}, {fault}: numbering went on on the promoted standby"
        );
        let back = ops
            .iter()
            .filter(|o| o.invoked >= dead && matches!(o.completion, Completion::Ok(..)))
            .map(|o| o.completed)
            .min()
            .unwrap();
        println!(
            "PostgreSQL failover ({fault}, {mode}): the primary gone {} ms after the fault began; numbering again on the promoted standby {} ms after it was gone (the promotion, until pg_is_in_recovery() read false: {} ms)",
            (dead - from) / 1_000_000,
            (back - dead) / 1_000_000,
            (to - dead) / 1_000_000
        );
        let standby_url = url.replace(&format!("127.0.0.1:{},", primary.port()), "");
        // Read with psql, not through the store under test.
        let counter: u64 = Postgres::client_scalar(
            &standby_url,
            "SELECT current_value FROM wp_invoice_sequences WHERE scope_key = 'hot'",
        )
        .unwrap()
        .parse()
        .unwrap();
        let verdict = check(&ops, 1, counter);
        println!(
            "PostgreSQL failover ({fault}, {mode}): {} ok, {} fail, {} unknown; duplicates {}; gaps {}; counter {counter}",
            verdict.ok, verdict.fail, verdict.unknown, verdict.duplicates.len(), verdict.gaps
        );
        assert!(verdict.ok > 100, "{mode}: the load ran: {verdict:?}");
        if mode == "allocate" {
            assert!(verdict.holds(true), "{verdict:?}");
            continue;
        }
        assert!(verdict.duplicates.is_empty(), "{verdict:?}");
        // Every payment that got no answer is delivered again: each keeps
        // (or gets) one number, and the registry has no hole.
        counterfoil_tests::postgres::redeliver_and_check_payments(&standby_url, "hot", &ops);
    }
}
