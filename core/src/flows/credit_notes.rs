//! A refund's credit note recorded, written once for both engines (issue
//! 46): the row that holds it (without a number yet, held in its series
//! like a payment for the payment flow to number), the invoice it names and
//! the cap on what may be credited, in ONE transaction on the store's own
//! connection.
//!
//! Invariants:
//! - the transaction's first statement locks the invoice's registry row
//!   (`SELECT … FOR UPDATE` on its series and number); every credit note
//!   of that invoice is written or named only under this lock, so two
//!   refunds of one invoice at once are checked one after the other, and a
//!   lock that a connection lost is never silently gone (the transaction
//!   goes with it);
//! - every other read comes after the lock, as a plain read: on
//!   MySQL/MariaDB (REPEATABLE READ) a transaction's snapshot is taken at its
//!   first plain read, on PostgreSQL (READ COMMITTED) at each statement, so
//!   both see every credit note committed by the lock's earlier holders;
//! - a credit note's row is written with the invoice it names in one
//!   statement: no row of this flow is ever left without its invoice;
//! - a refund delivered again finds its row and is answered from it (the
//!   same invoice and amount, or [`CreditNoteHeld::Mismatch`]); a row an
//!   older delivery left without its invoice is named only if the cap
//!   allows its amount;
//! - the amount is decided by the one rule,
//!   [`crate::credit_note::credit_note_amount`]; a refused refund writes
//!   nothing (the transaction commits no change).

use std::future::Future;

use super::payments::NewPayment;
use super::{Answer, Dialect};
use crate::credit_note::{
    credit_note_amount, kind_of, minor_units, CreditNoteHeld, CreditNoteRequest, Kind,
};
use crate::error::Error;
use crate::money::amount_from_minor_units;

/// A refund's row as stored (read after the invoice's lock).
pub(crate) struct RefundRow {
    pub(crate) scope: String,
    pub(crate) amount: Option<String>,
    pub(crate) refers_scope: Option<String>,
    pub(crate) refers_number: Option<u64>,
}

/// The invoice a credit note names, and why.
pub(crate) struct Refers<'a> {
    pub(crate) scope: &'a str,
    pub(crate) number: u64,
    pub(crate) reason: &'a str,
}

/// The credit-note statements, as one dialect sends them.
pub(crate) trait CreditNoteStatements: Dialect {
    /// Locks the invoice's registry row: its status, or `None` without one.
    fn lock_invoice(
        &mut self,
        scope: &str,
        number: u64,
    ) -> impl Future<Output = Answer<Option<String>, Self::Failure>> + Send;

    /// The refund's row (gateway, refund id), if any.
    fn refund_row(
        &mut self,
        gateway: &str,
        txn: &str,
    ) -> impl Future<Output = Answer<Option<RefundRow>, Self::Failure>> + Send;

    /// The amounts of the credit notes that name invoice (`scope`, `number`).
    fn credited_amounts(
        &mut self,
        scope: &str,
        number: u64,
    ) -> impl Future<Output = Result<Vec<Option<String>>, Self::Failure>> + Send;

    /// Inserts the credit note's row of series `scope`, without a number,
    /// naming its invoice; `false` when the refund has a row already.
    fn insert_credit_note(
        &mut self,
        scope: &str,
        payment: &NewPayment<'_>,
        refers: &Refers<'_>,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;

    /// Names the invoice on a refund's row that names none: the rows changed.
    fn link_credit_note(
        &mut self,
        gateway: &str,
        txn: &str,
        refers: &Refers<'_>,
    ) -> impl Future<Output = Result<u64, Self::Failure>> + Send;
}

/// Records the credit note of `request` in series `scope` (held without a
/// number, received in `period`, `YYYY-MM`), in one transaction under the
/// invoice's lock.
pub(crate) async fn hold_credit_note<S: CreditNoteStatements + Send>(
    statements: &mut S,
    scope: &str,
    request: &CreditNoteRequest,
    period: &str,
) -> Answer<CreditNoteHeld, S::Failure> {
    statements.begin().await?;
    let outcome = hold_locked(statements, scope, request, period).await;
    statements.end(outcome).await
}

/// The work inside the transaction.
async fn hold_locked<S: CreditNoteStatements + Send>(
    statements: &mut S,
    scope: &str,
    request: &CreditNoteRequest,
    period: &str,
) -> Answer<CreditNoteHeld, S::Failure> {
    let (invoice, number) = (request.invoice_scope().as_str(), request.invoice_number());
    match statements.lock_invoice(invoice, number).await? {
        Ok(Some(status)) if status == "issued" => {}
        Ok(_) => return Ok(Ok(CreditNoteHeld::NotIssued)),
        Err(e) => return Ok(Err(e)),
    }
    let (gateway, txn) = (
        request.refund().gateway(),
        request.refund().transaction_id(),
    );
    let row = match statements.refund_row(gateway, txn).await? {
        Ok(row) => row,
        Err(e) => return Ok(Err(e)),
    };
    let currency = request.currency();
    let refers = Refers {
        scope: invoice,
        number,
        reason: request.reason(),
    };
    let credited = match total(
        statements.credited_amounts(invoice, number).await?,
        currency,
    ) {
        Ok(t) => t,
        Err(e) => return Ok(Err(e)),
    };
    let Some(row) = row else {
        let minor = match credit_note_amount(request.invoice_minor(), credited, request.requested())
        {
            Ok(minor) => minor,
            Err(_) => return Ok(Ok(refused(request, credited))),
        };
        let amount = match amount_from_minor_units(minor, currency) {
            Ok((amount, _)) => amount,
            Err(e) => return Ok(Err(e)),
        };
        let payment = NewPayment {
            gateway,
            txn,
            amount: Some(&amount),
            currency: Some(currency),
            period: Some(period),
        };
        if !statements
            .insert_credit_note(scope, &payment, &refers)
            .await?
        {
            // Another delivery of this refund, naming another invoice,
            // recorded it meanwhile (one naming this invoice waits on its lock).
            return Ok(Ok(CreditNoteHeld::Mismatch));
        }
        return Ok(Ok(CreditNoteHeld::Recorded {
            scope: scope.to_owned(),
            amount,
            created: true,
        }));
    };
    let Some(amount) = row.amount.clone() else {
        return Ok(Ok(CreditNoteHeld::Mismatch));
    };
    let Ok(row_minor) = minor_units(&amount, currency) else {
        return Ok(Ok(CreditNoteHeld::Mismatch));
    };
    if request.requested().is_some_and(|r| r != row_minor) {
        return Ok(Ok(CreditNoteHeld::Mismatch));
    }
    match (&row.refers_scope, row.refers_number) {
        (Some(s), Some(n)) if s == invoice && n == number => Ok(Ok(CreditNoteHeld::Recorded {
            scope: row.scope,
            amount,
            created: false,
        })),
        (None, _) if kind_of(&row.scope) == Kind::CreditNote => {
            // Left without its invoice by a delivery from before issue 46:
            // named now, only if what is left allows its amount.
            if credit_note_amount(request.invoice_minor(), credited, Some(row_minor)).is_err() {
                return Ok(Ok(refused(request, credited)));
            }
            if statements.link_credit_note(gateway, txn, &refers).await? != 1 {
                return Ok(Ok(CreditNoteHeld::Mismatch));
            }
            Ok(Ok(CreditNoteHeld::Recorded {
                scope: row.scope,
                amount,
                created: true,
            }))
        }
        _ => Ok(Ok(CreditNoteHeld::Mismatch)),
    }
}

/// The refusal of `request` with `credited` already credited.
fn refused(request: &CreditNoteRequest, credited: u64) -> CreditNoteHeld {
    CreditNoteHeld::Refused {
        invoice_minor: request.invoice_minor(),
        credited_minor: credited,
        requested_minor: request.requested(),
    }
}

/// What the credit notes of `amounts` total in smallest units of `currency`.
fn total(amounts: Vec<Option<String>>, currency: &str) -> crate::error::Result<u64> {
    let mut sum = 0u64;
    for amount in amounts.into_iter().flatten() {
        let minor = minor_units(&amount, currency).map_err(|e| {
            Error::Unexpected(format!("a stored credit note's amount `{amount}`: {e}"))
        })?;
        sum = sum.saturating_add(minor);
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_in_smallest_units() {
        let amounts = vec![Some("60.00".to_owned()), None, Some("0.5".to_owned())];
        assert_eq!(total(amounts, "EUR").unwrap(), 6050);
        assert!(total(vec![Some("1.234".to_owned())], "EUR").is_err());
    }
}
