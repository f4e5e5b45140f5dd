//! WP Overnight's "PDF Invoices & Packing Slips for WooCommerce" with
//! Counterfoil numbering the shop: its invoice and credit-note PDFs carry
//! Counterfoil's numbers as issued, it makes none without one, its number
//! is not edited on the order screen, and an e-mail carries one invoice
//! document, not two.
//!
//! Through WP Overnight's own API only (`wcpdf_get_document()`, its
//! documents' methods, its e-mail attachments on WooCommerce's e-mails), by
//! default against its STAND-IN (tests/wpo-stand-in/, which follows its
//! 5.16.1 code paths) on the WooCommerce stand-in; against the real plugin
//! when `COUNTERFOIL_WPO` names one (with a real WooCommerce,
//! `COUNTERFOIL_WOOCOMMERCE`, and a WordPress it runs on,
//! `COUNTERFOIL_WORDPRESS`: tests/src/woocommerce.rs). Its credit notes are
//! its Professional extension's: a document of that shape (slug
//! `credit_note`, of a refund) is registered here through its
//! `wpo_wcpdf_document_classes` filter, on the stand-in and the real plugin
//! alike.

use std::collections::BTreeMap;

use counterfoil_tests::woocommerce;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

/// The test's helpers, a must-use plugin: WP Overnight's settings as a
/// shop sets them, a document made as its order-screen button makes it, a
/// credit note of its Professional extension's shape, and a switch that
/// makes Counterfoil's numbering fail (503: the number is retried).
const HELPERS: &str = r#"<?php
/** WP Overnight's settings: its invoice (and the credit note) on, attached to the customer's e-mails when $attach, with a number format its screen hides once numbers come from another plugin. */
function cf_test_wpo_setup( $attach = true ) {
	$emails = $attach ? array( 'customer_processing_order' => 1, 'customer_completed_order' => 1 ) : array();
	update_option( 'wpo_wcpdf_documents_settings_invoice', array(
		'enabled'             => 1,
		'attach_to_email_ids' => $emails,
		'display_number'      => 'invoice_number',
		'number_format'       => array( 'prefix' => 'INV-', 'suffix' => '', 'padding' => 4 ),
	) );
	update_option( 'wpo_wcpdf_documents_settings_credit-note', array(
		'enabled'             => 1,
		'attach_to_email_ids' => $attach ? array( 'customer_refunded_order' => 1, 'customer_partially_refunded_order' => 1 ) : array(),
		'number_format'       => array( 'prefix' => 'CN-', 'suffix' => '', 'padding' => 4 ),
	) );
}

/** Makes an order's (or refund's) document as the shop's button does: "formatted|meta", or "none". */
function cf_test_wpo_make( $type, $id ) {
	$document = wcpdf_get_document( $type, wc_get_order( $id ), true );
	if ( ! $document ) {
		return 'none';
	}
	$number = $document->get_number();
	$slug   = str_replace( '-', '_', $type );
	return ( $number ? $number->get_formatted() : '(empty)' ) . '|' . wc_get_order( $id )->get_meta( "_wcpdf_{$slug}_number" );
}

// As WP Overnight's Professional extension: a credit note, and a refund e-mail's credit note is its refund's.
add_filter( 'wpo_wcpdf_document_classes', function ( $documents ) {
	require_once __DIR__ . '/cf-wpo/credit-note.php';
	$documents['CF_Test_Credit_Note'] = new CF_Test_Credit_Note();
	return $documents;
} );
add_filter( 'wpo_wcpdf_email_attachment_order', function ( $order, $email, $type ) {
	return 'credit-note' === $type && is_object( $email ) && ! empty( $email->refund ) ? $email->refund : $order;
}, 10, 3 );

// Counterfoil's numbering fails (after the number is claimed: 503, retried) while the option is set.
add_action( 'counterfoil_before_invoice_post', function () {
	if ( get_option( 'cf_test_fail_numbering' ) ) {
		throw new RuntimeException( 'numbering fails (test)' );
	}
} );
"#;

/// WP Overnight Professional's credit note, as that extension declares it
/// (not in its free plugin): a document of a refund, numbered as invoices are.
const CREDIT_NOTE: &str = r#"<?php
class CF_Test_Credit_Note extends \WPO\IPS\Documents\OrderDocumentMethods {
	public function __construct( $order = 0 ) {
		$this->type  = 'credit-note';
		$this->title = 'Credit Note';
		parent::__construct( $order );
	}
	public function get_title() {
		return 'Credit Note';
	}
	public function init() {
		$this->save_settings();
		$this->initiate_date();
		$this->initiate_number();
		do_action( 'wpo_wcpdf_init_document', $this );
	}
	public function exists() {
		return ! empty( $this->data['number'] );
	}
}
"#;

/// A seller whose e-invoices can be made for orders without items.
const SELLER: &str = "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
     'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));";

/// A shop with WooCommerce, WP Overnight's plugin and Counterfoil, the
/// helpers, and WP Overnight's settings.
fn shop(name: &str) -> WordPress {
    let wp = woocommerce::install_with_wpo(MariaDb::shared(), name).unwrap();
    wp.mu_plugin("cf-wpo-helpers", HELPERS).unwrap();
    let dir = wp.dir().join("wp-content/mu-plugins/cf-wpo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("credit-note.php"), CREDIT_NOTE).unwrap();
    php(&wp, "cf_test_wpo_setup();");
    wp
}

fn php(wp: &WordPress, code: &str) -> String {
    wp.eval(false, code).unwrap().trim().to_owned()
}

fn year(wp: &WordPress) -> String {
    php(wp, "echo counterfoil_current_period()[0];")
}

/// Every e-mail sent so far: its header lines, and the names of its
/// attachments (as sent: WP Overnight's, Counterfoil's).
fn mails(wp: &WordPress) -> Vec<(String, Vec<String>)> {
    let dir = wp.dir().join("wp-content/cf-mails");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = BTreeMap::new();
    for name in &names {
        if let Some(stamp) = name.strip_suffix(".html") {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let head = text.split("\n\n").next().unwrap_or("").to_owned();
            let prefix = format!("{stamp}.attachment-");
            let files = names
                .iter()
                .filter_map(|n| n.strip_prefix(&prefix))
                .map(|rest| rest.split_once('-').map_or(rest, |(_, b)| b).to_owned())
                .collect();
            out.insert(stamp.to_owned(), (head, files));
        }
    }
    out.into_values().collect()
}

/// The attachments of the one e-mail to the customer sent after the first
/// `skip` e-mails: a refund's (`refund`), else the payment's (processing,
/// or completed: a real WooCommerce's order without items to ship).
fn attachments_of(wp: &WordPress, skip: usize, refund: bool) -> Vec<String> {
    let all = mails(wp);
    let found: Vec<_> = all
        .iter()
        .skip(skip)
        .filter(|(head, _)| {
            head.starts_with("To: customer@example.invalid") && head.contains("refunded") == refund
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one e-mail (refund: {refund}) after {skip}: {all:?}"
    );
    found[0].1.clone()
}

/// Issue item 4: WP Overnight re-formats a numeric answer with its own
/// number format (hidden on its screen once another plugin numbers, still
/// applied): `{year}{seq:04}` came out `INV-20260001`. Answered with its
/// DocumentNumber, formatted as issued, its invoice carries Counterfoil's
/// number exactly — made before the payment (a bank transfer) or after.
#[test]
fn its_invoice_carries_our_number_as_issued_never_reformatted() {
    let wp = shop("wpo-format");
    let year = year(&wp);
    php(
        &wp,
        "update_option('counterfoil_format', '{year}{seq:04}');",
    );
    let ids: Vec<u64> = php(
        &wp,
        "echo cf_test_order('25.00'), ' ', cf_test_order('30.00');",
    )
    .split_whitespace()
    .map(|s| s.parse().unwrap())
    .collect();
    // The shop makes the PDF of an order not paid yet: it numbers the order.
    let first = php(
        &wp,
        &format!("echo cf_test_wpo_make('invoice', {});", ids[0]),
    );
    assert_eq!(first, format!("{year}0001|{year}0001"));
    // The payment then finds that number; paid first, the payment's number.
    let out = php(
        &wp,
        &format!(
            "wc_get_order({0})->payment_complete('bt_1'); wc_get_order({1})->payment_complete('ch_2');
             echo wc_get_order({0})->get_meta('_counterfoil_invoice_number'), ' ', cf_test_wpo_make('invoice', {1}), ' ';
             $data = wc_get_order({1})->get_meta('_wcpdf_invoice_number_data');
             echo $data['formatted_number'], ' ', $data['number'], ' ', $data['document_type'], ' ', $data['order_id'] == {1} ? 'same-order' : 'other-order', ' ';
             $html = wcpdf_get_document('invoice', wc_get_order({1}))->get_html();
             echo false !== strpos($html, '{year}0002') ? 'shown' : 'not-shown', ' ', false !== strpos($html, 'INV-') ? 'reformatted' : 'as-issued';",
            ids[0], ids[1]
        ),
    );
    assert_eq!(
        out,
        format!("{year}0001 {year}0002|{year}0002 {year}0002 2 invoice same-order shown as-issued")
    );
    assert_eq!(
        wp.scalar(&format!(
            "SELECT COUNT(*) FROM wp_counterfoil_numbers WHERE scope_key = '0:{year}'"
        )),
        "2",
        "two orders, two numbers"
    );
}

/// Issue item 4: when Counterfoil has no number to give, WP Overnight makes
/// no invoice — before, its initiate_number() caught the refusal and it
/// made and e-mailed its PDF without a number; made for an order not paid
/// yet, or on the payment's e-mail while the number is pending; once the
/// retry numbers the order, its invoice carries that number.
#[test]
fn no_number_no_invoice_of_wp_overnights() {
    let wp = shop("wpo-none");
    let year = year(&wp);
    php(&wp, "update_option('cf_test_fail_numbering', 1);");
    let ids: Vec<u64> = php(
        &wp,
        "echo cf_test_order('25.00'), ' ', cf_test_order('30.00');",
    )
    .split_whitespace()
    .map(|s| s.parse().unwrap())
    .collect();
    let (unpaid, paid) = (ids[0], ids[1]);
    let made = php(&wp, &format!("echo cf_test_wpo_make('invoice', {unpaid});"));
    assert_eq!(made, "none", "no invoice without a number");
    let before = mails(&wp).len();
    let out = php(
        &wp,
        &format!(
            "wc_get_order({paid})->payment_complete('ch_none'); $o = wc_get_order({paid});
             $doc = WPO_WCPDF()->documents->get_document('invoice', $o);
             echo '' !== $o->get_meta('_counterfoil_invoice_pending') ? 'pending' : 'not-pending', ' ', $doc->is_allowed() ? 'allowed' : 'refused', ' ', $o->get_meta('_wcpdf_invoice_number') === '' ? 'unnumbered' : 'numbered';"
        ),
    );
    assert_eq!(out, "pending refused unnumbered");
    let sent = mails(&wp);
    let files: Vec<&String> = sent[before..].iter().flat_map(|(_, f)| f).collect();
    assert!(
        sent.len() > before && !files.iter().any(|f| f.starts_with("invoice")),
        "the payment's e-mail goes, without WP Overnight's invoice: {sent:?}"
    );
    // The retry numbers the order; its invoice then carries the number.
    let out = php(
        &wp,
        &format!(
            "delete_option('cf_test_fail_numbering'); cf_test_run_actions(true);
             echo wc_get_order({paid})->get_meta('_counterfoil_invoice_number'), ' ', cf_test_wpo_make('invoice', {paid});"
        ),
    );
    let number = out.split(' ').next().unwrap().to_owned();
    assert!(number.starts_with(&format!("{year}-")), "{out}");
    assert_eq!(out, format!("{number} {number}|{number}"));
}

/// Issue item 4: WP Overnight's credit notes (slug `credit_note`) carry the
/// credit note Counterfoil issued for that refund; a refund Counterfoil
/// made none for (an order it never numbered) gets none of WP Overnight's
/// either — before, WP Overnight numbered both from its own store.
#[test]
fn its_credit_note_is_ours_for_that_refund_or_none() {
    let wp = shop("wpo-credit");
    let year = year(&wp);
    let out = php(
        &wp,
        "$a = cf_test_order('40.00'); wc_get_order($a)->payment_complete('ch_cn');
         $r1 = wc_create_refund(array('order_id' => $a, 'amount' => '5.00', 'reason' => 'scratched'));
         $r2 = wc_create_refund(array('order_id' => $a, 'amount' => '7.00', 'reason' => 'late'));
         $b = cf_test_order('20.00');
         $r3 = wc_create_refund(array('order_id' => $b, 'amount' => '3.00', 'reason' => 'never numbered'));
         foreach (array($r2, $r1, $r3) as $r) {
             echo wc_get_order($r->get_id())->get_meta('_counterfoil_credit_note_number'), '=', cf_test_wpo_make('credit-note', $r->get_id()), ' ';
         }",
    );
    assert_eq!(
        out,
        format!(
            "CN-{year}-0002=CN-{year}-0002|CN-{year}-0002 CN-{year}-0001=CN-{year}-0001|CN-{year}-0001 =none"
        )
    );
}

/// Issue item 4: while Counterfoil numbers the shop, WP Overnight's
/// invoice number (and credit note's) is not edited on the order screen,
/// even with its "Enable document data editing" setting on: no field
/// shown, and a number posted anyway is not taken; notes still are.
#[test]
fn its_number_is_not_editable_on_the_order_screen() {
    let wp = shop("wpo-edit");
    php(
        &wp,
        "update_option('wpo_wcpdf_settings_debug', array('enable_document_data_editing' => 1));",
    );
    let id = php(
        &wp,
        "$id = cf_test_order('25.00'); wc_get_order($id)->payment_complete('ch_edit'); cf_test_wpo_make('invoice', $id); echo $id;",
    );
    let out = php(
        &wp,
        &format!(
            "wp_set_current_user(1);
             $_REQUEST['security'] = wp_create_nonce('wpo_wcpdf_save_document');
             $doc = wcpdf_get_document('invoice', wc_get_order({id}));
             $data = WPO_WCPDF()->admin->process_order_document_form_data(array(
                 '_wcpdf_invoice_number_plain' => '99', '_wcpdf_invoice_number_formatted' => 'X-99',
                 '_wcpdf_invoice_date' => array('date' => '2020-01-01'), '_wcpdf_invoice_notes' => 'Thank you'), $doc);
             echo implode(',', array_keys($data)), \"\\n\";
             ob_start();
             WPO_WCPDF()->admin->output_number_date_edit_fields($doc, array('number' => array('label' => 'Invoice number:'), 'date' => array('label' => 'Invoice date:')));
             echo str_replace(\"\\n\", ' ', ob_get_clean());"
        ),
    );
    let (keys, screen) = out.split_once('\n').unwrap();
    assert_eq!(keys, "notes", "only the notes are taken: {out}");
    assert!(
        !screen.contains("_wcpdf_invoice_number_plain") && screen.contains("currently disabled"),
        "no number field: {screen}"
    );
}

/// Issue item 4: one invoice document per e-mail. When WP Overnight
/// attaches its invoice PDF to the customer's e-mail, Counterfoil attaches
/// only its UBL (the e-invoice), not its own PDF; likewise its credit note
/// on the refund e-mail. An e-mail WP Overnight attaches nothing to keeps
/// Counterfoil's PDF and UBL.
#[test]
fn an_email_carries_one_invoice_document() {
    let wp = shop("wpo-mail");
    php(&wp, SELLER);
    let run = |code: &str| wp.eval(true, code).unwrap().trim().to_owned();
    let before = mails(&wp).len();
    let number = run(
        "$id = cf_test_order('25.00'); wc_get_order($id)->payment_complete('ch_mail');
         echo wc_get_order($id)->get_meta('_counterfoil_invoice_number'), ' ', $id;",
    );
    let (number, id) = number.split_once(' ').unwrap();
    let files = attachments_of(&wp, before, false);
    println!("{files:?}");
    let pdfs: Vec<&String> = files.iter().filter(|f| f.ends_with(".pdf")).collect();
    assert_eq!(
        pdfs,
        vec![&format!("invoice-{number}.pdf")],
        "one PDF, WP Overnight's: {files:?}"
    );
    assert!(
        files.contains(&format!("{number}-ubl.xml")),
        "Counterfoil's e-invoice: {files:?}"
    );
    // The refund e-mail: WP Overnight's credit note, Counterfoil's UBL.
    let before = mails(&wp).len();
    let credit = run(&format!(
        "$r = wc_create_refund(array('order_id' => {id}, 'amount' => '5.00', 'reason' => 'scratched')); $r = wc_get_order($r->get_id());
         echo $r->get_meta('_counterfoil_credit_note_number'), ' ', $r->get_meta('_wcpdf_credit_note_number'), ' ', $r->get_id();"
    ));
    let parts: Vec<&str> = credit.split(' ').collect();
    let (credit, theirs, refund) = (parts[0], parts[1], parts[2]);
    assert_eq!(theirs, credit, "WP Overnight's credit note carries ours");
    let files = attachments_of(&wp, before, true);
    println!("{files:?}");
    let pdfs: Vec<&String> = files.iter().filter(|f| f.ends_with(".pdf")).collect();
    assert_eq!(
        pdfs,
        vec![&format!("credit-note-{refund}.pdf")],
        "one PDF, WP Overnight's credit note: {files:?}"
    );
    assert!(files.contains(&format!("{credit}-ubl.xml")), "{files:?}");
    // WP Overnight attaching nothing: Counterfoil's PDF and UBL.
    let before = mails(&wp).len();
    let other = run(
        "cf_test_wpo_setup(false); $id = cf_test_order('25.00'); wc_get_order($id)->payment_complete('ch_plain');
         echo wc_get_order($id)->get_meta('_counterfoil_invoice_number');",
    );
    let mut files = attachments_of(&wp, before, false);
    files.sort();
    assert_eq!(
        files,
        vec![format!("{other}-ubl.xml"), format!("{other}.pdf")],
        "Counterfoil's own documents"
    );
}
