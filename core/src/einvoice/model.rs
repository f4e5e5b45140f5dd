//! The document of an invoice or a credit note, as EN 16931 models it: who
//! sells, who buys, the lines, and every amount the calculation rules derive
//! from them.
//!
//! Invariants: a [`Document`] exists only through [`Document::build`], which
//! refuses (naming the business term) anything a valid document needs and the
//! input lacks, so no serializer ever writes an invalid file for want of a
//! term; every amount is computed here once, by EN 16931's rules (BR-CO-10 …
//! BR-CO-16): a line's net amount is quantity × price rounded once to the
//! currency's places, each VAT breakdown (one per category and rate) is the
//! sum of its lines' net amounts and of its document-level charges less its
//! allowances, and that base × rate rounded the same way — or the sum of the
//! VAT its lines state as charged ([`super::breakdown`]) — and the totals
//! are their sums, the total without VAT the lines' less the allowances
//! plus the charges (BR-CO-13), never negative when there are any;
//! amounts carry at most 2 decimals (BR-DEC): a three-decimal currency's are
//! rounded to 2, a zero-decimal currency's to none (half away from zero),
//! never refused for it.

use thiserror::Error;

pub use super::allowance::{AllowanceCharge, AllowanceChargeInput};
pub use super::breakdown::VatBreakdown;
use super::decimal::Dec;
pub use super::details::{Address, DocumentDetails, LineDetails, Note};
pub use super::party::Party;
use super::party::{check_category_parties, check_party};
use super::vat::{check_exemption, check_rate};

pub use super::vat::VatCategory;

/// Why no document could be made.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DocumentError {
    /// A term a valid document requires is missing.
    #[error("{term} ({what}) is missing: {why}")]
    Missing {
        /// The business term, such as `BT-31`.
        term: &'static str,
        /// Its name.
        what: &'static str,
        /// Which rule asks for it.
        why: &'static str,
    },
    /// A term is present but cannot be used.
    #[error("{term} ({what}) is invalid: {reason}")]
    Invalid {
        /// The business term.
        term: &'static str,
        /// Its name.
        what: &'static str,
        /// Why.
        reason: String,
    },
}

impl DocumentError {
    /// The business term the refusal names, such as `BT-31`.
    pub fn term(&self) -> &'static str {
        match self {
            DocumentError::Missing { term, .. } | DocumentError::Invalid { term, .. } => term,
        }
    }
}

/// One line as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineInput {
    /// Item name (BT-153).
    pub name: String,
    /// Quantity (BT-129).
    pub quantity: Dec,
    /// Net price of one unit (BT-146).
    pub unit_price: Dec,
    /// VAT rate in percent (BT-152).
    pub vat_rate: Dec,
    /// VAT category (BT-151).
    pub vat_category: VatCategory,
    /// Unit, item identifiers, VAT exemption, the VAT charged.
    pub details: LineDetails,
}

/// An invoice, or a credit note of an earlier invoice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Commercial invoice (BT-3 380).
    Invoice,
    /// Credit note (BT-3 381), correcting the invoice `preceding` (BT-25)
    /// issued on `preceding_date` (BT-26, `YYYY-MM-DD`).
    CreditNote {
        /// BT-25.
        preceding: String,
        /// BT-26.
        preceding_date: Option<String>,
    },
}

/// What a document is made from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentInput {
    /// Invoice or credit note.
    pub kind: Kind,
    /// The number as issued (BT-1).
    pub number: String,
    /// Issue date `YYYY-MM-DD` (BT-2).
    pub issue_date: String,
    /// Currency (BT-5).
    pub currency: String,
    /// The buyer's reference (BT-10); Peppol asks for it or an order reference.
    pub buyer_reference: Option<String>,
    /// The seller.
    pub seller: Party,
    /// The buyer.
    pub buyer: Party,
    /// The lines (at least one).
    pub lines: Vec<LineInput>,
    /// Whether it was paid in full (the paid amount, BT-113, is the total
    /// payable: with VAT, plus the rounding).
    pub paid: bool,
    /// Rounding amount (BT-114): what is added to the total with VAT to
    /// make the amount payable — a shop that rounds VAT per line charges a
    /// cent or two other than EN 16931's per-category VAT.
    pub rounding: Option<Dec>,
    /// Payment due date `YYYY-MM-DD` (BT-9); an invoice's only.
    pub due_date: Option<String>,
    /// Payment terms in words (BT-20), such as "Payable within 14 days".
    pub payment_terms: Option<String>,
    /// The other terms: payment state and means, supply, orders, notes.
    pub details: DocumentDetails,
}

/// A line with its net amount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// As given.
    pub input: LineInput,
    /// Quantity × price, rounded once to the currency's places (BT-131).
    pub net: Dec,
}

impl Line {
    /// Its unit of measure (BT-130): as given, else `C62` (one).
    pub fn unit_code(&self) -> &str {
        Party::text(&self.input.details.unit_code).unwrap_or("C62")
    }
}

/// The document's totals (BG-22).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Totals {
    /// Sum of line net amounts (BT-106).
    pub lines: Dec,
    /// Sum of the allowances on document level (BT-107): zero without any.
    pub allowances: Dec,
    /// Sum of the charges on document level (BT-108): zero without any.
    pub charges: Dec,
    /// Total without VAT (BT-109): the lines, less the allowances, plus the
    /// charges (BR-CO-13).
    pub without_vat: Dec,
    /// Total VAT (BT-110).
    pub vat: Dec,
    /// Total with VAT (BT-112).
    pub with_vat: Dec,
    /// Rounding amount (BT-114), when the input gave one.
    pub rounding: Option<Dec>,
    /// Paid amount (BT-113).
    pub paid: Dec,
    /// Amount due (BT-115).
    pub due: Dec,
}

/// A valid document, every amount computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// As given.
    pub input: DocumentInput,
    /// The lines.
    pub lines: Vec<Line>,
    /// The allowances (BG-20), then the charges (BG-21), as stated.
    pub allowance_charges: Vec<AllowanceCharge>,
    /// One per category and rate, in the order of their first line (then
    /// of their first allowance or charge).
    pub breakdown: Vec<VatBreakdown>,
    /// The totals.
    pub totals: Totals,
    /// Decimals the currency's amounts are written with (0 or 2).
    pub places: u32,
}

pub(super) fn missing(term: &'static str, what: &'static str, why: &'static str) -> DocumentError {
    DocumentError::Missing { term, what, why }
}

pub(super) fn invalid(
    term: &'static str,
    what: &'static str,
    reason: impl Into<String>,
) -> DocumentError {
    DocumentError::Invalid {
        term,
        what,
        reason: reason.into(),
    }
}

/// A computed amount, or the refusal of a document too large to compute exactly.
pub(super) fn fits(
    v: Option<Dec>,
    term: &'static str,
    what: &'static str,
) -> Result<Dec, DocumentError> {
    v.ok_or_else(|| invalid(term, what, "too large to compute exactly"))
}

pub(super) fn present(v: &Option<String>) -> bool {
    v.as_deref().is_some_and(|s| !s.trim().is_empty())
}

use crate::export::is_day as is_date;

/// Decimals a currency's amounts are written with in a document: EN 16931
/// allows at most 2; a zero-decimal currency writes none.
pub fn document_places(currency: &str) -> u32 {
    if crate::money::ZERO_DECIMAL.contains(&currency) {
        0
    } else {
        2
    }
}

impl Document {
    /// Checks the input and computes every amount.
    pub fn build(input: DocumentInput) -> Result<Document, DocumentError> {
        if input.number.trim().is_empty() {
            return Err(missing(
                "BT-1",
                "invoice number",
                "BR-02: every invoice has a number",
            ));
        }
        if !is_date(&input.issue_date) {
            return Err(invalid(
                "BT-2",
                "issue date",
                format!("`{}` is not a date YYYY-MM-DD", input.issue_date),
            ));
        }
        let currency = crate::money::currency_code(&input.currency)
            .map_err(|e| invalid("BT-5", "invoice currency code", e.to_string()))?;
        if !super::codes::is_currency(&currency) {
            return Err(invalid(
                "BT-5",
                "invoice currency code",
                format!("`{currency}` is not an ISO 4217 currency code (BR-CL-04)"),
            ));
        }
        if let Kind::CreditNote {
            preceding,
            preceding_date,
        } = &input.kind
        {
            if preceding.trim().is_empty() {
                return Err(missing(
                    "BT-25",
                    "preceding invoice reference",
                    "a credit note names the invoice it corrects",
                ));
            }
            if let Some(d) = preceding_date {
                if !is_date(d) {
                    return Err(invalid(
                        "BT-26",
                        "preceding invoice issue date",
                        format!("`{d}` is not a date YYYY-MM-DD"),
                    ));
                }
            }
        }
        check_party(&input.seller, true)?;
        check_party(&input.buyer, false)?;
        if input.lines.is_empty() {
            return Err(missing(
                "BG-25",
                "invoice line",
                "BR-16: an invoice has at least one line",
            ));
        }
        let places = document_places(&currency);
        let mut lines = Vec::with_capacity(input.lines.len());
        let mut breakdown: Vec<VatBreakdown> = Vec::new();
        for line in &input.lines {
            if line.name.trim().is_empty() {
                return Err(missing(
                    "BT-153",
                    "item name",
                    "BR-25: every line names its item",
                ));
            }
            if line.unit_price.is_negative() {
                return Err(invalid(
                    "BT-146",
                    "item net price",
                    "BR-27: a price is not negative",
                ));
            }
            if line.quantity.is_zero() {
                return Err(invalid(
                    "BT-129",
                    "invoiced quantity",
                    "a line bills a quantity other than zero",
                ));
            }
            check_rate(line)?;
            check_exemption(line)?;
            super::details::check_line(&line.details)?;
            check_category_parties(line.vat_category, &input.seller, &input.buyer)?;
            // Rounded once, to the currency's places (a zero-decimal
            // currency's line of 10.5 yen is 11 yen: BR-DEC allows 2).
            let exact = line.quantity.checked_mul(line.unit_price);
            let net = fits(
                exact.and_then(|v| v.round(places)),
                "BT-131",
                "invoice line net amount",
            )?;
            let stated = match line.details.vat_amount {
                Some(v) => Some(fits(v.round(places), "BT-117", "VAT category tax amount")?),
                None => None,
            };
            if stated.is_some_and(|v| !v.is_zero()) && line.vat_category != VatCategory::S {
                return Err(invalid(
                    "BT-117",
                    "VAT category tax amount",
                    format!(
                        "a line of category {} charges no VAT",
                        line.vat_category.code()
                    ),
                ));
            }
            VatBreakdown::add_line(&mut breakdown, line, net, stated, places)?;
            lines.push(Line {
                input: line.clone(),
                net,
            });
        }
        let allowance_charges = super::allowance::check_all(&input, places)?;
        super::allowance::join(&allowance_charges, &mut breakdown, places)?;
        let zero = Dec::new(0, places);
        let vat = super::breakdown::taxes(&mut breakdown, places)?;
        let mut sum = zero;
        for l in &lines {
            sum = fits(
                sum.checked_add(l.net),
                "BT-106",
                "sum of invoice line net amounts",
            )?;
        }
        let (allowances, charges) = super::allowance::sums(&allowance_charges, places)?;
        let without_vat = fits(
            sum.checked_sub(allowances)
                .and_then(|v| v.checked_add(charges)),
            "BT-109",
            "invoice total amount without VAT",
        )?;
        // Without allowances or charges, the lines' total is refused as
        // before (BT-112 below): the refusals of a frozen input stay.
        if without_vat.is_negative() && !allowance_charges.is_empty() {
            return Err(invalid(
                "BT-109",
                "invoice total amount without VAT",
                format!(
                    "the allowances ({allowances}) take more than the lines ({sum}) and the charges ({charges}) come to"
                ),
            ));
        }
        let with_vat = fits(
            without_vat.checked_add(vat),
            "BT-112",
            "invoice total amount with VAT",
        )?;
        let rounding = match input.rounding {
            None => None,
            Some(r) => {
                if r.scale() > 2 {
                    return Err(invalid(
                        "BT-114",
                        "rounding amount",
                        format!("{r} has more than the 2 decimals an amount has"),
                    ));
                }
                Some(fits(r.round(places), "BT-114", "rounding amount")?)
            }
        };
        // BR-CO-16: due = with VAT − paid + rounding; paid in full pays both.
        let payable = fits(
            with_vat.checked_add(rounding.unwrap_or(zero)),
            "BT-115",
            "amount due for payment",
        )?;
        let paid = super::settlement::paid(&input, payable, places)?;
        let totals = Totals {
            lines: sum,
            allowances,
            charges,
            without_vat,
            vat,
            with_vat,
            rounding,
            paid,
            due: fits(
                payable.checked_sub(paid),
                "BT-115",
                "amount due for payment",
            )?,
        };

        if totals.with_vat.is_negative() {
            return Err(invalid(
                "BT-112",
                "invoice total amount with VAT",
                "a credit note states positive amounts; this total is negative",
            ));
        }
        if payable.is_negative() {
            return Err(invalid(
                "BT-114",
                "rounding amount",
                "the amount payable (with VAT, plus the rounding) is negative",
            ));
        }
        super::terms::check(&input, totals.due)?;
        super::settlement::check(&input, totals.due)?;
        super::details::check(&input)?;
        super::peppol::check_national(&input, totals.due)?;
        let mut input = input;
        input.currency = currency;
        Ok(Document {
            input,
            lines,
            allowance_charges,
            breakdown,
            totals,
            places,
        })
    }

    /// The type code (BT-3): 380 or 381.
    pub fn type_code(&self) -> &'static str {
        match self.input.kind {
            Kind::Invoice => "380",
            Kind::CreditNote { .. } => "381",
        }
    }

    /// Whether it is paid in full (the note "Paid"): `paid` as given, or a
    /// paid amount (BT-113) that leaves nothing due.
    pub fn paid_in_full(&self) -> bool {
        match self.input.details.paid_amount {
            None => self.input.paid,
            Some(_) => self.totals.due.is_zero() && self.totals.paid.is_positive(),
        }
    }

    /// The means of payment it states (BG-16).
    pub fn means(&self) -> Option<super::settlement::Means<'_>> {
        super::settlement::means(&self.input, self.totals.due)
    }

    /// An amount of this document as written (its currency's places: every
    /// amount [`Document::build`] computed has them already).
    pub fn amount(&self, d: Dec) -> String {
        d.round(self.places).unwrap_or(d).to_string()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn seller() -> Party {
        Party {
            name: "Counterfoil Shop BV".into(),
            street: Some("Rue Haute 1".into()),
            city: Some("Brussels".into()),
            postcode: Some("1000".into()),
            country: "BE".into(),
            vat_id: Some("BE0123456749".into()),
            legal_id: Some("0123456749".into()),
            email: Some("billing@example.invalid".into()),
            electronic_address: Some("0123456749".into()),
            electronic_address_scheme: Some("0208".into()),
            iban: Some("BE68539007547034".into()),
            ..Party::default()
        }
    }

    fn buyer() -> Party {
        Party {
            name: "Acme GmbH".into(),
            country: "DE".into(),
            vat_id: Some("DE123456789".into()),
            electronic_address: Some("buyer@example.invalid".into()),
            electronic_address_scheme: Some("EM".into()),
            ..Party::default()
        }
    }

    pub(crate) fn line(name: &str, q: &str, p: &str, rate: &str, c: VatCategory) -> LineInput {
        LineInput {
            name: name.into(),
            quantity: Dec::parse(q).unwrap(),
            unit_price: Dec::parse(p).unwrap(),
            vat_rate: Dec::parse(rate).unwrap(),
            vat_category: c,
            details: LineDetails::default(),
        }
    }

    fn input(lines: Vec<LineInput>, currency: &str) -> DocumentInput {
        DocumentInput {
            kind: Kind::Invoice,
            number: "2026-0001".into(),
            issue_date: "2026-12-03".into(),
            currency: currency.into(),
            buyer_reference: Some("order 42".into()),
            seller: seller(),
            buyer: buyer(),
            lines,
            paid: true,
            rounding: None,
            due_date: None,
            payment_terms: None,
            details: DocumentDetails::default(),
        }
    }

    #[test]
    fn a_rounding_amount_makes_the_payable_amount() {
        // The shop charged 2.55 by its own rounding; EN 16931's total with
        // VAT is 2.54: BT-114 carries the cent, and nothing is due.
        let mut i = input(
            vec![
                line("Sticker", "1", "1.05", "21", VatCategory::S),
                line("Sticker", "1", "1.05", "21", VatCategory::S),
            ],
            "EUR",
        );
        i.rounding = Some(Dec::parse("0.01").unwrap());
        let d = Document::build(i.clone()).unwrap();
        assert_eq!(d.totals.with_vat.to_string(), "2.54");
        assert_eq!(d.totals.paid.to_string(), "2.55");
        assert_eq!(d.totals.due.to_string(), "0.00");
        i.paid = false;
        assert!(
            matches!(
                Document::build(i.clone()),
                Err(DocumentError::Missing { term: "BT-9", .. })
            ),
            "an amount due without a due date or terms (BR-CO-25)"
        );
        i.payment_terms = Some("Payable within 14 days".into());
        assert_eq!(
            Document::build(i.clone()).unwrap().totals.due.to_string(),
            "2.55"
        );
        i.rounding = Some(Dec::parse("0.001").unwrap());
        assert!(matches!(
            Document::build(i),
            Err(DocumentError::Invalid { term: "BT-114", .. })
        ));
    }

    #[test]
    fn totals_by_the_calculation_rules() {
        let d = Document::build(input(
            vec![
                line("Book", "3", "19.99", "6", VatCategory::S),
                line("Pen", "1", "2.345", "21", VatCategory::S),
                line("Bag", "2", "10", "21", VatCategory::S),
            ],
            "EUR",
        ))
        .unwrap();
        let nets: Vec<String> = d.lines.iter().map(|l| l.net.to_string()).collect();
        assert_eq!(nets, ["59.97", "2.35", "20.00"]);
        assert_eq!(d.breakdown.len(), 2);
        assert_eq!(
            (
                d.breakdown[0].base.to_string(),
                d.breakdown[0].tax.to_string()
            ),
            ("59.97".into(), "3.60".into())
        );
        assert_eq!(
            (
                d.breakdown[1].base.to_string(),
                d.breakdown[1].tax.to_string()
            ),
            ("22.35".into(), "4.69".into())
        );
        assert_eq!(d.totals.lines.to_string(), "82.32");
        assert_eq!(d.totals.vat.to_string(), "8.29");
        assert_eq!(d.totals.with_vat.to_string(), "90.61");
        assert_eq!(
            (d.totals.paid.to_string(), d.totals.due.to_string()),
            ("90.61".into(), "0.00".into())
        );
    }

    #[test]
    fn yen_has_no_decimals_and_dinar_amounts_take_two() {
        let d = Document::build(input(
            vec![line("Tea", "2", "1500", "10", VatCategory::S)],
            "JPY",
        ))
        .unwrap();
        assert_eq!(d.amount(d.totals.with_vat), "3300");
        // A price keeps its third decimal (BT-146); amounts take two (BR-DEC-23).
        let k = Document::build(input(
            vec![line("Tea", "1", "1.255", "0", VatCategory::Z)],
            "KWD",
        ))
        .unwrap();
        assert_eq!(k.amount(k.totals.with_vat), "1.26");
        // A yen line whose amount has decimals is rounded once, half away
        // from zero, to whole yen (not refused, not rounded twice).
        let y = Document::build(input(
            vec![
                line("Tea", "1", "10.5", "10", VatCategory::S),
                line("Cup", "1", "10.495", "10", VatCategory::S),
            ],
            "JPY",
        ))
        .unwrap();
        let nets: Vec<String> = y.lines.iter().map(|l| y.amount(l.net)).collect();
        assert_eq!(nets, ["11", "10"]);
        assert_eq!(y.amount(y.totals.vat), "2");
    }

    #[test]
    fn what_is_missing_is_named() {
        let mut i = input(vec![line("Book", "1", "10", "21", VatCategory::S)], "EUR");
        i.number = String::new();
        assert!(matches!(
            Document::build(i.clone()),
            Err(DocumentError::Missing { term: "BT-1", .. })
        ));
        i.number = "1".into();
        i.seller.vat_id = None;
        assert!(matches!(
            Document::build(i.clone()),
            Err(DocumentError::Missing { term: "BT-31", .. })
        ));
        i.seller = seller();
        i.lines = vec![line("Service", "1", "100", "0", VatCategory::AE)];
        i.buyer.vat_id = None;
        assert!(matches!(
            Document::build(i.clone()),
            Err(DocumentError::Missing { term: "BT-48", .. })
        ));
        i.kind = Kind::CreditNote {
            preceding: String::new(),
            preceding_date: None,
        };
        assert!(matches!(
            Document::build(i),
            Err(DocumentError::Missing { term: "BT-25", .. })
        ));
    }
}
