//! Time in tests: a deadline is checked with a margin that proves "no hang"
//! (the call gave up on its own, long before a frozen server would ever have
//! answered) without betting on how fast a shared, loaded machine runs the
//! few milliseconds around it. Fail-back and overlap tests judge each call
//! by when it began instead (see the tests), and waits are for a condition
//! with a generous bound, never for a guessed pause.

use std::time::Duration;

/// How far past its deadline a call may return and still count as having
/// kept it: scheduling, the error's own tear-down, a loaded machine. A
/// frozen server or a lock held forever would take unboundedly longer.
pub const NO_HANG_MARGIN: Duration = Duration::from_secs(3);

/// Asserts a call that ended in an error kept its `deadline`: it took at
/// least the deadline less 20 ms when `waited_out` (it ran into the
/// deadline rather than failing early), and at most the deadline plus
/// [`NO_HANG_MARGIN`].
pub fn assert_kept_deadline(took: Duration, deadline: Duration, waited_out: bool, what: &str) {
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
