//! The shapes check 5 of `counterfoil verify` (the chain: `chain_check`,
//! `chain_merge`, `chain_sql`) shares: the tables it reads, a series' head
//! row, the rows of the registry and payments it merges with the chain, an
//! entry as stored, and the chunk of a keyset read. Shapes only: no module
//! of the check is imported here, so the check's modules depend on this one
//! and on `verify_source`, never on each other in a circle.

use counterfoil_core::chain::Entry;

/// Chain entries read per query.
pub(crate) const CHUNK: usize = 50_000;

/// The names the check reads.
pub struct ChainTables<'a> {
    pub sequences: &'a str,
    pub numbers: &'a str,
    pub payments: &'a str,
    pub chain: &'a str,
}

/// A series' row: its chain position, head and first chained number.
pub(crate) type SeriesHead = (u64, Option<String>, Option<u64>);

/// An entry as stored: its position, the entry and its hash (its stored
/// previous hash is not read: each entry is hashed after the hash the walk
/// computed before it, so an edit anywhere breaks the first entry it
/// touches, and a stored link that was edited alone changes nothing).
type Stored = (u64, Entry, String);

/// A registry row: series, number, status, the row's gateway and
/// transaction.
pub(crate) type RegistryRow = (String, u64, String, [Option<String>; 2]);

/// A payment with its number: series, number, gateway, transaction, amount,
/// currency.
pub(crate) type PaymentRow = (String, u64, [Option<String>; 4]);

/// A stored row as an entry.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stored(
    scope: &str,
    seq: u64,
    number: u64,
    event: String,
    texts: [Option<String>; 5],
    post_id: Option<u64>,
    at: String,
    hash: String,
) -> Stored {
    let [gateway, transaction_id, amount, currency, reason] = texts;
    (
        seq,
        Entry {
            scope_key: scope.to_owned(),
            number,
            event,
            gateway,
            transaction_id,
            amount,
            currency,
            post_id,
            reason,
            at,
        },
        hash,
    )
}
