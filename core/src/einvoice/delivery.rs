//! Where and when a document's supply was made, as its syntaxes write it
//! (BG-13: BT-72 the actual delivery date, BG-15 the deliver-to address,
//! BT-70 its party).
//!
//! Invariants: the delivery states what the input gives; an intra-community
//! supply (K), which must state a delivery date or period and the
//! deliver-to country (BR-IC-11, BR-IC-12), falls back to the issue date
//! (when no period is given) and the buyer's country — as it did before
//! the input could give them, so an issued invoice's bytes never change;
//! nothing is written when nothing is known.

use std::borrow::Cow;

use super::details::Address;
use super::model::{Document, VatCategory};
use super::party::Party;

/// A document's delivery, as written.
pub struct Delivery<'a> {
    /// BT-72.
    pub date: Option<&'a str>,
    /// BG-15 with BT-70.
    pub address: Option<Cow<'a, Address>>,
}

/// The delivery `d` states, if any.
pub fn of(d: &Document) -> Option<Delivery<'_>> {
    let x = &d.input.details;
    let k = d.breakdown.iter().any(|b| b.category == VatCategory::K);
    let date = Party::text(&x.supply_date)
        .or_else(|| (k && !x.has_period()).then_some(d.input.issue_date.as_str()));
    let address = match &x.deliver_to {
        Some(a) => Some(Cow::Borrowed(a)),
        None if k => Some(Cow::Owned(Address {
            country: d.input.buyer.country.clone(),
            ..Address::default()
        })),
        None => None,
    };
    (date.is_some() || address.is_some()).then_some(Delivery { date, address })
}
