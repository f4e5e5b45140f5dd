//! The blocking allocation lane (feature `mysql-blocking`): the allocation
//! statement on a blocking connection (the `mysql` crate, which shares
//! `mysql_common` with mysql_async), for a caller with nothing else to do
//! while it waits — a PHP request. No runtime, no reactor. On a plain
//! connection the allocation itself goes through
//! `mysql::lane_exchange`: one `send`, one `poll` and one
//! `recv` per number, one sleep while the server works. Measured on these
//! machines (docs/benchmarks.md), the async driver costs about 56 µs of CPU
//! per allocation; this lane costs the same as PHP's own mysqli.
//!
//! Invariants — the same as [`SeriesStore`](super::SeriesStore)'s, by the
//! same rules ([`super::vetting`], [`Error::is_retryable`], [`RetryPolicy`]):
//! - allocation is [`SeriesSql::allocate`] (and `current()` a causal read of
//!   [`SeriesSql::current`]), each prepared once per connection;
//!   the number is read from its OK packet, only when exactly one row
//!   changed; zero rows is [`Error::SeriesNotFound`];
//! - every new connection is vetted (durability, Galera readiness) before it
//!   allocates, and the writer is the first node of the list that accepts; a
//!   lane on a later node tries the earlier ones again after
//!   `fail_back_after`;
//! - a call ends within its deadline: connects take at most the time left,
//!   and every socket wait is bounded by the time left (the exchange's
//!   `poll`; `SO_RCVTIMEO`/`SO_SNDTIMEO` for the driver's own statements); a
//!   wait that runs out is [`Error::Timeout`] and the connection, in an
//!   unknown state, is closed;
//! - a failed try is retried with a fresh statement (so a fresh number).
//!
//! [`RetryPolicy`]: crate::RetryPolicy
//! [`SeriesSql::allocate`]: crate::mysql::sql::SeriesSql

use std::ops::RangeInclusive;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Statement, Value};

use super::lane_exchange::Exchange;
use super::{vetting, StoreStats};
use crate::config::{Durability, StoreConfig};
use crate::error::{codes, Error, Result};
use crate::mysql::sql::SeriesSql;
use crate::scope::ScopeKey;
use crate::series::{self, SeriesState};
use crate::writer::Writer;

/// A socket timeout this much longer than the time left is shortened.
const TIMEOUT_SLACK: Duration = Duration::from_millis(50);

/// One vetted connection.
struct Open {
    conn: Conn,
    /// The statements, each prepared on first use.
    allocate: Option<Statement>,
    current: Option<Statement>,
    /// The socket timeouts in force (for the driver's own reads and
    /// writes).
    io_timeout: Duration,
    /// The allocation's exchange, on a plain connection; `None`: through
    /// the driver.
    exchange: Option<Exchange>,
}

/// The statement in `slot`, prepared on `conn` the first time.
fn prepared<'s>(
    conn: &mut Conn,
    slot: &'s mut Option<Statement>,
    sql: &str,
) -> std::result::Result<&'s Statement, mysql::Error> {
    if slot.is_none() {
        *slot = Some(conn.prep(sql)?);
    }
    Ok(slot.as_ref().expect("prepared above"))
}

/// One try's outcome: outer a driver failure (retry decision), inner the
/// operation's answer.
type Try<T> = std::result::Result<Result<T>, mysql::Error>;

/// One try of an operation on a vetted connection, by a deadline.
trait Attempt<T>: FnMut(&mut Open, &SeriesSql, Instant) -> Try<T> {}
impl<T, F: FnMut(&mut Open, &SeriesSql, Instant) -> Try<T>> Attempt<T> for F {}

/// Allocations of one database and table prefix on a blocking connection.
pub struct AllocationLane {
    config: StoreConfig,
    nodes: Vec<Opts>,
    sql: SeriesSql,
    open: Option<Open>,
    writer: Writer,
    durability: Option<Durability>,
    stats: StoreStats,
}

impl std::fmt::Debug for AllocationLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllocationLane")
            .field("connected", &self.open.is_some())
            .field("node", &self.writer.node())
            .field("stats", &self.stats)
            .finish()
    }
}

/// A driver failure, classified: the error, and whether the connection is
/// unusable afterwards.
struct Failure {
    error: Error,
    connection_broken: bool,
    /// A socket wait ran out of time.
    timed_out: bool,
}

fn classify(err: mysql::Error) -> Failure {
    match err {
        mysql::Error::MySqlError(e) => Failure {
            connection_broken: codes::breaks_connection(e.code),
            error: Error::Server {
                code: e.code,
                state: e.state,
                message: e.message,
            },
            timed_out: false,
        },
        mysql::Error::IoError(e) => Failure {
            timed_out: matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            error: Error::Unavailable {
                reason: format!("connection lost: {e}"),
                may_have_run: true,
            },
            connection_broken: true,
        },
        mysql::Error::UrlError(e) => Failure {
            error: Error::Config(format!("database URL: {e}")),
            connection_broken: true,
            timed_out: false,
        },
        other => Failure {
            error: Error::Unavailable {
                reason: format!("driver: {other}"),
                may_have_run: true,
            },
            connection_broken: true,
            timed_out: false,
        },
    }
}

/// Bounds every later read and write on `conn`'s socket by `timeout`. The
/// crate's one `unsafe`: the driver exposes the descriptor, not a setter.
#[allow(unsafe_code)]
fn set_io_timeout(conn: &Conn, timeout: Duration) -> std::io::Result<()> {
    // Zero would mean "no timeout": keep at least a millisecond.
    let timeout = timeout.max(Duration::from_millis(1));
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    for option in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: a valid socket descriptor owned by `conn`, and a timeval of
        // the size given.
        let rc = unsafe {
            libc::setsockopt(
                conn.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                std::ptr::addr_of!(tv).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

impl AllocationLane {
    /// A lane for `config`; the first call connects.
    pub fn new(config: StoreConfig) -> Result<Self> {
        config.validate()?;
        let nodes = config
            .node_urls()
            .iter()
            .map(|url| {
                let opts =
                    Opts::from_url(url).map_err(|e| Error::Config(format!("database URL: {e}")))?;
                // As in the async store: an IPv6 literal without its brackets.
                let host = opts.get_ip_or_hostname();
                let bare = host
                    .strip_prefix('[')
                    .and_then(|h| h.strip_suffix(']'))
                    .map(str::to_owned);
                // Rows changed, not matched, whatever the URL says (as in the
                // async store): the allocation's exactly-one-row rule reads it.
                let capabilities = opts.get_additional_capabilities()
                    - mysql::consts::CapabilityFlags::CLIENT_FOUND_ROWS;
                let mut builder =
                    OptsBuilder::from_opts(opts.clone()).additional_capabilities(capabilities);
                if let Some(address) = bare {
                    builder = builder.ip_or_hostname(Some(address));
                }
                Ok(builder.into())
            })
            .collect::<Result<Vec<Opts>>>()?;
        let sql = SeriesSql::new(&config.table_prefix);
        Ok(Self {
            config,
            nodes,
            sql,
            open: None,
            writer: Writer::default(),
            durability: None,
            stats: StoreStats::default(),
        })
    }

    /// Why the last node passed over was skipped, and how many times one was.
    pub fn skipped_nodes(&self) -> (u64, Option<&str>) {
        (self.writer.skips(), self.writer.last_skip())
    }

    /// What the lane has done so far.
    pub fn stats(&self) -> StoreStats {
        self.stats
    }

    /// Which node of the list the open connection goes to (0 = the first).
    pub fn node(&self) -> Option<usize> {
        self.open.as_ref().map(|_| self.writer.node())
    }

    /// The server's id of the open connection.
    pub fn connection_id(&self) -> Option<u32> {
        self.open.as_ref().map(|o| o.conn.connection_id())
    }

    /// The durability of the server last connected to.
    pub fn durability(&self) -> Option<Durability> {
        self.durability
    }

    /// Hands out the next number of `scope`.
    pub fn allocate(&mut self, scope: &ScopeKey) -> Result<u64> {
        self.allocate_raw(scope.as_str(), 1)
    }

    /// Hands out `count` contiguous numbers (1 ..= [`series::MAX_BATCH`]).
    pub fn allocate_many(&mut self, scope: &ScopeKey, count: u64) -> Result<RangeInclusive<u64>> {
        series::check_batch(count)?;
        let last = self.allocate_raw(scope.as_str(), count)?;
        Ok(series::batch_range(last, count))
    }

    fn allocate_raw(&mut self, key: &str, count: u64) -> Result<u64> {
        self.run("allocate", |open, sql, until| {
            let statement = prepared(&mut open.conn, &mut open.allocate, &sql.allocate)?;
            let answer = match open.exchange.as_mut() {
                Some(exchange) => exchange
                    .execute(
                        open.conn.as_raw_fd(),
                        until,
                        statement.id(),
                        &[Value::UInt(count), Value::Bytes(key.as_bytes().to_vec())],
                    )
                    .map(|done| (done.affected_rows, done.last_insert_id)),
                None => open
                    .conn
                    .exec_drop(statement, (count, key))
                    .map(|()| (open.conn.affected_rows(), Some(open.conn.last_insert_id()))),
            };
            match answer {
                Ok((affected_rows, last_insert_id)) => Ok(vetting::judge_allocation(
                    affected_rows,
                    last_insert_id,
                    key,
                    count,
                )),
                Err(mysql::Error::MySqlError(e)) => {
                    match vetting::allocation_refused(e.code, key, count) {
                        Some(refused) => Ok(Err(refused)),
                        None => Err(mysql::Error::MySqlError(e)),
                    }
                }
                Err(e) => Err(e),
            }
        })
    }

    /// The series as stored (a causal read on a Galera node).
    pub fn current(&mut self, scope: &ScopeKey) -> Result<SeriesState> {
        let key = scope.as_str();
        self.run("current", |open, sql, _until| {
            let statement = prepared(&mut open.conn, &mut open.current, &sql.current)?;
            let row: Option<(u64, Option<u64>)> = open.conn.exec_first(statement, (key,))?;
            Ok(series::state_of_row(key, row))
        })
    }

    /// The retry loop under one deadline.
    fn run<T>(&mut self, operation: &'static str, mut attempt: impl Attempt<T>) -> Result<T> {
        let deadline = self.config.deadline;
        let until = Instant::now() + deadline;
        let timeout = || Error::Timeout {
            operation,
            after: deadline,
        };
        let mut tries = 0u32;
        loop {
            tries += 1;
            let failure = match self.try_once(until, &mut attempt) {
                Ok(answer) => return answer,
                Err(f) => f,
            };
            if failure.connection_broken {
                self.open = None;
            }
            if failure.timed_out || Instant::now() >= until {
                self.open = None;
                self.stats.timeouts += 1;
                return Err(timeout());
            }
            let error = failure.error;
            if !error.is_retryable() || !self.config.retry.allows_another(tries) {
                return Err(error);
            }
            let pause = self.config.retry.backoff(tries, fastrand::f64());
            if Instant::now() + pause >= until {
                self.stats.timeouts += 1;
                return Err(timeout());
            }
            self.stats.retries += 1;
            log::debug!("{operation}: try {tries} failed ({error}); retrying in {pause:?}");
            std::thread::sleep(pause);
        }
    }

    /// One try on a vetted connection, its socket waits bounded by the time
    /// left.
    fn try_once<T>(
        &mut self,
        until: Instant,
        attempt: &mut impl Attempt<T>,
    ) -> std::result::Result<Result<T>, Failure> {
        self.connection(until).map_err(|error| Failure {
            timed_out: false,
            connection_broken: true,
            error,
        })?;
        let left = until.saturating_duration_since(Instant::now());
        let open = self.open.as_mut().expect("connected above");
        if open.io_timeout > left || open.io_timeout + TIMEOUT_SLACK < left {
            set_io_timeout(&open.conn, left).map_err(|e| classify(e.into()))?;
            open.io_timeout = left;
        }
        attempt(open, &self.sql, until).map_err(classify)
    }

    /// Makes sure a vetted connection is open, as the async store does: the
    /// first node that accepts; fail-back to earlier nodes after a while.
    fn connection(&mut self, until: Instant) -> Result<()> {
        let left = || until.saturating_duration_since(Instant::now());
        if self.open.is_some() {
            let Some((earlier, probe)) = self.writer.fail_back_probe(&self.config, left()) else {
                return Ok(());
            };
            for node in earlier {
                if let Ok(open) = self.connect_node(node, probe) {
                    self.open = Some(open);
                    self.writer.connected(node);
                    return Ok(());
                }
            }
            self.writer.stayed();
            return Ok(());
        }
        let mut last = None;
        for node in 0..self.nodes.len() {
            let timeout = self.config.connect_timeout.min(left());
            if timeout.is_zero() {
                break;
            }
            match self.connect_node(node, timeout) {
                Ok(open) => {
                    self.open = Some(open);
                    self.writer.connected(node);
                    return Ok(());
                }
                Err(e) if vetting::ends_node_search(&e) => return Err(e),
                Err(e) => {
                    self.writer.skipped(node, &e);
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::Unavailable {
            reason: "cannot connect: no time left before the deadline".into(),
            may_have_run: false,
        }))
    }

    fn connect_node(&mut self, node: usize, timeout: Duration) -> Result<Open> {
        let opts = OptsBuilder::from_opts(self.nodes[node].clone())
            .tcp_connect_timeout(Some(timeout))
            .read_timeout(Some(timeout))
            .write_timeout(Some(timeout));
        let mut conn = Conn::new(opts).map_err(|e| {
            let failure = classify(e);
            if failure.timed_out {
                Error::Unavailable {
                    reason: format!("connect did not finish within {} ms", timeout.as_millis()),
                    may_have_run: false,
                }
            } else {
                vetting::connect_failure(failure.error)
            }
        })?;
        self.stats.connects += 1;
        let vetted = |e: mysql::Error| vetting::before_any_statement(classify(e).error);
        let vars: Vec<(String, String)> = conn.query(vetting::SERVER_CHECK_SQL).map_err(vetted)?;
        let check = vetting::judge_server(&vars, self.config.durability)?;
        let mut cluster = None;
        if check.galera {
            let rows: Vec<(String, String)> =
                conn.query(vetting::GALERA_READY_SQL).map_err(vetted)?;
            cluster = vetting::judge_ready(node, &rows)?;
            conn.query_drop(vetting::GALERA_CAUSAL_READS_SQL)
                .map_err(vetted)?;
        }
        let policy = self.config.node_list;
        let identity = vetting::judge_writer(node, self.nodes.len(), &check, cluster, policy)?;
        self.writer.admit(node, identity, policy)?;
        conn.query_drop(vetting::session_sql(self.config.deadline))
            .map_err(vetted)?;
        self.durability = Some(check.durability);
        let plain = {
            let opts = &self.nodes[node];
            opts.get_ssl_opts().is_none() && opts.get_compress().is_none()
        };
        Ok(Open {
            conn,
            allocate: None,
            current: None,
            io_timeout: timeout,
            exchange: plain.then(Exchange::new),
        })
    }
}
