//! A call that loses the answer to its COMMIT does not know whether its
//! number was issued. `allocate_recorded` retries with a fresh number; the
//! number of the lost answer, if its commit landed, must not stay `issued`
//! for nobody: the retry voids it with the reason the core names
//! (`UNANSWERED_REASON`), so the books explain it. A proxy (`CommitCut`)
//! drops the server's answer to a COMMIT after the server committed.
//! Both the core and the pure-PHP backend are held to it.

use counterfoil_core::payment::UNANSWERED_REASON;
use counterfoil_core::{ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::commit_cut::{database_behind_a_proxy, site_behind_a_proxy};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::MariaDb;

/// `number status reason` of every registry row of `scope`, in order.
fn registry(url: &str, table: &str, scope: &str) -> String {
    MariaDb::scalar(
        url,
        &format!(
            "SELECT GROUP_CONCAT(CONCAT_WS(' ', number, status, IFNULL(reason, '-')) ORDER BY number SEPARATOR '\\n') \
             FROM `{table}` WHERE scope_key = '{scope}'"
        ),
    )
    .unwrap()
    .unwrap_or_default()
}

/// A core store on `url` with its schema and series `scope` from 1.
async fn store_with_series(url: &str, scope: &ScopeKey) -> SeriesStore {
    let mut s = SeriesStore::connect(StoreConfig::new(url)).await.unwrap();
    s.ensure_registry_schema().await.unwrap();
    s.initialize(scope, 1).await.unwrap();
    s
}

#[test]
fn the_core_voids_the_number_of_a_lost_commit_answer() {
    let scope = ScopeKey::new("cut:2026").unwrap();
    let (url, proxy, via_proxy) = database_behind_a_proxy("unanswered");
    let got = block_on(async {
        let mut s = store_with_series(&via_proxy, &scope).await;
        assert_eq!(s.allocate_recorded(&scope, "test").await.unwrap(), 1);
        proxy.arm(1);
        let got = s.allocate_recorded(&scope, "test").await.unwrap();
        assert_eq!(s.allocate_recorded(&scope, "test").await.unwrap(), got + 1);
        got
    });
    assert_eq!(proxy.cuts(), 1, "the answer to one COMMIT was lost");
    assert_eq!(
        got, 3,
        "the retry took a fresh number: the lost commit had landed"
    );
    assert_eq!(
        registry(&url, "wp_counterfoil_numbers", "cut:2026"),
        format!("1 issued -\n2 void {UNANSWERED_REASON}\n3 issued -\n4 issued -")
    );
}

/// A payment's first delivery sent in one round trip whose answer is lost
/// (the proxy cuts the answer of the packet holding the COMMIT): the
/// outcome is unknown to the caller, and the gateway's redelivery ends with
/// the payment's one number — found if the packet committed, taken afresh
/// if it did not — no second number, no second registry row, the chain
/// intact. With the store's retry, the retry is that redelivery.
#[test]
fn a_payment_whose_one_trip_answer_was_lost_is_found_by_its_redelivery() {
    use counterfoil_core::{PaymentRef, RetryPolicy};
    let scope = ScopeKey::new("cut:2026").unwrap();
    let (url, proxy, via_proxy) = database_behind_a_proxy("unanswered_pay");
    let (unknown, redelivered, retried) = block_on(async {
        let mut s = store_with_series(&via_proxy, &scope).await;
        let mut once =
            SeriesStore::connect(StoreConfig::new(&via_proxy).retry(RetryPolicy::none()))
                .await
                .unwrap();
        proxy.arm(1);
        let p = PaymentRef::new("stripe", "lost-1").unwrap();
        let unknown = once
            .record_payment(&scope, &p, Some("9.99"), Some("EUR"))
            .await;
        let redelivered = s.record_payment(&scope, &p, None, None).await.unwrap();
        // The store's own retry after a lost answer: the same end.
        proxy.arm(1);
        let q = PaymentRef::new("stripe", "lost-2").unwrap();
        let retried = s.record_payment(&scope, &q, None, None).await.unwrap();
        (unknown, redelivered, retried)
    });
    assert_eq!(proxy.cuts(), 2, "two answers were lost");
    let e = unknown.expect_err("the caller did not learn its number");
    assert!(e.outcome_unknown(), "{e:?}");
    // The proxy cuts once the packet's last answer (its COMMIT's) has come:
    // the packet committed, and the redelivery finds its number (a soak
    // run saw a proxy that cut at the server's first bytes leave the
    // packet rolled back). One number per payment, never a second.
    assert!(!redelivered.created, "the lost packet had committed");
    assert!(!retried.created, "the retry found what the lost packet did");
    assert_eq!(redelivered.number, 1);
    assert_eq!(retried.number, 2);
    assert_eq!(
        registry(&url, "wp_counterfoil_numbers", "cut:2026"),
        "1 reserved -\n2 reserved -"
    );
    let chain = MariaDb::scalar(
        &url,
        "SELECT GROUP_CONCAT(CONCAT(seq, ':', number) ORDER BY seq) FROM wp_counterfoil_chain",
    )
    .unwrap()
    .unwrap_or_default();
    assert_eq!(chain, "1:1,2:2", "one chain entry per number");
    let chains = counterfoil_tests::chain_walk::walk_all(&url).expect("every chain holds");
    assert_eq!(chains.entries.get("cut:2026"), Some(&2));
}

#[test]
fn the_php_backend_voids_the_number_of_a_lost_commit_answer() {
    let (wp, proxy) = site_behind_a_proxy("unanswered_php");
    proxy.arm(1);
    let out = wp
        .eval(
            false,
            "echo counterfoil_backend()->name(), ' ', allocate_invoice_number(1, 2026), ' ', allocate_invoice_number(1, 2026);",
        )
        .unwrap();
    assert_eq!(proxy.cuts(), 1, "the answer to one COMMIT was lost");
    assert_eq!(
        out, "php 2026-0002 2026-0003",
        "the retry took a fresh number"
    );
    assert_eq!(
        registry(wp.database_url(), "wp_counterfoil_numbers", "1:2026"),
        format!("1 void {UNANSWERED_REASON}\n2 issued -\n3 issued -")
    );
}

/// Every try of a call loses the answer to its COMMIT: the call fails with
/// an unknown outcome, and its caller has no number. The books must say so:
/// the numbers of the tries that a later try replaced are void with the
/// reason, and the last one — whose caller may or may not have it — is
/// `unconfirmed`, never `issued` (issue [seams] item 4; failed before the
/// fix: it stayed `issued`). A call that gets its answer marks its number
/// `issued`. The core and the pure-PHP backend alike.
#[test]
fn the_last_lost_answer_leaves_its_number_unconfirmed() {
    let scope = ScopeKey::new("lost:2026").unwrap();
    let (url, proxy, via_proxy) = database_behind_a_proxy("unconfirmed");
    block_on(async {
        let mut s = store_with_series(&via_proxy, &scope).await;
        proxy.arm(5);
        let lost = s.allocate_recorded(&scope, "test").await;
        assert!(lost.is_err(), "every try lost its answer: {lost:?}");
        assert_eq!(s.allocate_recorded(&scope, "test").await.unwrap(), 6);
    });
    assert_eq!(proxy.cuts(), 5);
    let void = format!("void {UNANSWERED_REASON}");
    assert_eq!(
        registry(&url, "wp_counterfoil_numbers", "lost:2026"),
        format!("1 {void}\n2 {void}\n3 {void}\n4 {void}\n5 unconfirmed -\n6 issued -")
    );

    let (wp, proxy) = site_behind_a_proxy("unconfirmed_php");
    proxy.arm(5);
    let out = wp
        .eval(
            false,
            "try { allocate_invoice_number(1, 2026); echo 'numbered'; } catch (Throwable $e) { echo 'failed'; }
             echo ' ', allocate_invoice_number(1, 2026);",
        )
        .unwrap();
    assert_eq!(out, "failed 2026-0006");
    assert_eq!(proxy.cuts(), 5);
    assert_eq!(
        registry(wp.database_url(), "wp_counterfoil_numbers", "1:2026"),
        format!("1 {void}\n2 {void}\n3 {void}\n4 {void}\n5 unconfirmed -\n6 issued -")
    );
}

/// A caller learns the fate of a call whose every try lost its answer by
/// repeating it with the same request key: the repeat returns the number
/// the lost call took (and marks it issued: its caller has it now), and
/// takes no new one (issue [seams] item 4). The core and the pure-PHP
/// backend alike.
#[test]
fn a_repeat_with_the_request_key_learns_the_fate_of_a_lost_call() {
    let scope = ScopeKey::new("keyed:2026").unwrap();
    let (url, proxy, via_proxy) = database_behind_a_proxy("request_key");
    block_on(async {
        let mut s = store_with_series(&via_proxy, &scope).await;
        proxy.arm(5);
        let lost = s.allocate_recorded_keyed(&scope, "api", "order-7").await;
        assert!(lost.is_err(), "every try lost its answer: {lost:?}");
        assert_eq!(
            s.allocate_recorded_keyed(&scope, "api", "order-7")
                .await
                .unwrap(),
            1,
            "the repeat learns the number the lost call took"
        );
        assert_eq!(
            s.allocate_recorded_keyed(&scope, "api", "order-7")
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            s.allocate_recorded_keyed(&scope, "api", "order-8")
                .await
                .unwrap(),
            2
        );
    });
    assert_eq!(
        registry(&url, "wp_counterfoil_numbers", "keyed:2026"),
        "1 issued -\n2 issued -"
    );

    let (wp, proxy) = site_behind_a_proxy("request_key_php");
    proxy.arm(5);
    let out = wp
        .eval(
            false,
            "$b = counterfoil_backend();
             try { $b->allocate_recorded('1:2026', 'api', 'order-7'); echo 'numbered'; } catch (Throwable $e) { echo 'failed'; }
             echo ' ', $b->allocate_recorded('1:2026', 'api', 'order-7'), ' ', $b->allocate_recorded('1:2026', 'api', 'order-8');",
        )
        .unwrap();
    assert_eq!(out, "failed 1 2");
    assert_eq!(
        registry(wp.database_url(), "wp_counterfoil_numbers", "1:2026"),
        "1 issued -\n2 issued -"
    );
}
