//! Credit notes (corrective invoices): the series a refund of an invoice is
//! numbered in, what kind of document a series holds, and how much of an
//! invoice may still be credited.
//!
//! Invariants:
//! - a credit note is numbered in the period it is issued: the credit-note
//!   series of a refund in `year` of an invoice of series `{issuer}:{y}` is
//!   `{issuer}:cn:{year}` (under a monthly rule, of an invoice of
//!   `{issuer}:{yyyy-mm}`, `{issuer}:cn:{yyyy-mm}` of the month it is
//!   issued; so the `continue` plan links credit-note series only among
//!   themselves); of an invoice of any other series `s`, `s:cn`. A
//!   credit-note series has no credit-note series of its own;
//! - a series is a credit-note series exactly when its key ends in `:cn`,
//!   `:cn:{yyyy}` or `:cn:{yyyy-mm}` ([`kind_of`]);
//! - amounts are counted in the currency's smallest unit (the exponent of
//!   [`crate::money::exponent`]), never in floating point; a decimal amount
//!   with more decimals than its currency has is refused, not rounded;
//! - a credit note is for more than zero and at most the remainder: the
//!   invoice's amount less every credit note already issued for it
//!   ([`credit_note_amount`]); with nothing left, no credit note is made.

use crate::error::{Error, Result};
use crate::fiscal::PeriodKey;
use crate::money;
use crate::scope::ScopeKey;
use crate::series_life::issuer_and_period;

/// What a series numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Invoices (every series that is not a credit-note series).
    Invoice,
    /// Credit notes.
    CreditNote,
}

impl Kind {
    /// `invoice` or `credit_note`, as the export writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Invoice => "invoice",
            Kind::CreditNote => "credit_note",
        }
    }
}

/// The marker segment of a credit-note series.
pub const MARKER: &str = "cn";

/// The default number template of credit notes.
pub const DEFAULT_TEMPLATE: &str = "CN-{year}-{seq:04}";

/// What series `scope` numbers.
pub fn kind_of(scope: &str) -> Kind {
    let body = issuer_and_period(scope).map_or(scope, |(head, _)| head);
    if body.ends_with(":cn") {
        Kind::CreditNote
    } else {
        Kind::Invoice
    }
}

/// The series of a credit note issued in `year` for an invoice of series
/// `scope`: `{issuer}:cn:{year}` for `{issuer}:{y}`, else `{scope}:cn`; an
/// error for a credit-note series, a year outside 1..=9999 or a key that
/// would grow too long.
pub fn series_for(scope: &str, year: u32) -> Result<String> {
    series_for_period(scope, PeriodKey { year, month: None })
}

/// [`series_for`] in a numbering period: `{issuer}:cn:{period}` (`2027`, or
/// `2027-03` under a monthly rule) for an invoice of `{issuer}:{period}`.
pub fn series_for_period(scope: &str, period: PeriodKey) -> Result<String> {
    ScopeKey::new(scope)?;
    if !crate::scope::YEARS.contains(&period.year)
        || period.month.is_some_and(|m| !(1..=12).contains(&m))
    {
        return Err(Error::InvalidArgument {
            name: "year",
            reason: format!(
                "period {} is outside 1..=9999 or not a month",
                period.label()
            ),
        });
    }
    if kind_of(scope) == Kind::CreditNote {
        return Err(Error::InvalidArgument {
            name: "scope",
            reason: format!("`{scope}` is a credit-note series; a credit note corrects an invoice"),
        });
    }
    let key = match issuer_and_period(scope) {
        Some((issuer, _)) => format!("{issuer}:{MARKER}:{}", period.label()),
        None => format!("{scope}:{MARKER}"),
    };
    Ok(ScopeKey::new(key)?.as_str().to_owned())
}

/// `amount` (a decimal string such as `19.99`) of `currency` in the
/// currency's smallest unit: `"19.99"` EUR is 1999, `"5"` EUR 500, `"500"`
/// JPY 500; more decimals than the currency has is an error.
pub fn minor_units(amount: &str, currency: &str) -> Result<u64> {
    let code = money::currency_code(currency)?;
    let places = money::exponent(&code) as usize;
    let bad = |why: String| Error::InvalidArgument {
        name: "amount",
        reason: why,
    };
    let (whole, fraction) = amount.split_once('.').unwrap_or((amount, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || amount.ends_with('.') {
        return Err(bad(format!(
            "`{amount}` is not a decimal amount such as 19.99"
        )));
    }
    if fraction.len() > places {
        return Err(bad(format!(
            "`{amount}` has more than {places} decimals, the smallest unit of {code}"
        )));
    }
    if whole.trim_start_matches('0').len() > money::MAX_WHOLE_DIGITS {
        return Err(bad(format!(
            "`{amount}` has more than {} digits before the point",
            money::MAX_WHOLE_DIGITS
        )));
    }
    let padded = format!("{whole}{fraction:0<places$}");
    padded
        .parse::<u64>()
        .map_err(|_| bad(format!("`{amount}` is out of range")))
}

/// What may still be credited of an invoice of `invoice_minor` after
/// credit notes totalling `credited_minor` (never below zero).
pub fn remainder(invoice_minor: u64, credited_minor: u64) -> u64 {
    invoice_minor.saturating_sub(credited_minor)
}

/// The amount of a new credit note: `requested` (None: everything that is
/// left), refused when it is zero, when nothing is left, or when it is more
/// than what is left.
pub fn credit_note_amount(
    invoice_minor: u64,
    credited_minor: u64,
    requested: Option<u64>,
) -> Result<u64> {
    let left = remainder(invoice_minor, credited_minor);
    let refuse = |reason: String| {
        Err(Error::InvalidArgument {
            name: "refund",
            reason,
        })
    };
    if left == 0 {
        return refuse(format!(
            "nothing is left to credit: {credited_minor} of {invoice_minor} is credited already"
        ));
    }
    match requested {
        None => Ok(left),
        Some(0) => refuse("a credit note is for more than zero".to_owned()),
        Some(r) if r > left => refuse(format!(
            "{r} is more than what is left to credit ({left} of {invoice_minor})"
        )),
        Some(r) => Ok(r),
    }
}

/// The longest reason a credit note records, in bytes.
pub const MAX_REASON: usize = 255;

/// A refund to document by a credit note of an invoice: what
/// `hold_credit_note` records, checked before anything is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditNoteRequest {
    refund: crate::payment::PaymentRef,
    requested: Option<u64>,
    reason: String,
    invoice_scope: ScopeKey,
    invoice_number: u64,
    invoice_minor: u64,
    currency: String,
}

impl CreditNoteRequest {
    /// The refund `refund` (gateway, refund id as the transaction id) of
    /// `requested` (a decimal amount of `currency`; `None`: everything left)
    /// on the invoice `invoice_number` of `invoice_scope`, whose amount is
    /// `invoice_amount` of `currency`, for `reason` (at most
    /// [`MAX_REASON`] bytes). Amounts are read by [`minor_units`].
    pub fn new(
        refund: crate::payment::PaymentRef,
        requested: Option<&str>,
        currency: &str,
        invoice_scope: ScopeKey,
        invoice_number: u64,
        invoice_amount: &str,
        reason: &str,
    ) -> Result<Self> {
        let currency = money::currency_code(currency)?;
        if reason.len() > MAX_REASON {
            return Err(Error::InvalidArgument {
                name: "reason",
                reason: format!("the reason is {} bytes; at most {MAX_REASON}", reason.len()),
            });
        }
        if kind_of(invoice_scope.as_str()) == Kind::CreditNote {
            return Err(Error::InvalidArgument {
                name: "scope",
                reason: format!(
                    "`{}` is a credit-note series; a credit note corrects an invoice",
                    invoice_scope.as_str()
                ),
            });
        }
        Ok(Self {
            requested: requested.map(|a| minor_units(a, &currency)).transpose()?,
            invoice_minor: minor_units(invoice_amount, &currency)?,
            refund,
            reason: reason.to_owned(),
            invoice_scope,
            invoice_number,
            currency,
        })
    }

    /// The refund (gateway, refund id).
    pub fn refund(&self) -> &crate::payment::PaymentRef {
        &self.refund
    }

    /// The amount asked for, in smallest units (`None`: everything left).
    pub fn requested(&self) -> Option<u64> {
        self.requested
    }

    /// Why the invoice is credited.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The invoice's series.
    pub fn invoice_scope(&self) -> &ScopeKey {
        &self.invoice_scope
    }

    /// The invoice's number in its series.
    pub fn invoice_number(&self) -> u64 {
        self.invoice_number
    }

    /// The invoice's amount, in smallest units.
    pub fn invoice_minor(&self) -> u64 {
        self.invoice_minor
    }

    /// The invoice's (and the credit note's) currency, upper case.
    pub fn currency(&self) -> &str {
        &self.currency
    }
}

/// What recording a refund's credit note found (`hold_credit_note`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreditNoteHeld {
    /// The credit note's row, naming its invoice: recorded by this call
    /// (`created`), or by an earlier delivery of the same refund. Its
    /// number comes from the payment flow (`record_payment` of `scope`).
    Recorded {
        /// The credit note's series.
        scope: String,
        /// Its amount, a decimal string of the invoice's currency.
        amount: String,
        /// This call wrote the row (or named the invoice on a row an
        /// earlier delivery left without it).
        created: bool,
    },
    /// Refused by [`credit_note_amount`]: zero, nothing left, or more than
    /// what is left. Nothing was written.
    Refused {
        /// The invoice's amount, in smallest units.
        invoice_minor: u64,
        /// What its credit notes total, in smallest units.
        credited_minor: u64,
        /// What the refund asked for (`None`: everything left).
        requested_minor: Option<u64>,
    },
    /// The refund id was recorded for another invoice or another amount, or
    /// is not a credit note's: a refund is never credited twice under a
    /// reused id. Nothing was written.
    Mismatch,
    /// The invoice's number is not issued (void, unfinished, unknown):
    /// nothing was written.
    NotIssued,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_and_kinds() {
        assert_eq!(series_for("42:2026", 2027).unwrap(), "42:cn:2027");
        assert_eq!(series_for("shop", 2027).unwrap(), "shop:cn");
        assert!(series_for("42:cn:2026", 2026).is_err());
        assert!(series_for("42:2026", 0).is_err());
        assert_eq!(kind_of("42:cn:2026"), Kind::CreditNote);
        assert_eq!(kind_of("shop:cn"), Kind::CreditNote);
        assert_eq!(kind_of("42:2026"), Kind::Invoice);
        assert_eq!(kind_of("cn:2026"), Kind::Invoice);
    }

    #[test]
    fn amounts() {
        assert_eq!(minor_units("19.99", "eur").unwrap(), 1999);
        assert_eq!(minor_units("19.9", "EUR").unwrap(), 1990);
        assert_eq!(minor_units("500", "JPY").unwrap(), 500);
        assert!(minor_units("5.5", "JPY").is_err());
        assert_eq!(credit_note_amount(1999, 500, None).unwrap(), 1499);
        assert_eq!(credit_note_amount(1999, 500, Some(1499)).unwrap(), 1499);
        assert!(credit_note_amount(1999, 500, Some(1500)).is_err());
        assert!(credit_note_amount(1999, 1999, None).is_err());
        assert!(credit_note_amount(1999, 0, Some(0)).is_err());
    }
}
