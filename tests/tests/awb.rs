//! Air waybill stock on a real MariaDB and a real PostgreSQL (every test on
//! both engines): blocks imported whole or not at all, issuing in strict
//! serial order from 8 OS processes, the transition table, freezing, expiry,
//! pools kept apart, stale clicks, and the unique index.

use std::process::Command;
use std::time::Duration;

use counterfoil_core::awb::AwbState;
use counterfoil_core::mysql::AwbTransition;
use counterfoil_core::{Engine, Error, Store, StoreConfig};
use counterfoil_tests::engines::{exec, fresh_database, scalar};
use counterfoil_tests::mariadb::block_on;
use counterfoil_tests::workers::run_overlapping;

async fn store(url: &str) -> Store {
    let mut s = Store::connect(StoreConfig::new(url)).await.unwrap();
    s.awb_ensure_schema().await.unwrap();
    s
}

/// The canonical number with this prefix and serial (check digit computed).
fn n(prefix: u16, serial: u32) -> String {
    counterfoil_core::awb::Awb::new(prefix, serial)
        .unwrap()
        .to_string()
}

fn count(url: &str) -> String {
    scalar(url, "SELECT COUNT(*) FROM wp_counterfoil_awb_stock").unwrap()
}

fn refused(r: Result<impl std::fmt::Debug, Error>, needle: &str) {
    match r {
        Err(Error::Refused(m)) => assert!(m.contains(needle), "`{needle}` not in: {m}"),
        other => panic!("expected a refusal containing `{needle}`, got {other:?}"),
    }
}

#[test]
fn a_bad_block_is_refused_whole() {
    bad_block(Engine::MySql);
}

#[test]
fn a_bad_block_is_refused_whole_postgres() {
    bad_block(Engine::Postgres);
}

fn bad_block(engine: Engine) {
    let url = fresh_database(engine, "awbblock");
    block_on(async {
        let mut s = store(&url).await;
        assert_eq!(
            s.awb_import_block("LH", &n(157, 4012101), &n(157, 4012113), None)
                .await
                .unwrap(),
            13
        );
        // A typo in the first or last number, a reversed or mixed block: nothing imported.
        let typo = |p: u16, serial: u32| {
            let good = n(p, serial);
            let last = good.chars().last().unwrap().to_digit(10).unwrap();
            format!("{}{}", &good[..11], (last + 1) % 7)
        };
        for (first, last) in [
            (typo(157, 4012120), n(157, 4012130)),
            (n(157, 4012120), typo(157, 4012130)),
            (n(157, 4012130), n(157, 4012120)),
            (n(157, 4012120), n(176, 4012130)),
        ] {
            let e = s
                .awb_import_block("LH", &first, &last, None)
                .await
                .unwrap_err();
            assert!(e.is_invalid_input(), "{first}..{last}: {e}");
        }
        // Overlapping numbers already in stock: the whole block is refused.
        refused(
            s.awb_import_block("LH", &n(157, 4012110), &n(157, 4012120), None)
                .await,
            "already in stock",
        );
        // Another airline's block cannot go into this pool.
        refused(
            s.awb_import_block("LH", &n(176, 4012101), &n(176, 4012113), None)
                .await,
            "prefix",
        );
    });
    assert_eq!(count(&url), "13");
}

#[test]
fn transitions_freezing_expiry_pools_and_stale_clicks() {
    transitions(Engine::MySql);
}

#[test]
fn transitions_freezing_expiry_pools_and_stale_clicks_postgres() {
    transitions(Engine::Postgres);
}

fn transitions(engine: Engine) {
    let url = fresh_database(engine, "awbstate");
    block_on(async {
        let mut s = store(&url).await;
        // Expired numbers with the lowest serials, then a valid block.
        s.awb_import_block("A", &n(157, 1), &n(157, 4), Some("2020-01-31"))
            .await
            .unwrap();
        s.awb_import_block("A", &n(157, 100), &n(157, 110), None)
            .await
            .unwrap();
        s.awb_import_block("B", &n(176, 1), &n(176, 4), None)
            .await
            .unwrap();
        s.awb_freeze(&n(157, 100), true).await.unwrap();
        // Expired and frozen numbers are never offered: the first issue is serial 101.
        let first = s.awb_issue_next("A", "S1").await.unwrap();
        assert_eq!(first.to_string(), n(157, 101));
        let st = s.awb_status(&n(157, 100)).await.unwrap();
        assert_eq!(
            (st.status, st.frozen),
            (AwbState::Ready, true),
            "freezing keeps the state"
        );
        refused(
            s.awb_transition(
                &n(157, 100),
                AwbState::Assigned,
                Some("S9"),
                None,
                None,
                None,
            )
            .await,
            "frozen",
        );
        refused(
            s.awb_transition(&n(157, 1), AwbState::Assigned, Some("S9"), None, None, None)
                .await,
            "expired",
        );
        // Pool B never draws pool A's numbers, and cannot act on them.
        assert!(s
            .awb_issue_next("B", "S2")
            .await
            .unwrap()
            .to_string()
            .starts_with("176-"));
        refused(
            s.awb_transition(&n(157, 101), AwbState::Issued, None, None, Some("B"), None)
                .await,
            "belongs to pool A",
        );
        // The table: assigned → issued → executed, then nothing.
        s.awb_transition(&n(157, 101), AwbState::Issued, None, None, Some("A"), None)
            .await
            .unwrap();
        s.awb_transition(&n(157, 101), AwbState::Executed, None, None, None, None)
            .await
            .unwrap();
        for to in AwbState::ALL {
            refused(
                s.awb_transition(&n(157, 101), to, Some("S"), Some("r"), None, None)
                    .await,
                "executed numbers are final",
            );
        }
        // Ready cannot jump to executed; void needs a reason.
        refused(
            s.awb_transition(&n(157, 105), AwbState::Executed, None, None, None, None)
                .await,
            "cannot become executed",
        );
        assert!(s
            .awb_transition(&n(157, 105), AwbState::Voided, None, None, None, None)
            .await
            .unwrap_err()
            .is_invalid_input());
        s.awb_transition(
            &n(157, 105),
            AwbState::Voided,
            None,
            Some("torn"),
            None,
            None,
        )
        .await
        .unwrap();
        refused(
            s.awb_transition(&n(157, 105), AwbState::Ready, None, None, None, None)
                .await,
            "cannot become ready",
        );
        // Stale clicks: release/reassign naming the old shipment are no-ops.
        let x = s.awb_issue_next("A", "S3").await.unwrap().to_string();
        assert_eq!(x, n(157, 102));
        assert_eq!(
            s.awb_transition(&x, AwbState::Assigned, Some("S4"), None, None, Some("S3"))
                .await
                .unwrap(),
            AwbTransition::Moved {
                from: AwbState::Assigned,
                to: AwbState::Assigned
            }
        );
        assert_eq!(
            s.awb_transition(&x, AwbState::Assigned, Some("S5"), None, None, Some("S3"))
                .await
                .unwrap(),
            AwbTransition::Unchanged
        );
        assert_eq!(
            s.awb_transition(&x, AwbState::Ready, None, None, None, Some("S3"))
                .await
                .unwrap(),
            AwbTransition::Unchanged
        );
        assert_eq!(
            s.awb_status(&x).await.unwrap().shipment.as_deref(),
            Some("S4")
        );
        s.awb_transition(&x, AwbState::Ready, None, None, None, Some("S4"))
            .await
            .unwrap();
        assert_eq!(s.awb_status(&x).await.unwrap().status, AwbState::Ready);
        // Released, it is offered again first.
        assert_eq!(s.awb_issue_next("A", "S6").await.unwrap().to_string(), x);
        let report = s.awb_report("A").await.unwrap();
        assert_eq!((report.frozen, report.expired), (1, 4));
    });
    // Released assignments keep their history; one live assignment per number at most.
    assert_eq!(
        scalar(&url, "SELECT MAX(c) FROM (SELECT COUNT(*) c FROM wp_counterfoil_awb_assignments WHERE live = 1 GROUP BY stock_id) t"),
        Some("1".into())
    );
}

#[test]
fn the_unique_index_refusal_reads_like_the_application_check() {
    unique_index(Engine::MySql);
}

#[test]
fn the_unique_index_refusal_reads_like_the_application_check_postgres() {
    unique_index(Engine::Postgres);
}

fn unique_index(engine: Engine) {
    let url = fresh_database(engine, "awbunique");
    block_on(async {
        let mut s = store(&url).await;
        s.awb_import_block("A", &n(157, 1), &n(157, 2), None)
            .await
            .unwrap();
    });
    // A live assignment that the status does not show (written behind the service's back).
    let ghost = "INSERT INTO wp_counterfoil_awb_assignments (stock_id, shipment, live, assigned_at) SELECT id, 'ghost', 1, NOW() FROM wp_counterfoil_awb_stock WHERE serial = 1";
    exec(&url, ghost);
    block_on(async {
        let mut s = store(&url).await;
        refused(
            s.awb_issue_next("A", "S1").await,
            "already assigned to another shipment",
        );
        assert_eq!(
            s.awb_status(&n(157, 1)).await.unwrap().status,
            AwbState::Ready,
            "nothing changed"
        );
    });
}

#[test]
fn eight_processes_issue_in_strict_serial_order_skipping_nothing() {
    eight_processes(Engine::MySql);
}

#[test]
fn eight_processes_issue_in_strict_serial_order_skipping_nothing_postgres() {
    eight_processes(Engine::Postgres);
}

fn eight_processes(engine: Engine) {
    let url = fresh_database(engine, "awb8");
    block_on(async {
        let mut s = store(&url).await;
        s.awb_import_block("P", &n(157, 1_000_000), &n(157, 1_000_300), None)
            .await
            .unwrap();
        for frozen in [1_000_005, 1_000_010] {
            s.awb_freeze(&n(157, frozen), true).await.unwrap();
        }
    });
    let commands = (0..8)
        .map(|_| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_awb-worker"));
            c.args([url.as_str(), "P", "25"]);
            c
        })
        .collect();
    let finished = run_overlapping(commands, Duration::from_secs(300)).unwrap();
    // Each process saw its serials strictly increase.
    for f in &finished {
        let serials: Vec<u64> = f
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("a ")?.split(' ').next()?.parse().ok())
            .collect();
        assert_eq!(serials.len(), 25);
        assert!(serials.windows(2).all(|w| w[0] < w[1]), "{serials:?}");
    }
    // In commit order (assignment ids), serials strictly increase, and the
    // 200 issued are exactly the 200 lowest ready, unfrozen serials.
    let in_order = match engine {
        Engine::MySql => "SELECT GROUP_CONCAT(s.serial ORDER BY a.id) FROM wp_counterfoil_awb_assignments a JOIN wp_counterfoil_awb_stock s ON s.id = a.stock_id",
        Engine::Postgres => "SELECT string_agg(s.serial::text, ',' ORDER BY a.id) FROM wp_counterfoil_awb_assignments a JOIN wp_counterfoil_awb_stock s ON s.id = a.stock_id",
    };
    let serials: Vec<u64> = scalar(&url, in_order)
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();
    assert_eq!(serials.len(), 200);
    assert!(
        serials.windows(2).all(|w| w[0] < w[1]),
        "strictly increasing in commit order"
    );
    let expect: Vec<u64> = (1_000_000..1_000_300)
        .filter(|s| *s != 1_000_005 && *s != 1_000_010)
        .take(200)
        .collect();
    assert_eq!(serials, expect, "no ready number skipped");
}
