//! The terms a document states besides its parties, lines and amounts:
//! when and where the supply was made (BT-72, BG-14, BG-13/BG-15), the
//! orders it answers (BT-13, BT-14), its notes (BT-22), the VAT in the
//! seller's accounting currency (BT-6, BT-111), its allowances and charges
//! (BG-20, BG-21: checked by [`super::allowance`]), and a line's unit, item
//! identifiers, VAT exemption and the VAT the shop charged on it.
//!
//! Invariants: every term here is optional and absent by default, and an
//! input without them gives the same document as before they existed (an
//! issued invoice's frozen input never changes its bytes); a date is a real
//! calendar day and a period does not end before it starts (BR-29); a
//! deliver-to address names its country (BR-57); a unit, a GTIN and an
//! accounting currency are checked against the lists the rules check
//! (BR-CL-23, GS1's check digit, BR-CL-05) and the VAT in the accounting
//! currency comes with its currency, never alone (BR-53), in another
//! currency than the invoice's (PEPPOL-EN16931-R005).

use std::collections::BTreeMap;

use super::allowance::AllowanceChargeInput;
use super::decimal::Dec;
use super::model::{invalid, missing, DocumentError, DocumentInput};
use super::party::Party;
use crate::export::is_day;

/// What a line states besides its item, quantity, price and VAT category.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineDetails {
    /// Unit of measure (BT-130), UN/ECE Rec. 20/21; `C62` (one) when absent.
    pub unit_code: Option<String>,
    /// The seller's item identifier, such as a SKU (BT-155).
    pub seller_item_id: Option<String>,
    /// The item's GTIN (BT-157, scheme 0160).
    pub gtin: Option<String>,
    /// VAT exemption reason code (BT-121), CEF's VATEX list.
    pub vat_exemption_code: Option<String>,
    /// VAT exemption reason in words (BT-120).
    pub vat_exemption_reason: Option<String>,
    /// The VAT charged on this line as the shop rounded it: when every line
    /// of a category and rate states it, their sum is that category's VAT
    /// (BT-117), within what rounding per line can make it differ.
    pub vat_amount: Option<Dec>,
}

/// A deliver-to party and address (BT-70, BG-15).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Address {
    /// Deliver-to party name (BT-70).
    pub name: Option<String>,
    /// Street (BT-75).
    pub street: Option<String>,
    /// City (BT-77).
    pub city: Option<String>,
    /// Post code (BT-78).
    pub postcode: Option<String>,
    /// Country, ISO 3166-1 alpha-2 (BT-80).
    pub country: String,
}

/// A free-text note (BT-22), with its subject (BT-21, UNCL4451: `PMT`,
/// `PMD`, `AAB` … as France's rules ask them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Note {
    /// BT-21.
    pub subject: Option<String>,
    /// BT-22.
    pub text: String,
}

/// What a document states besides its parties, lines and amounts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocumentDetails {
    /// What the buyer has paid (BT-113); when absent, `paid` decides: all or nothing.
    pub paid_amount: Option<Dec>,
    /// How the buyer pays or paid (BT-81, UNCL4461): 30/58 credit transfer,
    /// 48/54 card, 59 SEPA direct debit, 10 cash …
    pub payment_means: Option<String>,
    /// The direct debit's mandate (BT-89).
    pub mandate_reference: Option<String>,
    /// The remittance information the buyer quotes with a transfer (BT-83).
    pub remittance_information: Option<String>,
    /// The buyer's purchase order (BT-13).
    pub order_reference: Option<String>,
    /// The seller's sales order (BT-14), such as a shop's order number.
    pub sales_order_reference: Option<String>,
    /// The day the goods or services were supplied (BT-72).
    pub supply_date: Option<String>,
    /// The invoicing period's first day (BT-73).
    pub period_start: Option<String>,
    /// The invoicing period's last day (BT-74).
    pub period_end: Option<String>,
    /// Where the goods went (BG-13, BG-15).
    pub deliver_to: Option<Address>,
    /// Free-text notes (BT-22) with their subjects (BT-21).
    pub notes: Vec<Note>,
    /// The business process (BT-23), such as France's billing mode `B1`,
    /// `S1` or `M1`: a UBL document that states one states no Peppol profile.
    pub business_process: Option<String>,
    /// The seller's VAT accounting currency (BT-6), when not the invoice's.
    pub tax_currency: Option<String>,
    /// The total VAT in that currency (BT-111).
    pub vat_in_tax_currency: Option<Dec>,
    /// The language the PDF's page is shown in: a BCP 47 tag whose primary
    /// subtag is `en`, `de`, `fr` or `nl` (`de-AT` and WordPress's `de_DE`
    /// read as `de`); English when absent or another language.
    pub language: Option<String>,
    /// The page's own label texts by key (`pdf::labels`), over the built-in
    /// ones: a shop's translations into any language.
    pub labels: BTreeMap<String, String>,
    /// Document-level allowances (BG-20), such as a coupon off the whole order.
    pub allowances: Vec<AllowanceChargeInput>,
    /// Document-level charges (BG-21), such as shipping or a fee.
    pub charges: Vec<AllowanceChargeInput>,
}

impl DocumentDetails {
    /// Whether an invoicing period is stated (BG-14).
    pub fn has_period(&self) -> bool {
        Party::text(&self.period_start).is_some() || Party::text(&self.period_end).is_some()
    }
}

fn date(v: &Option<String>, term: &'static str, what: &'static str) -> Result<(), DocumentError> {
    match Party::text(v) {
        Some(d) if !is_day(d) => Err(invalid(
            term,
            what,
            format!("`{d}` is not a date YYYY-MM-DD"),
        )),
        _ => Ok(()),
    }
}

/// Checks the document's own terms (not its lines').
pub(super) fn check(input: &DocumentInput) -> Result<(), DocumentError> {
    let d = &input.details;
    date(&d.supply_date, "BT-72", "actual delivery date")?;
    date(&d.period_start, "BT-73", "invoicing period start date")?;
    date(&d.period_end, "BT-74", "invoicing period end date")?;
    if let (Some(start), Some(end)) = (Party::text(&d.period_start), Party::text(&d.period_end)) {
        if end < start {
            return Err(invalid(
                "BT-74",
                "invoicing period end date",
                format!("BR-29: the period ends ({end}) before it starts ({start})"),
            ));
        }
    }
    if let Some(a) = &d.deliver_to {
        if a.country.is_empty() {
            return Err(missing(
                "BT-80",
                "deliver to country code",
                "BR-57: a deliver-to address names its country",
            ));
        }
        if !super::codes::is_country(&a.country) {
            return Err(invalid(
                "BT-80",
                "deliver to country code",
                format!(
                    "`{}` is not an ISO 3166-1 alpha-2 code (BR-CL-14)",
                    a.country
                ),
            ));
        }
    }
    if d.notes.iter().any(|n| n.text.trim().is_empty()) {
        return Err(invalid("BT-22", "invoice note", "a note has text"));
    }
    for n in &d.notes {
        if let Some(subject) = Party::text(&n.subject) {
            if subject.len() != 3 || !subject.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(invalid(
                    "BT-21",
                    "invoice note subject code",
                    format!("`{subject}` is not a UNCL4451 code of three capitals such as PMT"),
                ));
            }
        }
    }
    if let Some(p) = Party::text(&d.business_process) {
        if p.contains('#') || p.chars().any(char::is_control) {
            return Err(invalid(
                "BT-23",
                "business process type",
                format!("`{p}` is not an identifier"),
            ));
        }
    }
    match (Party::text(&d.tax_currency), d.vat_in_tax_currency) {
        (None, None) => {}
        (None, Some(_)) => {
            return Err(missing(
                "BT-6",
                "VAT accounting currency code",
                "BR-53: the VAT in the accounting currency names that currency",
            ))
        }
        (Some(_), None) => {
            return Err(missing(
                "BT-111",
                "invoice total VAT amount in accounting currency",
                "BR-53: an accounting currency states the total VAT in it",
            ))
        }
        (Some(c), Some(v)) => {
            if !super::codes::is_currency(c) {
                return Err(invalid(
                    "BT-6",
                    "VAT accounting currency code",
                    format!("`{c}` is not an ISO 4217 currency code (BR-CL-05)"),
                ));
            }
            if c == input.currency.trim().to_ascii_uppercase() {
                return Err(invalid(
                    "BT-6",
                    "VAT accounting currency code",
                    "PEPPOL-EN16931-R005: the accounting currency is stated only when it is not the invoice's",
                ));
            }
            if v.is_negative() || v.scale() > 2 {
                return Err(invalid(
                    "BT-111",
                    "invoice total VAT amount in accounting currency",
                    format!("{v} is not an amount of at most 2 decimals, not negative"),
                ));
            }
        }
    }
    Ok(())
}

/// Checks a line's own terms.
pub(super) fn check_line(l: &LineDetails) -> Result<(), DocumentError> {
    if let Some(u) = Party::text(&l.unit_code) {
        if !super::codes::is_unit(u) {
            return Err(invalid(
                "BT-130",
                "invoiced quantity unit of measure",
                format!("`{u}` is not a UN/ECE Recommendation 20 or 21 code such as C62 or H87 (BR-CL-23)"),
            ));
        }
    }
    if let Some(g) = Party::text(&l.gtin) {
        if !super::codes::is_gtin(g) {
            return Err(invalid(
                "BT-157",
                "item standard identifier",
                format!("`{g}` is not a GTIN (8, 12, 13 or 14 digits with GS1's check digit)"),
            ));
        }
    }
    if let Some(v) = l.vat_amount {
        if v.scale() > 2 {
            return Err(invalid(
                "BT-117",
                "VAT category tax amount",
                format!("a line's VAT {v} has more than 2 decimals"),
            ));
        }
    }
    Ok(())
}
