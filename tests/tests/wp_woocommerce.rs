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

/// Runs `workers` copies of tests/wp-workers/woo-pay.php at once over `ids`:
/// per order, the numbers the workers read back.
fn pay_at_once(
    wp: &WordPress,
    extension: bool,
    workers: usize,
    load: &str,
    ids: &[u64],
) -> BTreeMap<u64, Vec<String>> {
    let script = repo_root().join("tests/wp-workers/woo-pay.php");
    let commands = (0..workers)
        .map(|w| {
            let mut c = wp.php(extension);
            c.arg(&script).arg(load).arg(w.to_string());
            c.args(ids.iter().map(|i| i.to_string()));
            c
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300)).unwrap();
    let mut told = BTreeMap::<u64, Vec<String>>::new();
    for f in &finished {
        for line in f.stdout.lines() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            match parts.as_slice() {
                ["ok", id, number] => told
                    .entry(id.parse().unwrap())
                    .or_default()
                    .push((*number).to_owned()),
                ["start" | "end", _] => {}
                other => panic!("unexpected worker line {other:?}\n{}\n{}", f.stdout, f.stderr),
            }
        }
    }
    told
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
        assert!(seen.insert(p[1].to_owned()), "number {} on two orders", p[1]);
        let heard = told.get(&id).unwrap_or_else(|| panic!("no worker told order {id}"));
        assert!(
            heard.iter().all(|n| n == p[1]),
            "order {id} carries {} but workers were told {heard:?}",
            p[1]
        );
    }
    assert_eq!(seen.len(), ids.len());
}

fn one_order_at_once(extension: bool) {
    let wp = shop(if extension { "woo-once-ext" } else { "woo-once-php" });
    let ids = orders(&wp, 1, "49.90");
    // Six processes hold the order as unpaid and complete it at the same moment.
    let told = pay_at_once(&wp, extension, 6, "early", &ids);
    assert_eq!(told[&ids[0]].len(), 6, "every delivery gets its number: {told:?}");
    let year = wp.eval(false, "echo counterfoil_current_period()[0];").unwrap();
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
    let told = pay_at_once(&wp, true, 8, "late", &ids);
    assert!(
        told.values().all(|v| v.len() == 8),
        "every worker read every order's number: {told:?}"
    );
    let year = wp.eval(false, "echo counterfoil_current_period()[0];").unwrap();
    check_one_invoice_each(&wp, &format!("0:{year}"), &ids, &told);
}
