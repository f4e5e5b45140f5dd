//! What the page says about paying: one paragraph from the amount due
//! (BT-115), the means of payment (BG-16), the due date (BT-9) and the
//! payment terms (BT-20), in the page's language.
//!
//! Invariants: the sentence follows the computed document, never the other
//! way round — "paid" only when [`Document::paid_in_full`] (nothing due), a
//! request to pay only on an invoice with an amount due, and a credit note
//! never asks the customer to pay (what it owes is refunded); an IBAN only
//! where the document's means carry the seller's account (a credit
//! transfer on an invoice with an amount due: [`Document::means`]), quoting
//! the remittance information (BT-83) or else the document's number; the
//! due date only with an amount due; the terms always, as written.

use super::labels::{Key, Labels};
use crate::einvoice::settlement::Means;
use crate::einvoice::{Document, Kind, Party};

/// The means as a sentence says them ("by card"); none for code 1
/// (instrument not defined).
fn by(l: &Labels, m: &Means) -> Option<String> {
    let key = match (m.code, m.mandate) {
        ("49" | "59", Some(mandate)) => return Some(l.fill(Key::ByDebit, &[("mandate", mandate)])),
        ("48" | "54" | "55", _) => Key::ByCard,
        ("10", _) => Key::ByCash,
        ("20", _) => Key::ByCheque,
        ("30" | "42" | "58", _) => Key::ByTransfer,
        ("68", _) => Key::ByOnline,
        ("ZZZ", _) => Key::ByAgreement,
        ("1", _) => return None,
        (code, _) => return Some(l.fill(Key::ByCode, &[("code", code)])),
    };
    Some(l.get(key).to_owned())
}

/// The payment paragraph of `d`.
pub fn paragraph(d: &Document, l: &Labels) -> String {
    let due = d.totals.due;
    let amount = format!("{} {}", l.number(&d.amount(due)), d.input.currency.as_str());
    let means = d.means();
    let by = means.as_ref().and_then(|m| by(l, m));
    let owed = due.is_positive();
    let mut out = match (&d.input.kind, owed) {
        (_, false) if !d.paid_in_full() => l.get(Key::NothingDue).to_owned(),
        (Kind::Invoice, false) => match &by {
            Some(by) => l.fill(Key::PaidInFullBy, &[("by", by)]),
            None => l.get(Key::PaidInFull).to_owned(),
        },
        (Kind::CreditNote { .. }, false) => match &by {
            Some(by) => l.fill(Key::SettledBy, &[("by", by)]),
            None => l.get(Key::Settled).to_owned(),
        },
        (Kind::CreditNote { .. }, true) => match &by {
            Some(by) => l.fill(Key::RefundBy, &[("amount", &amount), ("by", by)]),
            None => l.fill(Key::Refund, &[("amount", &amount)]),
        },
        (Kind::Invoice, true) => match (&means, &by) {
            (Some(m), _) if m.account.is_some() => l.fill(
                Key::PayTransfer,
                &[
                    ("amount", &amount),
                    ("iban", m.account.unwrap_or_default()),
                    ("reference", m.remittance.unwrap_or(&d.input.number)),
                ],
            ),
            (
                Some(Means {
                    code: "49" | "59",
                    mandate: Some(mandate),
                    ..
                }),
                _,
            ) => l.fill(Key::PayDebit, &[("amount", &amount), ("mandate", mandate)]),
            (_, Some(by)) => l.fill(Key::PayBy, &[("amount", &amount), ("by", by)]),
            (_, None) => l.fill(Key::PayDue, &[("amount", &amount)]),
        },
    };
    if let (true, Some(date)) = (owed, Party::text(&d.input.due_date)) {
        out.push(' ');
        out.push_str(&l.fill(Key::DueBy, &[("date", &l.date(date))]));
    }
    if let Some(terms) = Party::text(&d.input.payment_terms) {
        out.push(' ');
        out.push_str(&l.fill(Key::Terms, &[("terms", terms)]));
    }
    out
}
