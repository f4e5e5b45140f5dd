//! A history recorder and a checker in the style of Jepsen's unique-ids.
//!
//! Every call is recorded as invoked, then completed `ok` (with the numbers
//! it got) or `err` with what the worker observed: the error's text as the
//! driver and the server gave it. The workers judge nothing; the checker
//! classifies each error by its own rules ([`judge`]), not by the code under
//! test's opinion of it: `fail` (it certainly did not happen: refused at
//! connect, before anything was sent, or answered by the server with an
//! error that rolls the statement back) or `unknown` (anything else: a
//! deadline, a lost or killed connection, an answer it cannot read). The
//! checker proves:
//! - no number was acknowledged twice (ever);
//! - for autocommit allocation, every number missing between the start and
//!   the counter after recovery is explained by an unknown call (gaps ≤
//!   unknowns), given one try per call;
//! - where a registry exists ([`check_registry`]), every number missing is
//!   in it as void with a reason or as unconfirmed, never simply absent;
//! - after recovery the counter is at or above the highest acknowledged
//!   number (nothing acknowledged was lost).
//!
//! The harness reads the counters and the registry with the database's own
//! command-line client (`MariaDb::client_query`), not through the store.

use std::collections::BTreeMap;
use std::sync::Mutex;

use counterfoil_core::Error;

use crate::workers::now_ns;

/// How a call ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completion {
    /// It happened; these are the numbers it got (first..=last).
    Ok(u64, u64),
    /// It certainly did not happen.
    Fail(String),
    /// It may or may not have happened.
    Unknown(String),
}

/// One call.
#[derive(Clone, Debug)]
pub struct Op {
    /// Which worker.
    pub worker: usize,
    /// When it was invoked (ns since the epoch).
    pub invoked: u128,
    /// When it completed.
    pub completed: u128,
    /// How.
    pub completion: Completion,
    /// What the call was about (e.g. a transaction id; "-" for none).
    pub label: String,
}

impl Op {
    /// One line for a worker's output: `op W INVOKED COMPLETED ok FIRST LAST LABEL`
    /// or `op W INVOKED COMPLETED err LABEL OBSERVED…` (the error as observed;
    /// the reader judges it).
    pub fn to_line(&self) -> String {
        let head = format!("op {} {} {}", self.worker, self.invoked, self.completed);
        match &self.completion {
            Completion::Ok(a, b) => format!("{head} ok {a} {b} {}", self.label),
            Completion::Fail(m) | Completion::Unknown(m) => {
                format!("{head} err {} {}", self.label, m.replace('\n', " "))
            }
        }
    }

    /// Reads a line written by [`Op::to_line`]; other lines are `None`.
    pub fn parse_line(line: &str) -> Option<Op> {
        let mut it = line.splitn(6, ' ');
        if it.next()? != "op" {
            return None;
        }
        let worker = it.next()?.parse().ok()?;
        let invoked = it.next()?.parse().ok()?;
        let completed = it.next()?.parse().ok()?;
        let kind = it.next()?;
        let rest = it.next().unwrap_or("");
        let (completion, label) = match kind {
            "ok" => {
                let mut r = rest.splitn(3, ' ');
                let a = r.next()?.parse().ok()?;
                let b = r.next()?.parse().ok()?;
                (Completion::Ok(a, b), r.next().unwrap_or("-").to_owned())
            }
            "err" => {
                let (label, observed) = rest.split_once(' ').unwrap_or((rest, ""));
                (judge(observed), label.to_owned())
            }
            _ => return None,
        };
        Some(Op {
            worker,
            invoked,
            completed,
            completion,
            label,
        })
    }
}

/// Server errors that roll back the statement they answer (and the flows
/// end their transaction on them): MariaDB's lock wait timeout (1205),
/// deadlock or Galera certification failure (1213), a node not ready
/// (1047), a read-only server (1290, 1792); PostgreSQL's serialization
/// failure (40001), deadlock (40P01), lock not available (55P03), statement
/// cancelled (57014), read-only transaction (25006), not accepting
/// connections yet (57P03).
const ROLLED_BACK: &[&str] = &[
    "1205", "1213", "1047", "1290", "1792", "40001", "40P01", "55P03", "57014", "25006", "57P03",
];

/// What a refused connection looks like: nothing was sent. A TCP
/// connection refused (ECONNREFUSED, os error 111) or a missing unix socket
/// (ENOENT) can only happen while connecting; `cannot connect` is the PHP
/// backend's word for the same.
const REFUSED_AT_CONNECT: &[&str] = &[
    "Connection refused",
    "os error 111",
    "No such file or directory",
    "cannot connect",
];

/// The checker's own reading of an error a worker observed (its text as the
/// driver or server gave it): `Fail` when the error itself shows the call
/// cannot have taken effect — the server answered a statement with an error
/// in [`ROLLED_BACK`] (`error CODE` or `error SQLSTATE` in the text), or the
/// connection was refused ([`REFUSED_AT_CONNECT`]) — and `Unknown` for
/// everything else. It never asks the code under test what it thinks
/// (`Error::outcome_unknown`); when in doubt the call may have happened.
pub fn judge(observed: &str) -> Completion {
    let server_rolled_back = ROLLED_BACK.iter().any(|code| {
        observed.match_indices(code).any(|(at, _)| {
            observed[..at].ends_with("error ")
                && !observed[at + code.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        })
    });
    let refused = REFUSED_AT_CONNECT.iter().any(|s| observed.contains(s));
    if server_rolled_back || refused {
        Completion::Fail(observed.to_owned())
    } else {
        Completion::Unknown(observed.to_owned())
    }
}

/// A concurrent history.
#[derive(Default)]
pub struct History {
    ops: Mutex<Vec<Op>>,
}

impl History {
    /// Runs `call`, recording its invocation and completion.
    pub async fn record<F>(&self, worker: usize, call: F) -> Completion
    where
        F: std::future::Future<Output = Result<(u64, u64), Error>>,
    {
        self.record_labeled(worker, "-", call).await
    }

    /// As [`History::record`], with a label (a transaction id).
    pub async fn record_labeled<F>(&self, worker: usize, label: &str, call: F) -> Completion
    where
        F: std::future::Future<Output = Result<(u64, u64), Error>>,
    {
        let invoked = now_ns();
        let completion = match call.await {
            Ok((a, b)) => Completion::Ok(a, b),
            Err(e) => judge(&e.to_string()),
        };
        self.ops.lock().unwrap().push(Op {
            worker,
            invoked,
            completed: now_ns(),
            completion: completion.clone(),
            label: label.to_owned(),
        });
        completion
    }

    /// Every call so far.
    pub fn ops(&self) -> Vec<Op> {
        self.ops.lock().unwrap().clone()
    }

    /// The ops that worker processes printed ([`Op::to_line`]).
    pub fn from_outputs<'a>(outputs: impl IntoIterator<Item = &'a str>) -> Vec<Op> {
        outputs
            .into_iter()
            .flat_map(|o| o.lines().filter_map(Op::parse_line))
            .collect()
    }
}

/// What the checker found.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Calls: ok, fail, unknown.
    pub ok: usize,
    /// Calls that certainly did not happen.
    pub fail: usize,
    /// Calls whose outcome is unknown.
    pub unknown: usize,
    /// Numbers acknowledged more than once.
    pub duplicates: Vec<u64>,
    /// Numbers between start and the counter that no ok call got.
    pub gaps: u64,
    /// The highest acknowledged number.
    pub highest_acknowledged: u64,
    /// The counter after recovery.
    pub counter: u64,
}

impl Verdict {
    /// Duplicates none; counter ≥ highest acknowledged; gaps ≤ unknowns when
    /// `gaps_need_unknowns` (autocommit allocation, one try per call).
    pub fn holds(&self, gaps_need_unknowns: bool) -> bool {
        self.duplicates.is_empty()
            && self.counter >= self.highest_acknowledged
            && (!gaps_need_unknowns || self.gaps <= self.unknown as u64)
    }
}

/// Checks a history of allocations from a series that started at `start`
/// and whose counter is `counter` after recovery.
pub fn check(ops: &[Op], start: u64, counter: u64) -> Verdict {
    let mut v = Verdict {
        counter,
        ..Verdict::default()
    };
    let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
    for op in ops {
        match &op.completion {
            Completion::Ok(a, b) => {
                v.ok += 1;
                for n in *a..=*b {
                    *seen.entry(n).or_default() += 1;
                }
                v.highest_acknowledged = v.highest_acknowledged.max(*b);
            }
            Completion::Fail(_) => v.fail += 1,
            Completion::Unknown(_) => v.unknown += 1,
        }
    }
    v.duplicates = seen
        .iter()
        .filter(|(_, c)| **c > 1)
        .map(|(n, _)| *n)
        .collect();
    if counter >= start {
        let acknowledged = seen.range(start..=counter).count() as u64;
        v.gaps = (counter - start + 1) - acknowledged;
    }
    v
}

/// One row of a series' registry, as the database's own client read it.
#[derive(Clone, Debug)]
pub struct RegistryRow {
    /// The number.
    pub number: u64,
    /// `issued`, `reserved`, `void` or `unconfirmed`.
    pub status: String,
    /// Why it is void (empty when none).
    pub reason: String,
}

/// What [`check_registry`] found.
#[derive(Debug, Default)]
pub struct RegistryVerdict {
    /// Numbers between start and the counter with no registry row.
    pub missing: Vec<u64>,
    /// Numbers with more than one row.
    pub twice: Vec<u64>,
    /// Rows above the counter.
    pub beyond_counter: Vec<u64>,
    /// Acknowledged numbers whose row is neither `issued`, `reserved` (held
    /// by its payment until its invoice is made) nor `unconfirmed` (the
    /// mark that its answer arrived was itself lost: the books keep it as
    /// unconfirmed, never void).
    pub acknowledged_not_held: Vec<u64>,
    /// Numbers nobody was told whose row is neither void with a reason nor
    /// unconfirmed nor issued (void without a reason, reserved, …).
    pub unexplained: Vec<u64>,
    /// Numbers nobody was told whose row says `issued`: only a call whose
    /// outcome is unknown can leave one (its answer lost after the row was
    /// marked), so at most that many.
    pub issued_unacknowledged: u64,
    /// Unknown calls, the allowance for the above.
    pub unknown: usize,
}

impl RegistryVerdict {
    /// Every rule holds.
    pub fn holds(&self) -> bool {
        self.missing.is_empty()
            && self.twice.is_empty()
            && self.beyond_counter.is_empty()
            && self.acknowledged_not_held.is_empty()
            && self.unexplained.is_empty()
            && self.issued_unacknowledged <= self.unknown as u64
    }
}

/// Checks a series' registry against what its callers were told:
/// `acknowledged` (every number a call or a redelivery answered), `rows`
/// (the series' registry), `start..=counter` (the numbers the counter has
/// passed) and the history's `unknown` calls. Every number the counter
/// passed has exactly one row; a number somebody was told is `issued` (or
/// `reserved` by its payment, or still `unconfirmed` when marking it issued
/// failed after its answer arrived), never void; a
/// number nobody was told is void with a reason or unconfirmed (or, at most
/// once per unknown call, issued with its answer lost).
pub fn check_registry(
    acknowledged: &std::collections::BTreeSet<u64>,
    rows: &[RegistryRow],
    start: u64,
    counter: u64,
    unknown: usize,
) -> RegistryVerdict {
    let mut v = RegistryVerdict {
        unknown,
        ..RegistryVerdict::default()
    };
    let mut by_number: BTreeMap<u64, Vec<&RegistryRow>> = BTreeMap::new();
    for r in rows {
        by_number.entry(r.number).or_default().push(r);
    }
    for (n, rs) in &by_number {
        if rs.len() > 1 {
            v.twice.push(*n);
        }
        if *n > counter {
            v.beyond_counter.push(*n);
        }
    }
    for n in start..=counter {
        let Some(row) = by_number.get(&n).and_then(|rs| rs.first()) else {
            v.missing.push(n);
            continue;
        };
        let explained = match row.status.as_str() {
            "void" => !row.reason.trim().is_empty(),
            "unconfirmed" => true,
            _ => false,
        };
        if acknowledged.contains(&n) {
            if !matches!(row.status.as_str(), "issued" | "reserved" | "unconfirmed") {
                v.acknowledged_not_held.push(n);
            }
        } else if row.status == "issued" {
            v.issued_unacknowledged += 1;
        } else if !explained {
            v.unexplained.push(n);
        }
    }
    v
}

/// Causal reads: on a Galera node the read waits until the node has applied
/// every write the cluster committed before it (without it, a counter read
/// on one node can lag numbers already handed out through another); a
/// no-op on a server without Galera.
const CAUSAL: &str = "SET SESSION wsrep_sync_wait = 1; ";

/// A series' counter, read with the database's own client (`wp_` tables),
/// causally.
pub fn client_counter(url: &str, scope: &str) -> u64 {
    let rows = crate::MariaDb::client_query(
        url,
        &format!(
            "{CAUSAL}SELECT current_value FROM wp_invoice_sequences WHERE scope_key = '{scope}'"
        ),
    )
    .unwrap();
    rows[0][0].parse().unwrap()
}

/// A series' registry, read with the database's own client (`wp_` tables),
/// causally.
pub fn client_registry(url: &str, scope: &str) -> Vec<RegistryRow> {
    crate::MariaDb::client_query(
        url,
        &format!(
            "{CAUSAL}SELECT number, status, COALESCE(reason, '') FROM wp_counterfoil_numbers \
             WHERE scope_key = '{scope}' ORDER BY number"
        ),
    )
    .unwrap()
    .into_iter()
    .map(|r| RegistryRow {
        number: r[0].parse().unwrap(),
        status: r[1].clone(),
        reason: r.get(2).cloned().unwrap_or_default(),
    })
    .collect()
}

/// The numbers acknowledged by `ok` calls.
pub fn acknowledged(ops: &[Op]) -> std::collections::BTreeSet<u64> {
    ops.iter()
        .flat_map(|o| match o.completion {
            Completion::Ok(a, b) => a..=b,
            #[allow(clippy::reversed_empty_ranges)]
            _ => 1..=0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(c: Completion) -> Op {
        Op {
            worker: 0,
            invoked: 0,
            completed: 0,
            completion: c,
            label: "-".into(),
        }
    }

    #[test]
    fn lines_round_trip() {
        for c in [
            Completion::Ok(3, 5),
            Completion::Fail("error 1213 x".into()),
            Completion::Unknown("lost".into()),
        ] {
            let o = Op {
                worker: 2,
                invoked: 10,
                completed: 20,
                completion: c,
                label: "w1-7".into(),
            };
            let back = Op::parse_line(&o.to_line()).unwrap();
            assert_eq!(
                (back.worker, back.completion, back.label),
                (2, o.completion.clone(), "w1-7".to_string())
            );
        }
        assert!(Op::parse_line("start 12").is_none());
    }

    #[test]
    fn the_checker_can_fail() {
        let ok = |n| op(Completion::Ok(n, n));
        let clean = check(
            &[ok(1), ok(2), op(Completion::Unknown("x".into())), ok(4)],
            1,
            4,
        );
        assert!(clean.holds(true), "{clean:?}");
        assert_eq!((clean.gaps, clean.unknown), (1, 1));
        let dup = check(&[ok(1), ok(1)], 1, 1);
        assert!(!dup.holds(true));
        let lost = check(&[ok(1), ok(2)], 1, 1);
        assert!(!lost.holds(true), "counter below an acknowledged number");
        let unexplained = check(&[ok(1), ok(3)], 1, 3);
        assert!(!unexplained.holds(true), "a gap with no unknown call");
        assert!(unexplained.holds(false));
    }

    #[test]
    fn the_checker_judges_errors_by_its_own_rules() {
        let fail = |m: &str| matches!(judge(m), Completion::Fail(_));
        // Rolled back by the server, or refused before anything was sent.
        assert!(fail(
            "database error 1205 (HY000): Lock wait timeout exceeded"
        ));
        assert!(fail("database error 1213 (40001): Deadlock found"));
        assert!(fail("database error 40P01: deadlock detected"));
        assert!(fail(
            "database unavailable: Connection refused (os error 111)"
        ));
        assert!(fail(
            "Counterfoil\\DatabaseUnavailableException: cannot connect to 127.0.0.1:3307"
        ));
        // Anything else may have happened, whatever the code under test says.
        assert!(!fail(
            "allocate did not finish within 1200 ms; the outcome is unknown"
        ));
        assert!(!fail("database error 1927 (70100): Connection was killed"));
        assert!(!fail(
            "database unavailable: Connection reset by peer (os error 104)"
        ));
        assert!(!fail(
            "database error 12050 (HY000): not a code in the list"
        ));
        assert!(!fail(
            "number 1205 of series `x` is already in the registry"
        ));
        // A line carries the observation, and the reader judges it.
        let line = "op 1 10 20 err w1-3 database error 1213 (40001): Deadlock found";
        assert!(matches!(
            Op::parse_line(line).unwrap().completion,
            Completion::Fail(_)
        ));
        let line = "op 1 10 20 err - Connection reset by peer";
        assert!(matches!(
            Op::parse_line(line).unwrap().completion,
            Completion::Unknown(_)
        ));
    }

    #[test]
    fn the_registry_check_can_fail() {
        let row = |number, status: &str, reason: &str| RegistryRow {
            number,
            status: status.into(),
            reason: reason.into(),
        };
        let told: std::collections::BTreeSet<u64> = [1, 2, 4].into();
        let good = [
            row(1, "issued", ""),
            row(2, "issued", ""),
            row(3, "void", "outcome unknown: the call lost its answer"),
            row(4, "issued", ""),
            row(5, "unconfirmed", ""),
        ];
        assert!(check_registry(&told, &good, 1, 5, 0).holds());
        let absent = check_registry(&told, &good[..4], 1, 5, 0);
        assert_eq!(absent.missing, [5]);
        let mut no_reason = good.clone();
        no_reason[2].reason.clear();
        assert_eq!(check_registry(&told, &no_reason, 1, 5, 0).unexplained, [3]);
        let mut voided = good.clone();
        voided[1] = row(2, "void", "x");
        assert_eq!(
            check_registry(&told, &voided, 1, 5, 0).acknowledged_not_held,
            [2]
        );
        let mut silent = good.clone();
        silent[4] = row(5, "issued", "");
        assert!(!check_registry(&told, &silent, 1, 5, 0).holds());
        assert!(
            check_registry(&told, &silent, 1, 5, 1).holds(),
            "one unknown call allows it"
        );
        let mut doubled = good.to_vec();
        doubled.push(row(4, "issued", ""));
        assert_eq!(check_registry(&told, &doubled, 1, 5, 0).twice, [4]);
    }
}
