//! WooCommerce: a clean start on a shop with history (issue "woo-life",
//! items 2 and 6). Orders paid before Counterfoil took over numbering
//! (`Counterfoil_WooCommerce::since()`) are not "paid orders without a
//! number": Site Health and the settings page count them for information
//! only, the backfill takes them on request and says which ones predate the
//! takeover. The counts come from one indexed query on WooCommerce's order
//! storage, checked here against the per-order scan through the CRUD that
//! they replaced.
//!
//! Against the WooCommerce STAND-IN by default (posts storage), or a real
//! WooCommerce when `COUNTERFOIL_WOOCOMMERCE` names one (tests/src/woocommerce.rs;
//! `COUNTERFOIL_WOOCOMMERCE_HPOS=1` for its order tables).

use counterfoil_tests::woocommerce;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

/// A site with WooCommerce and Counterfoil, orders numbered by the shop (issuer 0).
fn shop(name: &str) -> WordPress {
    woocommerce::install(MariaDb::shared(), name).unwrap()
}

/// Runs PHP in the site and returns what it printed, trimmed.
fn php(wp: &WordPress, code: &str) -> String {
    wp.eval(false, code).unwrap().trim().to_owned()
}

/// PHP: `cf_paid( $paid_at, $status, $meta )` makes an order made and paid
/// at `$paid_at` (Unix time; null: made now, not paid) in `$status`, with
/// `$meta` (key => value) on it, while Counterfoil's WooCommerce hooks are
/// off (the order was paid before Counterfoil took over, or while it was not
/// listening); and
/// `cf_takeover()` moves the takeover to the middle of this numbering period
/// and answers [period start, takeover, now].
const HELPERS: &str = "function cf_quiet() {
    foreach (array_merge(wc_get_is_paid_statuses(), array('on-hold', 'cancelled')) as $s) {
        remove_all_actions('woocommerce_order_status_' . $s);
        remove_all_actions('woocommerce_payment_complete_order_status_' . $s);
    }
    remove_all_actions('woocommerce_payment_complete');
}
function cf_paid($paid_at, $status = 'completed', $meta = array()) {
    cf_quiet();
    $o = wc_get_order(cf_test_order('20.00'));
    if (null !== $paid_at) { $o->set_date_created($paid_at); $o->set_date_paid($paid_at); }
    foreach ($meta as $k => $v) { $o->update_meta_data($k, $v); }
    $o->set_status($status);
    $o->save();
    return $o->get_id();
}
function cf_takeover() {
    $start = Counterfoil_WooCommerce_Backfill::period_start();
    $now = time();
    if ($now - $start < 8) { sleep(8); $now = time(); }
    $since = intdiv($start + $now, 2);
    update_option('counterfoil_woocommerce_since', $since);
    return array($start, $since, $now);
}
function cf_health() {
    $h = Counterfoil_WooCommerce_Backfill::site_health();
    return $h['status'] . ' ' . wp_strip_all_tags($h['description']);
}
function cf_form() {
    require_once ABSPATH . 'wp-admin/includes/template.php';
    ob_start(); Counterfoil_WooCommerce_Backfill::backfill_form(); return ob_get_clean();
}
function cf_rest($execute) {
    wp_set_current_user(get_user_by('login', 'admin')->ID);
    $q = new WP_REST_Request('POST', '/counterfoil/v1/woocommerce/backfill');
    if ($execute) { $q->set_param('execute', true); }
    $r = rest_do_request($q);
    return $r->get_status() . ' ' . wp_json_encode($r->get_data());
}";

/// Writes [`HELPERS`] as a must-use plugin.
fn helpers(wp: &WordPress) {
    wp.mu_plugin("start-helpers", &format!("<?php\n{HELPERS}"))
        .unwrap();
}

/// The text of the element with `id` in `html` (tags stripped, spaces collapsed).
fn element_text(html: &str, id: &str) -> Option<String> {
    let at = html.find(&format!("id=\"{id}\""))?;
    let open = at + html[at..].find('>')? + 1;
    let tag_start = html[..at].rfind('<')?;
    let tag: String = html[tag_start + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let close = open + html[open..].find(&format!("</{tag}>"))?;
    let mut text = String::new();
    let mut in_tag = false;
    for c in html[open..close].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[test]
fn a_shop_with_orders_paid_before_the_takeover_starts_clean_and_an_order_paid_after_is_reported() {
    let wp = shop("woo-start");
    helpers(&wp);
    let times = php(&wp, "echo implode(' ', cf_takeover());");
    let t: Vec<i64> = times
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let (start, since) = (t[0], t[1]);
    let before_at = start + (since - start) / 2;
    // Three orders paid this period before Counterfoil took over, none numbered.
    let before: Vec<u64> = php(
        &wp,
        &format!("for ($i = 0; $i < 3; $i++) {{ echo cf_paid({before_at}), ' '; }}"),
    )
    .split_whitespace()
    .map(|v| v.parse().unwrap())
    .collect();
    // A fourth, paid by a method the shop does not invoice (a voucher
    // scheme of its own): the backfill leaves it as the hooks would.
    let excluded = php(
        &wp,
        &format!(
            "update_option('counterfoil_woocommerce_excluded_methods', 'staff_voucher');
             $id = cf_paid({before_at}); $o = wc_get_order($id); $o->set_payment_method('staff_voucher'); $o->save(); echo $id;"
        ),
    );

    // Site Health right after activation: not critical, the count said for information.
    let health = php(&wp, "echo cf_health();");
    println!("{health}");
    assert!(
        health.starts_with("good "),
        "orders paid before the takeover do not turn Site Health critical: {health}"
    );
    assert!(
        health.contains(
            "3 paid orders of this numbering period were paid before Counterfoil took over"
        ),
        "{health}"
    );
    // The settings page: nothing waiting, the three for information, the backfill offered.
    let form = php(&wp, "wp_set_current_user(1); echo cf_form();");
    assert_eq!(
        element_text(&form, "counterfoil-woocommerce-unnumbered").as_deref(),
        Some("0 paid orders of this period have no invoice number."),
        "{form}"
    );
    let info = element_text(&form, "counterfoil-woocommerce-before-takeover").unwrap_or_default();
    assert!(
        info.starts_with("3 paid orders of this period were paid before Counterfoil took over"),
        "{form}"
    );
    assert!(form.contains("Number them now"), "{form}");
    // The backfill's plan takes them, on request, and says they predate the takeover.
    let plan = php(&wp, "echo cf_rest(false);");
    let ids = |v: &[u64]| {
        v.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    assert!(plan.starts_with("200 "), "{plan}");
    assert!(
        plan.contains(&format!("\"orders\":[{}]", ids(&before))),
        "not the excluded method's order {excluded}: {plan}"
    );
    assert!(
        plan.contains(&format!("\"before_takeover\":[{}]", ids(&before))),
        "{plan}"
    );
    assert!(plan.contains("\"takeover\":\""), "{plan}");
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        "0"
    );

    // An order paid after the takeover that has no number is reported.
    let after = php(&wp, &format!("echo cf_paid({since} + 1);"));
    let health = php(&wp, "echo cf_health();");
    println!("{health}");
    assert!(
        health.starts_with(&format!(
            "critical 1 paid orders have no invoice number yet: {after}."
        )),
        "{health}"
    );
    assert!(
        health.contains(
            "3 paid orders of this numbering period were paid before Counterfoil took over"
        ),
        "{health}"
    );
    let form = php(&wp, "wp_set_current_user(1); echo cf_form();");
    assert_eq!(
        element_text(&form, "counterfoil-woocommerce-unnumbered").as_deref(),
        Some("1 paid order of this period has no invoice number."),
        "{form}"
    );

    // Numbered on request: all four, the plan said which three predate.
    let done = php(&wp, "echo cf_rest(true);");
    assert!(done.starts_with("200 "), "{done}");
    let mut all = before.clone();
    all.push(after.parse().unwrap());
    assert!(
        done.contains(&format!("\"orders\":[{}]", ids(&all))),
        "{done}"
    );
    assert!(
        done.contains(&format!("\"before_takeover\":[{}]", ids(&before))),
        "{done}"
    );
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    assert_eq!(
        wp.scalar(&format!(
            "SELECT COUNT(*) FROM wp_counterfoil_numbers WHERE scope_key = '0:{year}' AND status = 'issued'"
        )),
        "4"
    );
    assert_eq!(
        php(
            &wp,
            &format!("echo wc_get_order({excluded})->get_meta('_counterfoil_invoice_number');")
        ),
        "",
        "the excluded method's order is not numbered by the backfill"
    );
    let health = php(&wp, "echo cf_health();");
    assert!(health.starts_with("good "), "{health}");
    assert!(!health.contains("before Counterfoil took over"), "{health}");
}

#[test]
fn the_counting_query_agrees_with_the_per_order_scan() {
    let wp = shop("woo-count");
    helpers(&wp);
    // The per-order scan the counts replaced: WooCommerce's query by paid
    // status and paid date, then every order read through the CRUD.
    wp.mu_plugin(
        "old-scan",
        "<?php function cf_old_scan($since, $until) {
            $found = array();
            $statuses = array_map(function ($s) { return 'wc-' . $s; }, wc_get_is_paid_statuses());
            for ($page = 1; ; $page++) {
                $ids = wc_get_orders(array('type' => 'shop_order', 'status' => $statuses, 'date_paid' => (int) $since . '...' . (int) $until,
                    'limit' => 7, 'page' => $page, 'orderby' => 'ID', 'order' => 'ASC', 'return' => 'ids'));
                foreach ($ids as $id) {
                    $o = wc_get_order($id);
                    if ($o && '' === Counterfoil_WooCommerce::number_of($o)) { $found[] = (int) $id; }
                }
                if (count($ids) < 7) { break; }
            }
            return $found;
        }",
    )
    .unwrap();
    let out = php(
        &wp,
        "list($start, $since, $now) = cf_takeover();
         $b = $start + intdiv($since - $start, 2); $a = $since + intdiv($now - $since, 2);
         $wpo = array('number' => 7, 'prefix' => 'F-', 'formatted_number' => 'F-7');
         foreach (array($b, $since, $a) as $at) {
             cf_paid($at);                                                    // no number
             cf_paid($at, 'processing');                                      // no number, the other paid status
             cf_paid($at, 'completed', array('_counterfoil_invoice_number' => '2026-0042'));
             cf_paid($at, 'completed', array('_counterfoil_invoice_number' => ''));                 // an empty value: none
             cf_paid($at, 'completed', array('_counterfoil_invoice_pending' => 'counterfoil_busy')); // pending: none yet
             cf_paid($at, 'completed', array('_wcpdf_invoice_number' => 'F-8'));                    // WP Overnight's
             cf_paid($at, 'completed', array('_wcpdf_invoice_number_data' => $wpo));                // its parts only
             cf_paid($at, 'completed', array('_wcpdf_invoice_number_data' => array('number' => '', 'formatted_number' => ''), '_wcpdf_invoice_number' => ''));
             cf_paid($at, 'completed', array('_wcpdf_invoice_number_data' => array('formatted_number' => null)));
             cf_paid($at, 'on-hold');                                         // paid date, not a paid status
             cf_paid($at, 'cancelled');
             cf_paid($at, 'refunded');
         }
         cf_paid(null, 'pending');
         cf_paid(null, 'processing', array('_payment_method' => 'cod'));       // cash on delivery: no paid date
         cf_paid($start - 86400);                                              // the period before
         $r = wc_create_refund(array('order_id' => cf_paid($a), 'amount' => '5.00'));
         $windows = array(array($start, $now), array($since, $now), array($start, $since - 1),
             array($now - 31 * DAY_IN_SECONDS, $now), array($b, $b), array($a + 1, $now), array(1, $now + 10));
         foreach ($windows as $w) {
             $old = cf_old_scan($w[0], $w[1]);
             $ids = Counterfoil_WooCommerce_Backfill::unnumbered_ids($w[0], $w[1]);
             $count = Counterfoil_WooCommerce_Backfill::count_unnumbered($w[0], $w[1]);
             $split = Counterfoil_WooCommerce_Backfill::count_unnumbered($w[0], $w[1], $since);
             $before = 0;
             foreach ($old as $id) { $before += Counterfoil_WooCommerce::before_takeover(wc_get_order($id)) ? 1 : 0; }
             echo implode(',', $old), ' | ', implode(',', $ids), ' | ', count($old), ' ', $count,
                 ' | ', $before, ' ', $split['before'], ' ', count($old) - $before, ' ', $split['since'], \"\\n\";
         }
         // Paging: after an id, at most a limit.
         $all = Counterfoil_WooCommerce_Backfill::unnumbered_ids($start, $now);
         $paged = array(); $after = 0;
         do { $page = Counterfoil_WooCommerce_Backfill::unnumbered_ids($start, $now, $after, 2); $paged = array_merge($paged, $page); $after = $page ? end($page) : 0; } while (count($page) === 2);
         echo 'paged ', implode(',', $all) === implode(',', $paged) ? 'same' : implode(',', $all) . ' vs ' . implode(',', $paged), \"\\n\";
         // What the screens show, in one scan: the period's split and Site
         // Health's orders (this period or the last 31 days, not history).
         $screens = Counterfoil_WooCommerce_Backfill::count_now();
         $split = Counterfoil_WooCommerce_Backfill::count_unnumbered($start, $now, $since);
         $health = array();
         foreach (cf_old_scan(min($start, $now - 31 * DAY_IN_SECONDS), $now) as $id) {
             if (!Counterfoil_WooCommerce::before_takeover(wc_get_order($id))) { $health[] = $id; }
         }
         echo 'screens ', $screens['before'], ' ', $screens['since'], ' ', implode(',', $screens['waiting']),
             ' | ', $split['before'], ' ', $split['since'], ' ', implode(',', $health);",
    );
    println!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 9, "{out}");
    let mut seen_some = false;
    for line in &lines[..7] {
        let parts: Vec<&str> = line.split(" | ").collect();
        assert_eq!(parts.len(), 4, "{line}");
        assert_eq!(parts[0], parts[1], "the query's ids are the scan's: {line}");
        let counts: Vec<&str> = parts[2].split(' ').collect();
        assert_eq!(counts[0], counts[1], "the count is the scan's: {line}");
        let split: Vec<&str> = parts[3].split(' ').collect();
        assert_eq!(
            (split[0], split[2]),
            (split[1], split[3]),
            "before / since the takeover as before_takeover() tells: {line}"
        );
        seen_some |= counts[0] != "0";
    }
    assert!(seen_some, "the set has unnumbered paid orders: {out}");
    // The whole period: at each of the three paid dates six orders without
    // a number (none, processing, an empty value, pending, WP Overnight's
    // empty parts, its null formatted number), and the partly refunded one.
    let period: Vec<&str> = lines[0].split(" | ").collect();
    assert_eq!(period[2], "19 19", "{out}");
    assert_eq!(lines[7], "paged same");
    let screens: Vec<&str> = lines[8]
        .trim_start_matches("screens ")
        .split(" | ")
        .collect();
    assert_eq!(
        screens[0], screens[1],
        "the screens' one scan is the count's split and the scan's orders: {out}"
    );
}

#[test]
fn above_the_live_limit_the_screens_answer_from_a_snapshot_counted_in_the_background() {
    let wp = shop("woo-snapshot");
    helpers(&wp);
    // Every shop counts as a big one; the plugin's clock moves by an option.
    wp.mu_plugin(
        "snapshot",
        "<?php add_filter('counterfoil_woocommerce_live_count_max', function () { return 0; });
         add_filter('counterfoil_now', function ($t) { return $t + (int) get_option('cf_test_clock', 0); });
         function cf_recounts() {
             return as_get_scheduled_actions(array('hook' => 'counterfoil_woocommerce_recount', 'status' => 'pending', 'group' => 'counterfoil', 'per_page' => 50));
         }",
    )
    .unwrap();
    let since: i64 = php(&wp, "echo cf_takeover()[1];").parse().unwrap();
    let first = php(&wp, &format!("echo cf_paid({since} + 1);"));
    // The first view counts nothing in the view: it queues the count (once,
    // however many views) and says the orders are being counted, never
    // "good" for orders not counted; the settings page says so too and
    // still offers the backfill.
    let out = php(
        &wp,
        "$a = cf_health(); $b = cf_health(); wp_set_current_user(1); $f = cf_form();
         echo count(cf_recounts()), ' ', (int) is_array(get_option('counterfoil_woocommerce_counts')), ' ', $b, '@@', $f;",
    );
    let (health, form) = out.split_once("@@").unwrap();
    assert!(
        health.starts_with("1 0 recommended Counterfoil is counting"),
        "{health}"
    );
    assert!(!health.contains("Counted at "), "{health}");
    assert!(
        element_text(form, "counterfoil-woocommerce-unnumbered")
            .unwrap_or_default()
            .contains("being counted in the background"),
        "{form}"
    );
    assert!(form.contains("Number them now"), "{form}");
    // Action Scheduler counts and keeps the snapshot.
    let health = php(
        &wp,
        "foreach (cf_recounts() as $id => $a) { ActionScheduler::runner()->process_action($id, 'test'); }
         echo cf_health();",
    );
    assert!(
        health.starts_with(&format!(
            "critical 1 paid orders have no invoice number yet: {first}."
        )),
        "{health}"
    );
    assert!(health.contains("Counted at "), "{health}");
    assert_eq!(
        php(
            &wp,
            "echo (int) is_array(get_option('counterfoil_woocommerce_counts'));"
        ),
        "1"
    );
    // Another order waits: within ten minutes the snapshot answers.
    let second = php(&wp, &format!("echo cf_paid({since} + 2);"));
    let health = php(&wp, "echo cf_health();");
    assert!(
        health.starts_with(&format!(
            "critical 1 paid orders have no invoice number yet: {first}."
        )),
        "{health}"
    );
    // Older: it still answers, and one recount is queued, however many views.
    let out = php(
        &wp,
        "update_option('cf_test_clock', 601); $a = cf_health(); $b = cf_health(); echo count(cf_recounts()), ' ', $b;",
    );
    assert!(
        out.starts_with(&format!(
            "1 critical 1 paid orders have no invoice number yet: {first}."
        )),
        "{out}"
    );
    // Action Scheduler runs it: both are reported, the settings page counts both.
    let out = php(
        &wp,
        "foreach (cf_recounts() as $id => $a) { ActionScheduler::runner()->process_action($id, 'test'); }
         echo count(cf_recounts()), ' ', cf_health();",
    );
    assert!(
        out.starts_with(&format!(
            "0 critical 2 paid orders have no invoice number yet: {first}, {second}."
        )),
        "{out}"
    );
    let form = php(&wp, "wp_set_current_user(1); echo cf_form();");
    assert_eq!(
        element_text(&form, "counterfoil-woocommerce-unnumbered").as_deref(),
        Some("2 paid orders of this period have no invoice number."),
        "{form}"
    );
    assert!(
        element_text(&form, "counterfoil-woocommerce-counted-at")
            .unwrap_or_default()
            .starts_with("Counted at "),
        "{form}"
    );
    // A backfill drops the snapshot: the next view queues a count again.
    let done = php(&wp, "echo cf_rest(true);");
    assert!(done.starts_with("200 "), "{done}");
    let health = php(&wp, "echo cf_health();");
    assert!(health.starts_with("recommended "), "{health}");
    let health = php(
        &wp,
        "foreach (cf_recounts() as $id => $a) { ActionScheduler::runner()->process_action($id, 'test'); }
         echo cf_health();",
    );
    assert!(health.starts_with("good "), "{health}");
    // A new numbering period (the clock a year on): the old period's
    // snapshot answers nothing; a count is queued.
    let health = php(
        &wp,
        "update_option('cf_test_clock', 366 * DAY_IN_SECONDS); $h = cf_health(); echo count(cf_recounts()), ' ', $h;",
    );
    assert!(health.starts_with("1 recommended "), "{health}");
}
