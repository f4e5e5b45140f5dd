//! `counterfoil adopt --from wp-overnight` on a WooCommerce site (the
//! stand-in, or a real WooCommerce named by COUNTERFOIL_WOOCOMMERCE) whose
//! orders WP Overnight's PDF plugin numbered before: its number stores and
//! the orders' numbers (`_wcpdf_invoice_number`, the formatted number, and
//! `_wcpdf_invoice_number_data`, its parts), written as that plugin writes
//! them — by hand, and by the plugin itself (its stand-in, or the real one
//! named by COUNTERFOIL_WPO: tests/src/woocommerce.rs). Nothing
//! renumbered, every number accounted for, and the next paid order
//! continues the sequence.

use std::process::{Command, Output};

use counterfoil_tests::woocommerce;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn adopt(wp: &WordPress, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_counterfoil"))
        .args(["adopt", "--from", "wp-overnight"])
        .args(extra)
        .env("DATABASE_URL", wp.database_url())
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    counterfoil_tests::output_text(out)
}

fn php(wp: &WordPress, code: &str) -> String {
    wp.eval(false, code).unwrap().trim().to_owned()
}

fn registry(wp: &WordPress) -> Vec<String> {
    MariaDb::query(
        wp.database_url(),
        "SELECT CONCAT(scope_key, ' ', number, ' ', status, ' ', COALESCE(transaction_id, '-')) FROM wp_counterfoil_numbers ORDER BY scope_key, number",
    )
    .unwrap()
    .into_iter()
    .map(|r| r[0].clone().unwrap())
    .collect()
}

#[test]
fn adopt_learns_wp_overnights_numbers_and_the_next_order_continues() {
    let wp = woocommerce::install(MariaDb::shared(), "adopt-wpo").unwrap();
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    // Six orders paid before Counterfoil (its hooks off), numbered by WP
    // Overnight: its yearly store hands out 1..5; number 4's PDF was never
    // saved on its order; two orders carry 3 (its issue #951).
    let ids: Vec<u64> = php(
        &wp,
        &format!(
            "foreach (wc_get_is_paid_statuses() as $s) {{ remove_all_actions('woocommerce_order_status_' . $s); }}
             remove_all_actions('woocommerce_payment_complete');
             global $wpdb;
             $wpdb->query(\"CREATE TABLE {{$wpdb->prefix}}wcpdf_invoice_number_{year} (id int(16) NOT NULL AUTO_INCREMENT, order_id int(16), date datetime NOT NULL, calculated_number int(16), PRIMARY KEY (id))\");
             $carried = array(1, 2, 3, 0, 5, 3);
             foreach ($carried as $i => $n) {{
                 $id = cf_test_order('20.00'); $o = wc_get_order($id); $o->payment_complete('wpo-' . $i);
                 if ($i < 5) {{ $wpdb->insert($wpdb->prefix . 'wcpdf_invoice_number_{year}', array('order_id' => $id, 'date' => '{year}-02-0' . ($i + 1) . ' 10:00:00')); }}
                 if ($n) {{
                     // As WP Overnight saves a document: the formatted number, and its parts.
                     $o = wc_get_order($id);
                     $o->update_meta_data('_wcpdf_invoice_number', 'INV-' . $n);
                     $o->update_meta_data('_wcpdf_invoice_number_data', array('number' => $n, 'formatted_number' => 'INV-' . $n, 'prefix' => 'INV-', 'suffix' => '', 'document_type' => 'invoice', 'order_id' => $id, 'padding' => null));
                     $o->update_meta_data('_wcpdf_invoice_date_formatted', '{year}-02-0' . ($i + 1) . ' 10:00:00');
                     $o->save();
                 }}
                 echo $id, ' ';
             }}"
        ),
    )
    .split_whitespace()
    .map(|s| s.parse().unwrap())
    .collect();

    // A dry run: the plan, nothing written.
    let dry = adopt(&wp, &[]);
    assert!(dry.status.success(), "{}", text(&dry));
    let plan = text(&dry);
    println!("{plan}");
    assert!(
        plan.contains(&format!("0:{year}: numbers 1..=5 — 4 issued on orders, 1 void, 1 duplicate(s); counter (new series) → next number 6")),
        "{plan}"
    );
    assert!(
        plan.contains(&format!(
            "number 3: order {} carries it too (kept by order {},",
            ids[5], ids[2]
        )),
        "{plan}"
    );
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        "0",
        "a dry run writes nothing"
    );

    let done = adopt(&wp, &["--execute"]);
    assert!(done.status.success(), "{}", text(&done));
    let expected: Vec<String> = vec![
        format!("0:{year} 1 issued {}", ids[0]),
        format!("0:{year} 2 issued {}", ids[1]),
        format!("0:{year} 3 issued {}", ids[2]),
        format!("0:{year} 4 void -"),
        format!("0:{year} 5 issued {}", ids[4]),
    ];
    assert_eq!(registry(&wp), expected);
    assert_eq!(
        wp.scalar("SELECT CONCAT(kind, ' ', number, ' ', post_id, ' ', other_post_id) FROM wp_counterfoil_adopt_findings"),
        format!("duplicate 3 {} {}", ids[5], ids[2])
    );
    // Again: nothing changes.
    let again = adopt(&wp, &["--execute"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(registry(&wp), expected);

    // The next paid order continues the sequence; an adopted order paid
    // again keeps WP Overnight's number and takes none.
    let out = php(
        &wp,
        &format!(
            "$new = cf_test_order('20.00'); wc_get_order($new)->payment_complete('after');
             $old = wc_get_order({0}); $old->payment_complete('again'); Counterfoil_WooCommerce::number_order({0});
             echo wc_get_order($new)->get_meta('_counterfoil_invoice_number'), ' ', Counterfoil_WooCommerce::number_of(wc_get_order({0}));",
            ids[2]
        ),
    );
    assert_eq!(out, format!("{year}-0006 INV-3"));
    assert_eq!(registry(&wp).len(), 6, "{:?}", registry(&wp));
}

/// Issue item 4: WP Overnight keeps the FORMATTED number in
/// `_wcpdf_invoice_number` (`INV-0101`); read as an integer, every number it
/// gave an order was registered void. Its parts (`_wcpdf_invoice_number_data`)
/// say 101. Here WP Overnight itself numbers the orders (Counterfoil's hooks
/// off, as before Counterfoil), with a prefix and padding, its store started
/// at 101 by its "next invoice number" setting (a row of 100 on no order,
/// not a number), and one number taken from its store whose invoice was
/// never saved.
#[test]
fn an_order_wp_overnight_numbered_inv_0101_is_adopted_as_issued() {
    let wp = woocommerce::install_with_wpo(MariaDb::shared(), "adopt-wpo-real").unwrap();
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    let made = php(
        &wp,
        "update_option('wpo_wcpdf_documents_settings_invoice', array('enabled' => 1,
             'number_format' => array('prefix' => 'INV-', 'suffix' => '', 'padding' => 4)));
         foreach (wc_get_is_paid_statuses() as $s) { remove_all_actions('woocommerce_order_status_' . $s); }
         remove_all_actions('woocommerce_payment_complete');
         foreach (array('woocommerce_invoice_number_by_plugin', 'wpo_wcpdf_external_invoice_number_enabled',
                        'wpo_wcpdf_external_invoice_number', 'woocommerce_generate_invoice_number') as $f) { remove_all_filters($f); }
         WPO_WCPDF()->documents->get_document('invoice', null)->get_sequential_number_store()->set_next(101);
         foreach (array('made', 'made', 'taken', 'made') as $i => $how) {
             $id = cf_test_order('20.00'); wc_get_order($id)->payment_complete('wpo-' . $i);
             if ('made' === $how) {
                 wcpdf_get_document('invoice', wc_get_order($id), true);
             } else {
                 WPO_WCPDF()->documents->get_document('invoice', wc_get_order($id))->get_sequential_number_store()->increment($id, current_time('mysql'));
             }
             echo $id, '=', wc_get_order($id)->get_meta('_wcpdf_invoice_number'), ' ';
         }",
    );
    let orders: Vec<(u64, String)> = made
        .split_whitespace()
        .map(|p| {
            let (id, n) = p.split_once('=').unwrap();
            (id.parse().unwrap(), n.to_owned())
        })
        .collect();
    let numbers: Vec<&str> = orders.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(numbers, ["INV-0101", "INV-0102", "", "INV-0104"], "{made}");
    let ids: Vec<u64> = orders.iter().map(|(id, _)| *id).collect();

    let dry = adopt(&wp, &[]);
    let plan = text(&dry);
    println!("{plan}");
    assert!(dry.status.success(), "{plan}");
    assert!(
        plan.contains(&format!("0:{year}: numbers 101..=104 — 3 issued on orders, 1 void, 0 duplicate(s); counter (new series) → next number 105")),
        "{plan}"
    );
    let done = adopt(&wp, &["--execute"]);
    assert!(done.status.success(), "{}", text(&done));
    assert_eq!(
        registry(&wp),
        vec![
            format!("0:{year} 101 issued {}", ids[0]),
            format!("0:{year} 102 issued {}", ids[1]),
            format!("0:{year} 103 void -"),
            format!("0:{year} 104 issued {}", ids[3]),
        ]
    );
    // The next order continues; an adopted order keeps WP Overnight's number.
    let out = php(
        &wp,
        &format!(
            "$new = cf_test_order('20.00'); wc_get_order($new)->payment_complete('after');
             echo wc_get_order($new)->get_meta('_counterfoil_invoice_number'), ' ', Counterfoil_WooCommerce::number_of(wc_get_order({}));",
            ids[0]
        ),
    );
    assert_eq!(out, format!("{year}-0105 INV-0101"));

    // A refund of an adopted order: a credit note of ours naming WP
    // Overnight's number (BT-25) and date (BT-26), capped at the order's
    // total; the refund's e-mail and the order's screens find it.
    let out = php(
        &wp,
        &format!(
            "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
                 'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));
             $r = wc_create_refund(array('order_id' => {id}, 'amount' => '5.00', 'reason' => 'scratched'));
             cf_test_run_actions(true);
             $refund = wc_get_order($r->get_id());
             $post = (int) $refund->get_meta('_counterfoil_credit_note_id');
             $ubl = counterfoil_invoice_document($post, 'ubl');
             $over = Counterfoil_Credit_Notes::for_refund(array('gateway' => 'woocommerce', 'refund_id' => 'too-much', 'transaction_id' => '{id}', 'amount' => '15.01'));
             echo $refund->get_meta('_counterfoil_credit_note_number'), \"\\n\",
                 Counterfoil_WooCommerce_Documents::belongs_to($post, wc_get_order({id})) ? 'belongs' : 'stray', \"\\n\",
                 is_wp_error($over) ? $over->get_error_code() : 'credited', \"\\n\",
                 is_wp_error($ubl) ? $ubl->get_error_message() : $ubl;",
            id = ids[0]
        ),
    );
    let mut lines = out.lines();
    let credit_note = lines.next().unwrap_or_default().to_owned();
    assert!(
        credit_note.starts_with(&format!("CN-{year}-")),
        "a credit note of ours: {out}"
    );
    assert_eq!(lines.next(), Some("belongs"), "{out}");
    assert_eq!(
        lines.next(),
        Some("counterfoil_refund_exceeds"),
        "15.01 is more than the 15.00 left of 20.00: {out}"
    );
    // The UBL without its indentation.
    let ubl: String = lines.map(str::trim).collect();
    let date = php(
        &wp,
        &format!(
            "echo wp_date('Y-m-d', (int) wc_get_order({})->get_meta('_wcpdf_invoice_date'));",
            ids[0]
        ),
    );
    assert!(
        ubl.contains("<CreditNote")
            && ubl.contains(&format!(
                "<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>INV-0101</cbc:ID><cbc:IssueDate>{date}</cbc:IssueDate>"
            )),
        "{ubl}"
    );
}
