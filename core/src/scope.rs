//! Scope keys: the name of one numbering series.
//!
//! Invariants of a [`ScopeKey`]:
//! - it is non-empty and at most [`ScopeKey::MAX_BYTES`] bytes of UTF-8 (the
//!   `VARCHAR(191)` primary key of the sequences table holds it whole);
//! - it contains no control characters (so it prints on one line and survives
//!   every log and CSV it passes through);
//! - it neither starts nor ends with whitespace (MariaDB's PAD SPACE collations
//!   would otherwise make `"a"` and `"a "` the same key).
//!
//! Any other character is allowed and is stored verbatim: quotes, backslashes
//! and SQL fragments are data, only ever passed as bound parameters.

use std::fmt;

use crate::error::ScopeKeyError;

/// A validated series name, such as `42:2019`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeKey(String);

/// Lowest and highest year accepted by [`ScopeKey::for_user_year`] and by
/// number formats.
pub const YEARS: std::ops::RangeInclusive<u32> = 1..=9999;

impl ScopeKey {
    /// The longest key, in bytes.
    pub const MAX_BYTES: usize = 191;

    /// Validates `key` and wraps it.
    pub fn new(key: impl Into<String>) -> Result<Self, ScopeKeyError> {
        let key = key.into();
        if key.is_empty() {
            return Err(ScopeKeyError::Empty);
        }
        if key.len() > Self::MAX_BYTES {
            return Err(ScopeKeyError::TooLong {
                len: key.len(),
                max: Self::MAX_BYTES,
            });
        }
        if let Some((at, ch)) = key.char_indices().find(|(_, c)| c.is_control()) {
            return Err(ScopeKeyError::ControlCharacter {
                at,
                code: ch as u32,
            });
        }
        if key.starts_with(char::is_whitespace) || key.ends_with(char::is_whitespace) {
            return Err(ScopeKeyError::SurroundingWhitespace);
        }
        Ok(Self(key))
    }

    /// The common per-user, per-year series: `"{user_id}:{year}"`.
    ///
    /// `year` must lie in [`YEARS`].
    pub fn for_user_year(user_id: u64, year: u32) -> Result<Self, ScopeKeyError> {
        if !YEARS.contains(&year) {
            return Err(ScopeKeyError::YearOutOfRange { year });
        }
        Ok(Self(format!("{user_id}:{year}")))
    }

    /// The year of a `"{anything}:{year}"` key, if its last segment is one.
    pub fn year_hint(&self) -> Option<u32> {
        let (_, tail) = self.0.rsplit_once(':')?;
        if tail.len() != 4 || !tail.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        tail.parse().ok().filter(|y| YEARS.contains(y))
    }

    /// The key as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ScopeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for ScopeKey {
    type Err = ScopeKeyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl AsRef<str> for ScopeKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_and_hostile_text_verbatim() {
        for k in [
            "42:2019",
            "a'b\"c\\d",
            "x'; DROP TABLE t; --",
            "ünï:cødé",
            "%_",
        ] {
            assert_eq!(ScopeKey::new(k).unwrap().as_str(), k);
        }
    }

    #[test]
    fn refuses_bad_keys_with_the_reason() {
        assert_eq!(ScopeKey::new(""), Err(ScopeKeyError::Empty));
        assert_eq!(
            ScopeKey::new("x".repeat(192)),
            Err(ScopeKeyError::TooLong { len: 192, max: 191 })
        );
        assert!(ScopeKey::new("x".repeat(191)).is_ok());
        assert_eq!(
            ScopeKey::new("ab\ncd"),
            Err(ScopeKeyError::ControlCharacter { at: 2, code: 10 })
        );
        assert_eq!(
            ScopeKey::new("a\u{0}"),
            Err(ScopeKeyError::ControlCharacter { at: 1, code: 0 })
        );
        assert_eq!(
            ScopeKey::new(" a"),
            Err(ScopeKeyError::SurroundingWhitespace)
        );
        assert_eq!(
            ScopeKey::new("a "),
            Err(ScopeKeyError::SurroundingWhitespace)
        );
        // 191 bytes is the limit in bytes, not characters.
        assert!(matches!(
            ScopeKey::new("é".repeat(96)),
            Err(ScopeKeyError::TooLong { len: 192, .. })
        ));
    }

    #[test]
    fn user_year_scope() {
        let k = ScopeKey::for_user_year(42, 2019).unwrap();
        assert_eq!(k.as_str(), "42:2019");
        assert_eq!(k.year_hint(), Some(2019));
        assert_eq!(
            ScopeKey::for_user_year(1, 0),
            Err(ScopeKeyError::YearOutOfRange { year: 0 })
        );
        assert!(ScopeKey::for_user_year(1, 10000).is_err());
        assert_eq!(ScopeKey::new("shop").unwrap().year_hint(), None);
    }
}
