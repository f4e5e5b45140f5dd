//! `counterfoil verify`'s check 6: what each invoice and credit note shows
//! its customer is what the books hold. The chain (check 5) proves the
//! registry and the payments were not edited; this check holds every
//! issued number's post to them, so an edit of the post alone (its amount,
//! currency, series or number in the post's meta, the post deleted, trashed
//! or turned into another type) is named too.
//!
//! Invariants:
//! - every registry number `issued` with a post has that post, of the
//!   plugin's invoice or credit-note type (`counterfoil_invoice`,
//!   `counterfoil_cnote`: a credit note's series holds credit notes only),
//!   published or private;
//! - a plugin post's series (its issuer and period) and number are the
//!   registry row's, and its gateway, transaction, amount and currency are
//!   the payment's that took the number (where a payment did);
//! - its title shows its number: a title in the shape of the site's number
//!   template in force (`counterfoil_format`, `counterfoil_credit_note_format`,
//!   read back with the core's `NumberFormat::parse_rendered`) must read
//!   back as that number; a title in another shape (an earlier template)
//!   must at least hold the number's digits (a template holds exactly one
//!   `{seq}`, rendered in decimal);
//! - posts of other types (numbers adopted from an older plugin) are held
//!   to existence only: their meta is not the plugin's;
//! - the registry is read in keyset chunks of [`CHUNK`] rows in its
//!   primary key's order, and at most [`LIMIT`] findings are listed.
//!
//! Not judged: that the title is exactly the number as rendered when it was
//! issued (the template in force then is kept in no table; docs/cli.md).
//! MySQL/MariaDB only: WordPress keeps no posts on PostgreSQL.

use anyhow::Result;

use counterfoil_core::credit_note::Kind;
use counterfoil_core::NumberFormat;

use crate::db::{Db, Tables};

/// Registry rows read per query.
const CHUNK: usize = 10_000;
/// Findings listed at most; more are counted in one line.
const LIMIT: usize = 1_000;

/// The plugin's post types.
const INVOICE: &str = "counterfoil_invoice";
const CREDIT_NOTE: &str = "counterfoil_cnote";

/// One issued number and its post, as read: series, number, post id, the
/// post's type and status (None: no such post), its meta (series, number,
/// amount, currency), the payment's amount and currency (None: no payment
/// took the number), whether the post's gateway, transaction, amount or
/// currency differ from the payment's, and its title.
type PostRow = (
    String,
    u64,
    u64,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
);

/// The statement reading one chunk after (scope, number).
fn chunk_sql(t: &Tables) -> String {
    let meta = |key: &str| {
        format!(
            "(SELECT m.meta_value FROM `{postmeta}` m WHERE m.post_id = n.post_id \
             AND m.meta_key = '_counterfoil_{key}' ORDER BY m.meta_id LIMIT 1)",
            postmeta = t.postmeta
        )
    };
    let (scope, number, gateway, txn, amount, currency) = (
        meta("scope_key"),
        meta("number"),
        meta("gateway"),
        meta("transaction_id"),
        meta("amount"),
        meta("currency"),
    );
    format!(
        "SELECT n.scope_key, n.number, n.post_id, p.post_type, p.post_status, \
         {scope}, {number}, {amount}, {currency}, \
         CASE WHEN pay.id IS NULL THEN NULL ELSE CONCAT_WS(' ', pay.amount, pay.currency) END, \
         CASE WHEN pay.id IS NULL THEN NULL \
              WHEN {gateway} <=> pay.gateway AND {txn} <=> pay.transaction_id \
                   AND NULLIF({amount}, '') <=> pay.amount \
                   AND NULLIF({currency}, '') <=> pay.currency THEN 0 ELSE 1 END, \
         p.post_title \
         FROM `{numbers}` n \
         LEFT JOIN `{posts}` p ON p.ID = n.post_id \
         LEFT JOIN `{payments}` pay ON pay.scope_key = n.scope_key AND pay.number = n.number \
         WHERE n.status = 'issued' AND n.post_id IS NOT NULL \
         AND (n.scope_key > ? OR (n.scope_key = ? AND n.number > ?)) \
         ORDER BY n.scope_key, n.number LIMIT {CHUNK}",
        numbers = t.numbers,
        posts = t.posts,
        payments = t.payments,
    )
}

/// The site's number templates in force that read back (the invoices' and
/// the credit notes'; the plugin's defaults where an option is missing or
/// does not parse).
async fn templates(db: &mut Db, t: &Tables) -> Result<Vec<NumberFormat>> {
    let options = t.posts.replace("posts", "options");
    let mut out = Vec::new();
    for (name, default) in [
        ("counterfoil_format", counterfoil_core::DEFAULT_TEMPLATE),
        (
            "counterfoil_credit_note_format",
            counterfoil_core::credit_note::DEFAULT_TEMPLATE,
        ),
    ] {
        let set: Vec<String> = db
            .rows(
                &format!("SELECT option_value FROM `{options}` WHERE option_name = ?"),
                (name,),
            )
            .await?;
        let format = set
            .first()
            .and_then(|t| NumberFormat::parse(t).ok())
            .or_else(|| NumberFormat::parse(default).ok());
        out.extend(format.filter(NumberFormat::reads_back));
    }
    Ok(out)
}

/// Whether `title` shows `number` (see the module's doc).
fn shows(title: &str, number: u64, templates: &[NumberFormat]) -> bool {
    match templates.iter().find_map(|f| f.parse_rendered(title)) {
        Some(read) => read.seq == number,
        None => title.contains(&number.to_string()),
    }
}

/// What one row says is wrong, if anything.
fn judge(row: &PostRow, templates: &[NumberFormat]) -> Option<String> {
    let (
        scope,
        number,
        post,
        kind,
        status,
        m_scope,
        m_number,
        m_amount,
        m_currency,
        paid,
        differ,
        title,
    ) = row;
    let which = format!("series {scope}: number {number} is issued to post #{post}");
    let Some(kind) = kind else {
        return Some(format!("{which}, which does not exist"));
    };
    let status = status.as_deref().unwrap_or_default();
    if !matches!(status, "publish" | "private") {
        return Some(format!("{which}, whose status is `{status}`"));
    }
    let credit_note = counterfoil_core::credit_note::kind_of(scope) == Kind::CreditNote;
    let expected = if credit_note { CREDIT_NOTE } else { INVOICE };
    if kind != INVOICE && kind != CREDIT_NOTE {
        // Adopted from another plugin: its meta is not ours.
        return None;
    }
    if kind != expected {
        return Some(format!(
            "{which}, a `{kind}` post (its series holds `{expected}` posts)"
        ));
    }
    if m_scope.as_deref() != Some(scope.as_str())
        || m_number.as_deref() != Some(number.to_string().as_str())
    {
        return Some(format!(
            "{which}, which says it is number {} of series {}",
            m_number.as_deref().unwrap_or("(none)"),
            m_scope.as_deref().unwrap_or("(none)")
        ));
    }
    let title = title.as_deref().unwrap_or_default();
    if !shows(title, *number, templates) {
        return Some(format!(
            "{which}, whose title {title:?} does not show that number"
        ));
    }
    if *differ == Some(1) {
        let shown = format!(
            "{} {}",
            m_amount
                .as_deref()
                .filter(|a| !a.is_empty())
                .unwrap_or("(no amount)"),
            m_currency
                .as_deref()
                .filter(|c| !c.is_empty())
                .unwrap_or("(no currency)")
        );
        let paid = paid
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or("no amount");
        return Some(format!(
            "{which}, which shows {shown} or another gateway or transaction than its payment ({paid})"
        ));
    }
    None
}

/// Check 6 on a WordPress site: each finding through `push`.
pub async fn check(
    db: &mut Db,
    tables: &Tables,
    push: &mut impl FnMut(&'static str, String),
) -> Result<u64> {
    let sql = chunk_sql(tables);
    let templates = templates(db, tables).await?;
    let mut after = (String::new(), 0u64);
    let mut checked = 0u64;
    let mut found = 0usize;
    loop {
        let rows: Vec<PostRow> = db
            .rows(&sql, (after.0.as_str(), after.0.as_str(), after.1))
            .await?;
        for row in &rows {
            checked += 1;
            if let Some(finding) = judge(row, &templates) {
                found += 1;
                if found <= LIMIT {
                    push("posts", finding);
                }
            }
        }
        match rows.last() {
            Some(last) if rows.len() == CHUNK => after = (last.0.clone(), last.1),
            _ => break,
        }
    }
    if found > LIMIT {
        push(
            "posts",
            format!(
                "{} more posts differ from the books (the first {LIMIT} are listed)",
                found - LIMIT
            ),
        );
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: Option<&str>, meta_number: &str, differ: Option<i64>) -> PostRow {
        (
            "5:2026".into(),
            3,
            40,
            kind.map(str::to_owned),
            Some("publish".into()),
            Some("5:2026".into()),
            Some(meta_number.into()),
            Some("10.00".into()),
            Some("EUR".into()),
            Some("10.00 EUR".into()),
            differ,
            Some("2026-0003".into()),
        )
    }

    fn judge_default(row: &PostRow) -> Option<String> {
        judge(
            row,
            &[NumberFormat::parse(counterfoil_core::DEFAULT_TEMPLATE).unwrap()],
        )
    }

    #[test]
    fn each_difference_is_named() {
        assert_eq!(judge_default(&row(Some(INVOICE), "3", Some(0))), None);
        assert_eq!(
            judge_default(&row(Some(INVOICE), "3", None)),
            None,
            "no payment"
        );
        assert!(judge_default(&row(None, "3", Some(0)))
            .unwrap()
            .contains("does not exist"));
        assert!(judge_default(&row(Some(INVOICE), "4", Some(0)))
            .unwrap()
            .contains("says it is number 4"));
        assert!(judge_default(&row(Some(INVOICE), "3", Some(1)))
            .unwrap()
            .contains("than its payment (10.00 EUR)"));
        assert!(judge_default(&row(Some(CREDIT_NOTE), "3", Some(0)))
            .unwrap()
            .contains("a `counterfoil_cnote` post"));
        assert_eq!(
            judge_default(&row(Some("shop_invoice"), "9", Some(1))),
            None,
            "an adopted post's meta is not ours"
        );
        let mut retitled = row(Some(INVOICE), "3", Some(0));
        retitled.11 = Some("2026-0004".into());
        assert!(judge_default(&retitled)
            .unwrap()
            .contains("whose title \"2026-0004\" does not show that number"));
        retitled.11 = Some("2026-0013".into());
        assert!(
            judge_default(&retitled).is_some(),
            "the template in force reads it back as 13"
        );
        retitled.11 = Some("INV-2026-3".into());
        assert_eq!(
            judge_default(&retitled),
            None,
            "an earlier template's rendering holds the number"
        );
        let mut trashed = row(Some(INVOICE), "3", Some(0));
        trashed.4 = Some("trash".into());
        assert!(judge_default(&trashed)
            .unwrap()
            .contains("status is `trash`"));
    }
}
