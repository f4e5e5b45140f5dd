//! Which node of a list writes, for both MySQL/MariaDB drivers (the async
//! [`SeriesStore`](super::SeriesStore) and the blocking lane).
//!
//! Invariants: the writer is the first node of the list that accepts a
//! connection; a connection to a later node (after a failover) is kept, and
//! once `fail_back_after` has passed since the move the earlier nodes are
//! probed again — briefly (at most the connect timeout, a fifth of the
//! deadline and the time left), so that a node still away never eats a call's
//! deadline; when none answers, the clock starts again.

use std::time::{Duration, Instant};

use super::config::StoreConfig;

/// The node of the open connection and since when it is a later one.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Writer {
    node: usize,
    on_later_node_since: Option<Instant>,
}

impl Writer {
    /// The node of the open connection (0 = the first of the list).
    pub fn node(&self) -> usize {
        self.node
    }

    /// A connection to `node` was opened.
    pub fn connected(&mut self, node: usize) {
        self.node = node;
        self.on_later_node_since = (node > 0).then(Instant::now);
    }

    /// The earlier nodes to probe now, each for the returned time, or `None`
    /// when the open connection stays as it is.
    pub fn fail_back_probe(
        &self,
        config: &StoreConfig,
        left: Duration,
    ) -> Option<(std::ops::Range<usize>, Duration)> {
        let due = self.node > 0
            && self
                .on_later_node_since
                .is_some_and(|t| t.elapsed() >= config.fail_back_after);
        due.then(|| {
            let probe = config.connect_timeout.min(config.deadline / 5).min(left);
            (0..self.node, probe)
        })
    }

    /// No earlier node answered the probe: stay, and wait again.
    pub fn stayed(&mut self) {
        self.on_later_node_since = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_back_is_due_only_on_a_later_node_after_the_wait() {
        let config = StoreConfig::new("mysql://u@h/d").fail_back_after(Duration::ZERO);
        let mut w = Writer::default();
        w.connected(0);
        assert!(w.fail_back_probe(&config, Duration::from_secs(5)).is_none());
        w.connected(2);
        let (nodes, probe) = w.fail_back_probe(&config, Duration::from_secs(5)).unwrap();
        assert_eq!(nodes, 0..2);
        assert_eq!(probe, Duration::from_secs(1), "a fifth of the 5 s deadline");
        let (_, probe) = w
            .fail_back_probe(&config, Duration::from_millis(30))
            .unwrap();
        assert_eq!(
            probe,
            Duration::from_millis(30),
            "never more than the time left"
        );
        let patient = StoreConfig::new("mysql://u@h/d");
        w.stayed();
        assert!(w
            .fail_back_probe(&patient, Duration::from_secs(5))
            .is_none());
    }
}
