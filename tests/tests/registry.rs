//! The registry and the payment flow on a real MariaDB (and, for the
//! concurrent deliveries, held payments and claims, on a real PostgreSQL):
//! one number per payment, recorded in the same transaction as the
//! allocation; duplicate deliveries (sequential and concurrent, from several
//! OS processes) get the first delivery's number and change nothing.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use counterfoil_core::{
    Claim, Engine, Error, Held, Initialized, MissingSeries, NumberStatus, PaymentRef, Period,
    ScopeKey, Store, StoreConfig,
};
use counterfoil_tests::check::{check_contiguous, Allocation};
use counterfoil_tests::engines::{exec, fresh_database, scalar};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::workers::run_overlapping;
use counterfoil_tests::MariaDb;

fn key(s: &str) -> ScopeKey {
    ScopeKey::new(s).unwrap()
}

async fn store(url: &str) -> Store {
    let mut s = Store::connect(StoreConfig::new(url)).await.unwrap();
    s.ensure_registry_schema().await.unwrap();
    s
}

#[test]
fn a_payment_gets_one_number_and_a_repeat_gets_the_same() {
    let url = MariaDb::shared().fresh_database("pay").unwrap();
    block_on(async {
        let mut s = store(&url).await;
        s.initialize(&key("42:2026"), 7).await.unwrap();
        let p = PaymentRef::new("stripe", "ch_1").unwrap();
        let first = s
            .record_payment(&key("42:2026"), &p, Some("10.00"), Some("EUR"))
            .await
            .unwrap();
        assert_eq!(
            (first.number, first.created, first.status),
            (7, true, NumberStatus::Reserved)
        );
        let again = s
            .record_payment(&key("42:2026"), &p, None, None)
            .await
            .unwrap();
        assert_eq!((again.number, again.created), (7, false));
        // A repeat names its series from the payment row, not the caller.
        let other_scope = s
            .record_payment(&key("nope"), &p, None, None)
            .await
            .unwrap();
        assert_eq!(other_scope.number, 7);
        assert_eq!(
            s.allocate_recorded(&key("42:2026"), "api").await.unwrap(),
            8
        );
        // Unknown series: nothing recorded, the payment can be retried later.
        let q = PaymentRef::new("stripe", "ch_2").unwrap();
        assert!(matches!(
            s.record_payment(&key("43:2026"), &q, None, None).await,
            Err(Error::SeriesNotFound { .. })
        ));
        s.initialize(&key("43:2026"), 1).await.unwrap();
        assert_eq!(
            s.record_payment(&key("43:2026"), &q, None, None)
                .await
                .unwrap()
                .number,
            1
        );
    });
    let rows = MariaDb::query(
        &url,
        "SELECT scope_key, number, status, source, transaction_id FROM wp_counterfoil_numbers ORDER BY scope_key, number",
    )
    .unwrap();
    let flat: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| r.into_iter().map(|v| v.unwrap_or_default()).collect())
        .collect();
    assert_eq!(
        flat,
        vec![
            vec!["42:2026", "7", "reserved", "payment", "ch_1"],
            vec!["42:2026", "8", "issued", "api", ""],
            vec!["43:2026", "1", "reserved", "payment", "ch_2"],
        ]
    );
    assert_eq!(
        MariaDb::scalar(&url, "SELECT COUNT(*) FROM wp_counterfoil_payments").unwrap(),
        Some("2".into())
    );
}

#[test]
fn a_counter_behind_the_registry_is_a_readable_alarm_and_issues_nothing() {
    let url = MariaDb::shared().fresh_database("behind").unwrap();
    let db = MariaDb::database_name(&url);
    block_on(async {
        let mut s = store(&url).await;
        s.initialize(&key("k"), 1).await.unwrap();
        assert_eq!(s.allocate_recorded(&key("k"), "api").await.unwrap(), 1);
    });
    // Someone lowers the counter by hand (or restores an old backup).
    MariaDb::shared()
        .exec(&db, "UPDATE wp_invoice_sequences SET current_value = 0")
        .unwrap();
    block_on(async {
        let mut s = store(&url).await;
        let e = s.allocate_recorded(&key("k"), "api").await.unwrap_err();
        assert!(
            matches!(e, Error::DuplicateNumber { number: 1, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("counterfoil verify"));
        // The transaction rolled back: the counter did not move either.
        assert_eq!(s.current(&key("k")).await.unwrap().current, 0);
        let p = PaymentRef::new("x", "t").unwrap();
        assert!(matches!(
            s.record_payment(&key("k"), &p, None, None).await,
            Err(Error::DuplicateNumber { .. })
        ));
    });
    assert_eq!(
        MariaDb::scalar(&url, "SELECT COUNT(*) FROM wp_counterfoil_payments").unwrap(),
        Some("0".into())
    );
}

/// 8 `payment-worker` processes released together, each delivering every
/// payment of `txns` (in its own order) to `scope`: the number each payment
/// got (the same for every delivery, or the test fails) and how many
/// deliveries recorded a payment.
fn deliver_from_eight_processes(
    url: &str,
    scope: &str,
    txns: &[String],
) -> (BTreeMap<String, u64>, usize) {
    let commands = (0..8)
        .map(|w| {
            let mut order = txns.to_vec();
            order.rotate_left(w * txns.len() / 8);
            let mut c = Command::new(env!("CARGO_BIN_EXE_payment-worker"));
            c.args([url, "wp_", scope, "stripe"]).args(order);
            c
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300)).unwrap();
    let mut number_of: BTreeMap<String, u64> = BTreeMap::new();
    let mut created = 0;
    for line in finished.iter().flat_map(|f| f.stdout.lines()) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.first() != Some(&"p") {
            continue;
        }
        let n: u64 = parts[2].parse().unwrap();
        created += usize::from(parts[3] == "true");
        let prev = number_of.insert(parts[1].to_owned(), n);
        assert!(
            prev.is_none() || prev == Some(n),
            "{} got {prev:?} and {n}",
            parts[1]
        );
    }
    (number_of, created)
}

/// Issue 24 item 5: New Year under the `continue` plan with a format that
/// prints no year. 4 OS processes deliver payments of the old period (series
/// `7:2025`, at 100) while 4 others deliver the new period's, whose series
/// `7:2026` is missing and is made from `7:2025` by whichever comes first.
/// Every payment gets one number, and no number is handed out twice across
/// the two series (they print alike): the new series starts after every
/// number the old one gave, and the old one's later payments are numbered
/// by the new one. The old period's deliveries must overlap the creation
/// (some of them numbered by `7:2026`), or the test proves nothing and fails.
#[test]
fn continue_at_new_year_from_overlapping_processes() {
    continue_at_new_year(Engine::MySql);
}

#[test]
fn continue_at_new_year_from_overlapping_processes_postgres() {
    continue_at_new_year(Engine::Postgres);
}

fn continue_at_new_year(engine: Engine) {
    let url = fresh_database(engine, "newyear");
    block_on(async {
        let mut s = store(&url).await;
        s.initialize(&key("7:2025"), 101).await.unwrap();
    });
    let per_worker = 60;
    let commands = (0..8)
        .map(|w| {
            let (scope, period) = if w % 2 == 0 {
                ("7:2025", "old")
            } else {
                ("7:2026", "new")
            };
            let mut c = Command::new(env!("CARGO_BIN_EXE_payment-worker"));
            c.args([url.as_str(), "wp_", scope, "stripe"])
                .args((0..per_worker).map(|i| format!("{period}-{w}-{i:03}")))
                .env("PAYMENT_PLAN", "continue");
            c
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300)).unwrap();
    let mut numbered: BTreeMap<u64, String> = BTreeMap::new();
    let mut old_numbered_by_new = 0;
    let mut deliveries = 0;
    for line in finished.iter().flat_map(|f| f.stdout.lines()) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.first() != Some(&"p") {
            continue;
        }
        deliveries += 1;
        let (txn, n, scope) = (parts[1], parts[2].parse::<u64>().unwrap(), parts[4]);
        assert_eq!(parts[3], "true", "{line}: each payment delivered once");
        if let Some(other) = numbered.insert(n, format!("{txn} in {scope}")) {
            panic!("number {n} handed out twice: {other} and {txn} in {scope}");
        }
        old_numbered_by_new += usize::from(txn.starts_with("old-") && scope == "7:2026");
    }
    assert_eq!(deliveries, 8 * per_worker);
    // No gap either: 101 ..= 580, each once.
    let expected: Vec<u64> = (101..101 + 8 * per_worker as u64).collect();
    assert_eq!(numbered.keys().copied().collect::<Vec<_>>(), expected);
    // The database agrees: no number in both series' registries, every
    // payment row names the series whose registry row it has.
    assert_eq!(
        scalar(
            &url,
            "SELECT COUNT(*) FROM wp_counterfoil_numbers a JOIN wp_counterfoil_numbers b \
             ON a.number = b.number AND a.scope_key = '7:2025' AND b.scope_key = '7:2026'"
        ),
        Some("0".into())
    );
    assert_eq!(
        scalar(
            &url,
            "SELECT COUNT(*) FROM wp_counterfoil_payments p JOIN wp_counterfoil_numbers n \
             ON n.scope_key = p.scope_key AND n.number = p.number"
        ),
        Some((8 * per_worker).to_string())
    );
    assert_eq!(
        scalar(
            &url,
            "SELECT closed_by FROM wp_invoice_sequences WHERE scope_key = '7:2025'"
        ),
        Some("7:2026".into())
    );
    assert!(
        old_numbered_by_new > 0,
        "no old-period payment came after the new series was made: no overlap, nothing proved"
    );
}

#[test]
fn concurrent_duplicate_deliveries_from_eight_processes() {
    duplicate_deliveries(Engine::MySql);
}

#[test]
fn concurrent_duplicate_deliveries_from_eight_processes_postgres() {
    duplicate_deliveries(Engine::Postgres);
}

fn duplicate_deliveries(engine: Engine) {
    let url = fresh_database(engine, "paydup");
    block_on(async {
        let mut s = store(&url).await;
        s.initialize(&key("1:2026"), 100).await.unwrap();
    });
    // 200 payments; each process delivers all of them, in its own order, so
    // every payment is delivered 8 times, mostly at the same moment.
    let txns: Vec<String> = (0..200).map(|i| format!("txn-{i:04}")).collect();
    let (number_of, created) = deliver_from_eight_processes(&url, "1:2026", &txns);
    assert_eq!(number_of.len(), 200);
    assert_eq!(created, 200, "each payment recorded exactly once");
    let allocs: Vec<Allocation> = number_of.values().map(|n| Allocation::one(*n)).collect();
    let findings = check_contiguous(&allocs, 100, 299);
    assert!(findings.is_clean(), "{findings}");
    assert_eq!(
        scalar(&url, "SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        Some("200".into())
    );
    assert_eq!(
        scalar(
            &url,
            "SELECT COUNT(*) FROM wp_counterfoil_payments WHERE number IS NOT NULL"
        ),
        Some("200".into())
    );
    assert_eq!(
        scalar(&url, "SELECT current_value FROM wp_invoice_sequences"),
        Some("299".into())
    );
}

/// A payment whose series is missing is held without a number (docs/design.md
/// §7), and the first delivery after the series exists numbers it, from the
/// series it was held for; plans create at the right start.
#[test]
fn held_payments_and_planned_series() {
    held_and_planned(Engine::MySql);
}

#[test]
fn held_payments_and_planned_series_postgres() {
    held_and_planned(Engine::Postgres);
}

fn held_and_planned(engine: Engine) {
    let url = fresh_database(engine, "held");
    block_on(async {
        let mut s = store(&url).await;
        let p = PaymentRef::new("stripe", "held-1").unwrap();
        let period = Period::new(2026, 12).unwrap();
        let scope = key("5:2027");
        assert_eq!(
            s.hold_payment(&scope, &p, Some("9.50"), Some("EUR"), period)
                .await
                .unwrap(),
            Held::Waiting { created: true }
        );
        assert_eq!(
            s.hold_payment(&scope, &p, None, None, period)
                .await
                .unwrap(),
            Held::Waiting { created: false }
        );
        // Still missing: the delivery is refused typed, the payment stays held.
        assert!(matches!(
            s.record_payment(&key("5:2028"), &p, None, None).await,
            Err(Error::SeriesNotFound { scope }) if scope == "5:2027"
        ));
        // Hold creates nothing; continue starts after the issuer's latest earlier year.
        let held = s
            .initialize_planned(&scope, MissingSeries::Hold, 1)
            .await
            .unwrap();
        assert_eq!((held.start, held.outcome), (None, None));
        s.initialize(&key("5:2025"), 1).await.unwrap();
        s.advance(&key("5:2025"), 41).await.unwrap();
        s.initialize(&key("55:2026"), 900).await.unwrap();
        let planned = s
            .initialize_planned(&scope, MissingSeries::Continue, 1)
            .await
            .unwrap();
        assert_eq!(
            (planned.start, planned.continued_from),
            (Some(41), Some(40))
        );
        assert_eq!(planned.outcome, Some(Initialized::Created { next: 41 }));
        // The repeat after the series exists numbers it, with the held period.
        let r = s
            .record_payment(&key("5:2028"), &p, None, None)
            .await
            .unwrap();
        assert_eq!(
            (r.scope.as_str(), r.number, r.created, r.period),
            ("5:2027", 41, true, Some(period))
        );
        let again = s.record_payment(&scope, &p, None, None).await.unwrap();
        assert_eq!((again.number, again.created), (41, false));
        assert!(matches!(
            s.hold_payment(&scope, &p, None, None, period).await.unwrap(),
            Held::Numbered(r) if r.number == 41
        ));
        // An existing series is never reset by a plan; LIKE wildcards in the
        // issuer match only themselves.
        let exists = s
            .initialize_planned(&scope, MissingSeries::Create, 1)
            .await
            .unwrap();
        assert_eq!(exists.outcome, Some(Initialized::Exists { current: 41 }));
        s.initialize(&key("axb:2025"), 500).await.unwrap();
        let wild = s
            .initialize_planned(&key("a_b:2026"), MissingSeries::Continue, 3)
            .await
            .unwrap();
        assert_eq!((wild.start, wild.continued_from), (Some(3), None));
    });
}

/// 200 payments held for a missing series; once it exists, 8 OS processes
/// deliver all of them again at the same time: each gets exactly one number,
/// the numbers are contiguous, none stays held.
#[test]
fn held_payments_completed_by_eight_processes_at_once() {
    held_race(Engine::MySql);
}

#[test]
fn held_payments_completed_by_eight_processes_at_once_postgres() {
    held_race(Engine::Postgres);
}

fn held_race(engine: Engine) {
    let url = fresh_database(engine, "heldrace");
    let txns: Vec<String> = (0..200).map(|i| format!("held-{i:04}")).collect();
    block_on(async {
        let mut s = store(&url).await;
        for t in &txns {
            let p = PaymentRef::new("stripe", t).unwrap();
            s.hold_payment(
                &key("3:2027"),
                &p,
                None,
                None,
                Period::new(2027, 1).unwrap(),
            )
            .await
            .unwrap();
        }
        s.initialize(&key("3:2027"), 1).await.unwrap();
    });
    let (number_of, created) = deliver_from_eight_processes(&url, "3:2027", &txns);
    assert_eq!(number_of.len(), 200);
    assert_eq!(created, 200, "each held payment numbered exactly once");
    let allocs: Vec<Allocation> = number_of.values().map(|n| Allocation::one(*n)).collect();
    let findings = check_contiguous(&allocs, 1, 200);
    assert!(findings.is_clean(), "{findings}");
    assert_eq!(
        scalar(
            &url,
            "SELECT COUNT(*) FROM wp_counterfoil_payments WHERE number IS NULL"
        ),
        Some("0".into())
    );
}

/// Phase 2's claim on a number, on the store's own connection: one holder at
/// a time, a repeat of the holder's own claim is still its, the wrong claim
/// issues nothing, a dead holder's claim (its connection gone) is taken over
/// at once, and issued or void numbers say so.
#[test]
fn claims_on_numbers() {
    claims(Engine::MySql);
}

#[test]
fn claims_on_numbers_postgres() {
    claims(Engine::Postgres);
}

fn claims(engine: Engine) {
    let url = fresh_database(engine, "claims");
    let stale = Duration::from_secs(120);
    block_on(async {
        let mut a = store(&url).await;
        let mut b = store(&url).await;
        let scope = key("9:2026");
        a.initialize(&scope, 1).await.unwrap();
        let p = PaymentRef::new("stripe", "claim-1").unwrap();
        let n = a
            .record_payment(&scope, &p, None, None)
            .await
            .unwrap()
            .number;
        assert_eq!(
            a.claim_number(&scope, n, "a1", stale).await.unwrap(),
            Claim::Claimed
        );
        assert_eq!(
            a.claim_number(&scope, n, "a1", stale).await.unwrap(),
            Claim::Claimed
        );
        assert_eq!(
            b.claim_number(&scope, n, "b1", stale).await.unwrap(),
            Claim::Busy
        );
        assert!(!b
            .issue_claimed(&scope, n, "b1", 77, Some(&p))
            .await
            .unwrap());
        assert!(a
            .claim_number(&scope, n, "bad claim!", stale)
            .await
            .is_err());
        // The holder dies: its connection closes, and the claim is taken over
        // as soon as the server has let the connection go (milliseconds; a
        // waiting delivery polls), long before the claim would be stale.
        a.close().await.unwrap();
        let started = std::time::Instant::now();
        let mut got = b.claim_number(&scope, n, "b2", stale).await.unwrap();
        while got == Claim::Busy && started.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(20)).await;
            got = b.claim_number(&scope, n, "b2", stale).await.unwrap();
        }
        assert_eq!(got, Claim::Claimed);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(b
            .issue_claimed(&scope, n, "b2", 77, Some(&p))
            .await
            .unwrap());
        assert_eq!(
            b.claim_number(&scope, n, "b3", stale).await.unwrap(),
            Claim::Issued { post_id: 77 }
        );
        let again = b.record_payment(&scope, &p, None, None).await.unwrap();
        assert_eq!(
            (again.status, again.post_id),
            (NumberStatus::Issued, Some(77))
        );
        // Released claims are reserved again; void numbers are void.
        let q = PaymentRef::new("stripe", "claim-2").unwrap();
        let m = b
            .record_payment(&scope, &q, None, None)
            .await
            .unwrap()
            .number;
        assert_eq!(
            b.claim_number(&scope, m, "c1", stale).await.unwrap(),
            Claim::Claimed
        );
        assert!(b.release_claim(&scope, m, "c1").await.unwrap());
        assert!(!b.release_claim(&scope, m, "c1").await.unwrap());
        // (From another thread: the harness's own SQL helper runs its own runtime.)
        let target = url.clone();
        std::thread::spawn(move || {
            exec(
                &target,
                &format!("UPDATE wp_counterfoil_numbers SET status = 'void', reason = 'test' WHERE number = {m}"),
            )
        })
        .join()
        .unwrap();
        assert_eq!(
            b.claim_number(&scope, m, "c2", stale).await.unwrap(),
            Claim::Void
        );
    });
}
