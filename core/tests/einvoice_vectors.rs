//! The e-invoice vectors (`tests/vectors/einvoice.json` and the documents in
//! `tests/vectors/einvoice/`): the core's documents must be those bytes
//! exactly, and its refusals name the vectors' business terms. Every other
//! backend that writes a document is held to the same files. After a
//! deliberate change of the serializers, `COUNTERFOIL_BLESS_VECTORS=1 cargo
//! test -p counterfoil-core --test einvoice_vectors` rewrites the documents
//! (then `tests/tests/einvoice.rs` checks them by the official rules again).

use counterfoil_core::einvoice::{cii, json, ubl, Document, DocumentError};
use serde_json::Value;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

/// A vector's document, its input read as every caller reads one: refused
/// by the reading (a field of the wrong type, such as `allowances` that are
/// not a list: BG-20) or by the model.
fn build(v: &Value) -> Result<Document, DocumentError> {
    json::input(v).and_then(Document::build)
}

#[test]
fn documents_are_the_vectors_bytes_and_refusals_name_their_term() {
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("einvoice.json")).unwrap())
            .unwrap();
    let bless = std::env::var_os("COUNTERFOIL_BLESS_VECTORS").is_some();
    let mut documents = 0;
    for case in cases.as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let built = build(&case["document"]);
        if let Some(term) = case["error"].as_str() {
            match built {
                Err(e) => assert_eq!(e.term(), term, "{name}"),
                Ok(_) => panic!("{name}: built, expected a refusal naming {term}"),
            }
            continue;
        }
        let d = built.unwrap_or_else(|e| panic!("{name}: {e}"));
        let totals = &case["totals"];
        if bless && totals.is_null() {
            // A new vector: its totals as the core computes them, for a
            // reader to check by hand and copy into einvoice.json (with
            // allowances or charges, their sums and the total without VAT
            // too).
            let mut printed = serde_json::json!({
                "lines": d.amount(d.totals.lines), "vat": d.amount(d.totals.vat),
                "with_vat": d.amount(d.totals.with_vat), "paid": d.amount(d.totals.paid),
                "due": d.amount(d.totals.due),
            });
            if !d.allowance_charges.is_empty() {
                printed["allowances"] = d.amount(d.totals.allowances).into();
                printed["charges"] = d.amount(d.totals.charges).into();
                printed["without_vat"] = d.amount(d.totals.without_vat).into();
            }
            eprintln!("TOTALS {name} {printed}");
            continue;
        }
        for (key, got) in [
            ("lines", d.totals.lines),
            ("vat", d.totals.vat),
            ("with_vat", d.totals.with_vat),
            ("paid", d.totals.paid),
            ("due", d.totals.due),
        ] {
            assert_eq!(
                d.amount(got),
                totals[key].as_str().unwrap(),
                "{name}: {key}"
            );
        }
        // The sums of the allowances and charges (BT-107, BT-108) and the
        // total without VAT (BT-109), where a vector states them.
        for (key, got) in [
            ("allowances", d.totals.allowances),
            ("charges", d.totals.charges),
            ("without_vat", d.totals.without_vat),
        ] {
            if let Some(want) = totals.get(key) {
                assert_eq!(Some(d.amount(got).as_str()), want.as_str(), "{name}: {key}");
            }
        }
        // The seller's account as the way to pay only where something is
        // to be paid by transfer: an invoice with an amount due; never on a
        // paid invoice or a credit note (every vector seller has an IBAN).
        // A transfer given as the means states the account it is paid to.
        let means = case["document"]["payment_means"].as_str();
        let to_pay = case["document"]["kind"] != "credit_note"
            && match means {
                None => d.totals.due.is_positive(),
                Some(code) => code == "30" || code == "58",
            };
        let ubl_text = String::from_utf8(ubl::to_ubl(&d)).unwrap();
        let cii_text = String::from_utf8(cii::to_cii(&d)).unwrap();
        assert_eq!(
            (
                ubl_text.contains("<cac:PayeeFinancialAccount>"),
                cii_text.contains("<ram:IBANID>")
            ),
            (to_pay, to_pay),
            "{name}: the IBAN as the means to pay where something is due ({to_pay})"
        );
        for (ext, bytes) in [("ubl", ubl::to_ubl(&d)), ("cii", cii::to_cii(&d))] {
            let path = dir().join(format!("einvoice/{name}.{ext}.xml"));
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &bytes).unwrap();
            }
            let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                bytes == want,
                "{name}.{ext}: the core wrote other bytes than {}",
                path.display()
            );
            documents += 1;
        }
    }
    assert!(documents >= 12, "{documents} documents checked");
}
