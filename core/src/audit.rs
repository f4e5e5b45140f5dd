//! Auditing numbers that already exist (invoice post titles), before a site
//! is adopted: which series they belong to, duplicates, gaps, malformed titles.
//!
//! Invariants: a title counts as a number only when it is exactly a rendering
//! of the template ([`NumberFormat::parse_rendered`]); the series of a title
//! comes from one [`ScopeRule`]; within a series the first post (lowest id)
//! holding a number is its owner and every later post with the same number is
//! a duplicate; a gap is a number between a series' lowest and highest that no
//! post holds. Memory is proportional to the posts (24 bytes each) and the
//! malformed examples are capped.

use std::collections::HashMap;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::format::NumberFormat;

/// How a title's series (scope key) is chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopeRule {
    /// `{author}:{year}`: the post's author, and the year from the title
    /// (`{year}`) or else from the post date. The plugin's rule.
    AuthorYear,
    /// `{year}` alone: one series per year for the whole site.
    Year,
    /// One series for every title, named by the given key.
    Single(String),
}

impl FromStr for ScopeRule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "author-year" => Ok(ScopeRule::AuthorYear),
            "year" => Ok(ScopeRule::Year),
            _ => match s.strip_prefix("single:") {
                Some(key) if !key.is_empty() => Ok(ScopeRule::Single(key.to_owned())),
                _ => Err(Error::InvalidArgument {
                    name: "scope_rule",
                    reason: format!("`{s}`: use author-year, year, or single:KEY"),
                }),
            },
        }
    }
}

/// One invoice post as read from the database.
#[derive(Clone, Debug)]
pub struct PostRow {
    /// `wp_posts.ID`.
    pub id: u64,
    /// `post_author`.
    pub author: u64,
    /// `post_date`, `YYYY-MM-DD hh:mm:ss`.
    pub date: String,
    /// `post_title`.
    pub title: String,
}

/// A post holding a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Holder {
    /// The number.
    pub seq: u64,
    /// The post.
    pub post_id: u64,
    /// `post_date` packed as YYYYMMDDhhmmss.
    pub date: u64,
}

impl Holder {
    /// The post date as `YYYY-MM-DD hh:mm:ss`.
    pub fn date_text(&self) -> String {
        let d = self.date;
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            d / 10_000_000_000,
            d / 100_000_000 % 100,
            d / 1_000_000 % 100,
            d / 10_000 % 100,
            d / 100 % 100,
            d % 100
        )
    }
}

fn pack_date(date: &str) -> u64 {
    date.bytes()
        .filter(u8::is_ascii_digit)
        .take(14)
        .fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0'))
}

/// A number held by more than one post.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// The number.
    pub seq: u64,
    /// Every post holding it, the owner (lowest id) first.
    pub holders: Vec<Holder>,
}

/// The audit of one series.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesAudit {
    /// Scope key.
    pub scope: String,
    /// Posts with a number in this series.
    pub count: u64,
    /// Lowest number.
    pub lowest: u64,
    /// Highest number.
    pub highest: u64,
    /// Numbers held by several posts.
    pub duplicates: Vec<Duplicate>,
    /// Missing numbers between lowest and highest, as inclusive ranges.
    pub gaps: Vec<(u64, u64)>,
    /// The owner of each number, ascending (duplicates excluded).
    pub owners: Vec<Holder>,
}

impl SeriesAudit {
    /// Numbers missing between lowest and highest.
    pub fn missing(&self) -> u64 {
        self.gaps.iter().map(|(a, b)| b - a + 1).sum()
    }

    /// Posts that are later duplicates (not owners).
    pub fn later_duplicates(&self) -> impl Iterator<Item = &Holder> {
        self.duplicates
            .iter()
            .flat_map(|d| d.holders.iter().skip(1))
    }
}

/// A title that is not a rendering of the template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// The post.
    pub post_id: u64,
    /// Its title.
    pub title: String,
}

/// The whole audit.
#[derive(Clone, Debug, Default)]
pub struct AuditReport {
    /// Posts read.
    pub posts: u64,
    /// Per series, by scope key.
    pub series: Vec<SeriesAudit>,
    /// Titles that do not match the template.
    pub malformed_count: u64,
    /// The first malformed titles (at most [`Auditor::MALFORMED_EXAMPLES`]).
    pub malformed: Vec<Malformed>,
}

impl AuditReport {
    /// Duplicate numbers over all series.
    pub fn duplicate_count(&self) -> usize {
        self.series.iter().map(|s| s.duplicates.len()).sum()
    }

    /// Gaps over all series.
    pub fn gap_count(&self) -> usize {
        self.series.iter().map(|s| s.gaps.len()).sum()
    }
}

/// Accumulates posts, then reports.
#[derive(Debug)]
pub struct Auditor {
    format: NumberFormat,
    rule: ScopeRule,
    holders: HashMap<String, Vec<Holder>>,
    report: AuditReport,
}

impl Auditor {
    /// Malformed titles kept as examples.
    pub const MALFORMED_EXAMPLES: usize = 1000;

    /// An auditor for titles rendered by `format`, grouped by `rule`.
    pub fn new(format: NumberFormat, rule: ScopeRule) -> Self {
        Self {
            format,
            rule,
            holders: HashMap::new(),
            report: AuditReport::default(),
        }
    }

    /// The series a title belongs to, and its number; `None` when malformed.
    pub fn classify(&self, post: &PostRow) -> Option<(String, u64)> {
        let parsed = self.format.parse_rendered(&post.title)?;
        let year = parsed
            .year
            .or_else(|| post.date.get(..4).and_then(|y| y.parse().ok()))?;
        let scope = match &self.rule {
            ScopeRule::AuthorYear => format!("{}:{year}", post.author),
            ScopeRule::Year => year.to_string(),
            ScopeRule::Single(key) => key.clone(),
        };
        Some((scope, parsed.seq))
    }

    /// Adds one post.
    pub fn add(&mut self, post: &PostRow) {
        self.report.posts += 1;
        match self.classify(post) {
            Some((scope, seq)) => self.holders.entry(scope).or_default().push(Holder {
                seq,
                post_id: post.id,
                date: pack_date(&post.date),
            }),
            None => {
                self.report.malformed_count += 1;
                if self.report.malformed.len() < Self::MALFORMED_EXAMPLES {
                    self.report.malformed.push(Malformed {
                        post_id: post.id,
                        title: post.title.clone(),
                    });
                }
            }
        }
    }

    /// The report, series sorted by scope key.
    pub fn finish(mut self) -> AuditReport {
        let mut series: Vec<SeriesAudit> = self
            .holders
            .drain()
            .map(|(scope, mut holders)| {
                holders.sort_unstable_by_key(|h| (h.seq, h.post_id));
                let mut audit = SeriesAudit {
                    scope,
                    count: holders.len() as u64,
                    lowest: holders.first().map_or(0, |h| h.seq),
                    highest: holders.last().map_or(0, |h| h.seq),
                    duplicates: Vec::new(),
                    gaps: Vec::new(),
                    owners: Vec::with_capacity(holders.len()),
                };
                let mut i = 0;
                while i < holders.len() {
                    let seq = holders[i].seq;
                    let mut j = i + 1;
                    while j < holders.len() && holders[j].seq == seq {
                        j += 1;
                    }
                    if let Some(prev) = audit.owners.last() {
                        if seq > prev.seq + 1 {
                            audit.gaps.push((prev.seq + 1, seq - 1));
                        }
                    }
                    audit.owners.push(holders[i]);
                    if j - i > 1 {
                        audit.duplicates.push(Duplicate {
                            seq,
                            holders: holders[i..j].to_vec(),
                        });
                    }
                    i = j;
                }
                audit
            })
            .collect();
        series.sort_by(|a, b| a.scope.cmp(&b.scope));
        self.report.series = series;
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(id: u64, author: u64, title: &str) -> PostRow {
        PostRow {
            id,
            author,
            date: "2026-03-04 05:06:07".into(),
            title: title.into(),
        }
    }

    #[test]
    fn finds_duplicates_gaps_and_malformed() {
        let mut a = Auditor::new(NumberFormat::default(), ScopeRule::AuthorYear);
        for (id, author, title) in [
            (1, 1, "2026-0001"),
            (2, 1, "2026-0002"),
            (3, 1, "2026-0002"),
            (4, 1, "2026-0005"),
            (5, 2, "2026-0001"),
            (6, 1, "2025-0001"),
            (7, 1, "INV 7"),
            (8, 1, "2026-00006"),
        ] {
            a.add(&post(id, author, title));
        }
        let r = a.finish();
        assert_eq!(r.posts, 8);
        assert_eq!(r.malformed_count, 2);
        let scopes: Vec<&str> = r.series.iter().map(|s| s.scope.as_str()).collect();
        assert_eq!(scopes, ["1:2025", "1:2026", "2:2026"]);
        let s = &r.series[1];
        assert_eq!((s.count, s.lowest, s.highest), (4, 1, 5));
        assert_eq!(s.duplicates.len(), 1);
        assert_eq!(
            s.duplicates[0]
                .holders
                .iter()
                .map(|h| h.post_id)
                .collect::<Vec<_>>(),
            [2, 3]
        );
        assert_eq!(s.gaps, [(3, 4)]);
        assert_eq!(s.missing(), 2);
        assert_eq!(
            s.owners.iter().map(|h| h.post_id).collect::<Vec<_>>(),
            [1, 2, 4]
        );
        assert_eq!(
            s.later_duplicates().map(|h| h.post_id).collect::<Vec<_>>(),
            [3]
        );
        assert_eq!(s.owners[0].date_text(), "2026-03-04 05:06:07");
    }

    #[test]
    fn scope_rules() {
        assert_eq!(
            "author-year".parse::<ScopeRule>().unwrap(),
            ScopeRule::AuthorYear
        );
        assert_eq!(
            "single:all".parse::<ScopeRule>().unwrap(),
            ScopeRule::Single("all".into())
        );
        assert!("single:".parse::<ScopeRule>().is_err());
        let a = Auditor::new(NumberFormat::parse("{seq}").unwrap(), ScopeRule::Year);
        assert_eq!(a.classify(&post(1, 9, "12")), Some(("2026".into(), 12)));
    }
}
