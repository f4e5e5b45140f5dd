//! Time in tests: a deadline is checked with a margin that proves "no hang"
//! (the call gave up on its own, long before a frozen server would ever have
//! answered) without betting on how fast a shared, loaded machine runs the
//! few milliseconds around it. Fail-back and overlap tests judge each call
//! by when it began instead (see the tests), and waits are for a condition
//! with a generous bound, never for a guessed pause.

use std::time::Duration;

/// How far past its deadline a call may return and still count as having
/// kept it: the deadline is the call's own timer, so what comes after it is
/// the error's tear-down (closing a socket) and the scheduler. Measured
/// 2026-12-03 on 2 cores beside a Galera load loop (lane, server_faults,
/// postgres: every `assert_kept_deadline` prints its overrun): +1 to +16 ms.
/// 500 ms is thirty times that, for a machine loaded harder; a frozen server
/// or a lock held forever would take unboundedly longer. (It was 3 s.)
pub const NO_HANG_MARGIN: Duration = Duration::from_millis(500);

/// Asserts a call that ended in an error kept its `deadline`: it took at
/// least the deadline less 20 ms when `waited_out` (it ran into the
/// deadline rather than failing early), and at most the deadline plus
/// [`NO_HANG_MARGIN`].
pub fn assert_kept_deadline(took: Duration, deadline: Duration, waited_out: bool, what: &str) {
    println!(
        "{what}: {took:?} for a deadline of {deadline:?} ({:+} ms)",
        took.as_millis() as i64 - deadline.as_millis() as i64
    );
    if waited_out {
        assert!(
            took + Duration::from_millis(20) >= deadline,
            "{what}: gave up after {took:?}, before its deadline {deadline:?}"
        );
    }
    assert!(
        took < deadline + NO_HANG_MARGIN,
        "{what}: took {took:?}, past its deadline {deadline:?} by more than {NO_HANG_MARGIN:?}"
    );
}

/// Waits until `ready` holds, checking every 10 ms, for at most `bound`
/// (generous: a bound is a hang detector, not a speed claim). Returns how
/// long it took; panics naming `what` when the bound passes.
pub fn wait_until(what: &str, bound: Duration, mut ready: impl FnMut() -> bool) -> Duration {
    let started = std::time::Instant::now();
    while !ready() {
        assert!(started.elapsed() < bound, "{what}: not within {bound:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    started.elapsed()
}
