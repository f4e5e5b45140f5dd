//! What the customer reads: the pages of an invoice or a credit note, laid
//! out on A4 from the computed [`Document`] in the page's language
//! ([`Labels`]) — number, dates (issue, due, supply or invoicing period),
//! seller, buyer and deliver-to address, the orders it answers, the lines
//! (with their SKU and GTIN), the VAT breakdown with each exemption, the
//! totals (with each document-level allowance and charge), how it is paid
//! or to be paid, and its notes.
//!
//! Invariants: every amount shown is one the document computed (the same
//! the embedded XML states), written with the currency's places; every
//! term the page shows is the one the XML states (the supply date as
//! [`delivery::of`] writes it, the means as [`Document::means`] gives
//! them: [`payment`]); "paid" only when nothing is due; nothing is cut
//! off — a long field wraps, and what does not fit continues on a new page
//! (the lines and the VAT breakdown under their header), each page saying
//! its number of the whole — except a field longer than 24 lines, which
//! ends in a line `…` (the embedded XML carries it whole); the layout is
//! linear in the text's length. The drawing itself (margins, greys,
//! wrapping, new pages) is [`super::canvas`]'s.

use pdf_writer::Content;

use super::canvas::{Pages, GREY, INK, LEFT, RIGHT, TOP};
use super::font::Font;
use super::labels::{Key, Labels};
use super::payment;
use crate::einvoice::model::VatBreakdown;
use crate::einvoice::{delivery, Address, Dec, Document, Kind, Party, VatCategory};

pub use super::canvas::{HEIGHT, WIDTH};

/// The lines table's columns: the right edges of the numbers.
const COL_QTY: f32 = 338.0;
const COL_PRICE: f32 = 418.0;
const COL_VAT: f32 = 474.0;
const COL_AMOUNT: f32 = RIGHT;
/// The description's width.
const DESC_WIDTH: f32 = 236.0;

/// A party's lines as printed: its name first.
fn party_lines(p: &Party, l: &Labels) -> Vec<String> {
    let mut out = vec![p.name.clone()];
    let opt = |v: &Option<String>| Party::text(v).map(str::to_owned);
    if let Some(street) = opt(&p.street) {
        out.push(street);
    }
    let place = [opt(&p.postcode), opt(&p.city)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    if !place.is_empty() {
        out.push(place);
    }
    out.push(p.country.clone());
    for (v, key) in [
        (&p.vat_id, Key::VatId),
        (&p.tax_registration_id, Key::TaxNumber),
        (&p.legal_id, Key::Registration),
    ] {
        if let Some(id) = Party::text(v) {
            out.push(l.fill(key, &[("id", id)]));
        }
    }
    if let Some(email) = opt(&p.email) {
        out.push(email);
    }
    out
}

/// A deliver-to address's lines as printed: its name first, when given.
fn address_lines(a: &Address) -> Vec<String> {
    let place = [Party::text(&a.postcode), Party::text(&a.city)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    [&a.name, &a.street]
        .into_iter()
        .filter_map(|v| Party::text(v).map(str::to_owned))
        .chain((!place.is_empty()).then_some(place))
        .chain([a.country.clone()])
        .collect()
}

/// What a VAT category is called on the page.
fn category_name(c: VatCategory, l: &Labels) -> String {
    l.get(match c {
        VatCategory::S => Key::CategoryS,
        VatCategory::Z => Key::CategoryZ,
        VatCategory::E => Key::CategoryE,
        VatCategory::AE => Key::CategoryAe,
        VatCategory::K => Key::CategoryK,
        VatCategory::G => Key::CategoryG,
        VatCategory::O => Key::CategoryO,
    })
    .to_owned()
}

/// A breakdown's exemption as the document states it beyond its
/// category's name: the reason its lines gave (BT-120) and the code
/// (BT-121). Standard and zero-rated categories state none.
fn exemption(b: &VatBreakdown) -> Option<String> {
    if matches!(b.category, VatCategory::S | VatCategory::Z) {
        return None;
    }
    let reason =
        Party::text(&b.exemption_reason).filter(|r| Some(*r) != b.category.exemption_reason());
    match (reason, Party::text(&b.exemption_code)) {
        (Some(r), Some(c)) => Some(format!("{r} ({c})")),
        (Some(r), None) => Some(r.to_owned()),
        (None, Some(c)) => Some(c.to_owned()),
        (None, None) => None,
    }
}

/// A unit of measure (UN/ECE Rec. 20/21) as shown after a quantity: none
/// for one piece, a symbol where there is one, else the code.
fn unit(code: &str) -> Option<&str> {
    Some(match code {
        "C62" | "H87" | "EA" => return None,
        "KGM" => "kg",
        "GRM" => "g",
        "TNE" => "t",
        "LTR" => "l",
        "MLT" => "ml",
        "MTR" => "m",
        "CMT" => "cm",
        "MMT" => "mm",
        "KMT" => "km",
        "MTK" => "m²",
        "MTQ" => "m³",
        "HUR" => "h",
        "MIN" => "min",
        "SEC" => "s",
        "KWH" => "kWh",
        other => other,
    })
}

fn rate(category: VatCategory, rate: Dec, l: &Labels) -> String {
    format!("{} {} %", category.code(), l.number(&rate.trimmed()))
}

/// A price as shown: at least the currency's places, its own beyond them.
fn price(d: &Document, v: Dec, l: &Labels) -> String {
    if v.scale() <= d.places {
        l.number(&d.amount(v))
    } else {
        l.number(&v.to_string())
    }
}

fn table_header(p: &mut Pages, l: &Labels) {
    let y = p.y;
    p.text(LEFT, y, 8.0, GREY, l.get(Key::Description));
    p.right(COL_QTY, y, 8.0, GREY, l.get(Key::Quantity));
    p.right(COL_PRICE, y, 8.0, GREY, l.get(Key::UnitPrice));
    p.right(COL_VAT, y, 8.0, GREY, l.get(Key::Vat));
    p.right(COL_AMOUNT, y, 8.0, GREY, l.get(Key::Amount));
    p.rule(LEFT, RIGHT, y - 5.0, 0.6, INK);
    p.y -= 19.0;
}

fn breakdown_header(p: &mut Pages, l: &Labels) {
    p.text(LEFT, p.y, 8.0, GREY, l.get(Key::VatBreakdown));
    p.right(COL_PRICE, p.y, 8.0, GREY, l.get(Key::TaxableAmount));
    p.right(COL_AMOUNT, p.y, 8.0, GREY, l.get(Key::Vat));
    p.y -= 14.0;
}

/// The heading: what it is, its number, dates and "paid" on the right, and
/// the invoice a credit note corrects.
fn heading(p: &mut Pages, d: &Document, l: &Labels) {
    let (title, issued) = match &d.input.kind {
        Kind::Invoice => (Key::InvoiceTitle, Key::Issued),
        Kind::CreditNote { .. } => (Key::CreditNoteTitle, Key::IssuedCreditNote),
    };
    p.text(LEFT, p.y - 14.0, 22.0, INK, l.get(title));
    p.right(RIGHT, p.y - 4.0, 12.0, INK, &d.input.number);
    let mut y = p.y - 19.0;
    let date = l.date(&d.input.issue_date);
    p.right(RIGHT, y, 9.0, GREY, &l.fill(issued, &[("date", &date)]));
    if let Some(due) = Party::text(&d.input.due_date) {
        y -= 12.0;
        p.right(
            RIGHT,
            y,
            9.0,
            GREY,
            &l.fill(Key::Due, &[("date", &l.date(due))]),
        );
    }
    // "Paid" only when nothing is due (Document::paid_in_full).
    if d.paid_in_full() {
        y -= 15.0;
        let stamp = match d.input.kind {
            Kind::Invoice => Key::PaidStamp,
            Kind::CreditNote { .. } => Key::SettledStamp,
        };
        p.right(RIGHT, y, 10.0, INK, l.get(stamp));
    }
    p.y = (p.y - 40.0).min(y - 6.0);
    if let Kind::CreditNote {
        preceding,
        preceding_date,
    } = &d.input.kind
    {
        let text = match Party::text(preceding_date) {
            Some(date) => l.fill(
                Key::CorrectsOf,
                &[("number", preceding), ("date", &l.date(date))],
            ),
            None => l.fill(Key::Corrects, &[("number", preceding)]),
        };
        p.paragraph(LEFT, RIGHT - LEFT, 10.0, INK, &text);
        p.y -= 3.0;
    }
    p.y -= 14.0;
}

/// Seller, buyer and (when given) the deliver-to address, side by side.
fn parties(p: &mut Pages, d: &Document, l: &Labels) {
    let mut columns = vec![
        (l.get(Key::From), party_lines(&d.input.seller, l), true),
        (l.get(Key::BillTo), party_lines(&d.input.buyer, l), true),
    ];
    if let Some(a) = &d.input.details.deliver_to {
        columns.push((
            l.get(Key::DeliverTo),
            address_lines(a),
            Party::text(&a.name).is_some(),
        ));
    }
    let (step, width) = if columns.len() == 3 {
        let third = (RIGHT - LEFT) / 3.0;
        (third, third - 14.0)
    } else {
        (WIDTH / 2.0 + 10.0 - LEFT, WIDTH / 2.0 - 60.0)
    };
    let top = p.y;
    let mut lowest = top;
    for (i, (label, lines, named)) in columns.into_iter().enumerate() {
        let x = LEFT + step * i as f32;
        let mut y = top;
        p.text(x, y, 8.0, GREY, label);
        y -= 15.0;
        for (j, line) in lines.iter().enumerate() {
            let size = if j == 0 && named { 11.0 } else { 9.0 };
            for part in p.wrap(line, width, size) {
                p.text(x, y, size, INK, &part);
                y -= size + 3.0;
            }
        }
        lowest = lowest.min(y);
    }
    p.y = lowest - 8.0;
}

/// What the document answers and when it was supplied: label, value.
fn facts(p: &mut Pages, d: &Document, l: &Labels) {
    let x = &d.input.details;
    let mut rows: Vec<(&str, String)> = Vec::new();
    for (v, key) in [
        (&d.input.buyer_reference, Key::YourReference),
        (&x.order_reference, Key::PurchaseOrder),
        (&x.sales_order_reference, Key::SalesOrder),
    ] {
        if let Some(v) = Party::text(v) {
            rows.push((l.get(key), v.to_owned()));
        }
    }
    if let Some(date) = delivery::of(d).and_then(|s| s.date) {
        rows.push((l.get(Key::DeliveryDate), l.date(date)));
    }
    let (start, end) = (Party::text(&x.period_start), Party::text(&x.period_end));
    let period = match (start, end) {
        (Some(s), Some(e)) => Some(l.fill(
            Key::PeriodRange,
            &[("start", &l.date(s)), ("end", &l.date(e))],
        )),
        (Some(s), None) => Some(l.fill(Key::PeriodFrom, &[("start", &l.date(s))])),
        (None, Some(e)) => Some(l.fill(Key::PeriodUntil, &[("end", &l.date(e))])),
        (None, None) => None,
    };
    if let Some(period) = period {
        rows.push((l.get(Key::Period), period));
    }
    if rows.is_empty() {
        p.y -= 14.0;
        return;
    }
    let widest = rows
        .iter()
        .map(|(label, _)| p.font.width(label, 9.0))
        .fold(0.0, f32::max);
    let value_x = LEFT + widest.min(200.0) + 12.0;
    for (label, value) in rows {
        let parts = p.wrap(&value, RIGHT - value_x, 9.0);
        p.room(12.0);
        p.text(LEFT, p.y, 9.0, GREY, label);
        for part in parts {
            p.room(12.0);
            p.text(value_x, p.y, 9.0, INK, &part);
            p.y -= 12.0;
        }
        p.y -= 2.0;
    }
    p.y -= 14.0;
}

/// The lines table.
fn lines(p: &mut Pages, d: &Document, l: &Labels) {
    table_header(p, l);
    for line in &d.lines {
        let name = p.wrap(&line.input.name, DESC_WIDTH, 9.0);
        let ids = [
            Party::text(&line.input.details.seller_item_id)
                .map(|v| l.fill(Key::Sku, &[("sku", v)])),
            Party::text(&line.input.details.gtin).map(|v| l.fill(Key::Gtin, &[("gtin", v)])),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ");
        let ids = if ids.is_empty() {
            Vec::new()
        } else {
            p.wrap(&ids, DESC_WIDTH, 7.5)
        };
        let height = name.len() as f32 * 12.0 + ids.len() as f32 * 10.0 + 6.0;
        if p.room(height) {
            table_header(p, l);
        }
        let y = p.y;
        for (i, part) in name.iter().enumerate() {
            p.text(LEFT, y - i as f32 * 12.0, 9.0, INK, part);
        }
        let below = y - name.len() as f32 * 12.0 + 1.0;
        for (i, part) in ids.iter().enumerate() {
            p.text(LEFT, below - i as f32 * 10.0, 7.5, GREY, part);
        }
        let quantity = l.number(&line.input.quantity.trimmed());
        let quantity = match unit(line.unit_code()) {
            Some(u) => format!("{quantity} {u}"),
            None => quantity,
        };
        p.right(COL_QTY, y, 9.0, INK, &quantity);
        p.right(COL_PRICE, y, 9.0, INK, &price(d, line.input.unit_price, l));
        p.right(
            COL_VAT,
            y,
            9.0,
            INK,
            &rate(line.input.vat_category, line.input.vat_rate, l),
        );
        p.right(COL_AMOUNT, y, 9.0, INK, &l.number(&d.amount(line.net)));
        p.y -= height;
    }
    p.rule(LEFT, RIGHT, p.y + 8.0, 0.4, GREY);
    p.y -= 10.0;
}

/// The VAT breakdown: one row a category and rate, with its exemption.
fn breakdown(p: &mut Pages, d: &Document, l: &Labels) {
    let label_width = COL_PRICE - 70.0 - LEFT;
    let rows: Vec<_> = d
        .breakdown
        .iter()
        .map(|b| {
            let label = format!(
                "{}  {}",
                rate(b.category, b.rate, l),
                category_name(b.category, l)
            );
            let label = p.wrap(&label, label_width, 9.0);
            let reason = exemption(b)
                .map(|r| p.wrap(&r, RIGHT - LEFT - 12.0, 8.0))
                .unwrap_or_default();
            (b, label, reason)
        })
        .collect();
    let height = |label: &[String], reason: &[String]| {
        label.len() as f32 * 12.0 + reason.len() as f32 * 10.0 + 2.0
    };
    let first = rows.first().map_or(0.0, |(_, a, r)| height(a, r));
    p.room(14.0 + first);
    breakdown_header(p, l);
    for (b, label, reason) in rows {
        if p.room(height(&label, &reason)) {
            breakdown_header(p, l);
        }
        let y = p.y;
        p.right(COL_PRICE, y, 9.0, INK, &l.number(&d.amount(b.base)));
        p.right(COL_AMOUNT, y, 9.0, INK, &l.number(&d.amount(b.tax)));
        for part in &label {
            p.text(LEFT, p.y, 9.0, INK, part);
            p.y -= 12.0;
        }
        for part in &reason {
            p.text(LEFT + 12.0, p.y + 1.0, 8.0, GREY, part);
            p.y -= 10.0;
        }
        p.y -= 2.0;
    }
    p.y -= 10.0;
}

/// The widest a label of the totals is: an allowance's or a charge's
/// reason wraps.
const TOTALS_LABEL_WIDTH: f32 = 250.0;

/// The totals: kept together when they fit on a page. With document-level
/// allowances and charges, the lines' total first, then each of them (an
/// allowance taken off, a charge added), then the total without VAT.
fn totals(p: &mut Pages, d: &Document, l: &Labels) {
    let cur = d.input.currency.as_str();
    let t = &d.totals;
    let money = |v: Dec| format!("{} {cur}", l.number(&d.amount(v)));
    // Label (its lines), amount, size, whether a rule goes above it.
    let mut rows = Vec::new();
    if !d.allowance_charges.is_empty() {
        rows.push((
            vec![l.get(Key::LinesTotal).to_owned()],
            money(t.lines),
            9.0,
            false,
        ));
        for a in &d.allowance_charges {
            let (key, sign) = if a.charge {
                (Key::Charge, "")
            } else {
                (Key::Allowance, "-")
            };
            let label = l.fill(key, &[("reason", a.reason_text())]);
            rows.push((
                p.wrap(&label, TOTALS_LABEL_WIDTH, 9.0),
                format!(
                    "{} {cur}",
                    l.number(&format!("{sign}{}", d.amount(a.amount)))
                ),
                9.0,
                false,
            ));
        }
    }
    rows.push((
        vec![l.get(Key::TotalWithoutVat).to_owned()],
        money(t.without_vat),
        9.0,
        false,
    ));
    rows.push((
        vec![l.get(Key::TotalVat).to_owned()],
        money(t.vat),
        9.0,
        false,
    ));
    let x = &d.input.details;
    if let (Some(c), Some(v)) = (Party::text(&x.tax_currency), x.vat_in_tax_currency) {
        let places = crate::einvoice::model::document_places(c);
        let v = v.round(places).unwrap_or(v);
        rows.push((
            vec![l.fill(Key::VatInCurrency, &[("currency", c)])],
            format!("{} {c}", l.number(&v.to_string())),
            9.0,
            false,
        ));
    }
    rows.push((
        vec![l.get(Key::Total).to_owned()],
        money(t.with_vat),
        12.0,
        true,
    ));
    if let Some(r) = t.rounding {
        rows.push((vec![l.get(Key::Rounding).to_owned()], money(r), 9.0, false));
    }
    let (paid, due) = match d.input.kind {
        Kind::Invoice => (Key::Paid, Key::AmountDue),
        Kind::CreditNote { .. } => (Key::Refunded, Key::ToRefund),
    };
    rows.push((vec![l.get(paid).to_owned()], money(t.paid), 9.0, false));
    rows.push((vec![l.get(due).to_owned()], money(t.due), 10.0, false));
    // A row: its first line and 6 points, each further line `size + 2`;
    // 5 more above a rule.
    let row_height = |parts: &[String], size: f32, rule: bool| {
        size + 6.0 + (parts.len() - 1) as f32 * (size + 2.0) + if rule { 5.0 } else { 0.0 }
    };
    let height: f32 = rows
        .iter()
        .map(|(parts, _, size, rule)| row_height(parts, *size, *rule))
        .sum();
    p.room(height);
    for (parts, amount, size, rule) in rows {
        // Kept together when the whole fits; else row by row, never below
        // the footer.
        p.room(row_height(&parts, size, rule));
        if rule {
            p.y -= 5.0;
            p.rule(COL_PRICE - 60.0, RIGHT, p.y + size + 5.0, 0.6, INK);
        }
        let grey = if size > 9.0 { INK } else { GREY };
        let y = p.y;
        for (i, part) in parts.iter().enumerate() {
            p.right(
                COL_VAT - 20.0,
                y - i as f32 * (size + 2.0),
                size,
                grey,
                part,
            );
        }
        p.right(COL_AMOUNT, y, size, INK, &amount);
        // One line moves as it always has (the same arithmetic, the same bytes).
        p.y -= size + 6.0 + (parts.len() - 1) as f32 * (size + 2.0);
    }
    p.y -= 12.0;
}

/// The notes (BT-22), under their heading.
fn notes(p: &mut Pages, d: &Document, l: &Labels) {
    let notes = &d.input.details.notes;
    if notes.is_empty() {
        return;
    }
    p.y -= 8.0;
    p.room(8.0 + 12.0 + 12.0);
    p.text(LEFT, p.y, 8.0, GREY, l.get(Key::Notes));
    p.y -= 13.0;
    for note in notes {
        p.paragraph(LEFT, RIGHT - LEFT, 9.0, INK, &note.text);
        p.y -= 3.0;
    }
}

/// The content streams of a document's pages, and the strings they show,
/// in order, when `shown` is given.
pub fn lay_out(
    d: &Document,
    font: &mut Font,
    l: &Labels,
    shown: Option<&mut Vec<String>>,
) -> Vec<Vec<u8>> {
    let words = l.get(match d.input.kind {
        Kind::Invoice => Key::Invoice,
        Kind::CreditNote { .. } => Key::CreditNote,
    });
    let mut p = Pages {
        font,
        done: Vec::new(),
        page: Pages::new_content(),
        y: TOP,
        continued: l.fill(
            Key::Continued,
            &[("document", words), ("number", &d.input.number)],
        ),
        shown,
    };
    heading(&mut p, d, l);
    parties(&mut p, d, l);
    facts(&mut p, d, l);
    lines(&mut p, d, l);
    breakdown(&mut p, d, l);
    totals(&mut p, d, l);
    let payment = payment::paragraph(d, l);
    p.paragraph(LEFT, RIGHT - LEFT, 9.0, INK, &payment);
    notes(&mut p, d, l);

    let last = std::mem::replace(&mut p.page, Content::new());
    p.done.push(last);

    // Every page's footer: whose, which, and page n of m.
    let total = p.done.len();
    let total_text = total.to_string();
    let pages = std::mem::take(&mut p.done);
    let who = format!("{} · {words} {}", d.input.seller.name, d.input.number);
    let footer = p.wrap(l.get(Key::Footer), RIGHT - LEFT, 7.0);
    let mut out = Vec::with_capacity(total);
    for (i, content) in pages.into_iter().enumerate() {
        p.page = content;
        p.rule(LEFT, RIGHT, 62.0, 0.4, GREY);
        p.text(LEFT, 50.0, 7.5, GREY, &who);
        let n = (i + 1).to_string();
        let page = l.fill(Key::Page, &[("n", &n), ("total", &total_text)]);
        p.right(RIGHT, 50.0, 7.5, GREY, &page);
        for (j, part) in footer.iter().take(2).enumerate() {
            p.text(LEFT, 39.0 - j as f32 * 9.0, 7.0, GREY, part);
        }
        let content = std::mem::replace(&mut p.page, Content::new());
        out.push(content.finish().to_vec());
    }
    out
}
