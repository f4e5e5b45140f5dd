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
            "cf_test_ship_goods({transfer});
             $o = wc_get_order({transfer}); $o->set_status('on-hold'); $o->save();
             // The shop marks the bank transfer of goods to ship received
             // (paid then, as WooCommerce judges paid: an order with nothing
             // to ship is paid only when completed).
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
    // The key and the order's e-mail (the key alone is refused: see
    // a_guest_downloads_with_the_orders_key_and_billing_email_never_the_key_alone).
    let guest_pdf = counterfoil_tests::php::http(
        site.port(),
        "POST",
        &format!(
            "/wp-admin/admin-post.php?action=counterfoil_order_document&order={guest}&format=pdf&key={key}"
        ),
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"email=customer%40example.invalid",
    )
    .unwrap();
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

/// A seller whose documents can be made for orders without items (the
/// default line under category E).
const SELLER: &str = "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
     'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));";

/// An anonymous request to admin-post.php: a GET of `query`, or a form POST
/// of `form` (url-encoded) when it is not empty.
fn admin_post(port: u16, query: &str, form: &str) -> counterfoil_tests::php::Response {
    let path = format!("/wp-admin/admin-post.php?{query}");
    if form.is_empty() {
        counterfoil_tests::php::http(port, "GET", &path, &[], b"").unwrap()
    } else {
        counterfoil_tests::php::http(
            port,
            "POST",
            &path,
            &[("Content-Type", "application/x-www-form-urlencoded")],
            form.as_bytes(),
        )
        .unwrap()
    }
}

/// Issue woo-life, item 7: a guest downloads their order's invoice with the
/// order's key AND its billing e-mail (compared as WooCommerce compares it,
/// case-insensitively), never with the key alone; an order's download
/// serves only that order's own invoice (an order carrying another order's
/// invoice post id, as a copy of its meta would, is refused); the order's
/// key is printed only where the visitor showed it already, never where
/// only the order is known, nor in the e-mails.
#[test]
fn a_guest_downloads_with_the_orders_key_and_billing_email_never_the_key_alone() {
    let wp = shop("woo-guest");
    php(&wp, SELLER);
    let out = php(
        &wp,
        "$a = cf_test_order('42.00'); wc_get_order($a)->payment_complete('ch_a');
         $b = cf_test_order('42.00'); wc_get_order($b)->payment_complete('ch_b');
         $oa = wc_get_order($a); $ob = wc_get_order($b);
         // As a copy of the order's meta would (a renewal, a duplicated order): B names A's invoice.
         $ob->update_meta_data('_counterfoil_invoice_id', (int) $oa->get_meta('_counterfoil_invoice_id'));
         $ob->save_meta_data();
         wp_set_current_user(0);
         ob_start(); do_action('woocommerce_order_details_after_order_table', $oa); $plain = ob_get_clean();
         $_GET['key'] = $oa->get_order_key();
         ob_start(); do_action('woocommerce_order_details_after_order_table', $oa); $received = ob_get_clean();
         echo $a, ' ', $b, ' ', $oa->get_order_key(), ' ', $ob->get_order_key(), ' ', $oa->get_meta('_counterfoil_invoice_number'), \"\\n\",
             str_replace(\"\\n\", ' ', $plain), \"\\n\", str_replace(\"\\n\", ' ', $received);",
    );
    let lines: Vec<&str> = out.lines().collect();
    let p: Vec<&str> = lines[0].split_whitespace().collect();
    let (a, b, key_a, key_b, number) = (p[0], p[1], p[2], p[3], p[4]);
    // Where only the order is known (an order-tracking page: its id and the
    // e-mail), its key is not printed; where the visitor came with it (the
    // order-received page's address), the link carries it.
    assert!(
        lines[1].contains(number) && !lines[1].contains(key_a) && !lines[1].contains("key="),
        "no key printed without the key: {}",
        lines[1]
    );
    assert!(
        lines[2].contains("action=counterfoil_order_document") && lines[2].contains(key_a),
        "the order-received page's link: {}",
        lines[2]
    );
    // The e-mails carry no key.
    for mail in std::fs::read_dir(wp.dir().join("wp-content/cf-mails")).unwrap() {
        let text = std::fs::read(mail.unwrap().path()).unwrap();
        let text = String::from_utf8_lossy(&text);
        assert!(
            !text.contains(key_a) && !text.contains(key_b),
            "an e-mail carries an order key: {text}"
        );
    }
    let site = wp.serve(true, 2).unwrap();
    let port = site.port();
    let query = format!("action=counterfoil_order_document&order={a}&format=ubl&key={key_a}");
    let key_alone = admin_post(port, &query, "");
    assert_eq!(key_alone.status, 403, "the key alone: {}", key_alone.body);
    assert!(
        key_alone.body.contains("name=\"email\""),
        "the guest is asked for the order's e-mail: {}",
        key_alone.body
    );
    let no_email = admin_post(port, &query, "email=");
    assert_eq!(no_email.status, 403, "no e-mail: {}", no_email.body);
    let wrong = admin_post(port, &query, "email=other%40example.invalid");
    assert_eq!(wrong.status, 403, "another e-mail: {}", wrong.body);
    let both = admin_post(port, &query, "email=Customer%40Example.INVALID");
    assert_eq!(both.status, 200, "the key and the e-mail: {}", both.body);
    assert!(
        both.body.contains(&format!("<cbc:ID>{number}</cbc:ID>")),
        "{}",
        both.body
    );
    // The same form posted (the action in the body, as the form sends it).
    let form = admin_post(
        port,
        "",
        &format!(
            "action=counterfoil_order_document&order={a}&format=ubl&key={key_a}&email=customer%40example.invalid"
        ),
    );
    assert_eq!(form.status, 200, "the e-mail form: {}", form.body);
    // Another order's invoice: B's own key and e-mail do not get A's invoice.
    let other = admin_post(
        port,
        &format!("action=counterfoil_order_document&order={b}&format=ubl&key={key_b}"),
        "email=customer%40example.invalid",
    );
    assert_eq!(other.status, 403, "another order's invoice: {}", other.body);
    assert!(!other.body.contains(number), "{}", other.body);
}

/// Issue woo-life, items 3 and 7: a shop manager (`manage_woocommerce`, no
/// `manage_options`) downloads an order's invoice and its credit notes from
/// the order page, where each refund's row shows its credit note's number;
/// only the order's own credit notes; the customer's My Account view lists
/// the credit notes next to the invoice, and the REST order names them.
#[test]
fn a_shop_manager_downloads_the_invoice_and_credit_notes_from_the_order_page() {
    let wp = shop("woo-manager");
    php(&wp, SELLER);
    let out = php(
        &wp,
        "$role = get_role('customer') ? 'customer' : 'subscriber';
         $c = wp_insert_user(array('user_login' => 'shopper', 'user_pass' => 'shopper-password', 'user_email' => 'shopper@example.invalid', 'role' => $role));
         $m = wp_insert_user(array('user_login' => 'manager', 'user_pass' => 'manager-password', 'user_email' => 'manager@example.invalid', 'role' => 'shop_manager'));
         wp_insert_user(array('user_login' => 'other', 'user_pass' => 'other-password', 'user_email' => 'other@example.invalid', 'role' => $role));
         if (user_can($m, 'manage_options') || !user_can($m, 'manage_woocommerce')) { echo 'not a shop manager'; exit(1); }
         $id = cf_test_order('42.00', 'EUR', $c); wc_get_order($id)->payment_complete('ch_m');
         $r = wc_create_refund(array('order_id' => $id, 'amount' => '10.00', 'reason' => 'scratched'));
         $other = cf_test_order('42.00', 'EUR', $c); wc_get_order($other)->payment_complete('ch_o');
         $ro = wc_create_refund(array('order_id' => $other, 'amount' => '5.00'));
         cf_test_run_actions(true);
         $r = wc_get_order($r->get_id()); $ro = wc_get_order($ro->get_id());
         echo $id, ' ', wc_get_order($id)->get_meta('_counterfoil_invoice_number'), ' ', $r->get_meta('_counterfoil_credit_note_number'), ' ',
             (int) $ro->get_meta('_counterfoil_credit_note_id'), ' ', $ro->get_meta('_counterfoil_credit_note_number'), ' ',
             wp_json_encode(cf_test_screens($id)), \"\\n\";
         wp_set_current_user(1);
         $q = rest_do_request(new WP_REST_Request('GET', '/wc/v3/orders/' . $id));
         echo wp_json_encode($q->get_data()['counterfoil_invoice']);",
    );
    let lines: Vec<&str> = out.lines().collect();
    let p: Vec<&str> = lines[0].splitn(6, ' ').collect();
    let (number, credit_note, other_cn_post, other_cn) = (p[1], p[2], p[3], p[4]);
    let screens: serde_json::Value = serde_json::from_str(p[5]).unwrap();
    assert!(!credit_note.is_empty() && !other_cn.is_empty(), "{out}");
    let rest: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(rest["number"], number, "{rest}");
    assert_eq!(rest["credit_notes"][0]["number"], credit_note, "{rest}");
    assert_eq!(
        rest["credit_notes"].as_array().map(Vec::len),
        Some(1),
        "only the order's own: {rest}"
    );

    let site = wp.serve(true, 2).unwrap();
    let manager =
        counterfoil_tests::wp_session::Session::login(site.port(), "manager", "manager-password")
            .unwrap();
    let page = manager.get(screens["order"].as_str().unwrap()).unwrap();
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains(credit_note),
        "the refund's row names its credit note: {}",
        page.body
    );
    let invoice_link = counterfoil_tests::wp_session::link_path(
        &page.body,
        &["action=counterfoil_order_document", "format=ubl"],
    )
    .unwrap_or_else(|| panic!("no invoice link on the order page: {}", page.body));
    assert!(!invoice_link.contains("credit_note="), "{invoice_link}");
    let cn_link = counterfoil_tests::wp_session::link_path(
        &page.body,
        &[
            "action=counterfoil_order_document",
            "format=ubl",
            "credit_note=",
        ],
    )
    .unwrap_or_else(|| panic!("no credit note link on the order page: {}", page.body));
    let got = manager.get(&invoice_link).unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert!(
        got.body.contains(&format!("<cbc:ID>{number}</cbc:ID>")),
        "{}",
        got.body
    );
    let got = manager.get(&cn_link).unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert!(
        got.body
            .contains(&format!("<cbc:ID>{credit_note}</cbc:ID>"))
            && got.body.contains("<CreditNote"),
        "{}",
        got.body
    );
    // Another order's credit note through this order's link: refused.
    let swapped = cn_link
        .split('&')
        .map(|kv| {
            if kv.starts_with("credit_note=") {
                format!("credit_note={other_cn_post}")
            } else {
                kv.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("&");
    let refused = manager.get(&swapped).unwrap();
    assert_eq!(
        refused.status, 403,
        "another order's credit note: {}",
        refused.body
    );
    assert!(!refused.body.contains(other_cn), "{}", refused.body);
    // Another customer with the manager's link: refused.
    let other =
        counterfoil_tests::wp_session::Session::login(site.port(), "other", "other-password")
            .unwrap();
    assert_eq!(other.get(&invoice_link).unwrap().status, 403);

    // The customer's order view: the credit note next to the invoice.
    let shopper =
        counterfoil_tests::wp_session::Session::login(site.port(), "shopper", "shopper-password")
            .unwrap();
    let view = shopper.get(screens["account"].as_str().unwrap()).unwrap();
    assert!(
        view.body.contains(number) && view.body.contains(credit_note),
        "{}",
        view.body
    );
    let mine = counterfoil_tests::wp_session::link_path(
        &view.body,
        &[
            "action=counterfoil_order_document",
            "format=ubl",
            "credit_note=",
        ],
    )
    .unwrap_or_else(|| panic!("no credit note link in My Account: {}", view.body));
    let got = shopper.get(&mine).unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert!(
        got.body
            .contains(&format!("<cbc:ID>{credit_note}</cbc:ID>")),
        "{}",
        got.body
    );
}

/// Records, as each e-mail is sent, every attachment's path, its mode and
/// its folder's mode, and the e-mail's subject (before the helpers' capture).
/// Records each attachment of a mail with its mode, its folder's and the
/// WooCommerce e-mail's id (as WooCommerce's attachments filter names it:
/// subjects differ between WooCommerce versions and shops).
const ATTACHMENT_STAT: &str = r#"<?php
add_filter('woocommerce_email_attachments', function ($files, $id) {
    $GLOBALS['cf_test_email_id'] = $id;
    return $files;
}, PHP_INT_MAX, 2);
add_filter('pre_wp_mail', function ($short, $atts) {
    foreach ((array) $atts['attachments'] as $file) {
        clearstatcache();
        file_put_contents(WP_CONTENT_DIR . '/cf-attachments.txt', sprintf("%s|%04o|%04o|%s\n", $file,
            fileperms($file) & 07777, fileperms(dirname($file)) & 07777, $GLOBALS['cf_test_email_id'] ?? ''), FILE_APPEND);
    }
    return $short;
}, 1, 2);
"#;

/// Issue woo-life, items 3 and 7: the customer's refund e-mail (WooCommerce
/// sends it from `woocommerce_order_partially_refunded` /
/// `…_fully_refunded`) carries that refund's credit note; every attachment
/// is a 0600 file in a 0700 folder of its own outside the site, removed as
/// soon as its e-mail is sent (not at the request's end).
#[test]
fn the_refund_email_carries_its_credit_note_and_attachments_are_private_and_gone_once_sent() {
    let wp = shop("woo-refund-mail");
    wp.mu_plugin("attachment-stat", ATTACHMENT_STAT).unwrap();
    php(&wp, SELLER);
    let stats = wp.dir().join("wp-content/cf-attachments.txt");
    let out = php(
        &wp,
        "$id = cf_test_order('42.00'); wc_get_order($id)->payment_complete('ch_rm');
         $r1 = wc_create_refund(array('order_id' => $id, 'amount' => '10.00', 'reason' => 'one of two'));
         $r2 = wc_create_refund(array('order_id' => $id, 'amount' => '32.00', 'reason' => 'the rest'));
         // Still in the request that sent them: every attachment is gone already.
         $left = array();
         foreach (file(WP_CONTENT_DIR . '/cf-attachments.txt', FILE_IGNORE_NEW_LINES) as $line) {
             $file = explode('|', $line)[0];
             if (file_exists($file) || file_exists(dirname($file))) { $left[] = $file; }
         }
         echo wc_get_order($id)->get_meta('_counterfoil_invoice_number'), ' ',
             wc_get_order($r1->get_id())->get_meta('_counterfoil_credit_note_number'), ' ',
             wc_get_order($r2->get_id())->get_meta('_counterfoil_credit_note_number'), ' ', ABSPATH, \"\\n\", implode(' ', $left);",
    );
    let mut lines = out.lines();
    let p: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let (number, cn1, cn2, site_root) = (p[0], p[1], p[2], p[3]);
    let left = lines.next().unwrap_or_default();
    assert!(
        left.trim().is_empty(),
        "attachments left after their e-mail was sent: {left}"
    );
    let recorded = std::fs::read_to_string(&stats).unwrap();
    println!("{recorded}");
    let rows: Vec<Vec<&str>> = recorded.lines().map(|l| l.split('|').collect()).collect();
    for row in &rows {
        assert_eq!(row[1], "0600", "the file's mode: {row:?}");
        assert_eq!(row[2], "0700", "its folder's mode: {row:?}");
        assert!(!row[0].starts_with(site_root), "outside the site: {row:?}");
        assert!(!std::path::Path::new(row[0]).exists(), "{row:?}");
        assert!(
            !std::path::Path::new(row[0]).parent().unwrap().exists(),
            "{row:?}"
        );
    }
    let sent = |emails: &[&str], file: &str| {
        rows.iter()
            .any(|r| emails.contains(&r[3]) && r[0].ends_with(&format!("/{file}-ubl.xml")))
    };
    // The paid order's e-mail: processing, or completed for an order with
    // nothing to ship (WooCommerce's needs_processing()).
    assert!(
        sent(
            &["customer_processing_order", "customer_completed_order"],
            number
        ),
        "the invoice on the order's e-mail: {recorded}"
    );
    assert!(
        sent(&["customer_partially_refunded_order"], cn1),
        "the first credit note: {recorded}"
    );
    assert!(
        sent(&["customer_refunded_order"], cn2),
        "the second credit note: {recorded}"
    );
    assert_eq!(rows.len(), 3, "one document on each e-mail: {recorded}");
    // The captured attachment is the credit note's UBL.
    let dir = wp.dir().join("wp-content/cf-mails");
    let captured = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(&format!("-{cn2}-ubl.xml")))
        .expect("the full refund's credit note captured");
    let ubl = std::fs::read_to_string(captured).unwrap();
    assert!(
        ubl.contains("<CreditNote")
            && ubl.contains(&format!("<cbc:ID>{cn2}</cbc:ID>"))
            && ubl.contains(">32.00</cbc:TaxInclusiveAmount>"),
        "{ubl}"
    );
}

/// Issue woo-life, item 5: an amount-only refund's line names the order by
/// its number as WooCommerce shows it (`get_order_number()`, which
/// sequential-number plugins filter), not by its id.
#[test]
fn an_amount_only_refunds_line_names_the_order_by_its_number() {
    let wp = shop("woo-order-number");
    wp.mu_plugin(
        "order-number",
        "<?php add_filter('woocommerce_order_number', function ($id) { return 'WEB-' . $id; });",
    )
    .unwrap();
    let out = php(
        &wp,
        &format!(
            "{SELLER}
             $id = cf_test_order_with_items(array(array('line_item', 'Lamp', 2, '10.00', 21, '2.10')));
             wc_get_order($id)->payment_complete('ch_on');
             $r = wc_create_refund(array('order_id' => $id, 'amount' => '6.05', 'reason' => 'one lamp'));
             cf_test_run_actions(true);
             $cn = (int) wc_get_order($r->get_id())->get_meta('_counterfoil_credit_note_id');
             $d = counterfoil_invoice_document($cn, 'ubl');
             echo $id, \"\\n\", is_wp_error($d) ? $d->get_error_message() : $d;"
        ),
    );
    let (id, ubl) = out.split_once('\n').unwrap();
    assert!(
        ubl.contains(&format!("<cbc:Name>Refund of order #WEB-{id}</cbc:Name>")),
        "{ubl}"
    );
}
