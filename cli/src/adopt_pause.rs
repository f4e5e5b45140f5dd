//! adopt's test hook: with `COUNTERFOIL_TEST_ADOPT_PAUSE=<ms>` in the
//! environment, adopt says `adopt: test pause <ms> ms` on stderr and sleeps
//! that long at the one point between deciding what to write and writing
//! it, so that a test can let live payments run in that window.
//!
//! Invariant: compiled into debug builds only (the test suites'); a release
//! build ignores the variable.

/// The pause, if the test asked for one.
pub(crate) async fn test_pause() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("COUNTERFOIL_TEST_ADOPT_PAUSE")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        eprintln!("adopt: test pause {ms} ms");
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        eprintln!("adopt: test pause over");
    }
}
