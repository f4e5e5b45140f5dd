//! One call's loop, for both engines: connect (the store's node list, with
//! failover and fail-back), try, classify the failure, retry, and the
//! deadline (docs/design.md §2 rules 5 and 6).
//!
//! Invariants:
//! - every call ends by its deadline (`StoreConfig::deadline`): connect,
//!   tries and pauses included; then the connection is closed at once, so
//!   nothing it holds outlives the call, and the answer is `Timeout`;
//! - a try's failure is retried only when the error is retryable and the
//!   retry policy allows another try, after a jittered pause; every retry
//!   is a fresh try (a fresh statement, so a fresh number);
//! - after every try the store confirms that no transaction is left open
//!   (`after_try`), before the answer is returned or the next try starts;
//! - a connection the failure broke is dropped, never reused.

use std::future::Future;
use std::pin::Pin;

use tokio::time::Instant;

use super::Answer;
use crate::config::{StoreConfig, StoreStats};
use crate::error::{Error, Result};

/// One try of an operation on a connection and its statements.
pub(crate) type Try<'c, T, E> = Pin<Box<dyn Future<Output = Answer<T, E>> + Send + 'c>>;

/// What a store gives the loop: its connection and how to look after it.
pub(crate) trait CallSite {
    /// The open connection a try runs on.
    type Conn: Send;
    /// The store's statements.
    type Sql: Sync;
    /// The driver's failure.
    type Failure: std::fmt::Display + Send;
    /// The dialect's statements on the open connection.
    type Statements<'c>: super::Statements + super::Dialect<Failure = Self::Failure>
    where
        Self: 'c;

    /// The statements on `conn`, as this store's dialect sends them.
    fn statements<'c>(conn: &'c mut Self::Conn, sql: &'c Self::Sql) -> Self::Statements<'c>;

    /// The store's settings.
    fn config(&self) -> &StoreConfig;

    /// The store's counters.
    fn stats_mut(&mut self) -> &mut StoreStats;

    /// Before the first try: nothing of an earlier call (one that panicked)
    /// is left open.
    fn before_call(&mut self, until: Instant) -> impl Future<Output = ()> + Send;

    /// A vetted connection, ready for a try (connect, failover, fail-back).
    fn ready(&mut self, until: Instant) -> impl Future<Output = Result<()>> + Send;

    /// The open connection and the statements.
    fn parts(&mut self) -> (&mut Self::Conn, &Self::Sql);

    /// After a try (`answered`: it answered a value): no transaction is left
    /// open on the connection, or the connection is closed.
    fn after_try(&mut self, answered: bool, until: Instant) -> impl Future<Output = ()> + Send;

    /// A try's driver failure as an error; a broken connection is dropped.
    fn failed(&mut self, failure: Self::Failure) -> Error;

    /// The deadline passed: the connection is closed now.
    fn abandon(&mut self) -> impl Future<Output = ()> + Send;

    /// Creates the sequences table if missing, or gives an older one the
    /// columns it lacks (an operation of its own, with its own deadline).
    fn ensure_schema(&mut self) -> impl Future<Output = Result<()>> + Send;
}

/// Runs `operation` (for the log; `key` is handed to every try) under the
/// loop's invariants.
pub(crate) async fn run<S, T, F>(
    site: &mut S,
    operation: &'static str,
    key: &str,
    mut attempt: F,
) -> Result<T>
where
    S: CallSite + Send,
    S::Failure: Send,
    F: for<'c> FnMut(&'c mut S::Conn, &'c S::Sql, &'c str) -> Try<'c, T, S::Failure> + Send,
    T: Send,
{
    let deadline = site.config().deadline;
    let until = Instant::now() + deadline;
    site.before_call(until).await;
    let outcome = tokio::time::timeout_at(until, async {
        let mut tries = 0u32;
        loop {
            tries += 1;
            let failure = match site.ready(until).await {
                Err(e) => e,
                Ok(()) => {
                    let (conn, sql) = site.parts();
                    let answer = attempt(conn, sql, key).await;
                    site.after_try(matches!(answer, Ok(Ok(_))), until).await;
                    match answer {
                        Ok(answer) => return answer,
                        Err(e) => site.failed(e),
                    }
                }
            };
            let retry = site.config().retry;
            if !failure.is_retryable() || !retry.allows_another(tries) {
                return Err(failure);
            }
            site.stats_mut().retries += 1;
            let pause = retry.backoff(tries, fastrand::f64());
            log::debug!("{operation}: try {tries} failed ({failure}); retrying in {pause:?}");
            tokio::time::sleep(pause).await;
        }
    })
    .await;
    match outcome {
        Ok(answer) => answer,
        Err(_) => {
            site.abandon().await;
            site.stats_mut().timeouts += 1;
            Err(Error::Timeout {
                operation,
                after: deadline,
            })
        }
    }
}
