//! The recorded allocation, written once for both engines: a number and its
//! registry row in one transaction, `unconfirmed` until the answer to its
//! COMMIT has arrived, with an optional request key (docs/design.md §2
//! rule 4, §9).
//!
//! Invariants: the number exists only with its registry row; a retry voids
//! only rows carrying its own call's mark (so never a number another call
//! issued after a rollback); a keyed repeat returns the number its key took,
//! never a voided one, and marks it issued; a number whose caller may not
//! have received it stays `unconfirmed`, which is what the books must say;
//! a number taken and a number voided enter the series' chain in the
//! transaction that takes or voids it (`flows::chain`). A call's first
//! try goes in one round trip where the dialect has one (issue 30); a try
//! after a packet whose answer was lost looks up what the call's mark holds
//! unconfirmed (a locking read) and voids it like a lost COMMIT's number.
//! The read sees a packet that committed before it; one still running is
//! waited for only under InnoDB's REPEATABLE READ (next-key locks), not
//! under READ COMMITTED or on PostgreSQL, and a packet the server has not
//! started yet is never waited for: such a packet's number stays
//! `unconfirmed` (listed by the books), never handed out again, since the
//! retry's allocation waits for the series row the packet holds. Where the
//! dialect confirms commits (a Galera node), a number a try took is told
//! only once marking its row issued found the row after the COMMIT.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::chain;
use super::numbering::{allocate_open, NumberingStatements};
use super::{Answer, Dialect};
use crate::error::Error;

/// The row a request key took: number, status and the mark of its call.
pub(crate) type RequestedNumber = (u64, String, Option<String>);

/// How a recorded allocation's first try in one round trip ended.
pub(crate) enum RecordedOneTrip {
    /// The number, committed with its registry row (`unconfirmed`).
    Numbered(u64),
    /// Not in one trip (the dialect has none, or the series is missing or
    /// closed, the request key taken, the counter behind the registry, …);
    /// nothing changed, and the flow of several statements decides.
    Several,
}

/// The registry statements of this flow, as one dialect sends them.
pub(crate) trait RecordedStatements: Dialect {
    /// A call's first try in one round trip where the dialect has one: the
    /// same work as [`allocate_recorded`]'s transaction, its own
    /// transaction begun and ended (COMMIT, or ROLLBACK when it stopped
    /// part-way) before it answers.
    fn record_in_one_trip(
        &mut self,
        _scope: &str,
        _call: &RecordedCall,
    ) -> impl Future<Output = Answer<RecordedOneTrip, Self::Failure>> + Send {
        async { Ok(Ok(RecordedOneTrip::Several)) }
    }

    /// The numbers the mark `call` holds `unconfirmed` in `scope`, read
    /// with locks (the latest committed rows; a transaction still running
    /// is waited for only where the isolation level locks gaps: see the
    /// module's doc).
    fn unconfirmed_of_call(
        &mut self,
        scope: &str,
        call: &str,
    ) -> impl Future<Output = Result<Vec<u64>, Self::Failure>> + Send;

    /// The number request key `key` took in `scope`: number, status and the
    /// mark of the call that took it.
    fn find_by_request(
        &mut self,
        scope: &str,
        key: &str,
    ) -> impl Future<Output = Answer<Option<RequestedNumber>, Self::Failure>> + Send;

    /// Voids `number` of `scope` with [`crate::payment::UNANSWERED_REASON`]
    /// if its row carries the mark `call` and is still unconfirmed: the
    /// rows changed.
    fn void_unanswered(
        &mut self,
        scope: &str,
        number: u64,
        call: &str,
    ) -> impl Future<Output = Result<u64, Self::Failure>> + Send;

    /// The registry row of a recorded number, `unconfirmed`, marked `call`,
    /// with the request key if any; a duplicate is `DuplicateNumber`.
    fn insert_recorded(
        &mut self,
        scope: &str,
        number: u64,
        source: &str,
        call: &str,
        request_key: Option<&str>,
    ) -> impl Future<Output = Answer<(), Self::Failure>> + Send;

    /// Marks `number` issued if its row carries the mark `call` and is
    /// issued or unconfirmed: the rows changed (1 when it was unconfirmed).
    fn confirm(
        &mut self,
        scope: &str,
        number: u64,
        call: &str,
    ) -> impl Future<Output = Result<u64, Self::Failure>> + Send;
}

/// One call of the recorded allocation: its mark, its request key, and the
/// numbers its tries took up to their COMMIT (shared by the tries).
pub(crate) struct RecordedCall {
    pub(crate) source: String,
    pub(crate) request_key: Option<String>,
    /// This call's mark on its registry rows.
    pub(crate) mark: String,
    /// Numbers of this call's tries that reached COMMIT: a later try voids
    /// them (only rows with this call's mark) unless they were confirmed.
    pub(crate) committing: Mutex<Vec<u64>>,
    /// A try sent this call's packet in one round trip and its answer did
    /// not arrive: it may have committed a number no try knows.
    pub(crate) packet_unanswered: AtomicBool,
}

impl RecordedCall {
    /// A call with a fresh random mark.
    pub(crate) fn new(source: &str, request_key: Option<&str>) -> Self {
        Self {
            source: source.to_owned(),
            request_key: request_key.map(str::to_owned),
            mark: format!("call-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
            committing: Mutex::new(Vec::new()),
            packet_unanswered: AtomicBool::new(false),
        }
    }

    /// Whether this try may go in one round trip: no earlier try of the
    /// call reached its COMMIT or lost a packet's answer.
    fn first_try(&self) -> bool {
        self.committing.lock().expect("not poisoned").is_empty()
            && !self.packet_unanswered.load(Ordering::SeqCst)
    }
}

/// One try of the recorded allocation (see the module's invariants); with
/// `one_trip`, a call's first try goes in one round trip where the dialect
/// has one.
pub(crate) async fn allocate_recorded<S>(
    statements: &mut S,
    scope: &str,
    call: &RecordedCall,
    one_trip: bool,
) -> Answer<u64, S::Failure>
where
    S: RecordedStatements + NumberingStatements + Send,
{
    if one_trip && call.first_try() {
        // Until the packet's answer arrives, it may have committed.
        call.packet_unanswered.store(true, Ordering::SeqCst);
        let answered = statements.record_in_one_trip(scope, call).await?;
        call.packet_unanswered.store(false, Ordering::SeqCst);
        match answered {
            Ok(RecordedOneTrip::Numbered(number)) => {
                return told(statements, scope, number, &call.mark, true).await;
            }
            Ok(RecordedOneTrip::Several) => {}
            Err(e) => return Ok(Err(e)),
        }
    }
    statements.begin().await?;
    let outcome = take(statements, scope, call).await;
    if let Ok(Ok((number, _, true))) = &outcome {
        call.committing.lock().expect("not poisoned").push(*number);
    }
    let (number, mark, fresh) = match statements.end(outcome).await? {
        Ok(taken) => taken,
        // The same key at the same moment: the other call committed first;
        // this one rolled back and reads it.
        Err(e @ Error::DuplicateNumber { .. }) if call.request_key.is_some() => {
            let key = call.request_key.as_deref().unwrap_or_default();
            match by_request_key(statements, scope, key).await? {
                Ok(Some((number, mark))) => (number, mark, false),
                Ok(None) => return Ok(Err(e)),
                Err(refused) => return Ok(Err(refused)),
            }
        }
        Err(e) => return Ok(Err(e)),
    };
    told(statements, scope, number, &mark, fresh).await
}

/// The COMMIT was answered (or a repeat found its number, `fresh` false):
/// this caller has the number. Marking it issued is idempotent; if this
/// answer is lost, or the deadline ends the call first, the number stays
/// unconfirmed. Where the dialect confirms commits (a Galera node), a
/// number this try took (`fresh`) is told only when marking its row issued
/// found the row: a COMMIT answered OK whose write set the cluster aborted
/// left no row, and its number is not told ([`Error::Unconfirmed`]); a
/// failure of the marking itself is the driver's (the call's loop retries,
/// and the retry voids the number as unanswered).
async fn told<S: RecordedStatements + Send>(
    statements: &mut S,
    scope: &str,
    number: u64,
    mark: &str,
    fresh: bool,
) -> Answer<u64, S::Failure> {
    if fresh && statements.confirms_commits() {
        return Ok(match statements.confirm(scope, number, mark).await? {
            1 => Ok(number),
            _ => Err(Error::Unconfirmed {
                operation: "allocate_recorded",
                detail: format!("number {number} of `{scope}` has no unconfirmed row of this call"),
            }),
        });
    }
    if let Err(e) = statements.confirm(scope, number, mark).await {
        log::warn!("number {number} of `{scope}` stays unconfirmed: {e}");
    }
    Ok(Ok(number))
}

/// The work inside the transaction: the number, the mark to confirm, and
/// whether this transaction took it (`false`: a request key's earlier
/// number).
async fn take<S>(
    statements: &mut S,
    scope: &str,
    call: &RecordedCall,
) -> Answer<(u64, String, bool), S::Failure>
where
    S: RecordedStatements + NumberingStatements + Send,
{
    match &call.request_key {
        Some(key) => match by_request_key(statements, scope, key).await? {
            Ok(Some((number, mark))) => return Ok(Ok((number, mark, false))),
            Ok(None) => {}
            Err(refused) => return Ok(Err(refused)),
        },
        None => {
            let mut unanswered = call.committing.lock().expect("not poisoned").clone();
            if call.packet_unanswered.load(Ordering::SeqCst) {
                for number in statements.unconfirmed_of_call(scope, &call.mark).await? {
                    if !unanswered.contains(&number) {
                        unanswered.push(number);
                    }
                }
            }
            for number in unanswered {
                let voided = statements
                    .void_unanswered(scope, number, &call.mark)
                    .await?;
                if voided == 1 {
                    let reason = crate::payment::UNANSWERED_REASON;
                    if let Err(e) =
                        chain::append(statements, &chain::void(scope, number, reason)).await?
                    {
                        return Ok(Err(e));
                    }
                }
            }
        }
    }
    let number = match allocate_open(statements, scope, 1).await? {
        Ok(number) => number,
        Err(e) => return Ok(Err(e)),
    };
    let inserted = statements
        .insert_recorded(
            scope,
            number,
            &call.source,
            &call.mark,
            call.request_key.as_deref(),
        )
        .await?;
    if let Err(e) = inserted {
        return Ok(Err(e));
    }
    let entry = chain::issued(scope, number, None);
    Ok(chain::append(statements, &entry)
        .await?
        .map(|()| (number, call.mark.clone(), true)))
}

/// The number request key `key` took in `scope`, with its call's mark
/// (`None`: the key is new); a number no longer handed out is refused
/// ([`crate::payment::repeat_of_request`]).
async fn by_request_key<S: RecordedStatements + Send>(
    statements: &mut S,
    scope: &str,
    key: &str,
) -> Answer<Option<(u64, String)>, S::Failure> {
    let found = match statements.find_by_request(scope, key).await? {
        Ok(found) => found,
        Err(e) => return Ok(Err(e)),
    };
    Ok(found
        .map(|(number, status, mark)| {
            crate::payment::repeat_of_request(scope, key, number, &status)
                .map(|n| (n, mark.unwrap_or_default()))
        })
        .transpose())
}
