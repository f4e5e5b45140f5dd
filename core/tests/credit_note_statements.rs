//! The credit-note statements the pure-PHP twin must send as they are
//! (issue 46): `tests/vectors/credit_note_statements.json` is the core's
//! list for the prefix `wp_` (`mysql::sql_credit::CreditNoteSql::named`);
//! the twin's test (`VectorsTest::test_credit_note_statements`) compares
//! `Counterfoil_Php_Backend::credit_note_statements('wp_')` with it. After a
//! change of a statement, write the file anew with
//! `COUNTERFOIL_WRITE_VECTORS=1 cargo test -p counterfoil-core --test
//! credit_note_statements`.

#![cfg(feature = "mysql")]

use counterfoil_core::mysql::sql_credit::CreditNoteSql;
use counterfoil_core::TablePrefix;

#[test]
fn credit_note_statements() {
    let ours: serde_json::Map<String, serde_json::Value> =
        CreditNoteSql::new(&TablePrefix::new("wp_").unwrap())
            .named()
            .into_iter()
            .map(|(name, text)| (name.to_owned(), serde_json::Value::String(text)))
            .collect();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/credit_note_statements.json"
    );
    if std::env::var_os("COUNTERFOIL_WRITE_VECTORS").is_some() {
        let text = serde_json::to_string_pretty(&ours).unwrap() + "\n";
        std::fs::write(path, text).unwrap();
    }
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(
        file.as_object().unwrap(),
        &ours,
        "tests/vectors/credit_note_statements.json differs from the core's statements: \
         COUNTERFOIL_WRITE_VECTORS=1 cargo test -p counterfoil-core --test credit_note_statements"
    );
    assert_eq!(ours.len(), 5);
}
