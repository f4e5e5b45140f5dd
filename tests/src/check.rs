//! The checker of allocation histories.
//!
//! Invariant it proves: the numbers handed out (single numbers and batch
//! ranges, from any number of processes) never overlap, and together cover
//! exactly `first ..= last` with no hole. It reports every problem it finds
//! (the first few of each kind), so a failure says what went wrong.

use std::fmt;

/// One acknowledged allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Allocation {
    /// First number of the allocation.
    pub first: u64,
    /// Last number (equal to `first` for a single number).
    pub last: u64,
}

impl Allocation {
    /// A single number.
    pub fn one(n: u64) -> Self {
        Self { first: n, last: n }
    }

    /// A contiguous batch.
    pub fn range(first: u64, last: u64) -> Self {
        Self { first, last }
    }

    /// Parses a worker's output line: `n 17` or `r 18 27`; other lines are `None`.
    pub fn parse_line(line: &str) -> Option<Self> {
        let mut it = line.split_whitespace();
        match (it.next(), it.next(), it.next()) {
            (Some("n"), Some(n), None) => n.parse().ok().map(Self::one),
            (Some("r"), Some(a), Some(b)) => Some(Self::range(a.parse().ok()?, b.parse().ok()?)),
            _ => None,
        }
    }
}

/// What the checker found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// Numbers handed out more than once, as (first, last) overlaps.
    pub duplicates: Vec<(u64, u64)>,
    /// Holes: numbers in range nobody received, as (first, last).
    pub gaps: Vec<(u64, u64)>,
    /// Numbers outside `first ..= last`.
    pub outside: Vec<Allocation>,
    /// How many numbers were handed out in all.
    pub total: u64,
}

impl Findings {
    /// No duplicate, no gap, nothing outside.
    pub fn is_clean(&self) -> bool {
        self.duplicates.is_empty() && self.gaps.is_empty() && self.outside.is_empty()
    }
}

impl fmt::Display for Findings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} numbers; {} duplicate stretch(es) {:?}; {} gap(s) {:?}; {} outside {:?}",
            self.total,
            self.duplicates.len(),
            &self.duplicates[..self.duplicates.len().min(5)],
            self.gaps.len(),
            &self.gaps[..self.gaps.len().min(5)],
            self.outside.len(),
            &self.outside[..self.outside.len().min(5)],
        )
    }
}

/// Checks that `allocations` cover exactly `first ..= last`, once each.
pub fn check_contiguous(allocations: &[Allocation], first: u64, last: u64) -> Findings {
    let mut sorted: Vec<Allocation> = allocations.to_vec();
    sorted.sort();
    let mut findings = Findings::default();
    // `covered` = the highest number seen so far (next expected = covered + 1).
    let mut covered: Option<u64> = first.checked_sub(1);
    let mut expect_first = true;
    for a in &sorted {
        findings.total += a.last - a.first + 1;
        if a.first < first || a.last > last || a.first > a.last {
            findings.outside.push(*a);
            continue;
        }
        let next = match covered {
            None if expect_first => first,
            None => 0,
            Some(c) => c + 1,
        };
        expect_first = false;
        if a.first > next {
            findings.gaps.push((next, a.first - 1));
        } else if a.first < next {
            findings.duplicates.push((a.first, a.last.min(next - 1)));
        }
        covered = Some(covered.map_or(a.last, |c| c.max(a.last)));
    }
    match covered {
        Some(c) if c < last => findings.gaps.push((c + 1, last)),
        None if !(expect_first && first > last) => findings.gaps.push((first, last)),
        _ => {}
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_history() {
        let a = [
            Allocation::one(3),
            Allocation::range(1, 2),
            Allocation::one(4),
        ];
        assert!(check_contiguous(&a, 1, 4).is_clean());
    }

    #[test]
    fn finds_duplicates_gaps_and_strays() {
        let a = [
            Allocation::one(1),
            Allocation::one(1),
            Allocation::range(2, 3),
        ];
        assert_eq!(check_contiguous(&a, 1, 3).duplicates, vec![(1, 1)]);
        let a = [Allocation::one(1), Allocation::one(4)];
        assert_eq!(check_contiguous(&a, 1, 5).gaps, vec![(2, 3), (5, 5)]);
        let a = [Allocation::range(1, 5), Allocation::range(4, 6)];
        assert_eq!(check_contiguous(&a, 1, 6).duplicates, vec![(4, 5)]);
        let a = [Allocation::one(9)];
        let f = check_contiguous(&a, 1, 2);
        assert_eq!(f.outside.len(), 1);
        assert_eq!(f.gaps, vec![(1, 2)]);
        assert!(!check_contiguous(&[], 1, 1).is_clean());
    }

    #[test]
    fn parses_worker_lines() {
        assert_eq!(Allocation::parse_line("n 17"), Some(Allocation::one(17)));
        assert_eq!(
            Allocation::parse_line("r 18 27"),
            Some(Allocation::range(18, 27))
        );
        assert_eq!(Allocation::parse_line("start 123"), None);
    }
}
