//! The plugin's settings page in a real browser: Debian's headless Chromium
//! driven by playwright-core (tests/browser/settings.mjs) against WordPress
//! served by php-fpm and nginx. Screenshots go to target/screenshots/.

use std::process::Command;

use counterfoil_tests::php::repo_root;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

#[test]
fn settings_page_create_advance_and_refuse_lower() {
    let browser_dir = repo_root().join("tests/browser");
    assert!(
        browser_dir.join("node_modules/playwright-core").exists(),
        "run `npm ci` in tests/browser (./scripts/test does)"
    );
    let wp = WordPress::install(MariaDb::shared(), "browser", None).unwrap();
    let site = wp.serve(true, 2).unwrap();
    let shots = counterfoil_tests::target_dir().join("screenshots");
    let out = Command::new("node")
        .arg(browser_dir.join("settings.mjs"))
        .arg(site.base_url())
        .arg(&shots)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "browser test failed:\n{stdout}\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        site.logs()
    );
    assert!(shots.join("settings-refusal.png").exists());
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
