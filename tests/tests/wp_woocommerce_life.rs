//! A WooCommerce shop's whole life (issue "woo-life"): when an order is
//! numbered (the shop's statuses, cash on delivery, excluded methods, free
//! orders, the filter; numbered once, never again), a clean start (orders
//! paid before Counterfoil took over are numbered only on request, and
//! their refunds make no endless retries), refunds and cancellations (the
//! credit note before WooCommerce's refund e-mail, a cancelled paid order
//! credited, a deleted refund's credit note reversed by a new invoice,
//! retries that end), and renewals of WooCommerce Subscriptions that copy
//! none of our meta. On the stand-in (`tests/woocommerce-stand-in/`, as
//! WooCommerce 10.0.2 behaves), or a real WooCommerce named by
//! `COUNTERFOIL_WOOCOMMERCE`.

use counterfoil_tests::woocommerce;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn shop(name: &str) -> WordPress {
    woocommerce::install(MariaDb::shared(), name).unwrap()
}

/// Runs PHP on the site; its output's lines.
fn lines(wp: &WordPress, code: &str) -> Vec<String> {
    wp.eval(false, code)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Each order is numbered by the shop's rules: a cash-on-delivery order at
/// processing has no payment yet and no invoice (completed, it is paid and
/// numbered); the shop may invoice such orders at once instead (their
/// invoice states the amount due); an excluded payment method and, when
/// the shop says so, a free order get none; the filter decides last; an
/// order numbered once keeps its number through later status changes and
/// never makes a second invoice; a total with more decimals than its
/// currency's is rounded as WooCommerce rounds (10.005 EUR: 10.01), not
/// refused.
#[test]
fn an_order_is_numbered_by_the_shops_rules() {
    let wp = shop("woo-life-rules");
    let out = lines(
        &wp,
        "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
             'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));
         $number = function ($id) { return (string) wc_get_order($id)->get_meta('_counterfoil_invoice_number'); };
         $order = function ($total, $method) { $o = wc_get_order(cf_test_order($total)); $o->set_payment_method($method); $o->save(); return $o->get_id(); };
         $cod = $order('20.00', 'cod');
         wc_get_order($cod)->update_status('processing');
         echo 'cod processing [', $number($cod), \"]\\n\";
         wc_get_order($cod)->update_status('completed');
         echo 'cod completed [', '' !== $number($cod) ? 'numbered' : '', \"]\\n\";
         update_option(Counterfoil_WooCommerce::UNPAID_OPTION, 1);
         $at_once = $order('20.00', 'cod');
         wc_get_order($at_once)->update_status('processing');
         $doc = counterfoil_invoice_document((int) wc_get_order($at_once)->get_meta('_counterfoil_invoice_id'), 'ubl');
         echo 'cod at once [', is_wp_error($doc) ? $doc->get_error_message() : (false !== strpos($doc, '<cbc:PayableAmount currencyID=\"EUR\">20.00<') ? 'due 20.00' : $doc), \"]\\n\";
         update_option(Counterfoil_WooCommerce::UNPAID_OPTION, 0);
         update_option(Counterfoil_WooCommerce::EXCLUDED_METHODS_OPTION, 'cheque, other');
         $cheque = $order('15.00', 'cheque');
         wc_get_order($cheque)->payment_complete('chq-1');
         echo 'cheque [', $number($cheque), \"]\\n\";
         update_option(Counterfoil_WooCommerce::FREE_OPTION, 0);
         $free = $order('0', 'stripe');
         wc_get_order($free)->payment_complete('ch-free');
         echo 'free [', $number($free), \"]\\n\";
         add_filter('counterfoil_woocommerce_should_number', function ($yes, $o) { return $yes && 'no' !== $o->get_meta('_cf_test_number'); }, 10, 2);
         $filtered = wc_get_order($order('12.00', 'stripe'));
         $filtered->update_meta_data('_cf_test_number', 'no'); $filtered->save();
         wc_get_order($filtered->get_id())->payment_complete('ch-filtered');
         echo 'filtered [', $number($filtered->get_id()), \"]\\n\";
         $paid = $order('30.00', 'stripe');
         wc_get_order($paid)->payment_complete('ch-paid');
         $first = $number($paid);
         foreach (array('on-hold', 'processing', 'completed') as $s) { wc_get_order($paid)->update_status($s); }
         $posts = get_posts(array('post_type' => 'counterfoil_invoice', 'post_status' => 'any', 'numberposts' => -1, 'meta_key' => '_counterfoil_transaction_id', 'meta_value' => (string) $paid, 'fields' => 'ids'));
         echo 'numbered once [', '' !== $first && $first === $number($paid) && 1 === count($posts) ? 'kept' : $first . ' ' . $number($paid) . ' ' . count($posts), \"]\\n\";
         $odd = $order('10.005', 'stripe');
         wc_get_order($odd)->payment_complete('ch-odd');
         echo 'extra decimals [', get_post_meta((int) wc_get_order($odd)->get_meta('_counterfoil_invoice_id'), '_counterfoil_amount', true), \"]\\n\";",
    );
    assert_eq!(
        out,
        [
            "cod processing []",
            "cod completed [numbered]",
            "cod at once [due 20.00]",
            "cheque []",
            "free []",
            "filtered []",
            "numbered once [kept]",
            "extra decimals [10.01]",
        ],
        "{out:?}"
    );
}

/// A clean start: an order paid before Counterfoil took over is not
/// numbered by a later status change — only on request (the backfill's
/// call) — and a refund of such an order, never numbered, makes no credit
/// note, says so once on the order and schedules no retry (before, it
/// rescheduled itself every hour, forever).
#[test]
fn orders_paid_before_the_takeover_are_numbered_only_on_request() {
    let wp = shop("woo-life-start");
    let out = lines(
        &wp,
        "update_option(Counterfoil_WooCommerce::SINCE_OPTION, time());
         $old = wc_get_order(cf_test_order('40.00'));
         $old->set_date_paid(time() - 86400); $old->save();
         $old = wc_get_order($old->get_id()); $old->set_date_created(time() - 90000); $old->save();
         wc_get_order($old->get_id())->update_status('processing');
         wc_get_order($old->get_id())->update_status('completed');
         echo 'old completed [', wc_get_order($old->get_id())->get_meta('_counterfoil_invoice_number'), \"]\\n\";
         $refund = wc_create_refund(array('order_id' => $old->get_id(), 'amount' => '10.00', 'reason' => 'old'));
         $scheduled = as_has_scheduled_action(Counterfoil_WooCommerce::REFUND_RETRY_HOOK, array($old->get_id(), $refund->get_id()), Counterfoil_WooCommerce::GROUP);
         $notes = wc_get_order_notes(array('order_id' => $old->get_id()));
         $said = count(array_filter($notes, function ($n) { return false !== strpos($n->content, 'has no invoice of Counterfoil'); }));
         echo 'old refund [', $scheduled ? 'retry scheduled' : 'no retry', ' ', $said, \"]\\n\";
         $r = Counterfoil_WooCommerce::number_order($old->get_id(), true);
         echo 'on request [', is_array($r) && '' !== $r['number'] ? 'numbered' : '', \"]\\n\";
         $new = wc_get_order(cf_test_order('25.00'));
         wc_get_order($new->get_id())->payment_complete('ch-new');
         echo 'new [', '' !== wc_get_order($new->get_id())->get_meta('_counterfoil_invoice_number') ? 'numbered' : '', \"]\\n\";",
    );
    assert_eq!(
        out,
        [
            "old completed []",
            "old refund [no retry 1]",
            "on request [numbered]",
            "new [numbered]",
        ],
        "{out:?}"
    );
}

/// Refunds and cancellations: the credit note exists when WooCommerce's
/// refund e-mail is sent (the refund's partially/fully-refunded action at
/// priority 10 sees its number); a paid order cancelled gets a credit note
/// of what is left of its invoice, once; a refund deleted after its credit
/// note was issued is reversed by a new invoice of its amount (the credit
/// note stands); a refund whose invoice never comes stops retrying after
/// the bound, with an order note and the admin notice; renewals of
/// WooCommerce Subscriptions copy none of our meta.
#[test]
fn refunds_and_cancellations_through_a_shops_life() {
    let wp = shop("woo-life-refunds");
    let out = lines(
        &wp,
        "$seen = array();
         foreach (array('woocommerce_order_fully_refunded', 'woocommerce_order_partially_refunded') as $hook) {
             add_action($hook, function ($order_id, $refund_id) use (&$seen) {
                 $seen[] = (string) wc_get_order($refund_id)->get_meta('_counterfoil_credit_note_number');
             }, 10, 2);
         }
         $paid = wc_get_order(cf_test_order('50.00'));
         wc_get_order($paid->get_id())->payment_complete('ch-life');
         $refund = wc_create_refund(array('order_id' => $paid->get_id(), 'amount' => '10.00', 'reason' => str_repeat('é', 200)));
         echo 'before the e-mail [', '' !== $seen[0] ? 'credit note' : 'none', \"]\\n\";
         wc_get_order($paid->get_id())->update_status('cancelled');
         wc_get_order($paid->get_id())->update_status('cancelled');
         $notes = get_posts(array('post_type' => 'counterfoil_cnote', 'post_status' => 'any', 'numberposts' => -1, 'fields' => 'ids'));
         $amounts = array_map(function ($id) { return get_post_meta($id, '_counterfoil_amount', true); }, $notes);
         sort($amounts);
         echo 'cancelled [', implode(' ', $amounts), \"]\\n\";
         $second = wc_get_order(cf_test_order('30.00'));
         wc_get_order($second->get_id())->payment_complete('ch-life-2');
         $r2 = wc_create_refund(array('order_id' => $second->get_id(), 'amount' => '12.00'));
         cf_test_delete_refund($r2->get_id());
         $reissued = get_posts(array('post_type' => 'counterfoil_invoice', 'post_status' => 'any', 'fields' => 'ids', 'meta_key' => '_counterfoil_transaction_id', 'meta_value' => 'reversal-' . $r2->get_id()));
         echo 'deleted refund [', $reissued ? get_post_meta($reissued[0], '_counterfoil_amount', true) : 'no invoice', \"]\\n\";
         $pending = wc_get_order(cf_test_order('20.00'));
         $pending->update_meta_data(Counterfoil_WooCommerce::META_PENDING, 'counterfoil_unavailable'); $pending->save();
         $r3 = wc_create_refund(array('order_id' => $pending->get_id(), 'amount' => '5.00'));
         $r3o = wc_get_order($r3->get_id());
         $r3o->update_meta_data(Counterfoil_WooCommerce::META_ATTEMPTS, Counterfoil_WooCommerce::MAX_ATTEMPTS - 1); $r3o->save();
         Counterfoil_WooCommerce::retry_refund($pending->get_id(), $r3->get_id());
         $gave_up = get_option(Counterfoil_WooCommerce::GAVE_UP_OPTION, array());
         echo 'retries end [', count($gave_up), ' ', $gave_up[0][0] ?? '', \"]\\n\";
         $renewal = apply_filters('wc_subscriptions_renewal_order_data', array('_counterfoil_invoice_number' => '2026-0001', '_counterfoil_invoice_id' => 5, '_billing_city' => 'Gent'));
         echo 'renewal [', implode(' ', array_keys($renewal)), \"]\\n\";",
    );
    assert_eq!(
        out,
        [
            "before the e-mail [credit note]",
            "cancelled [10.00 40.00]",
            "deleted refund [12.00]",
            "retries end [1 refund]",
            "renewal [_billing_city]",
        ],
        "{out:?}"
    );
}

/// The orders list's bulk actions, for a shop manager, on the list of the
/// order storage in use (posts or HPOS), through WordPress's or
/// WooCommerce's own form and nonce: *Number the invoices now* numbers the
/// picked orders on request (one paid before Counterfoil took over, which
/// no status change would number) and leaves an order's number as it was;
/// *Download the invoices (zip)* sends the picked orders' own invoices and
/// credit notes, made in memory, with an index naming the order without an
/// invoice. The list filters to the orders with or without a number (and on
/// HPOS searches by it), before and after.
#[test]
fn the_orders_list_numbers_the_picked_orders_and_downloads_their_documents() {
    use std::io::Read;
    let wp = shop("woo-life-bulk");
    let out = lines(
        &wp,
        "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
             'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));
         wp_insert_user(array('user_login' => 'manager', 'user_pass' => 'manager-password', 'user_email' => 'manager@example.invalid', 'role' => 'shop_manager'));
         update_option(Counterfoil_WooCommerce::SINCE_OPTION, time());
         $old = wc_get_order(cf_test_order('40.00'));
         $old->set_date_paid(time() - 86400); $old->save();
         $old = wc_get_order($old->get_id()); $old->set_date_created(time() - 90000); $old->save();
         wc_get_order($old->get_id())->update_status('completed');
         $paid = cf_test_order('25.00'); wc_get_order($paid)->payment_complete('ch-bulk');
         $refund = wc_create_refund(array('order_id' => $paid, 'amount' => '5.00', 'reason' => 'scratched'));
         cf_test_run_actions(true);
         $pending = cf_test_order('12.00');
         echo $old->get_id(), ' ', $paid, ' ', $pending, ' ', wc_get_order($paid)->get_meta('_counterfoil_invoice_number'), ' ',
             wc_get_order($refund->get_id())->get_meta('_counterfoil_credit_note_number'), ' [', wc_get_order($old->get_id())->get_meta('_counterfoil_invoice_number'), \"]\\n\";
         echo cf_test_screens($paid)['orders'];",
    );
    let p: Vec<&str> = out[0].split(' ').collect();
    let (old, paid, pending, paid_number, credit_note) = (p[0], p[1], p[2], p[3], p[4]);
    assert_eq!(
        p[5], "[]",
        "the order paid before the takeover has no number yet: {out:?}"
    );
    assert!(
        !paid_number.is_empty() && !credit_note.is_empty(),
        "{out:?}"
    );
    let list = out[1].as_str();
    let hpos = list.contains("page=wc-orders");

    let site = wp.serve(true, 2).unwrap();
    let manager =
        counterfoil_tests::wp_session::Session::login(site.port(), "manager", "manager-password")
            .unwrap();
    let page = manager.get(list).unwrap();
    assert_eq!(page.status, 200, "{}", page.body);
    for action in ["counterfoil_number_now", "counterfoil_download_documents"] {
        assert!(
            page.body.contains(&format!("value=\"{action}\"")),
            "the list offers {action}: {}",
            page.body
        );
    }
    // The list filtered to the orders without a number: the one paid before
    // the takeover and the pending one, not the numbered one.
    assert!(
        page.body.contains("name=\"counterfoil_invoice\""),
        "the list offers the invoice number filter: {}",
        page.body
    );
    let row = |id: &str| {
        if hpos {
            format!("<tr id=\"order-{id}\"")
        } else {
            format!("<tr id=\"post-{id}\"")
        }
    };
    let shown = |query: &str| -> Vec<&str> {
        let body = manager.get(&format!("{list}{query}")).unwrap();
        assert_eq!(body.status, 200, "{}", body.body);
        let ids: Vec<&str> = [old, paid, pending]
            .into_iter()
            .filter(|id| body.body.contains(&row(id)))
            .collect();
        // The list's total says what it shows.
        let total = format!(
            "<span class=\"displaying-num\">{} item{}</span>",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" }
        );
        assert!(
            body.body.contains(&total),
            "{query}: {total}: {}",
            body.body
        );
        ids
    };
    assert_eq!(shown(""), [old, paid, pending]);
    assert_eq!(shown("&counterfoil_invoice=none"), [old, pending]);
    assert_eq!(shown("&counterfoil_invoice=numbered"), [paid]);
    let nonce = page
        .body
        .split("name=\"_wpnonce\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the list's bulk nonce")
        .to_owned();
    // The list's own form, as its Apply button posts it.
    let (target, ids_field) = if hpos {
        ("/wp-admin/admin.php?page=wc-orders", "id[]")
    } else {
        ("/wp-admin/edit.php", "post[]")
    };
    let post = |action: &str, ids: &[&str]| {
        let mut fields = vec![
            ("_wpnonce", nonce.as_str()),
            ("_wp_http_referer", list),
            ("action", action),
        ];
        if !hpos {
            // edit.php's list of the post type (HPOS's page takes none).
            fields.push(("post_type", "shop_order"));
        }
        fields.extend(ids.iter().map(|id| (ids_field, *id)));
        manager.post_form(target, &fields).unwrap()
    };

    let numbered = post("counterfoil_number_now", &[old, paid]);
    assert_eq!(numbered.status, 302, "{}", numbered.body);
    let location = numbered
        .header("location")
        .first()
        .map(|l| l.to_string())
        .unwrap_or_default();
    assert!(
        location.contains("counterfoil_numbered=1")
            && location.contains("counterfoil_had=1")
            && location.contains("counterfoil_failed=0"),
        "{location}"
    );
    let back = manager
        .get(&location[location.find("/wp-admin/").unwrap()..])
        .unwrap();
    assert!(
        back.body.contains("counterfoil-bulk-notice")
            && back
                .body
                .contains("Invoices numbered now: 1. Already numbered: 1."),
        "{}",
        back.body
    );
    let after = lines(
        &wp,
        &format!(
            "echo wc_get_order({old})->get_meta('_counterfoil_invoice_number'), ' ', wc_get_order({paid})->get_meta('_counterfoil_invoice_number');"
        ),
    );
    let a: Vec<&str> = after[0].split(' ').collect();
    assert!(!a[0].is_empty(), "numbered on request: {after:?}");
    assert_eq!(a[1], paid_number, "a number stands");
    let old_number = a[0].to_owned();
    assert_eq!(shown("&counterfoil_invoice=none"), [pending]);
    assert_eq!(shown("&counterfoil_invoice=numbered"), [old, paid]);
    if hpos {
        // HPOS's search, with its filter set to the invoice number.
        assert_eq!(
            shown(&format!(
                "&s={old_number}&search-filter=counterfoil_invoice_number"
            )),
            [old]
        );
    }

    let zip = post("counterfoil_download_documents", &[old, paid, pending]);
    assert_eq!(zip.status, 200, "{:?} {}", zip.headers, zip.body);
    assert_eq!(
        zip.header("content-type").first().map(|v| v.to_string()),
        Some("application/zip".to_owned())
    );
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip.bytes.clone())).unwrap();
    let mut names = Vec::new();
    let mut index = String::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap(); // checks its CRC
        let name = file.name().unwrap().to_string();
        if name == "index.csv" {
            index = String::from_utf8(bytes).unwrap();
        } else if name.ends_with(".pdf") {
            assert!(bytes.starts_with(b"%PDF-"), "{name}");
        } else {
            let xml = String::from_utf8(bytes).unwrap();
            assert!(xml.contains("<cbc:ID>"), "{name}: {xml}");
        }
        names.push(name);
    }
    println!("{names:?}\n{index}");
    for number in [old_number.as_str(), paid_number, credit_note] {
        assert!(
            names.iter().any(|n| n.starts_with(number)),
            "{number} in {names:?}"
        );
    }
    assert_eq!(names.len(), 4, "three documents and the index: {names:?}");
    assert!(
        index.contains(&format!(
            "\"{pending}\",\"{pending}\",\"invoice\",\"\",\"\",\"No invoice yet.\""
        )),
        "{index}"
    );
    assert_eq!(index.lines().count(), 5, "{index}");
}
