//! Air waybill stock, written once for both engines: pools, blocks, issuing
//! in serial order, and every status change through the one transition
//! table (`crate::awb`, `crate::awb_stock_rules`).
//!
//! Invariants: a block is imported whole or not at all (one transaction; a
//! number already in stock refuses it); `issue_next` takes the lowest ready,
//! unexpired, unfrozen serial of its pool under a row lock (lock, re-read,
//! decide, write), so concurrent issuers get strictly increasing serials and
//! skip no ready number; every status write checks
//! [`crate::awb::can_transition`] on the row read under its lock; a number
//! has at most one live assignment (unique index), and that index's refusal
//! reads the same as the application's check; a release or reassign naming
//! the shipment it expects is a no-op when the number moved on meanwhile (a
//! stale second click).

use std::future::Future;

use super::{Answer, Dialect};
use crate::awb::{can_transition, Awb, AwbState};
use crate::awb_stock_rules::{
    bad_awb, plan_transition, refused, AwbStock, AwbTransition, LockedNumber, PoolReport,
    TransitionPlan,
};
use crate::error::Error;

/// How many numbers of a block one INSERT carries.
pub(crate) const IMPORT_CHUNK: usize = 500;

/// A stock number's row under its lock.
pub(crate) struct LockedStock {
    pub(crate) id: u64,
    pub(crate) status: String,
    pub(crate) pool: String,
    pub(crate) frozen: bool,
    pub(crate) shipment: Option<String>,
    /// Past its valid_to (by the server's UTC date).
    pub(crate) expired: bool,
}

/// The AWB statements, as one dialect sends them.
pub(crate) trait AwbStatements: Dialect {
    /// Creates pool `pool` for airline `prefix` unless it exists.
    fn insert_pool(
        &mut self,
        pool: &str,
        prefix: u16,
    ) -> impl Future<Output = Result<(), Self::Failure>> + Send;

    /// Locks pool `pool`: its id and airline prefix.
    fn lock_pool(
        &mut self,
        pool: &str,
    ) -> impl Future<Output = Answer<Option<(u64, u16)>, Self::Failure>> + Send;

    /// Inserts `numbers` as ready stock of pool `pool_id` in one statement:
    /// `Some(number)` names one already in stock (nothing inserted).
    fn insert_stock(
        &mut self,
        pool_id: u64,
        numbers: &[Awb],
        valid_to: Option<&str>,
    ) -> impl Future<Output = Result<Option<String>, Self::Failure>> + Send;

    /// Locks the lowest ready, unexpired, unfrozen serial of `pool`: id,
    /// number and status.
    fn lock_next_ready(
        &mut self,
        pool: &str,
    ) -> impl Future<Output = Answer<Option<(u64, String, String)>, Self::Failure>> + Send;

    /// Locks stock number `number`.
    fn lock_number(
        &mut self,
        number: &str,
    ) -> impl Future<Output = Answer<Option<LockedStock>, Self::Failure>> + Send;

    /// Releases stock row `id`'s live assignment.
    fn release_assignment(
        &mut self,
        id: u64,
    ) -> impl Future<Output = Result<(), Self::Failure>> + Send;

    /// Gives stock row `id` its live assignment: `false` when it has one.
    fn insert_assignment(
        &mut self,
        id: u64,
        shipment: &str,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;

    /// Marks stock row `id` assigned to `shipment`.
    fn set_assigned(
        &mut self,
        id: u64,
        shipment: &str,
    ) -> impl Future<Output = Result<(), Self::Failure>> + Send;

    /// Sets stock row `id`'s status (and reason; the shipment kept or not).
    fn set_status(
        &mut self,
        id: u64,
        to: AwbState,
        reason: Option<&str>,
        keep_shipment: bool,
    ) -> impl Future<Output = Result<(), Self::Failure>> + Send;

    /// Freezes or unfreezes `number`: whether it is in stock.
    fn set_frozen(
        &mut self,
        number: &str,
        frozen: bool,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;

    /// Stock number `number` as stored.
    fn stock(
        &mut self,
        number: &str,
    ) -> impl Future<Output = Answer<Option<AwbStock>, Self::Failure>> + Send;

    /// The counts of pool `pool`.
    fn pool_report(
        &mut self,
        pool: &str,
    ) -> impl Future<Output = Answer<PoolReport, Self::Failure>> + Send;
}

/// Imports `block` into pool `pool` (created for its airline prefix if
/// missing), whole or not at all.
pub(crate) async fn import_block<S: AwbStatements + Send>(
    statements: &mut S,
    pool: &str,
    block: &[Awb],
    valid_to: Option<&str>,
) -> Answer<usize, S::Failure> {
    statements.begin().await?;
    let outcome = import_in_transaction(statements, pool, block, valid_to).await;
    statements.end(outcome).await
}

async fn import_in_transaction<S: AwbStatements + Send>(
    statements: &mut S,
    pool: &str,
    block: &[Awb],
    valid_to: Option<&str>,
) -> Answer<usize, S::Failure> {
    let prefix = block[0].prefix();
    statements.insert_pool(pool, prefix).await?;
    let (pool_id, pool_prefix) = match statements.lock_pool(pool).await? {
        Ok(Some(row)) => row,
        Ok(None) => return Ok(Err(Error::Unexpected("pool vanished".into()))),
        Err(e) => return Ok(Err(e)),
    };
    if pool_prefix != prefix {
        return Ok(Err(refused(format!(
            "pool {pool} holds airline prefix {pool_prefix:03}, the block is {prefix:03}; nothing imported"
        ))));
    }
    for chunk in block.chunks(IMPORT_CHUNK) {
        if let Some(dup) = statements.insert_stock(pool_id, chunk, valid_to).await? {
            return Ok(Err(refused(format!(
                "{dup} is already in stock; the block {} … {} was not imported",
                block[0],
                block[block.len() - 1]
            ))));
        }
    }
    Ok(Ok(block.len()))
}

/// Assigns the lowest ready, unexpired, unfrozen serial of `pool` to
/// `shipment`, under its row lock.
pub(crate) async fn issue_next<S: AwbStatements + Send>(
    statements: &mut S,
    pool: &str,
    shipment: &str,
) -> Answer<Awb, S::Failure> {
    statements.begin().await?;
    let outcome = issue_in_transaction(statements, pool, shipment).await;
    statements.end(outcome).await
}

async fn issue_in_transaction<S: AwbStatements + Send>(
    statements: &mut S,
    pool: &str,
    shipment: &str,
) -> Answer<Awb, S::Failure> {
    let (id, number, status) = match statements.lock_next_ready(pool).await? {
        Ok(Some(row)) => row,
        Ok(None) => {
            return Ok(Err(refused(format!(
                "pool {pool} has no ready number (none left, or the rest are frozen or expired)"
            ))))
        }
        Err(e) => return Ok(Err(e)),
    };
    // Re-read under the lock, decide by the table.
    let state = AwbState::parse(&status).unwrap_or(AwbState::Executed);
    if !can_transition(state, AwbState::Assigned) {
        return Ok(Err(refused(format!("{number} is {status}"))));
    }
    assign(statements, id, &number, shipment).await
}

/// A transition request (checked by
/// [`crate::awb_stock_rules::check_transition_request`]).
pub(crate) struct TransitionRequest {
    pub(crate) number: String,
    pub(crate) to: AwbState,
    pub(crate) shipment: Option<String>,
    pub(crate) reason: Option<String>,
    pub(crate) pool: Option<String>,
    pub(crate) expect_shipment: Option<String>,
}

/// Moves a number through the transition table, under its row lock.
pub(crate) async fn transition<S: AwbStatements + Send>(
    statements: &mut S,
    request: &TransitionRequest,
) -> Answer<AwbTransition, S::Failure> {
    statements.begin().await?;
    let outcome = transition_in_transaction(statements, request).await;
    statements.end(outcome).await
}

async fn transition_in_transaction<S: AwbStatements + Send>(
    statements: &mut S,
    r: &TransitionRequest,
) -> Answer<AwbTransition, S::Failure> {
    let number = r.number.as_str();
    let row = match statements.lock_number(number).await? {
        Ok(Some(row)) => row,
        Ok(None) => return Ok(Err(refused(format!("{number} is not in stock")))),
        Err(e) => return Ok(Err(e)),
    };
    let locked = LockedNumber {
        number,
        status: &row.status,
        pool: &row.pool,
        frozen: row.frozen,
        expired: row.expired,
        shipment: row.shipment.as_deref(),
    };
    let plan = plan_transition(
        &locked,
        r.to,
        r.pool.as_deref(),
        r.expect_shipment.as_deref(),
    );
    let (from, release_assignment, keep_shipment) = match plan {
        Err(e) => return Ok(Err(e)),
        Ok(TransitionPlan::Unchanged) => return Ok(Ok(AwbTransition::Unchanged)),
        Ok(TransitionPlan::Move {
            from,
            release_assignment,
            keep_shipment,
        }) => (from, release_assignment, keep_shipment),
    };
    if release_assignment {
        statements.release_assignment(row.id).await?;
    }
    if r.to == AwbState::Assigned {
        let shipment = r.shipment.as_deref().unwrap_or("");
        if let Err(e) = assign(statements, row.id, number, shipment).await? {
            return Ok(Err(e));
        }
    } else {
        let reason = r.reason.as_deref();
        statements
            .set_status(row.id, r.to, reason, keep_shipment)
            .await?;
    }
    Ok(Ok(AwbTransition::Moved { from, to: r.to }))
}

/// Freezes or unfreezes a number (out of circulation, state unchanged).
pub(crate) async fn freeze<S: AwbStatements + Send>(
    statements: &mut S,
    number: &str,
    frozen: bool,
) -> Answer<(), S::Failure> {
    Ok(match statements.set_frozen(number, frozen).await? {
        true => Ok(()),
        false => Err(refused(format!("{number} is not in stock"))),
    })
}

/// A stock number as stored.
pub(crate) async fn status<S: AwbStatements + Send>(
    statements: &mut S,
    number: &str,
) -> Answer<AwbStock, S::Failure> {
    Ok(statements
        .stock(number)
        .await?
        .and_then(|found| found.ok_or_else(|| refused(format!("{number} is not in stock")))))
}

/// Marks stock row `id` assigned to `shipment` with one live assignment;
/// the unique index's refusal reads as the application's check does.
async fn assign<S: AwbStatements + Send>(
    statements: &mut S,
    id: u64,
    number: &str,
    shipment: &str,
) -> Answer<Awb, S::Failure> {
    if !statements.insert_assignment(id, shipment).await? {
        return Ok(Err(refused(format!(
            "{number} is already assigned to another shipment"
        ))));
    }
    statements.set_assigned(id, shipment).await?;
    Ok(Awb::parse(number).map_err(bad_awb))
}
