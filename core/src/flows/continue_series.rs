//! Making the issuer's next series under the `continue` plan (docs/design.md
//! §7), on a transaction the store opened: the previous series' row locked
//! (so no allocation of it is in flight), the new series at its counter + 1,
//! the previous series closed in favour of the new one.
//!
//! Invariants: a series is continued only once
//! ([`series_life::may_continue`]); an existing new series is reported,
//! never reset, and then nothing is closed; closing changes exactly one row.

use std::future::Future;

use super::Answer;
use crate::error::Error;
use crate::series::{self, Initialized};
use crate::series_life::{self, MissingSeries, PlannedSeries};

/// The statements of this flow, as one dialect sends them.
pub(crate) trait ContinueStatements {
    /// The driver's failure.
    type Failure;

    /// Locks `scope`'s row: its counter and `closed_by`, or `None`.
    fn lock_series(
        &mut self,
        scope: &str,
    ) -> impl Future<Output = Answer<Option<(u64, Option<String>)>, Self::Failure>> + Send;

    /// Inserts a series; `false` when it exists already (nothing changed).
    fn insert_series(
        &mut self,
        scope: &str,
        counter: u64,
        start: u64,
    ) -> impl Future<Output = Result<bool, Self::Failure>> + Send;

    /// The counter of `scope`, or `None` when it does not exist.
    fn counter(
        &mut self,
        scope: &str,
    ) -> impl Future<Output = Answer<Option<u64>, Self::Failure>> + Send;

    /// Closes `previous` in favour of `successor`: the rows changed.
    fn close(
        &mut self,
        successor: &str,
        previous: &str,
    ) -> impl Future<Output = Result<u64, Self::Failure>> + Send;
}

/// Creates `scope` continuing `previous` (see the module's invariants).
pub(crate) async fn continue_series<S: ContinueStatements + Send>(
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
        return Ok(match statements.counter(scope).await? {
            Ok(Some(current)) => Ok(planned(Initialized::Exists { current })),
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
