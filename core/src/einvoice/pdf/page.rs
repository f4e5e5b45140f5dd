//! What the customer reads: the pages of an invoice or a credit note, laid
//! out on A4 from the computed [`Document`] — number, dates, seller, buyer,
//! the lines, the VAT breakdown, the totals and whether it was paid.
//!
//! Invariants: every amount shown is one the document computed (the same
//! the embedded XML states), written with the currency's places; nothing is
//! cut off — a long item name wraps, and lines that do not fit continue on
//! a new page under the table's header, each page saying its number of the
//! whole — except a field longer than 24 lines, which ends in a line `…`
//! (the embedded XML carries it whole); the layout is linear in the text's
//! length; text is painted in a device-independent grey (CalGray `/G0`), as
//! PDF/A asks of a file without an output intent.

use pdf_writer::{Content, Name, Str};

use super::font::Font;
use crate::einvoice::{Dec, Document, Kind, Party, VatCategory};

/// A4 in points.
pub const WIDTH: f32 = 595.28;
/// A4 in points.
pub const HEIGHT: f32 = 841.89;
const LEFT: f32 = 48.0;
const RIGHT: f32 = WIDTH - 48.0;
const TOP: f32 = HEIGHT - 56.0;
/// Below this the footer begins.
const BOTTOM: f32 = 84.0;

/// Black and the labels' grey (CalGray).
const INK: f32 = 0.0;
const GREY: f32 = 0.42;

/// The lines table's columns: the right edges of the numbers.
const COL_QTY: f32 = 338.0;
const COL_PRICE: f32 = 418.0;
const COL_VAT: f32 = 474.0;
const COL_AMOUNT: f32 = RIGHT;
/// The description's width.
const DESC_WIDTH: f32 = 236.0;
/// The most lines one field (a name, an address line, an item) takes.
const MAX_FIELD_LINES: usize = 24;

/// The pages being laid out.
struct Pages<'f> {
    font: &'f mut Font,
    done: Vec<Content>,
    page: Content,
    y: f32,
}

impl Pages<'_> {
    fn new_content() -> Content {
        let mut c = Content::new();
        c.set_fill_color_space(pdf_writer::types::ColorSpaceOperand::Named(Name(b"G0")));
        c.set_stroke_color_space(pdf_writer::types::ColorSpaceOperand::Named(Name(b"G0")));
        c
    }

    fn text(&mut self, x: f32, y: f32, size: f32, grey: f32, s: &str) {
        let glyphs = self.font.encode(s);
        self.page.set_fill_color([grey]);
        self.page.begin_text();
        self.page.set_font(Name(b"F0"), size);
        self.page.next_line(x, y);
        self.page.show(Str(&glyphs));
        self.page.end_text();
    }

    fn right(&mut self, x: f32, y: f32, size: f32, grey: f32, s: &str) {
        let w = self.font.width(s, size);
        self.text(x - w, y, size, grey, s);
    }

    fn rule(&mut self, x1: f32, x2: f32, y: f32, width: f32, grey: f32) {
        self.page.set_stroke_color([grey]);
        self.page.set_line_width(width);
        self.page.move_to(x1, y);
        self.page.line_to(x2, y);
        self.page.stroke();
    }

    /// Makes room for `height` points, starting a new page if need be.
    /// Returns whether a new page was started.
    fn room(&mut self, height: f32) -> bool {
        if self.y - height >= BOTTOM {
            return false;
        }
        let full = std::mem::replace(&mut self.page, Self::new_content());
        self.done.push(full);
        self.y = TOP;
        true
    }

    /// `s` broken into lines no wider than `width` at `size` (words, then
    /// characters when one word is wider), at most [`MAX_FIELD_LINES`]:
    /// a longer field ends in a line `…` (the XML carries it whole). In
    /// linear time: each character is measured once, and a line's width is
    /// kept as it grows (a name of 60,000 zero-width spaces once took 95 s
    /// of CPU, re-measuring its whole line at each character).
    fn wrap(&self, s: &str, width: f32, size: f32) -> Vec<String> {
        let fits = |units: u32| self.font.points(units, size) <= width;
        let space = self.font.units(" ");
        let mut lines = Vec::new();
        let mut line = String::new();
        let mut line_units = 0u32;
        for word in s.split_whitespace() {
            if lines.len() >= MAX_FIELD_LINES {
                break;
            }
            let word_units = self.font.units(word);
            let gap = if line.is_empty() { 0 } else { space };
            if fits(line_units + gap + word_units) {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
                line_units += gap + word_units;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                line_units = 0;
            }
            for c in word.chars() {
                let c_units = self.font.char_units(c);
                if !fits(line_units + c_units) && !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                    line_units = 0;
                    if lines.len() >= MAX_FIELD_LINES {
                        break;
                    }
                }
                line.push(c);
                line_units += c_units;
            }
        }
        if lines.len() >= MAX_FIELD_LINES {
            lines.truncate(MAX_FIELD_LINES);
            lines.push("…".to_owned());
        } else if !line.is_empty() || lines.is_empty() {
            lines.push(line);
        }
        lines
    }
}

/// A party's lines as printed: its name first.
fn party_lines(p: &Party) -> Vec<String> {
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
    if let Some(vat) = opt(&p.vat_id) {
        out.push(format!("VAT ID {vat}"));
    }
    if let Some(legal) = opt(&p.legal_id) {
        out.push(format!("Registration {legal}"));
    }
    if let Some(email) = opt(&p.email) {
        out.push(email);
    }
    out
}

/// What a VAT category is called on the page.
fn category_name(c: VatCategory) -> &'static str {
    match c {
        VatCategory::S => "Standard rate",
        VatCategory::Z => "Zero rated",
        other => other.exemption_reason().unwrap_or(""),
    }
}

fn rate(category: VatCategory, rate: Dec) -> String {
    format!("{} {} %", category.code(), rate.trimmed())
}

/// A price as shown: at least the currency's places, its own beyond them.
fn price(d: &Document, v: Dec) -> String {
    if v.scale() <= d.places {
        d.amount(v)
    } else {
        v.to_string()
    }
}

fn table_header(p: &mut Pages) {
    let y = p.y;
    p.text(LEFT, y, 8.0, GREY, "Description");
    p.right(COL_QTY, y, 8.0, GREY, "Quantity");
    p.right(COL_PRICE, y, 8.0, GREY, "Unit price");
    p.right(COL_VAT, y, 8.0, GREY, "VAT");
    p.right(COL_AMOUNT, y, 8.0, GREY, "Amount");
    p.rule(LEFT, RIGHT, y - 5.0, 0.6, INK);
    p.y -= 19.0;
}

/// The content streams of a document's pages, and the font they used.
pub fn lay_out(d: &Document, font: &mut Font) -> Vec<Vec<u8>> {
    let mut p = Pages {
        font,
        done: Vec::new(),
        page: Pages::new_content(),
        y: TOP,
    };
    let cur = d.input.currency.as_str();
    let (title, words, settled) = match &d.input.kind {
        Kind::Invoice => ("INVOICE", "Invoice", "PAID"),
        Kind::CreditNote { .. } => ("CREDIT NOTE", "Credit note", "SETTLED"),
    };

    // The heading: what it is, its number and date, and "paid".
    p.text(LEFT, p.y - 14.0, 22.0, INK, title);
    p.right(RIGHT, p.y - 4.0, 12.0, INK, &d.input.number);
    p.right(
        RIGHT,
        p.y - 19.0,
        9.0,
        GREY,
        &format!("Issued {}", d.input.issue_date),
    );
    if d.input.paid {
        p.right(RIGHT, p.y - 34.0, 10.0, INK, settled);
    }
    p.y -= 40.0;
    if let Kind::CreditNote {
        preceding,
        preceding_date,
    } = &d.input.kind
    {
        let of = preceding_date
            .as_deref()
            .map(|date| format!(" of {date}"))
            .unwrap_or_default();
        p.text(
            LEFT,
            p.y,
            10.0,
            INK,
            &format!("Corrects invoice {preceding}{of}"),
        );
        p.y -= 16.0;
    }
    p.y -= 14.0;

    // Seller and buyer, side by side.
    let top = p.y;
    let columns = [
        (LEFT, "From", party_lines(&d.input.seller)),
        (WIDTH / 2.0 + 10.0, "Bill to", party_lines(&d.input.buyer)),
    ];
    let mut lowest = top;
    for (x, label, lines) in columns {
        let mut y = top;
        p.text(x, y, 8.0, GREY, label);
        y -= 15.0;
        for (i, line) in lines.iter().enumerate() {
            let size = if i == 0 { 11.0 } else { 9.0 };
            for part in p.wrap(line, WIDTH / 2.0 - 60.0, size) {
                p.text(x, y, size, INK, &part);
                y -= size + 3.0;
            }
        }
        lowest = lowest.min(y);
    }
    p.y = lowest - 8.0;
    if let Some(reference) = Party::text(&d.input.buyer_reference) {
        p.text(LEFT, p.y, 9.0, GREY, &format!("Your reference {reference}"));
        p.y -= 14.0;
    }
    p.y -= 14.0;

    // The lines.
    table_header(&mut p);
    for line in &d.lines {
        let name = p.wrap(&line.input.name, DESC_WIDTH, 9.0);
        let height = name.len() as f32 * 12.0 + 6.0;
        if p.room(height) {
            p.text(
                LEFT,
                p.y,
                9.0,
                GREY,
                &format!("{words} {} (continued)", d.input.number),
            );
            p.y -= 22.0;
            table_header(&mut p);
        }
        let y = p.y;
        for (i, part) in name.iter().enumerate() {
            p.text(LEFT, y - i as f32 * 12.0, 9.0, INK, part);
        }
        p.right(COL_QTY, y, 9.0, INK, &line.input.quantity.trimmed());
        p.right(COL_PRICE, y, 9.0, INK, &price(d, line.input.unit_price));
        p.right(
            COL_VAT,
            y,
            9.0,
            INK,
            &rate(line.input.vat_category, line.input.vat_rate),
        );
        p.right(COL_AMOUNT, y, 9.0, INK, &d.amount(line.net));
        p.y -= height;
    }
    p.rule(LEFT, RIGHT, p.y + 8.0, 0.4, GREY);
    p.y -= 10.0;

    // The VAT breakdown and the totals: kept together.
    let block = 30.0 + d.breakdown.len() as f32 * 14.0 + 6.0 * 15.0 + 50.0;
    p.room(block);
    p.text(LEFT, p.y, 8.0, GREY, "VAT breakdown");
    p.right(COL_PRICE, p.y, 8.0, GREY, "Taxable amount");
    p.right(COL_AMOUNT, p.y, 8.0, GREY, "VAT");
    p.y -= 14.0;
    for b in &d.breakdown {
        let label = format!(
            "{}  {}",
            rate(b.category, b.rate),
            category_name(b.category)
        );
        p.text(LEFT, p.y, 9.0, INK, &label);
        p.right(COL_PRICE, p.y, 9.0, INK, &d.amount(b.base));
        p.right(COL_AMOUNT, p.y, 9.0, INK, &d.amount(b.tax));
        p.y -= 14.0;
    }
    p.y -= 10.0;
    let t = &d.totals;
    let mut rows = vec![
        ("Total without VAT", t.without_vat, 9.0),
        ("VAT", t.vat, 9.0),
        ("Total", t.with_vat, 12.0),
    ];
    if let Some(r) = t.rounding {
        rows.push(("Rounding", r, 9.0));
    }
    rows.extend([("Paid", t.paid, 9.0), ("Amount due", t.due, 10.0)]);
    for (label, amount, size) in rows {
        if label == "Total" {
            p.y -= 5.0;
            p.rule(COL_PRICE - 60.0, RIGHT, p.y + size + 5.0, 0.6, INK);
        }
        p.right(
            COL_VAT - 20.0,
            p.y,
            size,
            if size > 9.0 { INK } else { GREY },
            label,
        );
        p.right(
            COL_AMOUNT,
            p.y,
            size,
            INK,
            &format!("{} {cur}", d.amount(amount)),
        );
        p.y -= size + 6.0;
    }
    p.y -= 12.0;
    let payment = if d.totals.due.is_zero() {
        match d.input.kind {
            Kind::Invoice => "Paid in full: nothing is due.".to_string(),
            Kind::CreditNote { .. } => "Settled in full: nothing is due.".to_string(),
        }
    } else if let Some(iban) = crate::einvoice::terms::transfer_account(d) {
        format!(
            "Please pay {} {cur} to IBAN {iban}, quoting {}.",
            d.amount(d.totals.due),
            d.input.number
        )
    } else {
        format!("Amount due: {} {cur}.", d.amount(d.totals.due))
    };
    // The terms the XML states (BT-9, BT-20), as the customer reads them.
    let mut payment = payment;
    if let Some(date) = Party::text(&d.input.due_date) {
        payment.push_str(&format!(" Due by {date}."));
    }
    if let Some(terms) = Party::text(&d.input.payment_terms) {
        payment.push_str(&format!(" Terms: {terms}"));
    }
    for part in p.wrap(&payment, RIGHT - LEFT, 9.0) {
        p.text(LEFT, p.y, 9.0, INK, &part);
        p.y -= 12.0;
    }

    let last = std::mem::replace(&mut p.page, Content::new());
    p.done.push(last);

    // Every page's footer: whose, which, and page n of m.
    let total = p.done.len();
    let pages = std::mem::take(&mut p.done);
    let mut out = Vec::with_capacity(total);
    for (i, content) in pages.into_iter().enumerate() {
        p.page = content;
        p.rule(LEFT, RIGHT, 62.0, 0.4, GREY);
        let who = format!("{} · {words} {}", d.input.seller.name, d.input.number);
        p.text(LEFT, 50.0, 7.5, GREY, &who);
        p.right(
            RIGHT,
            50.0,
            7.5,
            GREY,
            &format!("Page {} of {total}", i + 1),
        );
        p.text(
            LEFT,
            39.0,
            7.0,
            GREY,
            "This PDF/A-3 file carries its EN 16931 e-invoice as factur-x.xml (Factur-X 1.0, profile EN 16931).",
        );
        let content = std::mem::replace(&mut p.page, Content::new());
        out.push(content.finish().to_vec());
    }
    out
}
