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
