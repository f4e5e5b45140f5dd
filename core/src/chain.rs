//! The tamper-evident chain of a series: every event in a number's life
//! (issued, void) is an entry whose hash covers the entry before it, so an
//! edit made behind the books' back — an amount changed, a void turned back
//! into issued, an entry removed — breaks the chain from that entry on.
//!
//! Invariants:
//! - an entry's canonical input is [`canonical`]: a version line, the
//!   previous entry's hash (64 hex digits; [`GENESIS`] for a series' first),
//!   then each of [`FIELDS`] on a line of its own, as `{byte length}:{value}`
//!   or `-` for a missing one, so no value can pass for another (a value
//!   holding a newline or `-` included) and two implementations agree byte
//!   for byte (`tests/vectors/chain.json`);
//! - an entry's hash is the SHA-256 of its canonical input, in lower-case hex;
//! - [`verify`] walks a series' entries in order and names the first whose
//!   link or hash does not hold.

use sha2::{Digest, Sha256};

/// The previous hash of a series' first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The first line of every canonical input (the format's version).
pub const VERSION: &str = "counterfoil-chain-1";

/// The fields of an entry, in the order the canonical input lists them.
pub const FIELDS: [&str; 10] = [
    "scope_key",
    "number",
    "event",
    "gateway",
    "transaction_id",
    "amount",
    "currency",
    "post_id",
    "reason",
    "at",
];

/// One event of a number's life, as the chain records it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The series.
    pub scope_key: String,
    /// The number.
    pub number: u64,
    /// `issued` or `void`.
    pub event: String,
    /// The payment's gateway, for a payment's number.
    pub gateway: Option<String>,
    /// The payment's (or refund's) transaction id.
    pub transaction_id: Option<String>,
    /// The amount, as recorded.
    pub amount: Option<String>,
    /// The currency.
    pub currency: Option<String>,
    /// The invoice post.
    pub post_id: Option<u64>,
    /// A void's reason.
    pub reason: Option<String>,
    /// When (UTC, `YYYY-MM-DD HH:MM:SS`).
    pub at: String,
}

impl Entry {
    /// The values of [`FIELDS`], in order.
    pub fn values(&self) -> [Option<String>; 10] {
        [
            Some(self.scope_key.clone()),
            Some(self.number.to_string()),
            Some(self.event.clone()),
            self.gateway.clone(),
            self.transaction_id.clone(),
            self.amount.clone(),
            self.currency.clone(),
            self.post_id.map(|p| p.to_string()),
            self.reason.clone(),
            Some(self.at.clone()),
        ]
    }
}

/// The canonical input of `entry` after an entry hashed `prev`.
pub fn canonical(prev: &str, entry: &Entry) -> String {
    let mut out = format!("{VERSION}\n{prev}\n");
    for value in entry.values() {
        match value {
            Some(v) => {
                out.push_str(&v.len().to_string());
                out.push(':');
                out.push_str(&v);
                out.push('\n');
            }
            None => out.push_str("-\n"),
        }
    }
    out
}

/// The canonical input of an entry whose previous hash and number are
/// known only to the server (the one-trip payment flow computes its hash in
/// SQL, under the series' lock): the text before the previous hash, the text
/// between it and the number's line, and the text after that line. For any
/// `prev` and `n`, `before_prev + prev + before_number + "{len}:{n}\n" +
/// after_number` is [`canonical`]`(prev, entry with number n)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanonicalParts {
    /// The version line.
    pub before_prev: String,
    /// The newline after the previous hash, and the scope key's line.
    pub before_number: String,
    /// Every line after the number's.
    pub after_number: String,
}

/// [`CanonicalParts`] of `entry` (its `number` is not used).
pub fn canonical_parts(entry: &Entry) -> CanonicalParts {
    let line = |value: Option<String>| match value {
        Some(v) => format!("{}:{v}\n", v.len()),
        None => "-\n".to_owned(),
    };
    let mut values = entry.values().into_iter();
    let scope = line(values.next().flatten());
    let _number = values.next();
    CanonicalParts {
        before_prev: format!("{VERSION}\n"),
        before_number: format!("\n{scope}"),
        after_number: values.map(line).collect(),
    }
}

/// The hash of `entry` after `prev`: SHA-256 of its canonical input, hex.
pub fn hash(prev: &str, entry: &Entry) -> String {
    let digest = Sha256::digest(canonical(prev, entry).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A UTC instant (seconds since 1970) as an entry's `at`:
/// `YYYY-MM-DD HH:MM:SS`, the text MySQL's `DATETIME` and PostgreSQL's
/// `TIMESTAMP` give back.
pub fn utc_text(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let (y, m, d) = crate::format::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Where a chain does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    /// The position (0-based) of the first entry that does not hold.
    pub at: usize,
    /// Its number.
    pub number: u64,
    /// Why: `link` (its previous hash is not the entry before's) or `hash`
    /// (its content no longer gives its hash).
    pub why: &'static str,
}

/// A walk along a series' chain, one entry at a time (so a chain of any
/// length is checked in bounded memory): each entry's recorded previous
/// hash must be the hash before it, and its content must give its hash.
#[derive(Clone, Debug)]
pub struct Walk {
    at: usize,
    head: String,
}

impl Default for Walk {
    fn default() -> Self {
        Self {
            at: 0,
            head: GENESIS.to_owned(),
        }
    }
}

impl Walk {
    /// A walk from a series' first entry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next entry, with its recorded previous hash and hash.
    pub fn step(&mut self, entry: &Entry, prev: &str, recorded: &str) -> Result<(), Broken> {
        let broken = |why| Broken {
            at: self.at,
            number: entry.number,
            why,
        };
        if prev != self.head {
            return Err(broken("link"));
        }
        if hash(prev, entry) != recorded {
            return Err(broken("hash"));
        }
        self.head = recorded.to_owned();
        self.at += 1;
        Ok(())
    }

    /// The hash of the last entry walked ([`GENESIS`] before the first).
    pub fn head(&self) -> &str {
        &self.head
    }

    /// How many entries were walked.
    pub fn len(&self) -> usize {
        self.at
    }

    /// Whether no entry was walked.
    pub fn is_empty(&self) -> bool {
        self.at == 0
    }
}

/// Checks a series' entries, in order: each as (entry, its recorded
/// previous hash, its recorded hash). The head (the last hash) when the
/// chain holds.
pub fn verify<'a>(
    entries: impl IntoIterator<Item = (&'a Entry, &'a str, &'a str)>,
) -> Result<String, Broken> {
    let mut walk = Walk::new();
    for (entry, prev, recorded) in entries {
        walk.step(entry, prev, recorded)?;
    }
    Ok(walk.head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_text_is_the_datetime_text() {
        assert_eq!(utc_text(0), "1970-01-01 00:00:00");
        assert_eq!(utc_text(1_798_761_599), "2026-12-31 23:59:59");
        assert_eq!(utc_text(1_798_761_600), "2027-01-01 00:00:00");
        assert_eq!(utc_text(951_782_400), "2000-02-29 00:00:00");
    }

    #[test]
    fn the_parts_around_the_number_make_the_canonical_input() {
        let entries = [
            Entry {
                scope_key: "42:2026".into(),
                number: 0,
                event: "issued".into(),
                gateway: Some("stripe".into()),
                transaction_id: Some("pi_ü\n-".into()),
                amount: Some("19.99".into()),
                currency: None,
                at: "2026-12-02 07:00:00".into(),
                ..Entry::default()
            },
            Entry {
                scope_key: "k".into(),
                event: "issued".into(),
                ..Entry::default()
            },
        ];
        for mut entry in entries {
            let parts = canonical_parts(&entry);
            for (prev, n) in [
                (GENESIS, 1u64),
                ("ab".repeat(32).as_str(), 18_446_744_073_709_551_615),
            ] {
                entry.number = n;
                let digits = n.to_string();
                let joined = format!(
                    "{}{prev}{}{}:{digits}\n{}",
                    parts.before_prev,
                    parts.before_number,
                    digits.len(),
                    parts.after_number
                );
                assert_eq!(joined, canonical(prev, &entry));
            }
        }
    }
}
