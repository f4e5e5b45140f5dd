//! The PostgreSQL statements of a refund's credit note
//! (`crate::flows::credit_notes`), for one table prefix.
//!
//! Invariants: as `sql.rs` — only the prefix is spliced into the text;
//! numbers cross the wire as text (`$n::text::numeric` in, `::text` out).

/// The credit-note statements for one prefix.
#[derive(Debug)]
pub struct PgCreditNoteSql {
    /// (scope, number) → the invoice's status, its registry row locked.
    pub lock_invoice: String,
    /// (gateway, refund id) → series, amount, the invoice it names.
    pub refund_row: String,
    /// (invoice's scope, number) → the amounts of its credit notes.
    pub credited: String,
    /// (gateway, refund id, scope, amount, currency, period, invoice's
    /// scope, number, reason) → one row if recorded, none if the refund has
    /// a row already.
    pub insert_credit_note: String,
    /// (invoice's scope, number, reason, gateway, refund id): names the
    /// invoice on a row that names none.
    pub link_credit_note: String,
}

impl PgCreditNoteSql {
    /// The statements for the table prefix `p`.
    pub fn new(p: &str) -> Self {
        let numbers = format!("{p}counterfoil_numbers");
        let payments = format!("{p}counterfoil_payments");
        Self {
            lock_invoice: format!(
                "SELECT status FROM \"{numbers}\" WHERE scope_key = $1 AND number = $2::text::numeric \
                 FOR UPDATE"
            ),
            refund_row: format!(
                "SELECT scope_key, amount, refers_scope, refers_number::text FROM \"{payments}\" \
                 WHERE gateway = $1 AND transaction_id = $2"
            ),
            credited: format!(
                "SELECT amount FROM \"{payments}\" WHERE refers_scope = $1 \
                 AND refers_number = $2::text::numeric"
            ),
            insert_credit_note: format!(
                "INSERT INTO \"{payments}\" (gateway, transaction_id, scope_key, amount, currency, period, \
                 created_at, refers_scope, refers_number, reason) \
                 VALUES ($1, $2, $3, $4, $5, $6, timezone('UTC', now()), $7, $8::text::numeric, $9) \
                 ON CONFLICT (gateway, transaction_id) DO NOTHING RETURNING id"
            ),
            link_credit_note: format!(
                "UPDATE \"{payments}\" SET refers_scope = $1, refers_number = $2::text::numeric, \
                 reason = $3 WHERE gateway = $4 AND transaction_id = $5 AND refers_scope IS NULL"
            ),
        }
    }
}
