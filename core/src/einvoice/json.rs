//! A document input read from JSON: the shape `docs/einvoice.md` gives and
//! the pure-PHP twin builds (`Counterfoil_Documents::input_for`), for the
//! callers that receive an input as text — the PHP extension, the CLI's
//! export, the shared vectors.
//!
//! Invariants: a field of the wrong type reads as absent (so
//! [`Document::build`](super::Document::build) refuses it by its business
//! term); a line whose `quantity`, `unit_price` or `vat_rate` is not a
//! decimal string, or whose `vat_category` is not a UNCL5305 code, is
//! refused as `BG-25` — the term the twin names for it; the text that is
//! not JSON at all is refused as `BG-0` (no document).

use serde_json::Value;

use super::{Dec, DocumentError, DocumentInput, Kind, LineInput, Party, VatCategory};

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A party (seller or buyer).
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

fn bad_line(position: usize) -> DocumentError {
    DocumentError::Invalid {
        term: "BG-25",
        what: "invoice line",
        reason: format!(
            "line {position} needs quantity, unit_price and vat_rate as decimal strings and a VAT category (S, Z, E, AE, K, G, O)"
        ),
    }
}

fn line(l: &Value, position: usize) -> Result<LineInput, DocumentError> {
    let dec = |key: &str| {
        l.get(key)
            .and_then(Value::as_str)
            .and_then(Dec::parse)
            .ok_or_else(|| bad_line(position))
    };
    Ok(LineInput {
        name: text(l, "name").unwrap_or_default(),
        quantity: dec("quantity")?,
        unit_price: dec("unit_price")?,
        vat_rate: dec("vat_rate")?,
        vat_category: l
            .get("vat_category")
            .and_then(Value::as_str)
            .and_then(VatCategory::parse)
            .ok_or_else(|| bad_line(position))?,
    })
}

/// An input from its JSON value.
pub fn input(v: &Value) -> Result<DocumentInput, DocumentError> {
    let lines = match v.get("lines").and_then(Value::as_array) {
        Some(lines) => lines
            .iter()
            .enumerate()
            .map(|(i, l)| line(l, i + 1))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let empty = Value::Null;
    Ok(DocumentInput {
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
        seller: party(v.get("seller").unwrap_or(&empty)),
        buyer: party(v.get("buyer").unwrap_or(&empty)),
        lines,
        paid: v.get("paid").and_then(Value::as_bool).unwrap_or(false),
        due_date: text(v, "due_date"),
        payment_terms: text(v, "payment_terms"),
        rounding: match v.get("rounding") {
            None | Some(Value::Null) => None,
            Some(r) => {
                Some(
                    r.as_str()
                        .and_then(Dec::parse)
                        .ok_or_else(|| DocumentError::Invalid {
                            term: "BT-114",
                            what: "rounding amount",
                            reason: "not a decimal string such as \"0.01\"".into(),
                        })?,
                )
            }
        },
    })
}

/// An input from JSON text.
pub fn input_from_str(json: &str) -> Result<DocumentInput, DocumentError> {
    let v: Value = serde_json::from_str(json).map_err(|e| DocumentError::Invalid {
        term: "BG-0",
        what: "document input",
        reason: format!("not JSON: {e}"),
    })?;
    input(&v)
}
