//! A year in a real shop, over HTTP (php-fpm + nginx, real WordPress and
//! MariaDB): the first payments of a new issuer arriving together, a payment
//! held for a missing series, and New Year's night under a fake clock in two
//! time zones, on both backends (docs/design.md §7).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use counterfoil_tests::burst;
use counterfoil_tests::fake_clock;
use counterfoil_tests::webhook::deliver;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::workers::{run_overlapping, run_overlapping_then, Finished};
use counterfoil_tests::MariaDb;
use serde_json::Value;

/// One delivery as a callback client reported it.
struct Delivery {
    txn: String,
    user: u64,
    status: u16,
    before: f64,
    after: f64,
    body: Value,
}

fn deliveries(finished: &[Finished]) -> Vec<Delivery> {
    finished
        .iter()
        .flat_map(|f| f.stdout.lines())
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Delivery {
                txn: v["txn"].as_str().unwrap().to_owned(),
                user: v["user"].as_u64().unwrap(),
                status: v["status"].as_u64().unwrap() as u16,
                before: v["before"].as_f64().unwrap(),
                after: v["after"].as_f64().unwrap(),
                body: v["body"].clone(),
            }
        })
        .collect()
}

/// A callback client process (`callback-client`), with extra environment.
fn client(
    port: u16,
    secret: &str,
    prefix: &str,
    users: &str,
    count: usize,
    pause_ms: u64,
    env: &[(&str, String)],
) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_callback-client"));
    c.args([
        port.to_string(),
        secret.to_owned(),
        prefix.to_owned(),
        users.to_owned(),
        count.to_string(),
        pause_ms.to_string(),
    ]);
    c.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    c
}

fn scalar(wp: &WordPress, sql: &str) -> String {
    wp.scalar(sql)
}

/// 16 OS processes each deliver the first payment of a new issuer at the same
/// moment: one series is created (the primary key decides), 16 distinct
/// numbers 1..=16, every delivery 201.
fn first_payments_of_a_new_series_at_once(extension: bool) {
    let wp = WordPress::install(
        MariaDb::shared(),
        if extension { "first_ext" } else { "first_php" },
        None,
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(extension, 4).unwrap();
    let commands = (0..16)
        .map(|i| client(site.port(), &secret, &format!("first{i}"), "77", 1, 0, &[]))
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{e}\n{}", site.logs()));
    let got = deliveries(&finished);
    assert_eq!(got.len(), 16);
    let mut numbers = BTreeSet::new();
    for d in &got {
        assert_eq!(d.status, 201, "{}: {}", d.txn, d.body);
        numbers.insert(d.body["sequence"].as_u64().unwrap());
    }
    assert_eq!(numbers, (1..=16).collect::<BTreeSet<u64>>());
    assert_eq!(
        scalar(
            &wp,
            "SELECT COUNT(*) FROM wp_invoice_sequences WHERE scope_key LIKE '77:%'"
        ),
        "1"
    );
    let check = burst::check_site(wp.database_url()).unwrap();
    assert!(check.is_clean() && check.not_issued() == 0, "{check:?}");
    assert_eq!(check.invoices, 16);
}

#[test]
fn sixteen_first_payments_of_a_new_series_extension() {
    first_payments_of_a_new_series_at_once(true);
}

#[test]
fn sixteen_first_payments_of_a_new_series_pure_php() {
    first_payments_of_a_new_series_at_once(false);
}

/// Issue 24 item 5, through the plugin over HTTP: the `continue` plan with a
/// format that prints no year (`{seq:04}`). 3 callback clients deliver
/// payments of 2030 (series `77:2030`, at 100) while 3 others deliver the
/// first payments of 2031, whose series is made from 2030's: every delivery
/// 201, 180 invoices numbered 0101..0280, none printed twice, and some 2030
/// payments numbered by 2031's series (the overlap happened). Failed before
/// the fix: the same invoice number printed twice.
fn continue_at_new_year_over_http(extension: bool) {
    let wp = WordPress::install(
        MariaDb::shared(),
        if extension { "cont_ext" } else { "cont_php" },
        None,
    )
    .unwrap();
    wp.eval(
        false,
        "update_option('counterfoil_missing_series', 'continue'); \
         update_option('counterfoil_format', '{seq:04}'); \
         initialize_invoice_sequence(77, 2030, 101);",
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(extension, 4).unwrap();
    let per_client = 30;
    let commands = (0..6)
        .map(|i| {
            let year = if i % 2 == 0 { "2030" } else { "2031" };
            let env = [("CALLBACK_YEAR", year.to_owned())];
            client(
                site.port(),
                &secret,
                &format!("y{year}c{i}"),
                "77",
                per_client,
                0,
                &env,
            )
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300))
        .unwrap_or_else(|e| panic!("{e}\n{}", site.logs()));
    let got = deliveries(&finished);
    assert_eq!(got.len(), 6 * per_client);
    let mut printed: BTreeMap<String, String> = BTreeMap::new();
    let mut old_by_new = 0;
    for d in &got {
        assert_eq!(d.status, 201, "{}: {}", d.txn, d.body);
        let number = d.body["number"].as_str().unwrap().to_owned();
        let scope = d.body["scope_key"].as_str().unwrap().to_owned();
        if let Some(other) = printed.insert(number.clone(), d.txn.clone()) {
            panic!(
                "invoice number {number} printed twice: {other} and {}",
                d.txn
            );
        }
        old_by_new += usize::from(d.txn.starts_with("y2030") && scope == "77:2031");
    }
    let expected: Vec<String> = (101..101 + 6 * per_client)
        .map(|n| format!("{n:04}"))
        .collect();
    assert_eq!(printed.keys().cloned().collect::<Vec<_>>(), expected);
    assert_eq!(
        scalar(
            &wp,
            "SELECT closed_by FROM wp_invoice_sequences WHERE scope_key = '77:2030'"
        ),
        "77:2031"
    );
    let check = burst::check_site(wp.database_url()).unwrap();
    assert!(check.is_clean() && check.not_issued() == 0, "{check:?}");
    assert!(
        old_by_new > 0,
        "no 2030 payment came after 2031's series was made: no overlap, nothing proved"
    );
}

#[test]
fn continue_at_new_year_over_http_extension() {
    continue_at_new_year_over_http(true);
}

#[test]
fn continue_at_new_year_over_http_pure_php() {
    continue_at_new_year_over_http(false);
}

/// Under `hold`: 503 with Retry-After, the payment recorded without a number,
/// the same on a repeat; after the series is created, the repeat gets 201
/// with a number; nothing lost, nothing twice.
#[test]
fn hold_answers_503_and_a_repeat_completes_it_once_the_series_exists() {
    let wp = WordPress::install(MariaDb::shared(), "hold_http", None).unwrap();
    wp.eval(
        false,
        "update_option('counterfoil_missing_series', 'hold');",
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(true, 2).unwrap();
    let body = br#"{"gateway":"stripe","transaction_id":"held-1","user_id":31,"year":2026,"amount":"5.00","currency":"EUR"}"#;
    for _ in 0..2 {
        let r = deliver(site.port(), &secret, body, 0).unwrap();
        assert_eq!(r.status, 503, "{}", r.body);
        assert_eq!(r.header("Retry-After"), vec!["300"]);
        assert!(
            r.body.contains("counterfoil_waiting_for_series"),
            "{}",
            r.body
        );
    }
    assert_eq!(
        scalar(&wp, "SELECT CONCAT(COUNT(*), ' ', COALESCE(MAX(number), 'null')) FROM wp_counterfoil_payments WHERE transaction_id = 'held-1'"),
        "1 null"
    );
    assert_eq!(
        scalar(&wp, "SELECT COUNT(*) FROM wp_invoice_sequences"),
        "0"
    );
    wp.eval(false, "initialize_invoice_sequence(31, 2026, 10);")
        .unwrap();
    let r = deliver(site.port(), &secret, body, 0).unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.body.contains(r#""number":"2026-0010""#), "{}", r.body);
    let r = deliver(site.port(), &secret, body, 0).unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let check = burst::check_site(wp.database_url()).unwrap();
    assert!(check.is_clean() && check.not_issued() == 0, "{check:?}");
}

/// Issue 30: 30 payments held for a missing series; once it exists, 4
/// callback clients deliver all of them again at the same moment (each
/// payment's deliveries overlap, its completion in one trip racing the
/// others' and the several-statement flow): every delivery 200 or 201, one
/// 201 per payment, every delivery of a payment the same number, 30
/// distinct numbers 10..=39, nothing left held, and the site's books clean.
fn held_payments_completed_by_redeliveries_at_once(extension: bool) {
    let wp = WordPress::install(
        MariaDb::shared(),
        if extension {
            "held_race_ext"
        } else {
            "held_race_php"
        },
        None,
    )
    .unwrap();
    wp.eval(
        false,
        "update_option('counterfoil_missing_series', 'hold');",
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(extension, 4).unwrap();
    let year = [("CALLBACK_YEAR", "2026".to_owned())];
    let held = run_overlapping(
        vec![client(site.port(), &secret, "hr", "43", 30, 0, &year)],
        Duration::from_secs(120),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", site.logs()));
    let held = deliveries(&held);
    assert_eq!(held.len(), 30);
    assert!(held.iter().all(|d| d.status == 503), "held first");
    wp.eval(false, "initialize_invoice_sequence(43, 2026, 10);")
        .unwrap();
    let commands = (0..4)
        .map(|_| client(site.port(), &secret, "hr", "43", 30, 0, &year))
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300))
        .unwrap_or_else(|e| panic!("{e}\n{}", site.logs()));
    let got = deliveries(&finished);
    assert_eq!(got.len(), 120);
    let mut number_of: BTreeMap<String, u64> = BTreeMap::new();
    let mut created = 0;
    for d in &got {
        assert!(
            d.status == 200 || d.status == 201,
            "{}: {} {}",
            d.txn,
            d.status,
            d.body
        );
        created += usize::from(d.status == 201);
        let n = d.body["sequence"].as_u64().unwrap();
        let before = number_of.insert(d.txn.clone(), n);
        assert!(
            before.is_none() || before == Some(n),
            "{} got {before:?} and {n}",
            d.txn
        );
    }
    assert_eq!(created, 30, "one 201 per payment");
    assert_eq!(
        number_of.values().copied().collect::<BTreeSet<u64>>(),
        (10..=39).collect::<BTreeSet<u64>>()
    );
    assert_eq!(
        scalar(
            &wp,
            "SELECT COUNT(*) FROM wp_counterfoil_payments WHERE number IS NULL"
        ),
        "0"
    );
    let check = burst::check_site(wp.database_url()).unwrap();
    assert!(check.is_clean() && check.not_issued() == 0, "{check:?}");
    assert_eq!(check.invoices, 30);
}

#[test]
fn held_payments_completed_by_redeliveries_at_once_extension() {
    held_payments_completed_by_redeliveries_at_once(true);
}

#[test]
fn held_payments_completed_by_redeliveries_at_once_pure_php() {
    held_payments_completed_by_redeliveries_at_once(false);
}

/// Under `hold`, a repeat that differs from the held payment (another
/// issuer, amount and currency) is a 409 once the series exists, as it is
/// for a payment that was never held; the invoice is written from the
/// payment row, never from the repeat (issue [seams] item 3). Failed before
/// the fix: 201, and the invoice took the repeat's amount and author.
fn a_mismatched_repeat_of_a_held_payment(extension: bool) {
    let wp = WordPress::install(
        MariaDb::shared(),
        if extension {
            "held_mismatch_ext"
        } else {
            "held_mismatch_php"
        },
        None,
    )
    .unwrap();
    wp.eval(
        false,
        "update_option('counterfoil_missing_series', 'hold');",
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(extension, 2).unwrap();
    let first = br#"{"gateway":"stripe","transaction_id":"held-m","user_id":1,"year":2026,"amount":"10.00","currency":"EUR"}"#;
    let other = br#"{"gateway":"stripe","transaction_id":"held-m","user_id":7,"year":2026,"amount":"99999.00","currency":"USD"}"#;
    let r = deliver(site.port(), &secret, first, 0).unwrap();
    assert_eq!(r.status, 503, "{}", r.body);
    wp.eval(
        false,
        "initialize_invoice_sequence(1, 2026, 1); initialize_invoice_sequence(7, 2026, 1);",
    )
    .unwrap();
    let r = deliver(site.port(), &secret, other, 0).unwrap();
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.body.contains("counterfoil_payment_mismatch"),
        "{}",
        r.body
    );
    assert_eq!(
        scalar(
            &wp,
            "SELECT COUNT(*) FROM wp_posts WHERE post_type = 'counterfoil_invoice'"
        ),
        "0",
        "no invoice from a mismatched repeat"
    );
    assert_eq!(
        scalar(&wp, "SELECT CONCAT(scope_key, ' ', amount, ' ', currency) FROM wp_counterfoil_payments WHERE transaction_id = 'held-m'"),
        "1:2026 10.00 EUR"
    );
    let r = deliver(site.port(), &secret, first, 0).unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.body.contains(r#""number":"2026-0001""#), "{}", r.body);
    assert_eq!(
        scalar(
            &wp,
            "SELECT CONCAT(p.post_author, ' ', m.meta_value) FROM wp_posts p JOIN wp_postmeta m \
             ON m.post_id = p.ID AND m.meta_key = '_counterfoil_amount' WHERE p.post_type = 'counterfoil_invoice'"
        ),
        "1 10.00",
        "the invoice is the payment row's"
    );
    let r = deliver(site.port(), &secret, other, 0).unwrap();
    assert_eq!(r.status, 409, "{}", r.body);
    let check = burst::check_site(wp.database_url()).unwrap();
    assert!(check.is_clean() && check.not_issued() == 0, "{check:?}");
}

#[test]
fn a_mismatched_repeat_of_a_held_payment_is_a_409_extension() {
    a_mismatched_repeat_of_a_held_payment(true);
}

#[test]
fn a_mismatched_repeat_of_a_held_payment_is_a_409_pure_php() {
    a_mismatched_repeat_of_a_held_payment(false);
}

/// A payment reserved on 31 December whose invoice could not be created
/// then (a hook failed), completed by a repeat on 1 January: the number's
/// year and month both come from the instant the payment arrived, recorded
/// with it — never the year of phase 1 with the month of phase 2 (issue
/// [seams] item 6; failed before the fix: `2026-01-0001`).
fn a_number_reserved_before_midnight_and_completed_after(extension: bool) {
    let wp = WordPress::install(
        MariaDb::shared(),
        if extension {
            "midnight_ext"
        } else {
            "midnight_php"
        },
        None,
    )
    .unwrap();
    wp.mu_plugin(
        "clock",
        "<?php
         add_filter('counterfoil_now', function ($t) { return (int) get_option('test_now', $t); });
         add_action('counterfoil_before_invoice_post', function () {
             if (get_option('test_fail')) { throw new RuntimeException('planted failure'); }
         });",
    )
    .unwrap();
    wp.eval(
        false,
        "update_option('timezone_string', 'Europe/Madrid');
         update_option('counterfoil_format', '{year}-{month}-{seq:04}');
         initialize_invoice_sequence(1, 2026, 1);",
    )
    .unwrap();
    let pay = |now: &str, fail: bool| {
        wp.eval(
            extension,
            &format!(
                "update_option('test_now', (new DateTimeImmutable('{now}', wp_timezone()))->getTimestamp());
                 update_option('test_fail', {fail});
                 $r = Counterfoil_Invoices::for_payment(array('gateway' => 'stripe', 'transaction_id' => 'pi_midnight', 'user_id' => 1, 'amount' => '5.00', 'currency' => 'EUR'));
                 echo is_wp_error($r) ? $r->get_error_code() : $r['number'];",
                fail = u8::from(fail)
            ),
        )
        .unwrap()
    };
    let first = pay("2026-12-31 23:59:58", true);
    assert!(!first.starts_with("2026-"), "phase 2 failed: {first}");
    assert_eq!(
        scalar(
            &wp,
            "SELECT CONCAT(number, ' ', period) FROM wp_counterfoil_payments"
        ),
        "1 2026-12",
        "the payment is reserved with the instant it arrived"
    );
    assert_eq!(pay("2027-01-01 00:00:05", false), "2026-12-0001");
    assert_eq!(
        pay("2027-01-01 00:00:09", false),
        "2026-12-0001",
        "a repeat"
    );
}

#[test]
fn a_number_reserved_before_midnight_keeps_its_month_extension() {
    a_number_reserved_before_midnight_and_completed_after(true);
}

#[test]
fn a_number_reserved_before_midnight_keeps_its_month_pure_php() {
    a_number_reserved_before_midnight_and_completed_after(false);
}

/// New Year's night by the site's clock: php-fpm and 8 callback clients (OS
/// processes) run under one fake clock moved to 10 s before local midnight of
/// 31 December 2026 in `timezone` once all are ready; each client sends 20 payments without a
/// year, 0.8 s apart, across the boundary. Every delivery is 2xx; a payment
/// answered before local midnight is in the 2026 series, one sent after it in
/// the 2027 series (created by the `create` setting at 1); a payment sent in
/// the second around midnight may be in either; no number twice; the
/// registry is complete.
fn new_year_by_the_sites_clock(timezone: &str, midnight_utc: i64, extension: bool) {
    period_boundary_by_the_sites_clock(timezone, "calendar-year", midnight_utc, extension);
}

/// The same across the first day of a period under the site's `rule`
/// (`calendar-year`, or `fiscal-year:MM-DD` whose year starting in 2027
/// begins at `midnight_utc`): before it the 2026 series, after it 2027's.
fn period_boundary_by_the_sites_clock(
    timezone: &str,
    rule: &str,
    midnight_utc: i64,
    extension: bool,
) {
    periods_by_the_sites_clock(timezone, rule, ("2026", "2027"), midnight_utc, extension);
}

/// Payments across the boundary at `midnight_utc` between the periods named
/// `old` and `new` (series `{issuer}:{old}`, then `{issuer}:{new}`: years,
/// or months as `yyyy-mm` under the `month` rule).
fn periods_by_the_sites_clock(
    timezone: &str,
    rule: &str,
    periods: (&str, &str),
    midnight_utc: i64,
    extension: bool,
) {
    let misplaced = payments_across(timezone, rule, periods, midnight_utc, extension, false);
    assert!(misplaced.is_empty(), "{misplaced:#?}");
}

/// The negative control of the New Year tests: the same run against a build
/// of the plugin that takes the year from the UTC clock (`gmdate` for
/// `wp_date` in the installed copy's `counterfoil_local_day_at`). In Shanghai
/// the first minutes of 2027 are still 2026 in UTC, so the payments sent
/// after local midnight land in 2026's series, and the test's check says so.
#[test]
fn new_year_in_shanghai_fails_against_a_build_that_takes_the_year_in_utc() {
    let misplaced = payments_across(
        "Asia/Shanghai",
        "calendar-year",
        ("2026", "2027"),
        SHANGHAI_MIDNIGHT,
        false,
        true,
    );
    println!("misplaced by the UTC build: {}", misplaced.len());
    assert!(
        misplaced.iter().any(|m| m.contains("sent after midnight")),
        "the check passed a build that numbers by UTC: {misplaced:?}"
    );
}

/// Runs the payments across the boundary and returns the deliveries placed
/// in the wrong period (empty when every one is right). `utc_build` patches
/// the installed plugin to take the year from the UTC clock first.
fn payments_across(
    timezone: &str,
    rule: &str,
    (old_period, new_period): (&str, &str),
    midnight_utc: i64,
    extension: bool,
    utc_build: bool,
) -> Vec<String> {
    let name = format!(
        "ny_{}_{}_{}{}",
        timezone.split('/').next_back().unwrap().to_lowercase(),
        rule.replace([':', '-'], ""),
        if extension { "ext" } else { "php" },
        if utc_build { "_utc" } else { "" }
    );
    let wp = WordPress::install(MariaDb::shared(), &name, None).unwrap();
    if utc_build {
        let file = wp
            .dir()
            .join("wp-content/plugins/counterfoil/includes/functions.php");
        let text = std::fs::read_to_string(&file).unwrap();
        let local = "(int) wp_date( 'Y', $time )";
        assert!(
            text.contains(local),
            "the site's year is read where the control expects"
        );
        std::fs::write(&file, text.replace(local, "(int) gmdate( 'Y', $time )")).unwrap();
    }
    wp.eval(
        false,
        &format!(
            "update_option('timezone_string', '{timezone}');
             update_option('counterfoil_period', '{rule}');
             for ($u = 1; $u <= 4; $u++) {{ counterfoil_backend()->initialize(\"$u:{old_period}\", 100 * $u); }}"
        ),
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    // The site and the clients read the real time until every client is at
    // the start line; then the clock moves to LEAD s before midnight for
    // all. Each client sends PER_CLIENT payments 0.8 s apart, so on a quiet
    // machine about two thirds go before midnight; on a loaded one (a
    // soak run beside a CPU hog once had 7 answered before) the lead still
    // holds the first requests, and the php-fpm workers are warmed first
    // (WordPress loaded once each) so cold starts do not eat it.
    const LEAD: i64 = 10;
    const PER_CLIENT: usize = 20;
    let clock = fake_clock::MovableClock::new().unwrap();
    let env = clock.env();
    let site = wp.serve_with_env(extension, 4, &env).unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| counterfoil_tests::webhook::deliver(site.port(), "warm-up", b"{}", 0));
        }
    });
    let commands = (0..8)
        .map(|i| {
            client(
                site.port(),
                &secret,
                &format!("ny{i}"),
                "1,2,3,4",
                PER_CLIENT,
                800,
                &env,
            )
        })
        .collect();
    let finished = run_overlapping_then(commands, Duration::from_secs(180), || {
        clock.set_at(midnight_utc - LEAD)
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", site.logs()));
    let got = deliveries(&finished);
    assert_eq!(got.len(), 8 * PER_CLIENT);
    let boundary = midnight_utc as f64;
    let (mut old, mut new) = (0, 0);
    let mut numbers: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    let mut misplaced = Vec::new();
    for d in &got {
        assert_eq!(d.status, 201, "{} at {}: {}", d.txn, d.before, d.body);
        let scope = d.body["scope_key"].as_str().unwrap().to_owned();
        let period = scope.rsplit_once(':').unwrap().1;
        assert_eq!(scope.split(':').next().unwrap(), d.user.to_string());
        if d.after < boundary && period != old_period {
            misplaced.push(format!("{} answered before midnight: {}", d.txn, d.body));
        } else if d.before >= boundary && period != new_period {
            misplaced.push(format!("{} sent after midnight: {}", d.txn, d.body));
        }
        assert!(period == old_period || period == new_period, "{}", d.body);
        if d.after < boundary {
            old += 1;
        } else if d.before >= boundary {
            new += 1;
        }
        let number = d.body["number"].as_str().unwrap();
        assert!(
            number.starts_with(&format!("{}-", &period[..4])),
            "{number} in {scope}"
        );
        assert!(
            numbers
                .entry(scope)
                .or_default()
                .insert(d.body["sequence"].as_u64().unwrap()),
            "a number twice: {}",
            d.body
        );
    }
    assert!(
        old >= 8 && new >= 8,
        "the run must cross midnight: {old} answered before, {new} sent after"
    );
    // The new period's series were created by the setting, at 1.
    for u in 1..=4 {
        if numbers.contains_key(&format!("{u}:{new_period}")) {
            assert_eq!(
                scalar(
                    &wp,
                    &format!(
                        "SELECT start_value FROM wp_invoice_sequences WHERE scope_key = '{u}:{new_period}'"
                    )
                ),
                "1"
            );
        }
    }
    let check = burst::check_site(wp.database_url()).unwrap();
    assert_eq!(check.invoices, got.len() as u64);
    assert!(check.is_clean() && check.not_issued() == 0, "{check:?}");
    misplaced
}

/// 2027-01-01 00:00 in Shanghai (UTC+8) is 2026-12-31 16:00 UTC.
const SHANGHAI_MIDNIGHT: i64 = 1_798_732_800;
/// 2027-01-01 00:00 in New York (UTC−5) is 2027-01-01 05:00 UTC.
const NEW_YORK_MIDNIGHT: i64 = 1_798_779_600;

#[test]
fn new_year_in_shanghai_extension() {
    new_year_by_the_sites_clock("Asia/Shanghai", SHANGHAI_MIDNIGHT, true);
}

#[test]
fn new_year_in_shanghai_pure_php() {
    new_year_by_the_sites_clock("Asia/Shanghai", SHANGHAI_MIDNIGHT, false);
}

#[test]
fn new_year_in_new_york_extension() {
    new_year_by_the_sites_clock("America/New_York", NEW_YORK_MIDNIGHT, true);
}

#[test]
fn new_year_in_new_york_pure_php() {
    new_year_by_the_sites_clock("America/New_York", NEW_YORK_MIDNIGHT, false);
}

/// 2027-04-01 00:00 in Kolkata (UTC+5:30) is 2027-03-31 18:30 UTC: India's
/// fiscal year 2027-28 starts.
const KOLKATA_FISCAL_YEAR: i64 = 1_806_517_800;
/// 2027-04-06 00:00 in London (BST, UTC+1) is 2027-04-05 23:00 UTC: the UK
/// tax year 2027-28 starts.
const LONDON_TAX_YEAR: i64 = 1_806_966_000;

#[test]
fn fiscal_year_in_kolkata_extension() {
    period_boundary_by_the_sites_clock(
        "Asia/Kolkata",
        "fiscal-year:04-01",
        KOLKATA_FISCAL_YEAR,
        true,
    );
}

#[test]
fn fiscal_year_in_kolkata_pure_php() {
    period_boundary_by_the_sites_clock(
        "Asia/Kolkata",
        "fiscal-year:04-01",
        KOLKATA_FISCAL_YEAR,
        false,
    );
}

#[test]
fn tax_year_in_london_pure_php() {
    period_boundary_by_the_sites_clock(
        "Europe/London",
        "fiscal-year:04-06",
        LONDON_TAX_YEAR,
        false,
    );
}

/// 2027-03-01 00:00 in Madrid (CET, UTC+1) is 2027-02-28 23:00 UTC: under
/// the monthly rule, March's series begin.
const MADRID_MARCH: i64 = 1_803_855_600;

#[test]
fn a_new_month_in_madrid_extension() {
    periods_by_the_sites_clock(
        "Europe/Madrid",
        "month",
        ("2027-02", "2027-03"),
        MADRID_MARCH,
        true,
    );
}

#[test]
fn a_new_month_in_madrid_pure_php() {
    periods_by_the_sites_clock(
        "Europe/Madrid",
        "month",
        ("2027-02", "2027-03"),
        MADRID_MARCH,
        false,
    );
}
