//! A history recorder and a checker in the style of Jepsen's unique-ids.
//!
//! Every call is recorded as invoked, then completed `ok` (with the numbers
//! it got), `fail` (it certainly did not happen: refused before it ran, or
//! rolled back) or `unknown` (the connection was lost or the deadline hit
//! after the statement may have run). The checker proves:
//! - no number was acknowledged twice (ever);
//! - for autocommit allocation, every number missing between the start and
//!   the counter after recovery is explained by an unknown call (gaps ≤
//!   unknowns), given one try per call;
//! - after recovery the counter is at or above the highest acknowledged
//!   number (nothing acknowledged was lost).

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
    /// or `op W INVOKED COMPLETED fail|unknown LABEL MESSAGE…`.
    pub fn to_line(&self) -> String {
        let head = format!("op {} {} {}", self.worker, self.invoked, self.completed);
        match &self.completion {
            Completion::Ok(a, b) => format!("{head} ok {a} {b} {}", self.label),
            Completion::Fail(m) => format!("{head} fail {} {}", self.label, m.replace('\n', " ")),
            Completion::Unknown(m) => {
                format!("{head} unknown {} {}", self.label, m.replace('\n', " "))
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
            "fail" | "unknown" => {
                let (label, msg) = rest.split_once(' ').unwrap_or((rest, ""));
                let m = msg.to_owned();
                let c = if kind == "fail" {
                    Completion::Fail(m)
                } else {
                    Completion::Unknown(m)
                };
                (c, label.to_owned())
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

/// Classifies a failed call by the core's own judgement
/// ([`Error::outcome_unknown`]): `fail` when it certainly did not happen.
pub fn classify(e: &Error) -> Completion {
    if e.outcome_unknown() {
        Completion::Unknown(e.to_string())
    } else {
        Completion::Fail(e.to_string())
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
            Err(e) => classify(&e),
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
}
