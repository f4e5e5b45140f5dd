//! Document-level allowances (BG-20) and charges (BG-21): a coupon taken
//! off the whole order, shipping or a fee added to it, each taxed in its
//! own VAT category and rate.
//!
//! Invariants: absent by default, and a document without them is the same
//! bytes as before they existed (an issued invoice's frozen input never
//! changes its document); each checked one has an amount (BR-31, BR-36)
//! above zero of at most 2 decimals, rounded to the currency's places like
//! every amount (BR-DEC-01, BR-DEC-05), a reason or a reason code (BR-33,
//! BR-38, BR-CO-21, BR-CO-22) — the code on UNCL5189 for an allowance
//! (BR-CL-19), on UNCL7161 for a charge (BR-CL-20) — and a VAT category
//! (BR-32, BR-37) whose rate fits it as a line's does (BR-S-06/07,
//! BR-Z-06/07, BR-E-06/07, BR-AE-06/07, BR-IC-06/07, BR-G-06/07; none for
//! O: BR-O-06/07) with the parties' VAT identifiers it asks (as a line's);
//! a refusal names the term of what it is (BT-92 … BT-98 an allowance's,
//! BT-99 … BT-105 a charge's). Each joins the VAT breakdown of its category
//! and rate ([`VatBreakdown`]); the model sums them (BT-107, BT-108) and
//! takes them from and adds them to the lines' total (BR-CO-13).

use super::breakdown::VatBreakdown;
use super::decimal::Dec;
use super::model::{fits, invalid, missing, DocumentError, DocumentInput};
use super::party::{check_category_parties, Party};
use super::vat::{check_category_rate, VatCategory};

/// A document-level allowance or charge as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowanceChargeInput {
    /// Its amount (BT-92 / BT-99): above zero, at most 2 decimals.
    pub amount: Option<Dec>,
    /// Why, in words (BT-97 / BT-104).
    pub reason: Option<String>,
    /// Why, as a code (BT-98 / BT-105): UNCL5189 for an allowance, UNCL7161
    /// for a charge.
    pub reason_code: Option<String>,
    /// Its VAT category (BT-95 / BT-102).
    pub vat_category: Option<VatCategory>,
    /// Its VAT rate (BT-96 / BT-103): absent only for a category O.
    pub vat_rate: Option<Dec>,
}

/// An allowance or a charge as the document states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowanceCharge {
    /// A charge (BG-21), else an allowance (BG-20).
    pub charge: bool,
    /// Its amount, in the currency's places.
    pub amount: Dec,
    /// Its reason (BT-97 / BT-104), when given.
    pub reason: Option<String>,
    /// Its reason code (BT-98 / BT-105), when given.
    pub reason_code: Option<String>,
    /// Its VAT category (BT-95 / BT-102).
    pub category: VatCategory,
    /// Its VAT rate (BT-96 / BT-103); 0 for category O, which states none.
    pub rate: Dec,
}

impl AllowanceCharge {
    /// What it is for, as a reader is told: its reason, else its code.
    pub fn reason_text(&self) -> &str {
        self.reason
            .as_deref()
            .or(self.reason_code.as_deref())
            .unwrap_or_default()
    }
}

/// The business terms of an allowance, or of a charge.
struct Terms {
    charge: bool,
    amount: (&'static str, &'static str),
    category: (&'static str, &'static str),
    rate: (&'static str, &'static str),
    reason: (&'static str, &'static str),
    code: (&'static str, &'static str),
    why_amount: &'static str,
    why_category: &'static str,
    why_rate: &'static str,
    why_reason: &'static str,
    list: (fn(&str) -> bool, &'static str),
}

const ALLOWANCE: Terms = Terms {
    charge: false,
    amount: ("BT-92", "document level allowance amount"),
    category: ("BT-95", "document level allowance VAT category code"),
    rate: ("BT-96", "document level allowance VAT rate"),
    reason: ("BT-97", "document level allowance reason"),
    code: ("BT-98", "document level allowance reason code"),
    why_amount: "BR-31: each document level allowance has an amount",
    why_category: "BR-32: each document level allowance has a VAT category code",
    why_rate:
        "BR-S-06, BR-Z-06 …: an allowance states its VAT rate unless it is not subject to VAT (O)",
    why_reason: "BR-33 / BR-CO-21: each document level allowance has a reason or a reason code",
    list: (
        super::codes::is_allowance_reason,
        "UNCL5189 as BR-CL-19 lists it, such as 95 (discount)",
    ),
};

const CHARGE: Terms = Terms {
    charge: true,
    amount: ("BT-99", "document level charge amount"),
    category: ("BT-102", "document level charge VAT category code"),
    rate: ("BT-103", "document level charge VAT rate"),
    reason: ("BT-104", "document level charge reason"),
    code: ("BT-105", "document level charge reason code"),
    why_amount: "BR-36: each document level charge has an amount",
    why_category: "BR-37: each document level charge has a VAT category code",
    why_rate:
        "BR-S-07, BR-Z-07 …: a charge states its VAT rate unless it is not subject to VAT (O)",
    why_reason: "BR-38 / BR-CO-22: each document level charge has a reason or a reason code",
    list: (
        super::codes::is_charge_reason,
        "UNCL7161 as BR-CL-20 lists it, such as FC (freight)",
    ),
};

/// The input's allowances, then its charges, each checked (see the
/// module's invariants), in that order.
pub(super) fn check_all(
    input: &DocumentInput,
    places: u32,
) -> Result<Vec<AllowanceCharge>, DocumentError> {
    let d = &input.details;
    d.allowances
        .iter()
        .map(|a| (a, &ALLOWANCE))
        .chain(d.charges.iter().map(|c| (c, &CHARGE)))
        .map(|(a, t)| check(a, t, input, places))
        .collect()
}

fn check(
    a: &AllowanceChargeInput,
    t: &Terms,
    input: &DocumentInput,
    places: u32,
) -> Result<AllowanceCharge, DocumentError> {
    let (term, what) = t.amount;
    let given = a.amount.ok_or_else(|| missing(term, what, t.why_amount))?;
    if given.scale() > 2 {
        return Err(invalid(
            term,
            what,
            format!("{given} has more than the 2 decimals an amount has"),
        ));
    }
    let amount = fits(given.round(places), term, what)?;
    if !amount.is_positive() {
        return Err(invalid(
            term,
            what,
            format!("{given} is not an amount above zero in the invoice's currency"),
        ));
    }
    let reason = Party::text(&a.reason).map(str::to_owned);
    let reason_code = Party::text(&a.reason_code).map(str::to_owned);
    if reason.is_none() && reason_code.is_none() {
        let (term, what) = t.reason;
        return Err(missing(term, what, t.why_reason));
    }
    if let Some(code) = &reason_code {
        let (on_list, list) = t.list;
        if !on_list(code) {
            let (term, what) = t.code;
            return Err(invalid(term, what, format!("`{code}` is not on {list}")));
        }
    }
    let (term, what) = t.category;
    let category = a
        .vat_category
        .ok_or_else(|| missing(term, what, t.why_category))?;
    let (term, what) = t.rate;
    let rate = match (a.vat_rate, category) {
        (Some(rate), _) => rate,
        (None, VatCategory::O) => Dec::ZERO,
        (None, _) => return Err(missing(term, what, t.why_rate)),
    };
    check_category_rate(category, rate, term, what)?;
    check_category_parties(category, &input.seller, &input.buyer)?;
    Ok(AllowanceCharge {
        charge: t.charge,
        amount,
        reason,
        reason_code,
        category,
        rate,
    })
}

/// Each joins the VAT breakdown of its category and rate: a charge adds
/// to its base, an allowance takes from it (BR-S-08 and the like).
pub(super) fn join(
    all: &[AllowanceCharge],
    breakdown: &mut Vec<VatBreakdown>,
    places: u32,
) -> Result<(), DocumentError> {
    for a in all {
        let signed = if a.charge {
            a.amount
        } else {
            fits(
                Dec::new(0, places).checked_sub(a.amount),
                "BT-116",
                "VAT category taxable amount",
            )?
        };
        VatBreakdown::add_adjustment(breakdown, a.category, a.rate, signed, places)?;
    }
    Ok(())
}

/// The sum of the allowances (BT-107, BR-CO-11) and of the charges
/// (BT-108, BR-CO-12).
pub(super) fn sums(all: &[AllowanceCharge], places: u32) -> Result<(Dec, Dec), DocumentError> {
    let (mut allowances, mut charges) = (Dec::new(0, places), Dec::new(0, places));
    for a in all {
        if a.charge {
            charges = fits(
                charges.checked_add(a.amount),
                "BT-108",
                "sum of charges on document level",
            )?;
        } else {
            allowances = fits(
                allowances.checked_add(a.amount),
                "BT-107",
                "sum of allowances on document level",
            )?;
        }
    }
    Ok((allowances, charges))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::einvoice::{Document, DocumentDetails, Kind, LineDetails, LineInput};

    fn input(currency: &str, category: VatCategory, rate: &str) -> DocumentInput {
        let party = |name: &str, country: &str| Party {
            name: name.into(),
            country: country.into(),
            legal_id: Some("0123456749".into()),
            ..Party::default()
        };
        DocumentInput {
            kind: Kind::Invoice,
            number: "1".into(),
            issue_date: "2026-12-03".into(),
            currency: currency.into(),
            buyer_reference: None,
            seller: party("Shop", "BE"),
            buyer: party("Buyer", "BE"),
            lines: vec![LineInput {
                name: "Ticket".into(),
                quantity: Dec::new(1, 0),
                unit_price: Dec::new(1000, 0),
                vat_rate: Dec::parse(rate).unwrap(),
                vat_category: category,
                details: LineDetails::default(),
            }],
            paid: true,
            rounding: None,
            due_date: None,
            payment_terms: None,
            details: DocumentDetails::default(),
        }
    }

    fn charge(amount: &str, rate: Option<&str>) -> AllowanceChargeInput {
        AllowanceChargeInput {
            amount: Dec::parse(amount),
            reason: Some("Booking fee".into()),
            vat_category: Some(VatCategory::O),
            vat_rate: rate.and_then(Dec::parse),
            ..AllowanceChargeInput::default()
        }
    }

    #[test]
    fn not_subject_to_vat_takes_no_rate_and_a_yen_amount_is_whole() {
        // A category O charge states no rate (BR-O-07): none given reads as 0.
        let mut i = input("JPY", VatCategory::O, "0");
        i.details.charges = vec![charge("150", None)];
        let d = Document::build(i.clone()).unwrap();
        assert_eq!(d.breakdown.len(), 1, "the charge joins the lines' O group");
        assert_eq!(d.amount(d.breakdown[0].base), "1150");
        assert_eq!(d.amount(d.totals.without_vat), "1150");
        // Rounded to whole yen, half away from zero; below half a yen it
        // is no amount at all.
        i.details.charges = vec![charge("0.50", Some("0"))];
        let d = Document::build(i.clone()).unwrap();
        assert_eq!(d.amount(d.totals.charges), "1");
        i.details.charges = vec![charge("0.40", None)];
        assert_eq!(Document::build(i.clone()).unwrap_err().term(), "BT-99");
        // Another category's rate is given (BR-S-07 …): none is refused.
        let mut i = input("EUR", VatCategory::E, "0");
        i.seller.vat_id = Some("BE0123456749".into());
        i.details.charges = vec![AllowanceChargeInput {
            vat_category: Some(VatCategory::E),
            ..charge("1.50", None)
        }];
        assert_eq!(Document::build(i).unwrap_err().term(), "BT-103");
    }
}
