//! The WordPress plugin on real WordPress, real MariaDB, php-fpm and nginx:
//! the PHPUnit suite on both backends, the article's table adopted, 400
//! signed callbacks from 16 concurrent clients with repeated deliveries at
//! the same moment (both backends), webhook security over HTTP, uninstall,
//! and the schema shared with the Rust core.

use std::collections::BTreeMap;

use counterfoil_core::{SeriesStore, StoreConfig};
use counterfoil_tests::burst;
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::php::repo_root;
use counterfoil_tests::webhook::deliver;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;
use serde_json::json;

fn phpunit(wp: &WordPress, extension: bool) {
    let tests = repo_root().join("wp-plugin/tests");
    let out = wp
        .php(extension)
        .arg("/usr/bin/phpunit")
        .arg("--bootstrap")
        .arg(tests.join("bootstrap.php"))
        .arg("--colors=never")
        .arg(&tests)
        .env("COUNTERFOIL_WP_DIR", wp.dir())
        .env("COUNTERFOIL_VECTORS", repo_root().join("tests/vectors"))
        .env(
            "COUNTERFOIL_EXPECT_BACKEND",
            if extension { "extension" } else { "php" },
        )
        .output()
        .expect("run phpunit");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("OK ("),
        "phpunit ({}) failed:\n{stdout}\n{}",
        if extension { "extension" } else { "pure PHP" },
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn phpunit_suite_on_both_backends() {
    let wp = WordPress::install(MariaDb::shared(), "phpunit", None).unwrap();
    phpunit(&wp, true);
    phpunit(&wp, false);
}

#[test]
fn a_site_with_the_articles_table_keeps_its_counter() {
    let wp = WordPress::install(
        MariaDb::shared(),
        "adopt",
        Some(
            "CREATE TABLE wp_invoice_sequences (scope_key VARCHAR(191) NOT NULL, current_value BIGINT UNSIGNED NOT NULL, PRIMARY KEY (scope_key)) ENGINE=InnoDB;
             INSERT INTO wp_invoice_sequences VALUES ('42:2019', 57), ('43:2019', 9);",
        ),
    )
    .unwrap();
    let rows = MariaDb::query(
        wp.database_url(),
        "SELECT scope_key, current_value FROM wp_invoice_sequences ORDER BY scope_key",
    )
    .unwrap();
    assert_eq!(rows[0], vec![Some("42:2019".into()), Some("57".into())]);
    assert_eq!(rows[1], vec![Some("43:2019".into()), Some("9".into())]);
    let out = wp
        .eval(false, "echo initialize_invoice_sequence(42, 2019, 1) ? 'created' : 'exists', ' ', allocate_invoice_number(42, 2019);")
        .unwrap();
    assert_eq!(out, "exists 2019-0058");
    let out = wp
        .eval(true, "echo allocate_invoice_number(43, 2019);")
        .unwrap();
    assert_eq!(out, "2019-0010");
}

/// 400 signed callbacks from 16 concurrent clients; a quarter of the
/// transactions delivered 2–3 times at the same moment.
fn burst_of_callbacks(extension: bool) {
    let wp = WordPress::install(
        MariaDb::shared(),
        if extension { "burst_ext" } else { "burst_php" },
        None,
    )
    .unwrap();
    wp.eval(
        false,
        "initialize_invoice_sequence(1, 2026, 1); initialize_invoice_sequence(2, 2026, 1000);",
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(extension, 4).unwrap();
    // 300 transactions: 225 delivered once, 50 twice, 25 three times = 400.
    let plan = burst::plan(300, 25, 50, &[1, 2]);
    assert_eq!(plan.iter().map(|p| p.copies).sum::<usize>(), 400);
    let answers = burst::send(site.port(), &secret, 2026, &plan, 16)
        .unwrap_or_else(|e| panic!("{e}\n{}", site.logs()));
    assert_eq!(answers.len(), 400);
    let backend = if extension { "extension" } else { "php" };
    assert!(answers.iter().all(|a| a.body["backend"] == backend));
    // Every delivery of a transaction got the same number and invoice; one created it.
    let per_txn = burst::by_transaction(&answers).unwrap();
    assert_eq!(per_txn.len(), 300);
    // No number twice in a series, and each series is contiguous.
    let mut by_series: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for a in &answers {
        if a.status == 201 {
            by_series
                .entry(a.body["scope_key"].as_str().unwrap().to_owned())
                .or_default()
                .push(a.body["sequence"].as_u64().unwrap());
        }
    }
    for (scope, numbers) in &mut by_series {
        numbers.sort();
        let start = if scope == "1:2026" { 1 } else { 1000 };
        let expect: Vec<u64> = (start..start + numbers.len() as u64).collect();
        assert_eq!(numbers, &expect, "{scope}");
    }
    // The site: one invoice per payment, registry complete, all issued.
    let check = burst::check_site(wp.database_url()).unwrap();
    assert_eq!(check.invoices, 300);
    assert!(check.is_clean(), "{check:?}");
    assert_eq!(check.not_issued(), 0, "{check:?}");
    // The chains the sixteen clients wrote at once are whole: one entry per
    // number, linked, the series' rows holding their ends.
    let chains = counterfoil_tests::chain_walk::walk_all(wp.database_url()).unwrap();
    for (scope, numbers) in &by_series {
        let chained: Vec<u64> = chains.issued[scope].iter().copied().collect();
        assert_eq!(&chained, numbers, "{scope}");
        assert_eq!(chains.entries[scope], numbers.len() as u64, "{scope}");
    }
}

#[test]
fn four_hundred_callbacks_extension_backend() {
    burst_of_callbacks(true);
}

#[test]
fn four_hundred_callbacks_pure_php_backend() {
    burst_of_callbacks(false);
}

#[test]
fn webhook_security_over_http() {
    let wp = WordPress::install(MariaDb::shared(), "security", None).unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")
        .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(false, 2).unwrap();
    let url = wp.database_url().to_owned();
    let written = || {
        MariaDb::scalar(&url, "SELECT (SELECT COUNT(*) FROM wp_counterfoil_payments) + (SELECT COUNT(*) FROM wp_counterfoil_numbers) + (SELECT COUNT(*) FROM wp_posts WHERE post_type = 'counterfoil_invoice')")
            .unwrap()
            .unwrap()
    };
    let body = br#"{"gateway":"stripe","transaction_id":"sec-1","user_id":1,"year":2026}"#;
    let port = site.port();
    let post = |headers: &[(&str, &str)], body: &[u8]| {
        counterfoil_tests::php::http(
            port,
            "POST",
            counterfoil_tests::webhook::PATH,
            headers,
            body,
        )
        .unwrap()
    };
    // Unsigned.
    assert_eq!(
        post(&[("Content-Type", "application/json")], body).status,
        401
    );
    // Wrongly signed (another secret), and a signature of another body.
    assert_eq!(
        deliver(port, "not-the-secret", body, 0).unwrap().status,
        401
    );
    let ts = counterfoil_tests::webhook::now().to_string();
    let other = counterfoil_tests::webhook::sign(&secret, &ts, b"{}");
    assert_eq!(
        post(
            &[
                ("X-Counterfoil-Timestamp", &ts),
                ("X-Counterfoil-Signature", &other)
            ],
            body
        )
        .status,
        401
    );
    // Replayed: a valid signature from 10 minutes ago, and one from the future.
    assert_eq!(deliver(port, &secret, body, 600).unwrap().status, 401);
    assert_eq!(deliver(port, &secret, body, -600).unwrap().status, 401);
    assert_eq!(written(), "0", "nothing written by refused callbacks");
    // SQL injection in the fields, and oversized or malformed bodies: 400.
    for bad in [
        json!({"gateway": "stripe' OR '1'='1", "transaction_id": "x", "user_id": 1}),
        json!({"gateway": "stripe", "transaction_id": "x", "user_id": "1; DROP TABLE wp_posts"}),
        json!({"gateway": "stripe", "transaction_id": "x", "user_id": 1, "year": "2026 OR 1=1"}),
        json!({"gateway": "stripe", "transaction_id": "x", "user_id": 1, "amount": "0 UNION SELECT user_pass FROM wp_users"}),
        json!({"gateway": "stripe", "transaction_id": "x", "user_id": 1, "currency": "'; --"}),
        json!({"gateway": "stripe", "transaction_id": " x", "user_id": 1}),
        json!(["not", "an", "object"]),
    ] {
        let r = deliver(port, &secret, bad.to_string().as_bytes(), 0).unwrap();
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }
    let huge = format!(
        r#"{{"gateway":"stripe","transaction_id":"big","user_id":1,"pad":"{}"}}"#,
        "x".repeat(70_000)
    );
    assert_eq!(
        deliver(port, &secret, huge.as_bytes(), 0).unwrap().status,
        400
    );
    assert_eq!(deliver(port, &secret, b"{not json", 0).unwrap().status, 400);
    assert_eq!(written(), "0", "nothing written by invalid callbacks");
    // A quoted transaction id is data: stored verbatim, no injection.
    let quoted = json!({"gateway": "stripe", "transaction_id": "x'); DROP TABLE wp_posts; --", "user_id": 1, "year": 2026});
    let r = deliver(port, &secret, quoted.to_string().as_bytes(), 0).unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        MariaDb::scalar(&url, "SELECT transaction_id FROM wp_counterfoil_payments").unwrap(),
        Some("x'); DROP TABLE wp_posts; --".into())
    );
    // A series that does not exist is never a 400: under the default
    // `create` plan it is created and the payment numbered from 1.
    let r = deliver(
        port,
        &secret,
        br#"{"gateway":"stripe","transaction_id":"t9","user_id":9,"year":2026}"#,
        0,
    )
    .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.body.contains(r#""number":"2026-0001""#), "{}", r.body);
    // The database unavailable: 503 with Retry-After.
    MariaDb::shared()
        .exec(
            wp.database(),
            "RENAME TABLE wp_invoice_sequences TO wp_invoice_sequences_away",
        )
        .unwrap();
    let r = deliver(
        port,
        &secret,
        br#"{"gateway":"stripe","transaction_id":"t10","user_id":1,"year":2026}"#,
        0,
    )
    .unwrap();
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.header("Retry-After"), vec!["5"]);
    MariaDb::shared()
        .exec(
            wp.database(),
            "RENAME TABLE wp_invoice_sequences_away TO wp_invoice_sequences",
        )
        .unwrap();
}

/// The site checker every burst test ends with can fail: on a clean site
/// of five invoices it holds; a second invoice post carrying a number
/// already issued is a duplicate; a registry row deleted (a number handed
/// out with no trace) is an unexplained gap; a counter raised past the
/// registry is one too.
#[test]
fn the_site_check_finds_a_planted_duplicate_a_second_invoice_and_a_planted_gap() {
    let wp = WordPress::install(MariaDb::shared(), "sitecheck", None).unwrap();
    wp.eval(
        false,
        "initialize_invoice_sequence(1, 2026, 1);
         for ($i = 1; $i <= 5; $i++) { counterfoil_create_invoice_for_payment(['gateway'=>'stripe','transaction_id'=>\"sc$i\",'user_id'=>1,'year'=>2026]); }",
    )
    .unwrap();
    let url = wp.database_url();
    let clean = burst::check_site(url).unwrap();
    assert_eq!(clean.invoices, 5);
    assert!(clean.is_clean() && clean.not_issued() == 0, "{clean:?}");

    // A second post with invoice 3's series and number.
    wp.eval(
        false,
        "$src = get_posts(['post_type' => 'counterfoil_invoice', 'meta_key' => '_counterfoil_number', 'meta_value' => '3', 'fields' => 'ids'])[0];
         $id = wp_insert_post(['post_type' => 'counterfoil_invoice', 'post_status' => 'publish', 'post_title' => 'copy']);
         foreach (['_counterfoil_scope_key', '_counterfoil_number'] as $k) { add_post_meta($id, $k, get_post_meta($src, $k, true)); }",
    )
    .unwrap();
    let duplicated = burst::check_site(url).unwrap();
    assert_eq!(duplicated.duplicate_numbers, 1, "{duplicated:?}");
    assert!(!duplicated.is_clean());
    MariaDb::query(url, "DELETE FROM wp_postmeta WHERE post_id = (SELECT MAX(ID) FROM wp_posts WHERE post_title = 'copy')").unwrap();
    assert!(burst::check_site(url).unwrap().is_clean());

    // A second invoice of one payment: another number's post that names
    // payment sc2's transaction (what two racing callbacks would make).
    wp.eval(
        false,
        "$id = wp_insert_post(['post_type' => 'counterfoil_invoice', 'post_status' => 'publish', 'post_title' => 'second']);
         add_post_meta($id, '_counterfoil_transaction_id', 'sc2');",
    )
    .unwrap();
    let twice = burst::check_site(url).unwrap();
    assert_eq!(twice.transactions_with_several_invoices, 1, "{twice:?}");
    assert!(!twice.is_clean());
    MariaDb::query(url, "DELETE FROM wp_postmeta WHERE post_id = (SELECT MAX(ID) FROM wp_posts WHERE post_title = 'second')").unwrap();
    assert!(burst::check_site(url).unwrap().is_clean());

    // Number 4's registry row gone: 1..5 handed out, 4 rows.
    MariaDb::query(url, "DELETE FROM wp_counterfoil_numbers WHERE number = 4").unwrap();
    let holed = burst::check_site(url).unwrap();
    assert_eq!(holed.registry_holes(), 1, "{holed:?}");
    assert!(!holed.is_clean());

    // The counter raised past the registry: 6 passed, no row.
    MariaDb::query(url, "INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, created_at, updated_at) SELECT scope_key, 4, 'issued', 'payment', NOW(), NOW() FROM wp_invoice_sequences").unwrap();
    assert!(burst::check_site(url).unwrap().is_clean());
    MariaDb::query(
        url,
        "UPDATE wp_invoice_sequences SET current_value = current_value + 1",
    )
    .unwrap();
    let skipped = burst::check_site(url).unwrap();
    assert_eq!(skipped.registry_holes(), 1, "{skipped:?}");
    assert!(!skipped.is_clean());
}

#[test]
fn uninstall_keeps_the_data_unless_the_owner_opted_in() {
    let wp = WordPress::install(MariaDb::shared(), "uninstall", None).unwrap();
    let uninstall = "define('WP_UNINSTALL_PLUGIN', 'counterfoil/counterfoil.php'); include WP_PLUGIN_DIR . '/counterfoil/uninstall.php';";
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1); counterfoil_create_invoice_for_payment(['gateway'=>'stripe','transaction_id'=>'u1','user_id'=>1,'year'=>2026]); update_option('counterfoil_format', 'INV-{year}-{seq:05}'); update_option('counterfoil_missing_series', 'hold'); update_option(Counterfoil_Stripe::SECRET_OPTION, 'whsec_kept_nowhere'); set_transient('counterfoil_notice_1', array('error', 'database error at db.internal'), 60);")
        .unwrap();
    // Another plugin's uninstall lifts no protection: an invoice cannot be
    // deleted while it runs (before, WP_UNINSTALL_PLUGIN alone let it go).
    let out = wp
        .eval(
            false,
            "define('WP_UNINSTALL_PLUGIN', 'hello.php');
             $id = (int) $GLOBALS['wpdb']->get_var(\"SELECT ID FROM wp_posts WHERE post_type = 'counterfoil_invoice'\");
             var_export(wp_delete_post($id, true)); echo ' ', get_post_status($id);",
        )
        .unwrap();
    assert_eq!(out, "false publish", "the invoice stays");
    // Credentials and notices go at every uninstall, whatever the owner
    // chose (read before the plugin, loaded again, makes a new secret).
    let out = wp
        .eval(
            false,
            &format!(
                "{uninstall} var_export(array(get_option('counterfoil_webhook_secret'), get_option(Counterfoil_Stripe::SECRET_OPTION), get_transient('counterfoil_notice_1')));"
            ),
        )
        .unwrap();
    assert_eq!(
        out.split_whitespace().collect::<String>(),
        "array(0=>false,1=>false,2=>false,)",
        "no secret outlives the plugin"
    );
    // The format and the series settings stay with the data they numbered.
    assert_eq!(
        wp.eval(
            false,
            "echo get_option('counterfoil_format'), ' ', get_option('counterfoil_missing_series');"
        )
        .unwrap(),
        "INV-{year}-{seq:05} hold"
    );
    let tables = |wp: &WordPress| {
        MariaDb::scalar(wp.database_url(), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('wp_invoice_sequences','wp_counterfoil_numbers','wp_counterfoil_payments','wp_counterfoil_chain')").unwrap().unwrap()
    };
    let invoices = |wp: &WordPress| {
        MariaDb::scalar(
            wp.database_url(),
            "SELECT COUNT(*) FROM wp_posts WHERE post_type = 'counterfoil_invoice'",
        )
        .unwrap()
        .unwrap()
    };
    assert_eq!(tables(&wp), "4", "kept by default");
    assert_eq!(invoices(&wp), "1");
    wp.eval(
        false,
        "update_option('counterfoil_delete_data_on_uninstall', 1);",
    )
    .unwrap();
    wp.eval(false, uninstall).unwrap();
    assert_eq!(tables(&wp), "0", "deleted when the owner opted in");
    assert_eq!(invoices(&wp), "0");
    assert_eq!(
        wp.eval(false, "var_export(get_option('counterfoil_format'));")
            .unwrap(),
        "false"
    );
    // Every option of ours went, read in the uninstall's own process (the
    // plugin, loaded again, would write some anew).
    let out = wp
        .eval(
            false,
            &format!(
                "update_option('counterfoil_delete_data_on_uninstall', 1); update_option(Counterfoil_Stripe::ACCOUNT_OPTION, 'acct_1'); {uninstall} \
                 echo $GLOBALS['wpdb']->get_var(\"SELECT COUNT(*) FROM wp_options WHERE option_name LIKE 'counterfoil\\\\_%'\");"
            ),
        )
        .unwrap();
    assert_eq!(out, "0", "every counterfoil_ option deleted");
}

#[test]
fn the_plugin_and_the_core_create_the_same_tables() {
    let wp = WordPress::install(MariaDb::shared(), "parity", None).unwrap();
    let core_url = MariaDb::shared().fresh_database("parity_core").unwrap();
    block_on(async {
        let mut s = SeriesStore::connect(StoreConfig::new(&core_url))
            .await
            .unwrap();
        s.ensure_registry_schema().await.unwrap();
    });
    for table in [
        "wp_invoice_sequences",
        "wp_counterfoil_numbers",
        "wp_counterfoil_payments",
        "wp_counterfoil_chain",
    ] {
        let show = |url: &str| {
            let rows = MariaDb::query(url, &format!("SHOW CREATE TABLE {table}")).unwrap();
            let ddl = rows[0][1].clone().unwrap();
            // AUTO_INCREMENT counters differ by use, not by definition.
            ddl.split_whitespace()
                .filter(|w| !w.starts_with("AUTO_INCREMENT="))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(show(wp.database_url()), show(&core_url), "{table}");
    }
}

/// A host's staging copy (issue 28): the copy of the database, served at
/// another address, holds its payments (recorded, 503, no number taken from
/// any series) while the live site goes on numbering; an admin's
/// confirmation on the copy ("this site moved") resumes numbering there.
#[test]
fn a_staging_copy_takes_no_live_number_until_the_move_is_confirmed() {
    let live = WordPress::install(MariaDb::shared(), "staging_live", None).unwrap();
    let secret = live.webhook_secret().unwrap();
    let payment = |txn: &str| {
        json!({"gateway": "stripe", "transaction_id": txn, "user_id": 7, "amount": "10.00", "currency": "EUR"})
            .to_string()
    };
    let live_site = live.serve(false, 2).unwrap();
    let r = deliver(
        live_site.port(),
        &secret,
        payment("pi_before").as_bytes(),
        0,
    )
    .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);

    let copy = live
        .copy_to(
            MariaDb::shared(),
            "staging_copy",
            "https://staging.example.com",
        )
        .unwrap();
    let counters = || {
        copy.scalar("SELECT GROUP_CONCAT(scope_key, '=', current_value) FROM wp_invoice_sequences")
    };
    for extension in [false, true] {
        let site = copy.serve(extension, 2).unwrap();
        let before = counters();
        let txn = format!("pi_on_the_copy_{extension}");
        let r = deliver(site.port(), &secret, payment(&txn).as_bytes(), 0).unwrap();
        assert_eq!(r.status, 503, "{}", r.body);
        // The reason (addresses, database names) is the site's own: the
        // sender gets the code and a request id, the log the reason.
        assert!(
            r.body.contains("counterfoil_numbering_paused")
                && r.body.contains("request_id")
                && !r.body.contains("staging.example.com"),
            "{}",
            r.body
        );
        if !extension {
            // Logged once per cause (the first site of the loop).
            let logs = site.logs();
            assert!(
                logs.contains("numbering is paused: ") && logs.contains("staging.example.com"),
                "{logs}"
            );
        }
        assert!(
            r.headers.iter().any(|h| h.starts_with("Retry-After")),
            "{:?}",
            r.headers
        );
        assert_eq!(counters(), before, "the copy took a number");
        assert_eq!(
            copy.scalar(&format!("SELECT CONCAT(COUNT(*), ' ', COALESCE(MAX(number), 'none')) FROM wp_counterfoil_payments WHERE transaction_id = '{txn}'")),
            "1 none",
            "recorded without a number"
        );
        // The payment numbered before the copy is still answered with its invoice.
        let r = deliver(site.port(), &secret, payment("pi_before").as_bytes(), 0).unwrap();
        assert_eq!(r.status, 200, "{}", r.body);
        // Every other path that takes a number is paused too: the
        // article's allocate_invoice_number() (the plugin's function, and
        // the extension's own, told by its option `paused`), and a refund's
        // credit note for the invoice numbered before the copy.
        let out = copy
            .eval(
                extension,
                &format!(
                    "try {{ echo allocate_invoice_number(7, 2026); }} catch (Throwable $e) {{ echo get_class($e), ': ', $e->getMessage(); }}
                     echo \"\\n\";
                     $note = counterfoil_create_credit_note_for_refund(array('gateway' => 'stripe', 'refund_id' => 're_copy_{extension}', 'transaction_id' => 'pi_before', 'amount' => '1.00'));
                     echo is_wp_error($note) ? $note->get_error_code() : 'credit note ' . $note->post_title;"
                ),
            )
            .unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("Counterfoil\\DatabaseUnavailableException: ")
                && lines[0].contains("numbering is paused")
                && lines[0].contains("staging.example.com"),
            "extension {extension}: {out}"
        );
        assert_eq!(
            lines[1], "counterfoil_numbering_paused",
            "extension {extension}: {out}"
        );
        assert_eq!(counters(), before, "the copy took a number");
    }
    // Meanwhile the live site numbers on.
    let r = deliver(
        live_site.port(),
        &secret,
        payment("pi_live_after").as_bytes(),
        0,
    )
    .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);

    // On the copy, an admin confirms the move: numbering resumes there, and
    // the held payments are completed.
    let out = copy
        .eval(
            false,
            "wp_set_current_user(get_user_by('login', 'admin')->ID); \
             $_POST = array('_wpnonce' => wp_create_nonce(Counterfoil_Site_Identity::ACTION)); \
             add_filter('wp_redirect', function () { throw new Exception('redirected'); }); \
             try { Counterfoil_Site_Identity::handle_confirm(); } catch (Exception $e) { echo $e->getMessage(), ' '; } \
             echo json_encode(Counterfoil_Invoices::complete_waiting());",
        )
        .unwrap();
    assert!(out.starts_with("redirected {\"completed\":2"), "{out}");
    let site = copy.serve(false, 2).unwrap();
    let r = deliver(site.port(), &secret, payment("pi_after_move").as_bytes(), 0).unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
}
