//! The chain held against the registry and the payments by a merge of
//! ordered streams (`chain_check`'s walk gives each series' issued entries
//! in number order; the registry and the payments are each read in
//! (series, number) order on their own index), so a million numbers cost
//! sequential scans and bounded memory, not a million lookups or a sort.
//!
//! Invariants:
//! - a chained number is in the registry, and its registry row and payment
//!   carry the gateway, transaction, amount and currency the chain recorded;
//! - a registry number of a chained series, from its `chain_from` on, that
//!   is not void was issued by the chain (a void one is judged by the void
//!   checks: a gap voided by the books has a void entry and no issue);
//! - a number the chain voided is void in the registry (checked in batches
//!   of [`VOID_BATCH`]).

use std::collections::{BTreeMap, VecDeque};

use anyhow::Result;
use counterfoil_core::chain::Entry;

use crate::chain_facts::{ChainTables, PaymentRow, RegistryRow, SeriesHead, CHUNK};
use crate::verify_source::Source;

/// Voided numbers checked against the registry per query.
pub(crate) const VOID_BATCH: usize = 1_000;
/// Findings of the merge listed at most.
const LIMIT: usize = 4_000;

/// An ordered stream read in keyset chunks.
struct Cursor<R> {
    rows: VecDeque<R>,
    after: (String, u64),
    exhausted: bool,
}

impl<R> Cursor<R> {
    fn new() -> Self {
        Self {
            rows: VecDeque::new(),
            after: (String::new(), 0),
            exhausted: false,
        }
    }
}

/// What the merge needs of a row: its (series, number).
trait Keyed {
    fn key(&self) -> (&str, u64);
}

impl Keyed for RegistryRow {
    fn key(&self) -> (&str, u64) {
        (&self.0, self.1)
    }
}

impl Keyed for PaymentRow {
    fn key(&self) -> (&str, u64) {
        (&self.0, self.1)
    }
}

/// The merge's state across chunks.
pub(crate) struct Merge<'h> {
    heads: &'h BTreeMap<String, SeriesHead>,
    registry: Cursor<RegistryRow>,
    payments: Cursor<PaymentRow>,
    voids: Vec<(String, u64)>,
    /// Series whose walk broke: their registry rows are not judged here.
    broken: std::collections::BTreeSet<String>,
    pub(crate) findings: Vec<String>,
}

impl<'h> Merge<'h> {
    pub(crate) fn new(heads: &'h BTreeMap<String, SeriesHead>) -> Self {
        Self {
            heads,
            registry: Cursor::new(),
            payments: Cursor::new(),
            voids: Vec::new(),
            broken: std::collections::BTreeSet::new(),
            findings: Vec::new(),
        }
    }

    fn note(&mut self, finding: String) {
        if self.findings.len() < LIMIT {
            self.findings.push(finding);
        }
    }

    /// The next registry row, reading a chunk when the buffer is empty.
    async fn peek(
        &mut self,
        src: &mut Source,
        t: &ChainTables<'_>,
    ) -> Result<Option<&RegistryRow>> {
        let c = &mut self.registry;
        if c.rows.is_empty() && !c.exhausted {
            let chunk = src.registry_after(t, &c.after.0, c.after.1).await?;
            refill(c, chunk);
        }
        Ok(self.registry.rows.front())
    }

    /// The payment numbered (`scope`, `number`), passing over the payments
    /// before it (the chain has nothing to say of them).
    async fn payment(
        &mut self,
        src: &mut Source,
        t: &ChainTables<'_>,
        key: (&str, u64),
    ) -> Result<Option<PaymentRow>> {
        loop {
            let c = &mut self.payments;
            if c.rows.is_empty() {
                if c.exhausted {
                    return Ok(None);
                }
                let chunk = src.payments_after(t, &c.after.0, c.after.1).await?;
                refill(c, chunk);
                continue;
            }
            let front = c.rows.front().expect("not empty");
            match front.key().cmp(&key) {
                std::cmp::Ordering::Less => {
                    c.rows.pop_front();
                }
                std::cmp::Ordering::Equal => return Ok(c.rows.pop_front()),
                std::cmp::Ordering::Greater => return Ok(None),
            }
        }
    }

    /// A series whose walk broke (already a finding).
    pub(crate) fn broken(&mut self, scope: &str) {
        self.broken.insert(scope.to_owned());
    }

    fn unissued(&mut self, row: &RegistryRow) {
        let (scope, number, status, ..) = row;
        if self.broken.contains(scope) {
            return;
        }
        let chained_from = self.heads.get(scope).and_then(|h| h.2);
        if chained_from.is_some_and(|from| *number >= from) && status != "void" {
            self.note(format!(
                "series {scope}: number {number} is in the registry but the chain never issued it: it was written behind the books' back"
            ));
        }
    }

    /// One entry of the walk, in order.
    pub(crate) async fn entry(
        &mut self,
        src: &mut Source,
        t: &ChainTables<'_>,
        entry: &Entry,
    ) -> Result<()> {
        let key = (entry.scope_key.as_str(), entry.number);
        if entry.event == "void" {
            self.voids.push((entry.scope_key.clone(), entry.number));
            if self.voids.len() >= VOID_BATCH {
                self.flush_voids(src, t).await?;
            }
            return Ok(());
        }
        loop {
            let Some(row) = self.peek(src, t).await? else {
                break;
            };
            if row.key() >= key {
                break;
            }
            let row = self.registry.rows.pop_front().expect("peeked");
            self.unissued(&row);
        }
        let here = matches!(self.peek(src, t).await?, Some(r) if r.key() == key);
        if !here {
            self.note(format!(
                "series {}: number {} is in the chain but not in the registry: its row was deleted",
                entry.scope_key, entry.number
            ));
            return Ok(());
        }
        let (scope, number, _, registry) = self.registry.rows.pop_front().expect("peeked");
        if entry.gateway.is_some() {
            let payment = self.payment(src, t, key).await?.map(|p| p.2);
            let chain_ref = [entry.gateway.clone(), entry.transaction_id.clone()];
            if registry != chain_ref {
                self.note(format!(
                    "series {scope}: number {number} has a registry row whose payment differs from what the chain recorded: the row was edited"
                ));
            }
            let chain_facts = [
                entry.gateway.clone(),
                entry.transaction_id.clone(),
                entry.amount.clone(),
                entry.currency.clone(),
            ];
            match payment {
                Some(facts) if facts == chain_facts => {}
                Some(_) => self.note(format!(
                    "series {scope}: number {number} belongs to a payment whose gateway, transaction, amount or currency differ from what the chain recorded: the payment was edited"
                )),
                None => self.note(format!(
                    "series {scope}: number {number} was issued to a payment the payments table no longer holds: its row was deleted"
                )),
            }
        }
        Ok(())
    }

    /// After the walk: the registry rows left, and the voids not yet checked.
    pub(crate) async fn finish(&mut self, src: &mut Source, t: &ChainTables<'_>) -> Result<()> {
        while self.peek(src, t).await?.is_some() {
            let row = self.registry.rows.pop_front().expect("peeked");
            self.unissued(&row);
        }
        self.flush_voids(src, t).await
    }

    /// The numbers the chain voided must be void in the registry.
    async fn flush_voids(&mut self, src: &mut Source, t: &ChainTables<'_>) -> Result<()> {
        let voids = std::mem::take(&mut self.voids);
        let mut by_scope: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
        for (scope, n) in &voids {
            by_scope.entry(scope).or_default().push(*n);
        }
        for (scope, numbers) in by_scope {
            let states = src.statuses(t.numbers, scope, &numbers).await?;
            for n in numbers {
                match states.get(&n).map(String::as_str) {
                    Some("void") => {}
                    Some(_) => self.note(format!(
                        "series {scope}: number {n} was voided in the chain but the registry says it is not void: a void was turned back"
                    )),
                    None => self.note(format!(
                        "series {scope}: number {n} is in the chain but not in the registry: its row was deleted"
                    )),
                }
            }
        }
        Ok(())
    }
}

/// Puts a chunk read after the cursor's position into its buffer.
fn refill<R: Keyed>(c: &mut Cursor<R>, chunk: Vec<R>) {
    c.exhausted = chunk.len() < CHUNK;
    if let Some(last) = chunk.last() {
        let (scope, number) = last.key();
        c.after = (scope.to_owned(), number);
    }
    c.rows.extend(chunk);
}
