//! The table prefix, such as WordPress's `wp_`: the only text Counterfoil
//! interpolates into SQL, on either engine.
//!
//! Invariants: a [`TablePrefix`] holds only ASCII letters, digits and `_`, at
//! most [`TablePrefix::MAX_LEN`] bytes, so it can never break out of the
//! quotes around a table name.

use crate::error::{Error, Result};

/// A validated table prefix such as WordPress's `wp_`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablePrefix(String);

impl TablePrefix {
    /// The longest prefix accepted.
    pub const MAX_LEN: usize = 32;

    /// Validates a prefix: ASCII letters, digits and `_` only.
    pub fn new(prefix: &str) -> Result<Self> {
        if prefix.len() > Self::MAX_LEN {
            return Err(Error::InvalidArgument {
                name: "table_prefix",
                reason: format!(
                    "table prefix `{prefix}` is longer than {} characters",
                    Self::MAX_LEN
                ),
            });
        }
        if let Some(c) = prefix
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(Error::InvalidArgument {
                name: "table_prefix",
                reason: format!(
                    "table prefix `{prefix}` holds `{c}`; only letters, digits and _ are allowed"
                ),
            });
        }
        Ok(Self(prefix.to_owned()))
    }

    /// The prefix.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for TablePrefix {
    fn default() -> Self {
        Self("wp_".into())
    }
}
