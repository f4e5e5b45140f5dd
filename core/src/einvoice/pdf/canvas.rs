//! The page as drawn: A4, its margins and greys, and what draws on it —
//! text at a place, right-aligned text, rules, room for what comes next
//! (a new page when it does not fit) and text wrapped to a width.
//!
//! Invariants: text is painted in a device-independent grey (CalGray
//! `/G0`), as PDF/A asks of a file without an output intent; nothing is
//! drawn below [`BOTTOM`] but the footer — what does not fit goes on a new
//! page, under the line saying which document it continues; a wrapped
//! field takes at most [`MAX_FIELD_LINES`] lines and ends in `…` when
//! longer (the XML carries it whole), in time linear in its length.

use pdf_writer::{Content, Name, Str};

use super::font::Font;

/// A4 in points.
pub const WIDTH: f32 = 595.28;
/// A4 in points.
pub const HEIGHT: f32 = 841.89;
/// The margins: where text begins and ends, and the first baseline.
pub const LEFT: f32 = 48.0;
/// See [`LEFT`].
pub const RIGHT: f32 = WIDTH - 48.0;
/// See [`LEFT`].
pub const TOP: f32 = HEIGHT - 56.0;
/// Below this the footer begins.
pub const BOTTOM: f32 = 84.0;

/// Black (CalGray).
pub const INK: f32 = 0.0;
/// The labels' grey (CalGray).
pub const GREY: f32 = 0.42;

/// The most lines one field (a name, an address line, an item) takes.
pub const MAX_FIELD_LINES: usize = 24;

/// The pages being laid out.
pub struct Pages<'f, 's> {
    /// The font, measuring and encoding.
    pub font: &'f mut Font,
    /// The pages done.
    pub done: Vec<Content>,
    /// The page being drawn.
    pub page: Content,
    /// Where the next line's baseline goes.
    pub y: f32,
    /// The line a new page begins with ("Invoice 1 (continued)").
    pub continued: String,
    /// The strings shown, in order, when asked for.
    pub shown: Option<&'s mut Vec<String>>,
}

impl Pages<'_, '_> {
    pub fn new_content() -> Content {
        let mut c = Content::new();
        c.set_fill_color_space(pdf_writer::types::ColorSpaceOperand::Named(Name(b"G0")));
        c.set_stroke_color_space(pdf_writer::types::ColorSpaceOperand::Named(Name(b"G0")));
        c
    }

    pub fn text(&mut self, x: f32, y: f32, size: f32, grey: f32, s: &str) {
        if let Some(shown) = self.shown.as_deref_mut() {
            shown.push(s.to_owned());
        }
        let glyphs = self.font.encode(s);
        self.page.set_fill_color([grey]);
        self.page.begin_text();
        self.page.set_font(Name(b"F0"), size);
        self.page.next_line(x, y);
        self.page.show(Str(&glyphs));
        self.page.end_text();
    }

    pub fn right(&mut self, x: f32, y: f32, size: f32, grey: f32, s: &str) {
        let w = self.font.width(s, size);
        self.text(x - w, y, size, grey, s);
    }

    pub fn rule(&mut self, x1: f32, x2: f32, y: f32, width: f32, grey: f32) {
        self.page.set_stroke_color([grey]);
        self.page.set_line_width(width);
        self.page.move_to(x1, y);
        self.page.line_to(x2, y);
        self.page.stroke();
    }

    /// Makes room for `height` points, starting a new page (under the
    /// line saying which document it continues) if need be. Returns
    /// whether a new page was started.
    pub fn room(&mut self, height: f32) -> bool {
        if self.y - height >= BOTTOM {
            return false;
        }
        let full = std::mem::replace(&mut self.page, Self::new_content());
        self.done.push(full);
        self.y = TOP;
        let continued = std::mem::take(&mut self.continued);
        self.text(LEFT, self.y, 9.0, GREY, &continued);
        self.continued = continued;
        self.y -= 22.0;
        true
    }

    /// `s` wrapped to `width` at `x`, each line where there is room.
    pub fn paragraph(&mut self, x: f32, width: f32, size: f32, grey: f32, s: &str) {
        for part in self.wrap(s, width, size) {
            self.room(size + 3.0);
            self.text(x, self.y, size, grey, &part);
            self.y -= size + 3.0;
        }
    }

    /// `s` broken into lines no wider than `width` at `size` (words, then
    /// characters when one word is wider), at most [`MAX_FIELD_LINES`]:
    /// a longer field ends in a line `…` (the XML carries it whole). In
    /// linear time: each character is measured once, and a line's width is
    /// kept as it grows (a name of 60,000 zero-width spaces once took 95 s
    /// of CPU, re-measuring its whole line at each character).
    pub fn wrap(&self, s: &str, width: f32, size: f32) -> Vec<String> {
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
