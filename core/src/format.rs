//! Number formats: how an allocated number is rendered, e.g. `2019-0002`.
//!
//! A template is literal text with tokens in braces:
//!
//! | token        | renders                                             |
//! |--------------|-----------------------------------------------------|
//! | `{seq}`      | the number, no padding                              |
//! | `{seq:0N}`   | the number zero-padded to at least N digits (1–20)  |
//! | `{year}`     | the year, four digits                               |
//! | `{yy}`       | the last two digits of the year                     |
//! | `{month}`    | the month, two digits                               |
//! | `{{` / `}}`  | a literal brace                                     |
//!
//! Invariants: a parsed [`NumberFormat`] holds exactly one `{seq…}` token, so
//! two different numbers of one series always render differently; padding is a
//! minimum width, never a maximum (`{seq:04}` renders 10000 as `10000`).
//! Parse errors are typed and carry the byte offset where the problem starts.

use std::fmt::{self, Write as _};

use crate::error::{FormatError, FormatErrorKind};
use crate::fiscal::{self, PeriodRule};
use crate::scope::YEARS;

/// The default template: `2019-0002`.
pub const DEFAULT_TEMPLATE: &str = "{year}-{seq:04}";

/// Widest padding accepted in `{seq:0N}` (a u64 has at most 20 digits).
pub const MAX_PAD: usize = 20;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Seq { pad: usize },
    Year,
    YearTwoDigits,
    Month,
    FiscalYear,
    FiscalYearEnd,
}

/// A parsed, validated number template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberFormat {
    template: String,
    pieces: Vec<Piece>,
}

/// The calendar period a number is rendered for (year and month tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    year: u32,
    month: u32,
    rule: PeriodRule,
}

impl Period {
    /// A period; `year` in 1..=9999 and `month` in 1..=12.
    pub fn new(year: u32, month: u32) -> Result<Self, FormatError> {
        if !YEARS.contains(&year) {
            return Err(FormatError::new(FormatErrorKind::YearOutOfRange(year), 0));
        }
        if !(1..=12).contains(&month) {
            return Err(FormatError::new(FormatErrorKind::MonthOutOfRange(month), 0));
        }
        Ok(Self {
            year,
            month,
            rule: PeriodRule::CalendarYear,
        })
    }

    /// This period under the site's period `rule`, for `{fy}` and
    /// `{fy_end}` (the year is then the one the period starts in).
    pub fn with_rule(self, rule: PeriodRule) -> Self {
        Self { rule, ..self }
    }

    /// The UTC period of a Unix time (seconds since 1970-01-01), for callers
    /// that render "now". Pure: the caller reads the clock.
    pub fn from_unix_seconds(secs: i64) -> Result<Self, FormatError> {
        let (year, month) = civil_year_month(secs.div_euclid(86_400));
        let year = u32::try_from(year)
            .map_err(|_| FormatError::new(FormatErrorKind::YearOutOfRange(0), 0))?;
        Self::new(year, month)
    }

    /// The year.
    pub fn year(&self) -> u32 {
        self.year
    }

    /// The month (1–12).
    pub fn month(&self) -> u32 {
        self.month
    }

    /// Reads the stored form `YYYY-MM` (as written by `Display`).
    pub fn parse_stored(text: &str) -> Option<Self> {
        let (y, m) = text.split_once('-')?;
        if y.len() != 4 || m.len() != 2 || !(y.bytes().chain(m.bytes())).all(|b| b.is_ascii_digit())
        {
            return None;
        }
        Self::new(y.parse().ok()?, m.parse().ok()?).ok()
    }
}

impl fmt::Display for Period {
    /// `YYYY-MM`, as stored with a held payment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

impl NumberFormat {
    /// Parses a template, reporting the first problem and where it is.
    pub fn parse(template: &str) -> Result<Self, FormatError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut seq_seen: Option<usize> = None;
        let bytes = template.as_bytes();
        let mut i = 0;
        while i < template.len() {
            let c = template[i..].chars().next().expect("in bounds");
            match c {
                '{' if bytes.get(i + 1) == Some(&b'{') => {
                    literal.push('{');
                    i += 2;
                }
                '}' if bytes.get(i + 1) == Some(&b'}') => {
                    literal.push('}');
                    i += 2;
                }
                '}' => return Err(FormatError::new(FormatErrorKind::UnmatchedClose, i)),
                '{' => {
                    let close = template[i..]
                        .find('}')
                        .map(|off| i + off)
                        .ok_or(FormatError::new(FormatErrorKind::Unclosed, i))?;
                    let body = &template[i + 1..close];
                    if body.contains('{') {
                        return Err(FormatError::new(FormatErrorKind::Unclosed, i));
                    }
                    let piece = parse_token(body, i)?;
                    if matches!(piece, Piece::Seq { .. }) {
                        if seq_seen.is_some() {
                            return Err(FormatError::new(FormatErrorKind::DuplicateSeq, i));
                        }
                        seq_seen = Some(i);
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(piece);
                    i = close + 1;
                }
                c if c.is_control() => {
                    return Err(FormatError::new(FormatErrorKind::ControlCharacter, i))
                }
                c => {
                    literal.push(c);
                    i += c.len_utf8();
                }
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        if seq_seen.is_none() {
            return Err(FormatError::new(
                FormatErrorKind::MissingSeq,
                template.len(),
            ));
        }
        Ok(Self {
            template: template.to_owned(),
            pieces,
        })
    }

    /// The template text this format was parsed from.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// Renders `number` for `period`.
    pub fn render(&self, number: u64, period: Period) -> String {
        let mut out = String::with_capacity(self.template.len() + 8);
        for piece in &self.pieces {
            // Writing into a String cannot fail.
            let _ = match piece {
                Piece::Literal(s) => out.write_str(s),
                Piece::Seq { pad } => write!(out, "{number:0pad$}"),
                Piece::Year => write!(out, "{:04}", period.year),
                Piece::YearTwoDigits => write!(out, "{:02}", period.year % 100),
                Piece::Month => write!(out, "{:02}", period.month),
                Piece::FiscalYear => out.write_str(&fiscal::fiscal_label(period.rule, period.year)),
                Piece::FiscalYearEnd => {
                    write!(out, "{:04}", fiscal::fiscal_end(period.rule, period.year))
                }
            };
        }
        out
    }
}

/// The parts read back from a rendered number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The number.
    pub seq: u64,
    /// The year, when the template has `{year}` (four digits).
    pub year: Option<u32>,
    /// The month, when the template has `{month}`.
    pub month: Option<u32>,
}

impl NumberFormat {
    /// Whether every rendering can be read back by
    /// [`NumberFormat::parse_rendered`]: each `{seq}` (whose width varies)
    /// is followed by the end or by a literal that does not start with a
    /// digit, and no fiscal-year token is used. `{seq}{year}` or `{seq}7`
    /// cannot be read back (where does the number end?).
    pub fn reads_back(&self) -> bool {
        self.pieces
            .iter()
            .enumerate()
            .all(|(i, piece)| match piece {
                Piece::FiscalYear | Piece::FiscalYearEnd => false,
                Piece::Seq { .. } => match self.pieces.get(i + 1) {
                    None => true,
                    Some(Piece::Literal(l)) => !l.starts_with(|c: char| c.is_ascii_digit()),
                    Some(_) => false,
                },
                _ => true,
            })
    }

    /// Reads a rendered number back: `Some` only when `text` is exactly what
    /// [`NumberFormat::render`] produces for the parts found (so `2019-00010`
    /// is not a rendering of `{year}-{seq:04}`, and neither is `2019-0002 `).
    pub fn parse_rendered(&self, text: &str) -> Option<Rendered> {
        let mut rest = text;
        let mut out = Rendered {
            seq: 0,
            year: None,
            month: None,
        };
        let mut yy: Option<u32> = None;
        let mut fiscal_seen = false;
        let take_digits = |s: &str, n: Option<usize>| -> Option<usize> {
            let all = s.bytes().take_while(u8::is_ascii_digit).count();
            match n {
                Some(n) if all >= n => Some(n),
                Some(_) => None,
                None if all > 0 => Some(all),
                None => None,
            }
        };
        for piece in &self.pieces {
            match piece {
                Piece::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Piece::Seq { .. } => {
                    let n = take_digits(rest, None)?;
                    out.seq = rest[..n].parse().ok()?;
                    rest = &rest[n..];
                }
                Piece::Year => {
                    let n = take_digits(rest, Some(4))?;
                    out.year = Some(rest[..n].parse().ok()?);
                    rest = &rest[n..];
                }
                Piece::YearTwoDigits => {
                    let n = take_digits(rest, Some(2))?;
                    yy = Some(rest[..n].parse().ok()?);
                    rest = &rest[n..];
                }
                Piece::Month => {
                    let n = take_digits(rest, Some(2))?;
                    out.month = Some(rest[..n].parse().ok()?);
                    rest = &rest[n..];
                }
                Piece::FiscalYear | Piece::FiscalYearEnd => {
                    let n = take_digits(rest, Some(4))?;
                    let y: u32 = rest[..n].parse().ok()?;
                    rest = &rest[n..];
                    let spans = matches!(piece, Piece::FiscalYear)
                        && rest.len() >= 3
                        && rest.as_bytes()[0] == b'-'
                        && rest[1..3].bytes().all(|b| b.is_ascii_digit());
                    if spans {
                        rest = &rest[3..];
                        fiscal_seen = true;
                    }
                    let start = if matches!(piece, Piece::FiscalYearEnd) {
                        y.checked_sub(u32::from(fiscal_seen))?
                    } else {
                        y
                    };
                    out.year = Some(start);
                }
            }
        }
        if !rest.is_empty() {
            return None;
        }
        // Canonical: rendering the parts gives the text back.
        let year = out.year.unwrap_or(2000 + yy.unwrap_or(0));
        let rule = if fiscal_seen {
            PeriodRule::FiscalYear { month: 4, day: 1 }
        } else {
            PeriodRule::CalendarYear
        };
        let period = Period::new(year.max(1), out.month.unwrap_or(1))
            .ok()?
            .with_rule(rule);
        if let (Some(y), None) = (yy, out.year) {
            if year % 100 != y {
                return None;
            }
        }
        (self.render(out.seq, period) == text).then_some(out)
    }
}

impl Default for NumberFormat {
    fn default() -> Self {
        Self::parse(DEFAULT_TEMPLATE).expect("the default template parses")
    }
}

impl fmt::Display for NumberFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.template)
    }
}

impl std::str::FromStr for NumberFormat {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Days since 1970-01-01 to (year, month), proleptic Gregorian calendar.
fn civil_year_month(days: i64) -> (i64, u32) {
    let (year, month, _) = civil_from_days(days);
    (year, month)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

fn parse_token(body: &str, at: usize) -> Result<Piece, FormatError> {
    let (name, spec) = match body.split_once(':') {
        Some((n, s)) => (n, Some(s)),
        None => (body, None),
    };
    let piece = match name {
        "seq" => Piece::Seq {
            pad: match spec {
                None => 0,
                Some(spec) => parse_pad(spec, at)?,
            },
        },
        "year" => Piece::Year,
        "yy" => Piece::YearTwoDigits,
        "month" => Piece::Month,
        "fy" => Piece::FiscalYear,
        "fy_end" => Piece::FiscalYearEnd,
        "" => return Err(FormatError::new(FormatErrorKind::EmptyToken, at)),
        other => {
            return Err(FormatError::new(
                FormatErrorKind::UnknownToken(other.to_owned()),
                at,
            ))
        }
    };
    if spec.is_some() && !matches!(piece, Piece::Seq { .. }) {
        return Err(FormatError::new(
            FormatErrorKind::UnexpectedSpec(name.to_owned()),
            at,
        ));
    }
    Ok(piece)
}

fn parse_pad(spec: &str, at: usize) -> Result<usize, FormatError> {
    let bad = || FormatError::new(FormatErrorKind::BadPadding(spec.to_owned()), at);
    let digits = spec.strip_prefix('0').ok_or_else(bad)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 2 {
        return Err(bad());
    }
    let pad: usize = digits.parse().map_err(|_| bad())?;
    if pad == 0 || pad > MAX_PAD {
        return Err(bad());
    }
    Ok(pad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_templates_read_back() {
        let reads = |t: &str| NumberFormat::parse(t).unwrap().reads_back();
        assert!(reads("{year}-{seq:04}"));
        assert!(reads("INV/{yy}{month}/{seq}"));
        assert!(reads("{seq}"));
        assert!(!reads("{seq}{year}"), "where would the number end?");
        assert!(!reads("{seq}7"));
        assert!(!reads("{fy}/{seq}"));
        // The fuzz check holds a template that reads back to reading back.
        crate::fuzz_checks::format("{year}-{seq:04}");
        crate::fuzz_checks::format("{seq}{year}");
    }

    fn p(y: u32, m: u32) -> Period {
        Period::new(y, m).unwrap()
    }

    #[test]
    fn default_renders_the_article_examples() {
        let f = NumberFormat::default();
        assert_eq!(f.render(2, p(2019, 1)), "2019-0002");
        assert_eq!(f.render(3, p(2019, 1)), "2019-0003");
        assert_eq!(f.render(10000, p(2019, 1)), "2019-10000");
        assert_eq!(f.render(u64::MAX, p(2019, 1)), "2019-18446744073709551615");
    }

    #[test]
    fn tokens_and_escapes() {
        let f = NumberFormat::parse("INV/{yy}{month}/{seq:06} {{x}}").unwrap();
        assert_eq!(f.render(42, p(2007, 3)), "INV/0703/000042 {x}");
        let f = NumberFormat::parse("{seq}").unwrap();
        assert_eq!(f.render(7, p(1, 1)), "7");
        assert_eq!(
            NumberFormat::parse("{year}").unwrap_err().kind,
            FormatErrorKind::MissingSeq
        );
    }

    #[test]
    fn errors_say_where() {
        let e = NumberFormat::parse("{year}-{sequence}").unwrap_err();
        assert_eq!(e.at, 7);
        assert_eq!(e.kind, FormatErrorKind::UnknownToken("sequence".into()));
        assert_eq!(NumberFormat::parse("ab{seq").unwrap_err().at, 2);
        assert_eq!(
            NumberFormat::parse("{seq}}").unwrap_err().kind,
            FormatErrorKind::UnmatchedClose
        );
        assert_eq!(NumberFormat::parse("{seq}{seq}").unwrap_err().at, 5);
        assert!(matches!(
            NumberFormat::parse("{seq:4}").unwrap_err().kind,
            FormatErrorKind::BadPadding(_)
        ));
        assert!(NumberFormat::parse("{seq:021}").is_err());
        assert!(NumberFormat::parse("{seq:020}").is_ok());
        assert!(NumberFormat::parse("{year:04}{seq}").is_err());
        let msg = NumberFormat::parse("{year}-{sequence}")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("byte 7"), "{msg}");
    }

    #[test]
    fn period_from_unix_time() {
        let at = |secs| {
            let p = Period::from_unix_seconds(secs).unwrap();
            (p.year(), p.month())
        };
        assert_eq!(at(0), (1970, 1));
        assert_eq!(at(1_577_836_800), (2020, 1)); // 2020-01-01T00:00:00Z
        assert_eq!(at(1_577_836_799), (2019, 12));
        assert_eq!(at(951_782_400), (2000, 2)); // 2000-02-29
        assert_eq!(at(1_796_083_200), (2026, 12)); // 2026-12-01
        assert_eq!(at(1_796_083_199), (2026, 11));
        assert!(Period::from_unix_seconds(-62_200_000_000).is_err()); // year 0
    }

    #[test]
    fn rendered_numbers_read_back() {
        let f = NumberFormat::default();
        let r = f.parse_rendered("2019-0002").unwrap();
        assert_eq!((r.seq, r.year, r.month), (2, Some(2019), None));
        assert_eq!(f.parse_rendered("2019-10000").unwrap().seq, 10000);
        for bad in [
            "2019-002",
            "2019-00010",
            "2019-0002 ",
            "19-0002",
            "2019-",
            "x2019-0002",
            "2019-0x02",
            "",
        ] {
            assert_eq!(f.parse_rendered(bad), None, "{bad}");
        }
        let g = NumberFormat::parse("INV/{yy}{month}/{seq:06}").unwrap();
        let r = g.parse_rendered("INV/0703/000042").unwrap();
        assert_eq!((r.seq, r.month), (42, Some(3)));
        assert_eq!(g.parse_rendered("INV/0713/000042"), None, "month 13");
        let h = NumberFormat::parse("{seq}").unwrap();
        assert_eq!(h.parse_rendered("0042"), None);
        assert_eq!(h.parse_rendered("42").unwrap().seq, 42);
    }

    #[test]
    fn period_bounds() {
        assert!(Period::new(0, 1).is_err());
        assert!(Period::new(10000, 1).is_err());
        assert!(Period::new(2019, 0).is_err());
        assert!(Period::new(2019, 13).is_err());
    }
}
