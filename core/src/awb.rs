//! Air waybill (AWB) numbers: one parser, one validator, one block expander.
//!
//! An AWB number is 11 digits: a 3-digit airline prefix, a 7-digit serial and
//! a check digit equal to `serial mod 7` (so 0–6). The canonical form is
//! `157-40121012` (prefix, hyphen, serial and check digit). People write it
//! `157-40121012`, `157-4012 1012`, `15740121012`, with spaces around:
//! [`Awb::parse`] accepts those spellings and nothing else, and every error
//! says exactly what is wrong (length, a non-digit and where, the check digit
//! expected and found). The stock states and their legal transitions are one
//! table here ([`TRANSITIONS`]); the store writes status only through it.

use std::fmt;
use std::str::FromStr;

/// Why a text is not an AWB number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AwbError {
    /// Nothing but spaces.
    #[error("the air waybill number is empty")]
    Empty,
    /// A character that is not a digit, a space or the one hyphen after the prefix.
    #[error(
        "`{ch}` at position {at} is not a digit (write 157-40121012, 157-4012 1012 or 15740121012)"
    )]
    BadCharacter {
        /// The character.
        ch: char,
        /// Its position (1-based, in the text as given).
        at: usize,
    },
    /// A hyphen anywhere but after the 3-digit prefix.
    #[error("the hyphen must follow the 3-digit airline prefix (157-40121012)")]
    MisplacedHyphen,
    /// Not 11 digits.
    #[error(
        "an air waybill number has 11 digits (3 prefix, 7 serial, 1 check); this one has {digits}"
    )]
    Length {
        /// Digits found.
        digits: usize,
    },
    /// The last digit is not the serial mod 7.
    #[error(
        "wrong check digit: serial {serial:07} mod 7 is {expected}, but the number ends in {got}"
    )]
    CheckDigit {
        /// The 7-digit serial.
        serial: u32,
        /// serial mod 7.
        expected: u8,
        /// The digit given.
        got: u8,
    },
    /// A block whose first serial is above its last, or spans two prefixes.
    #[error("invalid block: {0}")]
    Block(String),
}

impl AwbError {
    /// A stable snake_case name (shared vectors, bindings).
    pub fn name(&self) -> &'static str {
        match self {
            AwbError::Empty => "empty",
            AwbError::BadCharacter { .. } => "bad_character",
            AwbError::MisplacedHyphen => "misplaced_hyphen",
            AwbError::Length { .. } => "length",
            AwbError::CheckDigit { .. } => "check_digit",
            AwbError::Block(_) => "block",
        }
    }
}

/// A valid AWB number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Awb {
    prefix: u16,
    serial: u32,
}

/// The largest block [`expand_block`] expands.
pub const MAX_BLOCK: u32 = 100_000;

impl Awb {
    /// The number with `prefix` (0–999) and `serial` (0–9,999,999); its check
    /// digit is computed.
    pub fn new(prefix: u16, serial: u32) -> Result<Self, AwbError> {
        if prefix > 999 || serial > 9_999_999 {
            return Err(AwbError::Length { digits: 12 });
        }
        Ok(Self { prefix, serial })
    }

    /// Parses and validates any accepted spelling.
    pub fn parse(text: &str) -> Result<Self, AwbError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(AwbError::Empty);
        }
        let lead = text.len() - text.trim_start().len();
        let mut digits: Vec<u8> = Vec::with_capacity(11);
        let mut hyphen = false;
        for (i, ch) in trimmed.chars().enumerate() {
            match ch {
                '0'..='9' => digits.push(ch as u8 - b'0'),
                ' ' => {}
                '-' if digits.len() == 3 && !hyphen => hyphen = true,
                '-' => return Err(AwbError::MisplacedHyphen),
                other => {
                    return Err(AwbError::BadCharacter {
                        ch: other,
                        at: lead + i + 1,
                    })
                }
            }
        }
        if digits.len() != 11 {
            return Err(AwbError::Length {
                digits: digits.len(),
            });
        }
        let prefix = digits[..3].iter().fold(0u16, |a, d| a * 10 + u16::from(*d));
        let serial = digits[3..10]
            .iter()
            .fold(0u32, |a, d| a * 10 + u32::from(*d));
        let got = digits[10];
        let awb = Self { prefix, serial };
        if awb.check_digit() != got {
            return Err(AwbError::CheckDigit {
                serial,
                expected: awb.check_digit(),
                got,
            });
        }
        Ok(awb)
    }

    /// Whether `text` is a valid AWB number in an accepted spelling.
    pub fn is_valid(text: &str) -> bool {
        Self::parse(text).is_ok()
    }

    /// The canonical spelling of any accepted spelling.
    pub fn normalize(text: &str) -> Result<String, AwbError> {
        Self::parse(text).map(|a| a.to_string())
    }

    /// The airline prefix.
    pub fn prefix(&self) -> u16 {
        self.prefix
    }

    /// The 7-digit serial.
    pub fn serial(&self) -> u32 {
        self.serial
    }

    /// serial mod 7.
    pub fn check_digit(&self) -> u8 {
        (self.serial % 7) as u8
    }
}

impl fmt::Display for Awb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:03}-{:07}{}",
            self.prefix,
            self.serial,
            self.check_digit()
        )
    }
}

impl FromStr for Awb {
    type Err = AwbError;
    fn from_str(s: &str) -> Result<Self, AwbError> {
        Self::parse(s)
    }
}

/// Expands a block from its first and last numbers (each validated, so a typo
/// in either refuses the whole block), every number in between generated and
/// validated again.
pub fn expand_block(first: &str, last: &str) -> Result<Vec<Awb>, AwbError> {
    let a = Awb::parse(first)?;
    let b = Awb::parse(last)?;
    if a.prefix != b.prefix {
        return Err(AwbError::Block(format!(
            "first {a} and last {b} have different airline prefixes"
        )));
    }
    if a.serial > b.serial {
        return Err(AwbError::Block(format!("first {a} is after last {b}")));
    }
    let size = b.serial - a.serial + 1;
    if size > MAX_BLOCK {
        return Err(AwbError::Block(format!(
            "{size} numbers; the largest block is {MAX_BLOCK}"
        )));
    }
    (a.serial..=b.serial)
        .map(|s| Awb::parse(&Awb::new(a.prefix, s)?.to_string()))
        .collect()
}

/// The state of a stock number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AwbState {
    /// In stock, can be issued.
    Ready,
    /// Reserved for a shipment.
    Assigned,
    /// Printed on an air waybill.
    Issued,
    /// The shipment flew: final.
    Executed,
    /// Withdrawn (damaged, lost, mistyped).
    Voided,
    /// Given back to the airline.
    Cancelled,
}

impl AwbState {
    /// Every state.
    pub const ALL: [AwbState; 6] = [
        AwbState::Ready,
        AwbState::Assigned,
        AwbState::Issued,
        AwbState::Executed,
        AwbState::Voided,
        AwbState::Cancelled,
    ];

    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            AwbState::Ready => "ready",
            AwbState::Assigned => "assigned",
            AwbState::Issued => "issued",
            AwbState::Executed => "executed",
            AwbState::Voided => "voided",
            AwbState::Cancelled => "cancelled",
        }
    }

    /// Parses the stored text.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// The legal transitions, the one table every write of status goes through.
/// Voided and cancelled are reachable from every state but executed.
pub const TRANSITIONS: &[(AwbState, AwbState)] = &[
    (AwbState::Ready, AwbState::Assigned),
    (AwbState::Assigned, AwbState::Ready),
    (AwbState::Assigned, AwbState::Assigned),
    (AwbState::Assigned, AwbState::Issued),
    (AwbState::Issued, AwbState::Executed),
    (AwbState::Ready, AwbState::Voided),
    (AwbState::Assigned, AwbState::Voided),
    (AwbState::Issued, AwbState::Voided),
    (AwbState::Ready, AwbState::Cancelled),
    (AwbState::Assigned, AwbState::Cancelled),
    (AwbState::Issued, AwbState::Cancelled),
];

/// Whether `from → to` is legal.
pub fn can_transition(from: AwbState, to: AwbState) -> bool {
    TRANSITIONS.contains(&(from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        for s in [
            "157-40121012",
            "157-4012 1012",
            "15740121012",
            "  157-40121012 ",
            "157-4012101 2",
        ] {
            assert_eq!(Awb::normalize(s).unwrap(), "157-40121012", "{s}");
        }
        assert_eq!(
            Awb::parse("157-40121013"),
            Err(AwbError::CheckDigit {
                serial: 4012101,
                expected: 2,
                got: 3
            })
        );
        assert_eq!(
            Awb::parse("157-4012101"),
            Err(AwbError::Length { digits: 10 })
        );
        assert_eq!(
            Awb::parse("157-4O121012"),
            Err(AwbError::BadCharacter { ch: 'O', at: 6 })
        );
        assert_eq!(Awb::parse("1574-0121012"), Err(AwbError::MisplacedHyphen));
        assert_eq!(Awb::parse("157--40121012"), Err(AwbError::MisplacedHyphen));
        assert_eq!(Awb::parse("   "), Err(AwbError::Empty));
        let e = Awb::parse("157-40121013").unwrap_err().to_string();
        assert!(e.contains("mod 7 is 2") && e.contains("ends in 3"), "{e}");
    }

    #[test]
    fn blocks() {
        let b = expand_block("157-40121012", "157-40121023").unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].to_string(), "157-40121023");
        assert!(
            expand_block("157-40121013", "157-40121023").is_err(),
            "typo in first"
        );
        assert!(
            expand_block("157-40121012", "157-40121024").is_err(),
            "typo in last"
        );
        assert!(expand_block("157-40121023", "157-40121012").is_err());
        assert!(expand_block("157-40121012", "176-40121023").is_err());
    }

    #[test]
    fn transitions() {
        assert!(can_transition(AwbState::Ready, AwbState::Assigned));
        for to in AwbState::ALL {
            assert!(!can_transition(AwbState::Executed, to), "executed → {to:?}");
        }
        assert!(!can_transition(AwbState::Ready, AwbState::Executed));
        assert!(!can_transition(AwbState::Voided, AwbState::Ready));
    }
}
