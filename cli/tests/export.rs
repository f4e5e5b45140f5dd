//! `counterfoil export` (the core's columns and encodings) and the plugin's
//! export (the PHP twin) write the same file, byte for byte, on a real
//! WordPress site, and hold the registry row for row, with a value that needs
//! CSV escaping.

use std::process::Command;

use counterfoil_tests::wordpress::books_site;
use counterfoil_tests::MariaDb;

#[test]
fn the_cli_and_the_plugin_export_the_same_file() {
    let wp = books_site(MariaDb::shared(), "books_export").unwrap();
    // A credit note of the first invoice (5:2026's 9998): kind and refers_to.
    let note = wp
        .eval(
            false,
            "$r = Counterfoil_Credit_Notes::for_refund(array('gateway' => 'stripe', 'refund_id' => 'books-refund', \
             'transaction_id' => 'books-0', 'amount' => '2.50', 'reason' => 'late delivery')); \
             echo is_wp_error($r) ? $r->get_error_message() : $r['number'];",
        )
        .unwrap();
    assert!(note.starts_with("CN-"), "{note}");
    let dir = counterfoil_tests::target_dir().join("harness");
    for format in ["csv", "jsonl"] {
        let cli_file = dir.join(format!("export-cli-{}.{format}", std::process::id()));
        let wp_file = dir.join(format!("export-wp-{}.{format}", std::process::id()));
        let out = Command::new(env!("CARGO_BIN_EXE_counterfoil"))
            .args(["export", "--format", format, "--output"])
            .arg(&cli_file)
            .env("DATABASE_URL", wp.database_url())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let n = wp
            .eval(
                false,
                &format!(
                    "echo Counterfoil_Books::export(array('scope' => '', 'year' => 0, 'status' => ''), '', '', '{format}', '{}');",
                    wp_file.display()
                ),
            )
            .unwrap();
        assert_eq!(n, "7");
        let cli = std::fs::read_to_string(&cli_file).unwrap();
        let plugin = std::fs::read_to_string(&wp_file).unwrap();
        assert_eq!(
            cli, plugin,
            "{format}: the core's and the twin's export differ"
        );
        let data_lines = cli.lines().count() - usize::from(format == "csv");
        assert_eq!(
            data_lines.to_string(),
            wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_numbers")
        );
        if format == "csv" {
            assert!(cli.contains(r#""'=SUM(A1:A9), then ""quoted""""#), "{cli}");
            assert!(cli.contains(",2026-10000,issued,"), "{cli}");
            assert!(
                cli.contains(&format!(",{note},issued,,stripe,books-refund,2.50,EUR,"))
                    && cli.contains(",credit_note,2026-9998\r\n")
                    && cli.contains(",invoice,\r\n"),
                "{cli}"
            );
        }
        let _ = std::fs::remove_file(cli_file);
        let _ = std::fs::remove_file(wp_file);
    }
    // verify covers the credit notes: their series are whole, their posts
    // in the registry; a credit-note post made behind the registry's back is
    // found.
    let verify = || {
        Command::new(env!("CARGO_BIN_EXE_counterfoil"))
            .arg("verify")
            .env("DATABASE_URL", wp.database_url())
            .output()
            .unwrap()
    };
    let out = verify();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!listed.contains("counterfoil_cnote"), "{listed}");
    wp.eval(
        false,
        "wp_insert_post(array('post_type' => 'counterfoil_cnote', 'post_status' => 'publish', 'post_title' => 'CN-forged'));",
    )
    .unwrap();
    let listed = String::from_utf8_lossy(&verify().stdout).into_owned();
    assert!(
        listed.contains("counterfoil_cnote post #")
            && listed.contains("\"CN-forged\" is not in the registry"),
        "{listed}"
    );
}

/// Bad filters are one line on stderr, exit 2, and nothing on stdout.
#[test]
fn bad_export_arguments_are_one_line_and_exit_2() {
    let url = MariaDb::shared().fresh_database("export_bad").unwrap();
    for args in [
        &["export", "--from", "2026-13-01"][..],
        &["export", "--year", "0"][..],
        &["export", "--status", "paid"][..],
        &["export", "--format", "xlsx"][..],
        &["export"][..], // no registry in this database
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_counterfoil"))
            .args(args)
            .env("DATABASE_URL", &url)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The same operations on MariaDB and on PostgreSQL export the same rows
/// (timestamps aside): same columns, order, values and encodings; filters
/// work on both.
#[test]
fn both_engines_export_the_same_rows() {
    use counterfoil_core::{PaymentRef, ScopeKey, Store, StoreConfig};
    use counterfoil_tests::mariadb::block_on;
    use counterfoil_tests::postgres::Postgres;

    let export = |url: &str, extra: &[&str]| -> Vec<serde_json::Value> {
        let out = Command::new(env!("CARGO_BIN_EXE_counterfoil"))
            .args(["--json", "export", "--format", "jsonl"])
            .args(extra)
            .env("DATABASE_URL", url)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                let o = v.as_object_mut().unwrap();
                for stamp in ["created_at", "updated_at"] {
                    let t = o.remove(stamp).unwrap();
                    assert_eq!(t.as_str().unwrap().len(), 19, "YYYY-MM-DD HH:MM:SS: {t}");
                }
                v
            })
            .collect()
    };
    let mut exports = Vec::new();
    for url in [
        MariaDb::shared().fresh_database("export_engines").unwrap(),
        Postgres::shared().fresh_database("export_engines").unwrap(),
    ] {
        block_on(async {
            let mut s = Store::connect(StoreConfig::new(url.as_str()))
                .await
                .unwrap();
            s.ensure_registry_schema().await.unwrap();
            for scope in ["1:2026", "2:2026", "1:2025"] {
                s.initialize(&ScopeKey::new(scope).unwrap(), 1)
                    .await
                    .unwrap();
            }
            let k = ScopeKey::new("1:2026").unwrap();
            s.allocate_recorded(&k, "api").await.unwrap();
            s.allocate_recorded(&k, "api").await.unwrap();
            let p = PaymentRef::new("stripe", "pi_\"1,=x").unwrap();
            s.record_payment(&k, &p, Some("10.00"), Some("EUR"))
                .await
                .unwrap();
            s.allocate_recorded(&ScopeKey::new("2:2026").unwrap(), "api")
                .await
                .unwrap();
            s.allocate_recorded(&ScopeKey::new("1:2025").unwrap(), "api")
                .await
                .unwrap();
        });
        let all = export(&url, &[]);
        assert_eq!(all.len(), 5, "{all:?}");
        assert_eq!(export(&url, &["--year", "2026"]).len(), 4);
        let reserved = export(&url, &["--status", "reserved"]);
        assert_eq!(reserved.len(), 1);
        assert_eq!(reserved[0]["amount"], "10.00");
        assert_eq!(export(&url, &["--scope", "2:2026"]).len(), 1);
        exports.push(all);
    }
    // The rendered number comes from WordPress's posts: none on either here.
    assert_eq!(
        exports[0], exports[1],
        "MariaDB and PostgreSQL export the same rows"
    );
}
