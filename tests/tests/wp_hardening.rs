//! The plugin as a security reviewer reads it, over real HTTP (php-fpm +
//! nginx, real WordPress): who may see, retitle, trash or delete an invoice;
//! what uninstall removes.

use counterfoil_tests::webhook::deliver;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::wp_session::Session;
use counterfoil_tests::MariaDb;

/// The newest WordPress (major.minor) every WordPress suite passed on, with
/// `COUNTERFOIL_WORDPRESS` naming it (2026-12-06: 7.1.0): readme.txt's
/// "Tested up to".
const NEWEST_WORDPRESS_PASSED: &str = "7.1";

/// WordPress's refusal page: "Sorry, you are not allowed …" (post.php answers
/// it with status 500 for an edit, 403 elsewhere).
fn refused(r: &counterfoil_tests::php::Response, what: &str) {
    assert!(
        matches!(r.status, 403 | 500) && r.body.contains("Sorry, you are not allowed"),
        "{what}: {} {}",
        r.status,
        r.body.split("<body").nth(1).unwrap_or(&r.body)
    );
}

/// Editors, authors (the issuer of the invoice included) and contributors
/// never see the invoice list, open an invoice, or trash one — even with a
/// valid nonce; the administrator sees the list with "Void with a reason…"
/// and no edit or trash link, and cannot trash either.
#[test]
fn only_the_granted_roles_see_invoices_and_nobody_trashes_one() {
    let wp = WordPress::install(MariaDb::shared(), "roles", None).unwrap();
    let ids = wp
        .eval(
            false,
            "$ids = array();
             foreach (array('editor', 'author', 'contributor') as $r) {
                 $ids[] = wp_insert_user(array('user_login' => $r, 'user_pass' => $r . '-password', 'role' => $r));
             }
             initialize_invoice_sequence($ids[1], 2026, 1);
             $p = counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => 'roles-1',
                 'user_id' => $ids[1], 'year' => 2026));
             echo $p->ID, ' ', implode(' ', $ids);",
        )
        .unwrap();
    let ids: Vec<u64> = ids.split(' ').map(|s| s.parse().unwrap()).collect();
    let (post, author_id) = (ids[0], ids[2]);
    let site = wp.serve(false, 2).unwrap();
    let list = "/wp-admin/edit.php?post_type=counterfoil_invoice";
    let edit = format!("/wp-admin/post.php?post={post}&action=edit");
    for role in ["editor", "author", "contributor"] {
        let s = Session::login(site.port(), role, &format!("{role}-password")).unwrap();
        let r = s.get(list).unwrap();
        assert_eq!(
            r.status,
            403,
            "{role} opened the invoice list: {}",
            &r.body[..r.body.len().min(300)]
        );
        refused(
            &s.get(&edit).unwrap(),
            &format!("{role} opened the invoice for editing"),
        );
    }
    // The issuer, with a valid trash nonce for their own session.
    let author = Session::login(site.port(), "author", "author-password").unwrap();
    let nonce = wp
        .eval(
            false,
            &format!(
                "echo substr(wp_hash(wp_nonce_tick() . '|trash-post_{post}|{author_id}|{}', 'nonce'), -12, 10);",
                author.token()
            ),
        )
        .unwrap();
    let r = author
        .get(&format!(
            "/wp-admin/post.php?post={post}&action=trash&_wpnonce={nonce}"
        ))
        .unwrap();
    assert!(
        !r.body.contains("link you followed has expired"),
        "the nonce must be valid, so that the refusal is the capability's"
    );
    refused(&r, "the issuer trashed their invoice");
    // The administrator sees the list, without edit or trash, with "Void with a reason…".
    let admin = Session::login(site.port(), "admin", "admin-password").unwrap();
    let r = admin.get(list).unwrap();
    assert_eq!(r.status, 200);
    assert!(r.body.contains("2026-0001"), "the number is listed");
    assert!(r.body.contains("Void with a reason"), "void is offered");
    assert!(!r.body.contains("action=trash"), "no trash link");
    assert!(
        !r.body.contains(&format!("post={post}&amp;action=edit")),
        "no edit link"
    );
    refused(
        &admin.get(&edit).unwrap(),
        "not even the administrator retitles an invoice",
    );
    let status = MariaDb::scalar(
        wp.database_url(),
        &format!("SELECT CONCAT(p.post_status, ' ', p.post_title, ' ', n.status) FROM wp_posts p JOIN wp_counterfoil_numbers n ON n.post_id = p.ID WHERE p.ID = {post}"),
    )
    .unwrap();
    assert_eq!(status.as_deref(), Some("publish 2026-0001 issued"));
}

/// Uninstall with the owner's opt-in removes our posts and tables only: an
/// adopted sequences table (there before us) stays with its rows, and another
/// plugin's `invoice` posts stay.
#[test]
fn uninstall_deletes_only_what_is_ours() {
    let wp = WordPress::install(
        MariaDb::shared(),
        "uninstall_ours",
        Some(
            "CREATE TABLE wp_invoice_sequences (scope_key VARCHAR(191) NOT NULL, current_value BIGINT UNSIGNED NOT NULL, PRIMARY KEY (scope_key)) ENGINE=InvoDB;",
        ),
    );
    assert!(
        wp.is_err(),
        "a typo in the engine name must fail the set-up"
    );
    let wp = WordPress::install(
        MariaDb::shared(),
        "uninstall_ours",
        Some(
            "CREATE TABLE wp_invoice_sequences (scope_key VARCHAR(191) NOT NULL, current_value BIGINT UNSIGNED NOT NULL, PRIMARY KEY (scope_key)) ENGINE=InnoDB;
             INSERT INTO wp_invoice_sequences VALUES ('1:2026', 40);",
        ),
    )
    .unwrap();
    wp.eval(
        false,
        "counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => 'u-1', 'user_id' => 1, 'year' => 2026));
         wp_insert_post(array('post_type' => 'invoice', 'post_status' => 'publish', 'post_title' => 'INV-7 of another plugin'));
         update_option('counterfoil_delete_data_on_uninstall', 1);
         define('WP_UNINSTALL_PLUGIN', 'counterfoil/counterfoil.php');
         include WP_PLUGIN_DIR . '/counterfoil/uninstall.php';",
    )
    .unwrap();
    let q = |sql: &str| wp.scalar(sql);
    assert_eq!(
        q("SELECT GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('wp_invoice_sequences','wp_counterfoil_numbers','wp_counterfoil_payments')"),
        "wp_invoice_sequences"
    );
    assert_eq!(
        q("SELECT current_value FROM wp_invoice_sequences WHERE scope_key = '1:2026'"),
        "41"
    );
    assert_eq!(
        q("SELECT COUNT(*) FROM wp_posts WHERE post_type = 'counterfoil_invoice'"),
        "0"
    );
    assert_eq!(
        q("SELECT post_title FROM wp_posts WHERE post_type = 'invoice'"),
        "INV-7 of another plugin"
    );
}

/// The mu-plugin of the phase-2 test: between the claim and the post insert
/// of a `kill-…` payment, KILLs `$wpdb`'s connection (which reconnects and
/// re-runs statements on its own) and waits until the repeated delivery has
/// met the claim: the repeat's own `counterfoil_claim_busy` writes the
/// `.met` mark (at most 20 s; before, a half-second sleep was assumed to be
/// enough).
const KILL_WPDB: &str = r#"<?php
add_action('counterfoil_before_invoice_post', function ($record, $payment) {
    if (strpos($payment['transaction_id'], 'kill-') !== 0) {
        return;
    }
    global $wpdb;
    $id = (int) $wpdb->get_var('SELECT CONNECTION_ID()');
    list($host, $port) = $wpdb->parse_db_host(DB_HOST);
    $killer = new mysqli($host, DB_USER, DB_PASSWORD, DB_NAME, (int) $port);
    $killer->query("KILL $id");
    $mark = getenv('COUNTERFOIL_KILL_MARK');
    file_put_contents($mark, "killed $id\n", FILE_APPEND);
    $waited = microtime(true);
    while (!file_exists("$mark.met") && microtime(true) - $waited < 20) {
        usleep(5000);
    }
}, 10, 2);
add_action('counterfoil_claim_busy', function () {
    $mark = getenv('COUNTERFOIL_KILL_MARK');
    if (!file_exists("$mark.met")) {
        file_put_contents("$mark.met", "met\n");
    }
});
"#;

/// Phase 2 cannot create two posts for one number: `$wpdb`'s connection is
/// KILLed between the claim and the insert while a repeated delivery of the
/// same payment arrives; both deliveries get the same invoice, and exactly
/// one post exists. Before the claim (a `SELECT … FOR UPDATE` on `$wpdb`),
/// the KILL released the lock and the repeat created a second post.
fn killed_wpdb_between_claim_and_insert(extension: bool) {
    let wp = WordPress::install(
        MariaDb::shared(),
        if extension { "kill_ext" } else { "kill_php" },
        None,
    )
    .unwrap();
    wp.mu_plugin("counterfoil-test-kill", KILL_WPDB).unwrap();
    let mark = wp.dir().join("kill-mark");
    let secret = wp.webhook_secret().unwrap();
    let site = wp
        .serve_with_env(
            extension,
            4,
            &[("COUNTERFOIL_KILL_MARK", mark.display().to_string())],
        )
        .unwrap();
    let body = br#"{"gateway":"stripe","transaction_id":"kill-1","user_id":1,"year":2026}"#;
    let port = site.port();
    let (first, repeat) = std::thread::scope(|s| {
        let first = s.spawn(|| {
            let r = deliver(port, &secret, body, 0).unwrap();
            (r, std::time::Instant::now())
        });
        // The repeat arrives while the first holds the claim with its $wpdb killed.
        let started = std::time::Instant::now();
        while !mark.exists() && started.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::fs::write(mark.with_extension("repeat"), "sent").unwrap();
        let sent = std::time::Instant::now();
        let repeat = deliver(port, &secret, body, 0).unwrap();
        let (first, answered) = first.join().unwrap();
        // Proven, not assumed: the repeat was sent while the first delivery
        // was still held between its claim and its post, and met its claim
        // (its own busy hook wrote the mark the first one waited for).
        assert!(
            mark.exists() && sent < answered,
            "the repeat did not overlap the first delivery"
        );
        assert!(
            mark.with_extension("met").exists(),
            "the repeat never met the first delivery's claim"
        );
        (first, repeat)
    });
    assert!(
        std::fs::read_to_string(&mark)
            .unwrap()
            .starts_with("killed "),
        "the hook killed $wpdb's connection"
    );
    let mut statuses = [first.status, repeat.status];
    statuses.sort();
    assert_eq!(statuses, [200, 201], "{} / {}", first.body, repeat.body);
    let id = |b: &str| serde_json::from_str::<serde_json::Value>(b).unwrap()["invoice_id"].clone();
    assert_eq!(id(&first.body), id(&repeat.body));
    let q = |sql: &str| wp.scalar(sql);
    assert_eq!(
        q("SELECT COUNT(*) FROM wp_posts WHERE post_type = 'counterfoil_invoice'"),
        "1",
        "one post for one number"
    );
    assert_eq!(
        q("SELECT CONCAT(status, ' ', post_id = (SELECT ID FROM wp_posts WHERE post_type = 'counterfoil_invoice')) FROM wp_counterfoil_numbers"),
        "issued 1"
    );
}

#[test]
fn killed_wpdb_between_claim_and_insert_extension() {
    killed_wpdb_between_claim_and_insert(true);
}

#[test]
fn killed_wpdb_between_claim_and_insert_pure_php() {
    killed_wpdb_between_claim_and_insert(false);
}

/// What a gateway is told: a 503 says what to do and carries a request id,
/// never the database's words or hosts, and the detail is logged once per
/// cause however often it recurs; every signature failure reads the same; no
/// secret is 503; an oversized body is refused before any HMAC; a reused
/// transaction id with another issuer, amount or currency is 409.
#[test]
fn errors_to_gateways_say_nothing_internal() {
    let wp = WordPress::install(MariaDb::shared(), "gateway_errors", None).unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(false, 2).unwrap();
    let port = site.port();
    let body = |txn: &str, user: u64, amount: &str| {
        format!(
            r#"{{"gateway":"stripe","transaction_id":"{txn}","user_id":{user},"year":2026,"amount":"{amount}","currency":"EUR"}}"#
        )
    };
    // A reused transaction id with other facts: 409; the same facts: 200.
    assert_eq!(
        deliver(port, &secret, body("t1", 1, "10.00").as_bytes(), 0)
            .unwrap()
            .status,
        201
    );
    assert_eq!(
        deliver(port, &secret, body("t1", 1, "10.00").as_bytes(), 0)
            .unwrap()
            .status,
        200
    );
    for (other, field) in [
        (body("t1", 1, "99.00"), "amount"),
        (body("t1", 2, "10.00"), "issuer"),
    ] {
        let r = deliver(port, &secret, other.as_bytes(), 0).unwrap();
        assert_eq!(r.status, 409, "{}", r.body);
        assert!(
            r.body.contains("counterfoil_payment_mismatch") && r.body.contains(field),
            "{}",
            r.body
        );
    }
    // The database fails: three deliveries, three generic 503s, one log line.
    MariaDb::shared()
        .exec(
            wp.database(),
            "RENAME TABLE wp_invoice_sequences TO wp_invoice_sequences_away",
        )
        .unwrap();
    let mut ids = Vec::new();
    for i in 0..3 {
        let r = deliver(
            port,
            &secret,
            body(&format!("down-{i}"), 1, "1.00").as_bytes(),
            0,
        )
        .unwrap();
        assert_eq!(r.status, 503, "{}", r.body);
        assert_eq!(r.header("Retry-After"), vec!["5"]);
        for secret_detail in [
            "invoice_sequences",
            "doesn't exist",
            "127.0.0.1",
            "1146",
            "mysqli",
        ] {
            assert!(
                !r.body.contains(secret_detail),
                "the 503 body leaks `{secret_detail}`: {}",
                r.body
            );
        }
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        ids.push(v["request_id"].as_str().unwrap().to_owned());
    }
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2],
        "a request id per request"
    );
    let logs = site.logs();
    // php-fpm's own log (nginx repeats FastCGI stderr in its error log).
    let fpm_log = logs.split("--- nginx-error.log").next().unwrap();
    assert_eq!(
        fpm_log.matches("invoice_sequences' doesn't exist").count(),
        1,
        "the detail is logged once per cause: {logs}"
    );
    assert!(
        logs.contains(&ids[0]),
        "the log line names the first request"
    );
    MariaDb::shared()
        .exec(
            wp.database(),
            "RENAME TABLE wp_invoice_sequences_away TO wp_invoice_sequences",
        )
        .unwrap();
    // Every signature failure reads the same.
    let signed = body("sig", 1, "1.00");
    let ts = counterfoil_tests::webhook::now().to_string();
    let post = |headers: &[(&str, &str)]| {
        counterfoil_tests::php::http(
            port,
            "POST",
            counterfoil_tests::webhook::PATH,
            headers,
            signed.as_bytes(),
        )
        .unwrap()
    };
    let wrong = counterfoil_tests::webhook::sign("not-the-secret", &ts, signed.as_bytes());
    let answers = [
        post(&[]),
        post(&[
            ("X-Counterfoil-Timestamp", &ts),
            ("X-Counterfoil-Signature", &wrong),
        ]),
        post(&[
            ("X-Counterfoil-Timestamp", "abc"),
            ("X-Counterfoil-Signature", "sha256=00"),
        ]),
        deliver(port, &secret, signed.as_bytes(), 900).unwrap(),
    ];
    // The signature binds the method, the host and the route (v2): a
    // delivery signed for /payments and sent to /refunds, or signed for
    // another host sharing the secret, is refused (before, the HMAC covered
    // the timestamp and body alone, and both were accepted).
    let v2 = |host: &str, route: &str| {
        counterfoil_tests::webhook::sign_v2(&secret, &ts, "POST", host, route, signed.as_bytes())
    };
    let here = format!("127.0.0.1:{port}");
    let for_payments = v2(&here, counterfoil_tests::webhook::ROUTE);
    let to_refunds = counterfoil_tests::php::http(
        port,
        "POST",
        "/wp-json/counterfoil/v1/refunds",
        &[
            ("X-Counterfoil-Timestamp", &ts),
            ("X-Counterfoil-Signature", &for_payments),
        ],
        signed.as_bytes(),
    )
    .unwrap();
    let other_host = v2("shop.example.com", counterfoil_tests::webhook::ROUTE);
    let answers: Vec<_> = answers
        .into_iter()
        .chain([
            to_refunds,
            post(&[
                ("X-Counterfoil-Timestamp", &ts),
                ("X-Counterfoil-Signature", &other_host),
            ]),
        ])
        .collect();
    for a in &answers {
        assert_eq!(a.status, 401, "{}", a.body);
        assert_eq!(
            a.body, answers[0].body,
            "one message for every signature failure"
        );
    }
    // The first form (sha256=, timestamp and body) is still accepted in
    // this release, and so is the v2 signature of this host and route.
    let old_form = counterfoil_tests::webhook::sign(&secret, &ts, signed.as_bytes());
    let r = post(&[
        ("X-Counterfoil-Timestamp", &ts),
        ("X-Counterfoil-Signature", &old_form),
    ]);
    assert_eq!(r.status, 201, "{}", r.body);
    let r = post(&[
        ("X-Counterfoil-Timestamp", &ts),
        ("X-Counterfoil-Signature", &for_payments),
    ]);
    assert_eq!(r.status, 200, "the repeat, signed v2: {}", r.body);
    // The site may refuse the first form (the settings form's checkbox,
    // saved with its nonce; off by default, as above): a valid sha256=
    // signature is then 401 with its own message and nothing written, an
    // invalid one reads as every failure, v2 is accepted. Unticked again,
    // sha256= is accepted.
    let refuse_first_form = |on: bool| {
        let (admin, page) = admin_settings_page(&site);
        assert!(
            page.body
                .contains(r#"name="webhook_refuse_legacy_signature""#),
            "the setting is on the page"
        );
        let nonce = page
            .body
            .split(r#"value="counterfoil_save_settings""#)
            .nth(1)
            .and_then(|rest| rest.split(r#"name="_wpnonce" value=""#).nth(1))
            .and_then(|rest| rest.split('"').next())
            .expect("the settings form's nonce")
            .to_owned();
        let mut fields = vec![
            ("action", "counterfoil_save_settings"),
            ("_wpnonce", nonce.as_str()),
            ("format", "{year}-{seq:04}"),
            ("missing_series", "create"),
            ("new_series_start", "1"),
        ];
        if on {
            fields.push(("webhook_refuse_legacy_signature", "1"));
        }
        let r = admin
            .post_form("/wp-admin/admin-post.php", &fields)
            .unwrap();
        assert_eq!(r.status, 302, "{}", r.body);
        assert_eq!(
            wp.scalar("SELECT option_value FROM wp_options WHERE option_name = 'counterfoil_webhook_refuse_legacy_signature'"),
            if on { "1" } else { "0" }
        );
    };
    let send = |payload: &str, signature: &str| {
        counterfoil_tests::php::http(
            port,
            "POST",
            counterfoil_tests::webhook::PATH,
            &[
                ("X-Counterfoil-Timestamp", &ts),
                ("X-Counterfoil-Signature", signature),
            ],
            payload.as_bytes(),
        )
        .unwrap()
    };
    refuse_first_form(true);
    let legacy = body("sig-legacy", 1, "1.00");
    let r = send(
        &legacy,
        &counterfoil_tests::webhook::sign(&secret, &ts, legacy.as_bytes()),
    );
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(
        r.body.contains("counterfoil_legacy_signature") && r.body.contains("v2="),
        "the sender is told to sign with v2=: {}",
        r.body
    );
    assert_eq!(
        wp.scalar(
            "SELECT COUNT(*) FROM wp_counterfoil_payments WHERE transaction_id = 'sig-legacy'"
        ),
        "0",
        "nothing written"
    );
    let r = send(
        &legacy,
        &counterfoil_tests::webhook::sign("not-the-secret", &ts, legacy.as_bytes()),
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (401, answers[0].body.as_str()),
        "an invalid first-form signature reads as every failure"
    );
    let r = send(
        &legacy,
        &counterfoil_tests::webhook::sign_v2(
            &secret,
            &ts,
            "POST",
            &here,
            counterfoil_tests::webhook::ROUTE,
            legacy.as_bytes(),
        ),
    );
    assert_eq!(r.status, 201, "v2 is accepted: {}", r.body);
    refuse_first_form(false);
    let later = body("sig-legacy-later", 1, "1.00");
    let r = send(
        &later,
        &counterfoil_tests::webhook::sign(&secret, &ts, later.as_bytes()),
    );
    assert_eq!(r.status, 201, "the first form, accepted again: {}", r.body);
    // An oversized body is refused before any signature work (even unsigned).
    let huge = "x".repeat(70_000);
    let r = counterfoil_tests::php::http(
        port,
        "POST",
        counterfoil_tests::webhook::PATH,
        &[],
        huge.as_bytes(),
    )
    .unwrap();
    assert_eq!(r.status, 400, "{}", r.body);
    // No secret configured: 503, the gateway delivers again later.
    wp.eval(false, "update_option('counterfoil_webhook_secret', '');")
        .unwrap();
    let r = deliver(port, "", signed.as_bytes(), 0).unwrap();
    assert_eq!(r.status, 503, "{}", r.body);
}

/// A backend that cannot be built (here: the timeout filter answers -5, which
/// the extension refuses) never takes the site down: the front page works,
/// the admin sees a notice, the webhook answers 503 with a request id.
#[test]
fn a_backend_that_cannot_be_built_is_a_notice_and_503_not_a_fatal_error() {
    let wp = WordPress::install(MariaDb::shared(), "bad_backend", None).unwrap();
    let secret = wp.webhook_secret().unwrap();
    wp.mu_plugin(
        "counterfoil-test-bad-timeout",
        "<?php add_filter('counterfoil_timeout_ms', function () { return -5; });\n",
    )
    .unwrap();
    let site = wp.serve(true, 2).unwrap();
    let home = counterfoil_tests::php::http(site.port(), "GET", "/", &[], b"").unwrap();
    assert_eq!(home.status, 200, "the site works");
    let admin = Session::login(site.port(), "admin", "admin-password").unwrap();
    let page = admin
        .get("/wp-admin/options-general.php?page=counterfoil")
        .unwrap();
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("counterfoil-backend-error"),
        "the admin sees why"
    );
    let r = deliver(
        site.port(),
        &secret,
        br#"{"gateway":"stripe","transaction_id":"b1","user_id":1,"year":2026}"#,
        0,
    )
    .unwrap();
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.contains("request_id"), "{}", r.body);
}

/// The administrator's session on `site` and its settings page (200).
fn admin_settings_page(
    site: &counterfoil_tests::php::FpmSite,
) -> (Session, counterfoil_tests::php::Response) {
    let admin = Session::login(site.port(), "admin", "admin-password").unwrap();
    let page = admin
        .get("/wp-admin/options-general.php?page=counterfoil")
        .unwrap();
    assert_eq!(page.status, 200);
    (admin, page)
}

/// The webhook secret is not in the settings page's HTML (before, it stood
/// in the masked field's value): "Show" asks admin-ajax for it, with the
/// page's nonce, as an administrator; without the nonce, or as another
/// user, it is refused.
#[test]
fn the_webhook_secret_is_revealed_on_request_only() {
    let wp = WordPress::install(MariaDb::shared(), "secret_reveal", None).unwrap();
    let secret = wp.webhook_secret().unwrap();
    wp.eval(
        false,
        "wp_insert_user(array('user_login' => 'editor', 'user_pass' => 'editor-password', 'role' => 'editor'));",
    )
    .unwrap();
    let site = wp.serve(false, 2).unwrap();
    let (admin, page) = admin_settings_page(&site);
    assert!(page.body.contains(r#"id="counterfoil-secret""#));
    assert!(!page.body.contains(&secret), "the secret is in the page");
    let nonce = page
        .body
        .split(r#"data-nonce=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the field carries its nonce")
        .to_owned();
    let ajax = "/wp-admin/admin-ajax.php";
    let action = ("action", "counterfoil_reveal_secret");
    let r = admin.post_form(ajax, &[action]).unwrap();
    assert_eq!(r.status, 403, "no nonce: {}", r.body);
    assert!(!r.body.contains(&secret));
    let r = admin
        .post_form(ajax, &[action, ("_wpnonce", "0123456789")])
        .unwrap();
    assert_eq!(r.status, 403, "a wrong nonce: {}", r.body);
    let r = admin
        .post_form(ajax, &[action, ("_wpnonce", &nonce)])
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let answer: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(answer["success"], true, "{}", r.body);
    assert_eq!(answer["data"]["secret"], secret.as_str());
    assert!(
        r.header("Cache-Control")
            .iter()
            .any(|v| v.contains("no-store") || v.contains("no-cache")),
        "{:?}",
        r.headers
    );
    let editor = Session::login(site.port(), "editor", "editor-password").unwrap();
    let r = editor
        .post_form(ajax, &[action, ("_wpnonce", &nonce)])
        .unwrap();
    assert_eq!(r.status, 403, "an editor: {}", r.body);
    assert!(!r.body.contains(&secret));
}

/// A secret from the COUNTERFOIL_WEBHOOK_SECRET constant is never shown on
/// the settings page, and "generate a new secret" is disabled; callbacks
/// signed with it are accepted.
#[test]
fn a_secret_from_the_constant_is_never_displayed() {
    let wp = WordPress::install(MariaDb::shared(), "secret_constant", None).unwrap();
    let option_secret = wp.webhook_secret().unwrap();
    let constant = "constant-secret-6f1d2c0e9a8b7f5e4d3c2b1a";
    wp.mu_plugin(
        "counterfoil-test-secret",
        &format!("<?php define('COUNTERFOIL_WEBHOOK_SECRET', '{constant}');\n"),
    )
    .unwrap();
    let site = wp.serve(false, 2).unwrap();
    let (_admin, page) = admin_settings_page(&site);
    assert!(
        !page.body.contains(constant),
        "the constant's secret is shown"
    );
    assert!(
        !page.body.contains(&option_secret),
        "the unused option secret is shown"
    );
    assert!(page.body.contains("counterfoil-secret-constant"));
    assert!(page
        .body
        .contains(r#"name="regenerate_secret" value="1" disabled"#));
    let body = br#"{"gateway":"stripe","transaction_id":"c1","user_id":1,"year":2026}"#;
    assert_eq!(deliver(site.port(), constant, body, 0).unwrap().status, 201);
    assert_eq!(
        deliver(site.port(), &option_secret, body, 0)
            .unwrap()
            .status,
        401
    );
}

/// One payment through the plugin from PHP: the backend's name and the number.
fn pay(wp: &WordPress, extension: bool, txn: &str) -> String {
    wp.eval(
        extension,
        &format!(
            "$p = counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => '{txn}', 'user_id' => 1, 'year' => 2026));
             echo counterfoil_backend()->name(), ' ', is_wp_error($p) ? $p->get_error_message() . ' ' . json_encode($p->get_error_data()) : $p->post_title;"
        ),
    )
    .unwrap()
}

/// The plugin connects as WordPress does, whatever form DB_HOST takes:
/// host:port, localhost:/socket and [::1]:port, on both backends.
#[test]
fn every_db_host_form_on_both_backends() {
    let server = MariaDb::start_with("hostforms", &["--bind-address=127.0.0.1,::1"]).unwrap();
    let wp = WordPress::install(&server, "hostforms", None).unwrap();
    let forms = [
        format!("127.0.0.1:{}", server.port()),
        format!("localhost:{}", server.socket().display()),
        format!("[::1]:{}", server.port()),
    ];
    let mut n = 0;
    for form in &forms {
        wp.config_set("DB_HOST", &format!("'{form}'"));
        for extension in [true, false] {
            n += 1;
            let out = pay(&wp, extension, &format!("host-{n}"));
            let backend = if extension { "extension" } else { "php" };
            assert_eq!(out, format!("{backend} 2026-{n:04}"), "DB_HOST {form}");
        }
    }
    // A node list (COUNTERFOIL_DB_NODES) or a URL list in php.ini is what the
    // extension uses, not DB_HOST alone: with a dead node first, it writes to
    // the second node of the list.
    let node = |wp: &WordPress, ini: Option<&str>| {
        let mut php = wp.php(true);
        if let Some(url) = ini {
            php.arg("-d")
                .arg(format!("counterfoil.database_url=\"{url}\""));
        }
        let out = php
            .arg("-r")
            .arg(
                "require './wp-load.php';
                 counterfoil_backend()->current('1:2026');
                 echo Counterfoil\\connection_info()['node'];",
            )
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    wp.config_set("DB_HOST", &format!("'{}'", forms[0]));
    assert_eq!(node(&wp, None), "0", "DB_HOST alone: one node");
    // Private servers, not one cluster: the override for tests.
    wp.config_set("COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES", "true");
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!("array('127.0.0.1:1', '{}')", forms[0]),
    );
    assert_eq!(node(&wp, None), "1", "the node list reaches the extension");
    wp.config_set("COUNTERFOIL_DB_NODES", "array()");
    let ini = format!(
        "mysql://cf:cf@127.0.0.1:1/{db},mysql://cf:cf@{}/{db}",
        forms[0],
        db = wp.database()
    );
    assert_eq!(node(&wp, Some(&ini)), "1", "php.ini's node list is kept");
}

/// WordPress connects with TLS (MYSQL_CLIENT_FLAGS = MYSQLI_CLIENT_SSL) as a
/// user the server only lets in over TLS: the plugin's own connection uses
/// TLS too. The extension does not speak TLS, so with it loaded the plugin
/// takes the pure-PHP backend (and says so) rather than connect in clear.
#[test]
fn the_plugin_connects_with_tls_when_wordpress_does() {
    let dir = counterfoil_tests::target_dir()
        .join("harness")
        .join(format!("tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let server = MariaDb::start_with(
        "tls",
        &[
            &format!("--ssl-cert={}", cert.display()),
            &format!("--ssl-key={}", key.display()),
        ],
    )
    .unwrap();
    let wp = WordPress::install(&server, "tls", None).unwrap();
    server
        .exec(
            wp.database(),
            "CREATE USER 'cftls'@'%' IDENTIFIED BY 'cftls-password' REQUIRE SSL; GRANT ALL PRIVILEGES ON *.* TO 'cftls'@'%'",
        )
        .unwrap();
    wp.config_set("DB_USER", "'cftls'");
    wp.config_set("DB_PASSWORD", "'cftls-password'");
    wp.config_set(
        "MYSQL_CLIENT_FLAGS",
        "MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT",
    );
    assert_eq!(pay(&wp, false, "tls-1"), "php 2026-0001");
    assert_eq!(
        pay(&wp, true, "tls-2"),
        "php 2026-0002",
        "with the extension loaded"
    );
    let health = wp
        .eval(
            true,
            "echo Counterfoil_Series_Life::test_backend()['label'];",
        )
        .unwrap();
    assert!(health.contains("TLS"), "{health}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Plugin-directory hygiene: the admin script and style are enqueued files on
/// the plugin's own pages only (no inline script or style), the script's
/// sentences come translated from the server, and readme.txt's headers are
/// true of the WordPress the tests run and of the plugin file.
#[test]
fn assets_only_on_our_pages_and_true_readme_headers() {
    let wp = WordPress::install(MariaDb::shared(), "hygiene", None).unwrap();
    let site = wp.serve(false, 2).unwrap();
    let admin = Session::login(site.port(), "admin", "admin-password").unwrap();
    for page in [
        "/wp-admin/options-general.php?page=counterfoil",
        "/wp-admin/tools.php?page=counterfoil-awb",
    ] {
        let html = admin.get(page).unwrap().body;
        assert!(
            html.contains(r#"<script type="module" src=""#)
                && html.contains("counterfoil-admin.js"),
            "{page}: the module script"
        );
        assert!(
            html.contains("assets/counterfoil-admin.css"),
            "{page}: the stylesheet"
        );
        assert!(
            !html.contains(".counterfoil-ok{") && !html.contains(".counterfoil-ok {"),
            "{page}: no inline style"
        );
        assert!(
            html.contains(r#"id="counterfoil-i18n" hidden data-strings=""#),
            "{page}: translated sentences"
        );
    }
    let dashboard = admin.get("/wp-admin/index.php").unwrap().body;
    assert!(
        !dashboard.contains("counterfoil-admin.js") && !dashboard.contains("counterfoil-admin.css"),
        "other pages load nothing of ours"
    );
    // readme.txt: Tested up to = the newest WordPress every suite passed on
    // (COUNTERFOIL_WORDPRESS; README says when), never below the one under
    // test; Requires PHP and the version as in the plugin header.
    let version = std::fs::read_to_string(
        counterfoil_tests::wordpress::wordpress_source().join("wp-includes/version.php"),
    )
    .unwrap();
    let wp_version = version
        .lines()
        .find_map(|l| l.strip_prefix("$wp_version = '"))
        .and_then(|v| v.split('\'').next())
        .unwrap();
    let major_minor: String = wp_version.split('.').take(2).collect::<Vec<_>>().join(".");
    let root = counterfoil_tests::php::repo_root().join("wp-plugin");
    let readme = std::fs::read_to_string(root.join("readme.txt")).unwrap();
    let header = std::fs::read_to_string(root.join("counterfoil.php")).unwrap();
    let field = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| {
                l.trim_start_matches([' ', '*'])
                    .strip_prefix(&format!("{name}:"))
            })
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let tested = field(&readme, "Tested up to");
    assert_eq!(tested, NEWEST_WORDPRESS_PASSED);
    let as_pair = |v: &str| -> (u32, u32) {
        let mut p = v.split('.').map(|x| x.parse::<u32>().unwrap());
        (p.next().unwrap(), p.next().unwrap_or(0))
    };
    assert!(
        as_pair(&tested) >= as_pair(&major_minor),
        "Tested up to {tested}, below the WordPress under test ({major_minor})"
    );
    assert_eq!(
        field(&readme, "Requires PHP"),
        field(&header, "Requires PHP")
    );
    assert_eq!(
        field(&readme, "Requires at least"),
        field(&header, "Requires at least")
    );
    assert_eq!(field(&readme, "Stable tag"), field(&header, "Version"));
    assert!(
        readme.contains("counterfoil.wasm") && readme.contains("cargo build"),
        "the wasm's source is named"
    );
}

/// Turns a freshly installed single site into a subdirectory network
/// (domain example.test, for PHP-CLI use only).
fn make_network(wp: &WordPress) {
    wp.config_set("WP_ALLOW_MULTISITE", "true");
    std::fs::write(
        wp.dir().join("counterfoil-network.php"),
        "<?php
define('WP_INSTALLING_NETWORK', true);
require __DIR__ . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/network.php';
// As wp-admin/network.php does: name the network tables, then create them.
global $wpdb;
foreach ($wpdb->tables('ms_global') as $table => $prefixed) { $wpdb->$table = $prefixed; }
install_network();
$r = populate_network(1, 'example.test', 'admin@example.invalid', 'Network', '/', false);
if (is_wp_error($r)) { fwrite(STDERR, $r->get_error_message()); exit(1); }
echo 'network';
",
    )
    .unwrap();
    let out = wp
        .php(false)
        .arg("counterfoil-network.php")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "network",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (name, value) in [
        ("MULTISITE", "true"),
        ("SUBDOMAIN_INSTALL", "false"),
        ("DOMAIN_CURRENT_SITE", "'example.test'"),
        ("PATH_CURRENT_SITE", "'/'"),
        ("SITE_ID_CURRENT_SITE", "1"),
        ("BLOG_ID_CURRENT_SITE", "1"),
    ] {
        wp.config_set(name, value);
    }
    // The harness's single-site URL constants would pin every site's URLs.
    let path = wp.dir().join("wp-config.php");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .lines()
        .filter(|l| !l.starts_with("define('WP_HOME'") && !l.starts_with("define('WP_SITEURL'"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(path, text).unwrap();
}

/// PHP on the network's main site (HTTP_HOST example.test), WordPress loaded.
fn network_eval(wp: &WordPress, extension: bool, code: &str) -> String {
    let out = wp
        .php(extension)
        .arg("-r")
        .arg(format!(
            "$_SERVER['HTTP_HOST'] = 'example.test'; $_SERVER['REQUEST_URI'] = '/';
             require './wp-load.php'; require_once ABSPATH . 'wp-admin/includes/plugin.php';
             require_once ABSPATH . 'wp-admin/includes/ms.php';\n{code}"
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Multisite (subdirectory network): network activation creates every
/// site's tables and its own secret; a site created later gets them; each
/// site numbers in its own tables; a deleted site's tables are dropped; and
/// uninstall honours each site's own opt-in.
#[test]
fn multisite_network_activation_new_and_deleted_sites_and_uninstall() {
    let server = MariaDb::shared();
    let wp = WordPress::install_with(server, "multisite", None, false).unwrap();
    make_network(&wp);
    let tables = || {
        MariaDb::scalar(
            wp.database_url(),
            "SELECT GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME LIKE '%counterfoil_numbers' OR TABLE_NAME LIKE '%counterfoil_payments' OR TABLE_NAME LIKE '%invoice_sequences' OR TABLE_NAME LIKE '%counterfoil_chain')",
        )
        .unwrap()
        .unwrap_or_default()
    };
    let out = network_eval(
        &wp,
        false,
        "$two = wpmu_create_blog('example.test', '/two/', 'Two', 1);
         $r = activate_plugin('counterfoil/counterfoil.php', '', true);
         if (is_wp_error($r)) { echo $r->get_error_message(); exit(1); }
         $three = wpmu_create_blog('example.test', '/three/', 'Three', 1);
         $secrets = array();
         foreach (array(1, $two, $three) as $id) { $secrets[] = get_blog_option($id, 'counterfoil_webhook_secret'); }
         echo $two, ' ', $three, ' ', count(array_unique(array_filter($secrets)));",
    );
    let ids: Vec<&str> = out.split(' ').collect();
    assert_eq!(
        ids,
        ["2", "3", "3"],
        "three sites, three secrets of their own"
    );
    assert_eq!(
        tables(),
        "wp_2_counterfoil_chain,wp_2_counterfoil_numbers,wp_2_counterfoil_payments,wp_2_invoice_sequences,\
         wp_3_counterfoil_chain,wp_3_counterfoil_numbers,wp_3_counterfoil_payments,wp_3_invoice_sequences,\
         wp_counterfoil_chain,wp_counterfoil_numbers,wp_counterfoil_payments,wp_invoice_sequences"
    );
    // Each site numbers in its own tables.
    for extension in [false, true] {
        let out = network_eval(
            &wp,
            extension,
            &format!(
                "switch_to_blog(3);
                 $p = counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => 'ms-{extension}', 'user_id' => 1, 'year' => 2026));
                 echo is_wp_error($p) ? $p->get_error_message() : $p->post_title;"
            ),
        );
        assert_eq!(out, if extension { "2026-0002" } else { "2026-0001" });
    }
    // The extension's own allocate_invoice_number() follows
    // switch_to_blog() (its settings are the process's: before, it went on
    // numbering in the tables of the site the request began with).
    let out = network_eval(
        &wp,
        true,
        "initialize_invoice_sequence(1, 2027, 1);
         switch_to_blog(3);
         initialize_invoice_sequence(1, 2027, 500);
         echo allocate_invoice_number(1, 2027);
         restore_current_blog();
         echo ' ', allocate_invoice_number(1, 2027);",
    );
    assert_eq!(out, "2027-0500 2027-0001", "each site's own series");
    let q = |sql: &str| wp.scalar(sql);
    assert_eq!(
        q("SELECT COUNT(*) FROM wp_3_counterfoil_numbers WHERE status = 'issued' AND scope_key = '1:2026'"),
        "2"
    );
    assert_eq!(
        q("SELECT COUNT(*) FROM wp_counterfoil_numbers WHERE scope_key = '1:2026'"),
        "0"
    );
    // A deleted site's tables go with it, every one the schema creates: the
    // names from its own CREATE statements for site 2's prefix, so a table
    // added to the schema is held here too (before: wp_2_counterfoil_chain
    // stayed, and then wp_2_counterfoil_documents).
    let schema_tables = |prefix: &str| -> Vec<String> {
        network_eval(
            &wp,
            false,
            &format!(
                r#"foreach (Counterfoil_Schema::statements('{prefix}') as $sql) {{
                     if (preg_match('/^\s*CREATE TABLE (\S+) \(/', $sql, $m)) {{ echo $m[1], ' '; }}
                 }}"#
            ),
        )
        .split_whitespace()
        .map(str::to_owned)
        .collect()
    };
    let present = |names: &[String]| -> Vec<String> {
        let list = names
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(",");
        MariaDb::query(
            wp.database_url(),
            &format!(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ({list}) ORDER BY TABLE_NAME"
            ),
        )
        .unwrap()
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .collect()
    };
    let site_two = schema_tables("wp_2_");
    assert!(
        site_two.len() >= 7 && site_two.contains(&"wp_2_counterfoil_documents".to_owned()),
        "the schema's tables: {site_two:?}"
    );
    let mut sorted = site_two.clone();
    sorted.sort();
    assert_eq!(present(&site_two), sorted, "site 2 has every table");
    network_eval(&wp, false, "wpmu_delete_blog(2, true);");
    assert_eq!(
        present(&site_two),
        Vec::<String>::new(),
        "a deleted site keeps none of its tables"
    );
    assert!(!tables().contains("wp_2_"), "{}", tables());
    // Uninstall: site 1 opted in, site 3 did not.
    let (site_one, site_three) = (schema_tables("wp_"), schema_tables("wp_3_"));
    network_eval(
        &wp,
        false,
        "update_blog_option(1, 'counterfoil_delete_data_on_uninstall', 1);
         define('WP_UNINSTALL_PLUGIN', 'counterfoil/counterfoil.php');
         include WP_PLUGIN_DIR . '/counterfoil/uninstall.php';",
    );
    assert_eq!(
        tables(),
        "wp_3_counterfoil_chain,wp_3_counterfoil_numbers,wp_3_counterfoil_payments,wp_3_invoice_sequences"
    );
    assert_eq!(
        present(&site_one),
        Vec::<String>::new(),
        "site 1's uninstall drops every table of the schema"
    );
    assert_eq!(
        present(&site_three).len(),
        site_two.len(),
        "site 3 keeps all of its own"
    );
    assert_eq!(
        q("SELECT COUNT(*) FROM wp_3_posts WHERE post_type = 'counterfoil_invoice'"),
        "2"
    );
}

/// Both backends treat a node's refusal as the core does: a user's
/// connection limit (1226; 1040 and 1129 alike) on the first node of COUNTERFOIL_DB_NODES fails
/// over to the next; wrong credentials (1045) on it are a configuration
/// error at once, on every node, without retries.
#[test]
fn node_refusals_fail_over_and_bad_credentials_stop_on_both_backends() {
    let wp = WordPress::install(MariaDb::shared(), "node_refusals", None).unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 1);")
        .unwrap();
    let main = format!("127.0.0.1:{}", MariaDb::shared().port());
    // Node B: the same user, limited to one connection, which is taken.
    let b = MariaDb::start("refusing").unwrap();
    b.exec(
        "mysql",
        &format!(
            "CREATE DATABASE `{}`; ALTER USER 'cf'@'%', 'cf'@'localhost' WITH MAX_USER_CONNECTIONS 1",
            wp.database()
        ),
    )
    .unwrap();
    // Each account's one connection is taken: over TCP ('cf'@'%') and over
    // the socket ('cf'@'localhost', where mysql_async moves a loopback
    // connection).
    let tcp = format!(
        "mysql://cf:cf@127.0.0.1:{}/mysql?prefer_socket=false",
        b.port()
    );
    let _held = counterfoil_tests::mariadb::block_on(async {
        let a = mysql_async::Conn::new(mysql_async::Opts::from_url(&tcp).unwrap()).await?;
        let s =
            mysql_async::Conn::new(mysql_async::Opts::from_url(&b.socket_url("mysql")).unwrap())
                .await?;
        Ok::<_, mysql_async::Error>((a, s))
    })
    .unwrap();
    // Private servers, not one cluster: the override for tests.
    wp.config_set("COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES", "true");
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!("array('127.0.0.1:{}', '{main}')", b.port()),
    );
    for (extension, n) in [(true, 1), (false, 2)] {
        let out = wp
            .eval(
                extension,
                "echo allocate_invoice_number(1, 2026), ' ', counterfoil_backend()->name();",
            )
            .unwrap();
        let backend = if extension { "extension" } else { "php" };
        assert_eq!(
            out,
            format!("2026-{n:04} {backend}"),
            "a connection limit on node B: node A writes"
        );
    }
    // Node C: the same user with another password: 1045 stops at once.
    let c = MariaDb::start("wrongpass").unwrap();
    c.exec("mysql", "ALTER USER 'cf'@'%' IDENTIFIED BY 'another'")
        .unwrap();
    // Private servers, not one cluster: the override for tests.
    wp.config_set("COUNTERFOIL_UNSAFE_ALLOW_INDEPENDENT_NODES", "true");
    wp.config_set(
        "COUNTERFOIL_DB_NODES",
        &format!("array('127.0.0.1:{}', '{main}')", c.port()),
    );
    for extension in [true, false] {
        let out = wp
            .eval(
                extension,
                "$t = microtime(true);
                 try { allocate_invoice_number(1, 2026); echo 'allocated'; }
                 catch (Counterfoil\\DatabaseUnavailableException $e) {
                     echo 'refused ', $e->getCode(), ' ', $e->getMessage(), ' ', round((microtime(true) - $t) * 1000) < 1000 ? 'fast' : 'slow';
                 }",
            )
            .unwrap();
        assert!(
            out.starts_with("refused") && out.contains("1045") && out.ends_with("fast"),
            "{extension}: {out}"
        );
    }
}

/// On a network, a backend that cannot be built (here the extension refuses
/// the timeout filter's -5) is named with its reason to a super admin only:
/// a site's own administrator sees that numbering is down and a request id,
/// the reason (the database's words: host, user, database) going to the
/// server's log (before: the reason for every admin).
#[test]
fn a_site_admin_on_a_network_sees_no_backend_detail() {
    let wp = WordPress::install_with(MariaDb::shared(), "ms_notice", None, false).unwrap();
    make_network(&wp);
    network_eval(
        &wp,
        false,
        "$two = wpmu_create_blog('example.test', '/two/', 'Two', 1);
         $r = activate_plugin('counterfoil/counterfoil.php', '', true);
         if (is_wp_error($r)) { echo $r->get_error_message(); exit(1); }
         $u = wpmu_create_user('siteadmin', 'siteadmin-password', 'siteadmin@example.invalid');
         add_user_to_blog($two, $u, 'administrator');",
    );
    wp.mu_plugin(
        "counterfoil-test-bad-timeout",
        "<?php add_filter('counterfoil_timeout_ms', function () { return -5; });\n",
    )
    .unwrap();
    let notice = |login: &str| {
        network_eval(
            &wp,
            true,
            &format!(
                "switch_to_blog(2); wp_set_current_user(get_user_by('login', '{login}')->ID);
                 echo is_super_admin() ? 'super ' : 'site ';
                 counterfoil_backend_notice();"
            ),
        )
    };
    let detail = "timeout";
    let site_admin = notice("siteadmin");
    assert!(site_admin.starts_with("site "), "{site_admin}");
    assert!(
        site_admin.contains("counterfoil-backend-error"),
        "{site_admin}"
    );
    assert!(
        site_admin.contains("request ") && !site_admin.contains(detail),
        "{site_admin}"
    );
    let super_admin = notice("admin");
    assert!(super_admin.starts_with("super "), "{super_admin}");
    assert!(super_admin.contains(detail), "{super_admin}");
}

/// The folders a file of `wp-plugin/includes/` sits in, as a layer: the
/// first folder below `includes/` (`integrations/woocommerce/…` is
/// `integrations`), `.` for the files at its top (the autoloader, the log,
/// the functions).
fn layer_of(relative: &str) -> &str {
    relative.split_once('/').map_or(".", |(first, _)| first)
}

/// What each layer of the plugin must not use (docs/architecture.md, "The
/// plugin's folders"): the backends know no screen, route or integration;
/// numbering knows no integration and no document; the documents know no
/// integration (each tells them what it must through their filters); the
/// books' screens know no integration.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "backends",
        &["admin", "books", "documents", "integrations", "rest"],
    ),
    ("numbering", &["documents", "integrations"]),
    ("documents", &["books", "integrations", "rest"]),
    ("books", &["integrations"]),
];

/// Issue plugin-house: `includes/` is laid out by subsystem — no folder with
/// more than 12 PHP files of its own, one class (interface, trait) a file,
/// each in the autoloader's one map and nowhere else, the main file
/// requiring nothing but the autoloader and the functions — and each layer
/// uses only what it may (FORBIDDEN), read from the code (comments left
/// out).
#[test]
fn the_plugins_folders_hold_one_class_a_file_loaded_by_the_autoloader_and_keep_their_layers() {
    use std::collections::BTreeMap;
    let root = counterfoil_tests::php::repo_root().join("wp-plugin");
    let includes = root.join("includes");
    let mut files = Vec::new();
    let mut stack = vec![includes.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "php") {
                files.push(path);
            }
        }
    }
    let mut per_folder: BTreeMap<String, usize> = BTreeMap::new();
    let mut declared: BTreeMap<String, String> = BTreeMap::new();
    let mut code_of: BTreeMap<String, String> = BTreeMap::new();
    for path in &files {
        let relative = path
            .strip_prefix(&includes)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let folder = relative.rsplit_once('/').map_or(".", |(f, _)| f).to_owned();
        *per_folder.entry(folder).or_default() += 1;
        let text = std::fs::read_to_string(path).unwrap();
        let namespace = if text.lines().any(|l| l == "namespace Counterfoil;") {
            "Counterfoil\\"
        } else {
            ""
        };
        let mut here = Vec::new();
        for line in text.lines() {
            let rest = line
                .strip_prefix("final ")
                .or_else(|| line.strip_prefix("abstract "))
                .unwrap_or(line);
            for kind in ["class ", "interface ", "trait "] {
                if let Some(name) = rest.strip_prefix(kind) {
                    let name: String = name
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    here.push(format!("{namespace}{name}"));
                }
            }
        }
        assert!(
            here.len() <= 1,
            "{relative} declares {here:?}: one class a file"
        );
        for class in here {
            declared.insert(class, relative.clone());
        }
        let code: String = text
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                !(t.starts_with('*') || t.starts_with("//") || t.starts_with("/*"))
            })
            .collect::<Vec<_>>()
            .join("\n");
        code_of.insert(relative, code);
    }
    for (folder, count) in &per_folder {
        assert!(
            *count <= 12,
            "includes/{folder} holds {count} PHP files of its own (at most 12)"
        );
    }
    // The autoloader's map: every declared class (but itself) at its file.
    let loader = std::fs::read_to_string(includes.join("class-counterfoil-autoloader.php"))
        .expect("includes/class-counterfoil-autoloader.php");
    let mut mapped: BTreeMap<String, String> = BTreeMap::new();
    for line in loader.lines() {
        let t = line.trim();
        if let Some((key, value)) = t.split_once("=>") {
            let key = key.trim().trim_matches('\'').replace("\\\\", "\\");
            let value = value.trim().trim_end_matches(',').trim_matches('\'');
            if value.ends_with(".php") {
                mapped.insert(key, value.to_owned());
            }
        }
    }
    declared.remove("Counterfoil_Autoloader");
    assert_eq!(
        mapped, declared,
        "the autoloader's map is the tree's classes"
    );
    // The main file and the uninstaller require no class file by hand.
    for main in ["counterfoil.php", "uninstall.php"] {
        let text = std::fs::read_to_string(root.join(main)).unwrap();
        for line in text.lines().filter(|l| l.contains("require")) {
            assert!(
                line.contains("class-counterfoil-autoloader.php")
                    || line.contains("functions.php")
                    || !line.contains("includes/"),
                "{main} requires a class file by hand: {line}"
            );
        }
    }
    // Each layer uses only what it may.
    let mut broken = Vec::new();
    for (relative, code) in &code_of {
        let from = layer_of(relative);
        let Some((_, never)) = FORBIDDEN.iter().find(|(layer, _)| *layer == from) else {
            continue;
        };
        for (class, file) in &declared {
            let to = layer_of(file);
            let named = code.match_indices(class.as_str()).any(|(at, _)| {
                let next = code[at + class.len()..].chars().next();
                !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if never.contains(&to) && named {
                broken.push(format!("{relative} ({from}) uses {class} ({to})"));
            }
        }
    }
    assert!(broken.is_empty(), "layers crossed:\n{}", broken.join("\n"));
}
