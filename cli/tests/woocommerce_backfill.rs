//! `counterfoil woocommerce backfill` against a WooCommerce site served by
//! php-fpm and nginx (the stand-in, or a real WooCommerce named by
//! COUNTERFOIL_WOOCOMMERCE): the plugin's route with a WordPress application
//! password; a dry run lists and exits 1, --execute numbers, a wrong password
//! or a plain-http address without --allow-http is an error (exit 2).

use std::process::{Command, Output};

use counterfoil_tests::woocommerce;
use counterfoil_tests::MariaDb;

fn backfill(site: &str, password: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_counterfoil"))
        .args(["woocommerce", "backfill", "--site", site, "--user", "admin"])
        .args(extra)
        .env("COUNTERFOIL_WP_APP_PASSWORD", password)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    counterfoil_tests::output_text(out)
}

#[test]
fn the_cli_lists_then_numbers_paid_orders_without_a_number() {
    let wp = woocommerce::install(MariaDb::shared(), "woo-cli").unwrap();
    // Application passwords over plain http: a local site only.
    wp.config_set("WP_ENVIRONMENT_TYPE", "'local'");
    let out = wp
        .eval(
            false,
            "foreach (wc_get_is_paid_statuses() as $s) { remove_all_actions('woocommerce_order_status_' . $s); }
             remove_all_actions('woocommerce_payment_complete');
             foreach (array(1, 2) as $i) { $id = cf_test_order('9.50'); wc_get_order($id)->payment_complete('cli-' . $i); echo $id, ' '; }
             // The administrator confirms the site's new environment type (the staging guard paused numbering).
             delete_option('counterfoil_site_identity'); Counterfoil_Site_Identity::remember();
             list($password) = WP_Application_Passwords::create_new_application_password(1, array('name' => 'counterfoil-cli'));
             echo $password;",
        )
        .unwrap();
    let parts: Vec<&str> = out.split_whitespace().collect();
    let (ids, password) = (&parts[..2], parts[2..].join(" "));
    let served = wp.serve(false, 2).unwrap();
    let site = format!("http://127.0.0.1:{}", served.port());

    let refused = backfill(&site, &password, &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("https://"), "{}", text(&refused));

    let wrong = backfill(&site, "not the password", &["--allow-http"]);
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong));

    let dry = backfill(&site, &password, &["--allow-http"]);
    let listed = text(&dry);
    println!("{listed}");
    assert_eq!(dry.status.code(), Some(1), "{listed}");
    assert!(listed.contains("2 paid order(s)"), "{listed}");
    assert!(
        listed.contains(&format!("  order {}\n", ids[0])),
        "{listed}"
    );
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        "0"
    );

    let done = backfill(&site, &password, &["--allow-http", "--execute", "--json"]);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&done.stdout).trim()).unwrap();
    let year = wp
        .eval(false, "echo counterfoil_current_period()[0];")
        .unwrap();
    assert_eq!(line["numbered"][ids[0]], format!("{year}-0001"), "{line}");
    assert_eq!(line["numbered"][ids[1]], format!("{year}-0002"), "{line}");

    let again = backfill(&site, &password, &["--allow-http"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(text(&again).contains("0 paid order(s)"), "{}", text(&again));
}
