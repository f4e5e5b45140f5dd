//! The plugin's settings page in a real browser: Debian's headless Chromium
//! driven by playwright-core (tests/browser/settings.mjs) against WordPress
//! served by php-fpm and nginx. Screenshots go to target/screenshots/<script>/.

use counterfoil_tests::browser;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

#[test]
fn settings_page_create_advance_and_refuse_lower() {
    let wp = WordPress::install(MariaDb::shared(), "browser", None).unwrap();
    let site = wp.serve(true, 2).unwrap();
    let out = browser::run("settings.mjs", &site).unwrap_or_else(|e| panic!("{e}"));
    println!("{out}");
    assert!(browser::screenshots_of("settings.mjs")
        .join("settings-refusal.png")
        .exists());
    // What the browser did is what the database holds.
    assert_eq!(
        MariaDb::scalar(
            wp.database_url(),
            "SELECT CONCAT(current_value, '/', start_value) FROM wp_invoice_sequences WHERE scope_key = '1:2026'"
        )
        .unwrap(),
        Some("199/2".into())
    );
}

/// The settings that govern a series' life, in the browser: payments waiting
/// for a series listed, the setting saved, next year's series created ahead
/// with an edited start number, the waiting payments completed.
#[test]
fn settings_page_series_life() {
    let wp = WordPress::install(MariaDb::shared(), "browser_life", None).unwrap();
    let year: u32 = wp
        .eval(false, "echo counterfoil_local_period()[0];")
        .unwrap()
        .parse()
        .unwrap();
    wp.eval(
        false,
        &format!(
            "update_option('counterfoil_missing_series', 'hold');
             initialize_invoice_sequence(1, {year}, 1);
             initialize_invoice_sequence(2, {year}, 1);
             foreach (array(1, 1, 1) as $u) {{ allocate_invoice_number($u, {year}); }}"
        ),
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(false, 2).unwrap();
    for txn in ["wait-1", "wait-2"] {
        let body = format!(
            r#"{{"gateway":"stripe","transaction_id":"{txn}","user_id":5,"amount":"7.00","currency":"EUR"}}"#
        );
        let r =
            counterfoil_tests::webhook::deliver(site.port(), &secret, body.as_bytes(), 0).unwrap();
        assert_eq!(r.status, 503, "{}", r.body);
    }
    let out = browser::run("series-life.mjs", &site).unwrap_or_else(|e| panic!("{e}"));
    println!("{out}");
    let url = wp.database_url();
    let q = |sql: &str| MariaDb::scalar(url, sql).unwrap().unwrap_or_default();
    assert_eq!(
        wp.eval(false, "echo get_option('counterfoil_missing_series');")
            .unwrap(),
        "continue"
    );
    assert_eq!(
        q(&format!(
            "SELECT start_value FROM wp_invoice_sequences WHERE scope_key = '1:{}'",
            year + 1
        )),
        "5000"
    );
    assert_eq!(
        q("SELECT GROUP_CONCAT(number ORDER BY id) FROM wp_counterfoil_payments"),
        "1,2"
    );
    let check = counterfoil_tests::burst::check_site(url).unwrap();
    assert!(check.is_clean() && check.not_issued() == 0, "{check:?}");
}

/// Invoices → Issue credit note in the browser: the row action, the form, the
/// refusal of more than what is left, the lists (tests/browser/credit-note.mjs).
#[test]
fn credit_note_page_issues_and_refuses_more_than_is_left() {
    let wp = WordPress::install(MariaDb::shared(), "browser_cn", None).unwrap();
    wp.eval(
        false,
        "$p = counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => 'pi_browser_cn', \
         'user_id' => 1, 'amount' => '20.00', 'currency' => 'EUR')); if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }",
    )
    .unwrap();
    let site = wp.serve(false, 2).unwrap();
    let out = browser::run("credit-note.mjs", &site).unwrap_or_else(|e| panic!("{e}"));
    println!("{out}");
    let number = out
        .lines()
        .find_map(|l| l.strip_prefix("CREDIT_NOTE "))
        .expect("the script names the credit note");
    // What the browser did is what the database holds.
    assert_eq!(
        MariaDb::scalar(
            wp.database_url(),
            "SELECT CONCAT(p.post_title, ' ', pay.amount, ' ', pay.reason, ' ', pay.refers_number) \
             FROM wp_counterfoil_payments pay JOIN wp_posts p ON p.ID = pay.post_id WHERE pay.refers_scope IS NOT NULL"
        )
        .unwrap(),
        Some(format!("{number} 7.50 damaged in transit 1"))
    );
}
