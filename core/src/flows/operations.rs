//! The store's operations, written once for both engines: each checks its
//! arguments, then runs its flow under the one loop (`flows::call::run`) on
//! the statements of the store's dialect. `SeriesStore` (MySQL/MariaDB) and
//! `PgStore` (PostgreSQL) expose these as their methods.
//!
//! Invariants: bad input is refused before any statement is sent; every
//! operation has the loop's deadline, retries and failover; a try's
//! statements are built fresh on the connection the loop hands it.

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use super::awb::TransitionRequest;
use super::call::{run, CallSite};
use super::payments::NewPayment;
use super::recorded::RecordedCall;
use crate::awb::{expand_block, Awb, AwbState};
use crate::awb_stock_rules::{
    bad_awb, check_name, check_transition_request, check_valid_to, AwbStock, AwbTransition,
    PoolReport,
};
use crate::error::Result;
use crate::format::Period;
use crate::payment::{self, Claim, Held, PaymentRecord, PaymentRef};
use crate::scope::ScopeKey;
use crate::series::{self, Advanced, Initialized, SeriesState};
use crate::series_life::{MissingSeries, PlannedSeries};

/// A payment's values, owned for the tries of one call.
struct OwnedPayment {
    gateway: String,
    txn: String,
    amount: Option<String>,
    currency: Option<String>,
    period: Option<String>,
}

impl OwnedPayment {
    fn new(
        payment: &PaymentRef,
        amount: Option<&str>,
        currency: Option<&str>,
        period: Option<Period>,
    ) -> Result<Self> {
        payment::check_payment_values(amount, currency)?;
        Ok(Self {
            gateway: payment.gateway().to_owned(),
            txn: payment.transaction_id().to_owned(),
            amount: amount.map(str::to_owned),
            currency: currency.map(str::to_owned),
            period: period.map(|p| p.to_string()),
        })
    }

    fn borrowed(&self) -> NewPayment<'_> {
        NewPayment {
            gateway: &self.gateway,
            txn: &self.txn,
            amount: self.amount.as_deref(),
            currency: self.currency.as_deref(),
            period: self.period.as_deref(),
        }
    }
}

/// Creates a series whose first number is `start`; an existing one is
/// reported, never reset.
pub(crate) async fn initialize<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    start: u64,
) -> Result<Initialized> {
    let counter = series::counter_for_start(start)?;
    run(
        store,
        "initialize",
        scope.as_str(),
        move |conn, sql, key| {
            Box::pin(async move {
                super::series::initialize(&mut S::statements(conn, sql), key, counter, start).await
            })
        },
    )
    .await
}

/// Creates a series under a plan (docs/design.md §7): at `configured_start`
/// (`Create`), right after the issuer's latest earlier series (`Continue`,
/// in one transaction under that series' row lock, closing it in favour of
/// the new one), or not at all (`Hold`).
pub(crate) async fn initialize_planned<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    plan: MissingSeries,
    configured_start: u64,
) -> Result<PlannedSeries> {
    let owned_scope = scope.clone();
    let previous = run(
        store,
        "initialize_planned",
        scope.as_str(),
        move |conn, sql, _| {
            let scope = owned_scope.clone();
            Box::pin(async move {
                super::series::previous_series(&mut S::statements(conn, sql), &scope, plan).await
            })
        },
    )
    .await?;
    let Some(previous) = previous else {
        return run(
            store,
            "initialize_planned",
            scope.as_str(),
            move |conn, sql, key| {
                Box::pin(async move {
                    let mut statements = S::statements(conn, sql);
                    super::series::plan_without_previous(
                        &mut statements,
                        key,
                        plan,
                        configured_start,
                    )
                    .await
                })
            },
        )
        .await;
    };
    // A table from before `closed_by` gains it here, once.
    store.ensure_schema().await?;
    run(
        store,
        "initialize_planned",
        scope.as_str(),
        move |conn, sql, key| {
            let previous = previous.clone();
            Box::pin(async move {
                let mut statements = S::statements(conn, sql);
                super::series::continue_series(&mut statements, key, &previous, configured_start)
                    .await
            })
        },
    )
    .await
}

/// Moves a series up so that its next number is at least `next`; never down.
pub(crate) async fn advance<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    next: u64,
) -> Result<Advanced> {
    let counter = series::counter_for_next(next)?;
    run(store, "advance", scope.as_str(), move |conn, sql, key| {
        Box::pin(async move {
            super::series::advance(&mut S::statements(conn, sql), key, counter).await
        })
    })
    .await
}

/// Hands out the next number.
pub(crate) async fn allocate<S: CallSite + Send>(store: &mut S, scope: &ScopeKey) -> Result<u64> {
    Ok(*allocate_many(store, scope, 1).await?.end())
}

/// Hands out `count` contiguous numbers (1 ..= [`series::MAX_BATCH`]).
pub(crate) async fn allocate_many<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    count: u64,
) -> Result<RangeInclusive<u64>> {
    series::check_batch(count)?;
    let last = run(store, "allocate", scope.as_str(), move |conn, sql, key| {
        Box::pin(async move {
            use super::series::SeriesStatements;
            S::statements(conn, sql).allocate(key, count).await
        })
    })
    .await?;
    Ok(series::batch_range(last, count))
}

/// The series as stored.
pub(crate) async fn current<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
) -> Result<SeriesState> {
    run(store, "current", scope.as_str(), move |conn, sql, key| {
        Box::pin(async move { super::series::current(&mut S::statements(conn, sql), key).await })
    })
    .await
}

/// Allocates one number and records it as issued by `source`, with an
/// optional request key (`flows::recorded`).
pub(crate) async fn allocate_recorded<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    source: &str,
    request_key: Option<&str>,
) -> Result<u64> {
    payment::check_source(source)?;
    if let Some(key) = request_key {
        payment::check_request_key(key)?;
    }
    let call = Arc::new(RecordedCall::new(source, request_key));
    let one_trip = store.config().one_trip_payments;
    run(
        store,
        "allocate_recorded",
        scope.as_str(),
        move |conn, sql, key| {
            let call = call.clone();
            Box::pin(async move {
                let mut statements = S::statements(conn, sql);
                super::recorded::allocate_recorded(&mut statements, key, &call, one_trip).await
            })
        },
    )
    .await
}

/// Records a payment and gives it a number, once per payment
/// (`flows::payments::record`).
pub(crate) async fn record_payment<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    payment: &PaymentRef,
    amount: Option<&str>,
    currency: Option<&str>,
    period: Option<Period>,
) -> Result<PaymentRecord> {
    let owned = Arc::new(OwnedPayment::new(payment, amount, currency, period)?);
    let one_trip = store.config().one_trip_payments;
    run(
        store,
        "record_payment",
        scope.as_str(),
        move |conn, sql, key| {
            let owned = owned.clone();
            Box::pin(async move {
                let mut statements = S::statements(conn, sql);
                let payment = owned.borrowed();
                super::payments::record(&mut statements, key, &payment, period, one_trip).await
            })
        },
    )
    .await
}

/// Records a payment held without a number until its series exists
/// (`flows::payments::hold`).
pub(crate) async fn hold_payment<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    payment: &PaymentRef,
    amount: Option<&str>,
    currency: Option<&str>,
    period: Period,
) -> Result<Held> {
    let owned = Arc::new(OwnedPayment::new(payment, amount, currency, Some(period))?);
    run(
        store,
        "hold_payment",
        scope.as_str(),
        move |conn, sql, key| {
            let owned = owned.clone();
            Box::pin(async move {
                super::payments::hold(&mut S::statements(conn, sql), key, &owned.borrowed()).await
            })
        },
    )
    .await
}

/// Records a refund's credit note, naming its invoice, under the cap, in
/// one transaction under the invoice's lock (`flows::credit_notes`).
pub(crate) async fn hold_credit_note<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    request: &crate::credit_note::CreditNoteRequest,
    period: Period,
) -> Result<crate::credit_note::CreditNoteHeld> {
    if crate::credit_note::kind_of(scope.as_str()) != crate::credit_note::Kind::CreditNote {
        return Err(crate::error::Error::InvalidArgument {
            name: "scope",
            reason: format!("`{}` is not a credit-note series", scope.as_str()),
        });
    }
    let (request, period) = (Arc::new(request.clone()), period.to_string());
    run(
        store,
        "hold_credit_note",
        scope.as_str(),
        move |conn, sql, key| {
            let (request, period) = (request.clone(), period.clone());
            Box::pin(async move {
                let mut statements = S::statements(conn, sql);
                super::credit_notes::hold_credit_note(&mut statements, key, &request, &period).await
            })
        },
    )
    .await
}

/// Claims a reserved number to create its invoice (`flows::claims`).
pub(crate) async fn claim_number<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    number: u64,
    claim: &str,
    stale_after: Duration,
) -> Result<Claim> {
    payment::check_claim_id(claim)?;
    let claim = claim.to_owned();
    run(
        store,
        "claim_number",
        scope.as_str(),
        move |conn, sql, key| {
            let claim = claim.clone();
            Box::pin(async move {
                let mut statements = S::statements(conn, sql);
                super::claims::claim(&mut statements, key, number, &claim, stale_after).await
            })
        },
    )
    .await
}

/// Marks a claimed number issued with its invoice (`flows::claims`).
pub(crate) async fn issue_claimed<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    number: u64,
    claim: &str,
    post_id: u64,
    payment: Option<&PaymentRef>,
) -> Result<bool> {
    payment::check_claim_id(claim)?;
    let (claim, payment) = (claim.to_owned(), payment.cloned());
    run(
        store,
        "issue_claimed",
        scope.as_str(),
        move |conn, sql, key| {
            let (claim, payment) = (claim.clone(), payment.clone());
            Box::pin(async move {
                let mut statements = S::statements(conn, sql);
                super::claims::issue(
                    &mut statements,
                    key,
                    number,
                    &claim,
                    post_id,
                    payment.as_ref(),
                )
                .await
            })
        },
    )
    .await
}

/// Gives a claim back: the number is reserved again.
pub(crate) async fn release_claim<S: CallSite + Send>(
    store: &mut S,
    scope: &ScopeKey,
    number: u64,
    claim: &str,
) -> Result<bool> {
    payment::check_claim_id(claim)?;
    let claim = claim.to_owned();
    run(
        store,
        "release_claim",
        scope.as_str(),
        move |conn, sql, key| {
            let claim = claim.clone();
            Box::pin(async move {
                use super::claims::ClaimStatements;
                S::statements(conn, sql)
                    .release_claim(key, number, &claim)
                    .await
                    .map(Ok)
            })
        },
    )
    .await
}

/// Imports a block of AWB numbers into a pool, whole or not at all
/// (`flows::awb`).
pub(crate) async fn awb_import_block<S: CallSite + Send>(
    store: &mut S,
    pool: &str,
    first: &str,
    last: &str,
    valid_to: Option<&str>,
) -> Result<usize> {
    check_name("pool", pool, 64)?;
    let block = Arc::new(expand_block(first, last).map_err(bad_awb)?);
    check_valid_to(valid_to)?;
    let valid_to = valid_to.map(str::to_owned);
    run(store, "awb_import_block", pool, move |conn, sql, pool| {
        let (block, valid_to) = (block.clone(), valid_to.clone());
        Box::pin(async move {
            let mut statements = S::statements(conn, sql);
            super::awb::import_block(&mut statements, pool, &block, valid_to.as_deref()).await
        })
    })
    .await
}

/// Assigns the lowest ready serial of `pool` to `shipment`.
pub(crate) async fn awb_issue_next<S: CallSite + Send>(
    store: &mut S,
    pool: &str,
    shipment: &str,
) -> Result<Awb> {
    check_name("shipment", shipment, 64)?;
    let shipment = shipment.to_owned();
    run(store, "awb_issue_next", pool, move |conn, sql, pool| {
        let shipment = shipment.clone();
        Box::pin(async move {
            super::awb::issue_next(&mut S::statements(conn, sql), pool, &shipment).await
        })
    })
    .await
}

/// Moves a number through the transition table.
pub(crate) async fn awb_transition<S: CallSite + Send>(
    store: &mut S,
    number: &str,
    to: AwbState,
    shipment: Option<&str>,
    reason: Option<&str>,
    pool: Option<&str>,
    expect_shipment: Option<&str>,
) -> Result<AwbTransition> {
    let number = check_transition_request(number, to, shipment, reason)?;
    let owned = |s: Option<&str>| s.map(str::to_owned);
    let request = Arc::new(TransitionRequest {
        number: number.clone(),
        to,
        shipment: owned(shipment),
        reason: owned(reason),
        pool: owned(pool),
        expect_shipment: owned(expect_shipment),
    });
    run(store, "awb_transition", &number, move |conn, sql, _| {
        let request = request.clone();
        Box::pin(
            async move { super::awb::transition(&mut S::statements(conn, sql), &request).await },
        )
    })
    .await
}

/// Freezes or unfreezes a number.
pub(crate) async fn awb_freeze<S: CallSite + Send>(
    store: &mut S,
    number: &str,
    frozen: bool,
) -> Result<()> {
    let number = Awb::normalize(number).map_err(bad_awb)?;
    run(store, "awb_freeze", &number, move |conn, sql, number| {
        Box::pin(
            async move { super::awb::freeze(&mut S::statements(conn, sql), number, frozen).await },
        )
    })
    .await
}

/// A stock number as stored.
pub(crate) async fn awb_status<S: CallSite + Send>(
    store: &mut S,
    number: &str,
) -> Result<AwbStock> {
    let number = Awb::normalize(number).map_err(bad_awb)?;
    run(store, "awb_status", &number, move |conn, sql, number| {
        Box::pin(async move { super::awb::status(&mut S::statements(conn, sql), number).await })
    })
    .await
}

/// Counts of a pool.
pub(crate) async fn awb_report<S: CallSite + Send>(
    store: &mut S,
    pool: &str,
) -> Result<PoolReport> {
    run(store, "awb_report", pool, move |conn, sql, pool| {
        Box::pin(async move {
            use super::awb::AwbStatements;
            S::statements(conn, sql).pool_report(pool).await
        })
    })
    .await
}
