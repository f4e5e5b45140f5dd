//! Exact decimals for documents: a mantissa and a scale (`1995` and 2 is
//! 19.95), parsed from and written as plain decimal strings, multiplied and
//! added without floating point, rounded half away from zero (EN 16931's
//! commercial rounding).
//!
//! Invariants: a value is never written in exponent form; [`Dec::round`] to
//! n places gives at most n decimals; trailing zeros are kept as the scale
//! says (the serializers choose the scale they write); the mantissa is a
//! 64-bit integer and every operation is checked — a result that does not
//! fit is `None`, never wrapped — so every backend (the pure-PHP one's
//! integers are 64-bit too) refuses exactly the same documents.

use std::cmp::Ordering;
use std::fmt;

/// A decimal number.
#[derive(Clone, Copy, Debug)]
pub struct Dec {
    mantissa: i64,
    scale: u32,
}

/// Most decimals a parsed value may carry.
pub const MAX_SCALE: u32 = 9;

impl Dec {
    /// Zero.
    pub const ZERO: Dec = Dec {
        mantissa: 0,
        scale: 0,
    };

    /// `mantissa` × 10^-`scale`.
    pub const fn new(mantissa: i64, scale: u32) -> Self {
        Dec { mantissa, scale }
    }

    /// Parses `123`, `-4.50`, `0.125` (at most [`MAX_SCALE`] decimals and 18
    /// digits in all); `None` for anything else.
    pub fn parse(text: &str) -> Option<Dec> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (whole, fraction) = match digits.split_once('.') {
            Some((w, f)) => (w, f),
            None => (digits, ""),
        };
        if whole.is_empty()
            || whole.len() + fraction.len() > 18
            || fraction.len() > MAX_SCALE as usize
            || (digits.contains('.') && fraction.is_empty())
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || !fraction.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let mantissa: i64 = format!("{whole}{fraction}").parse().ok()?;
        Some(Dec {
            mantissa: if negative { -mantissa } else { mantissa },
            scale: fraction.len() as u32,
        })
    }

    /// The number of decimals it carries.
    pub fn scale(self) -> u32 {
        self.scale
    }

    /// Whether it is below zero.
    pub fn is_negative(self) -> bool {
        self.mantissa < 0
    }

    /// Whether it is above zero.
    pub fn is_positive(self) -> bool {
        self.mantissa > 0
    }

    /// Whether it is zero.
    pub fn is_zero(self) -> bool {
        self.mantissa == 0
    }

    /// Its absolute value, or `None` when it does not fit.
    pub fn checked_abs(self) -> Option<Dec> {
        Some(Dec {
            mantissa: self.mantissa.checked_abs()?,
            scale: self.scale,
        })
    }

    fn rescaled(self, scale: u32) -> Option<i64> {
        self.mantissa
            .checked_mul(10i64.checked_pow(scale.checked_sub(self.scale)?)?)
    }

    /// The sum, or `None` when it does not fit.
    pub fn checked_add(self, other: Dec) -> Option<Dec> {
        let scale = self.scale.max(other.scale);
        Some(Dec {
            mantissa: self.rescaled(scale)?.checked_add(other.rescaled(scale)?)?,
            scale,
        })
    }

    /// The difference, or `None` when it does not fit.
    pub fn checked_sub(self, other: Dec) -> Option<Dec> {
        self.checked_add(Dec {
            mantissa: other.mantissa.checked_neg()?,
            scale: other.scale,
        })
    }

    /// The exact product, or `None` when it does not fit.
    pub fn checked_mul(self, other: Dec) -> Option<Dec> {
        Some(Dec {
            mantissa: self.mantissa.checked_mul(other.mantissa)?,
            scale: self.scale.checked_add(other.scale)?,
        })
    }

    /// Rounded to `places` decimals, half away from zero, with exactly
    /// `places` of them; `None` when it does not fit.
    pub fn round(self, places: u32) -> Option<Dec> {
        if self.scale <= places {
            return Some(Dec {
                mantissa: self.rescaled(places)?,
                scale: places,
            });
        }
        let divisor = 10i64.checked_pow(self.scale - places)?;
        let quotient = self.mantissa / divisor;
        let remainder = (self.mantissa % divisor).abs();
        let up = remainder >= divisor - remainder;
        let mantissa = if up {
            quotient + self.mantissa.signum()
        } else {
            quotient
        };
        Some(Dec {
            mantissa,
            scale: places,
        })
    }

    /// Written without trailing zeros after the point (`21`, `5.5`, `0.125`).
    pub fn trimmed(self) -> String {
        let mut d = self;
        while d.scale > 0 && d.mantissa % 10 == 0 {
            d.mantissa /= 10;
            d.scale -= 1;
        }
        d.to_string()
    }
}

impl Dec {
    fn cmp_by_digits(&self, other: &Self) -> Ordering {
        // Both signs first, then the integer parts' lengths and digits, then
        // the fractions (padded): exact without arithmetic.
        match (self.is_negative(), other.is_negative()) {
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let parts = |d: &Dec| {
            let t = d.to_string();
            let t = t.trim_start_matches('-').to_owned();
            let (w, f) = t
                .split_once('.')
                .map_or((t.clone(), String::new()), |(w, f)| {
                    (w.to_owned(), f.to_owned())
                });
            (w, f)
        };
        let ((aw, af), (bw, bf)) = (parts(self), parts(other));
        let width = af.len().max(bf.len());
        let a = (aw.len(), aw, format!("{af:0<width$}"));
        let b = (bw.len(), bw, format!("{bf:0<width$}"));
        let ord = a.cmp(&b);
        if self.is_negative() {
            ord.reverse()
        } else {
            ord
        }
    }
}

impl PartialEq for Dec {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Dec {}

impl PartialOrd for Dec {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Dec {
    fn cmp(&self, other: &Self) -> Ordering {
        // Compared digit by digit when a rescale would not fit.
        let scale = self.scale.max(other.scale);
        match (self.rescaled(scale), other.rescaled(scale)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self.cmp_by_digits(other),
        }
    }
}

impl fmt::Display for Dec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.mantissa < 0 { "-" } else { "" };
        let digits = self.mantissa.unsigned_abs().to_string();
        if self.scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        let scale = self.scale as usize;
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (whole, fraction) = padded.split_at(padded.len() - scale);
        write!(f, "{sign}{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    #[test]
    fn parses_and_writes_plain_decimals() {
        for s in ["0", "19.95", "-4.50", "0.125", "1000000", "0.05"] {
            assert_eq!(d(s).to_string(), s);
        }
        for bad in [
            "",
            ".5",
            "5.",
            "1e3",
            "+1",
            "1.2.3",
            "0.1234567890",
            "abc",
            "1234567890123456789",
        ] {
            assert!(Dec::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn rounds_half_away_from_zero() {
        assert_eq!(d("2.345").round(2).unwrap().to_string(), "2.35");
        assert_eq!(d("2.344").round(2).unwrap().to_string(), "2.34");
        assert_eq!(d("-2.345").round(2).unwrap().to_string(), "-2.35");
        assert_eq!(d("7").round(2).unwrap().to_string(), "7.00");
        assert_eq!(d("0.5").round(0).unwrap().to_string(), "1");
    }

    #[test]
    fn multiplies_exactly() {
        assert_eq!(d("3").checked_mul(d("19.99")).unwrap().to_string(), "59.97");
        assert_eq!(
            d("1.5")
                .checked_mul(d("0.333"))
                .unwrap()
                .round(2)
                .unwrap()
                .to_string(),
            "0.50"
        );
        assert_eq!(
            d("100.00").checked_mul(d("21")).unwrap().to_string(),
            "2100.00"
        );
        let big = d("999999999.999999999");
        assert!(
            big.checked_mul(big).is_none(),
            "overflow is refused, not wrapped"
        );
        assert!(big.round(12).is_none());
        assert!(big > d("1") && d("-1") < d("0.5"));
        assert_eq!(d("21").trimmed(), "21");
        assert_eq!(d("5.50").trimmed(), "5.5");
        assert!(d("1.0") == d("1"));
    }
}
