//! Numbering periods: which period a day belongs to under a site's rule, and
//! what that period is called in a series' key and in a number.
//!
//! Invariants:
//! - a rule is `calendar-year` (the default), `fiscal-year:MM-DD` (the year
//!   starts on that day: `04-01` India and Japan, `07-01` Australia, `04-06`
//!   the UK tax year; a day that exists every year, so never 29 February) or
//!   `month`;
//! - a period is named by the calendar year in which it starts (`2026` is
//!   the fiscal year that starts in 2026), and a month's by year and month
//!   (`2026-04`): [`PeriodKey::label`], the tail of a series' key;
//! - a day belongs to exactly one period, and the periods of consecutive days
//!   never go back ([`period_of`]); the next period of a key is the one that
//!   starts right after it ([`PeriodKey::next`]);
//! - `{fy}` of a fiscal year that starts on 1 January is its year (`2026`);
//!   of one that starts later, its two calendar years (`2026-27`); `{fy_end}`
//!   is the year it ends in.

use crate::error::{Error, Result};
use crate::scope::YEARS;

/// How a site cuts time into numbering periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodRule {
    /// 1 January to 31 December.
    CalendarYear,
    /// A year from (`month`, `day`) to the day before it.
    FiscalYear {
        /// The month it starts in, 1–12.
        month: u32,
        /// The day of that month, 1 to the month's length (never 29 February).
        day: u32,
    },
    /// A calendar month.
    Month,
}

/// Days in `month` of a common year.
const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

impl PeriodRule {
    /// Parses `calendar-year`, `fiscal-year:MM-DD` or `month`.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |why: &str| Error::InvalidArgument {
            name: "period",
            reason: format!("`{text}`: {why}; use calendar-year, fiscal-year:MM-DD or month"),
        };
        match text {
            "calendar-year" => return Ok(PeriodRule::CalendarYear),
            "month" => return Ok(PeriodRule::Month),
            _ => {}
        }
        let Some(day) = text.strip_prefix("fiscal-year:") else {
            return Err(bad("not a period rule"));
        };
        let b = day.as_bytes();
        if b.len() != 5
            || b[2] != b'-'
            || !day
                .bytes()
                .enumerate()
                .all(|(i, c)| i == 2 || c.is_ascii_digit())
        {
            return Err(bad("the fiscal year's first day is MM-DD"));
        }
        let (month, day): (u32, u32) =
            (day[..2].parse().unwrap_or(0), day[3..].parse().unwrap_or(0));
        if !(1..=12).contains(&month) || day < 1 || day > DAYS[month as usize - 1] {
            return Err(bad("no such day in every year"));
        }
        if (month, day) == (1, 1) {
            return Ok(PeriodRule::CalendarYear);
        }
        Ok(PeriodRule::FiscalYear { month, day })
    }

    /// The rule as [`PeriodRule::parse`] reads it.
    pub fn as_string(&self) -> String {
        match self {
            PeriodRule::CalendarYear => "calendar-year".to_owned(),
            PeriodRule::FiscalYear { month, day } => format!("fiscal-year:{month:02}-{day:02}"),
            PeriodRule::Month => "month".to_owned(),
        }
    }
}

/// A numbering period: the year it starts in, and its month for a monthly rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PeriodKey {
    /// The calendar year the period starts in.
    pub year: u32,
    /// The month, for a monthly rule.
    pub month: Option<u32>,
}

impl PeriodKey {
    /// The period's name in a series' key: `2026`, or `2026-04`.
    pub fn label(&self) -> String {
        match self.month {
            Some(m) => format!("{:04}-{m:02}", self.year),
            None => format!("{:04}", self.year),
        }
    }

    /// The period that follows this one.
    pub fn next(&self) -> Result<PeriodKey> {
        let (year, month) = match self.month {
            Some(12) => (self.year + 1, Some(1)),
            Some(m) => (self.year, Some(m + 1)),
            None => (self.year + 1, None),
        };
        check_year(year)?;
        Ok(PeriodKey { year, month })
    }
}

fn check_year(year: u32) -> Result<()> {
    if YEARS.contains(&year) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            name: "year",
            reason: format!("year {year} is outside 1..=9999"),
        })
    }
}

/// The period of day (`year`, `month`, `day`) under `rule`. The day is the
/// site's local date; a date that does not exist is refused.
pub fn period_of(rule: PeriodRule, year: u32, month: u32, day: u32) -> Result<PeriodKey> {
    check_year(year)?;
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let length = if month == 2 && leap {
        29
    } else {
        DAYS.get(month.wrapping_sub(1) as usize)
            .copied()
            .unwrap_or(0)
    };
    if !(1..=12).contains(&month) || day < 1 || day > length {
        return Err(Error::InvalidArgument {
            name: "date",
            reason: format!("{year:04}-{month:02}-{day:02} is not a date"),
        });
    }
    let key = match rule {
        PeriodRule::CalendarYear => PeriodKey { year, month: None },
        PeriodRule::Month => PeriodKey {
            year,
            month: Some(month),
        },
        PeriodRule::FiscalYear { month: m, day: d } => {
            let start = if (month, day) >= (m, d) {
                year
            } else {
                year - 1
            };
            check_year(start)?;
            PeriodKey {
                year: start,
                month: None,
            }
        }
    };
    Ok(key)
}

/// `{fy}`: a fiscal year that starts in `year` under `rule`, as printed:
/// `2026` when it is a calendar year, `2026-27` when it spans two.
pub fn fiscal_label(rule: PeriodRule, year: u32) -> String {
    match rule {
        PeriodRule::FiscalYear { .. } => format!("{year:04}-{:02}", (year + 1) % 100),
        _ => format!("{year:04}"),
    }
}

/// `{fy_end}`: the calendar year a fiscal year that starts in `year` ends in.
pub fn fiscal_end(rule: PeriodRule, year: u32) -> u32 {
    match rule {
        PeriodRule::FiscalYear { .. } => year + 1,
        _ => year,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn india_australia_uk_and_months() {
        let india = PeriodRule::parse("fiscal-year:04-01").unwrap();
        assert_eq!(period_of(india, 2027, 3, 31).unwrap().label(), "2026");
        assert_eq!(period_of(india, 2027, 4, 1).unwrap().label(), "2027");
        let uk = PeriodRule::parse("fiscal-year:04-06").unwrap();
        assert_eq!(period_of(uk, 2027, 4, 5).unwrap().label(), "2026");
        assert_eq!(period_of(uk, 2027, 4, 6).unwrap().label(), "2027");
        assert_eq!(fiscal_label(uk, 2026), "2026-27");
        assert_eq!(fiscal_label(uk, 2099), "2099-00");
        let month = PeriodRule::parse("month").unwrap();
        assert_eq!(
            period_of(month, 2026, 12, 31)
                .unwrap()
                .next()
                .unwrap()
                .label(),
            "2027-01"
        );
        assert!(PeriodRule::parse("fiscal-year:02-29").is_err());
        assert_eq!(
            PeriodRule::parse("fiscal-year:01-01").unwrap(),
            PeriodRule::CalendarYear
        );
        assert!(period_of(india, 2026, 2, 29).is_err());
    }
}
