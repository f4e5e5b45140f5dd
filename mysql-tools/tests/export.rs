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
    let dir = counterfoil_tests::target_dir().join("harness");
    for format in ["csv", "jsonl"] {
        let cli_file = dir.join(format!("export-cli-{}.{format}", std::process::id()));
        let wp_file = dir.join(format!("export-wp-{}.{format}", std::process::id()));
        let out = Command::new(env!("CARGO_BIN_EXE_counterfoil"))
            .args(["export", "--year", "2026", "--format", format, "--output"])
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
                    "echo Counterfoil_Books::export(array('scope' => '', 'year' => 2026, 'status' => ''), '', '', '{format}', '{}');",
                    wp_file.display()
                ),
            )
            .unwrap();
        assert_eq!(n, "6");
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
        }
        let _ = std::fs::remove_file(cli_file);
        let _ = std::fs::remove_file(wp_file);
    }
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
