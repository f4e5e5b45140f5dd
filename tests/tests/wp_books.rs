//! What the accountant opens, on real WordPress: the invoice list sorts
//! numbers numerically and finds a payment by its transaction id; each screen
//! in a real browser, with screenshots. (The export's test, CLI against
//! plugin, is `cli/tests/export.rs`.)

use counterfoil_tests::browser;
use counterfoil_tests::wordpress::books_site;
use counterfoil_tests::wp_session::Session;
use counterfoil_tests::MariaDb;

#[test]
fn the_invoice_list_sorts_numerically_and_finds_a_transaction() {
    let wp = books_site(MariaDb::shared(), "books_list").unwrap();
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
    let wp = books_site(MariaDb::shared(), "books_browser").unwrap();
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
        assert!(browser::screenshots_of("books.mjs")
            .join(format!("{shot}.png"))
            .exists());
    }
}
