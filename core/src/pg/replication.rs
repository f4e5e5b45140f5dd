//! What a PostgreSQL primary's replication settings mean for numbers
//! (docs/design.md §8): whether a commit waits for a standby, and whether a
//! node list may fail over to its standbys without repeating numbers.
//!
//! Invariants: a node list is numbered on only when its primary names a
//! synchronous standby and acknowledges a commit only once that standby has
//! flushed it (`synchronous_commit` = `on` or `remote_apply`), or when no
//! standby is connected to it at all (right after a failover, the promoted
//! primary alone: there is nothing a further failover could promote);
//! anything else is refused (or, under the unsafe override, accepted with a
//! warning).

/// Whether a commit on this primary waits for a synchronous standby.
pub(crate) fn commit_waits_for_standby(standby_names: &str, synchronous_commit: &str) -> bool {
    !standby_names.trim().is_empty()
        && matches!(
            synchronous_commit.to_ascii_lowercase().as_str(),
            "on" | "remote_apply" | "remote_write"
        )
}

/// The setting that lets a failover lose acknowledged numbers, with its
/// value; `None` when a commit is on a standby's disk before it is
/// acknowledged, or when no standby is connected (`standbys`: the primary's
/// WAL senders).
pub(crate) fn unsafe_for_failover(
    standby_names: &str,
    synchronous_commit: &str,
    standbys: u64,
) -> Option<(&'static str, String)> {
    if standby_names.trim().is_empty() {
        if standbys == 0 {
            return None;
        }
        return Some(("synchronous_standby_names", standby_names.trim().to_owned()));
    }
    match synchronous_commit.to_ascii_lowercase().as_str() {
        "on" | "remote_apply" => None,
        _ => Some(("synchronous_commit", synchronous_commit.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_synchronous_standby_flushed_before_the_answer_is_safe() {
        assert_eq!(unsafe_for_failover("*", "on", 1), None);
        assert_eq!(
            unsafe_for_failover("FIRST 1 (s1, s2)", "remote_apply", 2),
            None
        );
        assert_eq!(
            unsafe_for_failover("", "on", 1),
            Some(("synchronous_standby_names", String::new()))
        );
        for weak in ["remote_write", "local", "off"] {
            assert_eq!(
                unsafe_for_failover("*", weak, 1),
                Some(("synchronous_commit", weak.to_owned()))
            );
        }
        // A promoted primary alone: nothing to fail over to.
        assert_eq!(unsafe_for_failover("", "on", 0), None);
    }

    #[test]
    fn a_commit_waits_for_the_standby_only_when_one_is_named() {
        assert!(commit_waits_for_standby("*", "on"));
        assert!(commit_waits_for_standby("s1", "remote_write"));
        assert!(!commit_waits_for_standby("", "on"));
        assert!(!commit_waits_for_standby("*", "local"));
    }
}
