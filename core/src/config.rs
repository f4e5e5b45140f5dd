//! How a store connects and how patient it is, on either engine.
//!
//! Invariants: every store has a finite deadline for each call (connect and
//! retries included) and a finite connect timeout; the durability policy is
//! `Require` unless the caller names the unsafe override explicitly.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::retry::RetryPolicy;
use crate::table_prefix::TablePrefix;

/// What to do with a server's `innodb_flush_log_at_trx_commit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DurabilityPolicy {
    /// Refuse `0` (a crash can roll the counter back); accept `2` with a warning.
    #[default]
    Require,
    /// Accept `0`. A crash of the server may then issue numbers twice:
    /// only for throwaway test servers.
    UnsafeAllowFlushLogAtTrxCommit0,
}

/// What a node list may hold (docs/design.md §9: two independent servers in one
/// list are two counters, and failing over between them repeats numbers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeListPolicy {
    /// A list of several nodes must be one cluster: Galera nodes reporting
    /// one `wsrep_cluster_state_uuid`, or members of one MySQL Group
    /// Replication group, or one PostgreSQL primary with its standbys (one
    /// `system_identifier`). Anything else is refused as a configuration
    /// error. A single node is always accepted.
    #[default]
    OneCluster,
    /// Accept a list of independent servers (each still vetted as a
    /// writable primary). Only for tests of failover between throw-away
    /// private servers: in production each server is its own counter.
    UnsafeAllowIndependentServers,
}

/// The durability the connected server offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `innodb_flush_log_at_trx_commit = 1`: every commit is on disk.
    Full,
    /// `= 2`: safe against a server crash, not against an OS crash or power
    /// loss. A warning is logged.
    ServerCrashOnly,
    /// `= 0`, accepted only under the explicit unsafe override.
    Unsafe,
}

/// Connection settings of a store.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// `mysql://user:pass@host:port/db`, or `mysql://user@localhost/db?socket=/path`;
    /// several, separated by commas, for a cluster: the first healthy node is
    /// the writer, the next ones take over when it fails.
    pub url: String,
    /// Table prefix (default `wp_`).
    pub table_prefix: TablePrefix,
    /// The deadline of one call, retries and reconnects included.
    pub deadline: Duration,
    /// The longest one connection attempt may take.
    pub connect_timeout: Duration,
    /// Retries of deadlocks, lock wait timeouts and lost connections.
    pub retry: RetryPolicy,
    /// What to do with `innodb_flush_log_at_trx_commit`.
    pub durability: DurabilityPolicy,
    /// What the node list may hold.
    pub node_list: NodeListPolicy,
    /// A store writing to a later node of the list (after a failover) tries
    /// the earlier ones again once this long has passed since it moved, so
    /// that every process comes back to the preferred writer.
    pub fail_back_after: Duration,
    /// Whether a payment's first delivery, a held payment's completion and
    /// a recorded allocation's first try are sent in one round trip where
    /// the engine allows it (issue 30, never to a Galera node;
    /// default on). Off, they take the flow of several statements: the
    /// benchmarks' baseline.
    pub one_trip_payments: bool,
    /// When a transaction that took a number is read back on the same
    /// connection after its COMMIT was answered, the number told only when
    /// the read finds it (docs/galera.md): by default on a node of a
    /// cluster where every node writes (Galera).
    pub confirm_commits: ConfirmCommits,
}

/// When a numbering transaction's COMMIT is read back before its number is
/// told ([`StoreConfig::confirm_commits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ConfirmCommits {
    /// On a node of a cluster where every node writes (Galera, Group
    /// Replication multi-primary): there a transaction aborted by another
    /// node's write set after its last statement has been seen to answer
    /// its COMMIT with OK and vanish. The default.
    #[default]
    OnClusters,
    /// On every MySQL/MariaDB server (a proxy in between that may answer
    /// for the server; the tests' lying proxy). The PostgreSQL store has no
    /// cluster where every node writes and confirms nothing.
    Always,
    /// Never: the benchmark's baseline only. A COMMIT answered OK whose
    /// write set a cluster aborted would tell a number it does not hold.
    Never,
}

impl ConfirmCommits {
    /// Whether a session to a server that is (`multi_writer`) or is not a
    /// node of a cluster where every node writes confirms its commits.
    pub fn applies(self, multi_writer: bool) -> bool {
        match self {
            ConfirmCommits::OnClusters => multi_writer,
            ConfirmCommits::Always => true,
            ConfirmCommits::Never => false,
        }
    }
}

impl StoreConfig {
    /// Default deadline of a call.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);
    /// Default connect timeout.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
    /// Default time on a later node before trying the earlier ones again.
    pub const DEFAULT_FAIL_BACK_AFTER: Duration = Duration::from_secs(30);

    /// Settings for `url` with the defaults: prefix `wp_`, 5 s deadline.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            table_prefix: TablePrefix::default(),
            deadline: Self::DEFAULT_DEADLINE,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            durability: DurabilityPolicy::Require,
            node_list: NodeListPolicy::OneCluster,
            fail_back_after: Self::DEFAULT_FAIL_BACK_AFTER,
            one_trip_payments: true,
            confirm_commits: ConfirmCommits::OnClusters,
        }
    }

    /// When a numbering transaction is read back after its COMMIT before
    /// its number is told ([`ConfirmCommits`]; default: on clusters).
    pub fn confirm_commits(mut self, confirm: ConfirmCommits) -> Self {
        self.confirm_commits = confirm;
        self
    }

    /// Sends a payment's first delivery, a held payment's completion and a
    /// recorded allocation's first try in one round trip (`true`, the
    /// default) or as several statements (`false`).
    pub fn one_trip_payments(mut self, one_trip: bool) -> Self {
        self.one_trip_payments = one_trip;
        self
    }

    /// Settings from WordPress-style parts (`DB_HOST`, `DB_USER`,
    /// `DB_PASSWORD`, `DB_NAME`). `host` may be `host`, `host:port`,
    /// `[v6addr]:port` or `host:/path/to/socket`.
    pub fn from_parts(host: &str, user: &str, password: &str, database: &str) -> Result<Self> {
        Ok(Self::new(url_from_parts(host, user, password, database)?))
    }

    /// Sets the table prefix (validated).
    pub fn table_prefix(mut self, prefix: &str) -> Result<Self> {
        self.table_prefix = TablePrefix::new(prefix)?;
        Ok(self)
    }

    /// Sets the deadline of each call; the connect timeout never exceeds it.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self.connect_timeout = self.connect_timeout.min(deadline);
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets how long a store stays on a later node before trying the
    /// earlier ones again.
    pub fn fail_back_after(mut self, after: Duration) -> Self {
        self.fail_back_after = after;
        self
    }

    /// Sets the durability policy.
    pub fn durability(mut self, policy: DurabilityPolicy) -> Self {
        self.durability = policy;
        self
    }

    /// Sets what the node list may hold.
    pub fn node_list(mut self, policy: NodeListPolicy) -> Self {
        self.node_list = policy;
        self
    }

    /// The node URLs, in order of preference: the comma-separated list, with
    /// a PostgreSQL URL of several hosts (libpq's multi-host form,
    /// `postgres://user@host1:5432,host2:5432/db?target_session_attrs=read-write`)
    /// expanded into one URL per host ([`expand_hosts`]).
    pub fn node_urls(&self) -> Vec<String> {
        let mut urls: Vec<String> = Vec::new();
        for piece in self.url.split(',').map(str::trim).filter(|u| !u.is_empty()) {
            match urls.last_mut() {
                // A host (or a query value) of the PostgreSQL URL before it.
                Some(last) if !piece.contains("://") && is_postgres_url(last) => {
                    last.push(',');
                    last.push_str(piece);
                }
                _ => urls.push(piece.to_owned()),
            }
        }
        urls.iter().flat_map(|u| expand_hosts(u)).collect()
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.node_urls().is_empty() {
            return Err(Error::Config("no database URL".into()));
        }
        if self.deadline.is_zero() || self.connect_timeout.is_zero() {
            return Err(Error::Config(
                "deadline and connect timeout must be above zero".into(),
            ));
        }
        Ok(())
    }
}

/// Whether a URL names the PostgreSQL engine.
pub fn is_postgres_url(url: &str) -> bool {
    let u = url.trim_start();
    u.starts_with("postgres://") || u.starts_with("postgresql://")
}

/// A PostgreSQL URL with several hosts in its authority, one URL per host
/// (user, database and parameters kept); any other URL as it is. A host
/// may be `name`, `name:port`, `[v6]:port` or a percent-encoded socket
/// directory (`%2Frun%2Fpostgresql`).
pub fn expand_hosts(url: &str) -> Vec<String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return vec![url.to_owned()];
    };
    if !is_postgres_url(url) {
        return vec![url.to_owned()];
    }
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (Some(user), hosts),
        None => (None, authority),
    };
    if !hosts.contains(',') {
        return vec![url.to_owned()];
    }
    hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|host| match userinfo {
            Some(user) => format!("{scheme}://{user}@{host}{tail}"),
            None => format!("{scheme}://{host}{tail}"),
        })
        .collect()
}

/// Builds a `mysql://` URL from WordPress-style parts (see
/// [`StoreConfig::from_parts`]); user, password and database are
/// percent-encoded.
pub fn url_from_parts(host: &str, user: &str, password: &str, database: &str) -> Result<String> {
    let host = host.trim();
    if host.is_empty() {
        return Err(Error::Config("database host is empty".into()));
    }
    let auth = if password.is_empty() {
        encode(user)
    } else {
        format!("{}:{}", encode(user), encode(password))
    };
    let db = encode(database);
    // host:/path/to/socket
    if let Some((h, socket)) = host.split_once(':').filter(|(_, s)| s.starts_with('/')) {
        let h = if h.is_empty() { "localhost" } else { h };
        return Ok(format!("mysql://{auth}@{h}/{db}?socket={}", encode(socket)));
    }
    let (h, port) = if let Some(rest) = host.strip_prefix('[') {
        let (addr, tail) = rest
            .split_once(']')
            .ok_or_else(|| Error::Config(format!("database host `{host}`: missing `]`")))?;
        (format!("[{addr}]"), tail.strip_prefix(':'))
    } else {
        match host.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (host.to_owned(), None),
        }
    };
    let port = match port {
        None | Some("") => 3306,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| Error::Config(format!("database host `{host}`: bad port `{p}`")))?,
    };
    Ok(format!("mysql://{auth}@{h}:{port}/{db}"))
}

/// Percent-encodes everything but unreserved URL characters.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Counters of what the store did, for tests and monitoring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Connections opened.
    pub connects: u64,
    /// Tries that failed with a retryable error and were tried again.
    pub retries: u64,
    /// Calls that hit their deadline.
    pub timeouts: u64,
    /// Connections closed because a transaction on them was not seen to end.
    pub discarded: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wordpress_hosts() {
        let u = |h| url_from_parts(h, "wp", "p@ss:w/rd", "shop").unwrap();
        assert_eq!(
            u("db.example"),
            "mysql://wp:p%40ss%3Aw%2Frd@db.example:3306/shop"
        );
        assert_eq!(
            u("127.0.0.1:3307"),
            "mysql://wp:p%40ss%3Aw%2Frd@127.0.0.1:3307/shop"
        );
        assert_eq!(
            u("[::1]:3308"),
            "mysql://wp:p%40ss%3Aw%2Frd@[::1]:3308/shop"
        );
        assert_eq!(
            u("localhost:/run/mysqld/mysqld.sock"),
            "mysql://wp:p%40ss%3Aw%2Frd@localhost/shop?socket=%2Frun%2Fmysqld%2Fmysqld.sock"
        );
        assert_eq!(
            url_from_parts("h", "root", "", "d").unwrap(),
            "mysql://root@h:3306/d"
        );
        assert!(url_from_parts("h:99999", "u", "p", "d").is_err());
        assert!(url_from_parts(" ", "u", "p", "d").is_err());
        let cfg = StoreConfig::from_parts("h:1", "u", "p", "d").unwrap();
        #[cfg(feature = "mysql")]
        assert!(mysql_async::Opts::from_url(&cfg.url).is_ok());
        assert!(cfg.url.starts_with("mysql://u:p@h:1/d"));
    }

    #[test]
    fn a_postgres_url_of_several_hosts_is_one_node_per_host() {
        let cfg = StoreConfig::new;
        assert_eq!(
            cfg(
                "postgres://cf:pw@10.0.0.1:5432,10.0.0.2:5433/shop?target_session_attrs=read-write"
            )
            .node_urls(),
            [
                "postgres://cf:pw@10.0.0.1:5432/shop?target_session_attrs=read-write",
                "postgres://cf:pw@10.0.0.2:5433/shop?target_session_attrs=read-write",
            ]
        );
        // A socket directory and an IPv6 host; no user.
        assert_eq!(
            cfg("postgresql://%2Frun%2Fpostgresql:5432,[::1]:5433/db").node_urls(),
            [
                "postgresql://%2Frun%2Fpostgresql:5432/db",
                "postgresql://[::1]:5433/db"
            ]
        );
        // The comma-separated list of whole URLs still works, and a MySQL
        // list is untouched.
        assert_eq!(
            cfg("postgres://a@h1/db, postgres://a@h2/db").node_urls(),
            ["postgres://a@h1/db", "postgres://a@h2/db"]
        );
        assert_eq!(
            cfg("mysql://u@h1/db,mysql://u@h2/db").node_urls(),
            ["mysql://u@h1/db", "mysql://u@h2/db"]
        );
        // One host: as given.
        assert_eq!(
            cfg("postgres://a@h/db?x=1").node_urls(),
            ["postgres://a@h/db?x=1"]
        );
    }
}
