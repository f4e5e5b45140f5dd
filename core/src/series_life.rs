//! A series' life (docs/design.md §7): what happens when a payment's series does
//! not exist yet, and which number a new series starts at.
//!
//! Invariants:
//! - a series is created in its own statement (`INSERT`, the primary key
//!   decides), never by a read-then-insert inside a payment's transaction, and
//!   an existing series is never reset;
//! - under [`MissingSeries::Create`] a new series starts at the configured
//!   start; under [`MissingSeries::Continue`] right after the issuer's latest
//!   earlier period of the same kind — year after year, month after month
//!   (the configured start when there is none); under
//!   [`MissingSeries::Hold`] nothing is created and the payment waits;
//! - the issuer of `"{issuer}:{year}"` or `"{issuer}:{yyyy-mm}"` is
//!   everything before the last `:`, and only a four-digit year (and a
//!   two-digit month 01–12) counts, so `42:2026` never continues `420:2025`;
//! - a series continued under `Continue` is closed in the same transaction
//!   that creates its successor, under its row lock: it hands out no number
//!   after that, so the two never hand out the same number (a format without
//!   the year would print both alike). A payment of a closed series' period
//!   is numbered by its successor (at most [`MAX_SUCCESSORS`] steps along the
//!   chain); a series closed by another is never continued a second time.
//!
//! The pure-PHP twin (`Counterfoil_Rules::start_for_new_series`,
//! `previous_series`) passes the same vectors (`tests/vectors/series_plans.json`).

use crate::error::{Error, Result};
use crate::fiscal::PeriodKey;
use crate::scope::{ScopeKey, YEARS};
use crate::series;

/// What to do with a payment whose series does not exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MissingSeries {
    /// Create the series at the configured start, then number the payment.
    #[default]
    Create,
    /// Create it right after the issuer's previous year, then number it.
    Continue,
    /// Record the payment without a number until an admin creates the series.
    Hold,
}

impl MissingSeries {
    /// Every plan, in the order settings list them.
    pub const ALL: [MissingSeries; 3] = [
        MissingSeries::Create,
        MissingSeries::Continue,
        MissingSeries::Hold,
    ];

    /// The stored name: `create`, `continue` or `hold`.
    pub fn as_str(self) -> &'static str {
        match self {
            MissingSeries::Create => "create",
            MissingSeries::Continue => "continue",
            MissingSeries::Hold => "hold",
        }
    }

    /// Parses a stored name.
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| Error::InvalidArgument {
                name: "plan",
                reason: format!("unknown plan `{name}`; use create, continue or hold"),
            })
    }
}

/// The issuer and year of a `"{issuer}:{year}"` key (year: four digits in
/// [`YEARS`]); `None` for keys of any other shape (a month's key included).
pub fn issuer_and_year(scope: &str) -> Option<(&str, u32)> {
    match issuer_and_period(scope)? {
        (issuer, PeriodKey { year, month: None }) => Some((issuer, year)),
        _ => None,
    }
}

/// The issuer and numbering period of a `"{issuer}:{yyyy}"` (a year,
/// calendar or fiscal) or `"{issuer}:{yyyy-mm}"` (a month) key: the tail is
/// [`PeriodKey::label`]'s shape exactly (year in [`YEARS`], month 01–12);
/// `None` for keys of any other shape.
pub fn issuer_and_period(scope: &str) -> Option<(&str, PeriodKey)> {
    let (issuer, tail) = scope.rsplit_once(':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (year, month) = match tail.len() {
        4 => (tail, None),
        7 if tail.as_bytes()[4] == b'-' => (&tail[..4], Some(&tail[5..])),
        _ => return None,
    };
    if !digits(year) || !month.is_none_or(digits) {
        return None;
    }
    let year: u32 = year.parse().ok()?;
    let month = match month {
        Some(m) => Some(m.parse::<u32>().ok().filter(|m| (1..=12).contains(m))?),
        None => None,
    };
    YEARS
        .contains(&year)
        .then_some((issuer, PeriodKey { year, month }))
}

/// The LIKE pattern of every series of `issuer` (`{issuer}:%`), with `\`,
/// `%` and `_` in the issuer escaped (the default escape of MySQL/MariaDB
/// and PostgreSQL), so that an issuer's wildcards match only themselves.
pub fn issuer_pattern(issuer: &str) -> String {
    let mut out = String::with_capacity(issuer.len() + 2);
    for c in issuer.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push_str(":%");
    out
}

/// The series `scope` would continue: among `existing` (scope key, current
/// value), the one of the same issuer with the latest period before
/// `scope`'s, of the same kind (a month continues a month, a year a year).
pub fn previous_series<'a, I>(scope: &ScopeKey, existing: I) -> Option<(&'a str, u64)>
where
    I: IntoIterator<Item = (&'a str, u64)>,
{
    let (issuer, period) = issuer_and_period(scope.as_str())?;
    existing
        .into_iter()
        .filter_map(|(key, current)| {
            let (i, p) = issuer_and_period(key)?;
            (i == issuer && p.month.is_some() == period.month.is_some() && p < period)
                .then_some((p, key, current))
        })
        .max_by_key(|(p, _, _)| *p)
        .map(|(_, key, current)| (key, current))
}

/// The first number of a new series under `plan`: `configured_start` (≥ 1)
/// for `Create` (and for `Continue` without a previous series), the previous
/// series' counter + 1 for `Continue`, `None` for `Hold` (nothing is created).
pub fn start_for_new_series(
    plan: MissingSeries,
    configured_start: u64,
    previous_current: Option<u64>,
) -> Result<Option<u64>> {
    series::counter_for_start(configured_start)?;
    Ok(match (plan, previous_current) {
        (MissingSeries::Hold, _) => None,
        (MissingSeries::Continue, Some(current)) => {
            Some(current.checked_add(1).ok_or_else(|| Error::Overflow {
                scope: "the previous year's series".into(),
                requested: 1,
            })?)
        }
        (MissingSeries::Create | MissingSeries::Continue, _) => Some(configured_start),
    })
}

/// The longest chain of closed series a payment is passed along.
pub const MAX_SUCCESSORS: u32 = 16;

/// How many times an allocation is sent again when its series was found
/// open right after the allocation changed no row.
pub const MAX_REAPPEARED: u32 = 2;

/// After a zero-row allocation, whether to allocate again: the series
/// reads as open (`successor` is `Some(None)`), so it was created (or its
/// creation committed) between the allocation and the read — under READ
/// COMMITTED, or a snapshot taken at the read, the two statements can see
/// two moments. At most [`MAX_REAPPEARED`] times, counted in `tries`; after
/// that [`closed_or_missing`] calls it unexpected.
pub fn allocate_again(successor: &Option<Option<String>>, tries: &mut u32) -> bool {
    if matches!(successor, Some(None)) && *tries < MAX_REAPPEARED {
        *tries += 1;
        return true;
    }
    false
}

/// What a zero-row allocation of an open series means: the series is
/// missing (`successor` is `None`: no row), or closed in favour of its
/// successor. An open series that changed no row is unexpected.
pub fn closed_or_missing(scope: &str, successor: Option<Option<String>>) -> Error {
    match successor {
        None => Error::SeriesNotFound {
            scope: scope.to_owned(),
        },
        Some(Some(successor)) => Error::SeriesClosed {
            scope: scope.to_owned(),
            successor,
        },
        Some(None) => Error::Unexpected(format!(
            "series `{scope}` is open but its allocation changed no row"
        )),
    }
}

/// Whether a payment's allocation moves on to a closed series' successor:
/// the successor's key, counting the step in `hops`; any other error (and
/// a chain longer than [`MAX_SUCCESSORS`]) is returned as it is.
pub fn forward_to(error: Error, hops: &mut u32) -> std::result::Result<String, Error> {
    match error {
        Error::SeriesClosed { successor, .. } if *hops < MAX_SUCCESSORS => {
            *hops += 1;
            Ok(successor)
        }
        e => Err(e),
    }
}

/// Whether `scope` may be created continuing `previous`, which is closed by
/// `closed_by` (or open): a series continues only once, so a series that a
/// later one already continues is never continued again (both would start at
/// its counter + 1).
pub fn may_continue(previous: &str, closed_by: Option<&str>, scope: &str) -> Result<()> {
    match closed_by {
        Some(successor) if successor != scope => Err(Error::SeriesClosed {
            scope: previous.to_owned(),
            successor: successor.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// What creating a series under a plan did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedSeries {
    /// The first number the plan gave (`None` under `Hold`: nothing created).
    pub start: Option<u64>,
    /// The previous year's series it continued from, as its counter.
    pub continued_from: Option<u64>,
    /// What `initialize` did (`None` under `Hold`).
    pub outcome: Option<crate::series::Initialized>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_series_after_a_zero_row_allocation_is_allocated_again_twice_at_most() {
        let mut tries = 0;
        assert!(allocate_again(&Some(None), &mut tries));
        assert!(allocate_again(&Some(None), &mut tries));
        assert!(!allocate_again(&Some(None), &mut tries), "bounded");
        let mut tries = 0;
        assert!(!allocate_again(&None, &mut tries), "missing: no retry");
        assert!(
            !allocate_again(&Some(Some("7:2027".into())), &mut tries),
            "closed: its successor"
        );
        assert_eq!(tries, 0);
    }

    #[test]
    fn plans_by_name() {
        for p in MissingSeries::ALL {
            assert_eq!(MissingSeries::parse(p.as_str()).unwrap(), p);
        }
        assert!(MissingSeries::parse("Create").is_err());
        assert_eq!(MissingSeries::default(), MissingSeries::Create);
    }

    #[test]
    fn a_closed_series_passes_its_payments_on_a_bounded_chain() {
        assert!(matches!(
            closed_or_missing("5:2025", None),
            Error::SeriesNotFound { .. }
        ));
        let closed = || closed_or_missing("5:2025", Some(Some("5:2026".into())));
        let mut hops = 0;
        assert_eq!(forward_to(closed(), &mut hops).unwrap(), "5:2026");
        assert_eq!(hops, 1);
        hops = MAX_SUCCESSORS;
        assert!(matches!(
            forward_to(closed(), &mut hops),
            Err(Error::SeriesClosed { .. })
        ));
        assert!(matches!(
            closed_or_missing("5:2025", Some(None)),
            Error::Unexpected(_)
        ));
        assert!(forward_to(Error::Refused("x".into()), &mut 0).is_err());
    }

    #[test]
    fn a_series_is_continued_once() {
        assert!(may_continue("5:2025", None, "5:2026").is_ok());
        assert!(may_continue("5:2025", Some("5:2026"), "5:2026").is_ok());
        assert!(matches!(
            may_continue("5:2025", Some("5:2027"), "5:2026"),
            Err(Error::SeriesClosed { ref successor, .. }) if successor == "5:2027"
        ));
    }

    #[test]
    fn previous_is_the_same_issuers_latest_earlier_year() {
        let scope = ScopeKey::new("42:2027").unwrap();
        let existing = [
            ("42:2025", 99),
            ("42:2026", 153),
            ("420:2026", 7),
            ("42:2028", 5),
            ("x:42:2026", 1),
        ];
        assert_eq!(previous_series(&scope, existing), Some(("42:2026", 153)));
        assert_eq!(
            previous_series(&ScopeKey::new("eu").unwrap(), existing),
            None
        );
    }
}
