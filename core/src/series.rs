//! The rules of a series that hold whatever stores it.
//!
//! Invariants: a series starts at 1 or above (its counter is `start - 1`, the
//! last number handed out); the counter only moves up; a batch asks for 1 to
//! [`MAX_BATCH`] numbers and receives the contiguous range ending at the new
//! counter. The store (MySQL, or the pure-PHP backend) calls these checks
//! before it sends anything, so bad input changes nothing.

use std::ops::RangeInclusive;

use crate::error::{Error, Result};

/// The largest batch one `allocate_many` call may ask for.
pub const MAX_BATCH: u64 = 100_000;

/// The counter value that makes `start` the next number handed out.
pub fn counter_for_start(start: u64) -> Result<u64> {
    if start < 1 {
        return Err(Error::InvalidArgument {
            name: "start",
            reason: format!("the first number must be at least 1, got {start}"),
        });
    }
    Ok(start - 1)
}

/// A number as a person types it in a form or on a command line: surrounding
/// whitespace (Unicode's, as the scope key rule counts it) is ignored; what
/// remains must be ASCII digits only (no sign, no separator, no exponent)
/// and at most u64::MAX. `name` names the field in the error.
pub fn parse_typed_number(name: &'static str, text: &str) -> Result<u64> {
    let digits = text.trim_matches(char::is_whitespace);
    let refuse = |reason: String| Error::InvalidArgument { name, reason };
    if digits.is_empty() {
        return Err(refuse("no number given".into()));
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refuse(format!(
            "`{digits}` is not a whole number: digits 0-9 only"
        )));
    }
    digits
        .parse()
        .map_err(|_| refuse(format!("`{digits}` is above 18446744073709551615")))
}

/// The counter value that makes `next` the next number handed out (advance).
pub fn counter_for_next(next: u64) -> Result<u64> {
    if next < 1 {
        return Err(Error::InvalidArgument {
            name: "next",
            reason: format!("the next number must be at least 1, got {next}"),
        });
    }
    Ok(next - 1)
}

/// What moving a series whose counter is `current` so that `next` is its next
/// number would do: the same rule as the store's `GREATEST`, for previews.
pub fn advance_outcome(current: u64, next: u64) -> Result<Advanced> {
    let target = counter_for_next(next)?;
    Ok(if target > current {
        Advanced::Moved { current: target }
    } else {
        Advanced::Unchanged { current }
    })
}

/// The state of series `key` from its stored row (`current_value`,
/// `start_value`); [`Error::SeriesNotFound`] when there is no row.
pub fn state_of_row(key: &str, row: Option<(u64, Option<u64>)>) -> Result<SeriesState> {
    match row {
        Some((current, start)) => Ok(SeriesState {
            scope: key.to_owned(),
            current,
            start,
        }),
        None => Err(Error::SeriesNotFound {
            scope: key.to_owned(),
        }),
    }
}

/// Checks a batch size.
pub fn check_batch(count: u64) -> Result<()> {
    if !(1..=MAX_BATCH).contains(&count) {
        return Err(Error::InvalidArgument {
            name: "count",
            reason: format!("a batch holds 1 to {MAX_BATCH} numbers, got {count}"),
        });
    }
    Ok(())
}

/// The numbers a batch of `count` received when the counter became `last`.
pub fn batch_range(last: u64, count: u64) -> RangeInclusive<u64> {
    (last - (count - 1))..=last
}

/// What `initialize` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initialized {
    /// The series was created; `next` is the first number it will hand out.
    Created {
        /// The first number.
        next: u64,
    },
    /// The series already existed and was left as it was.
    Exists {
        /// Its counter (the last number handed out), unchanged.
        current: u64,
    },
}

/// What `advance` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advanced {
    /// The counter moved up; `current` is its new value.
    Moved {
        /// The new counter (next number minus one).
        current: u64,
    },
    /// The counter was already at or beyond the target and did not move.
    Unchanged {
        /// The counter as it is.
        current: u64,
    },
}

/// A series as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesState {
    /// The scope key.
    pub scope: String,
    /// The last number handed out (`start - 1` before the first).
    pub current: u64,
    /// The first number of the series, where it is known (adopted tables
    /// from before Counterfoil do not record it).
    pub start: Option<u64>,
}

impl SeriesState {
    /// The number the next allocation will hand out, if any is left.
    pub fn next(&self) -> Option<u64> {
        self.current.checked_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_and_next_rules() {
        assert_eq!(counter_for_start(2).unwrap(), 1);
        assert_eq!(counter_for_start(1).unwrap(), 0);
        assert!(counter_for_start(0).unwrap_err().is_invalid_input());
        assert_eq!(counter_for_next(u64::MAX).unwrap(), u64::MAX - 1);
        assert!(counter_for_next(0).is_err());
    }

    #[test]
    fn advance_preview() {
        assert_eq!(
            advance_outcome(199, 200).unwrap(),
            Advanced::Unchanged { current: 199 }
        );
        assert_eq!(
            advance_outcome(199, 201).unwrap(),
            Advanced::Moved { current: 200 }
        );
        assert_eq!(
            advance_outcome(199, 100).unwrap(),
            Advanced::Unchanged { current: 199 }
        );
        assert!(advance_outcome(0, 0).is_err());
    }

    #[test]
    fn batches() {
        assert!(check_batch(0).is_err());
        assert!(check_batch(1).is_ok());
        assert!(check_batch(MAX_BATCH).is_ok());
        assert!(check_batch(MAX_BATCH + 1).is_err());
        assert_eq!(batch_range(10, 3), 8..=10);
        assert_eq!(batch_range(1, 1), 1..=1);
    }
}
