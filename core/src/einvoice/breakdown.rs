//! The VAT breakdown (BG-23): one group a VAT category and rate, made of
//! the lines and the document-level allowances and charges taxed at it,
//! and the VAT each group comes to.
//!
//! Invariants: a group's taxable amount (BT-116) is the sum of its lines'
//! net amounts plus its charges less its allowances (BR-S-08, BR-Z-08,
//! BR-E-08 … for each category); its VAT (BT-117) is that base × rate
//! rounded once to the currency's places — or the sum of the VAT its lines
//! state as charged, when every line of it states one, within what
//! rounding each line can explain (for a zero-decimal currency, where one
//! minor unit is the whole unit BR-CO-17 allows, none), and only in a group
//! without allowances or charges (the VAT a shop charged per line says
//! nothing of theirs); its exemption code and reason (BT-121, BT-120) are
//! its lines' — one each, two different refused — else the category's own
//! words; the groups come in the order of their first member, lines before
//! allowances before charges; a sum that does not fit is refused, never
//! wrapped.

use super::decimal::Dec;
use super::model::{fits, invalid, DocumentError, LineInput};
use super::party::Party;
use super::vat::VatCategory;

/// The VAT of one category and rate (BG-23).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VatBreakdown {
    /// BT-118.
    pub category: VatCategory,
    /// BT-119.
    pub rate: Dec,
    /// Taxable amount (BT-116): the sum of its lines' net amounts, plus its
    /// charges, less its allowances.
    pub base: Dec,
    /// Tax (BT-117): base × rate / 100, rounded to the currency's places — or the sum
    /// of its lines' VAT as charged, when each states it.
    pub tax: Dec,
    /// VAT exemption reason code (BT-121), as its lines give it.
    pub exemption_code: Option<String>,
    /// VAT exemption reason (BT-120): as its lines give it, else the
    /// category's own words ([`VatCategory::exemption_reason`]).
    pub exemption_reason: Option<String>,
    /// Lines in it, and how many state their VAT as charged.
    lines: (usize, usize),
    /// The sum of the VAT its lines state.
    stated: Dec,
    /// Document-level allowances and charges in it.
    adjustments: usize,
}

impl VatBreakdown {
    /// The group of `category` at `rate` with `amount` added to its base:
    /// a new group, of that base, when none is yet.
    fn join(
        all: &mut Vec<VatBreakdown>,
        category: VatCategory,
        rate: Dec,
        amount: Dec,
        places: u32,
    ) -> Result<&mut VatBreakdown, DocumentError> {
        match all
            .iter()
            .position(|b| b.category == category && b.rate == rate)
        {
            Some(i) => {
                let b = &mut all[i];
                b.base = fits(
                    b.base.checked_add(amount),
                    "BT-116",
                    "VAT category taxable amount",
                )?;
                Ok(b)
            }
            None => {
                all.push(VatBreakdown {
                    category,
                    rate,
                    base: amount,
                    tax: Dec::ZERO,
                    exemption_code: None,
                    exemption_reason: None,
                    lines: (0, 0),
                    stated: Dec::new(0, places),
                    adjustments: 0,
                });
                Ok(all.last_mut().expect("just pushed"))
            }
        }
    }

    /// A line of net amount `net` joins its group, with the VAT it states
    /// as charged (rounded to the currency's places), if any, and its
    /// exemption code and reason (BT-121, BT-120): a group states one each.
    pub(super) fn add_line(
        all: &mut Vec<VatBreakdown>,
        line: &LineInput,
        net: Dec,
        stated: Option<Dec>,
        places: u32,
    ) -> Result<(), DocumentError> {
        let b = Self::join(all, line.vat_category, line.vat_rate, net, places)?;
        b.lines.0 += 1;
        if let Some(v) = stated {
            b.lines.1 += 1;
            b.stated = fits(b.stated.checked_add(v), "BT-117", "VAT category tax amount")?;
        }
        for (given, kept, term, what) in [
            (
                &line.details.vat_exemption_code,
                &mut b.exemption_code,
                "BT-121",
                "VAT exemption reason code",
            ),
            (
                &line.details.vat_exemption_reason,
                &mut b.exemption_reason,
                "BT-120",
                "VAT exemption reason",
            ),
        ] {
            if let Some(g) = Party::text(given) {
                match kept {
                    Some(k) if k != g => {
                        return Err(invalid(
                            term,
                            what,
                            format!(
                                "lines of category {} at {} % give two ({k}, {g}): a VAT breakdown states one",
                                line.vat_category.code(),
                                line.vat_rate
                            ),
                        ))
                    }
                    _ => *kept = Some(g.to_owned()),
                }
            }
        }
        Ok(())
    }

    /// A document-level allowance (`amount` negative) or charge joins its group.
    pub(super) fn add_adjustment(
        all: &mut Vec<VatBreakdown>,
        category: VatCategory,
        rate: Dec,
        amount: Dec,
        places: u32,
    ) -> Result<(), DocumentError> {
        Self::join(all, category, rate, amount, places)?.adjustments += 1;
        Ok(())
    }
}

/// Each group's VAT (and its exemption reason when its lines gave none),
/// and their sum: the document's total VAT (BT-110).
pub(super) fn taxes(breakdown: &mut [VatBreakdown], places: u32) -> Result<Dec, DocumentError> {
    let mut vat = Dec::new(0, places);
    for b in breakdown {
        let exact = b
            .base
            .checked_mul(b.rate)
            .and_then(|v| v.checked_mul(Dec::new(1, 2)));
        let computed = fits(
            exact.and_then(|v| v.round(places)),
            "BT-117",
            "VAT category tax amount",
        )?;
        b.tax = stated_tax(b, computed, places)?;
        if b.exemption_reason.is_none() {
            b.exemption_reason = b.category.exemption_reason().map(str::to_owned);
        }
        vat = fits(vat.checked_add(b.tax), "BT-110", "invoice total VAT amount")?;
    }
    Ok(vat)
}

/// A category's VAT: `computed` from its base, or the sum its lines state
/// when each states one — within what rounding each line on its own can
/// make the sum differ (half a minor unit a line, at least one minor unit)
/// and below the one unit BR-CO-17 and BR-S-09 allow — in a group without
/// allowances or charges.
fn stated_tax(b: &VatBreakdown, computed: Dec, places: u32) -> Result<Dec, DocumentError> {
    let (lines, stating) = b.lines;
    if stating == 0 {
        return Ok(computed);
    }
    if b.adjustments > 0 {
        return Err(invalid(
            "BT-117",
            "VAT category tax amount",
            format!(
                "the lines of category {} at {} % state the VAT charged, and a document-level allowance or charge is in it too: state no line's VAT, or put no allowance or charge at that rate",
                b.category.code(),
                b.rate
            ),
        ));
    }
    if stating != lines {
        return Err(invalid(
            "BT-117",
            "VAT category tax amount",
            format!(
                "{stating} of the {lines} lines of category {} at {} % state the VAT charged: all or none do",
                b.category.code(),
                b.rate
            ),
        ));
    }
    let allowed = (lines.div_ceil(2).max(1)) as i64;
    let diff = b.stated.checked_sub(computed).ok_or_else(|| {
        invalid(
            "BT-117",
            "VAT category tax amount",
            "too large to compute exactly",
        )
    })?;
    let diff_abs = diff.checked_abs().unwrap_or(diff);
    let within = diff_abs
        .checked_sub(Dec::new(allowed, places))
        .is_some_and(|over| !over.is_positive())
        && diff_abs
            .checked_sub(Dec::new(1, 0))
            .is_some_and(|over| over.is_negative());
    if !within {
        return Err(invalid(
            "BT-117",
            "VAT category tax amount",
            format!(
                "the lines of category {} at {} % state {} of VAT, {} from the {} their base makes: more than rounding each line can explain",
                b.category.code(),
                b.rate,
                b.stated,
                diff,
                computed
            ),
        ));
    }
    Ok(b.stated)
}
