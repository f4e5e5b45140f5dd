//! A COMMIT answered OK that kept nothing. On Galera a transaction aborted
//! by another node's write set after its last statement has been seen to
//! answer its COMMIT with OK and vanish (`galera_payments_through_every_node`
//! once: a payment told a number the cluster did not hold, the number then
//! told to the next payment). Here a proxy ([`CommitCut::arm_lie`]) makes a
//! plain MariaDB do the same on demand: it sends the COMMIT as ROLLBACK and
//! forwards the OK.
//!
//! Without confirmation (the negative control: `ConfirmCommits::Never`, the
//! filter `counterfoil_confirm_commits` 'never') the lie tells one number
//! twice. With it (`Always` here; on a Galera node it is the default) the
//! number of the lie is not told: the call fails with an unknown outcome,
//! the redelivery is numbered afresh, and no number is told twice. The core
//! (payments, one trip and several statements; recorded allocations) and the
//! pure-PHP backend alike.

use counterfoil_core::{ConfirmCommits, Error, PaymentRef, ScopeKey, SeriesStore, StoreConfig};
use counterfoil_tests::commit_cut::{database_behind_a_proxy, site_behind_a_proxy};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::MariaDb;

/// `number status` of every registry row of `scope`, in order.
fn registry(url: &str, scope: &str) -> String {
    MariaDb::scalar(
        url,
        &format!(
            "SELECT GROUP_CONCAT(CONCAT_WS(' ', number, status) ORDER BY number SEPARATOR ',') \
             FROM wp_counterfoil_numbers WHERE scope_key = '{scope}'"
        ),
    )
    .unwrap()
    .unwrap_or_default()
}

fn store(url: &str, confirm: ConfirmCommits, one_trip: bool) -> StoreConfig {
    StoreConfig::new(url)
        .confirm_commits(confirm)
        .one_trip_payments(one_trip)
}

fn unconfirmed(answer: Result<impl std::fmt::Debug, Error>) {
    match answer {
        Err(e @ Error::Unconfirmed { .. }) => {
            assert!(e.outcome_unknown(), "{e}");
            assert!(e.to_string().contains("read back"), "{e}");
        }
        other => panic!("the lie was told as a number: {other:?}"),
    }
}

#[test]
fn the_core_tells_no_number_of_a_commit_that_kept_nothing() {
    let (url, proxy, via_proxy) = database_behind_a_proxy("lie");
    let pay = |txn: &str| PaymentRef::new("lie", txn).unwrap();
    block_on(async {
        let scope = ScopeKey::new("lie:2026").unwrap();
        let mut never = SeriesStore::connect(store(&via_proxy, ConfirmCommits::Never, false))
            .await
            .unwrap();
        never.ensure_registry_schema().await.unwrap();
        never.initialize(&scope, 1).await.unwrap();

        // The negative control: told 1, kept nothing, and 1 told again.
        proxy.arm_lie(1);
        let a = never
            .record_payment(&scope, &pay("a"), None, None)
            .await
            .unwrap();
        assert_eq!(proxy.lies_left(), 0, "the COMMIT was sent as ROLLBACK");
        let b = never
            .record_payment(&scope, &pay("b"), None, None)
            .await
            .unwrap();
        assert_eq!(
            (a.number, b.number),
            (1, 1),
            "without confirmation the lie tells one number twice"
        );
        let recorded = ScopeKey::new("lie-rec:2026").unwrap();
        never.initialize(&recorded, 1).await.unwrap();
        proxy.arm_lie(1);
        let first = never.allocate_recorded(&recorded, "test").await.unwrap();
        let again = never.allocate_recorded(&recorded, "test").await.unwrap();
        assert_eq!((first, again), (1, 1), "the same, recorded");

        // Confirmed, in several statements: the lie's number is not told.
        for (one_trip, scope) in [(false, "conf:2026"), (true, "conf-trip:2026")] {
            let scope = ScopeKey::new(scope).unwrap();
            let mut s = SeriesStore::connect(store(&via_proxy, ConfirmCommits::Always, one_trip))
                .await
                .unwrap();
            s.initialize(&scope, 1).await.unwrap();
            let txn = |t: &str| pay(&format!("{t}-{one_trip}"));
            proxy.arm_lie(1);
            unconfirmed(s.record_payment(&scope, &txn("c"), None, None).await);
            assert_eq!(proxy.lies_left(), 0);
            let c = s
                .record_payment(&scope, &txn("c"), None, None)
                .await
                .unwrap();
            let d = s
                .record_payment(&scope, &txn("d"), None, None)
                .await
                .unwrap();
            assert!(c.created, "the redelivery found nothing and was numbered");
            assert_eq!(
                (c.number, d.number),
                (1, 2),
                "one trip {one_trip}: no number told twice"
            );
            proxy.arm_lie(1);
            unconfirmed(s.allocate_recorded(&scope, "test").await);
            assert_eq!(s.allocate_recorded(&scope, "test").await.unwrap(), 3);
        }
    });
    for scope in ["conf:2026", "conf-trip:2026"] {
        assert_eq!(
            registry(&url, scope),
            "1 reserved,2 reserved,3 issued",
            "{scope}: the lie left no row; every number told has one"
        );
    }
}

#[test]
fn the_php_backend_tells_no_number_of_a_commit_that_kept_nothing() {
    let (wp, proxy) = site_behind_a_proxy("lie_php");
    let pay = |when: &str, txns: &str| {
        format!(
            "add_filter('counterfoil_confirm_commits', function () {{ return '{when}'; }});
             $b = counterfoil_backend();
             echo $b->name();
             foreach (explode(',', '{txns}') as $t) {{
                 try {{ echo ' ', $b->record_payment('1:2026', 'lie', $t, '1.00', 'EUR', 2026, 1)['number']; }}
                 catch (Counterfoil\\DatabaseUnavailableException $e) {{ echo 'unconfirmed', strpos($e->getMessage(), 'read back') ? '' : ': ' . $e->getMessage(); }}
             }}
             echo ' ', $b->stats['confirmed'], '/', $b->stats['unconfirmed'];"
        )
    };
    // The negative control: told 1, kept nothing, 1 told again.
    proxy.arm_lie(1);
    let out = wp.eval(false, &pay("never", "a,b")).unwrap();
    assert_eq!(proxy.lies_left(), 0, "the COMMIT was sent as ROLLBACK");
    assert_eq!(
        out, "php 1 1 0/0",
        "without confirmation the lie tells 1 twice"
    );

    proxy.arm_lie(1);
    let out = wp.eval(false, &pay("always", "c,c,d")).unwrap();
    assert_eq!(proxy.lies_left(), 0);
    assert_eq!(
        out, "php unconfirmed 2 3 3/1",
        "the lie's number not told; the redelivery numbered afresh"
    );

    proxy.arm_lie(1);
    let out = wp
        .eval(
            false,
            "add_filter('counterfoil_confirm_commits', function () { return 'always'; });
             try { allocate_invoice_number(1, 2026); echo 'numbered'; } catch (Throwable $e) { echo get_class($e); }
             echo ' ', allocate_invoice_number(1, 2026);",
        )
        .unwrap();
    assert_eq!(proxy.lies_left(), 0);
    assert_eq!(out, "Counterfoil\\DatabaseUnavailableException 2026-0004");
    assert_eq!(
        registry(wp.database_url(), "1:2026"),
        "1 reserved,2 reserved,3 reserved,4 issued"
    );
}

/// With a node list (COUNTERFOIL_DB_NODES), every write of the site's books
/// goes to the node that holds the numbers, never through WordPress's own
/// DB_HOST (on Galera a second node: a transaction there that the writer's
/// write sets abort can answer OK and vanish). Here the list names the
/// server twice, first through a proxy that records what passes, then
/// directly: the numbers are written on the first, so a void (its chain
/// entry with it) and what a payment carried for its e-invoice pass the
/// proxy too, and the books' host is the list's first node, as the
/// extension (`Sequences::writerNode`) and the twin (its own connection)
/// each name it. (Failed before the books followed the list: the void went
/// to DB_HOST.)
fn books_on_the_numbers_node(extension: bool, name: &str) {
    let (wp, proxy) = site_behind_a_proxy(name);
    let direct = format!("127.0.0.1:{}", MariaDb::shared().port());
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!("array('127.0.0.1:{}', '{direct}')", proxy.port()),
    );
    wp.config_set("COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES", "true");
    let out = wp
        .eval(
            extension,
            "echo allocate_invoice_number(1, 2026);
             $v = counterfoil_void_number('1:2026', 1, 'entered twice');
             echo ' ', is_wp_error($v) ? $v->get_error_message() : 'void';
             Counterfoil_Documents::remember_details('books', 'b-1', array('buyer' => array('name' => 'Buyer BV'), 'lines' => null));
             echo ' ', counterfoil_backend()->name(), ' ', counterfoil_books_host() === COUNTERFOIL_DB_NODES[0] ? 'books on node 1' : 'books on ' . counterfoil_books_host();",
        )
        .unwrap();
    let void = proxy.statements_with("status = 'void'");
    assert!(
        !void.is_empty(),
        "the void went to the node that holds the numbers: {:?}",
        proxy.statements_with("counterfoil_numbers")
    );
    assert!(
        !proxy
            .statements_with("INSERT IGNORE INTO wp_counterfoil_details")
            .is_empty(),
        "what the payment carried went there too"
    );
    let backend = if extension { "extension" } else { "php" };
    assert_eq!(out, format!("2026-0001 void {backend} books on node 1"));
    assert_eq!(
        registry(wp.database_url(), "1:2026"),
        "1 void",
        "the void is kept"
    );
}

#[test]
fn the_books_are_written_on_the_node_that_holds_the_numbers_pure_php() {
    books_on_the_numbers_node(false, "books_node_php");
}

#[test]
fn the_books_are_written_on_the_node_that_holds_the_numbers_extension() {
    books_on_the_numbers_node(true, "books_node_ext");
}
