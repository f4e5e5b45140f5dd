//! The SQL text of the PostgreSQL engine, built once per table prefix.
//!
//! Invariants: counters and numbers are `NUMERIC(20,0)` with a CHECK that
//! keeps them within 0..=u64::MAX, so the u64 range behaves as on MySQL's
//! `BIGINT UNSIGNED` (passing u64::MAX is refused by the server and reported
//! as `Overflow`, the counter unchanged). Values cross the wire as text
//! (`$n::text::numeric` in, `::text` out) and are parsed as u64, exactly.
//! Scope keys compare bytewise (`COLLATE "C"`), as MySQL's `utf8mb4_bin`.
//! Only the prefix (restricted to `[A-Za-z0-9_]`) is spliced into the text.

use crate::table_prefix::TablePrefix;

/// The largest counter, as text for the CHECK constraints.
const U64_MAX: &str = "18446744073709551615";

/// Every statement of the PostgreSQL engine.
#[derive(Debug)]
pub struct PgSql {
    /// `{prefix}invoice_sequences`.
    pub sequences: String,
    /// `{prefix}counterfoil_numbers`.
    pub numbers: String,
    /// `{prefix}counterfoil_payments`.
    pub payments: String,
    /// Creates the sequences table.
    pub create_sequences: String,
    /// Creates the registry and payments tables and their indexes.
    pub create_registry: String,
    /// (scope, counter, start) → one row if created, none if it existed.
    pub initialize: String,
    /// (scope, count) → the new counter, one row, or none (no series).
    pub allocate: String,
    /// [`PgSql::allocate`] of an open series: none when missing or closed.
    pub allocate_open: String,
    /// (scope) → the series that continues a closed one.
    pub successor: String,
    /// (scope) → counter, successor, under the series' row lock.
    pub lock_series: String,
    /// (successor, scope): closes an open series.
    pub close: String,
    /// (scope, counter) → one row if it moved up.
    pub advance: String,
    /// (scope) → counter, start.
    pub current: String,
    /// (LIKE pattern) → scope, counter of the matching series.
    pub list_like: String,
    /// (scope, number, status, source, gateway, transaction, mark).
    pub insert_number: String,
    /// (reason, scope, number, mark): voids an unanswered COMMIT's number.
    pub void_unanswered: String,
    /// Marks a call's number `issued` once its COMMIT was answered.
    pub confirm_by_call: String,
    /// Records a keyed recorded allocation as `unconfirmed` (scope, number,
    /// source, the call's mark, request key).
    pub insert_keyed: String,
    /// The number a request key took in a series: number, status, mark.
    pub find_by_request: String,
    /// (gateway, transaction, scope, amount, currency) → id, or none if
    /// the payment was recorded before.
    pub insert_payment: String,
    /// (number, scope, id): the number and the series it came from.
    pub set_payment_number: String,
    /// (gateway, transaction) → scope, number, status, post id, period,
    /// amount, currency.
    pub find_payment: String,
    /// (gateway, transaction, scope, amount, currency, period) → id, or
    /// none if the payment was recorded before: a payment held without a
    /// number until its series exists.
    pub insert_held_payment: String,
    /// (gateway, transaction) → id, scope, number, period, amount, currency,
    /// under a row lock.
    pub lock_payment: String,
    /// (claim, scope, number, stale seconds) → one row if claimed.
    pub claim_number: String,
    /// (scope, number) → status, post id, claim.
    pub number_state: String,
    /// (post id, scope, number, claim) → one row if the claim was held.
    pub issue_claimed: String,
    /// (post id, gateway, transaction).
    pub set_payment_post: String,
    /// (scope, number, claim) → one row if the claim was held.
    pub release_claim: String,
    /// `{prefix}counterfoil_chain`: every event of a number's life,
    /// chained per series (`crate::chain`).
    pub chain: String,
    /// (scope) → the chain's position and head, under the series' row lock.
    pub chain_head: String,
    /// (scope, seq, number, event, gateway, transaction, amount, currency,
    /// post id, reason, at, prev hash, hash): none if the position is taken.
    pub chain_append: String,
    /// (seq, hash, the number if the chain's first issued one, scope, the
    /// seq it was at): one row.
    pub chain_move_head: String,
    /// A payment's first delivery in one round trip (issue 30): one
    /// statement of data-modifying CTEs, one implicit transaction. The
    /// series' row is locked and read (`FOR UPDATE`: the latest version),
    /// its counter and chain head moved from what was read, the entry's
    /// hash computed by the server (`sha256` over the canonical input around
    /// the previous hash and the number, `crate::chain::canonical_parts`);
    /// the payment row is inserted with its number, then the registry row
    /// and the chain entry (whose hash is NULL, and refused, unless the
    /// payment row as stored holds the number). A repeat fails on the payment's unique key and
    /// the whole statement rolls back (no number used); a missing or closed
    /// series leaves the number NULL and the registry row refuses it.
    /// Parameters: scope, gateway, transaction, amount, currency, period,
    /// the entry's time, then the canonical input before the previous
    /// hash, between it and the number, after the number (starting with the
    /// number line's newline). Answers the payment's id and the number.
    pub payment_one_trip: String,
    /// The payment table's unique key on (gateway, transaction id): a
    /// violation of it in [`PgSql::payment_one_trip`] is a repeat.
    pub payment_unique: String,
    /// A recorded allocation's first try in one statement (issue 30): the
    /// series' row locked and read, counter and chain head moved from it
    /// (as in [`PgSql::payment_one_trip`]), the registry row `unconfirmed`
    /// with the call's mark and request key, the chain entry. Parameters:
    /// scope, source, the call's mark, request key, the entry's time, then
    /// the canonical input before the previous hash, between it and the
    /// number, after the number. Answers the number.
    pub recorded_one_trip: String,
    /// A held payment's completion in one statement: the series' row locked
    /// and read, counter and chain head moved (as in
    /// [`PgSql::payment_one_trip`]); the payment row numbered only while it
    /// is still held for that series with the amount and currency read
    /// before (a payment numbered meanwhile changes no row, and the
    /// registry row then refuses the NULL number: the statement rolls back
    /// whole); the registry row `reserved`; the chain entry. Parameters:
    /// scope, gateway, transaction, amount, currency, the entry's time, then
    /// the canonical input before the previous hash, between it and the
    /// number, after the number. Answers the number.
    pub complete_one_trip: String,
    /// The numbers a call's mark holds `unconfirmed` in a series, locked
    /// (scope, mark).
    pub unconfirmed_of_call: String,
    /// The AWB stock's tables.
    pub awb: PgAwbSql,
    /// A refund's credit note.
    pub credit: super::sql_credit::PgCreditNoteSql,
}

impl PgSql {
    /// The statements for `prefix`.
    pub fn new(prefix: &TablePrefix) -> Self {
        let p = prefix.as_str();
        let sequences = format!("{p}invoice_sequences");
        let numbers = format!("{p}counterfoil_numbers");
        let payments = format!("{p}counterfoil_payments");
        let chain = format!("{p}counterfoil_chain");
        let counter = |column: &str, null: &str| {
            format!("{column} NUMERIC(20,0) {null} CHECK ({column} >= 0 AND {column} <= {U64_MAX})")
        };
        Self {
            create_sequences: format!(
                "CREATE TABLE IF NOT EXISTS \"{sequences}\" (\n  \
                 scope_key VARCHAR(191) COLLATE \"C\" NOT NULL PRIMARY KEY,\n  \
                 {},\n  \
                 {},\n  \
                 closed_by VARCHAR(191) COLLATE \"C\" NULL,\n  \
                 chain_seq BIGINT NOT NULL DEFAULT 0,\n  \
                 chain_head CHAR(64) NULL,\n  \
                 {}\n)",
                counter("current_value", "NOT NULL DEFAULT 0"),
                counter("start_value", "NULL"),
                counter("chain_from", "NULL"),
            ) + &format!(
                // An adopted table from before Counterfoil lacks start_value,
                // a table from before series were closed lacks closed_by.
                ";\nALTER TABLE \"{sequences}\" ADD COLUMN IF NOT EXISTS {};\n\
                 ALTER TABLE \"{sequences}\" ADD COLUMN IF NOT EXISTS closed_by VARCHAR(191) COLLATE \"C\" NULL;\n\
                 ALTER TABLE \"{sequences}\" ADD COLUMN IF NOT EXISTS chain_seq BIGINT NOT NULL DEFAULT 0;\n\
                 ALTER TABLE \"{sequences}\" ADD COLUMN IF NOT EXISTS chain_head CHAR(64) NULL;\n\
                 ALTER TABLE \"{sequences}\" ADD COLUMN IF NOT EXISTS {}",
                counter("start_value", "NULL"),
                counter("chain_from", "NULL")
            ),
            create_registry: format!(
                "CREATE TABLE IF NOT EXISTS \"{numbers}\" (\n  \
                 id BIGSERIAL PRIMARY KEY,\n  \
                 scope_key VARCHAR(191) COLLATE \"C\" NOT NULL,\n  \
                 {},\n  \
                 status VARCHAR(16) NOT NULL,\n  \
                 reason VARCHAR(255) NULL,\n  \
                 source VARCHAR(32) NOT NULL,\n  \
                 post_id BIGINT NULL,\n  \
                 gateway VARCHAR(32) NULL,\n  \
                 transaction_id VARCHAR(191) COLLATE \"C\" NULL,\n  \
                 claim VARCHAR(40) NULL,\n  \
                 claim_connection BIGINT NULL,\n  \
                 claimed_at TIMESTAMP NULL,\n  \
                 request_key VARCHAR(64) COLLATE \"C\" NULL,\n  \
                 created_at TIMESTAMP NOT NULL,\n  \
                 updated_at TIMESTAMP NOT NULL,\n  \
                 CONSTRAINT \"{numbers}_scope_number\" UNIQUE (scope_key, number)\n);\n\
                 ALTER TABLE \"{numbers}\" ADD COLUMN IF NOT EXISTS request_key VARCHAR(64) COLLATE \"C\" NULL;\n\
                 CREATE UNIQUE INDEX IF NOT EXISTS \"{numbers}_scope_request\" ON \"{numbers}\" (scope_key, request_key);\n\
                 CREATE INDEX IF NOT EXISTS \"{numbers}_scope_status\" ON \"{numbers}\" (scope_key, status);\n\
                 CREATE INDEX IF NOT EXISTS \"{numbers}_status_updated\" ON \"{numbers}\" (status, updated_at);\n\
                 CREATE TABLE IF NOT EXISTS \"{payments}\" (\n  \
                 id BIGSERIAL PRIMARY KEY,\n  \
                 gateway VARCHAR(32) NOT NULL,\n  \
                 transaction_id VARCHAR(191) COLLATE \"C\" NOT NULL,\n  \
                 scope_key VARCHAR(191) COLLATE \"C\" NOT NULL,\n  \
                 {},\n  \
                 post_id BIGINT NULL,\n  \
                 amount VARCHAR(32) NULL,\n  \
                 currency VARCHAR(3) NULL,\n  \
                 period CHAR(7) NULL,\n  \
                 created_at TIMESTAMP NOT NULL,\n  \
                 refers_scope VARCHAR(191) COLLATE \"C\" NULL,\n  \
                 {},\n  \
                 reason VARCHAR(255) NULL,\n  \
                 CONSTRAINT \"{payments}_gateway_transaction\" UNIQUE (gateway, transaction_id)\n);\n\
                 CREATE INDEX IF NOT EXISTS \"{payments}_scope_number\" ON \"{payments}\" (scope_key, number);\n\
                 ALTER TABLE \"{payments}\" ADD COLUMN IF NOT EXISTS refers_scope VARCHAR(191) COLLATE \"C\" NULL;\n\
                 ALTER TABLE \"{payments}\" ADD COLUMN IF NOT EXISTS {};\n\
                 ALTER TABLE \"{payments}\" ADD COLUMN IF NOT EXISTS reason VARCHAR(255) NULL;\n\
                 CREATE INDEX IF NOT EXISTS \"{payments}_refers\" ON \"{payments}\" (refers_scope, refers_number);\n\
                 CREATE TABLE IF NOT EXISTS \"{chain}\" (\n  \
                 scope_key VARCHAR(191) COLLATE \"C\" NOT NULL,\n  \
                 seq BIGINT NOT NULL,\n  \
                 {},\n  \
                 event VARCHAR(16) NOT NULL,\n  \
                 gateway VARCHAR(32) NULL,\n  \
                 transaction_id VARCHAR(191) COLLATE \"C\" NULL,\n  \
                 amount VARCHAR(32) NULL,\n  \
                 currency VARCHAR(3) NULL,\n  \
                 post_id BIGINT NULL,\n  \
                 reason VARCHAR(255) NULL,\n  \
                 event_at TIMESTAMP NOT NULL,\n  \
                 prev_hash CHAR(64) NOT NULL,\n  \
                 hash CHAR(64) NOT NULL,\n  \
                 PRIMARY KEY (scope_key, seq)\n);\n\
                 CREATE INDEX IF NOT EXISTS \"{chain}_scope_number\" ON \"{chain}\" (scope_key, number, event)",
                counter("number", "NOT NULL"),
                counter("number", "NULL"),
                counter("refers_number", "NULL"),
                counter("refers_number", "NULL"),
                counter("number", "NOT NULL"),
            ),
            chain_head: format!(
                "SELECT chain_seq, chain_head FROM \"{sequences}\" WHERE scope_key = $1 FOR UPDATE"
            ),
            chain_append: format!(
                "INSERT INTO \"{chain}\" (scope_key, seq, number, event, gateway, transaction_id, amount, \
                 currency, post_id, reason, event_at, prev_hash, hash) VALUES ($1, $2, $3::text::numeric, $4, \
                 $5, $6, $7, $8, $9, $10, $11::text::timestamp, $12, $13) ON CONFLICT (scope_key, seq) DO NOTHING"
            ),
            payment_one_trip: format!(
                "WITH {allocation}, \
                 p AS (INSERT INTO \"{payments}\" (gateway, transaction_id, scope_key, number, amount, currency, \
                 period, created_at) VALUES ($2, $3, $1, (SELECT number FROM n), $4, $5, $6, \
                 timezone('UTC', now())) RETURNING id, number), \
                 r AS (INSERT INTO \"{numbers}\" (scope_key, number, status, source, gateway, transaction_id, \
                 created_at, updated_at) VALUES ($1, (SELECT number FROM n), 'reserved', 'payment', $2, $3, \
                 timezone('UTC', now()), timezone('UTC', now()))), \
                 c AS (INSERT INTO \"{chain}\" (scope_key, seq, number, event, gateway, transaction_id, amount, \
                 currency, post_id, reason, event_at, prev_hash, hash) SELECT $1, n.seq, n.number, 'issued', $2, \
                 $3, $4, $5, NULL, NULL, $7::text::timestamp, n.prev, \
                 CASE WHEN (SELECT number FROM p) = n.number THEN n.hash END FROM n) \
                 SELECT (SELECT id FROM p), (SELECT number::text FROM n)",
                allocation = one_statement_allocation(&sequences, 8)
            ),
            recorded_one_trip: format!(
                "WITH {allocation}, \
                 r AS (INSERT INTO \"{numbers}\" (scope_key, number, status, source, claim, request_key, \
                 created_at, updated_at) VALUES ($1, (SELECT number FROM n), 'unconfirmed', $2, $3, $4, \
                 timezone('UTC', now()), timezone('UTC', now())) RETURNING number), \
                 c AS (INSERT INTO \"{chain}\" (scope_key, seq, number, event, gateway, transaction_id, amount, \
                 currency, post_id, reason, event_at, prev_hash, hash) SELECT $1, n.seq, n.number, 'issued', NULL, \
                 NULL, NULL, NULL, NULL, NULL, $5::text::timestamp, n.prev, \
                 CASE WHEN (SELECT number FROM r) = n.number THEN n.hash END FROM n) \
                 SELECT (SELECT number::text FROM n)",
                allocation = one_statement_allocation(&sequences, 6)
            ),
            complete_one_trip: format!(
                "WITH {allocation}, \
                 p AS (UPDATE \"{payments}\" held SET number = n.number FROM n WHERE held.gateway = $2 \
                 AND held.transaction_id = $3 AND held.scope_key = $1 AND held.number IS NULL \
                 AND held.amount IS NOT DISTINCT FROM $4 AND held.currency IS NOT DISTINCT FROM $5 \
                 RETURNING held.number), \
                 r AS (INSERT INTO \"{numbers}\" (scope_key, number, status, source, gateway, transaction_id, \
                 created_at, updated_at) VALUES ($1, (SELECT number FROM p), 'reserved', 'payment', $2, $3, \
                 timezone('UTC', now()), timezone('UTC', now()))), \
                 c AS (INSERT INTO \"{chain}\" (scope_key, seq, number, event, gateway, transaction_id, amount, \
                 currency, post_id, reason, event_at, prev_hash, hash) SELECT $1, n.seq, n.number, 'issued', $2, \
                 $3, $4, $5, NULL, NULL, $6::text::timestamp, n.prev, \
                 CASE WHEN (SELECT number FROM p) = n.number THEN n.hash END FROM n) \
                 SELECT (SELECT number::text FROM p)",
                allocation = one_statement_allocation(&sequences, 7)
            ),
            unconfirmed_of_call: format!(
                "SELECT number::text FROM \"{numbers}\" WHERE scope_key = $1 AND claim = $2 \
                 AND status = 'unconfirmed' ORDER BY number FOR UPDATE"
            ),
            payment_unique: format!("{payments}_gateway_transaction"),
            chain_move_head: format!(
                "UPDATE \"{sequences}\" SET chain_seq = $1, chain_head = $2, chain_from = COALESCE(chain_from, $3::text::numeric) \
                 WHERE scope_key = $4 AND chain_seq = $5"
            ),
            initialize: format!(
                "INSERT INTO \"{sequences}\" (scope_key, current_value, start_value) \
                 VALUES ($1, $2::text::numeric, $3::text::numeric) \
                 ON CONFLICT (scope_key) DO NOTHING RETURNING 1"
            ),
            allocate: format!(
                "UPDATE \"{sequences}\" SET current_value = current_value + $2::text::numeric \
                 WHERE scope_key = $1 RETURNING current_value::text"
            ),
            allocate_open: format!(
                "UPDATE \"{sequences}\" SET current_value = current_value + $2::text::numeric \
                 WHERE scope_key = $1 AND closed_by IS NULL RETURNING current_value::text"
            ),
            successor: format!("SELECT closed_by FROM \"{sequences}\" WHERE scope_key = $1"),
            lock_series: format!(
                "SELECT current_value::text, closed_by FROM \"{sequences}\" WHERE scope_key = $1 FOR UPDATE"
            ),
            close: format!(
                "UPDATE \"{sequences}\" SET closed_by = $1 WHERE scope_key = $2 AND closed_by IS NULL"
            ),
            advance: format!(
                "UPDATE \"{sequences}\" SET current_value = $2::text::numeric \
                 WHERE scope_key = $1 AND current_value < $2::text::numeric RETURNING 1"
            ),
            current: format!(
                "SELECT current_value::text, start_value::text FROM \"{sequences}\" WHERE scope_key = $1"
            ),
            list_like: format!(
                "SELECT scope_key, current_value::text FROM \"{sequences}\" WHERE scope_key LIKE $1"
            ),
            insert_number: format!(
                "INSERT INTO \"{numbers}\" (scope_key, number, status, source, gateway, transaction_id, \
                 claim, created_at, updated_at) VALUES ($1, $2::text::numeric, $3, $4, $5, $6, $7, \
                 timezone('UTC', now()), timezone('UTC', now()))"
            ),
            void_unanswered: format!(
                "UPDATE \"{numbers}\" SET status = 'void', reason = $1, updated_at = timezone('UTC', now()) \
                 WHERE scope_key = $2 AND number = $3::text::numeric AND status IN ('issued', 'unconfirmed') \
                 AND claim = $4"
            ),
            insert_keyed: format!(
                "INSERT INTO \"{numbers}\" (scope_key, number, status, source, claim, request_key, \
                 created_at, updated_at) VALUES ($1, $2::text::numeric, 'unconfirmed', $3, $4, $5, \
                 timezone('UTC', now()), timezone('UTC', now()))"
            ),
            find_by_request: format!(
                "SELECT number::text, status, claim FROM \"{numbers}\" WHERE scope_key = $1 AND request_key = $2"
            ),
            confirm_by_call: format!(
                "UPDATE \"{numbers}\" SET status = 'issued', updated_at = timezone('UTC', now()) \
                 WHERE scope_key = $1 AND number = $2::text::numeric AND claim = $3 AND status = 'unconfirmed'"
            ),
            insert_payment: format!(
                "INSERT INTO \"{payments}\" (gateway, transaction_id, scope_key, amount, currency, period, \
                 created_at) VALUES ($1, $2, $3, $4, $5, $6, timezone('UTC', now())) \
                 ON CONFLICT (gateway, transaction_id) DO NOTHING RETURNING id"
            ),
            set_payment_number: format!(
                "UPDATE \"{payments}\" SET number = $1::text::numeric, scope_key = $2 WHERE id = $3"
            ),
            find_payment: format!(
                "SELECT p.scope_key, p.number::text, n.status, n.post_id, p.period, p.amount, \
                 p.currency FROM \"{payments}\" p LEFT JOIN \"{numbers}\" n \
                 ON n.scope_key = p.scope_key AND n.number = p.number \
                 WHERE p.gateway = $1 AND p.transaction_id = $2"
            ),
            insert_held_payment: format!(
                "INSERT INTO \"{payments}\" (gateway, transaction_id, scope_key, amount, currency, period, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, timezone('UTC', now())) \
                 ON CONFLICT (gateway, transaction_id) DO NOTHING RETURNING id"
            ),
            lock_payment: format!(
                "SELECT id, scope_key, number::text, period, amount, currency FROM \"{payments}\" \
                 WHERE gateway = $1 AND transaction_id = $2 FOR UPDATE"
            ),
            claim_number: format!(
                "UPDATE \"{numbers}\" SET status = 'creating', claim = $1, claim_connection = pg_backend_pid(), \
                 claimed_at = timezone('UTC', now()), updated_at = timezone('UTC', now()) \
                 WHERE scope_key = $2 AND number = $3::text::numeric AND (status = 'reserved' OR (status = 'creating' \
                 AND (claimed_at < timezone('UTC', now()) - make_interval(secs => $4::text::float8) \
                 OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = claim_connection)))) RETURNING 1"
            ),
            number_state: format!(
                "SELECT status, post_id, claim FROM \"{numbers}\" WHERE scope_key = $1 AND number = $2::text::numeric"
            ),
            issue_claimed: format!(
                "UPDATE \"{numbers}\" SET status = 'issued', post_id = $1, claim = NULL, claim_connection = NULL, \
                 claimed_at = NULL, updated_at = timezone('UTC', now()) \
                 WHERE scope_key = $2 AND number = $3::text::numeric AND status = 'creating' AND claim = $4"
            ),
            set_payment_post: format!(
                "UPDATE \"{payments}\" SET post_id = $1 WHERE gateway = $2 AND transaction_id = $3"
            ),
            release_claim: format!(
                "UPDATE \"{numbers}\" SET status = 'reserved', claim = NULL, claim_connection = NULL, claimed_at = NULL, \
                 updated_at = timezone('UTC', now()) \
                 WHERE scope_key = $1 AND number = $2::text::numeric AND status = 'creating' AND claim = $3"
            ),
            awb: PgAwbSql::new(p),
            credit: super::sql_credit::PgCreditNoteSql::new(p),
            chain,
            sequences,
            numbers,
            payments,
        }
    }
}

/// Today in UTC, as the MySQL side's `UTC_DATE()`.
pub(crate) const UTC_DATE: &str = "(now() AT TIME ZONE 'UTC')::date";
/// Now in UTC, as `UTC_TIMESTAMP()`.
pub(crate) const UTC_NOW: &str = "timezone('UTC', now())";

/// The AWB stock's statements for a prefix (its three tables created by
/// `create`).
#[derive(Debug)]
pub struct PgAwbSql {
    /// Creates the three tables and their indexes.
    pub(crate) create: String,
    /// Creates a pool if missing (name, prefix).
    pub(crate) insert_pool: String,
    /// A pool under its row lock (name): id, prefix.
    pub(crate) lock_pool: String,
    /// The head of a block's INSERT; one `($1, $n, …, 'ready', $2::text::date, now)` per number follows.
    pub(crate) insert_stock_head: String,
    /// The lowest ready, unfrozen, unexpired serial of a pool, locked (pool name).
    pub(crate) lock_next_ready: String,
    /// A stock number and its pool under the row lock (number): id, status, pool, frozen, shipment, expired.
    pub(crate) lock_number: String,
    /// Releases a number's live assignment (stock id).
    pub(crate) release_assignment: String,
    /// A transition (status, reason, keep shipment, id).
    pub(crate) set_status: String,
    /// Freezes or thaws a number (frozen, number).
    pub(crate) set_frozen: String,
    /// A stock number as stored (number): pool, status, frozen, valid_to, shipment, reason.
    pub(crate) find_number: String,
    /// A pool's numbers per status (pool name).
    pub(crate) count_by_status: String,
    /// A pool's frozen, expired and available numbers (pool name).
    pub(crate) pool_counts: String,
    /// A live assignment (stock id, shipment).
    pub(crate) insert_assignment: String,
    /// Marks a number assigned (shipment, id).
    pub(crate) set_assigned: String,
}

impl PgAwbSql {
    pub(crate) fn new(prefix: &str) -> Self {
        let (pools, stock, assignments) = (
            format!("{prefix}counterfoil_awb_pools"),
            format!("{prefix}counterfoil_awb_stock"),
            format!("{prefix}counterfoil_awb_assignments"),
        );
        let create = format!(
            "CREATE TABLE IF NOT EXISTS \"{pools}\" (id BIGSERIAL PRIMARY KEY, name VARCHAR(64) COLLATE \"C\" NOT NULL UNIQUE, \
             prefix INTEGER NOT NULL, created_at TIMESTAMP NOT NULL);\n\
             CREATE TABLE IF NOT EXISTS \"{stock}\" (id BIGSERIAL PRIMARY KEY, pool_id BIGINT NOT NULL, \
             number CHAR(12) NOT NULL UNIQUE, prefix INTEGER NOT NULL, serial BIGINT NOT NULL, status VARCHAR(16) NOT NULL, \
             frozen BOOLEAN NOT NULL DEFAULT false, valid_to DATE NULL, shipment VARCHAR(64) NULL, reason VARCHAR(255) NULL, \
             updated_at TIMESTAMP NOT NULL);\n\
             CREATE INDEX IF NOT EXISTS \"{stock}_pool_ready\" ON \"{stock}\" (pool_id, status, serial);\n\
             CREATE TABLE IF NOT EXISTS \"{assignments}\" (id BIGSERIAL PRIMARY KEY, stock_id BIGINT NOT NULL, \
             shipment VARCHAR(64) NOT NULL, live SMALLINT NULL, assigned_at TIMESTAMP NOT NULL, released_at TIMESTAMP NULL, \
             CONSTRAINT \"{assignments}_one_live\" UNIQUE (stock_id, live))"
        );
        Self {
            insert_pool: format!("INSERT INTO \"{pools}\" (name, prefix, created_at) VALUES ($1, $2, {UTC_NOW}) ON CONFLICT (name) DO NOTHING"),
            lock_pool: format!("SELECT id, prefix FROM \"{pools}\" WHERE name = $1 FOR UPDATE"),
            insert_stock_head: format!("INSERT INTO \"{stock}\" (pool_id, number, prefix, serial, status, valid_to, updated_at) VALUES "),
            lock_next_ready: format!("SELECT s.id, s.number, s.status FROM \"{stock}\" s JOIN \"{pools}\" p ON p.id = s.pool_id \
                             WHERE p.name = $1 AND s.status = 'ready' AND NOT s.frozen \
                             AND (s.valid_to IS NULL OR s.valid_to >= {UTC_DATE}) \
                             ORDER BY s.serial LIMIT 1 FOR UPDATE OF s"),
            lock_number: format!("SELECT s.id, s.status, p.name, s.frozen, s.shipment, \
                             (s.valid_to IS NOT NULL AND s.valid_to < {UTC_DATE}) \
                             FROM \"{stock}\" s JOIN \"{pools}\" p ON p.id = s.pool_id WHERE s.number = $1 FOR UPDATE OF s"),
            release_assignment: format!("UPDATE \"{assignments}\" SET live = NULL, released_at = {UTC_NOW} WHERE stock_id = $1 AND live = 1"),
            set_status: format!("UPDATE \"{stock}\" SET status = $1, reason = COALESCE($2, reason), \
                             shipment = CASE WHEN $3 THEN shipment ELSE NULL END, updated_at = {UTC_NOW} WHERE id = $4"),
            set_frozen: format!("UPDATE \"{stock}\" SET frozen = $1, updated_at = {UTC_NOW} WHERE number = $2"),
            find_number: format!("SELECT p.name, s.status, s.frozen, s.valid_to::text, s.shipment, s.reason \
                             FROM \"{stock}\" s JOIN \"{pools}\" p ON p.id = s.pool_id WHERE s.number = $1"),
            count_by_status: format!("SELECT s.status, COUNT(*) FROM \"{stock}\" s JOIN \"{pools}\" p ON p.id = s.pool_id \
                             WHERE p.name = $1 GROUP BY s.status ORDER BY s.status"),
            pool_counts: format!("SELECT COUNT(*) FILTER (WHERE s.frozen), \
                             COUNT(*) FILTER (WHERE s.status = 'ready' AND s.valid_to < {UTC_DATE}), \
                             COUNT(*) FILTER (WHERE s.status = 'ready' AND NOT s.frozen AND (s.valid_to IS NULL OR s.valid_to >= {UTC_DATE})) \
                             FROM \"{stock}\" s JOIN \"{pools}\" p ON p.id = s.pool_id WHERE p.name = $1"),
            insert_assignment: format!("INSERT INTO \"{assignments}\" (stock_id, shipment, live, assigned_at) VALUES ($1, $2, 1, {UTC_NOW})"),
            set_assigned: format!("UPDATE \"{stock}\" SET status = 'assigned', shipment = $1, updated_at = {UTC_NOW} WHERE id = $2"),
            create,
        }
    }
}

/// The one-statement flows' first two CTEs: `cur` locks and reads the
/// series' row (`FOR UPDATE` returns the latest version, so the head read is
/// the head replaced); `n` moves counter and chain head from it and returns
/// the number, the entry's position, its hash and the previous hash. The
/// canonical input around the previous hash and the number is in the
/// parameters `$first`, `$first + 1` and `$first + 2`; the scope is `$1`.
fn one_statement_allocation(sequences: &str, first: usize) -> String {
    let (before_prev, before_number, after) = (first, first + 1, first + 2);
    let genesis = crate::chain::GENESIS;
    format!(
        "cur AS (SELECT current_value, chain_seq, COALESCE(chain_head, '{genesis}')::text AS prev \
         FROM \"{sequences}\" WHERE scope_key = $1 AND closed_by IS NULL FOR UPDATE), \
         n AS (UPDATE \"{sequences}\" s SET current_value = cur.current_value + 1, \
         chain_seq = cur.chain_seq + 1, \
         chain_head = encode(sha256(convert_to(${before_prev}::text || cur.prev || ${before_number}::text \
         || length((cur.current_value + 1)::text)::text || ':' || (cur.current_value + 1)::text \
         || ${after}::text, 'UTF8')), 'hex'), \
         chain_from = COALESCE(s.chain_from, cur.current_value + 1) \
         FROM cur WHERE s.scope_key = $1 \
         RETURNING s.current_value AS number, s.chain_seq AS seq, s.chain_head AS hash, cur.prev AS prev)"
    )
}
