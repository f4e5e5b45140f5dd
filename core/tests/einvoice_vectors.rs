//! The e-invoice vectors (`tests/vectors/einvoice.json` and the documents in
//! `tests/vectors/einvoice/`): the core's documents must be those bytes
//! exactly, and its refusals name the vectors' business terms. Every other
//! backend that writes a document is held to the same files. After a
//! deliberate change of the serializers, `COUNTERFOIL_BLESS_VECTORS=1 cargo
//! test -p counterfoil-core --test einvoice_vectors` rewrites the documents
//! (then `tests/tests/einvoice.rs` checks them by the official rules again).

use counterfoil_core::einvoice::{
    cii, ubl, Dec, Document, DocumentError, DocumentInput, Kind, LineInput, Party, VatCategory,
};
use serde_json::Value;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A party of the vectors (the issue's shape).
pub fn party(v: &Value) -> Party {
    Party {
        name: text(v, "name").unwrap_or_default(),
        street: text(v, "street"),
        city: text(v, "city"),
        postcode: text(v, "postcode"),
        country: text(v, "country").unwrap_or_default(),
        vat_id: text(v, "vat_id"),
        legal_id: text(v, "legal_id"),
        email: text(v, "email"),
        electronic_address: text(v, "electronic_address"),
        electronic_address_scheme: text(v, "electronic_address_scheme"),
        iban: text(v, "iban"),
    }
}

fn dec(v: &Value, key: &str) -> Dec {
    Dec::parse(
        v[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: a decimal string")),
    )
    .unwrap_or_else(|| panic!("{key}: {}", v[key]))
}

/// A document input of the vectors.
pub fn input(v: &Value) -> DocumentInput {
    DocumentInput {
        kind: match text(v, "kind").as_deref() {
            Some("credit_note") => Kind::CreditNote {
                preceding: text(v, "preceding").unwrap_or_default(),
                preceding_date: text(v, "preceding_date"),
            },
            _ => Kind::Invoice,
        },
        number: text(v, "number").unwrap_or_default(),
        issue_date: text(v, "issue_date").unwrap_or_default(),
        currency: text(v, "currency").unwrap_or_default(),
        buyer_reference: text(v, "buyer_reference"),
        seller: party(&v["seller"]),
        buyer: party(&v["buyer"]),
        lines: v["lines"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|l| LineInput {
                        name: text(l, "name").unwrap_or_default(),
                        quantity: dec(l, "quantity"),
                        unit_price: dec(l, "unit_price"),
                        vat_rate: dec(l, "vat_rate"),
                        vat_category: VatCategory::parse(l["vat_category"].as_str().unwrap())
                            .unwrap(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        paid: v["paid"].as_bool().unwrap_or(false),
    }
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
        let built = Document::build(input(&case["document"]));
        if let Some(term) = case["error"].as_str() {
            match built {
                Err(DocumentError::Missing { term: t, .. })
                | Err(DocumentError::Invalid { term: t, .. }) => {
                    assert_eq!(t, term, "{name}")
                }
                Ok(_) => panic!("{name}: built, expected a refusal naming {term}"),
            }
            continue;
        }
        let d = built.unwrap_or_else(|e| panic!("{name}: {e}"));
        let totals = &case["totals"];
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
