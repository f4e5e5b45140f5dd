//! Faults under load, with the history checker (tests/src/history.rs):
//! `kill -9` of mariadbd and restart, SIGSTOP/SIGCONT, `KILL` of client
//! connections, lock wait timeouts, under six OS processes
//! (`history-worker`) calling the store at the same time; and `kill -9` of
//! php-fpm workers in the middle of payment callbacks. The short version runs in ./scripts/test;
//! `COUNTERFOIL_FAULTS=long` (./scripts/test --faults) runs more rounds.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use counterfoil_core::{PaymentRef, ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::history::{
    check, check_registry, client_counter, client_registry, Completion, History, Op,
};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::workers::{now_ns, overlap, start_together};
use counterfoil_tests::MariaDb;
use mysql_async::prelude::Queryable;

fn rounds() -> usize {
    if std::env::var("COUNTERFOIL_FAULTS").as_deref() == Ok("long") {
        5
    } else {
        1
    }
}

/// The workers' deadline: well above the server's lock wait timeout (1 s),
/// so a call behind the held row lock meets the lock wait's 1205 first even
/// on a loaded machine, not its own deadline.
const WORKER_DEADLINE_MS: u64 = 2500;

fn key() -> ScopeKey {
    ScopeKey::new("hot").unwrap()
}

/// One injected fault and when it was in force (ns since the epoch).
#[derive(Debug)]
struct Fault {
    kind: FaultKind,
    from: u128,
    to: u128,
    /// KILL: the client connections killed.
    killed: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum FaultKind {
    Crash,
    Pause,
    Kill,
    RowLock,
}

/// The faults, in order, each `rounds()` times: crash + restart, pause past
/// the deadline, KILL every client connection, a row lock held past
/// innodb_lock_wait_timeout. Returns each with its window.
fn inject_faults(server: &MariaDb, url: &str) -> Vec<Fault> {
    let mut faults = Vec::new();
    let mut note = |kind, from, killed| {
        faults.push(Fault {
            kind,
            from,
            to: now_ns(),
            killed,
        })
    };
    for _ in 0..rounds() {
        std::thread::sleep(Duration::from_millis(600));
        let from = now_ns();
        server.crash().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        server.restart().unwrap();
        note(FaultKind::Crash, from, 0);
        std::thread::sleep(Duration::from_millis(600));
        server.pause().unwrap();
        let from = now_ns();
        // Longer than the workers' deadline, so calls in flight run into it.
        std::thread::sleep(Duration::from_millis(WORKER_DEADLINE_MS + 1000));
        server.resume().unwrap();
        note(FaultKind::Pause, from, 0);
        std::thread::sleep(Duration::from_millis(500));
        let from = now_ns();
        let killed = block_on(async {
            let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(url).unwrap())
                .await
                .unwrap();
            let ids: Vec<u64> = c
                .query("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'cf' AND ID <> CONNECTION_ID()")
                .await
                .unwrap();
            let mut killed = 0;
            for id in &ids {
                if c.query_drop(format!("KILL {id}")).await.is_ok() {
                    killed += 1;
                }
            }
            c.disconnect().await.unwrap();
            killed
        });
        note(FaultKind::Kill, from, killed);
        std::thread::sleep(Duration::from_millis(400));
        let from = now_ns();
        block_on(async {
            let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(url).unwrap())
                .await
                .unwrap();
            c.query_drop("BEGIN").await.unwrap();
            c.query_drop("SELECT * FROM wp_invoice_sequences FOR UPDATE")
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(2000)).await;
            c.query_drop("COMMIT").await.unwrap();
            c.disconnect().await.unwrap();
        });
        note(FaultKind::RowLock, from, 0);
    }
    std::thread::sleep(Duration::from_millis(500));
    faults
}

/// Every fault had its effect on the workers' calls: a failed or unknown
/// call around each crash; a call overlapping each pause that ended in a
/// timeout; each KILL killed at least one connection per worker and failed
/// a call; each row lock made a call fail with 1205 inside its window.
fn assert_each_fault_was_felt(ops: &[Op], faults: &[Fault], workers: usize) {
    const MS: u128 = 1_000_000;
    for f in faults {
        let failed_within = |from: u128, to: u128, what: &dyn Fn(&Completion) -> bool| {
            ops.iter()
                .any(|o| o.invoked <= to && o.completed >= from && what(&o.completion))
        };
        let felt = match f.kind {
            // Calls in flight at the crash, or refused while it was down.
            FaultKind::Crash => failed_within(f.from, f.to + 500 * MS, &|c| {
                !matches!(c, Completion::Ok(..))
            }),
            // A call overlapping the freeze ran out of its deadline.
            FaultKind::Pause => failed_within(
                f.from,
                f.to,
                &|c| matches!(c, Completion::Unknown(m) if m.contains("did not finish within")),
            ),
            FaultKind::Kill => {
                assert!(
                    f.killed >= workers,
                    "KILL hit {} connections, fewer than the {workers} workers: {f:?}",
                    f.killed
                );
                failed_within(f.from, f.to + 500 * MS, &|c| {
                    !matches!(c, Completion::Ok(..))
                })
            }
            FaultKind::RowLock => failed_within(
                f.from,
                f.to,
                &|c| matches!(c, Completion::Fail(m) if m.contains("1205")),
            ),
        };
        assert!(felt, "this fault had no effect on any call: {f:?}");
    }
}

/// Six worker processes (`history-worker MODE`) released together, faults
/// injected while they run, then stopped; their histories and the faults.
fn under_faults(server: &MariaDb, url: &str, mode: &str) -> (Vec<Op>, Vec<Fault>) {
    let workers = 6;
    let commands = (0..workers)
        .map(|w| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_history-worker"));
            c.args([
                mode,
                url,
                "hot",
                &WORKER_DEADLINE_MS.to_string(),
                &w.to_string(),
            ]);
            c
        })
        .collect();
    let running = start_together(commands).unwrap();
    let faults = inject_faults(server, url);
    let finished = running.stop(Duration::from_secs(120)).unwrap();
    for f in &finished {
        assert!(f.status.success(), "worker failed: {}", f.stderr);
    }
    assert!(
        overlap(&finished).unwrap().all_overlapped(),
        "the workers ran at the same time"
    );
    let ops = History::from_outputs(finished.iter().map(|f| f.stdout.as_str()));
    println!("faults: {faults:?}");
    assert_each_fault_was_felt(&ops, &faults, workers);
    (ops, faults)
}

/// The hot series' counter, read with the mariadb client.
fn counter(url: &str) -> u64 {
    client_counter(url, "hot")
}

/// Autocommit allocation by six `history-worker MODE` processes under the
/// faults, then the checker: no duplicate, gaps only from unknown calls.
fn allocation_under_faults(name: &str, mode: &str) {
    let server = MariaDb::start_with(name, &["--innodb-lock-wait-timeout=1"]).unwrap();
    let url = server.fresh_database("faults").unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
    });
    let (ops, _) = under_faults(&server, &url, mode);
    let verdict = check(&ops, 1, counter(&url));
    println!(
        "{mode} verdict: {} ok, {} fail, {} unknown; duplicates {}; gaps {} (≤ unknowns); counter {} ≥ highest acknowledged {}",
        verdict.ok, verdict.fail, verdict.unknown, verdict.duplicates.len(), verdict.gaps, verdict.counter, verdict.highest_acknowledged
    );
    assert!(verdict.holds(true), "{verdict:?}");
    assert!(verdict.ok > 100, "the load ran: {verdict:?}");
    assert!(
        verdict.fail + verdict.unknown > 0,
        "the faults were felt: {verdict:?}"
    );
}

#[test]
fn autocommit_allocation_under_faults_no_duplicate_and_gaps_only_from_unknowns() {
    allocation_under_faults("faults-alloc", "allocate");
}

/// The same faults under the blocking allocation lane (the PHP extension's
/// path): the same verdict.
#[test]
fn lane_allocation_under_faults_no_duplicate_and_gaps_only_from_unknowns() {
    allocation_under_faults("faults-lane", "allocate-lane");
}

/// Six `history-worker MODE` processes on a fresh series of the shared
/// server for `ms`, no fault: their history and the counter (read with the
/// mariadb client).
fn without_faults(mode: &str, ms: u64) -> (Vec<Op>, u64) {
    let url = MariaDb::shared().fresh_database(mode).unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        s.ensure_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
    });
    let commands = (0..6)
        .map(|w| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_history-worker"));
            c.args([mode, &url, "hot", "1200", &w.to_string()]);
            c
        })
        .collect();
    let running = start_together(commands).unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    let finished = running.stop(Duration::from_secs(60)).unwrap();
    for f in &finished {
        assert!(f.status.success(), "worker failed: {}", f.stderr);
    }
    assert!(overlap(&finished).unwrap().all_overlapped());
    let ops = History::from_outputs(finished.iter().map(|f| f.stdout.as_str()));
    (ops, counter(&url))
}

/// Negative controls, end to end through the worker processes and the
/// checker: the common read-then-write allocator hands numbers out twice
/// and the checker says so; a worker that reports a used number as a lock
/// wait timeout leaves gaps the checker cannot explain, and it says so. The
/// same run through the store (`allocate`) holds.
#[test]
fn the_checker_catches_a_naive_allocator_and_a_hidden_number() {
    let (ops, counter) = without_faults("naive", 1500);
    let naive = check(&ops, 1, counter);
    println!(
        "naive: {} ok, duplicates {}",
        naive.ok,
        naive.duplicates.len()
    );
    assert!(naive.ok > 100, "the load ran: {naive:?}");
    assert!(
        !naive.duplicates.is_empty(),
        "the checker found no duplicate: {naive:?}"
    );
    assert!(!naive.holds(true));

    let (ops, counter) = without_faults("hiding", 1500);
    let hiding = check(&ops, 1, counter);
    println!(
        "hiding: {} ok, {} fail, {} unknown, gaps {}",
        hiding.ok, hiding.fail, hiding.unknown, hiding.gaps
    );
    assert!(hiding.duplicates.is_empty());
    assert!(hiding.gaps > 0 && hiding.unknown == 0, "{hiding:?}");
    assert!(
        !hiding.holds(true),
        "the checker explained a hidden number: {hiding:?}"
    );

    let (ops, counter) = without_faults("allocate", 1500);
    let store = check(&ops, 1, counter);
    assert!(store.ok > 100 && store.holds(true), "{store:?}");
}

#[test]
fn payment_flow_under_faults_one_number_per_payment_and_no_hole() {
    let server = MariaDb::start_with("faults-pay", &["--innodb-lock-wait-timeout=1"]).unwrap();
    let url = server.fresh_database("faultspay").unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        s.ensure_registry_schema().await.unwrap();
        s.initialize(&key(), 1).await.unwrap();
    });
    let (ops, _) = under_faults(&server, &url, "payment");
    // The gateway delivers again every payment it got no answer for.
    let retried: Vec<String> = ops
        .iter()
        .filter(|o| !matches!(o.completion, Completion::Ok(..)))
        .map(|o| o.label.clone())
        .collect();
    // What each client was told: the acknowledged first deliveries, then
    // the redeliveries.
    let mut told: std::collections::BTreeMap<String, u64> = ops
        .iter()
        .filter_map(|o| match o.completion {
            Completion::Ok(n, _) => Some((o.label.clone(), n)),
            _ => None,
        })
        .collect();
    let redelivered = block_on(async {
        let mut store = SeriesStore::connect(StoreConfig::new(&url)).await.unwrap();
        let mut found_first = 0;
        for txn in &retried {
            let r = store
                .record_payment(&key(), &PaymentRef::new("fault", txn).unwrap(), None, None)
                .await
                .unwrap();
            if !r.created {
                found_first += 1;
            }
            told.insert(txn.clone(), r.number);
        }
        found_first
    });
    let stored: std::collections::BTreeMap<String, u64> = MariaDb::client_query(
        &url,
        "SELECT transaction_id, number FROM wp_counterfoil_payments",
    )
    .unwrap()
    .into_iter()
    .map(|r| (r[0].clone(), r[1].parse().unwrap()))
    .collect();
    assert_eq!(
        told, stored,
        "every client was told the number its payment row holds"
    );
    let counter = counter(&url);
    let verdict = check(&ops, 1, counter);
    let registry = check_registry(
        &told.values().copied().collect(),
        &client_registry(&url, "hot"),
        1,
        counter,
        verdict.unknown,
    );
    assert!(registry.holds(), "{registry:?}");
    let payments = ops.len() as u64;
    let num = |sql: &str| -> u64 {
        MariaDb::client_query(&url, sql).unwrap()[0][0]
            .parse()
            .unwrap()
    };
    let rows = num("SELECT COUNT(*) FROM wp_counterfoil_payments");
    let registry = num("SELECT COUNT(*) FROM wp_counterfoil_numbers");
    let numbered =
        num("SELECT COUNT(DISTINCT number) FROM wp_counterfoil_payments WHERE number IS NOT NULL");
    println!(
        "verdict: {} ok, {} fail, {} unknown; {} redelivered ({redelivered} found their first number); duplicates {}; \
         payments {payments}, payment rows {rows}, registry rows {registry}, counter {counter}",
        verdict.ok, verdict.fail, verdict.unknown, retried.len(), verdict.duplicates.len()
    );
    assert!(verdict.duplicates.is_empty(), "{verdict:?}");
    assert!(verdict.counter >= verdict.highest_acknowledged);
    assert_eq!(rows, payments, "one payment row per payment");
    assert_eq!(numbered, payments, "one distinct number per payment");
    // No hole: the transaction makes a number exist only with its registry row.
    assert_eq!(registry, counter, "registry covers 1..counter");
    assert_eq!(counter, payments, "no number used without its payment");
    assert!(
        verdict.fail + verdict.unknown > 0,
        "the faults were felt: {verdict:?}"
    );
}

/// kill -9 of php-fpm workers in the middle of payment callbacks: every
/// payment ends with one invoice once the gateway has delivered again the
/// ones it got no answer for, and every number is issued.
#[test]
fn php_fpm_workers_killed_mid_request_extension() {
    php_fpm_workers_killed_mid_request(true);
}

#[test]
fn php_fpm_workers_killed_mid_request_pure_php() {
    php_fpm_workers_killed_mid_request(false);
}

fn php_fpm_workers_killed_mid_request(extension: bool) {
    use counterfoil_tests::burst;
    use counterfoil_tests::webhook::deliver;
    use counterfoil_tests::wordpress::WordPress;

    let wp = WordPress::install(
        MariaDb::shared(),
        if extension {
            "fpmkill_ext"
        } else {
            "fpmkill_php"
        },
        None,
    )
    .unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")
        .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(extension, 4).unwrap();
    let payments: Vec<String> = (0..(120 * rounds())).map(|i| format!("k-{i:04}")).collect();
    let stop = AtomicBool::new(false);
    let killed = Mutex::new(0usize);
    let unanswered = Mutex::new(Vec::<String>::new());
    let answered = Mutex::new(Vec::<(String, String)>::new());
    let strange = Mutex::new(Vec::<String>::new());
    let cut_after_status = Mutex::new(Vec::<String>::new());
    let queue = Mutex::new(payments.clone());
    let body = |txn: &str| {
        format!(r#"{{"gateway":"stripe","transaction_id":"{txn}","user_id":1,"year":2026}}"#)
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(150));
                let pids = site.worker_pids();
                if let Some(pid) = pids.get(fastrand::usize(..pids.len().max(1))) {
                    // SAFETY: kill(2) on a php-fpm worker this test started.
                    #[allow(unsafe_code)]
                    unsafe {
                        libc::kill(*pid as i32, libc::SIGKILL);
                    }
                    *killed.lock().unwrap() += 1;
                }
            }
        });
        std::thread::scope(|c| {
            for _ in 0..8 {
                c.spawn(|| loop {
                    let Some(txn) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    match deliver(site.port(), &secret, body(&txn).as_bytes(), 0) {
                        Ok(r) if r.status == 201 || r.status == 200 => {
                            // Never panic here: a panicking client would leave
                            // the killer thread running and the test hanging.
                            match serde_json::from_str::<serde_json::Value>(&r.body) {
                                Ok(v) => match v["number"].as_str() {
                                    Some(n) => answered.lock().unwrap().push((txn, n.to_owned())),
                                    None => strange
                                        .lock()
                                        .unwrap()
                                        .push(format!("{txn}: {} {}", r.status, r.body)),
                                },
                                // nginx had passed the status line on when the
                                // worker died before the body: a cut-off answer
                                // (no Content-Length over HTTP/1.0, so only the
                                // body tells), which a gateway delivers again.
                                Err(_) => cut_after_status.lock().unwrap().push(txn),
                            }
                        }
                        _ => unanswered.lock().unwrap().push(txn),
                    }
                });
            }
        });
        stop.store(true, Ordering::Relaxed);
    });
    let strange = strange.into_inner().unwrap();
    assert!(
        strange.is_empty(),
        "2xx answers without a number: {strange:?}\n{}",
        site.logs()
    );
    // A 2xx status line is only sent once the transaction has committed: the
    // redelivery of a cut-off 2xx must find that payment's invoice (200), not
    // make one (201).
    let cut_after_status = cut_after_status.into_inner().unwrap();
    let mut final_numbers = answered.lock().unwrap().clone();
    for txn in &cut_after_status {
        // A 502 (a worker killed by the last kill, still being replaced) is
        // no answer: the gateway delivers again, as for the unanswered below.
        let r = (0..20)
            .find_map(
                |_| match deliver(site.port(), &secret, body(txn).as_bytes(), 0) {
                    Ok(r) if r.status < 500 => Some(r),
                    _ => {
                        std::thread::sleep(Duration::from_millis(100));
                        None
                    }
                },
            )
            .expect("a redelivery of a cut-off 2xx is answered once the workers are back");
        assert_eq!(
            r.status, 200,
            "{txn}: the cut-off 2xx had made the invoice: {r:?}"
        );
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        final_numbers.push((txn.clone(), v["number"].as_str().unwrap().to_owned()));
    }
    // The gateway delivers again what got no answer (workers are respawned by the master).
    let retry = unanswered.lock().unwrap().clone();
    for txn in &retry {
        let r = (0..20)
            .find_map(
                |_| match deliver(site.port(), &secret, body(txn).as_bytes(), 0) {
                    Ok(r) if r.status == 201 || r.status == 200 => Some(r),
                    _ => {
                        std::thread::sleep(Duration::from_millis(100));
                        None
                    }
                },
            )
            .expect("a redelivery succeeds once the workers are back");
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        final_numbers.push((txn.clone(), v["number"].as_str().unwrap().to_owned()));
    }
    let check = burst::check_site(wp.database_url()).unwrap();
    println!(
        "php-fpm workers killed: {}; payments {}; unanswered then redelivered {}; 2xx cut off after the status line {}; invoices {}; {:?}",
        killed.lock().unwrap(),
        payments.len(),
        retry.len(),
        cut_after_status.len(),
        check.invoices,
        check.series
    );
    assert!(*killed.lock().unwrap() > 0);
    assert!(
        !retry.is_empty(),
        "the fault was felt: some requests were cut off (502 or no answer) and delivered again"
    );
    assert_eq!(
        check.invoices,
        payments.len() as u64,
        "one invoice per payment"
    );
    assert!(check.is_clean(), "{check:?}");
    assert_eq!(
        check.not_issued(),
        0,
        "every reserved number was completed by a redelivery"
    );
    let distinct: std::collections::BTreeSet<&String> =
        final_numbers.iter().map(|(_, n)| n).collect();
    assert_eq!(distinct.len(), payments.len(), "no number twice");
}
