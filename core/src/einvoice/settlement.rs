//! How a document is paid: what the buyer has paid (BT-113) and the means
//! of payment it states (BG-16: BT-81 code, BT-83 remittance information,
//! BT-84 the seller's account, BT-89 a direct debit's mandate).
//!
//! Invariants: the paid amount is what was received — all (`paid`), nothing,
//! or the amount given, never more than the amount payable and never
//! negative; the means are the buyer's real way to pay: stated as given
//! (a code on UNCL4461's list, BR-CL-16), or, when none is given, credit
//! transfer (30) to the seller's account on an invoice with an amount due
//! — as before the code could be given, so an issued invoice's bytes never
//! change; the seller's account appears only with a credit transfer on an
//! invoice (BR-61 asks it there), never on a card-paid invoice or a credit
//! note; a credit note states no credit transfer (the account refunded is
//! the buyer's, which the input does not hold); a direct debit names its
//! mandate (PEPPOL-EN16931-R061); remittance information is written inside
//! the means, so it needs them.

use super::decimal::Dec;
use super::model::{invalid, missing, DocumentError, DocumentInput, Kind};
use super::party::Party;

/// Credit transfer codes: BR-61 asks the payee's account with them.
const CREDIT_TRANSFER: [&str; 2] = ["30", "58"];
/// Direct debit codes: Peppol asks the mandate with them.
const DIRECT_DEBIT: [&str; 2] = ["49", "59"];

/// The means of payment a document states (BG-16).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Means<'a> {
    /// BT-81.
    pub code: &'a str,
    /// BT-84: the seller's account, with a credit transfer only.
    pub account: Option<&'a str>,
    /// BT-89: a direct debit's mandate.
    pub mandate: Option<&'a str>,
    /// BT-83.
    pub remittance: Option<&'a str>,
}

/// Whether a code is a credit transfer (30, 58).
pub fn is_credit_transfer(code: &str) -> bool {
    CREDIT_TRANSFER.contains(&code)
}

/// The means `input` states, given its amount due `due`.
pub fn means(input: &DocumentInput, due: Dec) -> Option<Means<'_>> {
    let d = &input.details;
    let remittance = Party::text(&d.remittance_information);
    match Party::text(&d.payment_means) {
        Some(code) => Some(Means {
            code,
            account: match input.kind {
                Kind::Invoice if is_credit_transfer(code) => input.seller.account(),
                _ => None,
            },
            mandate: if DIRECT_DEBIT.contains(&code) {
                Party::text(&d.mandate_reference)
            } else {
                None
            },
            remittance,
        }),
        None => match input.kind {
            Kind::Invoice if due.is_positive() => input.seller.account().map(|account| Means {
                code: "30",
                account: Some(account),
                mandate: None,
                remittance,
            }),
            _ => None,
        },
    }
}

/// The paid amount (BT-113) of a document payable `payable`, in `places`.
pub(super) fn paid(input: &DocumentInput, payable: Dec, places: u32) -> Result<Dec, DocumentError> {
    let zero = Dec::new(0, places);
    let Some(p) = input.details.paid_amount else {
        return Ok(if input.paid { payable } else { zero });
    };
    let bad = |why: String| invalid("BT-113", "paid amount", why);
    if p.scale() > 2 {
        return Err(bad(format!("{p} has more than 2 decimals")));
    }
    let p = p
        .round(places)
        .ok_or_else(|| bad("too large to compute exactly".into()))?;
    if p.is_negative() {
        return Err(bad(format!("{p} is negative")));
    }
    if p.checked_sub(payable).is_none_or(|over| over.is_positive()) {
        return Err(bad(format!(
            "{p} is more than the amount payable {payable}"
        )));
    }
    Ok(p)
}

/// Checks the means given, once the amount due `due` is known.
pub(super) fn check(input: &DocumentInput, due: Dec) -> Result<(), DocumentError> {
    let d = &input.details;
    let credit = matches!(input.kind, Kind::CreditNote { .. });
    if let Some(code) = Party::text(&d.payment_means) {
        if !super::codes::is_payment_means(code) {
            return Err(invalid(
                "BT-81",
                "payment means type code",
                format!("`{code}` is not a UNCL4461 code such as 30, 48, 58 or 59 (BR-CL-16)"),
            ));
        }
        if is_credit_transfer(code) && credit {
            return Err(invalid(
                "BT-81",
                "payment means type code",
                "a refund by credit transfer goes to the buyer's account, which BR-61 asks and the input does not hold: state the refund's means otherwise, or none",
            ));
        }
        if is_credit_transfer(code) && input.seller.account().is_none() {
            return Err(missing(
                "BT-84",
                "payment account identifier",
                "BR-61: a credit transfer names the account to pay to",
            ));
        }
        if DIRECT_DEBIT.contains(&code) && Party::text(&d.mandate_reference).is_none() {
            return Err(missing(
                "BT-89",
                "mandate reference identifier",
                "PEPPOL-EN16931-R061: a direct debit names its mandate",
            ));
        }
    }
    if Party::text(&d.remittance_information).is_some() && means(input, due).is_none() {
        return Err(missing(
            "BT-81",
            "payment means type code",
            "remittance information (BT-83) is stated with the means of payment (BG-16)",
        ));
    }
    Ok(())
}
