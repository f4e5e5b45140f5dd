//! The tamper-evident chain (issue 28): the books, written by the plugin
//! through either backend (the PHP twin and the extension over the core)
//! and by the core on both engines, verify clean; each edit made straight in
//! the database — an issued invoice's amount changed, a void turned back
//! into issued, the last number deleted with the counter lowered, a number
//! written into the registry, the chain's start moved, an entry rewritten
//! with its payment — is named by `counterfoil verify` (exit 1);
//! a chain cut off at its end and its head set back is found only against
//! the heads kept earlier (`--heads`, then `--against FILE`); an invoice's
//! post edited alone (its amount, currency, number, series or title,
//! trashed, gone) is named by check 6.
//!
//! Before the chain, `verify` called every one of these books clean.

use std::process::{Command, Output};

use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn verify(url: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_counterfoil"))
        .arg("verify")
        .args(extra)
        .env("DATABASE_URL", url)
        .output()
        .unwrap()
}

/// Runs `statements` (separated by `; `) one by one.
fn run(url: &str, statements: &str) {
    for statement in statements.split("; ") {
        MariaDb::query(url, statement).unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
}

fn text(out: &Output) -> String {
    counterfoil_tests::output_text(out)
}

/// Verify finds `expected` (exit 1), and is clean again once `undo` ran.
fn finds(wp: &WordPress, edit: &str, undo: &str, expected: &str) {
    let url = wp.database_url();
    run(url, edit);
    let out = verify(url, &[]);
    assert_eq!(out.status.code(), Some(1), "{edit}: {}", text(&out));
    assert!(text(&out).contains(expected), "{edit}: {}", text(&out));
    run(url, undo);
    let out = verify(url, &[]);
    assert_eq!(out.status.code(), Some(0), "after {undo}: {}", text(&out));
}

fn books_with_edits(extension: bool) {
    let name = if extension { "chain_ext" } else { "chain_php" };
    let wp = WordPress::install(MariaDb::shared(), name, None).unwrap();
    wp.eval(
        extension,
        "initialize_invoice_sequence(5, 2026, 1);
         foreach (array('10.00', '12.50', '7.25', '30.00') as $i => $amount) {
             $p = counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => \"chain-$i\",
                 'user_id' => 5, 'year' => 2026, 'amount' => $amount, 'currency' => 'EUR'));
             if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }
         }
         $v = counterfoil_void_number('5:2026', 2, 'customer cancelled');
         if (is_wp_error($v)) { echo $v->get_error_message(); exit(1); }",
    )
    .unwrap();
    let url = wp.database_url().to_owned();
    // Four numbers issued, one voided: five entries, linked.
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_chain WHERE scope_key = '5:2026'"),
        "5"
    );
    let out = verify(&url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("5 chain entries checked"),
        "{}",
        text(&out)
    );

    // The heads an accountant keeps with the month's export.
    let heads = verify(&url, &["--heads"]);
    assert_eq!(heads.status.code(), Some(0), "{}", text(&heads));
    let kept = String::from_utf8(heads.stdout).unwrap();
    let head: serde_json::Value = serde_json::from_str(kept.lines().next().unwrap()).unwrap();
    assert_eq!(head["scope_key"], "5:2026");
    assert_eq!(head["seq"], 5);
    assert_eq!(head["number"], 2);
    let file = counterfoil_tests::target_dir()
        .join("harness")
        .join(format!("heads-{name}-{}.jsonl", std::process::id()));
    std::fs::write(&file, &kept).unwrap();
    let against = ["--against", file.to_str().unwrap()];
    assert_eq!(verify(&url, &against).status.code(), Some(0));

    // An issued invoice's amount changed.
    finds(
        &wp,
        "UPDATE wp_counterfoil_payments SET amount = '99999.00' WHERE transaction_id = 'chain-0'",
        "UPDATE wp_counterfoil_payments SET amount = '10.00' WHERE transaction_id = 'chain-0'",
        "series 5:2026: number 1 belongs to a payment whose gateway, transaction, amount or currency differ",
    );
    // A void turned back into issued.
    finds(
        &wp,
        "UPDATE wp_counterfoil_numbers SET status = 'issued', reason = NULL WHERE scope_key = '5:2026' AND number = 2",
        "UPDATE wp_counterfoil_numbers SET status = 'void', reason = 'customer cancelled' WHERE scope_key = '5:2026' AND number = 2",
        "number 2 was voided in the chain but the registry says it is not void",
    );
    // The last number deleted, the counter lowered.
    let row = "SELECT * FROM wp_counterfoil_numbers WHERE scope_key = '5:2026' AND number = 4";
    run(&url, &format!("CREATE TABLE kept AS {row}"));
    finds(
        &wp,
        "DELETE FROM wp_counterfoil_numbers WHERE scope_key = '5:2026' AND number = 4; \
         UPDATE wp_invoice_sequences SET current_value = 3 WHERE scope_key = '5:2026'",
        "INSERT INTO wp_counterfoil_numbers SELECT * FROM kept; \
         UPDATE wp_invoice_sequences SET current_value = 4 WHERE scope_key = '5:2026'",
        "number 4 is in the chain but not in the registry",
    );
    // A number written straight into the registry, its counter moved on.
    finds(
        &wp,
        "INSERT INTO wp_counterfoil_numbers (scope_key, number, status, source, created_at, updated_at) \
         VALUES ('5:2026', 5, 'issued', 'api', UTC_TIMESTAMP(), UTC_TIMESTAMP()); \
         UPDATE wp_invoice_sequences SET current_value = 5 WHERE scope_key = '5:2026'",
        "DELETE FROM wp_counterfoil_numbers WHERE scope_key = '5:2026' AND number = 5; \
         UPDATE wp_invoice_sequences SET current_value = 4 WHERE scope_key = '5:2026'",
        "series 5:2026: number 5 is in the registry but the chain never issued it",
    );
    // The chain's start moved up, to pass its numbers off as older.
    finds(
        &wp,
        "UPDATE wp_invoice_sequences SET chain_from = 9 WHERE scope_key = '5:2026'",
        "UPDATE wp_invoice_sequences SET chain_from = 1 WHERE scope_key = '5:2026'",
        "series 5:2026: the row says the chain begins at number 9, the chain at 1",
    );
    // The entry rewritten together with its payment: the hash no longer holds.
    finds(
        &wp,
        "UPDATE wp_counterfoil_payments SET amount = '1.00' WHERE transaction_id = 'chain-2'; \
         UPDATE wp_counterfoil_chain SET amount = '1.00' WHERE scope_key = '5:2026' AND number = 3",
        "UPDATE wp_counterfoil_payments SET amount = '7.25' WHERE transaction_id = 'chain-2'; \
         UPDATE wp_counterfoil_chain SET amount = '7.25' WHERE scope_key = '5:2026' AND number = 3",
        "the chain breaks at number 3 (position 3): the entry no longer gives its hash",
    );
    // The invoice's post edited alone (the books untouched): its amount,
    // its currency, its number; trashed; deleted. Before check 6 each of
    // these passed.
    let post = wp.scalar(
        "SELECT post_id FROM wp_counterfoil_numbers WHERE scope_key = '5:2026' AND number = 1",
    );
    let which = format!("series 5:2026: number 1 is issued to post #{post}");
    let meta = |key: &str, value: &str| {
        format!(
            "UPDATE wp_postmeta SET meta_value = '{value}' WHERE post_id = {post} AND meta_key = '_counterfoil_{key}'"
        )
    };
    finds(
        &wp,
        &meta("amount", "1.00"),
        &meta("amount", "10.00"),
        &format!("{which}, which shows 1.00 EUR or another gateway or transaction than its payment (10.00 EUR)"),
    );
    finds(
        &wp,
        &meta("currency", "USD"),
        &meta("currency", "EUR"),
        &format!("{which}, which shows 10.00 USD"),
    );
    finds(
        &wp,
        &meta("number", "7"),
        &meta("number", "1"),
        &format!("{which}, which says it is number 7 of series 5:2026"),
    );
    finds(
        &wp,
        &meta("scope_key", "6:2026"),
        &meta("scope_key", "5:2026"),
        &format!("{which}, which says it is number 1 of series 6:2026"),
    );
    finds(
        &wp,
        &format!("UPDATE wp_posts SET post_title = '2026-0007' WHERE ID = {post}"),
        &format!("UPDATE wp_posts SET post_title = '2026-0001' WHERE ID = {post}"),
        &format!("{which}, whose title \"2026-0007\" does not show that number"),
    );
    finds(
        &wp,
        &format!("UPDATE wp_posts SET post_status = 'trash' WHERE ID = {post}"),
        &format!("UPDATE wp_posts SET post_status = 'publish' WHERE ID = {post}"),
        &format!("{which}, whose status is `trash`"),
    );
    finds(
        &wp,
        &format!("UPDATE wp_posts SET ID = 999999 WHERE ID = {post}"),
        &format!("UPDATE wp_posts SET ID = {post} WHERE ID = 999999"),
        &format!("{which}, which does not exist"),
    );

    // The end cut off with care: the last number, its payment, its two
    // entries (issued 4, void 2 came after it) gone, the head and counter set
    // back. The chain that is left holds, so only the kept heads tell.
    let prior =
        wp.scalar("SELECT hash FROM wp_counterfoil_chain WHERE scope_key = '5:2026' AND seq = 3");
    run(
        &url,
        &format!(
            "DELETE FROM wp_counterfoil_numbers WHERE scope_key = '5:2026' AND number = 4; \
             DELETE FROM wp_counterfoil_payments WHERE transaction_id = 'chain-3'; \
             UPDATE wp_counterfoil_numbers SET status = 'issued', reason = NULL WHERE scope_key = '5:2026' AND number = 2; \
             DELETE FROM wp_counterfoil_chain WHERE scope_key = '5:2026' AND seq > 3; \
             UPDATE wp_invoice_sequences SET current_value = 3, chain_seq = 3, chain_head = '{prior}' WHERE scope_key = '5:2026'; \
             DELETE FROM wp_posts WHERE post_type = 'counterfoil_invoice' AND post_title LIKE '%0004'"
        ),
    );
    let out = verify(&url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = verify(&url, &against);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("series 5:2026: the head kept at position 5 (number 2, hash"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("is gone: the chain was cut off"),
        "{}",
        text(&out)
    );
    let _ = std::fs::remove_file(file);
}

#[test]
fn verify_names_each_edit_of_the_books_pure_php_backend() {
    books_with_edits(false);
}

#[test]
fn verify_names_each_edit_of_the_books_extension() {
    books_with_edits(true);
}

/// The core on PostgreSQL chains its books too (on MariaDB the extension
/// test above runs the core), and verify reads them there.
#[test]
fn the_core_chains_its_books_on_postgresql() {
    use counterfoil_core::{PaymentRef, ScopeKey, Store, StoreConfig};
    use counterfoil_tests::mariadb::block_on;
    use counterfoil_tests::postgres::Postgres;

    {
        let url = Postgres::shared().fresh_database("chain_pg").unwrap();
        let amount_edit = "UPDATE \"wp_counterfoil_payments\" SET amount = '1.00'";
        block_on(async {
            let mut s = Store::connect(StoreConfig::new(url.as_str()))
                .await
                .unwrap();
            s.ensure_registry_schema().await.unwrap();
            let k = ScopeKey::new("1:2026").unwrap();
            s.initialize(&k, 1).await.unwrap();
            s.allocate_recorded(&k, "api").await.unwrap();
            let p = PaymentRef::new("stripe", "pi_1").unwrap();
            s.record_payment(&k, &p, Some("10.00"), Some("EUR"))
                .await
                .unwrap();
            s.allocate_recorded(&k, "api").await.unwrap();
        });
        let out = verify(&url, &[]);
        assert_eq!(out.status.code(), Some(0), "{url}: {}", text(&out));
        assert!(
            text(&out).contains("3 chain entries checked"),
            "{}",
            text(&out)
        );
        let heads = verify(&url, &["--heads"]);
        let line = String::from_utf8(heads.stdout).unwrap();
        assert!(line.contains("\"seq\":3"), "{line}");
        let db = url.rsplit('/').next().unwrap().split('?').next().unwrap();
        Postgres::shared().exec(db, amount_edit).unwrap();
        let out = verify(&url, &[]);
        assert_eq!(out.status.code(), Some(1), "{url}: {}", text(&out));
        assert!(
            text(&out).contains("series 1:2026: number 2 belongs to a payment"),
            "{}",
            text(&out)
        );
    }
}
