//! The Factur-X PDF of an invoice or a credit note: a PDF/A-3 (level B)
//! file whose pages show the document to a person and which carries the
//! same document as CII XML (`factur-x.xml`, profile EN 16931), for
//! software to read.
//!
//! Invariants: the pages and the embedded XML come from one computed
//! [`Document`] (so they cannot disagree); the XML is byte for byte what
//! [`cii::to_cii`] writes, attached to the document catalog (`/AF`,
//! relationship `/Data`) and listed among its embedded files; the XMP
//! says PDF/A-3B and names the Factur-X fields; every font is embedded
//! (a subset of DejaVu Sans) and every colour device-independent (CalGray);
//! no clock and no randomness — the dates are the issue date and the file
//! identifier a hash of the content — so the same document gives the same
//! bytes wherever it is made. Checked by `tests/tests/einvoice.rs` (the
//! `factur-x` library reads the XML back and the schematrons judge it; the
//! pages are rendered by poppler).

mod font;
mod page;
mod xmp;

use pdf_writer::types::AssociationKind;
use pdf_writer::{Date, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::{cii, Document, Kind};

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
    let contents = page::lay_out(d, &mut font);

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

    let title = match d.input.kind {
        Kind::Invoice => format!("Invoice {}", d.input.number),
        Kind::CreditNote { .. } => format!("Credit note {}", d.input.number),
    };

    // The catalog: pages, metadata, the XML as an associated file.
    {
        let mut catalog = pdf.catalog(catalog_ref);
        catalog.pages(pages_ref);
        catalog.metadata(metadata_ref);
        catalog.lang(TextStr("en"));
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
        .association_kind(AssociationKind::Data)
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
