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
//! not JSON at all is refused as `BG-0` (no document). `language` (a BCP 47
//! tag) and `labels` (an object of texts by key: a value that is not a
//! string is left out, anything but an object reads as none) change only
//! the PDF's page, never refuse a document; `allowances` and `charges`
//! that are not lists of objects, or whose `amount`, `vat_rate` or
//! `vat_category` is there but of the wrong type, are refused as `BG-20` /
//! `BG-21` (one that is absent is refused by its own term).

use serde_json::Value;

use super::{
    Address, AllowanceChargeInput, Dec, DocumentDetails, DocumentError, DocumentInput, Kind,
    LineDetails, LineInput, Note, Party, VatCategory,
};

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
        legal_id_scheme: text(v, "legal_id_scheme"),
        tax_registration_id: text(v, "tax_registration_id"),
        email: text(v, "email"),
        electronic_address: text(v, "electronic_address"),
        electronic_address_scheme: text(v, "electronic_address_scheme"),
        iban: text(v, "iban"),
    }
}

/// An amount given as a decimal string: absent (or null) is `None`; any
/// other value that is not a decimal string is refused naming `term`.
fn amount(
    v: &Value,
    key: &str,
    term: &'static str,
    what: &'static str,
) -> Result<Option<Dec>, DocumentError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(a) => {
            a.as_str()
                .and_then(Dec::parse)
                .map(Some)
                .ok_or_else(|| DocumentError::Invalid {
                    term,
                    what,
                    reason: format!("`{key}` is not a decimal string such as \"0.01\""),
                })
        }
    }
}

fn address(v: &Value) -> Address {
    Address {
        name: text(v, "name"),
        street: text(v, "street"),
        city: text(v, "city"),
        postcode: text(v, "postcode"),
        country: text(v, "country").unwrap_or_default(),
    }
}

/// The notes: each a text, or `{ "subject": "PMT", "text": … }`.
fn notes(v: &Value) -> Result<Vec<Note>, DocumentError> {
    let bad = || DocumentError::Invalid {
        term: "BT-22",
        what: "invoice note",
        reason: "`notes` is a list of texts or of { \"subject\", \"text\" }".into(),
    };
    match v.get("notes") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(notes)) => notes
            .iter()
            .map(|n| match n {
                Value::String(t) => Some(Note {
                    subject: None,
                    text: t.clone(),
                }),
                Value::Object(_) => Some(Note {
                    subject: text(n, "subject"),
                    text: text(n, "text")?,
                }),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad),
        Some(_) => Err(bad()),
    }
}

fn details(v: &Value) -> Result<DocumentDetails, DocumentError> {
    Ok(DocumentDetails {
        paid_amount: amount(v, "paid_amount", "BT-113", "paid amount")?,
        payment_means: text(v, "payment_means"),
        mandate_reference: text(v, "mandate_reference"),
        remittance_information: text(v, "remittance_information"),
        order_reference: text(v, "order_reference"),
        sales_order_reference: text(v, "sales_order_reference"),
        supply_date: text(v, "supply_date"),
        period_start: text(v, "period_start"),
        period_end: text(v, "period_end"),
        deliver_to: v.get("deliver_to").filter(|d| d.is_object()).map(address),
        notes: notes(v)?,
        business_process: text(v, "business_process"),
        tax_currency: text(v, "tax_currency"),
        vat_in_tax_currency: amount(
            v,
            "vat_in_tax_currency",
            "BT-111",
            "invoice total VAT amount in accounting currency",
        )?,
        language: text(v, "language"),
        labels: v
            .get("labels")
            .and_then(Value::as_object)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(key, text)| Some((key.clone(), text.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default(),
        allowances: allowance_charges(v, "allowances", "BG-20", "document level allowances")?,
        charges: allowance_charges(v, "charges", "BG-21", "document level charges")?,
    })
}

/// The allowances or the charges: absent (or null) is none; a list of
/// objects whose `amount` and `vat_rate` are decimal strings and whose
/// `vat_category` is a UNCL5305 code when given, else refused naming
/// `term` (BG-20 or BG-21); `reason` and `reason_code` are texts.
fn allowance_charges(
    v: &Value,
    key: &str,
    term: &'static str,
    what: &'static str,
) -> Result<Vec<AllowanceChargeInput>, DocumentError> {
    let bad = |reason: String| DocumentError::Invalid { term, what, reason };
    let list = match v.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(bad(format!(
                "`{key}` is a list of {{ \"amount\", \"reason\", \"reason_code\", \"vat_category\", \"vat_rate\" }}"
            )))
        }
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        let wrong = || {
            bad(format!(
                "{key} {}: an object whose amount and vat_rate are decimal strings and whose vat_category is one of S, Z, E, AE, K, G, O",
                i + 1
            ))
        };
        if !a.is_object() {
            return Err(wrong());
        }
        let dec = |field: &str| match a.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(d) => d.as_str().and_then(Dec::parse).map(Some).ok_or_else(wrong),
        };
        out.push(AllowanceChargeInput {
            amount: dec("amount")?,
            reason: text(a, "reason"),
            reason_code: text(a, "reason_code"),
            vat_category: match a.get("vat_category") {
                None | Some(Value::Null) => None,
                Some(c) => Some(c.as_str().and_then(VatCategory::parse).ok_or_else(wrong)?),
            },
            vat_rate: dec("vat_rate")?,
        });
    }
    Ok(out)
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
        details: LineDetails {
            unit_code: text(l, "unit_code"),
            seller_item_id: text(l, "seller_item_id"),
            gtin: text(l, "gtin"),
            vat_exemption_code: text(l, "vat_exemption_code"),
            vat_exemption_reason: text(l, "vat_exemption_reason"),
            vat_amount: amount(l, "vat_amount", "BT-117", "VAT category tax amount")?,
        },
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
        rounding: amount(v, "rounding", "BT-114", "rounding amount")?,
        details: details(v)?,
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
