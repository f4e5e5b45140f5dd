//! `counterfoil verify`'s check 5: the tamper-evident chain of every series
//! (`counterfoil_core::chain`), and the heads an accountant keeps.
//!
//! Invariants:
//! - every series' chain is walked from its first entry, in one keyset scan
//!   of the chain in chunks of [`CHUNK`] entries (bounded memory at any
//!   length, a hundred queries a million entries): positions run
//!   1, 2, 3 …, each entry links to the one before and its content gives
//!   its hash; the first that does not hold is named, with its number;
//! - the chain's last entry is the head kept on the series' row, and the
//!   row's `chain_from` is the first number the chain issued;
//! - the chain and the registry tell one story: every chained number is in
//!   the registry, every registry number from the series' first chained
//!   number on is chained, a number is void in the registry exactly when
//!   the chain voided it, and a payment's gateway, transaction, amount and
//!   currency are what the chain recorded (numbers below a series' first
//!   chained number predate the chain and are not judged);
//! - `--against FILE` (heads printed earlier by `--heads`): each kept head
//!   is still in its chain at its position with its hash, so nothing was
//!   cut off or rewritten since.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use counterfoil_core::chain::{Entry, Walk};
use serde_json::{json, Value};

use crate::chain_facts::{ChainTables, SeriesHead, CHUNK};
use crate::chain_merge::Merge;
use crate::verify_source::Source;

/// A series' head: where its chain ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub scope: String,
    pub seq: u64,
    pub number: u64,
    pub hash: String,
}

impl Head {
    /// One line of `--heads`.
    pub fn to_json(&self) -> Value {
        json!({"scope_key": self.scope, "seq": self.seq, "number": self.number, "hash": self.hash})
    }
}

/// What check 5 found: findings, and each series' head as walked.
#[derive(Default)]
pub struct ChainReport {
    pub findings: Vec<String>,
    pub heads: Vec<Head>,
    /// Entries walked in all.
    pub entries: u64,
}

/// Walks every chain and compares it with the registry.
pub async fn check(src: &mut Source, t: &ChainTables<'_>) -> Result<ChainReport> {
    let mut report = ChainReport::default();
    if !src.has_table(t.chain).await? {
        return Ok(report);
    }
    let mut rows_of: BTreeMap<String, SeriesHead> = src
        .chain_heads(t.sequences)
        .await?
        .into_iter()
        .map(|(scope, seq, head, from)| (scope, (seq, head, from)))
        .collect();
    // One keyset scan over the chain's primary key (scope, position), so a
    // million entries take a hundred queries however many series hold them.
    let mut current: Option<SeriesWalk> = None;
    let mut after = (String::new(), 0u64);
    let heads = rows_of.clone();
    let mut merge = Merge::new(&heads);
    loop {
        let rows = src.chain_entries_after(t.chain, &after.0, after.1).await?;
        for (seq, entry, hash) in &rows {
            report.entries += 1;
            if current.as_ref().map(|w| &w.scope) != Some(&entry.scope_key) {
                if let Some(done) = current.take() {
                    let row = rows_of.remove(&done.scope);
                    done.finish(row, &mut report);
                }
                current = Some(SeriesWalk::new(&entry.scope_key));
            }
            if let Some(w) = current.as_mut() {
                if w.step(*seq, entry, hash, &mut report) {
                    merge.entry(src, t, entry).await?;
                } else {
                    merge.broken(&w.scope);
                }
            }
        }
        match rows.last() {
            Some((seq, entry, _)) if rows.len() == CHUNK => {
                after = (entry.scope_key.clone(), *seq);
            }
            _ => break,
        }
    }
    if let Some(done) = current.take() {
        let row = rows_of.remove(&done.scope);
        done.finish(row, &mut report);
    }
    for (scope, (seq, ..)) in rows_of {
        if seq > 0 {
            report.findings.push(format!(
                "series {scope}: its row says its chain has {seq} entries, but it has none: the chain was deleted"
            ));
        }
    }
    merge.finish(src, t).await?;
    report.findings.append(&mut merge.findings);
    report.findings.extend(src.unchained_voids(t).await?);
    Ok(report)
}

/// One series' walk (see the module's invariants).
struct SeriesWalk {
    scope: String,
    walk: Walk,
    /// The last entry's position and number.
    last: (u64, u64),
    /// The first and the last number the chain issued.
    first_issued: Option<u64>,
    last_issued: Option<u64>,
    broken: bool,
}

impl SeriesWalk {
    fn new(scope: &str) -> Self {
        Self {
            scope: scope.to_owned(),
            walk: Walk::new(),
            last: (0, 0),
            first_issued: None,
            last_issued: None,
            broken: false,
        }
    }

    /// Walks one entry: whether it holds (and is in order), so the merge
    /// may take it.
    fn step(&mut self, seq: u64, entry: &Entry, hash: &str, report: &mut ChainReport) -> bool {
        if self.broken {
            return false;
        }
        let scope = &self.scope;
        if seq != self.last.0 + 1 {
            report.findings.push(format!(
                "series {scope}: the chain jumps from position {} to {seq} (number {}): entries were removed",
                self.last.0, entry.number
            ));
            self.broken = true;
            return false;
        }
        let prev = self.walk.head().to_owned();
        if let Err(broken) = self.walk.step(entry, &prev, hash) {
            let what = "no longer gives its hash (it, or an entry before it, was edited)";
            report.findings.push(format!(
                "series {scope}: the chain breaks at number {} (position {seq}): the entry {what}",
                broken.number
            ));
            self.broken = true;
            return false;
        }
        if entry.event == "issued" {
            if self.last_issued.is_some_and(|n| entry.number <= n) {
                report.findings.push(format!(
                    "series {scope}: the chain issues number {} after number {} (position {seq}): numbers out of order",
                    entry.number,
                    self.last_issued.unwrap_or_default()
                ));
                self.broken = true;
                return false;
            }
            self.first_issued = self.first_issued.or(Some(entry.number));
            self.last_issued = Some(entry.number);
        }
        self.last = (seq, entry.number);
        true
    }

    /// The walk's end against the series' row.
    fn finish(self, row: Option<SeriesHead>, report: &mut ChainReport) {
        let scope = &self.scope;
        if self.broken {
            return;
        }
        let Some((row_seq, row_head, row_from)) = row else {
            report.findings.push(format!(
                "series {scope}: it has a chain of {} entries but no series row: the series was deleted",
                self.last.0
            ));
            return;
        };
        let (seq, number) = self.last;
        if seq != row_seq || Some(self.walk.head()) != row_head.as_deref() {
            report.findings.push(format!(
                "series {scope}: the chain ends at position {seq} but the series' row says {row_seq}: entries were removed or added behind the books' back"
            ));
        }
        if row_from != self.first_issued {
            report.findings.push(format!(
                "series {scope}: the row says the chain begins at number {}, the chain at {}: numbers would be passed off as older than the chain",
                row_from.map_or("-".into(), |n| n.to_string()),
                self.first_issued.map_or("-".into(), |n| n.to_string())
            ));
        }
        report.heads.push(Head {
            scope: scope.clone(),
            seq,
            number,
            hash: self.walk.head().to_owned(),
        });
    }
}

/// The heads kept in `path` (lines of `--heads`).
pub fn read_heads(path: &std::path::Path) -> Result<Vec<Head>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the heads file {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line)
                .with_context(|| format!("{}: not a heads line: {line}", path.display()))?;
            let field = |k: &str| v.get(k).cloned().unwrap_or(Value::Null);
            Ok(Head {
                scope: field("scope_key").as_str().unwrap_or_default().to_owned(),
                seq: field("seq").as_u64().unwrap_or(0),
                number: field("number").as_u64().unwrap_or(0),
                hash: field("hash").as_str().unwrap_or_default().to_owned(),
            })
        })
        .collect()
}

/// The findings of kept heads no longer in their chains.
pub async fn against(src: &mut Source, t: &ChainTables<'_>, kept: &[Head]) -> Result<Vec<String>> {
    let mut findings = Vec::new();
    for head in kept {
        let now = src.chain_hash_at(t.chain, &head.scope, head.seq).await?;
        if now.as_deref() != Some(head.hash.as_str()) {
            let what = match now {
                None => "is gone: the chain was cut off",
                Some(_) => "holds another hash: the chain was rewritten",
            };
            findings.push(format!(
                "series {}: the head kept at position {} (number {}, hash {}…) {what} since",
                head.scope,
                head.seq,
                head.number,
                &head.hash[..head.hash.len().min(12)]
            ));
        }
    }
    Ok(findings)
}
