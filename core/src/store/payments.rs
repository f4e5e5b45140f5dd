//! The payment flow on MySQL/MariaDB: recording a payment with its number,
//! holding one whose series is missing, and the claim on a number while its
//! invoice is written (the shared flows: `crate::flows::payments`,
//! `crate::flows::numbering`).
//!
//! Invariants: one payment row per (gateway, transaction id), inserted
//! first; a repeat finds the first delivery's number; a held payment is
//! numbered under its row's lock; a claim is taken, kept or released only by
//! its holder, and a dead holder's claim is taken over.

use super::*;
use crate::flows::payments::NewPayment;

impl SeriesStore {
    /// Records a payment and gives it a number, exactly once per
    /// (gateway, transaction id): in one transaction, inserts the payment row,
    /// allocates from `scope`, records the number as reserved for the payment,
    /// and commits. A payment seen before (one after another, or at the same
    /// moment) gets the number of its first delivery and changes nothing.
    pub async fn record_payment(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
    ) -> Result<PaymentRecord> {
        self.record_payment_in(scope, payment, amount, currency, None)
            .await
    }

    /// [`SeriesStore::record_payment`], with the period recorded.
    ///
    /// `period` is the site's local year and month at the instant the
    /// payment arrived, recorded with it: every later step (the invoice's
    /// rendered number, a completion after midnight) takes year and month
    /// from this one instant.
    pub async fn record_payment_in(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Option<Period>,
    ) -> Result<PaymentRecord> {
        crate::payment::check_payment_values(amount, currency)?;
        let stored_period = period.map(|p| p.to_string());
        let (gateway, txn) = (
            payment.gateway().to_owned(),
            payment.transaction_id().to_owned(),
        );
        let (amount, currency) = (amount.map(str::to_owned), currency.map(str::to_owned));
        self.run("record_payment", scope.as_str(), move |conn, sql, key| {
            let (gateway, txn, amount, currency, stored_period) = (
                gateway.clone(),
                txn.clone(),
                amount.clone(),
                currency.clone(),
                stored_period.clone(),
            );
            Box::pin(async move {
                let mut tx = Tx::begin(conn).await?;
                let payment = NewPayment {
                    gateway: &gateway,
                    txn: &txn,
                    amount: amount.as_deref(),
                    currency: currency.as_deref(),
                    period: stored_period.as_deref(),
                };
                let outcome = crate::flows::payments::record_first(
                    &mut dialect::MysqlNumbering { conn: &mut tx, sql },
                    key,
                    &payment,
                    period,
                )
                .await;
                match tx.end(outcome).await? {
                    Ok(Some(record)) => Ok(Ok(record)),
                    Err(e) => Ok(Err(e)),
                    // That delivery committed its number, or was held for
                    // its series (then this one numbers it).
                    Ok(None) => match find_payment(conn, sql, &gateway, &txn).await? {
                        Ok(Found::Numbered(r)) => Ok(Ok(r)),
                        Ok(Found::Waiting) => complete_held(conn, sql, &gateway, &txn).await,
                        Err(e) => Ok(Err(e)),
                    },
                }
            })
        })
        .await
    }

    /// Records a payment whose series does not exist yet, without a number
    /// (docs/design.md §7: a payment is never lost because its series is missing).
    /// `period` is the site's local year and month when it arrived. A later
    /// [`SeriesStore::record_payment`] of the same payment, once the series
    /// exists, gives it its number. Once per (gateway, transaction id): a
    /// repeat reports `Waiting { created: false }`, or the number it received.
    pub async fn hold_payment(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Period,
    ) -> Result<Held> {
        crate::payment::check_payment_values(amount, currency)?;
        let (gateway, txn) = (
            payment.gateway().to_owned(),
            payment.transaction_id().to_owned(),
        );
        let (amount, currency) = (amount.map(str::to_owned), currency.map(str::to_owned));
        let period = period.to_string();
        self.run("hold_payment", scope.as_str(), move |conn, sql, key| {
            let (gateway, txn, amount, currency, period) = (
                gateway.clone(),
                txn.clone(),
                amount.clone(),
                currency.clone(),
                period.clone(),
            );
            Box::pin(async move {
                match conn
                    .exec_drop(
                        &sql.registry.insert_held_payment,
                        (&gateway, &txn, key, &amount, &currency, &period),
                    )
                    .await
                {
                    Ok(()) => Ok(Ok(Held::Waiting { created: true })),
                    Err(mysql_async::Error::Server(e)) if e.code == codes::ER_DUP_ENTRY => {
                        Ok(find_payment(conn, sql, &gateway, &txn)
                            .await?
                            .map(Found::held_again))
                    }
                    Err(e) => Err(e),
                }
            })
        })
        .await
    }

    /// Claims a reserved number of `scope` to create its invoice (the payment
    /// flow's second phase). The claim is committed on this store's own
    /// connection, so it survives whatever happens to the caller's other
    /// connections; a claim older than `stale_after` is taken over (its
    /// holder died). `claim` is the caller's random id (1–40 characters).
    pub async fn claim_number(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        stale_after: std::time::Duration,
    ) -> Result<Claim> {
        crate::payment::check_claim_id(claim)?;
        let (claim, stale) = (claim.to_owned(), stale_after.as_secs());
        self.run("claim_number", scope.as_str(), move |conn, sql, key| {
            let claim = claim.clone();
            Box::pin(async move {
                conn.exec_drop(&sql.registry.claim_number, (&claim, key, number, stale))
                    .await?;
                if conn.affected_rows() == 1 {
                    return Ok(Ok(Claim::Claimed));
                }
                let row: Option<(String, Option<u64>, Option<String>)> = conn
                    .exec_first(&sql.registry.number_state, (key, number))
                    .await?;
                Ok(match row {
                    None => Err(Error::Unexpected(format!(
                        "number {number} of series `{key}` is not in the registry"
                    ))),
                    Some((status, post_id, holder)) => crate::payment::claim_from_state(
                        key,
                        number,
                        &claim,
                        &status,
                        post_id,
                        holder.as_deref(),
                    ),
                })
            })
        })
        .await
    }

    /// Marks a number this caller claimed as issued to `post_id`, and the
    /// payment's row with its post, in one transaction. `false` when the
    /// claim was lost (taken over as stale): nothing changed.
    pub async fn issue_claimed(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        post_id: u64,
        payment: Option<&PaymentRef>,
    ) -> Result<bool> {
        crate::payment::check_claim_id(claim)?;
        let claim = claim.to_owned();
        let payment = payment.map(|p| (p.gateway().to_owned(), p.transaction_id().to_owned()));
        self.run("issue_claimed", scope.as_str(), move |conn, sql, key| {
            let (claim, payment) = (claim.clone(), payment.clone());
            Box::pin(async move {
                let mut tx = Tx::begin(conn).await?;
                let outcome = async {
                    tx.exec_drop(&sql.registry.issue_claimed, (post_id, key, number, &claim))
                        .await?;
                    if tx.affected_rows() != 1 {
                        // Lost, or issued by this call's earlier try whose
                        // COMMIT answer was lost.
                        let row: Option<(String, Option<u64>, Option<String>)> = tx
                            .exec_first(&sql.registry.number_state, (key, number))
                            .await?;
                        let ours = row.is_some_and(|(status, issued, _)| {
                            crate::payment::issued_to(&status, issued, post_id)
                        });
                        if !ours {
                            return Ok(Ok(false));
                        }
                    }
                    if let Some((gateway, txn)) = &payment {
                        tx.exec_drop(&sql.registry.set_payment_post, (post_id, gateway, txn))
                            .await?;
                    }
                    Ok(Ok(true))
                }
                .await;
                tx.end(outcome).await
            })
        })
        .await
    }

    /// Gives a claim back after a failure: the number is reserved again and
    /// the next delivery completes it. `false` when the claim was not held.
    pub async fn release_claim(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
    ) -> Result<bool> {
        crate::payment::check_claim_id(claim)?;
        let claim = claim.to_owned();
        self.run("release_claim", scope.as_str(), move |conn, sql, key| {
            let claim = claim.clone();
            Box::pin(async move {
                conn.exec_drop(&sql.registry.release_claim, (key, number, &claim))
                    .await?;
                Ok(Ok(conn.affected_rows() == 1))
            })
        })
        .await
    }
}

/// Reads a payment recorded by an earlier delivery (`flows::payments`).
pub(super) async fn find_payment(
    conn: &mut Conn,
    sql: &Sql,
    gateway: &str,
    txn: &str,
) -> AttemptResult<Found> {
    crate::flows::payments::find_payment(&mut dialect::MysqlNumbering { conn, sql }, gateway, txn)
        .await
}

/// Gives a held payment its number, in one transaction under the payment
/// row's lock (`flows::payments::complete_held`): the series chosen when the
/// payment arrived (or its successor), the number recorded as reserved, the
/// payment row updated. A concurrent delivery waits on the lock and then
/// finds the number. A series that still does not exist is
/// `SeriesNotFound`, and nothing changes.
pub(super) async fn complete_held(
    conn: &mut Session,
    sql: &Sql,
    gateway: &str,
    txn: &str,
) -> AttemptResult<PaymentRecord> {
    let mut tx = Tx::begin(conn).await?;
    let outcome = crate::flows::payments::complete_held(
        &mut dialect::MysqlNumbering { conn: &mut tx, sql },
        gateway,
        txn,
    )
    .await;
    match tx.end(outcome).await? {
        Ok(Some(record)) => Ok(Ok(record)),
        Err(e) => Ok(Err(e)),
        Ok(None) => Ok(crate::flows::payments::numbered_meanwhile(
            find_payment(conn, sql, gateway, txn).await?,
            gateway,
            txn,
        )),
    }
}
