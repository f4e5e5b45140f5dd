//! A small XML writer for the serializers: elements in the order they are
//! written, text and attribute values escaped, two-space indentation, and
//! empty optional elements left out.
//!
//! Invariants: the output is well-formed UTF-8 XML whatever the text holds
//! (`&`, `<`, `>`, `"` and `'` escaped; control characters other than tab,
//! line feed and carriage return, and U+FFFE and U+FFFF, which XML 1.0
//! cannot carry, dropped); the
//! same calls give the same bytes.

/// Escapes text for an element or an attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            // Not characters in XML 1.0 (its Char production).
            '\u{FFFE}' | '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// A document being written.
pub struct Writer {
    out: String,
    open: Vec<&'static str>,
}

impl Writer {
    /// A new document with its XML declaration.
    pub fn new() -> Self {
        Writer {
            out: String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
            open: Vec::new(),
        }
    }

    fn indent(&mut self) {
        for _ in 0..self.open.len() {
            self.out.push_str("  ");
        }
    }

    fn attributes(&mut self, attrs: &[(&str, &str)]) {
        for (k, v) in attrs {
            self.out.push(' ');
            self.out.push_str(k);
            self.out.push_str("=\"");
            self.out.push_str(&escape(v));
            self.out.push('"');
        }
    }

    /// Opens `<name attrs…>`.
    pub fn open(&mut self, name: &'static str, attrs: &[(&str, &str)]) -> &mut Self {
        self.indent();
        self.out.push('<');
        self.out.push_str(name);
        self.attributes(attrs);
        self.out.push_str(">\n");
        self.open.push(name);
        self
    }

    /// Closes the innermost open element.
    pub fn close(&mut self) -> &mut Self {
        let name = self.open.pop().expect("an open element");
        self.indent();
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push_str(">\n");
        self
    }

    /// `<name attrs…>text</name>`.
    pub fn leaf(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) -> &mut Self {
        self.indent();
        self.out.push('<');
        self.out.push_str(name);
        self.attributes(attrs);
        self.out.push('>');
        self.out.push_str(&escape(text));
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push_str(">\n");
        self
    }

    /// [`Writer::leaf`] when `text` is present and not blank.
    pub fn leaf_opt(&mut self, name: &str, text: Option<&str>) -> &mut Self {
        if let Some(t) = text.filter(|t| !t.trim().is_empty()) {
            self.leaf(name, &[], t);
        }
        self
    }

    /// The document (every element closed).
    pub fn finish(mut self) -> Vec<u8> {
        while !self.open.is_empty() {
            self.close();
        }
        self.out.into_bytes()
    }
}

impl Default for Writer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_drops_what_xml_cannot_carry() {
        assert_eq!(
            escape("a&b<c>\"d'\u{1}e\tf"),
            "a&amp;b&lt;c&gt;&quot;d&apos;e\tf"
        );
        let mut w = Writer::new();
        w.open("a", &[("x", "1&2")])
            .leaf("b", &[], "<>")
            .leaf_opt("c", Some("  "))
            .leaf_opt("d", None);
        assert_eq!(
            String::from_utf8(w.finish()).unwrap(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a x=\"1&amp;2\">\n  <b>&lt;&gt;</b>\n</a>\n"
        );
    }
}
