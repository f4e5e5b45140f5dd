//! The Factur-X PDF of an invoice or a credit note: a PDF/A-3 (level B)
//! file whose pages show the document to a person and which carries the
//! same document as CII XML (`factur-x.xml`, profile EN 16931), for
//! software to read.
//!
//! Invariants: the pages and the embedded XML come from one computed
//! [`Document`] (so they cannot disagree); the XML is byte for byte what
//! [`cii::to_cii`] writes, attached to the document catalog (`/AF`,
//! relationship `/Alternative`: the XML is the same invoice for software,
//! as Factur-X 1.0 and ZUGFeRD 2.x ask of the EN 16931 profile — `/Data`
//! is for MINIMUM and BASIC WL, which are no invoices) and listed among its
//! embedded files; the XMP says PDF/A-3B and names the Factur-X fields
//! (conformance level `EN 16931`, the profile the XML states); the page
//! is in the document's language, which the catalog's `/Lang` names
//! ([`labels`]); every font is embedded
//! (a subset of DejaVu Sans) and every colour device-independent (CalGray);
//! no clock and no randomness — the dates are the issue date and the file
//! identifier a hash of the content — so the same document gives the same
//! bytes wherever it is made. Checked by `tests/tests/einvoice.rs` (the
//! `factur-x` library reads the XML back and the schematrons judge it; the
//! pages are rendered by poppler).

mod canvas;
mod font;
pub mod labels;
mod page;
mod payment;
mod xmp;

use pdf_writer::types::AssociationKind;
use pdf_writer::{Date, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::{cii, Document, Kind};
use labels::{Key, Labels};

/// The name of the embedded XML, as Factur-X 1.0 requires.
pub const XML_NAME: &str = "factur-x.xml";

/// Why no PDF could be written.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PdfError {
    /// The embedded font could not be read or subset (a defect of the build).
    #[error("the PDF's font: {0}")]
    Font(String),
}

/// The Factur-X PDF of a computed document, its file identifier saying
/// `producer` made it.
pub fn to_facturx(d: &Document, producer: &str) -> Result<Vec<u8>, PdfError> {
    let xml = cii::to_cii(d);
    let mut font = font::Font::new()?;
    let labels = Labels::of(&d.input.details);
    let contents = page::lay_out(d, &mut font, &labels, None);

    let mut next_id = 1;
    let mut alloc = move || {
        let r = Ref::new(next_id);
        next_id += 1;
        r
    };
    let catalog_ref = alloc();
    let pages_ref = alloc();
    let font_ref = alloc();
    let metadata_ref = alloc();
    let spec_ref = alloc();
    let file_ref = alloc();
    let page_refs: Vec<(Ref, Ref)> = contents.iter().map(|_| (alloc(), alloc())).collect();

    let mut pdf = Pdf::new();
    pdf.set_version(1, 7);

    let title = format!(
        "{} {}",
        labels.get(match d.input.kind {
            Kind::Invoice => Key::Invoice,
            Kind::CreditNote { .. } => Key::CreditNote,
        }),
        d.input.number
    );

    // The catalog: pages, metadata, the XML as an associated file.
    {
        let mut catalog = pdf.catalog(catalog_ref);
        catalog.pages(pages_ref);
        catalog.metadata(metadata_ref);
        catalog.lang(TextStr(labels.tag()));
        catalog.viewer_preferences().display_doc_title(true);
        catalog.insert(Name(b"AF")).array().item(spec_ref);
        catalog
            .names()
            .embedded_files()
            .names()
            .insert(Str(XML_NAME.as_bytes()), spec_ref);
    }

    pdf.pages(pages_ref)
        .kids(page_refs.iter().map(|(p, _)| *p))
        .count(page_refs.len() as i32);

    for ((page_ref, content_ref), content) in page_refs.iter().zip(&contents) {
        let mut page = pdf.page(*page_ref);
        page.parent(pages_ref)
            .media_box(Rect::new(0.0, 0.0, page::WIDTH, page::HEIGHT));
        page.contents(*content_ref);
        let mut resources = page.resources();
        resources.fonts().pair(Name(b"F0"), font_ref);
        resources
            .color_spaces()
            .insert(Name(b"G0"))
            .start::<pdf_writer::writers::ColorSpace>()
            .cal_gray([0.9505, 1.0, 1.089], None, Some(2.2));
        resources.finish();
        page.finish();
        let compressed = miniz_oxide::deflate::compress_to_vec_zlib(content, 6);
        pdf.stream(*content_ref, &compressed)
            .filter(Filter::FlateDecode);
    }

    font.write(&mut pdf, font_ref, &mut alloc)?;

    // The embedded XML: a file specification pointing at its stream.
    let date = pdf_date(&d.input.issue_date);
    pdf.file_spec(spec_ref)
        .path(Str(XML_NAME.as_bytes()))
        .unic_file(TextStr(XML_NAME))
        .description(TextStr("Factur-X XML file"))
        .association_kind(AssociationKind::Alternative)
        .insert(Name(b"EF"))
        .dict()
        .pair(Name(b"F"), file_ref)
        .pair(Name(b"UF"), file_ref);
    let compressed_xml = miniz_oxide::deflate::compress_to_vec_zlib(&xml, 6);
    {
        let mut file = pdf.embedded_file(file_ref, &compressed_xml);
        file.filter(Filter::FlateDecode);
        file.subtype(Name(b"text/xml"));
        let mut params = file.params();
        params.size(xml.len() as i32);
        if let Some(date) = date {
            params.modification_date(date);
        }
    }

    let packet = xmp::packet(&title, &d.input.seller.name, &d.input.issue_date, producer);
    pdf.metadata(metadata_ref, packet.as_bytes());

    // The file identifier: a hash of what the file holds, not of a clock.
    let mut hash = Sha256::new();
    hash.update(&xml);
    for content in &contents {
        hash.update(content);
    }
    let id = hash.finalize()[..16].to_vec();
    pdf.set_file_id((id.clone(), id));
    Ok(pdf.finish())
}

/// A `YYYY-MM-DD` date as a PDF date (none when it is not one).
fn pdf_date(date: &str) -> Option<Date> {
    let mut parts = date.splitn(3, '-').map(|p| p.parse::<u16>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    Some(
        Date::new(y)
            .month(u8::try_from(m).ok()?)
            .day(u8::try_from(d).ok()?),
    )
}

/// The strings the pages of `d` show, in order (footers last).
#[cfg(test)]
fn shown(d: &Document) -> Vec<String> {
    let mut font = font::Font::new().unwrap();
    let mut shown = Vec::new();
    page::lay_out(
        d,
        &mut font,
        &Labels::of(&d.input.details),
        Some(&mut shown),
    );
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::einvoice::{Dec, DocumentDetails, DocumentInput, Party};
    use crate::einvoice::{Note, VatCategory};

    fn party(name: &str, country: &str, vat: &str) -> Party {
        Party {
            name: name.into(),
            street: Some("Rue Haute 1".into()),
            city: Some("Brussels".into()),
            postcode: Some("1000".into()),
            country: country.into(),
            vat_id: Some(vat.into()),
            legal_id: Some("0123456749".into()),
            ..Party::default()
        }
    }

    use crate::einvoice::model::tests::line;

    /// An unpaid invoice of 12.10 EUR, payable within 14 days.
    fn input() -> DocumentInput {
        DocumentInput {
            kind: Kind::Invoice,
            number: "2026-0001".into(),
            issue_date: "2026-12-03".into(),
            currency: "EUR".into(),
            buyer_reference: None,
            seller: party("Counterfoil Shop BV", "BE", "BE0123456749"),
            buyer: party("Acme GmbH", "DE", "DE123456789"),
            lines: vec![line("Book", "1", "10", "21", VatCategory::S)],
            paid: false,
            rounding: None,
            due_date: None,
            payment_terms: Some("Payable within 14 days".into()),
            details: DocumentDetails::default(),
        }
    }

    /// The page's text, its strings joined by spaces.
    fn text(i: DocumentInput) -> String {
        shown(&Document::build(i).unwrap()).join(" ")
    }

    fn stamped(t: &str, stamp: &str) -> bool {
        t.split(' ').any(|w| w == stamp)
    }

    #[test]
    fn an_invoice_asks_for_what_is_due_by_its_means_and_says_paid_only_when_nothing_is() {
        let t = text(input());
        assert!(
            t.contains("Amount due: 12.10 EUR. Terms: Payable within 14 days"),
            "{t}"
        );
        assert!(!stamped(&t, "PAID"), "{t}");

        let mut i = input();
        i.seller.iban = Some("BE68539007547034".into());
        i.due_date = Some("2026-12-17".into());
        let t = text(i.clone());
        assert!(
            t.contains("Please pay 12.10 EUR to IBAN BE68539007547034, quoting 2026-0001. Due by 2026-12-17."),
            "{t}"
        );
        assert!(
            t.contains("Due 2026-12-17"),
            "the due date in the heading: {t}"
        );

        // Partly paid by card: the rest asked by card, no IBAN, not "paid".
        i.details.payment_means = Some("48".into());
        i.details.paid_amount = Some(Dec::parse("2.10").unwrap());
        let t = text(i.clone());
        assert!(t.contains("Please pay 10.00 EUR by card."), "{t}");
        assert!(!t.contains("IBAN") && !stamped(&t, "PAID"), "{t}");

        // Paid by card in full: the means, no IBAN, no due date repeated.
        i.details.paid_amount = Some(Dec::parse("12.10").unwrap());
        let t = text(i.clone());
        assert!(t.contains("Paid in full by card: nothing is due."), "{t}");
        assert!(
            stamped(&t, "PAID") && !t.contains("IBAN") && !t.contains("Due by"),
            "{t}"
        );

        i.details.paid_amount = None;
        for (code, says) in [
            ("1", "Amount due: 12.10 EUR."),
            ("97", "Please pay 12.10 EUR by payment means 97."),
            ("ZZZ", "Please pay 12.10 EUR as agreed."),
            (
                "68",
                "Please pay 12.10 EUR through an online payment service.",
            ),
        ] {
            i.details.payment_means = Some(code.into());
            let t = text(i.clone());
            assert!(t.contains(says), "{code}: {t}");
        }

        // Nothing to pay, and nothing paid: not "paid".
        let mut free = input();
        free.lines = vec![line("Sample", "1", "0", "21", VatCategory::S)];
        let t = text(free);
        assert!(t.contains("Nothing is due.") && !stamped(&t, "PAID"), "{t}");
    }

    #[test]
    fn a_credit_note_never_asks_the_customer_to_pay() {
        let mut i = input();
        i.kind = Kind::CreditNote {
            preceding: "2026-0001".into(),
            preceding_date: None,
        };
        i.seller.iban = Some("BE68539007547034".into());
        i.payment_terms = Some("Refunded within 14 days".into());
        let t = text(i.clone());
        assert!(t.contains("We will refund you 12.10 EUR."), "{t}");
        assert!(
            t.contains("To be refunded") && t.contains("Corrects invoice 2026-0001"),
            "{t}"
        );
        assert!(
            !t.contains("Please pay") && !t.contains("Amount due") && !t.contains("IBAN"),
            "{t}"
        );
        i.details.payment_means = Some("48".into());
        let t = text(i.clone());
        assert!(t.contains("We will refund you 12.10 EUR by card."), "{t}");
        i.paid = true;
        let t = text(i.clone());
        assert!(
            t.contains("Refunded by card: nothing is due.") && stamped(&t, "SETTLED"),
            "{t}"
        );
        i.details.payment_means = None;
        i.details.language = Some("nl".into());
        let t = text(i);
        assert!(
            t.contains("CREDITNOTA") && t.contains("Volledig vereffend"),
            "{t}"
        );
    }

    #[test]
    fn an_exemption_shows_its_category_once_and_its_own_reason() {
        let mut i = input();
        i.payment_terms = None;
        i.paid = true;
        i.lines = vec![line("Lesson", "1", "40", "0", VatCategory::E)];
        let t = text(i.clone());
        assert_eq!(t.matches("Exempt from VAT").count(), 1, "{t}");
        i.lines[0].details.vat_exemption_code = Some("VATEX-EU-132-1I".into());
        let t = text(i.clone());
        assert!(t.contains("E 0 % Exempt from VAT VATEX-EU-132-1I"), "{t}");
        i.details.language = Some("de".into());
        i.lines = vec![line("Beratung", "1", "40", "0", VatCategory::K)];
        let t = text(i);
        assert!(t.contains("K 0 % Innergemeinschaftliche Lieferung"), "{t}");
        assert!(
            t.contains("Lieferdatum 03.12.2026"),
            "an intra-community supply's delivery date, as the XML states it: {t}"
        );
    }

    #[test]
    fn units_periods_and_numbers_as_the_page_writes_them() {
        let mut i = input();
        i.lines[0].quantity = Dec::parse("2.5").unwrap();
        i.lines[0].details.unit_code = Some("KGM".into());
        i.lines.push(line("Box", "3", "1", "21", VatCategory::S));
        i.lines[1].details.unit_code = Some("XBX".into());
        i.details.period_start = Some("2026-11-01".into());
        i.details.notes = vec![Note {
            subject: Some("AAB".into()),
            text: "No discount for early payment".into(),
        }];
        let t = text(i.clone());
        assert!(t.contains("2.5 kg") && t.contains("3 XBX"), "{t}");
        assert!(t.contains("Invoicing period from 2026-11-01"), "{t}");
        assert!(t.contains("Notes No discount for early payment"), "{t}");
        i.details.language = Some("fr-FR".into());
        let t = text(i);
        assert!(
            t.contains("2,5 kg") && t.contains("à partir du 01/11/2026"),
            "{t}"
        );
        assert!(t.contains("Remarques"), "{t}");
    }

    #[test]
    fn what_does_not_fit_continues_on_pages_that_say_so() {
        let mut i = input();
        let name = "A paperback with a long title that wraps onto a second line of the table";
        i.lines = (0..70)
            .map(|n| {
                let rate = if n % 2 == 0 { "21" } else { "6" };
                line(name, "1", "10", rate, VatCategory::S)
            })
            .collect();
        i.details.notes = (0..30)
            .map(|n| Note {
                subject: None,
                text: format!("Note {n}: a sentence long enough to take its own line on the page"),
            })
            .collect();
        i.details.language = Some("de".into());
        let d = Document::build(i).unwrap();
        let shown = shown(&d);
        let pages = shown.iter().filter(|s| s.starts_with("Seite ")).count();
        assert!(pages >= 3, "{pages} pages");
        assert_eq!(
            shown
                .iter()
                .filter(|s| *s == "Rechnung 2026-0001 (Fortsetzung)")
                .count(),
            pages - 1
        );
        assert!(shown.contains(&format!("Seite {pages} von {pages}")));
        assert!(shown
            .iter()
            .any(|s| s == "Note 29: a sentence long enough to take its own line on the page"));
        let bytes = to_facturx(&d, "test").unwrap();
        assert_eq!(bytes, to_facturx(&d, "test").unwrap(), "the same bytes");
    }

    #[test]
    fn the_xml_is_the_alternative_in_the_profile_the_xmp_names_and_the_language_the_catalog_names()
    {
        assert_eq!(
            cii::GUIDELINE_ID,
            "urn:cen.eu:en16931:2017",
            "the EN 16931 profile"
        );
        let mut i = input();
        i.details.language = Some("de_DE".into());
        let bytes = to_facturx(&Document::build(i).unwrap(), "test").unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>"));
        assert_eq!(
            text.matches("/AFRelationship").count(),
            1,
            "one associated file"
        );
        assert!(text.contains("/AFRelationship /Alternative"));
        assert!(text.contains("/Lang (de)"));
        assert!(
            text.contains(">Rechnung 2026-0001</rdf:li>"),
            "the title in its language"
        );
    }
}
