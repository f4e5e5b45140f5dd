//! Where one server setting or client flag meets the allocation (issue
//! [seams-2]): a setting the site's administrator chose must not turn a
//! number into one handed out twice, or a payment into one told another's
//! number, on any backend (the core's store and lane, the PHP extension, the
//! pure-PHP twin).
//!
//! Each test was seen failing on the code before its fix:
//! - a server whose sessions start with `autocommit=0` left the store's
//!   plain allocation in a transaction nothing ended: the server's
//!   `idle_transaction_timeout` rolled it back and the next allocation got
//!   the same number again; the WordPress backends' confirmations stayed
//!   uncommitted (numbers left `unconfirmed`);
//! - with `MYSQL_CLIENT_FLAGS = MYSQLI_CLIENT_FOUND_ROWS`, the twin's
//!   one-trip completion of a held payment for a missing series read
//!   `ROW_COUNT()` as rows matched, wrote a registry row with the number an
//!   earlier packet on the same connection had left in `@cf_number`, and
//!   told the payment that number.

use std::time::Duration;

use counterfoil_core::{AllocationLane, ScopeKey, Store, StoreConfig};
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn key(s: &str) -> ScopeKey {
    ScopeKey::new(s).unwrap()
}

use counterfoil_tests::runtime;

/// Open transactions on the server, read with its own client.
fn open_transactions(url: &str) -> u64 {
    MariaDb::client_query(url, "SELECT COUNT(*) FROM information_schema.INNODB_TRX").unwrap()[0][0]
        .parse()
        .unwrap()
}

/// The registry's tables (DDL commits on its own) and series `scope`,
/// committed by the database's client: what the test then checks does not
/// rest on the code under test having committed its setup.
fn schema_and_series(url: &str, scope: &str) {
    runtime().block_on(async {
        let mut s = Store::lazy(StoreConfig::new(url)).unwrap();
        s.ensure_registry_schema().await.unwrap();
    });
    MariaDb::client_query(
        url,
        &format!(
            "INSERT INTO wp_invoice_sequences (scope_key, current_value, start_value) \
             VALUES ('{scope}', 0, 1); COMMIT"
        ),
    )
    .unwrap();
}

fn counter(url: &str, scope: &str) -> u64 {
    MariaDb::client_query(
        url,
        &format!("SELECT current_value FROM wp_invoice_sequences WHERE scope_key = '{scope}'"),
    )
    .unwrap()[0][0]
        .parse()
        .unwrap()
}

/// `mariadbd --autocommit=0`: every session starts with autocommit off. A
/// store's plain allocation must still commit at once: its connection then
/// idles past the server's `idle_transaction_timeout` (twice the deadline,
/// 2 s here), and the next allocation, from another store, must get the
/// next number, not the same one again.
#[test]
fn a_server_with_autocommit_off_hands_out_no_number_twice() {
    let server = MariaDb::start_with("autocommit_off", &["--autocommit=0"]).unwrap();
    let url = server.fresh_database("ac0").unwrap();
    assert_eq!(
        MariaDb::client_query(&url, "SELECT @@global.autocommit").unwrap()[0][0],
        "0",
        "the server's sessions start with autocommit off"
    );
    schema_and_series(&url, "ac:1");
    let config = StoreConfig::new(&url).deadline(Duration::from_secs(1));
    let rt = runtime();
    let mut first = rt.block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        assert_eq!(s.allocate(&key("ac:1")).await.unwrap(), 1);
        s
    });
    // Past the idle timeout, the first store's connection still open.
    std::thread::sleep(Duration::from_secs(3));
    let second = rt.block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        s.allocate(&key("ac:1")).await.unwrap()
    });
    assert_eq!(second, 2, "the next number, never 1 again");
    assert_eq!(open_transactions(&url), 0, "no transaction left open");
    assert_eq!(counter(&url, "ac:1"), 2, "the numbers are committed");
    let mut lane = AllocationLane::new(config.clone()).unwrap();
    assert_eq!(lane.allocate(&key("ac:1")).unwrap(), 3, "the lane too");
    assert_eq!(open_transactions(&url), 0, "the lane left none open");
    assert_eq!(rt.block_on(first.allocate(&key("ac:1"))).unwrap(), 4);
    assert_eq!(counter(&url, "ac:1"), 4);
}

/// The same server under WordPress, on both backends: each allocation in a
/// PHP process of its own (its connection gone when it ends); every number
/// is new, issued (its confirmation committed too), and no transaction stays
/// open.
#[test]
fn the_plugin_on_a_server_with_autocommit_off() {
    let wp = WordPress::install(MariaDb::shared(), "ac0_wp", None).unwrap();
    let server = MariaDb::start_with("autocommit_off_wp", &["--autocommit=0"]).unwrap();
    let db = wp.database();
    server
        .exec("mysql", &format!("CREATE DATABASE `{db}`"))
        .unwrap();
    let url = server.url(db);
    schema_and_series(&url, "1:2026");
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!("array('127.0.0.1:{}')", server.port()),
    );
    let mut seen = Vec::new();
    for extension in [true, false, true, false] {
        let out = wp
            .eval(
                extension,
                "echo allocate_invoice_number(1, 2026), ' ', counterfoil_backend()->name();",
            )
            .unwrap();
        seen.push(out);
    }
    assert_eq!(
        seen,
        [
            "2026-0001 extension",
            "2026-0002 php",
            "2026-0003 extension",
            "2026-0004 php"
        ],
        "every process a new number"
    );
    assert_eq!(counter(&url, "1:2026"), 4);
    let statuses = MariaDb::client_query(
        &url,
        "SELECT number, status FROM wp_counterfoil_numbers ORDER BY number",
    )
    .unwrap();
    assert_eq!(
        statuses,
        (1..=4)
            .map(|n| vec![n.to_string(), "issued".to_string()])
            .collect::<Vec<_>>(),
        "every number issued: its confirmation committed"
    );
    assert_eq!(open_transactions(&url), 0);
}

/// `MYSQL_CLIENT_FLAGS = MYSQLI_CLIENT_FOUND_ROWS` in wp-config.php: a held
/// payment for a series that does not exist is redelivered after another
/// payment was numbered on the same connection (one PHP process). The
/// redelivery gets a typed "series not found", the payment stays held, and
/// no registry row or chain entry is written for the missing series, on
/// both backends.
#[test]
fn found_rows_in_the_client_flags_tells_no_payment_a_foreign_number() {
    let wp = WordPress::install(MariaDb::shared(), "found_rows_wp", None).unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")
        .unwrap();
    wp.config_set("MYSQL_CLIENT_FLAGS", "MYSQLI_CLIENT_FOUND_ROWS");
    for (extension, txn) in [(false, "php"), (true, "ext")] {
        let out = wp
            .eval(
                extension,
                &format!(
                    "$b = counterfoil_backend();
                     $held = $b->hold_payment('9:2026', 'test', 'held-{txn}', '10.00', 'EUR', 2026, 1);
                     echo $held['status'], ' ';
                     $paid = $b->record_payment('1:2026', 'test', 'paid-{txn}', '5.00', 'EUR', 2026, 1);
                     echo $paid['number'], ' ';
                     try {{
                         $again = $b->record_payment('9:2026', 'test', 'held-{txn}', '10.00', 'EUR', 2026, 1);
                         echo 'told ', $again['scope_key'], ' ', $again['number'];
                     }} catch (Throwable $e) {{
                         echo get_class($e);
                     }}"
                ),
            )
            .unwrap();
        assert!(
            out.starts_with("held ") && out.ends_with("SeriesNotFoundException"),
            "extension {extension}: {out}"
        );
        assert_eq!(
            wp.scalar(&format!(
                "SELECT COALESCE(number, 'NULL') FROM wp_counterfoil_payments \
                 WHERE transaction_id = 'held-{txn}'"
            )),
            "NULL",
            "extension {extension}: still held"
        );
    }
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers WHERE scope_key = '9:2026'"),
        "0",
        "no registry row for the missing series"
    );
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_chain WHERE scope_key = '9:2026'"),
        "0",
        "no chain entry for the missing series"
    );
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers WHERE scope_key = '1:2026'"),
        "2",
        "the two payments' own numbers"
    );
}
