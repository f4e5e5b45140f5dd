//! The MySQL/MariaDB statements of a refund's credit note
//! (`crate::flows::credit_notes`), for one table prefix.
//!
//! Invariants: as `sql.rs` — only the prefix is interpolated, every value is
//! bound; the pure-PHP twin sends the same text
//! (`tests/vectors/credit_note_statements.json`, written and checked by
//! `core/tests/credit_note_statements.rs`, and `VectorsTest`).

use crate::table_prefix::TablePrefix;

/// The credit-note statements for one prefix.
#[derive(Clone, Debug)]
pub struct CreditNoteSql {
    /// Locks the invoice's registry row and reads its status (scope, number).
    pub lock_invoice: String,
    /// A refund's row: series, amount, the invoice it names (gateway,
    /// refund id).
    pub refund_row: String,
    /// The amounts of an invoice's credit notes (invoice's scope, number).
    pub credited: String,
    /// Records a credit note held without a number, naming its invoice
    /// (gateway, refund id, scope, amount, currency, period, invoice's
    /// scope, invoice's number, reason).
    pub insert_credit_note: String,
    /// Names the invoice on a refund's row that names none (invoice's scope,
    /// invoice's number, reason, gateway, refund id).
    pub link_credit_note: String,
}

impl CreditNoteSql {
    /// The statements for `prefix`.
    pub fn new(prefix: &TablePrefix) -> Self {
        let numbers = format!("{}counterfoil_numbers", prefix.as_str());
        let payments = format!("{}counterfoil_payments", prefix.as_str());
        Self {
            lock_invoice: format!(
                "SELECT status FROM `{numbers}` WHERE scope_key = ? AND number = ? FOR UPDATE"
            ),
            refund_row: format!(
                "SELECT scope_key, amount, refers_scope, refers_number FROM `{payments}` \
                 WHERE gateway = ? AND transaction_id = ?"
            ),
            credited: format!(
                "SELECT amount FROM `{payments}` WHERE refers_scope = ? AND refers_number = ?"
            ),
            insert_credit_note: format!(
                "INSERT INTO `{payments}` (gateway, transaction_id, scope_key, amount, currency, period, \
                 created_at, refers_scope, refers_number, reason) \
                 VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(), ?, ?, ?)"
            ),
            link_credit_note: format!(
                "UPDATE `{payments}` SET refers_scope = ?, refers_number = ?, reason = ? \
                 WHERE gateway = ? AND transaction_id = ? AND refers_scope IS NULL"
            ),
        }
    }

    /// Every statement by name (`credit_note.*`), for the shared vectors.
    pub fn named(&self) -> Vec<(&'static str, String)> {
        vec![
            ("credit_note.lock_invoice", self.lock_invoice.clone()),
            ("credit_note.refund_row", self.refund_row.clone()),
            ("credit_note.credited", self.credited.clone()),
            (
                "credit_note.insert_credit_note",
                self.insert_credit_note.clone(),
            ),
            (
                "credit_note.link_credit_note",
                self.link_credit_note.clone(),
            ),
        ]
    }
}
