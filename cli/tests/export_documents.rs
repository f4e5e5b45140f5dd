//! `counterfoil export --format documents` against a real WordPress site:
//! the period's e-invoices into a folder (the same bytes the site gives)
//! and into a zip (the same archive twice), an invoice of the period with
//! no e-invoice yet listed as a finding (exit 1), a void one not, and a
//! folder that is not empty refused (exit 2). On disk: a new folder 0700,
//! files 0600, a link or file at the output path never followed or
//! touched, and file names tried until free.

use std::process::{Command, Output};

use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

/// Buyer and lines by transaction id; `nobuyer` gets none.
const DOCUMENT_INPUT: &str = r#"<?php
add_filter('counterfoil_document_input', function ($in, $post) {
    if (false !== strpos((string) get_post_meta($post->ID, '_counterfoil_transaction_id', true), 'nobuyer')) { return $in; }
    $in['buyer'] = array('name' => 'Acme GmbH', 'city' => 'Berlin', 'country' => 'DE', 'vat_id' => 'DE123456789');
    if ('invoice' === $in['kind']) {
        $in['lines'] = array(array('name' => 'Book', 'quantity' => '2', 'unit_price' => '10.00', 'vat_rate' => '21', 'vat_category' => 'S'));
    } else {
        $in['lines'] = array(array('name' => 'Returned book', 'quantity' => '1', 'unit_price' => '10.00', 'vat_rate' => '21', 'vat_category' => 'S'));
    }
    return $in;
}, 10, 2);
"#;

fn export(wp: &WordPress, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_counterfoil"))
        .args(["export", "--format", "documents"])
        .env("DATABASE_URL", wp.database_url())
        .args(extra)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    counterfoil_tests::output_text(out)
}

#[test]
fn a_periods_e_invoices_into_a_folder_and_a_zip_with_what_is_missing() {
    let wp = WordPress::install(MariaDb::shared(), "export-docs", None).unwrap();
    wp.mu_plugin("document-input", DOCUMENT_INPUT).unwrap();
    let year = wp.eval(false, "echo current_time('Y');").unwrap();
    let out = wp
        .eval(
            false,
            "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
                 'vat_id' => 'BE0123456749'));
             $pay = function ($txn) {
                 $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => $txn, 'user_id' => 3,
                     'amount' => '24.20', 'currency' => 'EUR'));
                 if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }
                 return $p;
             };
             $a = $pay('exp-1'); $b = $pay('exp-2'); $missing = $pay('exp-nobuyer'); $void = $pay('exp-nobuyer-void');
             // Another issuer's first invoice reads like issuer 3's first: 2026-0001 twice.
             $other = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => 'exp-other', 'user_id' => 4,
                 'amount' => '24.20', 'currency' => 'EUR'));
             if (is_wp_error($other) || $other->post_title !== $a->post_title) { echo 'not the same number'; exit(1); }
             update_post_meta($void->ID, '_counterfoil_void_reason', 'test: voided');
             $cn = counterfoil_create_credit_note_for_refund(array('gateway' => 'shop', 'refund_id' => 're-x', 'transaction_id' => 'exp-1', 'amount' => '12.10'));
             if (is_wp_error($cn)) { echo $cn->get_error_message(); exit(1); }
             foreach (array($a, $b, $cn) as $p) { echo $p->post_title, '|', base64_encode(counterfoil_invoice_document($p, 'ubl')), ' '; }
             echo 'other:', $other->ID, '|', base64_encode(counterfoil_invoice_document($other, 'ubl')), ' ';
             echo 'missing:', $missing->post_title;",
        )
        .unwrap();
    let mut expected = Vec::new();
    let mut missing = String::new();
    let mut other = (String::new(), String::new());
    for part in out.split_whitespace() {
        if let Some(m) = part.strip_prefix("missing:") {
            missing = m.to_owned();
        } else if let Some(o) = part.strip_prefix("other:") {
            let (id, ubl) = o.split_once('|').unwrap();
            other = (id.to_owned(), ubl.to_owned());
        } else {
            let (number, ubl) = part.split_once('|').unwrap();
            expected.push((number.to_owned(), ubl.to_owned()));
        }
    }
    assert_eq!(expected.len(), 3, "{out}");

    let dir = counterfoil_tests::target_dir().join(format!("export-docs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let folder = dir.join("folder");
    let done = export(
        &wp,
        &[
            "--year",
            &year,
            "--output",
            folder.to_str().unwrap(),
            "--json",
        ],
    );
    println!("{}", text(&done));
    assert_eq!(done.status.code(), Some(1), "a finding: {}", text(&done));
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(report["documents"], 4);
    assert_eq!(report["files"], 12);
    let findings: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(
        findings.len(),
        1,
        "only the invoice without a buyer, not the void one: {findings:?}"
    );
    assert!(
        findings[0].starts_with(&missing) && findings[0].contains("no e-invoice yet"),
        "{findings:?}"
    );
    for (number, ubl) in &expected {
        let stem: String = number
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let got = std::fs::read(folder.join(format!("{stem}.ubl.xml"))).unwrap();
        let want = {
            use base64::Engine;
            String::from_utf8(
                base64::engine::general_purpose::STANDARD
                    .decode(ubl)
                    .unwrap(),
            )
            .unwrap()
        };
        assert_eq!(
            String::from_utf8(got).unwrap(),
            want,
            "{number}: the site's bytes"
        );
        assert!(std::fs::read(folder.join(format!("{stem}.pdf")))
            .unwrap()
            .starts_with(b"%PDF-1.7"));
        assert!(folder.join(format!("{stem}.cii.xml")).exists());
    }
    // The other issuer's 2026-0001: its own files, named with its post id.
    let (first, _) = &expected[0];
    let theirs = std::fs::read(folder.join(format!("{first}-post{}.ubl.xml", other.0))).unwrap();
    let want = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(&other.1)
            .unwrap()
    };
    assert_eq!(
        theirs, want,
        "the second 2026-0001 is the other issuer's, not overwritten"
    );
    let index = std::fs::read_to_string(folder.join("index.csv")).unwrap();
    assert_eq!(index.lines().count(), 5, "{index}");
    assert!(
        index.contains(",credit_note,") && index.contains(",EUR,24.20,"),
        "{index}"
    );

    // A zip, twice: the same archive.
    let (zip1, zip2) = (dir.join("one.zip"), dir.join("two.zip"));
    for zip in [&zip1, &zip2] {
        let done = export(
            &wp,
            &[
                "--year",
                &year,
                "--output",
                zip.to_str().unwrap(),
                "--document-formats",
                "ubl,pdf",
            ],
        );
        assert_eq!(done.status.code(), Some(1), "{}", text(&done));
    }
    assert_eq!(
        std::fs::read(&zip1).unwrap(),
        std::fs::read(&zip2).unwrap(),
        "the same period, the same archive"
    );
    let listing = Command::new("python3")
        .args(["-m", "zipfile", "-l", zip1.to_str().unwrap()])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert_eq!(listing.matches(".ubl.xml").count(), 4, "{listing}");
    assert_eq!(listing.matches(".pdf").count(), 4, "{listing}");
    assert_eq!(listing.matches(".cii.xml").count(), 0, "{listing}");
    assert!(listing.contains("index.csv"), "{listing}");

    // Nothing is overwritten; a bad period or format is an error.
    let again = export(&wp, &["--output", folder.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(text(&again).contains("not empty"), "{}", text(&again));
    let taken = export(&wp, &["--output", zip1.to_str().unwrap()]);
    assert_eq!(taken.status.code(), Some(2), "{}", text(&taken));
    let bad = export(
        &wp,
        &[
            "--output",
            dir.join("x").to_str().unwrap(),
            "--document-formats",
            "docx",
        ],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));

    // Names are tried until free: a document whose number reads like the
    // post-id name another's collision would take (`{first}-post{P2}`),
    // then that other (`{first}` again, post P2). Before: one retry, the
    // same name, and the first one's files overwritten (12 files on disk
    // for 15 written).
    let (p1, p2) = (9_000_001u64, 9_000_002u64);
    wp.scalar(&format!(
        "INSERT INTO wp_counterfoil_documents (post_id, number, kind, issue_date, input, created_at)
         SELECT {p1}, '{first}-post{p2}', kind, issue_date, input, created_at FROM wp_counterfoil_documents WHERE number = '{first}' ORDER BY post_id LIMIT 1"
    ));
    wp.scalar(&format!(
        "INSERT INTO wp_counterfoil_documents (post_id, number, kind, issue_date, input, created_at)
         SELECT {p2}, number, kind, issue_date, input, created_at FROM wp_counterfoil_documents WHERE number = '{first}' ORDER BY post_id LIMIT 1"
    ));
    let crowded = dir.join("crowded");
    let done = export(
        &wp,
        &[
            "--year",
            &year,
            "--output",
            crowded.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(done.status.code(), Some(1), "{}", text(&done));
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(report["documents"], 6, "{report}");
    assert_eq!(
        std::fs::read_dir(&crowded).unwrap().count(),
        6 * 3 + 1,
        "every document's files and index.csv, none overwritten"
    );
    for name in [
        format!("{first}-post{p2}.ubl.xml"),
        format!("{first}-post{p2}-2.ubl.xml"),
    ] {
        assert!(crowded.join(&name).exists(), "{name}");
    }
    let index = std::fs::read_to_string(crowded.join("index.csv")).unwrap();
    assert!(
        index.contains(&format!("{first}-post{p2}-2.pdf")),
        "the index names the file written: {index}"
    );
    // Readable by its owner alone: the folder made 0700, every file 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&folder), 0o700, "the new folder");
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
    assert_eq!(mode(&zip1), 0o600, "the zip");

    // A link (or a file) at the output path is never followed or touched.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "theirs").unwrap();
    let link_zip = dir.join("link.zip");
    std::os::unix::fs::symlink(&victim, &link_zip).unwrap();
    let link_folder = dir.join("link-folder");
    std::os::unix::fs::symlink(&elsewhere, &link_folder).unwrap();
    let plain = dir.join("plain-file");
    std::fs::write(&plain, "theirs").unwrap();
    for (path, why) in [
        (&link_zip, "create"),
        (&link_folder, "symbolic link"),
        (&plain, "not a folder"),
    ] {
        let out = export(&wp, &["--year", &year, "--output", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(why), "{why}: {}", text(&out));
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "theirs");
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "theirs");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written through the link"
    );

    let _ = std::fs::remove_dir_all(&dir);
}
