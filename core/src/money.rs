//! Amounts given in a currency's smallest unit (as payment gateways such as
//! Stripe send them), written as the decimal string a payment records.
//!
//! Invariants: a currency is three ASCII letters, returned upper-cased; its
//! exponent is 0 for the zero-decimal currencies (JPY, KRW, …), 3 for the
//! three-decimal ones (BHD, JOD, KWD, OMR, TND) and 2 for every other (ISK,
//! HUF and TWD included: gateways count them in hundredths); the amount is
//! exact (no floating point), with exactly `exponent` decimals, and at most
//! [`MAX_WHOLE_DIGITS`] digits before the point (what a payment row holds).

use crate::error::{Error, Result};

/// Currencies counted in whole units.
pub const ZERO_DECIMAL: [&str; 16] = [
    "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV",
    "XAF", "XOF", "XPF",
];

/// Currencies counted in thousandths.
pub const THREE_DECIMAL: [&str; 5] = ["BHD", "JOD", "KWD", "OMR", "TND"];

/// Most digits before the decimal point of a recorded amount.
pub const MAX_WHOLE_DIGITS: usize = 12;

/// The currency code upper-cased, or an error naming `currency`.
pub fn currency_code(currency: &str) -> Result<String> {
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(Error::InvalidArgument {
            name: "currency",
            reason: format!("a currency is a three-letter ISO code such as EUR, got `{currency}`"),
        });
    }
    Ok(currency.to_ascii_uppercase())
}

/// Decimal places of `code`'s smallest unit (`code` upper-case).
pub fn exponent(code: &str) -> u32 {
    if ZERO_DECIMAL.contains(&code) {
        0
    } else if THREE_DECIMAL.contains(&code) {
        3
    } else {
        2
    }
}

/// `minor` smallest units of `currency` as (`amount`, `CURRENCY`): 1999 EUR
/// is `("19.99", "EUR")`, 500 JPY `("500", "JPY")`, 1999 KWD `("1.999", "KWD")`.
pub fn amount_from_minor_units(minor: u64, currency: &str) -> Result<(String, String)> {
    let code = currency_code(currency)?;
    let places = exponent(&code) as usize;
    let digits = format!("{minor:0>width$}", width = places + 1);
    let (whole, fraction) = digits.split_at(digits.len() - places);
    if whole.len() > MAX_WHOLE_DIGITS {
        return Err(Error::InvalidArgument {
            name: "amount",
            reason: format!(
                "{minor} smallest units of {code} is more than {MAX_WHOLE_DIGITS} digits before the point"
            ),
        });
    }
    let amount = if fraction.is_empty() {
        whole.to_owned()
    } else {
        format!("{whole}.{fraction}")
    };
    Ok((amount, code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponents_and_amounts() {
        assert_eq!(
            amount_from_minor_units(1999, "eur").unwrap(),
            ("19.99".into(), "EUR".into())
        );
        assert_eq!(amount_from_minor_units(5, "usd").unwrap().0, "0.05");
        assert_eq!(amount_from_minor_units(0, "usd").unwrap().0, "0.00");
        assert_eq!(amount_from_minor_units(500, "jpy").unwrap().0, "500");
        assert_eq!(amount_from_minor_units(1999, "KWD").unwrap().0, "1.999");
        assert_eq!(amount_from_minor_units(7, "bhd").unwrap().0, "0.007");
        assert_eq!(amount_from_minor_units(50000, "isk").unwrap().0, "500.00");
        assert!(amount_from_minor_units(1, "eu").is_err());
        assert!(amount_from_minor_units(1, "e1r").is_err());
        assert!(amount_from_minor_units(1, "éur").is_err());
        assert_eq!(
            amount_from_minor_units(99_999_999_999_999, "usd")
                .unwrap()
                .0,
            "999999999999.99"
        );
        assert!(matches!(
            amount_from_minor_units(100_000_000_000_000, "usd"),
            Err(Error::InvalidArgument { name: "amount", .. })
        ));
        assert!(amount_from_minor_units(u64::MAX, "jpy").is_err());
    }
}
