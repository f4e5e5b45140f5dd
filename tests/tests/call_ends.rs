//! Nothing a failed call does outlives it, read from the server itself
//! (`information_schema.INNODB_TRX`), on the core's store and on the
//! plugin's pure-PHP backend (the default on sites without the extension):
//! a call that fails inside its transaction, and a call whose deadline
//! expires while its statement waits for a lock, leave no transaction
//! behind, and the series is free for the next call at once.
//!
//! The deadline case failed before sessions bounded their lock waits: the
//! call gave up at its deadline and closed its socket, but its statement
//! went on waiting on the server (innodb_lock_wait_timeout, 50 s) holding
//! the series row, and the next allocation of the series timed out behind
//! it.

use std::time::{Duration, Instant};

use counterfoil_core::{ScopeKey, Store, StoreConfig};
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn key(s: &str) -> ScopeKey {
    ScopeKey::new(s).unwrap()
}

use counterfoil_tests::runtime;

/// Open transactions of connections to `url`'s database other than
/// `except`'s, read with the server's own client (the server is shared by
/// the tests of this process, each in a database of its own).
fn open_transactions(url: &str, except: u64) -> u64 {
    MariaDb::client_query(
        url,
        &format!(
            "SELECT COUNT(*) FROM information_schema.INNODB_TRX t \
             JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id \
             WHERE p.DB = DATABASE() AND t.trx_mysql_thread_id NOT IN ({except}, CONNECTION_ID())"
        ),
    )
    .unwrap()[0][0]
        .parse()
        .unwrap()
}

/// How long after now the server shows no open transaction but `except`'s
/// (None: still one after `bound`).
fn ends_within(url: &str, except: u64, bound: Duration) -> Option<Duration> {
    let started = Instant::now();
    loop {
        if open_transactions(url, except) == 0 {
            return Some(started.elapsed());
        }
        if started.elapsed() > bound {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Holds a gap lock on number `number` of `scope` in the registry (a
/// transaction of its own, REPEATABLE READ, the row absent): an insert of
/// that number waits for it. Returns the holder's connection and its id.
async fn hold_gap(url: &str, scope: &str, number: u64) -> (mysql_async::Conn, u64) {
    use mysql_async::prelude::Queryable;
    let mut c = mysql_async::Conn::new(mysql_async::Opts::from_url(url).unwrap())
        .await
        .unwrap();
    c.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ; START TRANSACTION")
        .await
        .unwrap();
    let _: Vec<u64> = c
        .query(format!(
            "SELECT number FROM wp_counterfoil_numbers WHERE scope_key = '{scope}' AND number = {number} FOR UPDATE"
        ))
        .await
        .unwrap();
    let id: Option<u64> = c.query_first("SELECT CONNECTION_ID()").await.unwrap();
    (c, id.unwrap())
}

/// The margin past the deadline the server may take to end the abandoned
/// statement: its lock wait is bounded by the deadline in whole seconds
/// (1 s here), measured from when the statement began, which is within the
/// call; then the server reads the closed socket and rolls back. 700 ms
/// covers that and the 20 ms polls on a loaded 2-core machine; before the
/// fix the transaction stayed 50 s.
const MARGIN: Duration = Duration::from_millis(700);

#[test]
fn a_deadline_inside_a_transaction_leaves_no_transaction_behind_core() {
    let url = MariaDb::shared().fresh_database("call_ends_core").unwrap();
    let rt = runtime();
    let config = StoreConfig::new(&url).deadline(Duration::from_secs(1));
    rt.block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        s.ensure_registry_schema().await.unwrap();
        s.initialize(&key("lw:1"), 1).await.unwrap();
        assert_eq!(s.allocate_recorded(&key("lw:1"), "api").await.unwrap(), 1);
    });
    let (holder, holder_id) = rt.block_on(hold_gap(&url, "lw:1", 2));
    let (failed, took) = rt.block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        let started = Instant::now();
        let r = s.allocate_recorded(&key("lw:1"), "api").await;
        (r, started.elapsed())
    });
    assert!(failed.is_err(), "the insert waited for the gap: {failed:?}");
    assert!(took < Duration::from_secs(1) + MARGIN, "{took:?}");
    let ended = ends_within(&url, holder_id, Duration::from_secs(1) + MARGIN);
    assert!(
        ended.is_some(),
        "the abandoned transaction still holds the series after the deadline"
    );
    // The series is free: a plain allocation gets the next number at once.
    let next = rt.block_on(async {
        let mut s = Store::connect(config.clone()).await.unwrap();
        s.allocate(&key("lw:1")).await
    });
    assert!(next.is_ok(), "{next:?}");
    rt.block_on(async {
        use mysql_async::prelude::Queryable;
        let mut holder = holder;
        holder.query_drop("ROLLBACK").await.unwrap();
        holder.disconnect().await.unwrap();
    });
    println!("core: failed after {took:?}; no transaction left {ended:?} later");
}

/// The pure-PHP backend, in one PHP process that stays alive (as a php-fpm
/// worker between requests): a call whose deadline (2 s) expires while its
/// registry row waits for a gap lock, then a call that fails inside its
/// transaction (a planted trigger refuses the registry row). After each,
/// the server shows no transaction of the process's connection.
#[test]
fn the_pure_php_backend_leaves_no_transaction_behind() {
    let wp = WordPress::install(MariaDb::shared(), "call_ends_twin", None).unwrap();
    wp.eval(
        false,
        "initialize_invoice_sequence(1, 2026, 1); echo allocate_invoice_number(1, 2026);",
    )
    .unwrap();
    let url = wp.database_url().to_owned();
    let rt = runtime();
    let (holder, holder_id) = rt.block_on(hold_gap(&url, "1:2026", 2));
    // Each case in a process of its own that checks, before it ends, what
    // the server shows of its backend's connection (still open).
    let run = |call: &str, except: u64| {
        wp.eval(
            false,
            &format!(
                "add_filter('counterfoil_timeout_ms', function () {{ return 2000; }});
                 global $wpdb;
                 $b = new Counterfoil_Php_Backend($wpdb->prefix, counterfoil_format());
                 $parsed = $wpdb->parse_db_host(DB_HOST);
                 $check = mysqli_connect($parsed[0], DB_USER, DB_PASSWORD, DB_NAME, $parsed[1] ? (int) $parsed[1] : 3306);
                 $open = function () use ($check) {{
                     return (int) $check->query('SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.DB = DATABASE() AND t.trx_mysql_thread_id NOT IN ({except}, CONNECTION_ID())')->fetch_row()[0];
                 }};
                 $started = microtime(true);
                 try {{ {call}; echo 'numbered'; }} catch (Throwable $e) {{ echo get_class($e); }}
                 printf(' %d', (microtime(true) - $started) * 1000);
                 $waited = microtime(true);
                 while ($open() > 0 && microtime(true) - $waited < 3) {{ usleep(20000); }}
                 printf(' %d %d', $open(), (microtime(true) - $waited) * 1000);"
            ),
        )
        .unwrap()
    };
    // 2 s: the pure-PHP backend connects in whole seconds and starts no
    // connect with less than one second left.
    let bound = 2000 + MARGIN.as_millis() as u64;
    // The deadline expires while the registry row waits for the gap.
    let out = run("$b->allocate_recorded('1:2026', 'api')", holder_id);
    rt.block_on(async {
        use mysql_async::prelude::Queryable;
        let mut holder = holder;
        holder.query_drop("ROLLBACK").await.unwrap();
        holder.disconnect().await.unwrap();
    });
    println!("pure-PHP backend, a deadline in a lock wait: {out}");
    let fields: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(fields.len(), 4, "{out}");
    assert!(
        fields[0].ends_with("TimeoutException"),
        "the call failed: {out}"
    );
    let took: u64 = fields[1].parse().unwrap();
    assert!(took < bound, "{out}");
    let (left, waited): (u64, u64) = (fields[2].parse().unwrap(), fields[3].parse().unwrap());
    assert_eq!(left, 0, "a transaction outlived the call: {out}");
    assert!(waited < bound, "it ended {waited} ms after the call: {out}");

    // A call that fails inside its transaction: a planted trigger refuses
    // the registry row after the series row is locked.
    MariaDb::query(
        &url,
        "CREATE TRIGGER planted_failure BEFORE INSERT ON wp_counterfoil_numbers FOR EACH ROW \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'planted failure'",
    )
    .unwrap();
    let out = run("$b->allocate_recorded('1:2026', 'api')", 0);
    MariaDb::query(&url, "DROP TRIGGER planted_failure").unwrap();
    println!("pure-PHP backend, a failure in the transaction: {out}");
    let fields: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(fields.len(), 4, "{out}");
    assert!(
        fields[0].ends_with("Exception"),
        "the planted failure: {out}"
    );
    assert_eq!(fields[2], "0", "the failed call left a transaction: {out}");
    assert!(
        fields[3].parse::<u64>().unwrap() < 100,
        "none to wait for: {out}"
    );
}
