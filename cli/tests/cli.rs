//! The `counterfoil series` commands against a real MariaDB (and, for
//! `series` and `stress`, a real PostgreSQL): outputs, exit codes, one-line
//! errors, and nothing written on bad input.

use std::process::{Command, Output};

use counterfoil_tests::postgres::Postgres;
use counterfoil_tests::MariaDb;

const BIN: &str = env!("CARGO_BIN_EXE_counterfoil");

fn run(url: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("DATABASE_URL", url)
        .output()
        .expect("run counterfoil")
}

fn ok(url: &str, args: &[&str]) -> String {
    let out = run(url, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail with exit 2 and one line on stderr.
fn fails(url: &str, args: &[&str]) -> String {
    let out = run(url, args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: one line, got {stderr:?}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    stderr
}

fn snapshot(url: &str) -> Vec<Vec<Option<String>>> {
    MariaDb::query(
        url,
        "SELECT scope_key, current_value, start_value FROM wp_invoice_sequences ORDER BY scope_key",
    )
    .unwrap()
}

#[test]
fn the_articles_semantics_through_the_cli() {
    articles_semantics(&MariaDb::shared().fresh_database("cli").unwrap());
}

#[test]
fn the_articles_semantics_through_the_cli_on_postgres() {
    articles_semantics(&Postgres::shared().fresh_database("cli").unwrap());
}

/// The same on a PostgreSQL primary with a synchronous standby, named by
/// one multi-host URL with the standby first (issue 26).
#[test]
fn the_articles_semantics_through_the_cli_on_a_postgres_node_list() {
    let (primary, standby) = Postgres::start_cluster("cli", true).unwrap();
    let single = primary.fresh_database("cli_list").unwrap();
    let db = single.rsplit('/').next().unwrap();
    standby.wait_for_database(db).unwrap();
    articles_semantics(&format!(
        "postgres://cf:cf@127.0.0.1:{},127.0.0.1:{}/{db}?target_session_attrs=read-write",
        standby.port(),
        primary.port()
    ));
}

fn articles_semantics(url: &str) {
    let url = url.to_owned();
    let out = ok(&url, &["series", "init", "42:2019", "--start", "2"]);
    assert!(out.contains("created"), "{out}");
    assert_eq!(
        ok(
            &url,
            &[
                "series",
                "allocate",
                "42:2019",
                "--format",
                "{year}-{seq:04}"
            ]
        ),
        "2019-0002\n"
    );
    assert_eq!(
        ok(
            &url,
            &[
                "series",
                "allocate",
                "42:2019",
                "--format",
                "{year}-{seq:04}"
            ]
        ),
        "2019-0003\n"
    );
    let out = ok(&url, &["series", "init", "42:2019", "--start", "2"]);
    assert!(out.contains("already exists"), "{out}");
    assert!(ok(&url, &["series", "advance", "42:2019", "--next", "200"]).contains("now 200"));
    assert_eq!(ok(&url, &["series", "allocate", "42:2019"]), "200\n");
    let out = ok(&url, &["series", "advance", "42:2019", "--next", "50"]);
    assert!(
        out.contains("unchanged") && out.contains("never moves down"),
        "{out}"
    );
    assert_eq!(
        ok(
            &url,
            &[
                "series",
                "allocate",
                "42:2019",
                "--count",
                "3",
                "--format",
                "INV-{seq:06}"
            ]
        ),
        "INV-000201\nINV-000202\nINV-000203\n"
    );
    let show = ok(&url, &["series", "show", "42:2019"]);
    assert!(
        show.contains("current 203") && show.contains("next    204") && show.contains("start   2"),
        "{show}"
    );
    let json = ok(&url, &["--json", "series", "show", "42:2019"]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["next"], 204);
    let json = ok(
        &url,
        &["series", "allocate", "42:2019", "--json", "--count", "2"],
    );
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(
        (v["first"].as_u64(), v["last"].as_u64()),
        (Some(204), Some(205))
    );
}

/// `series init --plan continue` starts right after the issuer's latest
/// earlier year; `create` at --start; another issuer is never continued.
#[test]
fn init_plans_create_and_continue() {
    init_plans(&MariaDb::shared().fresh_database("cli_plans").unwrap());
}

#[test]
fn init_plans_create_and_continue_on_postgres() {
    init_plans(&Postgres::shared().fresh_database("cli_plans").unwrap());
}

/// On PostgreSQL: `stress` checks its own numbers; `verify` judges the
/// registry (clean, then a planted gap, a counter behind the registry, a
/// stale reservation, a void without a reason: exit 1 naming each); the
/// commands that read a WordPress site's MySQL database say plainly that
/// they do not run there (exit 2, one line, nothing written).
#[test]
fn postgres_stress_and_the_commands_that_are_mysql_only() {
    let url = Postgres::shared().fresh_database("cli_pg").unwrap();
    ok(&url, &["series", "init", "s:2026", "--start", "1"]);
    let json = ok(
        &url,
        &[
            "--json",
            "stress",
            "s:2026",
            "--connections",
            "8",
            "--seconds",
            "1",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert!(v["allocations"].as_u64().unwrap() > 50, "{v}");
    assert_eq!(v["duplicates"], 0, "{v}");
    // verify: a clean registry, then planted faults.
    let url2 = Postgres::shared().fresh_database("cli_pg_verify").unwrap();
    counterfoil_tests::mariadb::block_on(async {
        use counterfoil_core::{PaymentRef, ScopeKey, Store, StoreConfig};
        let mut s = Store::connect(StoreConfig::new(url2.as_str()))
            .await
            .unwrap();
        s.ensure_registry_schema().await.unwrap();
        for scope in ["a:2026", "b:2026"] {
            let k = ScopeKey::new(scope).unwrap();
            s.initialize(&k, 1).await.unwrap();
            for _ in 0..3 {
                s.allocate_recorded(&k, "api").await.unwrap();
            }
        }
        s.record_payment(
            &ScopeKey::new("b:2026").unwrap(),
            &PaymentRef::new("stripe", "pi_1").unwrap(),
            None,
            None,
        )
        .await
        .unwrap();
    });
    let clean = ok(&url2, &["verify"]);
    assert!(
        clean.contains("all invariants hold (2 series, 7 chain entries checked)"),
        "{clean}"
    );
    let db = counterfoil_tests::MariaDb::database_name(&url2);
    Postgres::shared()
        .exec(
            &db,
            "UPDATE wp_invoice_sequences SET current_value = 5 WHERE scope_key = 'a:2026';\
             UPDATE wp_counterfoil_numbers SET status = 'void', reason = NULL WHERE scope_key = 'a:2026' AND number = 2;\
             UPDATE wp_counterfoil_numbers SET status = 'reserved', updated_at = updated_at - interval '1 hour' WHERE scope_key = 'a:2026' AND number = 3;\
             UPDATE wp_counterfoil_numbers SET status = 'unconfirmed', updated_at = updated_at - interval '1 hour' WHERE scope_key = 'b:2026' AND number = 1;\
             UPDATE wp_invoice_sequences SET current_value = 2 WHERE scope_key = 'b:2026'",
        )
        .unwrap();
    let out = run(&url2, &["verify"]);
    assert_eq!(out.status.code(), Some(1), "findings");
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "series a:2026: number(s) 4–5 are neither issued nor void",
        "series a:2026: number 2 is void without a reason",
        "series a:2026: number 3 has been reserved for 60 minutes",
        "series b:2026: number 1 is unconfirmed (60 minutes)",
        "series b:2026: counter 2 is below its highest registry number 4",
    ] {
        assert!(text.contains(needle), "`{needle}` not in:\n{text}");
    }
    for args in [&["audit"][..], &["adopt"][..]] {
        let err = fails(&url, args);
        assert!(err.contains("PostgreSQL"), "{args:?}: {err}");
    }
}

fn init_plans(url: &str) {
    let url = url.to_owned();
    ok(&url, &["series", "init", "42:2025", "--start", "90"]);
    ok(&url, &["series", "init", "42:2026", "--start", "1"]);
    ok(&url, &["series", "allocate", "42:2026", "--count", "153"]);
    ok(&url, &["series", "init", "420:2026", "--start", "5000"]);
    let out = ok(&url, &["series", "init", "42:2027", "--plan", "continue"]);
    assert!(
        out.contains("first number will be 154") && out.contains("153"),
        "{out}"
    );
    assert_eq!(ok(&url, &["series", "allocate", "42:2027"]), "154\n");
    // No earlier year of this issuer: --start.
    let json = ok(
        &url,
        &[
            "--json", "series", "init", "7:2027", "--plan", "continue", "--start", "10",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["start"].as_u64()),
        (Some("created"), Some(10))
    );
    assert!(v["continued_from"].is_null(), "{v}");
    // create ignores the previous year; an existing series is never reset.
    let out = ok(
        &url,
        &[
            "series", "init", "42:2028", "--plan", "create", "--start", "3",
        ],
    );
    assert!(out.contains("first number will be 3"), "{out}");
    let out = ok(&url, &["series", "init", "42:2027", "--plan", "continue"]);
    assert!(out.contains("already exists"), "{out}");
    assert_eq!(ok(&url, &["series", "allocate", "42:2027"]), "155\n");
    fails(&url, &["series", "init", "42:2029", "--plan", "hold"]);
}

#[test]
fn bad_input_is_one_clear_line_exit_2_and_nothing_written() {
    let url = MariaDb::shared().fresh_database("clibad").unwrap();
    ok(&url, &["series", "init", "s", "--start", "10"]);
    let before = snapshot(&url);
    let cases: &[(&[&str], &str)] = &[
        (&["series", "init", "t", "--start", "0"], "at least 1"),
        (&["series", "init", "t", "--start", "-1"], "1 or more"),
        (
            &["series", "init", "t", "--start", "18446744073709551616"],
            "above the largest",
        ),
        (&["series", "init", "t", "--start", "12abc"], "whole number"),
        (&["series", "init", "", "--start", "1"], "empty"),
        (
            &["series", "init", &"x".repeat(192), "--start", "1"],
            "192 bytes",
        ),
        (
            &["series", "init", "a\u{7}b", "--start", "1"],
            "control character",
        ),
        (&["series", "advance", "s", "--next", "0"], "at least 1"),
        (&["series", "allocate", "s", "--count", "0"], "1 to 100000"),
        (
            &["series", "allocate", "s", "--count", "100001"],
            "1 to 100000",
        ),
        (
            &["series", "allocate", "s", "--format", "{year}-{sequence}"],
            "byte 7",
        ),
        (
            &[
                "series", "allocate", "s", "--format", "{seq}", "--year", "0",
            ],
            "year 0",
        ),
        (&["series", "allocate", "nope"], "does not exist"),
        (&["series", "show", "nope"], "does not exist"),
        (&["series", "frobnicate"], "frobnicate"),
        (
            &["--table-prefix", "wp`;", "series", "show", "s"],
            "table prefix",
        ),
    ];
    for (args, expect) in cases {
        let err = fails(&url, args);
        assert!(
            err.contains(expect),
            "{args:?}: expected `{expect}` in {err:?}"
        );
    }
    assert_eq!(snapshot(&url), before, "nothing was written");
    assert_eq!(ok(&url, &["series", "allocate", "s"]), "10\n");
}

#[test]
fn connection_problems_are_one_line_exit_2() {
    let err = fails(
        "mysql://cf:cf@127.0.0.1:1/nodb",
        &["--timeout-ms", "1000", "series", "show", "s"],
    );
    assert!(err.contains("unavailable"), "{err}");
    let err = fails("not a url", &["series", "show", "s"]);
    assert!(err.contains("database URL"), "{err}");
    let out = Command::new(BIN)
        .args(["series", "show", "s"])
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("DATABASE_URL"));
    let url = MariaDb::shared().url("missing_db_xyz");
    let err = fails(&url, &["series", "show", "s"]);
    assert!(err.contains("cannot connect"), "{err}");
}

#[test]
fn hostile_scope_keys_round_trip_through_the_cli() {
    let url = MariaDb::shared().fresh_database("clihostile").unwrap();
    let k = "x'; DROP TABLE wp_invoice_sequences; -- \\";
    ok(&url, &["series", "init", k, "--start", "7"]);
    assert_eq!(ok(&url, &["series", "allocate", k]), "7\n");
    let rows = snapshot(&url);
    assert_eq!(rows[0][0].as_deref(), Some(k));
}

#[test]
fn awb_commands() {
    awb_commands_on(&MariaDb::shared().fresh_database("cliawb").unwrap());
}

#[test]
fn awb_commands_on_postgres() {
    awb_commands_on(&Postgres::shared().fresh_database("cliawb").unwrap());
}

fn awb_commands_on(url: &str) {
    let url = url.to_owned();
    let stock_table_exists = || {
        if url.starts_with("postgres") {
            Postgres::scalar(&url, "SELECT to_regclass('wp_counterfoil_awb_stock')::text")
                .unwrap()
                .is_some()
        } else {
            !MariaDb::query(&url, "SHOW TABLES LIKE 'wp_counterfoil_awb_stock'")
                .unwrap()
                .is_empty()
        }
    };
    // validate: exit 0 when all are valid, 1 with the reason otherwise.
    let out = ok(
        &url,
        &[
            "awb",
            "validate",
            "157-40121012",
            "157-4012 1012",
            "15740121012",
        ],
    );
    assert_eq!(out.matches("157-40121012 valid").count(), 3, "{out}");
    let bad = run(&url, &["awb", "validate", "157-40121012", "157-40121013"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("mod 7 is 2, but the number ends in 3"));
    // import-block: a plan without --execute, nothing written.
    let plan = ok(
        &url,
        &[
            "awb",
            "import-block",
            "--pool",
            "LH",
            "--first",
            "157-40121012",
            "--last",
            "157-40121060",
        ],
    );
    assert!(
        plan.contains("import 6 numbers") && plan.contains("dry run"),
        "{plan}"
    );
    assert!(!stock_table_exists(), "a dry run writes nothing");
    fails(
        &url,
        &[
            "awb",
            "import-block",
            "--pool",
            "LH",
            "--first",
            "157-40121013",
            "--last",
            "157-40121060",
            "--execute",
        ],
    );
    let done = ok(
        &url,
        &[
            "awb",
            "import-block",
            "--pool",
            "LH",
            "--first",
            "157-40121012",
            "--last",
            "157-40121060",
            "--execute",
        ],
    );
    assert!(done.contains("imported 6"), "{done}");
    // issue in serial order, status, void, transitions, report.
    assert_eq!(
        ok(&url, &["awb", "issue", "--pool", "LH", "--shipment", "S1"]),
        "157-40121012\n"
    );
    assert_eq!(
        ok(&url, &["awb", "issue", "--pool", "LH", "--shipment", "S2"]),
        "157-40121023\n"
    );
    assert!(ok(&url, &["awb", "status", "157-4012 1023"]).contains("shipment S2"));
    ok(
        &url,
        &["awb", "transition", "157-40121012", "--to", "issued"],
    );
    ok(
        &url,
        &["awb", "transition", "157-40121012", "--to", "executed"],
    );
    let err = fails(
        &url,
        &["awb", "transition", "157-40121012", "--to", "ready"],
    );
    assert!(err.contains("executed numbers are final"), "{err}");
    let err = fails(&url, &["awb", "void", "157-40121034", "--reason", ""]);
    assert!(err.contains("reason"), "{err}");
    assert!(ok(&url, &["awb", "void", "157-40121034", "--reason", "torn"]).contains("voided"));
    ok(&url, &["awb", "freeze", "157-40121045"]);
    assert_eq!(
        ok(&url, &["awb", "issue", "--pool", "LH", "--shipment", "S3"]),
        "157-40121056\n"
    );
    let report = ok(&url, &["--json", "awb", "report", "--pool", "LH"]);
    let v: serde_json::Value = serde_json::from_str(report.trim()).unwrap();
    assert_eq!(
        (v["frozen"].as_u64(), v["available"].as_u64()),
        (Some(1), Some(1)),
        "{v}"
    );
    assert_eq!(
        ok(&url, &["awb", "issue", "--pool", "LH", "--shipment", "S4"]),
        "157-40121060\n"
    );
    let err = fails(&url, &["awb", "issue", "--pool", "LH", "--shipment", "S5"]);
    assert!(err.contains("no ready number"), "{err}");
}

/// A password on the command line (`--database-url`, before or after the
/// command, `=` or not) gets one warning on stderr naming DATABASE_URL,
/// without the password; the same URL from DATABASE_URL, or a URL without
/// a password, gets none. The command runs either way.
#[test]
fn a_password_in_database_url_is_warned_about_and_never_printed() {
    let warning = "pass the URL in the environment variable DATABASE_URL";
    let run_with = |args: &[&str], env: Option<&str>| {
        let mut cmd = Command::new(BIN);
        cmd.args(args).env_remove("DATABASE_URL");
        if let Some(url) = env {
            cmd.env("DATABASE_URL", url);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let dead = "mysql://cf:hunter2-not-shown@127.0.0.1:1/nodb";
    let flag_eq = format!("--database-url={dead}");
    for args in [
        &[
            "--timeout-ms",
            "1000",
            "--database-url",
            dead,
            "series",
            "show",
            "s",
        ][..],
        &["--timeout-ms", "1000", "series", "show", "s", &flag_eq][..],
    ] {
        let (code, _, stderr) = run_with(args, None);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(
            stderr.lines().count(),
            2,
            "the warning, then the error: {stderr}"
        );
        assert!(stderr.lines().next().unwrap().contains(warning), "{stderr}");
        assert!(!stderr.contains("hunter2"), "never the password: {stderr}");
    }
    // From DATABASE_URL: no warning.
    let (code, _, stderr) = run_with(&["--timeout-ms", "1000", "series", "show", "s"], Some(dead));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(!stderr.contains(warning), "{stderr}");
    // No password in the URL: no warning.
    let (_, _, stderr) = run_with(
        &[
            "--timeout-ms",
            "1000",
            "--database-url",
            "mysql://cf@127.0.0.1:1/nodb",
            "series",
            "show",
            "s",
        ],
        None,
    );
    assert!(!stderr.contains(warning), "{stderr}");
    // A working URL with a password on the command line: warned, and run.
    let url = MariaDb::shared().fresh_database("cli_password").unwrap();
    let (code, stdout, stderr) = run_with(
        &[
            "--database-url",
            &url,
            "series",
            "init",
            "pw:2026",
            "--start",
            "7",
        ],
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains(warning), "{stderr}");
    assert!(
        !stdout.contains(warning),
        "stdout stays the result: {stdout}"
    );
    assert!(
        ok(&url, &["series", "show", "pw:2026"]).contains('7'),
        "the series exists"
    );
}
