//! WooCommerce: every paid order its invoice number, every refund its credit
//! note, on real WordPress and MariaDB, through WooCommerce's own calls
//! (`payment_complete()`, status changes, `wc_create_refund()`).
//!
//! By default against the WooCommerce STAND-IN (tests/woocommerce-stand-in/,
//! not WooCommerce: WooCommerce's names, signatures and hook order for only
//! what the integration calls); against a real WooCommerce when
//! `COUNTERFOIL_WOOCOMMERCE` names one (tests/src/woocommerce.rs). Several OS
//! processes complete one order at once, 8 processes pay 50 orders, refunds
//! overlap on one order, and the database holds the series past the deadline
//! during a payment.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use counterfoil_tests::php::repo_root;
use counterfoil_tests::woocommerce;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::workers::run_overlapping;
use counterfoil_tests::MariaDb;

/// A site with WooCommerce and Counterfoil, orders numbered by the shop (issuer 0).
fn shop(name: &str) -> WordPress {
    woocommerce::install(MariaDb::shared(), name).unwrap()
}

/// `count` new pending orders of `total` EUR: their ids.
fn orders(wp: &WordPress, count: usize, total: &str) -> Vec<u64> {
    let out = wp
        .eval(
            false,
            &format!("for ($i = 0; $i < {count}; $i++) {{ echo cf_test_order('{total}'), ' '; }}"),
        )
        .unwrap();
    out.split_whitespace().map(|s| s.parse().unwrap()).collect()
}

/// What the workers of [`pay_at_once`] saw.
struct Paid {
    /// Per order, the numbers the workers read back.
    told: BTreeMap<u64, Vec<String>>,
    /// Per order, how many workers met another one's claim on its invoice
    /// (`counterfoil_claim_busy` fired in them at least once).
    met: BTreeMap<u64, usize>,
}

/// Runs `workers` copies of tests/wp-workers/woo-pay.php at once over `ids`
/// (`linger_ms`: how long the claim's holder lingers before writing the
/// invoice post, 0 for not at all).
fn pay_at_once(
    wp: &WordPress,
    extension: bool,
    workers: usize,
    load: &str,
    ids: &[u64],
    linger_ms: u64,
) -> Paid {
    let script = repo_root().join("tests/wp-workers/woo-pay.php");
    let commands = (0..workers)
        .map(|w| {
            let mut c = wp.php(extension);
            c.arg(&script).arg(load).arg(w.to_string());
            c.args(ids.iter().map(|i| i.to_string()));
            c.env("CF_LINGER_MS", linger_ms.to_string());
            c
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300)).unwrap();
    let mut told = BTreeMap::<u64, Vec<String>>::new();
    let mut met = BTreeMap::<u64, usize>::new();
    for f in &finished {
        let mut busy = BTreeSet::<u64>::new();
        for line in f.stdout.lines() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            match parts.as_slice() {
                ["ok", id, number] => told
                    .entry(id.parse().unwrap())
                    .or_default()
                    .push((*number).to_owned()),
                ["busy", id] => {
                    busy.insert(id.parse().unwrap());
                }
                ["start" | "end", _] => {}
                other => panic!(
                    "unexpected worker line {other:?}\n{}\n{}",
                    f.stdout, f.stderr
                ),
            }
        }
        for id in busy {
            *met.entry(id).or_default() += 1;
        }
    }
    Paid { told, met }
}

/// The registry of series `scope`: (number, status) rows.
fn registry(wp: &WordPress, scope: &str) -> Vec<(u64, String)> {
    MariaDb::query(
        wp.database_url(),
        &format!(
            "SELECT number, status FROM wp_counterfoil_numbers WHERE scope_key = '{scope}' ORDER BY number"
        ),
    )
    .unwrap()
    .into_iter()
    .map(|r| {
        (
            r[0].clone().unwrap().parse().unwrap(),
            r[1].clone().unwrap_or_default(),
        )
    })
    .collect()
}

/// Proves every order of `ids` has exactly one invoice, that the numbers of
/// `scope` run 1..=ids.len() with no gap and no duplicate, each issued, and
/// that what the workers were told is what the order carries.
fn check_one_invoice_each(
    wp: &WordPress,
    scope: &str,
    ids: &[u64],
    told: &BTreeMap<u64, Vec<String>>,
) {
    let rows = registry(wp, scope);
    let numbers: Vec<u64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        numbers,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "numbers of {scope}: {rows:?}"
    );
    assert!(rows.iter().all(|r| r.1 == "issued"), "{rows:?}");
    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    let out = wp
        .eval(
            false,
            &format!(
                "foreach (array({}) as $id) {{
                   $o = wc_get_order($id);
                   $posts = get_posts(array('post_type' => 'counterfoil_invoice', 'post_status' => 'any', 'numberposts' => -1,
                       'meta_key' => '_counterfoil_transaction_id', 'meta_value' => (string) $id, 'fields' => 'ids'));
                   echo $id, ' ', $o->get_meta('_counterfoil_invoice_number'), ' ', count($posts), ' ',
                       (int) $o->get_meta('_counterfoil_invoice_id') === (int) ($posts[0] ?? -1) ? 'same' : 'other', \"\\n\";
                 }}",
                list.join(",")
            ),
        )
        .unwrap();
    let mut seen = BTreeSet::new();
    for line in out.lines() {
        let p: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(p.len(), 4, "{line}");
        let id: u64 = p[0].parse().unwrap();
        assert_eq!(p[2], "1", "order {id}: invoices {line}");
        assert_eq!(p[3], "same", "order {id}: the post on the order {line}");
        assert!(
            seen.insert(p[1].to_owned()),
            "number {} on two orders",
            p[1]
        );
        let heard = told
            .get(&id)
            .unwrap_or_else(|| panic!("no worker told order {id}"));
        assert!(
            heard.iter().all(|n| n == p[1]),
            "order {id} carries {} but workers were told {heard:?}",
            p[1]
        );
    }
    assert_eq!(seen.len(), ids.len());
}

fn one_order_at_once(extension: bool) {
    let wp = shop(if extension {
        "woo-once-ext"
    } else {
        "woo-once-php"
    });
    let ids = orders(&wp, 1, "49.90");
    // Six processes hold the order as unpaid and complete it at the same
    // moment; the one that claims the invoice lingers 300 ms in its claim.
    let Paid { told, met } = pay_at_once(&wp, extension, 6, "early", &ids, 300);
    // They met on the order: at least one delivery found another one
    // creating the invoice (the claim busy), not only ran at the same time.
    let met = met.get(&ids[0]).copied().unwrap_or(0);
    println!("{met} of 6 deliveries found the claim busy");
    assert!(
        met >= 1,
        "no delivery met another one's claim on the order: no contention shown"
    );
    assert_eq!(
        told[&ids[0]].len(),
        6,
        "every delivery gets its number: {told:?}"
    );
    let year = wp
        .eval(false, "echo counterfoil_current_period()[0];")
        .unwrap();
    check_one_invoice_each(&wp, &format!("0:{year}"), &ids, &told);
    let notes = wp
        .eval(
            false,
            &format!("echo implode(\"\\n\", cf_test_notes({}));", ids[0]),
        )
        .unwrap();
    assert_eq!(
        notes.matches("issued by Counterfoil").count(),
        1,
        "one note of the invoice: {notes}"
    );
}

#[test]
fn one_order_completed_by_six_processes_at_once_gets_one_invoice_on_the_extension() {
    one_order_at_once(true);
}

#[test]
fn one_order_completed_by_six_processes_at_once_gets_one_invoice_on_the_pure_php_backend() {
    one_order_at_once(false);
}

#[test]
fn fifty_orders_paid_by_eight_processes_get_fifty_numbers_without_gaps() {
    let wp = shop("woo-fifty");
    let ids = orders(&wp, 50, "12.00");
    let told = pay_at_once(&wp, true, 8, "late", &ids, 0).told;
    assert!(
        told.values().all(|v| v.len() == 8),
        "every worker read every order's number: {told:?}"
    );
    let year = wp
        .eval(false, "echo counterfoil_current_period()[0];")
        .unwrap();
    check_one_invoice_each(&wp, &format!("0:{year}"), &ids, &told);
}

/// Runs PHP in the site and returns what it printed, trimmed.
fn php(wp: &WordPress, code: &str) -> String {
    wp.eval(false, code).unwrap().trim().to_owned()
}

#[test]
fn paid_orders_carry_their_number_everywhere_and_by_their_paid_date() {
    let wp = shop("woo-display");
    // New Year's Eve in Auckland (UTC+13) is still the 31st in UTC.
    php(&wp, "update_option('timezone_string', 'Pacific/Auckland');");
    let ids = orders(&wp, 5, "30.00");
    let (transfer, unpaid, eve, new_year, card) = (ids[0], ids[1], ids[2], ids[3], ids[4]);
    let out = php(
        &wp,
        &format!(
            "$o = wc_get_order({transfer}); $o->set_status('on-hold'); $o->save();
             // The shop marks the bank transfer received.
             wc_get_order({transfer})->update_status('processing');
             foreach (array({eve} => gmmktime(10, 30, 0, 12, 31, 2025), {new_year} => gmmktime(11, 30, 0, 12, 31, 2025)) as $id => $paid) {{
                 $o = wc_get_order($id); $o->set_date_paid($paid); $o->set_status('completed'); $o->save();
             }}
             wc_get_order({card})->payment_complete('ch_1');
             $jpy = cf_test_order('1500.00', 'JPY'); wc_get_order($jpy)->payment_complete('ch_2');
             foreach (array({transfer}, {unpaid}, {eve}, {new_year}, {card}, $jpy) as $id) {{
                 echo $id, '=', wc_get_order($id)->get_meta('_counterfoil_invoice_number'), ' ';
             }}"
        ),
    );
    let numbers: BTreeMap<u64, String> = out
        .split_whitespace()
        .map(|p| {
            let (id, n) = p.split_once('=').unwrap();
            (id.parse().unwrap(), n.to_owned())
        })
        .collect();
    println!("{numbers:?}");
    assert_eq!(numbers[&unpaid], "", "an unpaid order has no number");
    assert_eq!(
        numbers[&eve], "2025-0001",
        "paid 23:30 on Dec 31st, local time"
    );
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    // 11:30 UTC on Dec 31st: by the server's UTC clock it would be 2025-0002.
    assert!(
        numbers[&new_year].starts_with("2026-"),
        "paid 00:30 on Jan 1st, local time: {numbers:?}"
    );
    for id in [transfer, card] {
        assert!(numbers[&id].starts_with(&format!("{year}-")), "{numbers:?}");
    }
    let jpy = *numbers.keys().max().unwrap();
    assert_eq!(
        wp.scalar(&format!(
            "SELECT CONCAT(amount, ' ', currency) FROM wp_counterfoil_payments WHERE gateway = 'woocommerce' AND transaction_id = '{jpy}'"
        )),
        "1500 JPY",
        "a yen total in its own smallest unit"
    );

    // The orders list: a column after the order number, the number or a dash.
    let cells = php(
        &wp,
        &format!(
            "echo implode(',', array_keys(apply_filters('manage_edit-shop_order_columns', array('cb' => '', 'order_number' => 'Order', 'order_status' => 'Status')))), \"\\n\";
             foreach (array({card}, {unpaid}) as $id) {{ do_action('manage_shop_order_posts_custom_column', 'counterfoil_invoice', $id); echo \"\\n\"; }}"
        ),
    );
    let lines: Vec<&str> = cells.lines().collect();
    assert_eq!(lines[0], "cb,order_number,counterfoil_invoice,order_status");
    assert!(lines[1].contains(&numbers[&card]), "{cells}");
    assert!(
        lines[2].contains('–') && !lines[2].contains(&year),
        "{cells}"
    );

    // The order page, My Account, the e-mail sent on payment, the REST order, search.
    let card_number = &numbers[&card];
    let page = php(
        &wp,
        &format!(
            "wp_set_current_user(1); $o = wc_get_order({card});
             do_action('woocommerce_admin_order_data_after_order_details', $o); echo '@@';
             do_action('woocommerce_order_details_after_order_table', $o); echo '@@';
             $r = rest_do_request(new WP_REST_Request('GET', '/wc/v3/orders/{card}'));
             echo wp_json_encode($r->get_data()['counterfoil_invoice']), '@@';
             echo implode(',', WC_Data_Store::load('order')->search_orders('{card_number}'));"
        ),
    );
    let lines: Vec<&str> = page.split("@@").map(str::trim).collect();
    assert!(
        lines[0].contains("Invoice number:") && lines[0].contains(card_number.as_str()),
        "{page}"
    );
    assert!(lines[1].contains(card_number.as_str()), "{page}");
    let rest: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(rest["number"], card_number.as_str());
    assert_eq!(rest["state"], "issued");
    assert_eq!(lines[3], card.to_string(), "search by invoice number");
    let mails = std::fs::read_dir(wp.dir().join("wp-content/cf-mails"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .filter(|m| m.contains(&format!("Invoice number:</strong> {card_number}")))
        .count();
    // Sent from within the payment's status change, after the number (the
    // customer's, and a real WooCommerce's new-order e-mail to the shop).
    assert!(mails >= 1, "the e-mail sent on payment carries the number");
    if !woocommerce::source().real {
        assert_eq!(
            php(
                &wp,
                "echo wp_json_encode(Automattic\\WooCommerce\\Utilities\\FeaturesUtil::$declared);"
            ),
            r#"{"custom_order_tables":{"counterfoil\/counterfoil.php":true}}"#,
            "HPOS compatibility declared"
        );
    }
}

/// A client holding series `scope`'s counter row locked (as a long
/// transaction or a stuck writer would), until dropped (its connection
/// killed on the server: a client that dies in SLEEP() is not noticed).
struct SeriesLock {
    client: std::process::Child,
    url: String,
    connection: String,
}

impl SeriesLock {
    // The client is waited for in Drop (it moves into the lock), or here on a timeout.
    #[allow(clippy::zombie_processes)]
    fn hold(wp: &WordPress, scope: &str) -> Self {
        let server = MariaDb::shared();
        let mut child = std::process::Command::new("mariadb")
            .args(["-h", "127.0.0.1", "-P", &server.port().to_string(), "-ucf", "-pcf"])
            .arg(wp.database())
            .arg("-e")
            .arg(format!(
                "START TRANSACTION; SELECT current_value FROM wp_invoice_sequences WHERE scope_key = '{scope}' FOR UPDATE; SELECT SLEEP(600);"
            ))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        loop {
            let id = wp.scalar(&format!(
                "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '{}' AND INFO LIKE 'SELECT SLEEP(600)%'",
                wp.database()
            ));
            if !id.is_empty() {
                return SeriesLock {
                    client: child,
                    url: wp.database_url().to_owned(),
                    connection: id,
                };
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the lock was not taken");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for SeriesLock {
    fn drop(&mut self) {
        let _ = MariaDb::query(&self.url, &format!("KILL {}", self.connection));
        let _ = self.client.kill();
        let _ = self.client.wait();
    }
}

fn numbering_fails_then_retries(extension: bool) {
    let wp = shop(if extension {
        "woo-outage-ext"
    } else {
        "woo-outage-php"
    });
    wp.mu_plugin(
        "deadline",
        "<?php add_filter('counterfoil_timeout_ms', function () { return 1500; });",
    )
    .unwrap();
    let ids = orders(&wp, 2, "40.00");
    let (first, held) = (ids[0], ids[1]);
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    let scope = format!("0:{year}");
    let run = |code: &str| wp.eval(extension, code).unwrap().trim().to_owned();
    run(&format!(
        "wc_get_order({first})->payment_complete('ch_first');"
    ));
    let lock = SeriesLock::hold(&wp, &scope);
    // The payment completes while the database holds the series past the deadline.
    let out = run(&format!(
        "$t = microtime(true); $ok = wc_get_order({held})->payment_complete('ch_held');
         $o = wc_get_order({held});
         echo $o->get_status(), '|', $o->get_meta('_counterfoil_invoice_number'), '|', $o->get_meta('_counterfoil_invoice_pending'), '|',
             round(microtime(true) - $t, 1), \"\\n\";
         // A refund while the number is pending: its credit note follows the invoice.
         $r = wc_create_refund(array('order_id' => {held}, 'amount' => '5.00', 'reason' => 'scratched'));
         echo $r->get_id(), \"\\n\", implode(\"\\n\", cf_test_notes({held})), \"\\n\", implode(\"\\n\", cf_test_pending_actions()), \"\\n\";
         ob_start(); do_action('manage_shop_order_posts_custom_column', 'counterfoil_invoice', {held}); echo ob_get_clean(), \"\\n\";
         $h = Counterfoil_WooCommerce_Backfill::site_health(); echo $h['status'], ' ', wp_strip_all_tags($h['description']);"
    ));
    println!("extension {extension}: {out}");
    let lines: Vec<&str> = out.lines().collect();
    let first_line: Vec<&str> = lines[0].split('|').collect();
    // Paid: processing, or completed (a real WooCommerce's order without items to ship).
    assert!(
        ["processing", "completed"].contains(&first_line[0]),
        "the order stays paid: {out}"
    );
    assert_eq!(first_line[1], "", "no number: {out}");
    assert_eq!(first_line[2], "counterfoil_unavailable", "{out}");
    // One deadline (1.5 s) for the payment, not one per hook it fires (3 s seen before).
    let waited: f64 = first_line[3].parse().unwrap();
    assert!(waited < 2.4, "the payment waited {waited} s: {out}");
    let refund: u64 = lines[1].parse().unwrap();
    assert!(out.contains("Invoice number pending:"), "a note: {out}");
    assert!(
        out.contains(&format!("counterfoil_woocommerce_number_order [{held}] ")),
        "the retry is queued: {out}"
    );
    assert!(
        out.contains(&format!(
            "counterfoil_woocommerce_credit_refund [{held},{refund}]"
        )),
        "the refund waits for the invoice: {out}"
    );
    assert!(out.contains("counterfoil-invoice-pending"), "{out}");
    assert!(
        out.contains(&format!(
            "critical 1 paid orders have no invoice number yet: {held}."
        )),
        "{out}"
    );
    // Retried while the database still holds the series: the next try waits longer.
    let again = run("cf_test_run_actions(true); echo implode(\"\\n\", cf_test_pending_actions());");
    println!("{again}");
    let delay: i64 = again
        .lines()
        .find(|l| l.starts_with("counterfoil_woocommerce_number_order"))
        .unwrap_or_else(|| panic!("no next retry: {again}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (20..=31).contains(&delay),
        "the second retry 30 s later: {again}"
    );
    drop(lock);
    // The database is back: the retries number the order and credit the refund.
    let done = run(&format!(
        "cf_test_run_actions(true); cf_test_run_actions(true);
         $o = wc_get_order({held}); $r = wc_get_order({refund});
         echo $o->get_meta('_counterfoil_invoice_number'), '|', $o->get_meta('_counterfoil_invoice_pending'), '|',
             $r->get_meta('_counterfoil_credit_note_number'), '|', count(cf_test_pending_actions()), '|',
             Counterfoil_WooCommerce_Backfill::site_health()['status'];"
    ));
    assert_eq!(
        done,
        format!("{year}-0002||CN-{year}-0001|0|good"),
        "{done}"
    );
    assert_eq!(
        registry(&wp, &scope),
        vec![(1, "issued".to_owned()), (2, "issued".to_owned())],
        "every number accounted for"
    );
}

#[test]
fn a_numbering_that_fails_leaves_the_order_paid_and_is_retried_on_the_extension() {
    numbering_fails_then_retries(true);
}

#[test]
fn a_numbering_that_fails_leaves_the_order_paid_and_is_retried_on_the_pure_php_backend() {
    numbering_fails_then_retries(false);
}

#[test]
fn refunds_at_once_never_credit_more_than_the_invoice_and_an_unpaid_order_gets_none() {
    let wp = shop("woo-refunds");
    let ids = orders(&wp, 2, "100.00");
    let (paid, unpaid) = (ids[0], ids[1]);
    php(
        &wp,
        &format!("wc_get_order({paid})->payment_complete('ch_r');"),
    );
    // Four refunds of 30.00 of one 100.00 order at once, as four admins' clicks.
    let script = repo_root().join("tests/wp-workers/woo-refund.php");
    let commands = (0..4)
        .map(|_| {
            let mut c = wp.php(true);
            c.arg(&script).arg(paid.to_string()).arg("30.00");
            c
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(120)).unwrap();
    let mut credit_notes = Vec::new();
    let mut refunds = Vec::new();
    for f in &finished {
        for line in f.stdout.lines() {
            let p: Vec<&str> = line.split_whitespace().collect();
            match p.as_slice() {
                ["refund", id, number] => {
                    refunds.push(id.to_string());
                    if *number != "-" {
                        credit_notes.push(number.to_string());
                    }
                }
                ["refused", ..] | ["start" | "end", _] => {}
                other => panic!("unexpected worker line {other:?}\n{}", f.stderr),
            }
        }
    }
    println!("refunds {refunds:?}, credit notes {credit_notes:?}");
    // WooCommerce may take all four (its own check has no lock): Counterfoil
    // credits at most the invoice, three of 30.00.
    assert_eq!(
        credit_notes.len(),
        refunds.len().min(3),
        "{refunds:?} {credit_notes:?}"
    );
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    let credited = wp.scalar(&format!(
        "SELECT COALESCE(SUM(amount), 0) FROM wp_counterfoil_payments WHERE scope_key = '0:cn:{year}'"
    ));
    assert!(
        credited.parse::<f64>().unwrap() <= 100.0,
        "credited {credited} of a 100.00 invoice"
    );
    let numbers: Vec<u64> = registry(&wp, &format!("0:cn:{year}"))
        .iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(numbers, (1..=credit_notes.len() as u64).collect::<Vec<_>>());
    if refunds.len() > credit_notes.len() {
        let notes = php(
            &wp,
            &format!("echo implode(\"\\n\", cf_test_notes({paid}));"),
        );
        assert!(notes.contains("No credit note for refund #"), "{notes}");
    }
    // A refund of an order that was never paid makes no credit note.
    let out = php(
        &wp,
        &format!(
            "$r = wc_create_refund(array('order_id' => {unpaid}, 'amount' => '10.00'));
             echo is_wp_error($r) ? 'refused' : ('[' . wc_get_order($r->get_id())->get_meta('_counterfoil_credit_note_number') . ']'), ' ', count(cf_test_pending_actions());"
        ),
    );
    assert!(out == "[] 0" || out == "refused 0", "{out}");
    assert_eq!(
        registry(&wp, &format!("0:cn:{year}")).len(),
        credit_notes.len()
    );
}

#[test]
fn the_shop_numbers_paid_orders_that_have_none_and_site_health_lists_them() {
    let wp = shop("woo-backfill");
    let ids = orders(&wp, 3, "15.00");
    // Paid while the integration was not listening (Counterfoil inactive,
    // or a process that died between the payment and its number).
    php(
        &wp,
        &format!(
            "foreach (wc_get_is_paid_statuses() as $s) {{ remove_all_actions('woocommerce_order_status_' . $s); }}
             remove_all_actions('woocommerce_payment_complete');
             foreach (array({}, {}) as $id) {{ wc_get_order($id)->payment_complete('ch_' . $id); }}",
            ids[0], ids[1]
        ),
    );
    let health = php(&wp, "$h = Counterfoil_WooCommerce_Backfill::site_health(); echo $h['status'], ' ', wp_strip_all_tags($h['description']);");
    assert!(
        health.starts_with(&format!(
            "critical 2 paid orders have no invoice number yet: {}, {}.",
            ids[0], ids[1]
        )),
        "{health}"
    );
    // The CLI's route: a subscriber is refused, a dry run writes nothing, then --execute.
    let rest = |user: &str, execute: bool| {
        php(
            &wp,
            &format!(
                "wp_set_current_user(get_user_by('login', '{user}')->ID);
                 $q = new WP_REST_Request('POST', '/counterfoil/v1/woocommerce/backfill');
                 if ({execute}) {{ $q->set_param('execute', true); }}
                 $r = rest_do_request($q); echo $r->get_status(), ' ', wp_json_encode($r->get_data());"
            ),
        )
    };
    assert!(rest("subscriber", true).starts_with("403 "));
    let plan = rest("admin", false);
    assert!(
        plan.contains(&format!("\"orders\":[{},{}]", ids[0], ids[1])),
        "{plan}"
    );
    assert!(plan.contains("\"executed\":false"), "{plan}");
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        "0",
        "a dry run writes nothing"
    );
    let done = rest("admin", true);
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    assert!(done.starts_with("200 "), "{done}");
    assert!(
        done.contains(&format!(
            "\"numbered\":{{\"{}\":\"{year}-0001\",\"{}\":\"{year}-0002\"}}",
            ids[0], ids[1]
        )),
        "{done}"
    );
    assert!(
        php(
            &wp,
            "echo Counterfoil_WooCommerce_Backfill::site_health()['status'];"
        ) == "good"
    );
    // Nothing left: a second run numbers nothing; the unpaid order stays unnumbered.
    assert!(rest("admin", true).contains("\"orders\":[]"));
    assert_eq!(registry(&wp, &format!("0:{year}")).len(), 2);
}

/// A document as WP Overnight's PDF plugin passes it to its number filters
/// (a STAND-IN of its Invoice document: `get_type()` and `order`).
const PDF_DOCUMENT: &str = "class CF_Test_Wpo_Document { public $order; public $type;
    function __construct($type, $order) { $this->type = $type; $this->order = $order; }
    function get_type() { return $this->type; } }
function cf_test_pdf_number($type, $order_id) {
    $doc = new CF_Test_Wpo_Document($type, wc_get_order($order_id));
    // As WP Overnight's Invoice::init_number() asks.
    if (apply_filters('woocommerce_invoice_number_by_plugin', false) || apply_filters('wpo_wcpdf_external_invoice_number_enabled', false, $doc)) {
        $n = apply_filters('woocommerce_generate_invoice_number', null, $doc->order);
        return apply_filters('wpo_wcpdf_external_invoice_number', $n, $doc);
    }
    return 'own';
}";

#[test]
fn wp_overnights_pdf_invoice_carries_the_number_whichever_comes_first() {
    let wp = shop("woo-pdf");
    wp.mu_plugin("wpo-document", &format!("<?php\n{PDF_DOCUMENT}"))
        .unwrap();
    let ids = orders(&wp, 2, "25.00");
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    // The shop makes the PDF of an order paid by bank transfer before the money arrives,
    let first = php(
        &wp,
        &format!("echo cf_test_pdf_number('invoice', {});", ids[0]),
    );
    assert_eq!(first, format!("{year}-0001"));
    // then the payment arrives: the same invoice, no second number.
    let paid = php(
        &wp,
        &format!(
            "wc_get_order({0})->payment_complete('bt_1'); echo wc_get_order({0})->get_meta('_counterfoil_invoice_number'), ' ', cf_test_pdf_number('invoice', {0});",
            ids[0]
        ),
    );
    assert_eq!(paid, format!("{year}-0001 {year}-0001"));
    // Paid first, then the PDF: the payment's number.
    let second = php(
        &wp,
        &format!(
            "wc_get_order({0})->payment_complete('ch_2'); echo cf_test_pdf_number('invoice', {0}), ' ', cf_test_pdf_number('packing-slip', {0});",
            ids[1]
        ),
    );
    assert_eq!(
        second,
        format!("{year}-0002 {year}-0002"),
        "the older filters answer every document with the order's number"
    );
    assert_eq!(registry(&wp, &format!("0:{year}")).len(), 2);
    // No number to be had: the PDF plugin is refused, never left to number from its own store.
    let _lock = SeriesLock::hold(&wp, &format!("0:{year}"));
    wp.mu_plugin(
        "deadline",
        "<?php add_filter('counterfoil_timeout_ms', function () { return 1000; });",
    )
    .unwrap();
    let third = orders(&wp, 1, "5.00")[0];
    let refused = php(
        &wp,
        &format!("try {{ echo cf_test_pdf_number('invoice', {third}); }} catch (RuntimeException $e) {{ echo 'refused: ', $e->getMessage(); }}"),
    );
    assert!(
        refused.starts_with(&format!(
            "refused: Counterfoil has no invoice number for order {third} yet"
        )),
        "{refused}"
    );
}

#[test]
fn the_number_in_the_browser_orders_column_order_page_email_and_my_account() {
    let wp = shop("woo-browser");
    let out = php(
        &wp,
        "$role = get_role('customer') ? 'customer' : 'subscriber';
         $c = wp_insert_user(array('user_login' => 'shopper', 'user_pass' => 'shopper-password', 'user_email' => 'shopper@example.invalid', 'role' => $role));
         $id = cf_test_order('64.00', 'EUR', $c);
         wc_get_order($id)->payment_complete('ch_browser');
         echo $id, ' ', wc_get_order($id)->get_meta('_counterfoil_invoice_number'), ' ', wp_json_encode(cf_test_screens($id));",
    );
    let mut parts = out.splitn(3, ' ');
    let (_id, number, screens) = (
        parts.next().unwrap(),
        parts.next().unwrap().to_owned(),
        parts.next().unwrap(),
    );
    let screens: serde_json::Value = serde_json::from_str(screens).unwrap();
    // The customer's e-mail as sent on payment, without the capture's headers.
    let mail = std::fs::read_dir(wp.dir().join("wp-content/cf-mails"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|m| {
            m.starts_with("To: shopper@example.invalid") || m.contains("counterfoil-email-invoice")
        })
        .expect("an e-mail of the payment");
    let body = mail.split_once("\n\n").map_or(mail.as_str(), |(_, b)| b);
    let mail_file = wp.dir().join("wp-content/cf-mails/payment.html");
    std::fs::write(&mail_file, body).unwrap();
    let site = wp.serve(true, 2).unwrap();
    let printed = counterfoil_tests::browser::run_with(
        "woocommerce.mjs",
        &site,
        &[
            &number,
            screens["orders"].as_str().unwrap(),
            screens["order"].as_str().unwrap(),
            screens["account"].as_str().unwrap(),
            mail_file.to_str().unwrap(),
            "shopper",
            "shopper-password",
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    println!("{printed}");
    for shot in ["orders-column", "order-page", "order-email", "my-account"] {
        assert!(
            counterfoil_tests::browser::screenshots_of("woocommerce.mjs")
                .join(format!("{shot}.png"))
                .exists()
        );
    }
}

/// Issue 40: the customer's e-mail sent on payment carries the invoice's
/// UBL, its buyer the order's billing address; without what a valid
/// document needs the e-mail still goes, without the file.
#[test]
fn the_customers_email_carries_the_invoices_ubl_with_the_billing_address() {
    let wp = shop("woo-einvoice");
    let ids = orders(&wp, 2, "42.00");
    // No seller yet: the first e-mail goes without a document.
    php(
        &wp,
        &format!("wc_get_order({})->payment_complete('ch_nodoc');", ids[0]),
    );
    php(
        &wp,
        "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
             'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));",
    );
    php(
        &wp,
        &format!("wc_get_order({})->payment_complete('ch_doc');", ids[1]),
    );
    let dir = wp.dir().join("wp-content/cf-mails");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mails = names.iter().filter(|n| n.ends_with(".html")).count();
    let attached: Vec<&String> = names
        .iter()
        .filter(|n| n.contains(".attachment-") && n.ends_with("-ubl.xml"))
        .collect();
    assert!(mails >= 2, "both e-mails were sent: {names:?}");
    assert_eq!(
        attached.len(),
        1,
        "one e-invoice, on the second order's e-mail: {names:?}"
    );
    let ubl = std::fs::read_to_string(dir.join(attached[0])).unwrap();
    let number = php(
        &wp,
        &format!(
            "echo wc_get_order({})->get_meta('_counterfoil_invoice_number');",
            ids[1]
        ),
    );
    for want in [
        format!("<cbc:ID>{number}</cbc:ID>"),
        "<cbc:RegistrationName>Jan Peeters</cbc:RegistrationName>".to_owned(),
        "<cbc:CityName>Gent</cbc:CityName>".to_owned(),
        "<cbc:EndpointID schemeID=\"EM\">customer@example.invalid</cbc:EndpointID>".to_owned(),
        ">42.00</cbc:TaxInclusiveAmount>".to_owned(),
    ] {
        assert!(ubl.contains(&want), "{want} in {ubl}");
    }

    // With the extension: the PDF too, on the e-mail and in My Account,
    // for the order's customer only (a guest by the order's key).
    let out = wp
        .eval(
            true,
            "$role = get_role('customer') ? 'customer' : 'subscriber';
             $c = wp_insert_user(array('user_login' => 'shopper', 'user_pass' => 'shopper-password', 'user_email' => 'shopper@example.invalid', 'role' => $role));
             wp_insert_user(array('user_login' => 'other', 'user_pass' => 'other-password', 'user_email' => 'other@example.invalid', 'role' => $role));
             $mine = cf_test_order('42.00', 'EUR', $c); wc_get_order($mine)->payment_complete('ch_pdf');
             $guest = cf_test_order('42.00'); wc_get_order($guest)->payment_complete('ch_guest');
             echo $mine, ' ', $guest, ' ', wc_get_order($guest)->get_order_key();",
        )
        .unwrap();
    let parts: Vec<&str> = out.split_whitespace().collect();
    let (mine, guest, key) = (parts[0], parts[1], parts[2]);
    let pdfs: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy().contains(".attachment-") && p.to_string_lossy().ends_with(".pdf")
        })
        .collect();
    assert!(!pdfs.is_empty(), "the e-mails carry the PDF");
    for pdf in &pdfs {
        assert!(
            std::fs::read(pdf).unwrap().starts_with(b"%PDF-1.7"),
            "{}",
            pdf.display()
        );
    }
    let site = wp.serve(true, 2).unwrap();
    let shopper =
        counterfoil_tests::wp_session::Session::login(site.port(), "shopper", "shopper-password")
            .unwrap();
    let account = wp
        .eval(true, &format!("echo cf_test_screens({mine})['account'];"))
        .unwrap();
    let view = shopper.get(account.trim()).unwrap();
    let path = counterfoil_tests::wp_session::link_path(
        &view.body,
        &["action=counterfoil_order_document", "format=pdf"],
    )
    .unwrap_or_else(|| {
        panic!(
            "no PDF link on the shopper's order view {account}: {}",
            view.body
        )
    });
    let got = shopper.get(&path).unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert!(got.bytes.starts_with(b"%PDF-1.7"));
    let other =
        counterfoil_tests::wp_session::Session::login(site.port(), "other", "other-password")
            .unwrap();
    assert_eq!(
        other.get(&path).unwrap().status,
        403,
        "another customer may not"
    );
    let anonymous = |query: &str| {
        counterfoil_tests::php::http(
            site.port(),
            "GET",
            &format!("/wp-admin/admin-post.php?{query}"),
            &[],
            b"",
        )
        .unwrap()
    };
    let guest_pdf = anonymous(&format!(
        "action=counterfoil_order_document&order={guest}&format=pdf&key={key}"
    ));
    assert_eq!(guest_pdf.status, 200, "{}", guest_pdf.body);
    assert!(guest_pdf.bytes.starts_with(b"%PDF-1.7"));
    assert_eq!(
        anonymous(&format!(
            "action=counterfoil_order_document&order={guest}&format=pdf&key=wc_order_wrong"
        ))
        .status,
        403,
        "a wrong key"
    );
    assert_eq!(
        anonymous(&format!(
            "action=counterfoil_order_document&order={mine}&format=pdf&key={key}"
        ))
        .status,
        403,
        "a registered customer's order is not a guest's"
    );
}
