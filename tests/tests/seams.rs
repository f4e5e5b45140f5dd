//! The seams between features (issue [seams], design.md §9): nothing a
//! failed call does may outlive it, on both engines.
//!
//! Each test was written to fail on the code before its fix:
//! - a recorded allocation whose registry INSERT fails inside the
//!   transaction used to return without ROLLBACK: the store kept the
//!   connection with the series' row locked while its process idled, and
//!   another process's allocation timed out;
//! - a too-long `source` (or amount, currency) reached the database and came
//!   back as a database error (1406) from inside the transaction.
//!
//! The failing call runs on its own runtime, which then idles, as a PHP
//! worker's does between requests: work a dropped transaction deferred to
//! "the next use of the connection" never happens while it idles.

use std::time::Duration;

use counterfoil_core::{Engine, Error, PaymentRef, ScopeKey, Store, StoreConfig};
use counterfoil_tests::engines::{exec, fresh_database, scalar};

fn key(s: &str) -> ScopeKey {
    ScopeKey::new(s).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A trigger that makes every registry INSERT fail, as a lock wait timeout
/// or a full disk would, after the counter's row is locked.
fn plant_failing_registry(engine: Engine, url: &str) {
    match engine {
        Engine::MySql => exec(
            url,
            "CREATE TRIGGER planted_failure BEFORE INSERT ON wp_counterfoil_numbers \
             FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'planted failure'",
        ),
        Engine::Postgres => exec(
            url,
            "CREATE OR REPLACE FUNCTION planted_failure() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'planted failure'; END $$; \
             CREATE TRIGGER planted_failure BEFORE INSERT ON wp_counterfoil_numbers \
             FOR EACH ROW EXECUTE FUNCTION planted_failure()",
        ),
    }
}

fn remove_failing_registry(engine: Engine, url: &str) {
    match engine {
        Engine::MySql => exec(url, "DROP TRIGGER planted_failure"),
        Engine::Postgres => exec(
            url,
            "DROP TRIGGER planted_failure ON wp_counterfoil_numbers",
        ),
    }
}

fn counter(url: &str, scope: &str) -> u64 {
    scalar(
        url,
        &format!("SELECT current_value FROM wp_invoice_sequences WHERE scope_key = '{scope}'"),
    )
    .expect("the series exists")
    .parse()
    .unwrap()
}

fn registry_rows(url: &str) -> u64 {
    scalar(url, "SELECT COUNT(*) FROM wp_counterfoil_numbers")
        .unwrap()
        .parse()
        .unwrap()
}

fn failed_transaction_ends(engine: Engine) {
    let url = fresh_database(engine, "seam_tx");
    let config = StoreConfig::new(&url).deadline(Duration::from_secs(3));
    let failing = runtime();
    let mut a = failing.block_on(async {
        let mut a = Store::connect(config.clone()).await.unwrap();
        a.ensure_registry_schema().await.unwrap();
        a.initialize(&key("f:1"), 1).await.unwrap();
        a
    });
    plant_failing_registry(engine, &url);
    let failed = failing.block_on(a.allocate_recorded(&key("f:1"), "api"));
    assert!(
        matches!(failed, Err(Error::Server { .. })),
        "{engine:?}: the planted failure is a server error: {failed:?}"
    );
    // Process A now idles, keeping its store. Another process allocates
    // from the same series: the failed call must hold no lock on it, and
    // must have used no number.
    let other = runtime().block_on(async {
        let mut b = Store::connect(config.clone()).await.unwrap();
        b.allocate(&key("f:1")).await
    });
    assert_eq!(
        other.expect("another process allocates while the failed one idles"),
        1,
        "{engine:?}: the failed call's number was rolled back"
    );
    remove_failing_registry(engine, &url);
    // A's next call starts clean: nothing of the failed call is committed
    // with it.
    let next = failing.block_on(a.allocate_recorded(&key("f:1"), "api"));
    assert_eq!(next.unwrap(), 2, "{engine:?}");
    assert_eq!(counter(&url, "f:1"), 2, "{engine:?}");
    assert_eq!(
        registry_rows(&url),
        1,
        "{engine:?}: only the good call's row"
    );

    // The same through the payment flow: a failed registry row ends the
    // payment's transaction too (no payment row, no number).
    plant_failing_registry(engine, &url);
    let p = PaymentRef::new("stripe", "pi_seam").unwrap();
    let failed = failing.block_on(a.record_payment(&key("f:1"), &p, Some("10.00"), Some("EUR")));
    assert!(matches!(failed, Err(Error::Server { .. })), "{failed:?}");
    let other = runtime().block_on(async {
        let mut b = Store::connect(config.clone()).await.unwrap();
        b.allocate(&key("f:1")).await
    });
    assert_eq!(other.expect("not blocked by the failed payment"), 3);
    assert_eq!(
        scalar(&url, "SELECT COUNT(*) FROM wp_counterfoil_payments").as_deref(),
        Some("0"),
        "{engine:?}: the failed payment left no row"
    );
}

#[test]
fn a_failed_recorded_allocation_ends_its_transaction_mariadb() {
    failed_transaction_ends(Engine::MySql);
}

#[test]
fn a_failed_recorded_allocation_ends_its_transaction_postgres() {
    failed_transaction_ends(Engine::Postgres);
}

fn bad_input_changes_nothing(engine: Engine) {
    let url = fresh_database(engine, "seam_input");
    let rt = runtime();
    rt.block_on(async {
        let mut s = Store::connect(StoreConfig::new(&url)).await.unwrap();
        s.ensure_registry_schema().await.unwrap();
        s.initialize(&key("f:1"), 1).await.unwrap();
        let long = "x".repeat(300);
        let got = s.allocate_recorded(&key("f:1"), &long).await;
        assert!(
            matches!(got, Err(Error::InvalidArgument { name: "source", .. })),
            "{engine:?}: {got:?}"
        );
        let p = PaymentRef::new("stripe", "pi_1").unwrap();
        for (amount, currency, field) in [
            (Some("1".repeat(40)), Some("EUR".to_owned()), "amount"),
            (Some("10.00".into()), Some("EURO".to_owned()), "currency"),
            (Some("-5".into()), None, "amount"),
        ] {
            let got = s
                .record_payment(&key("f:1"), &p, amount.as_deref(), currency.as_deref())
                .await;
            assert!(
                matches!(&got, Err(Error::InvalidArgument { name, .. }) if *name == field),
                "{engine:?}: {got:?}"
            );
        }
        // Nothing was sent: the next number is still the first, and it
        // goes through at once.
        assert_eq!(s.allocate_recorded(&key("f:1"), "api").await.unwrap(), 1);
    });
    assert_eq!(counter(&url, "f:1"), 1);
    assert_eq!(registry_rows(&url), 1);
}

#[test]
fn bad_input_is_refused_before_anything_is_sent_mariadb() {
    bad_input_changes_nothing(Engine::MySql);
}

#[test]
fn bad_input_is_refused_before_anything_is_sent_postgres() {
    bad_input_changes_nothing(Engine::Postgres);
}
