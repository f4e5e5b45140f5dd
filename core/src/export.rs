//! The registry export: one definition of the columns, the filters and the
//! encodings, used by the CLI (`counterfoil export`) and, through the shared
//! vectors (`tests/vectors/export.json`), by the plugin's export.
//!
//! Invariants:
//! - the columns are [`COLUMNS`], in that order, in every format;
//! - rows come in registry order (`scope_key`, `number`), read in keyset
//!   chunks ([`ExportQuery`]), so an export of any size runs in constant memory;
//! - a CSV cell that a spreadsheet would run as a formula (starting with `=`,
//!   `+`, `-`, `@`, a tab or a carriage return) is prefixed with `'`, and any
//!   cell with a comma, quote or line break is quoted (RFC 4180);
//! - only the validated table prefix is interpolated into SQL; every filter
//!   value is a bound parameter.

use crate::error::{Error, Result};
use crate::payment::NumberStatus;
use crate::scope::YEARS;

/// The export's columns, in order: `kind` is `invoice` or `credit_note`
/// (by the series, [`crate::credit_note::kind_of`]); `refers_to`, for a
/// credit note, the number as issued of the invoice it corrects.
pub const COLUMNS: [&str; 14] = [
    "scope_key",
    "number",
    "rendered",
    "status",
    "reason",
    "gateway",
    "transaction_id",
    "amount",
    "currency",
    "post_id",
    "created_at",
    "updated_at",
    "kind",
    "refers_to",
];

/// The cells the export's queries select: every column but `kind`.
pub const SELECTED: usize = COLUMNS.len() - 1;

/// An export row from the [`SELECTED`] cells a query read (`refers_to`
/// last): `kind` is put in from the series (`scope_key`, the first cell).
pub fn row(mut selected: Vec<Option<String>>) -> Vec<Option<String>> {
    let refers_to = selected.pop().flatten();
    let kind = selected
        .first()
        .and_then(|s| s.as_deref())
        .map(|s| crate::credit_note::kind_of(s).as_str().to_owned());
    selected.push(kind);
    selected.push(refers_to);
    selected
}

/// Columns whose values are numbers in JSON Lines.
const NUMERIC: [&str; 2] = ["number", "post_id"];

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// RFC 4180 CSV with a header line, spreadsheet-safe.
    Csv,
    /// One JSON object per line, keys as [`COLUMNS`].
    Jsonl,
}

impl ExportFormat {
    /// Parses `csv` or `jsonl`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "csv" => Ok(ExportFormat::Csv),
            "jsonl" => Ok(ExportFormat::Jsonl),
            other => Err(Error::InvalidArgument {
                name: "format",
                reason: format!("unknown export format `{other}`; use csv or jsonl"),
            }),
        }
    }
}

/// One CSV cell: empty for NULL; `'` before a formula-like start; quoted
/// when it holds a comma, quote or line break (or was escaped).
pub fn csv_cell(value: Option<&str>) -> String {
    let Some(value) = value else {
        return String::new();
    };
    let risky = value.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let text = if risky {
        format!("'{value}")
    } else {
        value.to_owned()
    };
    if risky || text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// A CSV line (with `\r\n`) of cells.
pub fn csv_line<S: AsRef<str>>(values: &[Option<S>]) -> String {
    let mut line = values
        .iter()
        .map(|v| csv_cell(v.as_ref().map(AsRef::as_ref)))
        .collect::<Vec<_>>()
        .join(",");
    line.push_str("\r\n");
    line
}

/// The CSV header line.
pub fn csv_header() -> String {
    csv_line(&COLUMNS.map(Some))
}

/// A JSON Lines line (with `\n`) of one row's values, in [`COLUMNS`] order.
pub fn jsonl_line<S: AsRef<str>>(values: &[Option<S>]) -> String {
    let mut out = String::from("{");
    for (i, (name, value)) in COLUMNS.iter().zip(values).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_string(name));
        out.push(':');
        match value.as_ref().map(AsRef::as_ref) {
            None => out.push_str("null"),
            Some(v)
                if NUMERIC.contains(name)
                    && !v.is_empty()
                    && v.bytes().all(|b| b.is_ascii_digit()) =>
            {
                out.push_str(v)
            }
            Some(v) => out.push_str(&json_string(v)),
        }
    }
    out.push_str("}\n");
    out
}

/// A JSON string literal (quotes included) for `s`; the one encoder of the
/// pure core (the export, the WebAssembly answers).
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Which rows to export.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportFilter {
    /// One series.
    pub scope: Option<String>,
    /// The series of one year (keys ending in `:YYYY`, and a monthly rule's
    /// `:YYYY-MM`).
    pub year: Option<u32>,
    /// Handed out on or after this day (`YYYY-MM-DD`, UTC).
    pub from: Option<String>,
    /// Handed out on or before this day (`YYYY-MM-DD`, UTC).
    pub to: Option<String>,
    /// One status.
    pub status: Option<NumberStatus>,
}

impl ExportFilter {
    /// Checks the values (a bad one changes nothing and says what is wrong).
    pub fn validate(&self) -> Result<()> {
        if let Some(y) = self.year {
            if !YEARS.contains(&y) {
                return Err(Error::InvalidArgument {
                    name: "year",
                    reason: format!("year {y} is outside 1..=9999"),
                });
            }
        }
        for (name, day) in [("from", &self.from), ("to", &self.to)] {
            if let Some(d) = day {
                if !is_day(d) {
                    return Err(Error::InvalidArgument {
                        name,
                        reason: format!("`{d}` is not a date of the form YYYY-MM-DD"),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Whether `d` is a day `YYYY-MM-DD` of the calendar: month 1–12, and a
/// day the month has (2026-02-31 is none; 29 February only in a leap year).
pub(crate) fn is_day(d: &str) -> bool {
    let b = d.as_bytes();
    if !(b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit()))
    {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (
        d[0..4].parse::<u32>(),
        d[5..7].parse::<u32>(),
        d[8..10].parse::<u32>(),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// The keyset-paginated SELECT of an export: the WHERE clause and its
/// parameters for `filter`, then `(scope_key, number) > (?, ?)` from the
/// last row of the previous chunk, in registry order.
#[derive(Clone, Debug)]
pub struct ExportQuery {
    /// The statement; its last three parameters are the last scope key, the
    /// last number and the chunk size.
    pub sql: String,
    /// The filter's parameters, in order (strings).
    pub params: Vec<String>,
}

impl ExportQuery {
    /// The query on `numbers` (and `posts` for the rendered number, when the
    /// site has WordPress's posts table).
    pub fn new(numbers: &str, posts: Option<&str>, filter: &ExportFilter) -> Result<Self> {
        filter.validate()?;
        let mut wheres = Vec::new();
        let mut params = Vec::new();
        if let Some(s) = &filter.scope {
            wheres.push("n.scope_key = ?".to_owned());
            params.push(s.clone());
        }
        if let Some(y) = filter.year {
            wheres.push("(n.scope_key LIKE ? OR n.scope_key LIKE ?)".to_owned());
            params.push(format!("%:{y:04}"));
            params.push(format!("%:{y:04}-__"));
        }
        if let Some(d) = &filter.from {
            wheres.push("n.created_at >= ?".to_owned());
            params.push(format!("{d} 00:00:00"));
        }
        if let Some(d) = &filter.to {
            wheres.push("n.created_at <= ?".to_owned());
            params.push(format!("{d} 23:59:59"));
        }
        if let Some(st) = filter.status {
            wheres.push("n.status = ?".to_owned());
            params.push(st.as_str().to_owned());
        }
        wheres.push("(n.scope_key > ? OR (n.scope_key = ? AND n.number > ?))".to_owned());
        let payments = numbers.replace("counterfoil_numbers", "counterfoil_payments");
        let (rendered, refers_to, join, refers_join) = match posts {
            Some(p) => (
                "p.post_title",
                "rp.post_title",
                format!(" LEFT JOIN `{p}` p ON p.ID = n.post_id"),
                format!(
                    " LEFT JOIN `{numbers}` rn ON rn.scope_key = pay.refers_scope AND rn.number = pay.refers_number \
                     LEFT JOIN `{p}` rp ON rp.ID = rn.post_id"
                ),
            ),
            None => ("NULL", "NULL", String::new(), String::new()),
        };
        let sql = format!(
            "SELECT n.scope_key, CAST(n.number AS CHAR), {rendered}, n.status, n.reason, n.gateway, \
             n.transaction_id, pay.amount, pay.currency, CAST(n.post_id AS CHAR), \
             CAST(n.created_at AS CHAR), CAST(n.updated_at AS CHAR), {refers_to} \
             FROM `{numbers}` n{join} \
             LEFT JOIN `{payments}` pay ON pay.gateway = n.gateway AND pay.transaction_id = n.transaction_id{refers_join} \
             WHERE {} ORDER BY n.scope_key, n.number LIMIT ?",
            wheres.join(" AND "),
        );
        Ok(Self { sql, params })
    }

    /// The same query on PostgreSQL (`crate::pg`'s registry): the same
    /// columns, filters, order and keyset, with `$n` parameters all sent as
    /// text (the last three: last scope key, last number, chunk size), and
    /// the timestamps rendered as MySQL renders them (`YYYY-MM-DD
    /// HH:MM:SS`), so both engines export the same text.
    pub fn postgres(numbers: &str, filter: &ExportFilter) -> Result<Self> {
        filter.validate()?;
        let mut wheres = Vec::new();
        let mut params = Vec::new();
        let next = |params: &mut Vec<String>, value: String| {
            params.push(value);
            format!("${}", params.len())
        };
        if let Some(s) = &filter.scope {
            let p = next(&mut params, s.clone());
            wheres.push(format!("n.scope_key = {p}"));
        }
        if let Some(y) = filter.year {
            let p = next(&mut params, format!("%:{y:04}"));
            let m = next(&mut params, format!("%:{y:04}-__"));
            wheres.push(format!("(n.scope_key LIKE {p} OR n.scope_key LIKE {m})"));
        }
        if let Some(d) = &filter.from {
            let p = next(&mut params, format!("{d} 00:00:00"));
            wheres.push(format!("n.created_at >= {p}::text::timestamp"));
        }
        if let Some(d) = &filter.to {
            let p = next(&mut params, format!("{d} 23:59:59"));
            wheres.push(format!("n.created_at <= {p}::text::timestamp"));
        }
        if let Some(st) = filter.status {
            let p = next(&mut params, st.as_str().to_owned());
            wheres.push(format!("n.status = {p}"));
        }
        let (k, n, limit) = (params.len() + 1, params.len() + 2, params.len() + 3);
        wheres.push(format!(
            "(n.scope_key > ${k} OR (n.scope_key = ${k} AND n.number > ${n}::text::numeric))"
        ));
        let stamp = |c: &str| format!("to_char(n.{c}, 'YYYY-MM-DD HH24:MI:SS')");
        let sql = format!(
            "SELECT n.scope_key, n.number::text, NULL::text, n.status, n.reason, n.gateway, \
             n.transaction_id, pay.amount, pay.currency, n.post_id::text, {}, {}, NULL::text \
             FROM \"{numbers}\" n \
             LEFT JOIN \"{payments}\" pay ON pay.gateway = n.gateway AND pay.transaction_id = n.transaction_id \
             WHERE {} ORDER BY n.scope_key, n.number LIMIT ${limit}::text::bigint",
            stamp("created_at"),
            stamp("updated_at"),
            wheres.join(" AND "),
            payments = numbers.replace("counterfoil_numbers", "counterfoil_payments"),
        );
        Ok(Self { sql, params })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        assert_eq!(csv_cell(None), "");
        assert_eq!(csv_cell(Some("2026-0001")), "2026-0001");
        assert_eq!(
            csv_cell(Some("=HYPERLINK(\"x\")")),
            "\"'=HYPERLINK(\"\"x\"\")\""
        );
        assert_eq!(csv_cell(Some("a,b")), "\"a,b\"");
        assert_eq!(csv_header().split(',').count(), COLUMNS.len());
    }

    #[test]
    fn filters() {
        assert!(ExportFilter {
            from: Some("2026-13-01".into()),
            ..Default::default()
        }
        .validate()
        .is_err());
        let q = ExportQuery::new(
            "wp_counterfoil_numbers",
            Some("wp_posts"),
            &ExportFilter {
                year: Some(2026),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(q.params, vec!["%:2026".to_owned(), "%:2026-__".to_owned()]);
        assert!(q.sql.contains("wp_counterfoil_payments"));
    }
}
