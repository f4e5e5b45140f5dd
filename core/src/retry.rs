//! Bounded retries with jittered exponential backoff.
//!
//! Invariants: at most `max_attempts` tries in all (so at least one); the
//! delay before try `k+1` is uniform in `0 ..= min(cap, base * 2^(k-1))`
//! ("full jitter"), so competing clients spread out instead of colliding
//! again in step. The random source is passed in, which keeps this pure.

use std::time::Duration;

/// How often and how patiently an operation is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, including the first (at least 1).
    pub max_attempts: u32,
    /// The backoff ceiling after the first failure.
    pub base: Duration,
    /// The largest backoff ceiling.
    pub cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base: Duration::from_millis(5),
            cap: Duration::from_millis(250),
        }
    }
}

impl RetryPolicy {
    /// No retries: one try only.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Whether another try may follow try number `attempt` (1-based).
    pub fn allows_another(&self, attempt: u32) -> bool {
        attempt < self.max_attempts.max(1)
    }

    /// The delay after failed try number `attempt` (1-based), given a uniform
    /// random `unit` in `[0, 1)`.
    pub fn backoff(&self, attempt: u32, unit: f64) -> Duration {
        let shift = attempt.saturating_sub(1).min(20);
        let ceiling = self.base.saturating_mul(1u32 << shift).min(self.cap);
        ceiling.mul_f64(unit.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_jittered() {
        let p = RetryPolicy::default();
        assert!(p.allows_another(4));
        assert!(!p.allows_another(5));
        assert!(!RetryPolicy::none().allows_another(1));
        assert_eq!(p.backoff(1, 1.0), Duration::from_millis(5));
        assert_eq!(p.backoff(3, 1.0), Duration::from_millis(20));
        assert_eq!(p.backoff(30, 1.0), Duration::from_millis(250));
        assert_eq!(p.backoff(3, 0.0), Duration::ZERO);
        assert_eq!(p.backoff(3, 0.5), Duration::from_millis(10));
    }
}
