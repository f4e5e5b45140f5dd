//! What a new MySQL/MariaDB connection must show before it allocates, and
//! what one allocation statement's answer means: the rules both drivers
//! (the async [`SeriesStore`](super::SeriesStore) and the blocking
//! [`AllocationLane`](super::AllocationLane)) apply, written once.
//!
//! Invariants: a server whose `innodb_flush_log_at_trx_commit` is `0` is
//! refused unless the unsafe override was given, and one that does not
//! report it is refused; a Galera node must report `wsrep_ready = ON`; a
//! writer must be a writable primary, judged by its role and never by
//! whether a write fails (docs/design.md §9: a user with `SUPER` writes on a
//! `--read-only` server): `read_only` and `super_read_only` off, else the
//! node is skipped like a down one; a list of several nodes must be one
//! cluster (see [`crate::config::NodeListPolicy`]); wrong credentials or
//! database end the search through the node list; the allocation's number
//! is taken only when exactly one row changed.

use crate::error::{codes, Error, Result};

use crate::config::{Durability, DurabilityPolicy, NodeListPolicy};

/// The first statement on every new connection. `SHOW` works on MariaDB and
/// MySQL alike; `wsrep_on` only exists where Galera could run, and is ON only
/// on a cluster node.
/// `read_only` and (MySQL 8) `super_read_only` tell a writable primary;
/// `group_replication_group_name` exists where the Group Replication plugin
/// is loaded, and `group_replication_single_primary_mode` says whether one
/// member writes or all do.
pub(crate) const SERVER_CHECK_SQL: &str = "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
     ('innodb_flush_log_at_trx_commit', 'wsrep_on', 'read_only', 'super_read_only', \
     'group_replication_group_name', 'group_replication_single_primary_mode')";

/// The session's own settings, sent on every new connection (the store, the
/// lane, and the twin alike):
/// - autocommit on: a server whose sessions start with autocommit off
///   (`autocommit=0` in my.cnf, or `init_connect`) would turn a plain
///   allocation into a transaction that nothing ends, and the server's
///   `idle_transaction_timeout` would later roll back numbers already handed
///   out, to be handed out again;
/// - a lock wait no longer than the call's deadline (whole seconds, at least
///   one; the server's own setting when shorter): a call that gives up at its
///   deadline closes its socket, but a statement still waiting for a lock
///   goes on waiting on the server (50 s by default), holding every lock its
///   transaction took before (the series row): the next call of the series
///   would wait behind a call that already failed.
///
/// A server that refuses either is refused.
pub(crate) fn session_sql(deadline: std::time::Duration) -> String {
    let seconds = deadline.as_millis().div_ceil(1000).max(1);
    format!(
        "SET SESSION autocommit = 1, innodb_lock_wait_timeout = \
         LEAST(@@GLOBAL.innodb_lock_wait_timeout, {seconds})"
    )
}

/// Galera readiness and the cluster's identity, asked only of a cluster node.
pub(crate) const GALERA_READY_SQL: &str = "SHOW GLOBAL STATUS WHERE Variable_name IN \
     ('wsrep_ready', 'wsrep_cluster_state_uuid')";

/// Causal reads on a Galera node: without them a read could return a counter
/// older than a number already handed out on another node.
pub(crate) const GALERA_CAUSAL_READS_SQL: &str = "SET SESSION wsrep_sync_wait = 1";

/// What [`SERVER_CHECK_SQL`] showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerCheck {
    /// The durability the server offers (already judged against the policy).
    pub durability: Durability,
    /// Whether the server is a Galera cluster node.
    pub galera: bool,
    /// The setting that makes the server read-only, if one does.
    pub read_only: Option<&'static str>,
    /// The Group Replication group the server belongs to, if any.
    pub group: Option<String>,
    /// A Group Replication member in multi-primary mode
    /// (`group_replication_single_primary_mode = OFF`).
    pub multi_primary: bool,
}

impl ServerCheck {
    /// A node of a cluster where every node writes and a transaction can be
    /// aborted from outside by a conflicting one (a Galera node; a Group
    /// Replication member in multi-primary mode, whose certification
    /// rolls back at commit with 3101): no one-trip packets are sent there
    /// (`Session::multi_writer`). A Galera transaction aborted that way in
    /// the middle of a multi-statement packet got no error, its later
    /// statements committing alone (the Galera suite measured it); Group
    /// Replication is held to the same rule until measured otherwise.
    pub fn multi_writer(&self) -> bool {
        self.galera || self.multi_primary
    }
}

/// Judges the rows of [`SERVER_CHECK_SQL`] under `policy`.
pub(crate) fn judge_server(
    vars: &[(String, String)],
    policy: DurabilityPolicy,
) -> Result<ServerCheck> {
    let var = |name: &str| {
        vars.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let on = |v: &str| v.eq_ignore_ascii_case("ON") || v == "1";
    let galera = var("wsrep_on").is_some_and(on);
    let read_only = ["read_only", "super_read_only"]
        .into_iter()
        .find(|name| var(name).is_some_and(on));
    let group = var("group_replication_group_name")
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_owned);
    // Only a member knows the mode; where the variable is missing, a member
    // is taken as multi-primary (the cautious reading).
    let multi_primary =
        group.is_some() && !var("group_replication_single_primary_mode").is_some_and(on);
    let setting: Option<u8> = var("innodb_flush_log_at_trx_commit").and_then(|v| v.parse().ok());
    let durability = match (setting, policy) {
        (Some(1), _) => Durability::Full,
        (Some(2), _) => {
            log::warn!(
                "innodb_flush_log_at_trx_commit = 2: numbers survive a server crash \
                 but not an OS crash or power loss; set it to 1 for full durability"
            );
            Durability::ServerCrashOnly
        }
        (Some(0), DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0) => {
            log::warn!("innodb_flush_log_at_trx_commit = 0 accepted by the unsafe override");
            Durability::Unsafe
        }
        (Some(s), _) => return Err(Error::UnsafeDurability { setting: s }),
        (None, _) => {
            return Err(Error::Unexpected(
                "server did not report innodb_flush_log_at_trx_commit".into(),
            ))
        }
    };
    Ok(ServerCheck {
        durability,
        galera,
        read_only,
        group,
        multi_primary,
    })
}

/// Judges a Galera node's rows of [`GALERA_READY_SQL`] (`node` counts from
/// 0): ready, and the cluster it belongs to.
pub(crate) fn judge_ready(node: usize, rows: &[(String, String)]) -> Result<Option<String>> {
    let var = |name: &str| {
        rows.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let ready = var("wsrep_ready").unwrap_or_default();
    if ready.eq_ignore_ascii_case("ON") {
        return Ok(var("wsrep_cluster_state_uuid")
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(|u| format!("Galera cluster {u}")));
    }
    Err(Error::Unavailable {
        reason: format!(
            "cannot connect: node {} is not ready (wsrep_ready = {ready})",
            node + 1
        ),
        may_have_run: false,
    })
}

/// The writer rule (docs/design.md §9), after the durability and readiness
/// checks: `node` (from 0) of a list of `nodes` may write when it is a
/// writable primary and, in a list of several, a member of a cluster.
/// `cluster` is the node's cluster identity (a Galera cluster's state uuid
/// or a Group Replication group). Returns the identity to compare with the
/// other nodes' ([`crate::writer::Writer::admit`]).
pub(crate) fn judge_writer(
    node: usize,
    nodes: usize,
    check: &ServerCheck,
    galera_cluster: Option<String>,
    policy: NodeListPolicy,
) -> Result<Option<String>> {
    if let Some(setting) = check.read_only {
        return Err(Error::Unavailable {
            reason: format!(
                "cannot connect: node {} is read-only ({setting} = ON): not a writable primary",
                node + 1
            ),
            may_have_run: false,
        });
    }
    let identity = galera_cluster.or_else(|| {
        check
            .group
            .as_ref()
            .map(|g| format!("Group Replication group {g}"))
    });
    if nodes > 1 && identity.is_none() && policy == NodeListPolicy::OneCluster {
        return Err(Error::Config(format!(
            "the node list names {nodes} servers, and node {} is neither a Galera node nor a \
             Group Replication member: independent servers in one list are independent counters, \
             and failing over between them hands the same numbers out again. List one server, \
             or the nodes of one cluster (the override NodeListPolicy::UnsafeAllowIndependentServers \
             exists for tests between throw-away servers)",
            node + 1
        )));
    }
    Ok(identity)
}

/// A classified failure to connect, said plainly.
pub(crate) fn connect_failure(error: Error) -> Error {
    match error {
        // Access denied, unknown database: the same on every node and at
        // every retry.
        Error::Server { code, message, .. } if codes::is_configuration_error(code) => {
            Error::Config(format!("cannot connect: error {code}: {message}"))
        }
        // Too many connections, host blocked, a user's limit, a node not
        // ready: this node refuses now; try the next.
        Error::Server { code, message, .. } => Error::Unavailable {
            reason: format!("cannot connect: error {code}: {message}"),
            may_have_run: false,
        },
        Error::Unavailable { reason, .. } => Error::Unavailable {
            reason: format!(
                "cannot connect: {}",
                reason.trim_start_matches("connection lost: ")
            ),
            may_have_run: false,
        },
        other => other,
    }
}

/// A failure while vetting a new connection: no statement of the caller ran.
pub(crate) fn before_any_statement(error: Error) -> Error {
    match error {
        Error::Unavailable { reason, .. } => Error::Unavailable {
            reason: format!("cannot connect: {reason}"),
            may_have_run: false,
        },
        other => other,
    }
}

/// Whether a node's refusal ends the search through the node list: a server
/// refusing by policy, or a configuration error, is the same on every node.
pub(crate) fn ends_node_search(error: &Error) -> bool {
    matches!(error, Error::UnsafeDurability { .. } | Error::Config(_))
}

/// The allocation statement's server error, when it has a meaning of its own:
/// the counter would pass `u64::MAX`.
pub(crate) fn allocation_refused(code: u16, key: &str, count: u64) -> Option<Error> {
    (code == codes::ER_DATA_OUT_OF_RANGE).then(|| Error::Overflow {
        scope: key.to_owned(),
        requested: count,
    })
}

/// The allocation statement's answer: the new counter from its OK packet,
/// only when exactly one row changed.
pub(crate) fn judge_allocation(
    affected_rows: u64,
    last_insert_id: Option<u64>,
    key: &str,
    count: u64,
) -> Result<u64> {
    match (affected_rows, last_insert_id) {
        (1, Some(last)) if last >= count => Ok(last),
        (1, other) => Err(Error::Unexpected(format!(
            "allocation matched one row but returned {other:?}"
        ))),
        (0, _) => Err(Error::SeriesNotFound {
            scope: key.to_owned(),
        }),
        (n, _) => Err(Error::Unexpected(format!(
            "allocation changed {n} rows of one primary key"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(flush: &str, wsrep: Option<&str>) -> Vec<(String, String)> {
        let mut v = vec![("innodb_flush_log_at_trx_commit".into(), flush.into())];
        if let Some(w) = wsrep {
            v.push(("wsrep_on".into(), w.into()));
        }
        v
    }

    #[test]
    fn durability_is_judged_by_policy() {
        let strict = DurabilityPolicy::Require;
        let unsafe_ok = DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0;
        assert_eq!(
            judge_server(&vars("1", None), strict).unwrap(),
            ServerCheck {
                durability: Durability::Full,
                galera: false,
                read_only: None,
                group: None,
                multi_primary: false,
            }
        );
        assert_eq!(
            judge_server(&vars("2", Some("ON")), strict).unwrap(),
            ServerCheck {
                durability: Durability::ServerCrashOnly,
                galera: true,
                read_only: None,
                group: None,
                multi_primary: false,
            }
        );
        assert!(matches!(
            judge_server(&vars("0", None), strict),
            Err(Error::UnsafeDurability { setting: 0 })
        ));
        assert_eq!(
            judge_server(&vars("0", Some("OFF")), unsafe_ok)
                .unwrap()
                .durability,
            Durability::Unsafe
        );
        assert!(matches!(
            judge_server(&[], strict),
            Err(Error::Unexpected(_))
        ));
    }

    #[test]
    fn only_one_changed_row_gives_a_number() {
        assert_eq!(judge_allocation(1, Some(7), "k", 1).unwrap(), 7);
        assert_eq!(judge_allocation(1, Some(7), "k", 7).unwrap(), 7);
        assert!(matches!(
            judge_allocation(1, Some(6), "k", 7),
            Err(Error::Unexpected(_))
        ));
        assert!(matches!(
            judge_allocation(1, None, "k", 1),
            Err(Error::Unexpected(_))
        ));
        assert!(matches!(
            judge_allocation(0, Some(0), "k", 1),
            Err(Error::SeriesNotFound { .. })
        ));
        assert!(matches!(
            judge_allocation(2, Some(9), "k", 1),
            Err(Error::Unexpected(_))
        ));
        assert!(matches!(
            allocation_refused(codes::ER_DATA_OUT_OF_RANGE, "k", 3),
            Some(Error::Overflow { requested: 3, .. })
        ));
        assert!(allocation_refused(codes::ER_LOCK_DEADLOCK, "k", 1).is_none());
    }

    #[test]
    fn configuration_errors_end_the_node_search() {
        let denied = connect_failure(Error::Server {
            code: codes::ER_ACCESS_DENIED,
            state: "28000".into(),
            message: "no".into(),
        });
        assert!(ends_node_search(&denied));
        let busy = connect_failure(Error::Server {
            code: 1040,
            state: "08004".into(),
            message: "too many".into(),
        });
        assert!(!ends_node_search(&busy));
        let status = |ready: &str| {
            vec![
                ("wsrep_ready".to_owned(), ready.to_owned()),
                ("wsrep_cluster_state_uuid".to_owned(), "u-1".to_owned()),
            ]
        };
        assert_eq!(
            judge_ready(0, &status("ON")).unwrap().as_deref(),
            Some("Galera cluster u-1")
        );
        assert!(judge_ready(1, &status("OFF")).is_err());
        assert!(judge_ready(1, &[]).is_err());
    }

    #[test]
    fn a_writer_is_a_writable_primary_of_one_cluster() {
        let strict = DurabilityPolicy::Require;
        let mut vars = vars("1", None);
        vars.push(("read_only".into(), "ON".into()));
        let read_only = judge_server(&vars, strict).unwrap();
        assert_eq!(read_only.read_only, Some("read_only"));
        let refused = judge_writer(0, 1, &read_only, None, NodeListPolicy::OneCluster);
        assert!(
            matches!(&refused, Err(Error::Unavailable { reason, .. }) if reason.contains("read-only")),
            "{refused:?}"
        );
        assert!(
            !ends_node_search(&refused.unwrap_err()),
            "skipped like a down node"
        );
        let mut vars = self::vars("1", None);
        vars.push(("super_read_only".into(), "1".into()));
        assert_eq!(
            judge_server(&vars, strict).unwrap().read_only,
            Some("super_read_only")
        );

        let plain = judge_server(&self::vars("1", None), strict).unwrap();
        assert_eq!(
            judge_writer(0, 1, &plain, None, NodeListPolicy::OneCluster).unwrap(),
            None,
            "one server alone is fine"
        );
        let two = judge_writer(1, 2, &plain, None, NodeListPolicy::OneCluster);
        assert!(
            matches!(&two, Err(Error::Config(m)) if m.contains("independent counters")),
            "{two:?}"
        );
        assert!(ends_node_search(&two.unwrap_err()));
        assert!(judge_writer(
            1,
            2,
            &plain,
            None,
            NodeListPolicy::UnsafeAllowIndependentServers
        )
        .is_ok());
        let galera = judge_server(&self::vars("1", Some("ON")), strict).unwrap();
        assert_eq!(
            judge_writer(
                0,
                3,
                &galera,
                Some("Galera cluster u".into()),
                NodeListPolicy::OneCluster
            )
            .unwrap()
            .as_deref(),
            Some("Galera cluster u")
        );
        let mut vars = self::vars("1", None);
        vars.push(("group_replication_group_name".into(), "g-1".into()));
        let member = judge_server(&vars, strict).unwrap();
        assert_eq!(
            judge_writer(0, 3, &member, None, NodeListPolicy::OneCluster)
                .unwrap()
                .as_deref(),
            Some("Group Replication group g-1")
        );
    }

    /// One-trip packets go to no node of a cluster where every node
    /// writes: a Galera node, or a Group Replication member in
    /// multi-primary mode (a member that does not report its mode counts as
    /// multi-primary). A single primary, and a plain server, get them.
    #[test]
    fn multi_writer_clusters_get_no_one_trip_packets() {
        let strict = DurabilityPolicy::Require;
        let with = |extra: &[(&str, &str)]| {
            let mut v = self::vars("1", None);
            v.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            judge_server(&v, strict).unwrap().multi_writer()
        };
        assert!(!with(&[]), "a plain server");
        assert!(with(&[("wsrep_on", "ON")]), "a Galera node");
        assert!(!with(&[("wsrep_on", "OFF")]), "Galera off");
        assert!(
            with(&[
                ("group_replication_group_name", "g-1"),
                ("group_replication_single_primary_mode", "OFF"),
            ]),
            "Group Replication, multi-primary"
        );
        assert!(
            with(&[("group_replication_group_name", "g-1")]),
            "a member that does not say its mode"
        );
        assert!(
            !with(&[
                ("group_replication_group_name", "g-1"),
                ("group_replication_single_primary_mode", "ON"),
            ]),
            "Group Replication, single primary"
        );
        assert!(
            !with(&[
                ("group_replication_group_name", ""),
                ("group_replication_single_primary_mode", "OFF"),
            ]),
            "the plugin loaded, no group"
        );
    }

    /// The shared vectors of the session statement and the server check
    /// (`tests/vectors/mysql_session.json`), which the pure-PHP twin passes
    /// alike (`VectorsTest::test_mysql_session`).
    #[test]
    fn the_shared_session_and_server_check_vectors() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/vectors/mysql_session.json"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(v["server_check_sql"], SERVER_CHECK_SQL);
        assert_eq!(v["galera_ready_sql"], GALERA_READY_SQL);
        assert_eq!(v["galera_causal_reads_sql"], GALERA_CAUSAL_READS_SQL);
        let pairs = |rows: &serde_json::Value| -> Vec<(String, String)> {
            rows.as_array()
                .unwrap()
                .iter()
                .map(|r| (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()))
                .collect()
        };
        let session = v["session"].as_array().unwrap();
        for case in session {
            let ms = case["deadline_ms"].as_u64().unwrap();
            assert_eq!(
                session_sql(std::time::Duration::from_millis(ms)),
                case["sql"].as_str().unwrap(),
                "{case}"
            );
        }
        let servers = v["server"].as_array().unwrap();
        for case in servers {
            let policy = if case["unsafe_allowed"].as_bool().unwrap_or(false) {
                DurabilityPolicy::UnsafeAllowFlushLogAtTrxCommit0
            } else {
                DurabilityPolicy::Require
            };
            let got = judge_server(&pairs(&case["vars"]), policy);
            match (case["error"].as_str(), got) {
                (None, Ok(check)) => {
                    let durability = match check.durability {
                        Durability::Full => "full",
                        Durability::ServerCrashOnly => "server_crash_only",
                        Durability::Unsafe => "unsafe",
                    };
                    assert_eq!(
                        serde_json::json!({
                            "durability": durability,
                            "galera": check.galera,
                            "read_only": check.read_only,
                            "group": check.group,
                            "multi_writer": check.multi_writer(),
                        }),
                        case["expect"],
                        "{case}"
                    );
                }
                (Some("unsafe_durability"), Err(Error::UnsafeDurability { setting })) => {
                    assert_eq!(
                        u64::from(setting),
                        case["setting"].as_u64().unwrap(),
                        "{case}"
                    );
                }
                (Some("unreported_durability"), Err(Error::Unexpected(_))) => {}
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
        }
        let ready = v["ready"].as_array().unwrap();
        for case in ready {
            let got = judge_ready(0, &pairs(&case["rows"]));
            if case["ready"].as_bool().unwrap() {
                assert_eq!(got.unwrap().as_deref(), case["cluster"].as_str(), "{case}");
            } else {
                assert!(
                    matches!(got, Err(Error::Unavailable { .. })),
                    "{case}: {got:?}"
                );
            }
        }
        assert!(session.len() >= 8 && servers.len() >= 20 && ready.len() >= 8);
    }
}
