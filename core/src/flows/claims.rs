//! The claim on a reserved number while its invoice is written (the payment
//! flow's second phase), written once for both engines.
//!
//! Invariants: a claim is a committed row state (`creating`, the claim id),
//! not a lock, so it survives whatever happens to the caller's other
//! connections; it is taken, kept or released only by its holder, and a
//! dead holder's claim (older than the stale time, or its server session
//! gone) is taken over; a number is issued with its payment's post in one
//! transaction, and a repeat of an issue whose answer was lost reads as done.

use std::future::Future;
use std::time::Duration;

use super::{Answer, Dialect};
use crate::error::Error;
use crate::payment::{Claim, PaymentRef};

/// A number's registry row: status, post and claim holder.
pub(crate) type NumberState = (String, Option<u64>, Option<String>);

/// The claim statements, as one dialect sends them.
pub(crate) trait ClaimStatements: Dialect {
    /// Claims `number` of `scope` for `claim` if it is reserved, or claimed
    /// by a holder that is gone or older than `stale`: whether it took it.
    fn take_claim(
        &mut self,
        claim: &str,
        scope: &str,
        number: u64,
        stale: Duration,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;

    /// `number`'s registry row: status, post and claim holder.
    fn number_state(
        &mut self,
        scope: &str,
        number: u64,
    ) -> impl Future<Output = Answer<Option<NumberState>, Self::Failure>> + Send;

    /// Marks `number` issued to `post_id` if `claim` holds it: rows changed.
    fn issue_claimed(
        &mut self,
        post_id: u64,
        scope: &str,
        number: u64,
        claim: &str,
    ) -> impl Future<Output = Answer<u64, Self::Failure>> + Send;

    /// Gives the payment row its post.
    fn set_payment_post(
        &mut self,
        post_id: u64,
        gateway: &str,
        txn: &str,
    ) -> impl Future<Output = Answer<(), Self::Failure>> + Send;

    /// Gives `claim`'s hold on `number` back: whether it held it.
    fn release_claim(
        &mut self,
        scope: &str,
        number: u64,
        claim: &str,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;
}

/// Claims a reserved number to create its invoice.
pub(crate) async fn claim<S: ClaimStatements + Send>(
    statements: &mut S,
    scope: &str,
    number: u64,
    claim: &str,
    stale: Duration,
) -> Answer<Claim, S::Failure> {
    if statements.take_claim(claim, scope, number, stale).await? {
        return Ok(Ok(Claim::Claimed));
    }
    Ok(match statements.number_state(scope, number).await? {
        Ok(None) => Err(Error::Unexpected(format!(
            "number {number} of series `{scope}` is not in the registry"
        ))),
        Ok(Some((status, post_id, holder))) => crate::payment::claim_from_state(
            scope,
            number,
            claim,
            &status,
            post_id,
            holder.as_deref(),
        ),
        Err(e) => Err(e),
    })
}

/// Marks a claimed number issued to `post_id`, and the payment's row with
/// its post, in one transaction; `false` when the claim was lost (nothing
/// changed).
pub(crate) async fn issue<S: ClaimStatements + Send>(
    statements: &mut S,
    scope: &str,
    number: u64,
    claim: &str,
    post_id: u64,
    payment: Option<&PaymentRef>,
) -> Answer<bool, S::Failure> {
    statements.begin().await?;
    let outcome = issue_in_transaction(statements, scope, number, claim, post_id, payment).await;
    statements.end(outcome).await
}

async fn issue_in_transaction<S: ClaimStatements + Send>(
    statements: &mut S,
    scope: &str,
    number: u64,
    claim: &str,
    post_id: u64,
    payment: Option<&PaymentRef>,
) -> Answer<bool, S::Failure> {
    let changed = match statements
        .issue_claimed(post_id, scope, number, claim)
        .await?
    {
        Ok(changed) => changed,
        Err(e) => return Ok(Err(e)),
    };
    if changed != 1 {
        // Lost, or issued by this call's earlier try whose COMMIT answer
        // was lost.
        let ours = match statements.number_state(scope, number).await? {
            Ok(row) => row.is_some_and(|(status, issued, _)| {
                crate::payment::issued_to(&status, issued, post_id)
            }),
            Err(e) => return Ok(Err(e)),
        };
        if !ours {
            return Ok(Ok(false));
        }
    }
    if let Some(p) = payment {
        if let Err(e) = statements
            .set_payment_post(post_id, p.gateway(), p.transaction_id())
            .await?
        {
            return Ok(Err(e));
        }
    }
    Ok(Ok(true))
}
