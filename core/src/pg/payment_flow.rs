//! The payment flow on PostgreSQL, as on MySQL (the shared flows:
//! `crate::flows::payments`, `crate::flows::numbering`): recording a payment
//! with its number, payments held without a number until their series
//! exists (docs/design.md §7), and the claim on a reserved number while its
//! invoice is created.
//!
//! Invariants: a held payment is recorded once per (gateway, transaction id)
//! (`ON CONFLICT DO NOTHING`); the delivery that numbers it does so under the
//! payment row's lock, from the series it was held for, and a concurrent
//! delivery waits on that lock and then finds the number. A claim is a
//! committed row state (`creating`, the claim id, the backend's pid), not a
//! lock: a claim older than the stale time, or whose backend is gone from
//! `pg_stat_activity`, is taken over.

use std::time::Duration;

use super::{dialect, PgConn, PgResult, PgSql, PgStore};
use crate::error::{Error, Result};
use crate::flows::payments::{Found, NewPayment};
use crate::format::Period;
use crate::payment::{check_claim_id, claim_from_state, Claim, Held, PaymentRecord, PaymentRef};
use crate::scope::ScopeKey;

impl PgStore {
    /// Records a payment and gives it a number, exactly once per (gateway,
    /// transaction id): in one transaction, the payment row (`ON CONFLICT DO
    /// NOTHING`), the number, its registry row as reserved. A payment seen
    /// before (one after another, or at the same moment: the second waits
    /// for the first's commit on the unique index) gets its first number.
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

    /// [`PgStore::record_payment`], with the period (the site's local year
    /// and month when the payment arrived) recorded with the payment: every
    /// later step takes year and month from this one instant.
    pub async fn record_payment_in(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Option<crate::format::Period>,
    ) -> Result<PaymentRecord> {
        crate::payment::check_payment_values(amount, currency)?;
        let stored_period = period.map(|p| p.to_string());
        let key = scope.as_str().to_owned();
        let (gateway, txn) = (
            payment.gateway().to_owned(),
            payment.transaction_id().to_owned(),
        );
        let (amount, currency) = (amount.map(str::to_owned), currency.map(str::to_owned));
        self.run("record_payment", move |client, sql| {
            let (key, gateway, txn, amount, currency, stored_period) = (
                key.clone(),
                gateway.clone(),
                txn.clone(),
                amount.clone(),
                currency.clone(),
                stored_period.clone(),
            );
            Box::pin(async move {
                let allocate = client.prepared(&sql.allocate_open).await?;
                let insert = client.prepared(&sql.insert_number).await?;
                let insert_payment = client.prepared(&sql.insert_payment).await?;
                let tx = client.begin().await?;
                let payment = NewPayment {
                    gateway: &gateway,
                    txn: &txn,
                    amount: amount.as_deref(),
                    currency: currency.as_deref(),
                    period: stored_period.as_deref(),
                };
                let mut statements = dialect::PgNumbering {
                    tx: &tx,
                    sql,
                    allocate: &allocate,
                    insert: &insert,
                    insert_payment: Some(&insert_payment),
                };
                match crate::flows::payments::record_first(&mut statements, &key, &payment, period)
                    .await?
                {
                    Ok(Some(record)) => {
                        tx.commit().await?;
                        Ok(Ok(record))
                    }
                    Err(e) => Ok(Err(e)),
                    // Delivered before: that delivery committed its number,
                    // or was held for its series (then this one numbers it).
                    Ok(None) => {
                        drop(tx);
                        match find_payment(client, sql, &gateway, &txn).await? {
                            Ok(Found::Numbered(r)) => Ok(Ok(r)),
                            Ok(Found::Waiting) => complete_held(client, sql, &gateway, &txn).await,
                            Err(e) => Ok(Err(e)),
                        }
                    }
                }
            })
        })
        .await
    }

    /// Records a payment whose series does not exist yet, without a number;
    /// `period` is the site's local year and month when it arrived. A later
    /// `record_payment` of the same payment, once the series exists, numbers
    /// it. A repeat reports `Waiting { created: false }`, or its number.
    pub async fn hold_payment(
        &mut self,
        scope: &ScopeKey,
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Period,
    ) -> Result<Held> {
        crate::payment::check_payment_values(amount, currency)?;
        let key = scope.as_str().to_owned();
        let (gateway, txn) = (
            payment.gateway().to_owned(),
            payment.transaction_id().to_owned(),
        );
        let (amount, currency) = (amount.map(str::to_owned), currency.map(str::to_owned));
        let period = period.to_string();
        self.run("hold_payment", move |client, sql| {
            let (key, gateway, txn, amount, currency, period) = (
                key.clone(),
                gateway.clone(),
                txn.clone(),
                amount.clone(),
                currency.clone(),
                period.clone(),
            );
            Box::pin(async move {
                let inserted = client
                    .query_opt(
                        &sql.insert_held_payment,
                        &[&gateway, &txn, &key, &amount, &currency, &period],
                    )
                    .await?;
                if inserted.is_some() {
                    return Ok(Ok(Held::Waiting { created: true }));
                }
                Ok(find_payment(client, sql, &gateway, &txn)
                    .await?
                    .map(Found::held_again))
            })
        })
        .await
    }

    /// Claims a reserved number to create its invoice (see
    /// `SeriesStore::claim_number`).
    pub async fn claim_number(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        stale_after: Duration,
    ) -> Result<Claim> {
        check_claim_id(claim)?;
        let key = scope.as_str().to_owned();
        let (claim, stale) = (claim.to_owned(), stale_after.as_secs().to_string());
        self.run("claim_number", move |client, sql| {
            let (key, claim, stale) = (key.clone(), claim.clone(), stale.clone());
            Box::pin(async move {
                let n = number.to_string();
                let claimed = client
                    .query_opt(&sql.claim_number, &[&claim, &key, &n, &stale])
                    .await?;
                if claimed.is_some() {
                    return Ok(Ok(Claim::Claimed));
                }
                let row = client.query_opt(&sql.number_state, &[&key, &n]).await?;
                let Some(row) = row else {
                    return Ok(Err(Error::Unexpected(format!(
                        "number {number} of series `{key}` is not in the registry"
                    ))));
                };
                let (status, post_id, holder): (String, Option<i64>, Option<String>) =
                    (row.get(0), row.get(1), row.get(2));
                Ok(claim_from_state(
                    &key,
                    number,
                    &claim,
                    &status,
                    post_id.map(|p| p as u64),
                    holder.as_deref(),
                ))
            })
        })
        .await
    }

    /// Marks a claimed number issued to `post_id`, and the payment's row
    /// with its post, in one transaction; `false` when the claim was lost.
    pub async fn issue_claimed(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
        post_id: u64,
        payment: Option<&PaymentRef>,
    ) -> Result<bool> {
        check_claim_id(claim)?;
        let key = scope.as_str().to_owned();
        let claim = claim.to_owned();
        let payment = payment.map(|p| (p.gateway().to_owned(), p.transaction_id().to_owned()));
        let post = i64::try_from(post_id).map_err(|_| Error::InvalidArgument {
            name: "post_id",
            reason: format!("{post_id} is above {}", i64::MAX),
        })?;
        self.run("issue_claimed", move |client, sql| {
            let (key, claim, payment) = (key.clone(), claim.clone(), payment.clone());
            Box::pin(async move {
                let tx = client.begin().await?;
                let n = tx
                    .execute(
                        &sql.issue_claimed,
                        &[&post, &key, &number.to_string(), &claim],
                    )
                    .await?;
                if n != 1 {
                    // Lost, or issued by this call's earlier try whose
                    // COMMIT answer was lost.
                    let row = tx
                        .query_opt(&sql.number_state, &[&key, &number.to_string()])
                        .await?;
                    let ours = row.is_some_and(|r| {
                        let issued: Option<i64> = r.get(1);
                        crate::payment::issued_to(r.get(0), issued.map(|p| p as u64), post_id)
                    });
                    if !ours {
                        return Ok(Ok(false));
                    }
                }
                if let Some((gateway, txn)) = &payment {
                    tx.execute(&sql.set_payment_post, &[&post, gateway, txn])
                        .await?;
                }
                tx.commit().await?;
                Ok(Ok(true))
            })
        })
        .await
    }

    /// Gives a claim back after a failure: the number is reserved again.
    /// `false` when the claim was not held.
    pub async fn release_claim(
        &mut self,
        scope: &ScopeKey,
        number: u64,
        claim: &str,
    ) -> Result<bool> {
        check_claim_id(claim)?;
        let key = scope.as_str().to_owned();
        let claim = claim.to_owned();
        self.run("release_claim", move |client, sql| {
            let (key, claim) = (key.clone(), claim.clone());
            Box::pin(async move {
                let n = client
                    .execute(&sql.release_claim, &[&key, &number.to_string(), &claim])
                    .await?;
                Ok(Ok(n == 1))
            })
        })
        .await
    }
}

/// Gives a held payment its number, in one transaction under the payment
/// row's lock (`flows::payments::complete_held`), from the series it was
/// held for (or its successor); a delivery that waited on the lock finds the
/// number the other one gave.
pub(super) async fn complete_held(
    client: &mut PgConn,
    sql: &PgSql,
    gateway: &str,
    txn: &str,
) -> PgResult<PaymentRecord> {
    let allocate = client.prepared(&sql.allocate_open).await?;
    let insert = client.prepared(&sql.insert_number).await?;
    let tx = client.begin().await?;
    let mut statements = super::dialect::PgNumbering {
        tx: &tx,
        sql,
        allocate: &allocate,
        insert: &insert,
        insert_payment: None,
    };
    match crate::flows::payments::complete_held(&mut statements, gateway, txn).await? {
        Ok(Some(record)) => {
            tx.commit().await?;
            Ok(Ok(record))
        }
        Err(e) => Ok(Err(e)),
        Ok(None) => {
            // Another delivery numbered it while this one waited.
            drop(tx);
            Ok(crate::flows::payments::numbered_meanwhile(
                find_payment(client, sql, gateway, txn).await?,
                gateway,
                txn,
            ))
        }
    }
}

/// Reads a payment an earlier delivery recorded (`flows::payments`).
pub(super) async fn find_payment(
    client: &mut PgConn,
    sql: &PgSql,
    gateway: &str,
    txn: &str,
) -> PgResult<Found> {
    let mut reads = dialect::PgReads {
        client: &**client,
        sql,
    };
    crate::flows::payments::find_payment(&mut reads, gateway, txn).await
}
