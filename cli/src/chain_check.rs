//! `counterfoil verify`'s check 5: the tamper-evident chain of every series
//! (`counterfoil_core::chain`), and the heads an accountant keeps.
//!
//! Invariants:
//! - every series' chain is walked from its first entry in keyset chunks
//!   of [`CHUNK`] entries (bounded memory at any length): positions run
//!   1, 2, 3 …, each entry links to the one before and its content gives
//!   its hash; the first that does not hold is named, with its number;
//! - the chain's last entry is the head kept on the series' row;
//! - the chain and the registry tell one story: every chained number is in
//!   the registry, every registry number from the series' first chained
//!   number on is chained, a number is void in the registry exactly when
//!   the chain voided it, and a payment's gateway, transaction, amount and
//!   currency are what the chain recorded (numbers below a series' first
//!   chained number predate the chain and are counted, not judged);
//! - `--against FILE` (heads printed earlier by `--heads`): each kept head
//!   is still in its chain at its position with its hash, so nothing was
//!   cut off or rewritten since.

use anyhow::{Context, Result};
use counterfoil_core::chain::{Entry, Walk};
use serde_json::{json, Value};

use crate::verify_cmd::Source;

/// Chain entries read per query.
pub(crate) const CHUNK: usize = 10_000;
/// Findings of one kind listed at most.
const LIMIT: usize = 1_000;

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

/// An entry as stored: its position, the entry, its previous hash and hash.
type Stored = (u64, Entry, String, String);

/// What check 5 found: findings, and each series' head as walked.
#[derive(Default)]
pub struct ChainReport {
    pub findings: Vec<String>,
    pub heads: Vec<Head>,
    /// Entries walked in all.
    pub entries: u64,
}

/// The names the check reads.
pub struct ChainTables<'a> {
    pub sequences: &'a str,
    pub numbers: &'a str,
    pub payments: &'a str,
    pub chain: &'a str,
}

/// Walks every chain and compares it with the registry.
pub async fn check(src: &mut Source, t: &ChainTables<'_>) -> Result<ChainReport> {
    let mut report = ChainReport::default();
    if !src.has_table(t.chain).await? {
        return Ok(report);
    }
    for (scope, seq, head) in src.chain_heads(t.sequences).await? {
        walk(src, t, &scope, seq, head.as_deref(), &mut report).await?;
    }
    for finding in src.chain_against_registry(t).await? {
        if report.findings.len() < LIMIT * 4 {
            report.findings.push(finding);
        }
    }
    Ok(report)
}

/// Walks one series' chain (see the module's invariants).
async fn walk(
    src: &mut Source,
    t: &ChainTables<'_>,
    scope: &str,
    row_seq: u64,
    row_head: Option<&str>,
    report: &mut ChainReport,
) -> Result<()> {
    let mut walk = Walk::new();
    let mut last: Option<(u64, u64)> = None;
    let mut after = 0u64;
    loop {
        let rows = src.chain_entries(t.chain, scope, after).await?;
        for (seq, entry, prev, hash) in &rows {
            report.entries += 1;
            let expected = last.map_or(1, |(s, _)| s + 1);
            if *seq != expected {
                report.findings.push(format!(
                    "series {scope}: the chain jumps from position {} to {seq} (number {}): entries were removed",
                    expected - 1,
                    entry.number
                ));
                return Ok(());
            }
            if let Err(broken) = walk.step(entry, prev, hash) {
                let what = match broken.why {
                    "link" => {
                        "does not link to the entry before it (an entry was removed or inserted)"
                    }
                    _ => "no longer gives its hash (it was edited)",
                };
                report.findings.push(format!(
                    "series {scope}: the chain breaks at number {} (position {seq}): the entry {what}",
                    broken.number
                ));
                return Ok(());
            }
            last = Some((*seq, entry.number));
        }
        match rows.last() {
            Some((seq, ..)) if rows.len() == CHUNK => after = *seq,
            _ => break,
        }
    }
    let (seq, number) = last.unwrap_or((0, 0));
    if seq != row_seq || (seq > 0 && Some(walk.head()) != row_head) {
        report.findings.push(format!(
            "series {scope}: the chain ends at position {seq} but the series' row says {row_seq}: entries were removed or added behind the books' back"
        ));
    }
    if seq > 0 {
        report.heads.push(Head {
            scope: scope.to_owned(),
            seq,
            number,
            hash: walk.head().to_owned(),
        });
    }
    Ok(())
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

/// A stored row as an entry.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stored(
    scope: &str,
    seq: u64,
    number: u64,
    event: String,
    texts: [Option<String>; 5],
    post_id: Option<u64>,
    at: String,
    prev: String,
    hash: String,
) -> Stored {
    let [gateway, transaction_id, amount, currency, reason] = texts;
    (
        seq,
        Entry {
            scope_key: scope.to_owned(),
            number,
            event,
            gateway,
            transaction_id,
            amount,
            currency,
            post_id,
            reason,
            at,
        },
        prev,
        hash,
    )
}
