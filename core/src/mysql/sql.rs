//! The MySQL/MariaDB dialect's SQL: table names and every statement the
//! store sends on this engine, as text (PostgreSQL's are in `pg/sql.rs`).
//!
//! Invariants: the only text interpolated into SQL is the table prefix, and a
//! [`TablePrefix`] holds only ASCII letters, digits and `_` (at most 32
//! bytes), so it can never break out of its backquotes; everything else is a
//! bound parameter. The sequences table keeps the article's two columns
//! (`scope_key`, `current_value`) so existing sites are adopted, not migrated.

use crate::table_prefix::TablePrefix;

/// The SQL of the series store for one table prefix.
#[derive(Clone, Debug)]
pub struct SeriesSql {
    /// `{prefix}invoice_sequences`.
    pub table: String,
    /// Creates the sequences table if it is missing.
    pub create_table: String,
    /// Lists the columns the table has (parameter: table name).
    pub list_columns: String,
    /// Adds the `start_value` column to an adopted article table.
    pub add_start_value: String,
    /// Creates a series (parameters: scope, counter, start).
    pub initialize: String,
    /// Moves a counter up, never down (parameters: counter, scope).
    pub advance: String,
    /// Adds the `closed_by` column to a table from before it.
    pub add_closed_by: String,
    /// Adds the chain's head (`chain_seq`, `chain_head`, and `chain_from`,
    /// the first number the chain issued) to a table from
    /// before the chain (`crate::flows::chain`).
    pub add_chain_head: String,
    /// Allocates `?` numbers; the new counter comes back in the OK packet
    /// (parameters: count, scope). Knows nothing of closed series: the
    /// article's two columns are all it needs.
    pub allocate: String,
    /// [`SeriesSql::allocate`] of an open series only: zero rows when the
    /// series is missing or closed (parameters: count, scope).
    pub allocate_open: String,
    /// The series that continues a closed one (parameter: scope).
    pub successor: String,
    /// Locks a series' row and reads its counter and successor, so that no
    /// allocation of it is in flight while a successor is made (parameter:
    /// scope).
    pub lock_series: String,
    /// Closes a series in favour of its successor (parameters: successor,
    /// scope); one row when it was open.
    pub close: String,
    /// Reads a series (parameter: scope).
    pub current: String,
    /// Every series whose key starts with a prefix (LIKE pattern, `\\` escapes).
    pub list_like: String,
}

impl SeriesSql {
    /// The statements for `prefix`.
    pub fn new(prefix: &TablePrefix) -> Self {
        let table = format!("{}invoice_sequences", prefix.as_str());
        Self {
            create_table: format!(
                "CREATE TABLE IF NOT EXISTS `{table}` (\n  \
                 scope_key VARCHAR(191) NOT NULL,\n  \
                 current_value BIGINT UNSIGNED NOT NULL,\n  \
                 start_value BIGINT UNSIGNED NULL,\n  \
                 created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,\n  \
                 closed_by VARCHAR(191) NULL,\n  \
                 chain_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,\n  \
                 chain_head CHAR(64) NULL,\n  \
                 chain_from BIGINT UNSIGNED NULL,\n  \
                 PRIMARY KEY (scope_key)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
            ),
            list_columns: "SELECT COLUMN_NAME FROM information_schema.COLUMNS \
                           WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
                .into(),
            add_start_value: format!(
                "ALTER TABLE `{table}` ADD COLUMN start_value BIGINT UNSIGNED NULL"
            ),
            add_closed_by: format!("ALTER TABLE `{table}` ADD COLUMN closed_by VARCHAR(191) NULL"),
            add_chain_head: format!(
                "ALTER TABLE `{table}` ADD COLUMN chain_seq BIGINT UNSIGNED NOT NULL DEFAULT 0, \
                 ADD COLUMN chain_head CHAR(64) NULL, ADD COLUMN chain_from BIGINT UNSIGNED NULL"
            ),
            initialize: format!(
                "INSERT INTO `{table}` (scope_key, current_value, start_value) VALUES (?, ?, ?)"
            ),
            advance: format!(
                "UPDATE `{table}` SET current_value = GREATEST(current_value, ?) WHERE scope_key = ?"
            ),
            allocate: format!(
                "UPDATE `{table}` SET current_value = LAST_INSERT_ID(current_value + ?) \
                 WHERE scope_key = ?"
            ),
            allocate_open: format!(
                "UPDATE `{table}` SET current_value = LAST_INSERT_ID(current_value + ?) \
                 WHERE scope_key = ? AND closed_by IS NULL"
            ),
            successor: format!("SELECT closed_by FROM `{table}` WHERE scope_key = ?"),
            lock_series: format!(
                "SELECT current_value, closed_by FROM `{table}` WHERE scope_key = ? FOR UPDATE"
            ),
            close: format!(
                "UPDATE `{table}` SET closed_by = ? WHERE scope_key = ? AND closed_by IS NULL"
            ),
            current: format!(
                "SELECT current_value, start_value FROM `{table}` WHERE scope_key = ?"
            ),
            list_like: format!(
                "SELECT scope_key, current_value FROM `{table}` WHERE scope_key LIKE ?"
            ),
            table,
        }
    }
}

/// The server a claim was taken on, as SQL: a claim's holder is judged
/// alive by its connection id only on the server that issued that id (on
/// Galera, or behind a proxy, another node's ids mean nothing here); a claim
/// taken elsewhere is taken over only when its lease (`claimed_at` plus the
/// caller's `stale_after`) has run out.
pub const CLAIM_NODE: &str = "LEFT(CONCAT(@@hostname, ':', @@port, ':', @@server_id), 64)";

/// The statements a caller sends while numbering (no DDL), by name
/// (`series.allocate`, `registry.insert_payment`, …), for one prefix: the
/// text the pure-PHP twin must send too. `tests/vectors/mysql_statements.json`
/// holds them for the prefix `wp_`; the core's vector test keeps the file
/// equal to this list and the twin's test compares its own statements with
/// it.
pub fn numbering_statements(prefix: &TablePrefix) -> Vec<(&'static str, String)> {
    let s = SeriesSql::new(prefix);
    let r = RegistrySql::new(prefix);
    vec![
        ("series.initialize", s.initialize),
        ("series.advance", s.advance),
        ("series.allocate", s.allocate),
        ("series.allocate_open", s.allocate_open),
        ("series.successor", s.successor),
        ("series.lock_series", s.lock_series),
        ("series.close", s.close),
        ("series.current", s.current),
        ("series.list_like", s.list_like),
        ("registry.insert_number", r.insert_number),
        (
            "registry.insert_unconfirmed_by_call",
            r.insert_unconfirmed_by_call,
        ),
        ("registry.insert_keyed_by_call", r.insert_keyed_by_call),
        ("registry.confirm_by_call", r.confirm_by_call),
        ("registry.void_unanswered", r.void_unanswered),
        ("registry.find_by_request", r.find_by_request),
        ("registry.unconfirmed_of_call", r.unconfirmed_of_call),
        ("registry.insert_payment", r.insert_payment),
        ("registry.insert_held_payment", r.insert_held_payment),
        ("registry.set_payment_number", r.set_payment_number),
        ("registry.find_payment", r.find_payment),
        ("registry.lock_payment", r.lock_payment),
        ("registry.claim_number", r.claim_number),
        ("registry.number_state", r.number_state),
        ("registry.issue_claimed", r.issue_claimed),
        ("registry.set_payment_post", r.set_payment_post),
        ("registry.release_claim", r.release_claim),
        ("chain.head", r.chain_head),
        ("chain.append", r.chain_append),
        ("chain.move_head", r.chain_move_head),
        ("registry.payment_one_trip", r.payment_one_trip),
        ("registry.recorded_one_trip", r.recorded_one_trip),
        ("registry.complete_one_trip", r.complete_one_trip),
    ]
}

/// The registry and payments tables and their statements, for one prefix.
///
/// The plugin creates the same tables with `dbDelta` (see
/// `wp-plugin/includes/class-counterfoil-schema.php`); the two definitions are
/// kept equal by a test that compares `SHOW CREATE TABLE` of both.
#[derive(Clone, Debug)]
pub struct RegistrySql {
    /// `{prefix}counterfoil_numbers`: one row per allocated number.
    pub numbers: String,
    /// `{prefix}counterfoil_payments`: one row per (gateway, transaction id).
    pub payments: String,
    /// Creates the numbers table if missing.
    pub create_numbers: String,
    /// Creates the payments table if missing.
    pub create_payments: String,
    /// Records an allocated number (scope, number, status, source, gateway, transaction).
    pub insert_number: String,
    /// Records a number taken by `allocate_recorded` as `unconfirmed`, with
    /// the call's mark in `claim` (scope, number, source, mark).
    pub insert_unconfirmed_by_call: String,
    /// Marks a call's number `issued` once the answer to its COMMIT has
    /// arrived (scope, number, the call's mark); idempotent.
    pub confirm_by_call: String,
    /// Voids a number whose call lost its answer while committing, in the
    /// retry that replaces it (reason, scope, number, the call's mark): only
    /// if that commit landed (a row with this call's mark).
    pub void_unanswered: String,
    /// Records a payment (gateway, transaction, scope, amount, currency).
    pub insert_payment: String,
    /// Stores the number a payment received and the series it came from
    /// (number, scope, payment id): a closed series' payment is numbered
    /// by its successor.
    pub set_payment_number: String,
    /// Reads a payment and its number's registry row (gateway, transaction):
    /// series, number, status, post, period, amount, currency.
    pub find_payment: String,
    /// Records a payment held without a number until its series exists
    /// (gateway, transaction, scope, amount, currency, period `YYYY-MM`).
    pub insert_held_payment: String,
    /// Locks a payment row and reads its id, scope, number, period, amount
    /// and currency (gateway, transaction).
    pub lock_payment: String,
    /// Adds `period` to a payments table created before it existed.
    pub add_period: String,
    /// Adds `claim` and `claimed_at` to a numbers table created before them.
    pub add_claim: String,
    /// Adds `claim_node` to a registry that has claims without it.
    pub add_claim_node: String,
    /// Adds `request_key` and its unique key to a registry without them.
    pub add_request_key: String,
    /// Records a keyed recorded allocation as `unconfirmed` (scope, number,
    /// source, the call's mark, request key).
    pub insert_keyed_by_call: String,
    /// The number a request key took in a series (scope, key): number,
    /// status, the call's mark.
    pub find_by_request: String,
    /// Adds the books' indexes (counts per series, stale reservations, dates)
    /// to a numbers table created before them.
    pub add_book_indexes: String,
    /// Adds the index that finds payments held for a series (no number yet).
    pub add_held_index: String,
    /// Adds a credit note's link to the invoice it corrects, and its reason.
    pub add_refers: String,
    /// Claims a number for its invoice (claim, scope, number, stale seconds):
    /// from reserved, or from a claim older than the stale limit or whose
    /// holder's connection is gone (the holder died).
    pub claim_number: String,
    /// Reads a number's status, post id and claim (scope, number).
    pub number_state: String,
    /// Marks a claimed number issued to a post (post id, scope, number, claim).
    pub issue_claimed: String,
    /// Stores a payment's invoice post (post id, gateway, transaction).
    pub set_payment_post: String,
    /// Gives a claim back: the number is reserved again (scope, number, claim).
    pub release_claim: String,
    /// `{prefix}counterfoil_chain`: every event of a number's life, chained
    /// per series (`crate::chain`).
    pub chain: String,
    /// Creates the chain table if missing.
    pub create_chain: String,
    /// A series' chain head under the series row's lock (scope): position
    /// and hash (NULL before the first entry).
    pub chain_head: String,
    /// Appends a chain entry (scope, seq, number, event, gateway,
    /// transaction, amount, currency, post id, reason, at, prev hash, hash).
    pub chain_append: String,
    /// Moves a series' head to its new entry (seq, hash, the number if it
    /// is the chain's first issued one, scope, the seq it was at): one row.
    pub chain_move_head: String,
    /// A payment's first delivery in one round trip (issue 30): the
    /// statements of [`one_trip_payment`], joined by `;\n`, sent as one
    /// multi-statement packet. Its `%name%` slots take literals
    /// ([`text_literal`], [`one_trip_payment_packet`]), never bound parameters: a packet of
    /// several statements goes through the text protocol.
    pub payment_one_trip: String,
    /// A recorded allocation's first try in one round trip: the statements
    /// of [`one_trip_recorded`], joined by `;\n`, filled by
    /// [`one_trip_recorded_packet`]. Positions as in the payment's packet:
    /// [`ONE_TRIP_ALLOCATION`], [`ONE_TRIP_REGISTRY_ROW`], and
    /// [`ONE_TRIP_RECORDED_CHAIN_ENTRY`].
    pub recorded_one_trip: String,
    /// A held payment's completion in one round trip: the statements of
    /// [`one_trip_completion`], joined by `;\n`, filled by
    /// [`one_trip_payment_packet`] with the held row's series, amount and
    /// currency. Positions as in the payment's packet, the payment row
    /// numbered at [`ONE_TRIP_HELD_ROW`] before the registry row
    /// ([`ONE_TRIP_HELD_REGISTRY_ROW`]).
    pub complete_one_trip: String,
    /// The numbers a call's mark holds still unconfirmed in a series
    /// (scope, the call's mark), locked: what a one-trip packet whose
    /// answer was lost may have committed (one still running is waited for
    /// under REPEATABLE READ only: `flows::recorded`'s doc).
    pub unconfirmed_of_call: String,
}

/// In [`RegistrySql::payment_one_trip`], the statement that takes the
/// number and moves the chain's head; its OK packet carries the number
/// (`LAST_INSERT_ID(expr)`). 0 rows when the series is missing or closed:
/// [`ONE_TRIP_REGISTRY_ROW`] then fails with 1048; 1690 past u64::MAX.
pub const ONE_TRIP_ALLOCATION: usize = 1;
/// … the one that inserts the registry row (1048: no number was taken;
/// 1062: the counter is behind the registry).
pub const ONE_TRIP_REGISTRY_ROW: usize = 2;
/// … the one that inserts the payment row with its number; its OK packet
/// carries the row's id. A 1062 here is a repeat of the payment.
pub const ONE_TRIP_PAYMENT_ROW: usize = 3;
/// … the one that appends the chain entry (1048: the payment row did not
/// go in as exactly one row; 1062: a position taken).
pub const ONE_TRIP_CHAIN_ENTRY: usize = 4;
/// In [`RegistrySql::recorded_one_trip`], the chain entry (no payment row
/// before it).
pub const ONE_TRIP_RECORDED_CHAIN_ENTRY: usize = 3;
/// In [`RegistrySql::complete_one_trip`], the UPDATE that gives the held
/// payment row its number (no row changed when the payment is no longer
/// held with those values, or no number was taken).
pub const ONE_TRIP_HELD_ROW: usize = 2;
/// … the registry row (1048: the payment row did not change; 1062: the
/// counter is behind the registry). The chain entry is at
/// [`ONE_TRIP_CHAIN_ENTRY`].
pub const ONE_TRIP_HELD_REGISTRY_ROW: usize = 3;

/// The values of a payment's first delivery that fill the one-trip packet
/// (`RegistrySql::payment_one_trip`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OneTripPayment<'a> {
    /// The series asked for.
    pub scope: &'a str,
    /// The gateway.
    pub gateway: &'a str,
    /// The gateway's transaction id.
    pub txn: &'a str,
    /// The amount, as recorded.
    pub amount: Option<&'a str>,
    /// The currency.
    pub currency: Option<&'a str>,
    /// The local period it arrived in (`YYYY-MM`).
    pub period: Option<&'a str>,
    /// The chain entry's time (`crate::chain::utc_text`).
    pub at: &'a str,
}

/// `X'…'`: the bytes of `v` as a binary string literal.
pub fn bytes_literal(v: &str) -> String {
    let mut out = String::with_capacity(3 + 2 * v.len());
    out.push_str("X'");
    for b in v.bytes() {
        out.push_str(&format!("{b:02X}"));
    }
    out.push('\'');
    out
}

/// A text value for a utf8mb4 column in a packet sent without bound
/// parameters: `_utf8mb4 X'…'` (hex: no value can end a string or start a
/// statement, whatever the connection's character set or
/// `NO_BACKSLASH_ESCAPES`; the introducer keeps the column's collation and
/// its index), or `NULL`.
pub fn text_literal(v: Option<&str>) -> String {
    match v {
        Some(v) => format!("_utf8mb4 {}", bytes_literal(v)),
        None => "NULL".to_owned(),
    }
}

/// The one-trip packet `template` (`RegistrySql::payment_one_trip`) filled
/// with `p`: every slot a literal, the chain entry's canonical input around
/// the previous hash and the number as binary strings
/// (`crate::chain::canonical_parts`; the number's line ends the middle
/// one). The twin fills it alike (`tests/vectors/one_trip_packets.json`).
pub fn one_trip_payment_packet(template: &str, p: &OneTripPayment<'_>) -> String {
    let facts = crate::flows::chain::PaymentFacts {
        gateway: Some(p.gateway),
        txn: Some(p.txn),
        amount: p.amount,
        currency: p.currency,
    };
    let entry = crate::flows::chain::issued_at(p.scope, 0, Some(facts), p.at.to_owned());
    fill_one_trip(
        template,
        &entry,
        &[
            ("%gateway%", text_literal(Some(p.gateway))),
            ("%txn%", text_literal(Some(p.txn))),
            ("%scope%", text_literal(Some(p.scope))),
            ("%amount%", text_literal(p.amount)),
            ("%currency%", text_literal(p.currency)),
            ("%period%", text_literal(p.period)),
            ("%at%", text_literal(Some(p.at))),
        ],
    )
}

/// The values of a recorded allocation that fill its one-trip packet
/// (`RegistrySql::recorded_one_trip`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OneTripRecorded<'a> {
    /// The series asked for.
    pub scope: &'a str,
    /// Who takes the number (the registry row's source).
    pub source: &'a str,
    /// The call's mark on its registry row.
    pub call: &'a str,
    /// The request key, if any.
    pub request_key: Option<&'a str>,
    /// The chain entry's time (`crate::chain::utc_text`).
    pub at: &'a str,
}

/// The recorded allocation's one-trip packet `template`
/// (`RegistrySql::recorded_one_trip`) filled with `r`, as
/// [`one_trip_payment_packet`] (`tests/vectors/one_trip_packets.json`).
pub fn one_trip_recorded_packet(template: &str, r: &OneTripRecorded<'_>) -> String {
    let entry = crate::flows::chain::issued_at(r.scope, 0, None, r.at.to_owned());
    fill_one_trip(
        template,
        &entry,
        &[
            ("%scope%", text_literal(Some(r.scope))),
            ("%source%", text_literal(Some(r.source))),
            ("%call%", text_literal(Some(r.call))),
            ("%request_key%", text_literal(r.request_key)),
            ("%at%", text_literal(Some(r.at))),
        ],
    )
}

/// `template` with the chain parts of `entry` and every `(slot, literal)`
/// in place.
fn fill_one_trip(template: &str, entry: &crate::chain::Entry, slots: &[(&str, String)]) -> String {
    let parts = crate::chain::canonical_parts(entry);
    let chain = [
        ("%chain_before_prev%", bytes_literal(&parts.before_prev)),
        ("%chain_before_number%", bytes_literal(&parts.before_number)),
        (
            "%chain_after_number%",
            bytes_literal(&format!("\n{}", parts.after_number)),
        ),
    ];
    chain
        .iter()
        .map(|(slot, value)| (*slot, value))
        .chain(slots.iter().map(|(slot, value)| (*slot, value)))
        .fold(template.to_owned(), |text, (slot, value)| {
            text.replace(slot, value)
        })
}

/// The statements of a payment's first delivery in one round trip, in
/// order, as few as the work allows, since each costs the server about
/// the same whatever it does: one UPDATE takes the number (the allocation's
/// own OK packet answers it) and moves the chain's head, computing the
/// entry's hash from the head it replaces (`SHA2` over the canonical input,
/// `crate::chain::canonical_parts`); the registry row; the payment row with
/// its number (a repeat stops at its unique key); the chain entry; COMMIT.
/// The series' lock is taken by the first statement and held only while
/// the server works through the rest. The values the UPDATE computes go to
/// user variables assigned inside it (not read back from columns), so the
/// statement means the same under `SIMULTANEOUS_ASSIGNMENT`; the next
/// statement reads them only if the UPDATE changed its row (`ROW_COUNT()`),
/// so a value left by an earlier packet on the connection is never used.
/// Every check that would make the flow refuse makes a statement fail (a
/// NULL into a NOT NULL column, a duplicate key), so the packet stops there
/// with its transaction open and the store rolls it back.
pub fn one_trip_payment(
    sequences: &str,
    numbers: &str,
    payments: &str,
    chain: &str,
) -> Vec<String> {
    vec![
        "START TRANSACTION".to_owned(),
        one_trip_allocation(sequences),
        one_trip_payment_number(numbers),
        format!(
            "INSERT INTO `{payments}` (gateway, transaction_id, scope_key, number, amount, currency, period, \
             created_at) VALUES (%gateway%, %txn%, %scope%, @cf_number, %amount%, %currency%, %period%, \
             UTC_TIMESTAMP())"
        ),
        one_trip_chain_entry(chain, "%gateway%, %txn%, %amount%, %currency%"),
        "COMMIT".to_owned(),
    ]
}

/// The statements of a recorded allocation in one round trip (the first
/// try of a call), in order: the allocation that moves the chain's head, as
/// in [`one_trip_payment`]; the registry row, `unconfirmed`, with the
/// call's mark and its request key (its number only if the UPDATE changed
/// its row; a request key taken before stops it with 1062); the chain
/// entry; COMMIT. The number is marked issued after the COMMIT has
/// answered, as in the flow of several statements.
pub fn one_trip_recorded(sequences: &str, numbers: &str, chain: &str) -> Vec<String> {
    vec![
        "START TRANSACTION".to_owned(),
        one_trip_allocation(sequences),
        format!(
            "INSERT INTO `{numbers}` (scope_key, number, status, source, claim, request_key, created_at, \
             updated_at) VALUES (%scope%, IF(ROW_COUNT() = 1, @cf_number, NULL), 'unconfirmed', %source%, \
             %call%, %request_key%, UTC_TIMESTAMP(), UTC_TIMESTAMP())"
        ),
        one_trip_chain_entry(chain, "NULL, NULL, NULL, NULL"),
        "COMMIT".to_owned(),
    ]
}

/// The statements of a held payment's completion in one round trip, in
/// order: the allocation that moves the chain's head, as in
/// [`one_trip_payment`]; the payment row's number, only if the UPDATE
/// changed its row and only while the row is still held for that series
/// with the amount and currency read before (the row's lock, taken here,
/// is what a concurrent delivery of the payment waits on; a payment
/// numbered meanwhile changes no row); the registry row, only if the
/// payment row changed; the chain entry with the payment's facts; COMMIT.
/// The locks are taken in the first delivery's order: the series', then
/// the payment row's.
pub fn one_trip_completion(
    sequences: &str,
    numbers: &str,
    payments: &str,
    chain: &str,
) -> Vec<String> {
    vec![
        "START TRANSACTION".to_owned(),
        one_trip_allocation(sequences),
        format!(
            "UPDATE `{payments}` SET number = IF(ROW_COUNT() = 1, @cf_number, NULL) \
             WHERE gateway = %gateway% AND transaction_id = %txn% AND number IS NULL \
             AND scope_key = %scope% AND amount <=> %amount% AND currency <=> %currency%"
        ),
        one_trip_payment_number(numbers),
        one_trip_chain_entry(chain, "%gateway%, %txn%, %amount%, %currency%"),
        "COMMIT".to_owned(),
    ]
}

/// A one-trip packet's registry row for a payment's number, `reserved`: the
/// number only if the statement before it changed exactly one row.
fn one_trip_payment_number(numbers: &str) -> String {
    format!(
        "INSERT INTO `{numbers}` (scope_key, number, status, source, gateway, transaction_id, \
         created_at, updated_at) VALUES (%scope%, IF(ROW_COUNT() = 1, @cf_number, NULL), 'reserved', \
         'payment', %gateway%, %txn%, UTC_TIMESTAMP(), UTC_TIMESTAMP())"
    )
}

/// A one-trip packet's allocation: takes the number into `@cf_number` and
/// the statement's own OK packet, and moves the chain's head, the entry's
/// hash computed from the head it replaces.
fn one_trip_allocation(sequences: &str) -> String {
    let genesis = crate::chain::GENESIS;
    format!(
        "UPDATE `{sequences}` SET current_value = LAST_INSERT_ID(@cf_number := current_value + 1), \
         chain_seq = (@cf_seq := chain_seq + 1), \
         chain_head = (@cf_hash := SHA2(CONCAT(%chain_before_prev%, \
         (@cf_prev := COALESCE(chain_head, '{genesis}')), %chain_before_number%, \
         LENGTH(@cf_number), ':', @cf_number, %chain_after_number%), 256)), \
         chain_from = COALESCE(chain_from, @cf_number) \
         WHERE scope_key = %scope% AND closed_by IS NULL"
    )
}

/// A one-trip packet's chain entry, `issued`, with `payment` for its
/// gateway, transaction, amount and currency; its hash only if the
/// statement before it wrote exactly one row.
fn one_trip_chain_entry(chain: &str, payment: &str) -> String {
    format!(
        "INSERT INTO `{chain}` (scope_key, seq, number, event, gateway, transaction_id, amount, currency, \
         post_id, reason, event_at, prev_hash, hash) VALUES (%scope%, @cf_seq, @cf_number, 'issued', \
         {payment}, NULL, NULL, %at%, @cf_prev, IF(ROW_COUNT() = 1, @cf_hash, NULL))"
    )
}

impl RegistrySql {
    /// The statements for `prefix`.
    pub fn new(prefix: &TablePrefix) -> Self {
        let p = prefix.as_str();
        let numbers = format!("{p}counterfoil_numbers");
        let payments = format!("{p}counterfoil_payments");
        let chain = format!("{p}counterfoil_chain");
        let sequences = format!("{p}invoice_sequences");
        Self {
            create_numbers: format!(
                "CREATE TABLE IF NOT EXISTS `{numbers}` (\n  \
                 id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,\n  \
                 scope_key VARCHAR(191) NOT NULL,\n  \
                 number BIGINT UNSIGNED NOT NULL,\n  \
                 status VARCHAR(16) NOT NULL,\n  \
                 reason VARCHAR(255) NULL,\n  \
                 source VARCHAR(32) NOT NULL,\n  \
                 post_id BIGINT UNSIGNED NULL,\n  \
                 gateway VARCHAR(32) NULL,\n  \
                 transaction_id VARCHAR(191) NULL,\n  \
                 claim VARCHAR(40) NULL,\n  \
                 claim_connection BIGINT UNSIGNED NULL,\n  \
                 claim_node VARCHAR(64) NULL,\n  \
                 claimed_at DATETIME NULL,\n  \
                 request_key VARCHAR(64) NULL,\n  \
                 created_at DATETIME NOT NULL,\n  \
                 updated_at DATETIME NOT NULL,\n  \
                 PRIMARY KEY (id),\n  \
                 UNIQUE KEY scope_number (scope_key, number),\n  \
                 UNIQUE KEY scope_request (scope_key, request_key),\n  \
                 KEY post_id (post_id),\n  \
                 KEY scope_status (scope_key, status),\n  \
                 KEY status_updated (status, updated_at),\n  \
                 KEY created_at (created_at)\n\
                 ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
            ),
            create_payments: format!(
                "CREATE TABLE IF NOT EXISTS `{payments}` (\n  \
                 id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,\n  \
                 gateway VARCHAR(32) NOT NULL,\n  \
                 transaction_id VARCHAR(191) NOT NULL,\n  \
                 scope_key VARCHAR(191) NOT NULL,\n  \
                 number BIGINT UNSIGNED NULL,\n  \
                 post_id BIGINT UNSIGNED NULL,\n  \
                 amount VARCHAR(32) NULL,\n  \
                 currency VARCHAR(3) NULL,\n  \
                 period CHAR(7) NULL,\n  \
                 created_at DATETIME NOT NULL,\n  \
                 refers_scope VARCHAR(191) NULL,\n  \
                 refers_number BIGINT UNSIGNED NULL,\n  \
                 reason VARCHAR(255) NULL,\n  \
                 PRIMARY KEY (id),\n  \
                 UNIQUE KEY gateway_transaction (gateway, transaction_id),\n  \
                 KEY scope_number (scope_key, number),\n  \
                 KEY number_id (number, id),\n  \
                 KEY refers (refers_scope, refers_number)\n\
                 ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
            ),
            insert_number: format!(
                "INSERT INTO `{numbers}` (scope_key, number, status, source, gateway, transaction_id, \
                 created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())"
            ),
            insert_payment: format!(
                "INSERT INTO `{payments}` (gateway, transaction_id, scope_key, amount, currency, period, \
                 created_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP())"
            ),
            insert_unconfirmed_by_call: format!(
                "INSERT INTO `{numbers}` (scope_key, number, status, source, claim, created_at, updated_at) \
                 VALUES (?, ?, 'unconfirmed', ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())"
            ),
            confirm_by_call: format!(
                "UPDATE `{numbers}` SET status = 'issued', updated_at = UTC_TIMESTAMP() \
                 WHERE scope_key = ? AND number = ? AND claim = ? AND status = 'unconfirmed'"
            ),
            void_unanswered: format!(
                "UPDATE `{numbers}` SET status = 'void', reason = ?, updated_at = UTC_TIMESTAMP() \
                 WHERE scope_key = ? AND number = ? AND status IN ('issued', 'unconfirmed') AND claim = ?"
            ),
            set_payment_number: format!(
                "UPDATE `{payments}` SET number = ?, scope_key = ? WHERE id = ?"
            ),
            find_payment: format!(
                "SELECT p.scope_key, p.number, n.status, COALESCE(n.post_id, p.post_id), p.period, \
                 p.amount, p.currency FROM `{payments}` p LEFT JOIN `{numbers}` n \
                 ON n.scope_key = p.scope_key AND n.number = p.number \
                 WHERE p.gateway = ? AND p.transaction_id = ?"
            ),
            insert_held_payment: format!(
                "INSERT INTO `{payments}` (gateway, transaction_id, scope_key, amount, currency, period, \
                 created_at) VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP())"
            ),
            lock_payment: format!(
                "SELECT id, scope_key, number, period, amount, currency FROM `{payments}` \
                 WHERE gateway = ? AND transaction_id = ? FOR UPDATE"
            ),
            add_period: format!(
                "ALTER TABLE `{payments}` ADD COLUMN period CHAR(7) NULL AFTER currency"
            ),
            add_claim: format!(
                "ALTER TABLE `{numbers}` ADD COLUMN claim VARCHAR(40) NULL AFTER transaction_id, \
                 ADD COLUMN claim_connection BIGINT UNSIGNED NULL AFTER claim, \
                 ADD COLUMN claim_node VARCHAR(64) NULL AFTER claim_connection, \
                 ADD COLUMN claimed_at DATETIME NULL AFTER claim_node"
            ),
            add_request_key: format!(
                "ALTER TABLE `{numbers}` ADD COLUMN request_key VARCHAR(64) NULL AFTER claimed_at, \
                 ADD UNIQUE KEY scope_request (scope_key, request_key)"
            ),
            insert_keyed_by_call: format!(
                "INSERT INTO `{numbers}` (scope_key, number, status, source, claim, request_key, created_at, updated_at) \
                 VALUES (?, ?, 'unconfirmed', ?, ?, ?, UTC_TIMESTAMP(), UTC_TIMESTAMP())"
            ),
            find_by_request: format!(
                "SELECT number, status, claim FROM `{numbers}` WHERE scope_key = ? AND request_key = ?"
            ),
            unconfirmed_of_call: format!(
                "SELECT number FROM `{numbers}` WHERE scope_key = ? AND claim = ? AND status = 'unconfirmed' \
                 ORDER BY number FOR UPDATE"
            ),
            add_claim_node: format!(
                "ALTER TABLE `{numbers}` ADD COLUMN claim_node VARCHAR(64) NULL AFTER claim_connection"
            ),
            add_book_indexes: format!(
                "ALTER TABLE `{numbers}` ADD KEY scope_status (scope_key, status), \
                 ADD KEY status_updated (status, updated_at), ADD KEY created_at (created_at)"
            ),
            add_held_index: format!("ALTER TABLE `{payments}` ADD KEY number_id (number, id)"),
            add_refers: format!(
                "ALTER TABLE `{payments}` ADD COLUMN refers_scope VARCHAR(191) NULL AFTER created_at, \
                 ADD COLUMN refers_number BIGINT UNSIGNED NULL AFTER refers_scope, \
                 ADD COLUMN reason VARCHAR(255) NULL AFTER refers_number, \
                 ADD KEY refers (refers_scope, refers_number)"
            ),
            claim_number: format!(
                "UPDATE `{numbers}` SET status = 'creating', claim = ?, claim_connection = CONNECTION_ID(), \
                 claim_node = {CLAIM_NODE}, claimed_at = UTC_TIMESTAMP(), updated_at = UTC_TIMESTAMP() \
                 WHERE scope_key = ? AND number = ? AND (status = 'reserved' OR (status = 'creating' \
                 AND (claimed_at < UTC_TIMESTAMP() - INTERVAL ? SECOND OR (claim_node = {CLAIM_NODE} AND NOT EXISTS \
                 (SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = claim_connection)))))"
            ),
            number_state: format!(
                "SELECT status, post_id, claim FROM `{numbers}` WHERE scope_key = ? AND number = ?"
            ),
            issue_claimed: format!(
                "UPDATE `{numbers}` SET status = 'issued', post_id = ?, claim = NULL, claim_connection = NULL, claim_node = NULL, claimed_at = NULL, \
                 updated_at = UTC_TIMESTAMP() WHERE scope_key = ? AND number = ? AND status = 'creating' \
                 AND claim = ?"
            ),
            set_payment_post: format!(
                "UPDATE `{payments}` SET post_id = ? WHERE gateway = ? AND transaction_id = ?"
            ),
            release_claim: format!(
                "UPDATE `{numbers}` SET status = 'reserved', claim = NULL, claim_connection = NULL, claim_node = NULL, claimed_at = NULL, \
                 updated_at = UTC_TIMESTAMP() WHERE scope_key = ? AND number = ? AND status = 'creating' \
                 AND claim = ?"
            ),
            create_chain: format!(
                "CREATE TABLE IF NOT EXISTS `{chain}` (\n  \
                 scope_key VARCHAR(191) NOT NULL,\n  \
                 seq BIGINT UNSIGNED NOT NULL,\n  \
                 number BIGINT UNSIGNED NOT NULL,\n  \
                 event VARCHAR(16) NOT NULL,\n  \
                 gateway VARCHAR(32) NULL,\n  \
                 transaction_id VARCHAR(191) NULL,\n  \
                 amount VARCHAR(32) NULL,\n  \
                 currency VARCHAR(3) NULL,\n  \
                 post_id BIGINT UNSIGNED NULL,\n  \
                 reason VARCHAR(255) NULL,\n  \
                 event_at DATETIME NOT NULL,\n  \
                 prev_hash CHAR(64) NOT NULL,\n  \
                 hash CHAR(64) NOT NULL,\n  \
                 PRIMARY KEY (scope_key,seq),\n  \
                 KEY scope_number (scope_key,number,event)\n\
                 ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
            ),
            chain_head: format!(
                "SELECT chain_seq, chain_head FROM `{sequences}` WHERE scope_key = ? FOR UPDATE"
            ),
            chain_append: format!(
                "INSERT INTO `{chain}` (scope_key, seq, number, event, gateway, transaction_id, amount, \
                 currency, post_id, reason, event_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            chain_move_head: format!(
                "UPDATE `{sequences}` SET chain_seq = ?, chain_head = ?, chain_from = COALESCE(chain_from, ?) \
                 WHERE scope_key = ? AND chain_seq = ?"
            ),
            payment_one_trip: one_trip_payment(&sequences, &numbers, &payments, &chain).join(";\n"),
            recorded_one_trip: one_trip_recorded(&sequences, &numbers, &chain).join(";\n"),
            complete_one_trip: one_trip_completion(&sequences, &numbers, &payments, &chain)
                .join(";\n"),
            chain,
            numbers,
            payments,
        }
    }
}

/// The air waybill stock tables, for one prefix.
#[derive(Clone, Debug)]
pub struct AwbSql {
    /// `{prefix}counterfoil_awb_pools`.
    pub pools: String,
    /// `{prefix}counterfoil_awb_stock`: one row per number, unique.
    pub stock: String,
    /// `{prefix}counterfoil_awb_assignments`: at most one live assignment
    /// per number (unique on stock_id and live; released rows hold NULL).
    pub assignments: String,
    /// The CREATE TABLE statements.
    pub create: [String; 3],
    /// A stock number and its pool under the row lock (number): id, status, pool, frozen, valid_to, shipment, expired or valid.
    pub lock_number: String,
    /// Creates a pool if missing (name, prefix).
    pub insert_pool: String,
    /// A pool under its row lock (name): id, prefix.
    pub lock_pool: String,
    /// The head of a block's INSERT; `(?, ?, ?, ?, 'ready', ?, UTC_TIMESTAMP())` per number follows (pool id, number, prefix, serial, valid_to).
    pub insert_stock_head: String,
    /// The lowest ready, unfrozen, unexpired serial of a pool, locked (pool name).
    pub lock_next_ready: String,
    /// Releases a number's live assignment (stock id).
    pub release_assignment: String,
    /// A transition (status, reason, keep shipment, id).
    pub set_status: String,
    /// Freezes or thaws a number (frozen, number).
    pub set_frozen: String,
    /// A stock number as stored (number): pool, status, frozen, valid_to, shipment, reason.
    pub find_number: String,
    /// A pool's numbers per status (pool name).
    pub count_by_status: String,
    /// Whether a number is in stock (number).
    pub count_number: String,
    /// A live assignment (stock id, shipment).
    pub insert_assignment: String,
    /// Marks a number assigned (shipment, id).
    pub set_assigned: String,
    /// A pool's frozen, expired and available numbers (pool name).
    pub pool_counts: String,
}

impl AwbSql {
    /// The tables for `prefix`.
    pub fn new(prefix: &TablePrefix) -> Self {
        let p = prefix.as_str();
        let (pools, stock, assignments) = (
            format!("{p}counterfoil_awb_pools"),
            format!("{p}counterfoil_awb_stock"),
            format!("{p}counterfoil_awb_assignments"),
        );
        let tail = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
        Self {
            create: [
                format!(
                    "CREATE TABLE IF NOT EXISTS `{pools}` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, \
                     name VARCHAR(64) NOT NULL, prefix SMALLINT UNSIGNED NOT NULL, created_at DATETIME NOT NULL, \
                     PRIMARY KEY (id), UNIQUE KEY name (name)) {tail}"
                ),
                format!(
                    "CREATE TABLE IF NOT EXISTS `{stock}` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, \
                     pool_id BIGINT UNSIGNED NOT NULL, number CHAR(12) NOT NULL, prefix SMALLINT UNSIGNED NOT NULL, \
                     serial INT UNSIGNED NOT NULL, status VARCHAR(16) NOT NULL, frozen TINYINT(1) NOT NULL DEFAULT 0, \
                     valid_to DATE NULL, shipment VARCHAR(64) NULL, reason VARCHAR(255) NULL, updated_at DATETIME NOT NULL, \
                     PRIMARY KEY (id), UNIQUE KEY number (number), KEY pool_ready (pool_id, status, serial)) {tail}"
                ),
                format!(
                    "CREATE TABLE IF NOT EXISTS `{assignments}` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, \
                     stock_id BIGINT UNSIGNED NOT NULL, shipment VARCHAR(64) NOT NULL, live TINYINT NULL, \
                     assigned_at DATETIME NOT NULL, released_at DATETIME NULL, PRIMARY KEY (id), \
                     UNIQUE KEY one_live (stock_id, live)) {tail}"
                ),
            ],
            lock_number: format!("SELECT s.id, s.status, p.name, s.frozen, CAST(s.valid_to AS CHAR), s.shipment, IF(s.valid_to IS NOT NULL AND s.valid_to < UTC_DATE(), 'expired', 'valid') FROM `{stock}` s JOIN `{pools}` p ON p.id = s.pool_id WHERE s.number = ? FOR UPDATE"),
            insert_pool: format!("INSERT IGNORE INTO `{pools}` (name, prefix, created_at) VALUES (?, ?, UTC_TIMESTAMP())"),
            lock_pool: format!("SELECT id, prefix FROM `{pools}` WHERE name = ? FOR UPDATE"),
            insert_stock_head: format!("INSERT INTO `{stock}` (pool_id, number, prefix, serial, status, valid_to, updated_at) VALUES "),
            lock_next_ready: format!("SELECT s.id, s.number, s.status FROM `{stock}` s JOIN `{pools}` p ON p.id = s.pool_id WHERE p.name = ? AND s.status = 'ready' AND s.frozen = 0 AND (s.valid_to IS NULL OR s.valid_to >= UTC_DATE()) ORDER BY s.serial LIMIT 1 FOR UPDATE"),
            release_assignment: format!("UPDATE `{assignments}` SET live = NULL, released_at = UTC_TIMESTAMP() WHERE stock_id = ? AND live = 1"),
            set_status: format!("UPDATE `{stock}` SET status = ?, reason = COALESCE(?, reason), shipment = IF(?, shipment, NULL), updated_at = UTC_TIMESTAMP() WHERE id = ?"),
            set_frozen: format!("UPDATE `{stock}` SET frozen = ?, updated_at = UTC_TIMESTAMP() WHERE number = ?"),
            find_number: format!("SELECT p.name, s.status, s.frozen, CAST(s.valid_to AS CHAR), s.shipment, s.reason FROM `{stock}` s JOIN `{pools}` p ON p.id = s.pool_id WHERE s.number = ?"),
            count_by_status: format!("SELECT s.status, COUNT(*) FROM `{stock}` s JOIN `{pools}` p ON p.id = s.pool_id WHERE p.name = ? GROUP BY s.status ORDER BY s.status"),
            count_number: format!("SELECT COUNT(*) FROM `{stock}` WHERE number = ?"),
            insert_assignment: format!("INSERT INTO `{assignments}` (stock_id, shipment, live, assigned_at) VALUES (?, ?, 1, UTC_TIMESTAMP())"),
            pool_counts: format!(
                "SELECT COALESCE(SUM(s.frozen), 0), \
                 COALESCE(SUM(s.status = 'ready' AND s.valid_to < UTC_DATE()), 0), \
                 COALESCE(SUM(s.status = 'ready' AND s.frozen = 0 AND (s.valid_to IS NULL OR s.valid_to >= UTC_DATE())), 0) \
                 FROM `{stock}` s JOIN `{pools}` p ON p.id = s.pool_id WHERE p.name = ?"
            ),
            set_assigned: format!("UPDATE `{stock}` SET status = 'assigned', shipment = ?, updated_at = UTC_TIMESTAMP() WHERE id = ?"),
            pools,
            stock,
            assignments,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_one_trip_positions_name_their_statements() {
        let r = RegistrySql::new(&TablePrefix::default());
        let statements: Vec<&str> = r.payment_one_trip.split(";\n").collect();
        assert_eq!(statements.len(), 6);
        assert_eq!(statements[0], "START TRANSACTION");
        assert!(
            statements[ONE_TRIP_PAYMENT_ROW].starts_with("INSERT INTO `wp_counterfoil_payments`")
        );
        assert!(statements[ONE_TRIP_ALLOCATION]
            .starts_with("UPDATE `wp_invoice_sequences` SET current_value"));
        assert!(
            statements[ONE_TRIP_REGISTRY_ROW].starts_with("INSERT INTO `wp_counterfoil_numbers`")
        );
        assert!(statements[ONE_TRIP_CHAIN_ENTRY].starts_with("INSERT INTO `wp_counterfoil_chain`"));
        assert_eq!(statements[5], "COMMIT");
        let recorded: Vec<&str> = r.recorded_one_trip.split(";\n").collect();
        assert_eq!(recorded.len(), 5);
        assert_eq!(
            recorded[ONE_TRIP_ALLOCATION],
            statements[ONE_TRIP_ALLOCATION]
        );
        assert!(recorded[ONE_TRIP_REGISTRY_ROW].starts_with("INSERT INTO `wp_counterfoil_numbers`"));
        assert!(recorded[ONE_TRIP_RECORDED_CHAIN_ENTRY]
            .starts_with("INSERT INTO `wp_counterfoil_chain`"));
        let completion: Vec<&str> = r.complete_one_trip.split(";\n").collect();
        assert_eq!(completion.len(), 6);
        assert_eq!(
            completion[ONE_TRIP_ALLOCATION],
            statements[ONE_TRIP_ALLOCATION]
        );
        assert!(completion[ONE_TRIP_HELD_ROW]
            .starts_with("UPDATE `wp_counterfoil_payments` SET number"));
        assert_eq!(
            completion[ONE_TRIP_HELD_REGISTRY_ROW],
            statements[ONE_TRIP_REGISTRY_ROW]
        );
        assert_eq!(
            completion[ONE_TRIP_CHAIN_ENTRY],
            statements[ONE_TRIP_CHAIN_ENTRY]
        );
        assert_eq!(text_literal(Some("a'b")), "_utf8mb4 X'612762'");
        assert_eq!(text_literal(Some("")), "_utf8mb4 X''");
        assert_eq!(text_literal(None), "NULL");
    }

    use super::*;

    #[test]
    fn prefix_is_the_only_interpolation_and_is_safe() {
        assert!(TablePrefix::new("wp_").is_ok());
        assert!(TablePrefix::new("").is_ok());
        assert!(TablePrefix::new("wp`; DROP").is_err());
        assert!(TablePrefix::new("wp-").is_err());
        assert!(TablePrefix::new(&"a".repeat(33)).is_err());
        let sql = SeriesSql::new(&TablePrefix::new("shop7_").unwrap());
        assert_eq!(sql.table, "shop7_invoice_sequences");
        assert!(sql.allocate.contains("LAST_INSERT_ID(current_value + ?)"));
    }
}
