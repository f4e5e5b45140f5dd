//! A series' own flows, written once for both engines: creating it (at a
//! start, or under a plan of docs/design.md §7), moving it up, reading it,
//! and plain allocation (§2 rules 1–3).
//!
//! Invariants: an existing series is reported, never reset; a series never
//! moves down; under `continue` the new series is made on a transaction that
//! holds the previous series' row lock (so no allocation of it is in
//! flight), at its counter + 1, and the previous series is closed in favour
//! of the new one; a series is continued only once
//! ([`series_life::may_continue`]); closing changes exactly one row.

use std::future::Future;

use super::{Answer, Dialect};
use crate::error::Error;
use crate::series::{self, Advanced, Initialized, SeriesState};
use crate::series_life::{self, MissingSeries, PlannedSeries};

/// The series statements, as one dialect sends them.
pub(crate) trait SeriesStatements: Dialect {
    /// Inserts a series; `false` when it exists already (nothing changed).
    fn insert_series(
        &mut self,
        scope: &str,
        counter: u64,
        start: u64,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;

    /// `scope`'s counter and start value, or `None` without a row.
    fn series_row(
        &mut self,
        scope: &str,
    ) -> impl Future<Output = Answer<Option<(u64, Option<u64>)>, Self::Failure>> + Send;

    /// Moves `scope`'s counter up to `counter` if it is lower: the rows
    /// changed.
    fn raise_counter(
        &mut self,
        scope: &str,
        counter: u64,
    ) -> impl Future<Output = Result<u64, Self::Failure>> + Send;

    /// The one-statement allocation of `count` numbers (closed or not): the
    /// new counter, only when exactly one row answered; `SeriesNotFound`
    /// when none did, `Overflow` past u64::MAX.
    fn allocate(
        &mut self,
        scope: &str,
        count: u64,
    ) -> impl Future<Output = Answer<u64, Self::Failure>> + Send;

    /// The series whose key matches the LIKE `pattern`, with their counters.
    fn series_like(
        &mut self,
        pattern: &str,
    ) -> impl Future<Output = Answer<Vec<(String, u64)>, Self::Failure>> + Send;

    /// Locks `scope`'s row: its counter and `closed_by`, or `None`.
    fn lock_series(
        &mut self,
        scope: &str,
    ) -> impl Future<Output = Answer<Option<(u64, Option<String>)>, Self::Failure>> + Send;

    /// Closes `previous` in favour of `successor`: the rows changed.
    fn close(
        &mut self,
        successor: &str,
        previous: &str,
    ) -> impl Future<Output = Result<u64, Self::Failure>> + Send;
}

/// Reads one series; `SeriesNotFound` when it does not exist.
pub(crate) async fn current<S: SeriesStatements + Send>(
    statements: &mut S,
    scope: &str,
) -> Answer<SeriesState, S::Failure> {
    Ok(statements
        .series_row(scope)
        .await?
        .and_then(|row| series::state_of_row(scope, row)))
}

/// Creates `scope` with `counter` (its first number `start`); an existing
/// series is reported with its counter.
pub(crate) async fn initialize<S: SeriesStatements + Send>(
    statements: &mut S,
    scope: &str,
    counter: u64,
    start: u64,
) -> Answer<Initialized, S::Failure> {
    if statements.insert_series(scope, counter, start).await? {
        return Ok(Ok(Initialized::Created { next: start }));
    }
    Ok(current(statements, scope)
        .await?
        .map(|s| Initialized::Exists { current: s.current }))
}

/// Moves `scope` up to `counter`; unchanged (or missing) reads the row.
pub(crate) async fn advance<S: SeriesStatements + Send>(
    statements: &mut S,
    scope: &str,
    counter: u64,
) -> Answer<Advanced, S::Failure> {
    match statements.raise_counter(scope, counter).await? {
        1 => Ok(Ok(Advanced::Moved { current: counter })),
        0 => Ok(current(statements, scope)
            .await?
            .map(|s| Advanced::Unchanged { current: s.current })),
        n => Ok(Err(Error::Unexpected(format!(
            "advance changed {n} rows of one primary key"
        )))),
    }
}

/// The series `scope` continues under the `continue` plan: the issuer's
/// latest earlier series ([`series_life::previous_series`]), if any.
pub(crate) async fn previous_series<S: SeriesStatements + Send>(
    statements: &mut S,
    scope: &crate::scope::ScopeKey,
    plan: MissingSeries,
) -> Answer<Option<String>, S::Failure> {
    let (MissingSeries::Continue, Some((issuer, _))) =
        (plan, series_life::issuer_and_period(scope.as_str()))
    else {
        return Ok(Ok(None));
    };
    let rows = match statements
        .series_like(&series_life::issuer_pattern(issuer))
        .await?
    {
        Ok(rows) => rows,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(series_life::previous_series(
        scope,
        rows.iter().map(|(k, c)| (k.as_str(), *c)),
    )
    .map(|(key, _)| key.to_owned())))
}

/// Creates `scope` under `plan` without a previous series: at
/// `configured_start` (`Create`), or not at all (`Hold`).
pub(crate) async fn plan_without_previous<S: SeriesStatements + Send>(
    statements: &mut S,
    scope: &str,
    plan: MissingSeries,
    configured_start: u64,
) -> Answer<PlannedSeries, S::Failure> {
    let start = match series_life::start_for_new_series(plan, configured_start, None) {
        Ok(start) => start,
        Err(e) => return Ok(Err(e)),
    };
    let outcome = match start {
        Some(start) => {
            let counter = match series::counter_for_start(start) {
                Ok(c) => c,
                Err(e) => return Ok(Err(e)),
            };
            match initialize(statements, scope, counter, start).await? {
                Ok(outcome) => Some(outcome),
                Err(e) => return Ok(Err(e)),
            }
        }
        None => None,
    };
    Ok(Ok(PlannedSeries {
        start,
        continued_from: None,
        outcome,
    }))
}

/// Creates `scope` continuing `previous`, in its own transaction (see the
/// module's invariants).
pub(crate) async fn continue_series<S: SeriesStatements + Send>(
    statements: &mut S,
    scope: &str,
    previous: &str,
    configured_start: u64,
) -> Answer<PlannedSeries, S::Failure> {
    statements.begin().await?;
    let outcome = continue_in_transaction(statements, scope, previous, configured_start).await;
    statements.end(outcome).await
}

async fn continue_in_transaction<S: SeriesStatements + Send>(
    statements: &mut S,
    scope: &str,
    previous: &str,
    configured_start: u64,
) -> Answer<PlannedSeries, S::Failure> {
    let (current, closed_by) = match statements.lock_series(previous).await? {
        Ok(Some(row)) => row,
        Ok(None) => {
            return Ok(Err(Error::Unexpected(format!(
                "series `{previous}` disappeared while `{scope}` was made from it"
            ))))
        }
        Err(e) => return Ok(Err(e)),
    };
    if let Err(e) = series_life::may_continue(previous, closed_by.as_deref(), scope) {
        return Ok(Err(e));
    }
    let start = match series_life::start_for_new_series(
        MissingSeries::Continue,
        configured_start,
        Some(current),
    ) {
        Ok(Some(start)) => start,
        Ok(None) => unreachable!("continue always starts somewhere"),
        Err(e) => return Ok(Err(e)),
    };
    let counter = match series::counter_for_start(start) {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    let planned = |outcome| PlannedSeries {
        start: Some(start),
        continued_from: Some(current),
        outcome: Some(outcome),
    };
    if !statements.insert_series(scope, counter, start).await? {
        return Ok(match statements.series_row(scope).await? {
            Ok(Some((current, _))) => Ok(planned(Initialized::Exists { current })),
            Ok(None) => Err(Error::Unexpected(format!(
                "series `{scope}` exists but cannot be read"
            ))),
            Err(e) => Err(e),
        });
    }
    if closed_by.is_none() {
        let changed = statements.close(scope, previous).await?;
        if let Err(e) = crate::payment::exactly_one_row("closing the previous series", changed) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(planned(Initialized::Created { next: start })))
}
