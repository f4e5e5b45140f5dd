//! An independent walk of a MySQL/MariaDB site's chains (the core's
//! `chain::Walk`, fed straight from SQL, no CLI): what the concurrency suites
//! use to prove that overlapping writers left every chain whole.
//!
//! Invariant it proves: per series, positions run 1..=n without a hole,
//! each entry links to the one before and gives its hash, the series' row
//! holds the last hash, and no number is issued twice in a chain.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Result};
use counterfoil_core::chain::{Entry, Walk};

use crate::MariaDb;

/// What the walk saw: entries per series and the issued numbers.
#[derive(Debug, Default)]
pub struct Chains {
    pub entries: BTreeMap<String, u64>,
    pub issued: BTreeMap<String, BTreeSet<u64>>,
}

/// Walks every chain of the site at `url` (table prefix `wp_`).
pub fn walk_all(url: &str) -> Result<Chains> {
    let heads = MariaDb::query(
        url,
        "SELECT scope_key, chain_seq, COALESCE(chain_head, '') FROM wp_invoice_sequences ORDER BY scope_key",
    )?;
    let mut out = Chains::default();
    for head in heads {
        let text = |i: usize| head[i].clone().unwrap_or_default();
        let (scope, row_seq, row_hash) = (text(0), text(1).parse::<u64>()?, text(2));
        let rows = MariaDb::query(
            url,
            &format!(
                "SELECT seq, number, event, gateway, transaction_id, amount, currency, post_id, reason, \
                 DATE_FORMAT(event_at, '%Y-%m-%d %H:%i:%s'), prev_hash, hash FROM wp_counterfoil_chain \
                 WHERE scope_key = '{}' ORDER BY seq",
                scope.replace('\'', "''")
            ),
        )?;
        let mut walk = Walk::new();
        let mut issued = BTreeSet::new();
        for (i, r) in rows.iter().enumerate() {
            let f = |k: usize| r[k].clone();
            let seq: u64 = f(0).unwrap_or_default().parse()?;
            if seq != i as u64 + 1 {
                bail!("series {scope}: position {seq} where {} was due", i + 1);
            }
            let entry = Entry {
                scope_key: scope.clone(),
                number: f(1).unwrap_or_default().parse()?,
                event: f(2).unwrap_or_default(),
                gateway: f(3),
                transaction_id: f(4),
                amount: f(5),
                currency: f(6),
                post_id: f(7).map(|p| p.parse()).transpose()?,
                reason: f(8),
                at: f(9).unwrap_or_default(),
            };
            if let Err(b) = walk.step(
                &entry,
                &f(10).unwrap_or_default(),
                &f(11).unwrap_or_default(),
            ) {
                bail!(
                    "series {scope}: the chain breaks at number {} ({})",
                    b.number,
                    b.why
                );
            }
            if entry.event == "issued" && !issued.insert(entry.number) {
                bail!(
                    "series {scope}: number {} issued twice in the chain",
                    entry.number
                );
            }
        }
        if walk.len() as u64 != row_seq || (row_seq > 0 && walk.head() != row_hash) {
            bail!(
                "series {scope}: the row's head ({row_seq}) is not the chain's end ({})",
                walk.len()
            );
        }
        out.entries.insert(scope.clone(), walk.len() as u64);
        out.issued.insert(scope, issued);
    }
    Ok(out)
}
