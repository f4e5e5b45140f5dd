//! `counterfoil adopt --from wp-overnight --execute` beside a live shop:
//! eight OS processes pay orders (numbered by the plugin, through its
//! pure-PHP twin, in the very series being adopted) while adopt writes.
//!
//! The window is made wide on purpose: adopt's test hook
//! (`COUNTERFOIL_TEST_ADOPT_PAUSE`, debug builds only) pauses between
//! deciding what to write and writing it, and the workers are released at
//! that moment. Afterwards every number is carried by one order and the
//! registry names that order as its owner; the workers really ran during
//! the adoption, and a live payment waited for the series row adopt held
//! (the server's `Innodb_row_lock_time_max`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use counterfoil_tests::php::repo_root;
use counterfoil_tests::woocommerce;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::workers::start_together_then;
use counterfoil_tests::MariaDb;

/// Orders WP Overnight numbered before the adoption (numbers 1..=HISTORY).
const HISTORY: u64 = 200;
/// Worker processes paying orders during the adoption.
const WORKERS: usize = 8;
/// Orders each worker pays.
const PER_WORKER: usize = 12;
/// How long adopt's test hook pauses (well under the plugin's 5 s deadline).
const PAUSE_MS: u64 = 2500;

fn php(wp: &WordPress, code: &str) -> String {
    wp.eval(false, code).unwrap().trim().to_owned()
}

fn ids(text: &str) -> Vec<u64> {
    text.split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect()
}

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[test]
fn adopt_beside_eight_processes_paying_orders_in_the_same_series() {
    let wp = woocommerce::install(MariaDb::shared(), "adopt-live").unwrap();
    let url = wp.database_url().to_owned();
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    // WP Overnight's history: orders 1..=HISTORY paid and numbered by it
    // (Counterfoil's hooks off in this process), its yearly store beside.
    let history = ids(&php(
        &wp,
        &format!(
            "foreach (wc_get_is_paid_statuses() as $s) {{ remove_all_actions('woocommerce_order_status_' . $s); }}
             remove_all_actions('woocommerce_payment_complete');
             global $wpdb;
             $wpdb->query(\"CREATE TABLE {{$wpdb->prefix}}wcpdf_invoice_number_{year} (id int(16) NOT NULL AUTO_INCREMENT, order_id int(16), date datetime NOT NULL, calculated_number int(16), PRIMARY KEY (id))\");
             for ($n = 1; $n <= {HISTORY}; $n++) {{
                 $id = cf_test_order('20.00'); $o = wc_get_order($id); $o->payment_complete('wpo-' . $n);
                 $wpdb->insert($wpdb->prefix . 'wcpdf_invoice_number_{year}', array('order_id' => $id, 'date' => '{year}-01-02 10:00:00'));
                 $o = wc_get_order($id);
                 $o->update_meta_data('_wcpdf_invoice_number', (string) $n);
                 $o->update_meta_data('_wcpdf_invoice_date_formatted', '{year}-01-02 10:00:00');
                 $o->save();
                 echo $id, ' ';
             }}"
        ),
    ));
    assert_eq!(history.len() as u64, HISTORY);
    // The orders the live shop is about to be paid for (not paid yet).
    let fresh = ids(&php(
        &wp,
        &format!(
            "for ($i = 0; $i < {}; $i++) {{ echo cf_test_order('30.00'), ' '; }}",
            WORKERS * PER_WORKER
        ),
    ));

    // The workers load WordPress and wait at the start line; adopt starts
    // and, once it says it paused, the workers are released.
    let script = repo_root().join("tests/wp-workers/woo-pay.php");
    let commands = fresh
        .chunks(PER_WORKER)
        .enumerate()
        .map(|(w, orders)| {
            let mut c = wp.php(false);
            c.arg(&script).arg("late").arg(w.to_string());
            c.args(orders.iter().map(|i| i.to_string()));
            c
        })
        .collect();
    // The server's row lock counters (this test's server is its own).
    let status = |name: &str| -> u64 {
        MariaDb::query(&url, &format!("SHOW GLOBAL STATUS LIKE '{name}'")).unwrap()[0][1]
            .clone()
            .unwrap()
            .parse()
            .unwrap()
    };
    let waits_before = status("Innodb_row_lock_waits");
    let (lines_tx, lines) = mpsc::channel::<(u128, String)>();
    let mut adopt = None;
    let mut released = 0u128;
    let running = start_together_then(commands, || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_counterfoil"))
            .args(["adopt", "--from", "wp-overnight", "--execute"])
            .env("DATABASE_URL", &url)
            .env("COUNTERFOIL_TEST_ADOPT_PAUSE", PAUSE_MS.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = lines_tx.send((now_ns(), line));
            }
        });
        let waited = Instant::now();
        loop {
            let (_, line) = lines.recv_timeout(Duration::from_secs(60))?;
            if line.starts_with("adopt: test pause") {
                break;
            }
            anyhow::ensure!(
                waited.elapsed() < Duration::from_secs(60),
                "adopt never paused"
            );
        }
        adopt = Some((child, now_ns()));
        released = now_ns();
        Ok(())
    })
    .unwrap();
    let (adopt_child, adopt_paused) = adopt.unwrap();

    let adopted = adopt_child.wait_with_output().unwrap();
    let adopt_ended = now_ns();
    let adopt_stderr: Vec<(u128, String)> = lines.try_iter().collect();
    let finished = running.finish(Duration::from_secs(300)).unwrap();
    let row_lock_waited = status("Innodb_row_lock_waits") - waits_before;
    let longest_wait_ms = status("Innodb_row_lock_time_max");
    let stdout = String::from_utf8_lossy(&adopted.stdout).into_owned();
    println!("adopt (exit {:?}):\n{stdout}", adopted.status.code());
    for (_, l) in &adopt_stderr {
        println!("adopt stderr: {l}");
    }

    // What the workers were told, and when they ran.
    let mut paid = 0;
    let mut starts = Vec::new();
    let mut slowest_ms = 0u128;
    for f in &finished {
        assert!(f.status.success(), "worker: {}\n{}", f.stdout, f.stderr);
        let mut start = 0u128;
        for line in f.stdout.lines() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            match parts.as_slice() {
                ["start", t] => start = t.parse().unwrap(),
                ["end", t] => {
                    slowest_ms = slowest_ms.max((t.parse::<u128>().unwrap() - start) / 1_000_000)
                }
                ["ok", _, _] => paid += 1,
                other => panic!(
                    "unexpected worker line {other:?}\n{}\n{}",
                    f.stdout, f.stderr
                ),
            }
        }
        starts.push(start);
    }
    println!(
        "{paid} orders paid by {WORKERS} processes released {} ms after adopt paused; the slowest worker ran {slowest_ms} ms; adopt ended {} ms after its pause began; the server counted {row_lock_waited} row lock wait(s), the longest {longest_wait_ms} ms",
        (released - adopt_paused) / 1_000_000,
        (adopt_ended - adopt_paused) / 1_000_000
    );
    assert_eq!(
        paid,
        WORKERS * PER_WORKER,
        "every live payment got its number"
    );

    // Every number: carried by one order, and the registry names that order.
    let all: Vec<String> = history
        .iter()
        .chain(&fresh)
        .map(|i| i.to_string())
        .collect();
    let carried_text = php(
        &wp,
        &format!(
            "foreach (array({}) as $id) {{ $o = wc_get_order($id);
               foreach (array($o->get_meta('_wcpdf_invoice_number'), $o->get_meta('_counterfoil_invoice_number')) as $n) {{
                 if ('' !== (string) $n) {{ echo $id, ' ', $n, \"\\n\"; }} }} }}",
            all.join(", ")
        ),
    );
    let mut carriers: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for line in carried_text.lines() {
        let (id, number) = line.split_once(' ').unwrap();
        let seq: u64 = number.rsplit('-').next().unwrap().parse().unwrap();
        carriers.entry(seq).or_default().push(id.parse().unwrap());
    }
    let registry: BTreeMap<u64, (String, Option<String>)> = MariaDb::query(
        &url,
        &format!("SELECT number, status, transaction_id FROM wp_counterfoil_numbers WHERE scope_key = '0:{year}'"),
    )
    .unwrap()
    .into_iter()
    .map(|r| {
        (
            r[0].clone().unwrap().parse().unwrap(),
            (r[1].clone().unwrap(), r[2].clone()),
        )
    })
    .collect();
    let mut wrong = Vec::new();
    for (number, orders) in &carriers {
        let owner = registry.get(number).and_then(|r| r.1.clone());
        if orders.len() != 1 || owner != Some(orders[0].to_string()) {
            wrong.push(format!(
                "number {number}: carried by order(s) {orders:?}, the registry's owner {owner:?}"
            ));
        }
    }
    for (number, (status, owner)) in &registry {
        if let Some(owner) = owner {
            if carriers.get(number) != Some(&vec![owner.parse().unwrap()]) {
                wrong.push(format!(
                    "number {number} ({status}): the registry's owner {owner}, carried by {:?}",
                    carriers.get(number)
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} number(s) whose owner is not the order carrying them (adopt exit {:?}), first: {:#?}",
        wrong.len(),
        adopted.status.code(),
        &wrong[..wrong.len().min(5)]
    );
    assert_eq!(adopted.status.code(), Some(0), "{stdout}");
    assert_eq!(
        carriers.len() as u64,
        HISTORY + (WORKERS * PER_WORKER) as u64,
        "every order carries its own number"
    );

    // The overlap was real: the workers started before adopt ended, and a
    // live payment waited for the series row about as long as adopt held it
    // (the workers' own waits for each other last milliseconds).
    assert!(
        starts.iter().all(|s| *s < adopt_ended),
        "a worker started after adopt ended"
    );
    assert!(row_lock_waited > 0, "the server counted no row lock wait");
    assert!(
        longest_wait_ms >= PAUSE_MS / 2,
        "no live payment waited for adopt's transaction (longest row lock wait {longest_wait_ms} ms)"
    );
}

/// A number that becomes another payment's after adopt planned (a live
/// allocation committed just before adopt locked the series): adopt reads
/// it back inside its transaction, rolls the series back and exits 2
/// naming it; nothing of the series is written.
#[test]
fn a_number_taken_after_the_plan_rolls_the_series_back() {
    let wp = woocommerce::install(MariaDb::shared(), "adopt-taken").unwrap();
    let url = wp.database_url().to_owned();
    let year = php(&wp, "echo counterfoil_current_period()[0];");
    php(
        &wp,
        &format!(
            "foreach (wc_get_is_paid_statuses() as $s) {{ remove_all_actions('woocommerce_order_status_' . $s); }}
             remove_all_actions('woocommerce_payment_complete');
             for ($n = 1; $n <= 20; $n++) {{
                 $id = cf_test_order('20.00'); $o = wc_get_order($id); $o->payment_complete('wpo-' . $n);
                 $o = wc_get_order($id);
                 $o->update_meta_data('_wcpdf_invoice_number', (string) $n);
                 $o->update_meta_data('_wcpdf_invoice_date_formatted', '{year}-01-02 10:00:00');
                 $o->save();
             }}"
        ),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_counterfoil"))
        .args(["adopt", "--from", "wp-overnight", "--execute"])
        .env("DATABASE_URL", &url)
        .env("COUNTERFOIL_TEST_ADOPT_PAUSE", "1500")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("adopt: test pause") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "adopt never paused"
        );
    }
    // Number 5 is another payment's now.
    MariaDb::query(
        &url,
        &format!(
            "INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, gateway, transaction_id, created_at, updated_at) \
             VALUES ('0:{year}', 5, 'reserved', 'payment', 'woocommerce', '999999', UTC_TIMESTAMP(), UTC_TIMESTAMP())"
        ),
    )
    .unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    println!("{rest}");
    assert_eq!(out.status.code(), Some(2), "{rest}");
    assert!(
        rest.contains(&format!("series 0:{year}: 1 number(s)"))
            && rest.contains("number 5 is reserved for woocommerce/999999 in the registry")
            && rest.contains("rolled back"),
        "{rest}"
    );
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers"),
        "1",
        "nothing of the series was written"
    );
    assert_eq!(
        wp.scalar(&format!(
            "SELECT COUNT(*) FROM wp_invoice_sequences WHERE scope_key = '0:{year}'"
        )),
        "0",
        "the series was not created"
    );
}

/// A measurement, not a check (`--ignored`): how long adopt holds one
/// series' row for 100,000 numbers (orders made by SQL, not by WooCommerce),
/// at the default batch size. docs/cli.md quotes it.
#[test]
#[ignore]
fn measure_how_long_a_series_of_100k_numbers_is_held() {
    let wp = WordPress::install_with(MariaDb::shared(), "adopt-100k", None, false).unwrap();
    let url = wp.database_url().to_owned();
    for sql in [
        "INSERT INTO wp_posts (ID, post_author, post_date, post_date_gmt, post_content, post_title, post_excerpt, post_status, \
         to_ping, pinged, post_modified, post_modified_gmt, post_content_filtered, post_type) \
         SELECT 1000000 + seq, 0, '2026-01-02', '2026-01-02', '', '', '', 'wc-completed', '', '', '2026-01-02', '2026-01-02', '', 'shop_order' \
         FROM seq_1_to_100000",
        "INSERT INTO wp_postmeta (post_id, meta_key, meta_value) SELECT 1000000 + seq, '_wcpdf_invoice_number', seq FROM seq_1_to_100000",
        "INSERT INTO wp_postmeta (post_id, meta_key, meta_value) SELECT 1000000 + seq, '_wcpdf_invoice_date_formatted', '2026-01-02 10:00:00' FROM seq_1_to_100000",
    ] {
        MariaDb::query(&url, sql).unwrap();
    }
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_counterfoil"))
        .args(["adopt", "--from", "wp-overnight", "--execute"])
        .env("DATABASE_URL", &url)
        .output()
        .unwrap();
    let text = counterfoil_tests::output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let held: Vec<&str> = text.lines().filter(|l| l.contains("committed")).collect();
    println!(
        "100,000 numbers adopted in {} ms; {held:?}",
        t.elapsed().as_millis()
    );
}
