//! What the accountant opens, on real WordPress: the invoice list sorts
//! numbers numerically and finds a payment by its transaction id; each screen
//! in a real browser, with screenshots. (The export's test, CLI against
//! plugin, is `mysql-tools/tests/export.rs`.)

use counterfoil_tests::browser;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::wp_session::Session;
use counterfoil_tests::MariaDb;

/// A site with two series: 5:2026 crossing 9999 → 10000 (for the numeric
/// order), and 6:2026 with a void number whose reason a spreadsheet would run.
pub fn site(name: &str) -> WordPress {
    let wp = WordPress::install(MariaDb::shared(), name, None).unwrap();
    wp.eval(
        false,
        "initialize_invoice_sequence(5, 2026, 9998);
         initialize_invoice_sequence(6, 2026, 1);
         foreach (array(5, 5, 5, 6, 6, 6) as $i => $u) {
             $p = counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => \"books-$i\",
                 'user_id' => $u, 'year' => 2026, 'amount' => '12.50', 'currency' => 'EUR'));
             if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }
         }
         counterfoil_void_number('6:2026', 2, '=SUM(A1:A9), then \"quoted\"');",
    )
    .unwrap();
    wp
}

#[test]
fn the_invoice_list_sorts_numerically_and_finds_a_transaction() {
    let wp = site("books_list");
    let site = wp.serve(false, 2).unwrap();
    let admin = Session::login(site.port(), "admin", "admin-password").unwrap();
    let list = admin
        .get("/wp-admin/edit.php?post_type=counterfoil_invoice&scope=5:2026")
        .unwrap()
        .body;
    let at = |t: &str| {
        list.find(&format!(">{t}<"))
            .unwrap_or_else(|| panic!("{t} not listed"))
    };
    assert!(
        at("2026-9998") < at("2026-9999") && at("2026-9999") < at("2026-10000"),
        "numeric order"
    );
    assert!(
        !list.contains(">2026-0001<"),
        "the series filter keeps other series out"
    );
    let found = admin
        .get("/wp-admin/edit.php?post_type=counterfoil_invoice&s=books-4")
        .unwrap()
        .body;
    assert!(
        found.contains(">2026-0002<") && !found.contains(">2026-0001<"),
        "search by transaction id"
    );
    let void = admin
        .get("/wp-admin/edit.php?post_type=counterfoil_invoice&status=void")
        .unwrap()
        .body;
    assert!(
        void.contains(">2026-0002<") && !void.contains(">2026-0003<"),
        "status filter"
    );
    for column in [
        "Issuer",
        "Amount",
        "Payment",
        "Status",
        "12.50 EUR",
        "stripe / books-0",
    ] {
        assert!(list.contains(column), "the list shows {column}");
    }
}

#[test]
fn the_books_in_a_browser() {
    let wp = site("books_browser");
    wp.eval(
        false,
        "global $wpdb; $wpdb->query(\"DELETE FROM wp_counterfoil_numbers WHERE scope_key = '6:2026' AND number = 1\");",
    )
    .unwrap();
    let site = wp.serve(false, 2).unwrap();
    let out = browser::run("books.mjs", &site).unwrap_or_else(|e| panic!("{e}"));
    println!("{out}");
    for shot in [
        "books-series",
        "books-registry",
        "books-invoices",
        "books-dashboard",
    ] {
        assert!(counterfoil_tests::target_dir()
            .join(format!("screenshots/{shot}.png"))
            .exists());
    }
}
