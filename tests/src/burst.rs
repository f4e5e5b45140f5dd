//! A burst of signed payment callbacks, and the checks of a site afterwards.
//! Used by the plugin's HTTP suite and by `./scripts/demo`.
//!
//! Invariants checked by [`check_site`]: exactly one invoice post per
//! transaction; no number twice in a series; for every series the registry
//! holds each number start..current exactly once, all issued.

use std::collections::BTreeMap;
use std::sync::{Barrier, Mutex};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::mariadb::MariaDb;
use crate::webhook::deliver;

/// One transaction of a burst: its id, the user whose series it numbers, and
/// how many times it is delivered (at the same moment).
#[derive(Clone, Debug)]
pub struct Planned {
    /// Transaction id.
    pub transaction_id: String,
    /// User id (series `{user}:{year}`).
    pub user_id: u64,
    /// Deliveries, sent together.
    pub copies: usize,
}

/// One answer.
#[derive(Clone, Debug)]
pub struct Answer {
    /// Transaction id.
    pub transaction_id: String,
    /// HTTP status.
    pub status: u16,
    /// JSON body.
    pub body: Value,
}

/// `total` transactions over `users`; the first `thrice` are delivered three
/// times and the next `twice` twice; shuffled.
pub fn plan(total: usize, thrice: usize, twice: usize, users: &[u64]) -> Vec<Planned> {
    let mut out: Vec<Planned> = (0..total)
        .map(|i| Planned {
            transaction_id: format!("txn-{i:04}"),
            user_id: users[i % users.len()],
            copies: if i < thrice {
                3
            } else if i < thrice + twice {
                2
            } else {
                1
            },
        })
        .collect();
    fastrand::shuffle(&mut out);
    out
}

/// Sends the plan from `clients` concurrent clients; the copies of one
/// transaction leave together (a barrier per transaction).
pub fn send(
    port: u16,
    secret: &str,
    year: u32,
    plan: &[Planned],
    clients: usize,
) -> Result<Vec<Answer>> {
    let queue = Mutex::new(plan.to_vec());
    let answers: Mutex<Vec<Answer>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..clients {
            s.spawn(|| loop {
                let Some(p) = queue.lock().unwrap().pop() else {
                    break;
                };
                let body = serde_json::to_vec(&json!({
                    "gateway": "stripe", "transaction_id": p.transaction_id, "user_id": p.user_id,
                    "year": year, "amount": "19.99", "currency": "EUR"
                }))
                .expect("json");
                let barrier = Barrier::new(p.copies);
                std::thread::scope(|d| {
                    for _ in 0..p.copies {
                        d.spawn(|| {
                            barrier.wait();
                            match deliver(port, secret, &body, 0) {
                                Ok(r) => match serde_json::from_str(&r.body) {
                                    Ok(v) => answers.lock().unwrap().push(Answer {
                                        transaction_id: p.transaction_id.clone(),
                                        status: r.status,
                                        body: v,
                                    }),
                                    Err(_) => {
                                        *failure.lock().unwrap() =
                                            Some(format!("{} {}", r.status, r.body))
                                    }
                                },
                                Err(e) => *failure.lock().unwrap() = Some(e.to_string()),
                            }
                        });
                    }
                });
            });
        }
    });
    if let Some(f) = failure.into_inner().unwrap() {
        bail!("a delivery failed: {f}");
    }
    Ok(answers.into_inner().unwrap())
}

/// What all deliveries of one transaction were answered.
#[derive(Clone, Debug)]
pub struct Invoiced {
    /// The rendered number.
    pub number: String,
    /// The invoice post.
    pub invoice_id: u64,
    /// The HTTP status of each delivery.
    pub statuses: Vec<u16>,
}

/// Per transaction, its invoice; fails unless every delivery got the same
/// invoice and exactly one delivery created it.
pub fn by_transaction(answers: &[Answer]) -> Result<BTreeMap<String, Invoiced>> {
    let mut out: BTreeMap<String, Invoiced> = BTreeMap::new();
    for a in answers {
        let number = a.body["number"]
            .as_str()
            .with_context(|| format!("{}: {}", a.status, a.body))?;
        let invoice = a.body["invoice_id"].as_u64().context("invoice_id")?;
        let e = out
            .entry(a.transaction_id.clone())
            .or_insert_with(|| Invoiced {
                number: number.to_owned(),
                invoice_id: invoice,
                statuses: Vec::new(),
            });
        if e.number != number || e.invoice_id != invoice {
            bail!(
                "{}: deliveries got {} (invoice {}) and {number} (invoice {invoice})",
                a.transaction_id,
                e.number,
                e.invoice_id
            );
        }
        e.statuses.push(a.status);
    }
    for (txn, Invoiced { statuses, .. }) in &out {
        let created = statuses.iter().filter(|s| **s == 201).count();
        let repeated = statuses.iter().filter(|s| **s == 200).count();
        if created != 1 || repeated != statuses.len() - 1 {
            bail!("{txn}: answers {statuses:?} (expected one 201, the rest 200)");
        }
    }
    Ok(out)
}

/// What [`check_site`] found.
#[derive(Debug, Default)]
pub struct SiteCheck {
    /// Invoice posts.
    pub invoices: u64,
    /// Transactions with more than one invoice post.
    pub transactions_with_several_invoices: u64,
    /// Numbers handed out twice in a series (in the registry or in titles).
    pub duplicate_numbers: u64,
    /// Per series: (scope, start, current, registry rows, issued rows).
    pub series: Vec<(String, u64, u64, u64, u64)>,
}

impl SiteCheck {
    /// Holes in the registry, summed over series.
    pub fn registry_holes(&self) -> u64 {
        self.series
            .iter()
            .map(|s| (s.2 + 1 - s.1).saturating_sub(s.3))
            .sum()
    }

    /// Reserved or void numbers, summed over series.
    pub fn not_issued(&self) -> u64 {
        self.series.iter().map(|s| s.3 - s.4).sum()
    }

    /// Every invariant holds.
    pub fn is_clean(&self) -> bool {
        self.transactions_with_several_invoices == 0
            && self.duplicate_numbers == 0
            && self.registry_holes() == 0
            && self.series.iter().all(|s| s.3 == s.2 + 1 - s.1)
    }
}

fn count(url: &str, sql: &str) -> Result<u64> {
    Ok(MariaDb::scalar(url, sql)?
        .unwrap_or_default()
        .parse()
        .unwrap_or(0))
}

/// Checks the invariants of a site's tables.
pub fn check_site(url: &str) -> Result<SiteCheck> {
    let mut c = SiteCheck {
        invoices: count(url, "SELECT COUNT(*) FROM wp_posts WHERE post_type = 'counterfoil_invoice'")?,
        transactions_with_several_invoices: count(
            url,
            "SELECT COUNT(*) FROM (SELECT m.meta_value FROM wp_posts p JOIN wp_postmeta m ON m.post_id = p.ID \
             AND m.meta_key = '_counterfoil_transaction_id' WHERE p.post_type = 'counterfoil_invoice' \
             GROUP BY m.meta_value HAVING COUNT(*) > 1) t",
        )?,
        duplicate_numbers: count(
            url,
            "SELECT COUNT(*) FROM (SELECT s.meta_value, n.meta_value AS num FROM wp_postmeta s \
             JOIN wp_postmeta n ON n.post_id = s.post_id AND n.meta_key = '_counterfoil_number' \
             WHERE s.meta_key = '_counterfoil_scope_key' GROUP BY s.meta_value, n.meta_value HAVING COUNT(*) > 1) t",
        )?,
        series: Vec::new(),
    };
    for row in MariaDb::query(
        url,
        "SELECT s.scope_key, COALESCE(s.start_value, 1), s.current_value, COUNT(n.id), COALESCE(SUM(n.status = 'issued'), 0) \
         FROM wp_invoice_sequences s LEFT JOIN wp_counterfoil_numbers n ON n.scope_key = s.scope_key \
         GROUP BY s.scope_key ORDER BY s.scope_key",
    )? {
        let num = |i: usize| -> u64 { row[i].as_deref().unwrap_or("0").parse().unwrap_or(0) };
        c.series.push((row[0].clone().unwrap_or_default(), num(1), num(2), num(3), num(4)));
    }
    Ok(c)
}
