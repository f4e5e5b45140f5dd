//! The plugin's settings page in a real browser: Debian's headless Chromium
//! driven by playwright-core (tests/browser/settings.mjs) against WordPress
//! served by php-fpm and nginx. Screenshots go to target/screenshots/.

use counterfoil_tests::browser;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

#[test]
fn settings_page_create_advance_and_refuse_lower() {
    let wp = WordPress::install(MariaDb::shared(), "browser", None).unwrap();
    let site = wp.serve(true, 2).unwrap();
    let out = browser::run("settings.mjs", &site).unwrap_or_else(|e| panic!("{e}"));
    println!("{out}");
    assert!(counterfoil_tests::target_dir()
        .join("screenshots/settings-refusal.png")
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
