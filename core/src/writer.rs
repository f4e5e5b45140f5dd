//! Which node of a list writes, for both MySQL/MariaDB drivers (the async
//! MySQL/MariaDB store, its blocking lane, and the PostgreSQL store).
//!
//! Invariants: the writer is the first node of the list that accepts a
//! connection; a connection to a later node (after a failover) is kept, and
//! once `fail_back_after` has passed since the move the earlier nodes are
//! probed again — briefly (at most the connect timeout, a fifth of the
//! deadline and the time left), so that a node still away never eats a call's
//! deadline; when none answers, the clock starts again;
//! - every node of a list belongs to the cluster the first vetted node
//!   belongs to ([`Writer::admit`]); a node of another cluster is refused as
//!   a configuration error (two clusters are two counters);
//! - the reason a node was skipped is logged and kept ([`Writer::last_skip`]).

use std::time::{Duration, Instant};

use crate::config::{NodeListPolicy, StoreConfig};
use crate::error::{Error, Result};

/// The node of the open connection and since when it is a later one.
#[derive(Clone, Debug, Default)]
pub(crate) struct Writer {
    node: usize,
    on_later_node_since: Option<Instant>,
    /// The cluster identity of the first vetted node of a list.
    cluster: Option<String>,
    /// Why the last node passed over was skipped, and how many were.
    last_skip: Option<String>,
    skips: u64,
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

    /// Admits `node` with its cluster `identity` (see
    /// the dialects' vetting): the first identity seen is the
    /// list's; another one is refused, unless independent servers are
    /// allowed.
    pub fn admit(
        &mut self,
        node: usize,
        identity: Option<String>,
        policy: NodeListPolicy,
    ) -> Result<()> {
        let Some(identity) = identity else {
            return Ok(());
        };
        match &self.cluster {
            None => {
                self.cluster = Some(identity);
                Ok(())
            }
            Some(known) if *known == identity => Ok(()),
            Some(_) if policy == NodeListPolicy::UnsafeAllowIndependentServers => Ok(()),
            Some(known) => Err(Error::Config(format!(
                "node {} belongs to {identity}, the list's other nodes to {known}: two clusters \
                 are two counters; list the nodes of one cluster",
                node + 1
            ))),
        }
    }

    /// `node` was passed over for `reason`: logged and kept.
    pub fn skipped(&mut self, node: usize, reason: &crate::error::Error) {
        log::warn!("node {} skipped: {reason}", node + 1);
        self.skips += 1;
        self.last_skip = Some(format!("node {}: {reason}", node + 1));
    }

    /// Why the last node passed over was skipped.
    pub fn last_skip(&self) -> Option<&str> {
        self.last_skip.as_deref()
    }

    /// How many times a node was passed over.
    pub fn skips(&self) -> u64 {
        self.skips
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
