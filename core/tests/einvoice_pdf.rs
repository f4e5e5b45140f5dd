//! The Factur-X PDF of every vector document (`tests/vectors/einvoice.json`):
//! made twice, the same bytes (no clock, no randomness); a PDF 1.7 file that
//! names its embedded `factur-x.xml` and carries the CII document byte for
//! byte (the stream is deflated: inflated here and compared). The official
//! checks (factur-x reading it back, the schematrons, poppler's rendering)
//! are `tests/tests/einvoice.rs`'s. `COUNTERFOIL_PDF_OUT=dir` keeps the files.

use counterfoil_core::einvoice::{cii, json, pdf, Document};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/einvoice.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_array().unwrap().clone()
}

/// The streams of a PDF that are deflated, inflated.
fn inflated_streams(pdf: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = find(&pdf[at..], b"stream\n") {
        let start = at + i + b"stream\n".len();
        let Some(len) = find(&pdf[start..], b"\nendstream") else {
            break;
        };
        if let Ok(bytes) = miniz_oxide::inflate::decompress_to_vec_zlib(&pdf[start..start + len]) {
            out.push(bytes);
        }
        at = start + len + b"\nendstream".len();
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn every_vector_document_makes_the_same_facturx_pdf_carrying_its_cii() {
    let out = std::env::var_os("COUNTERFOIL_PDF_OUT").map(std::path::PathBuf::from);
    let mut made = 0;
    for case in cases() {
        if case.get("error").is_some() {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let d = Document::build(json::input(&case["document"]).unwrap()).unwrap();
        let first = pdf::to_facturx(&d, "Counterfoil test").unwrap();
        let second = pdf::to_facturx(&d, "Counterfoil test").unwrap();
        assert!(first == second, "{name}: two runs wrote other bytes");
        assert!(first.starts_with(b"%PDF-1.7"), "{name}: not a PDF 1.7 file");
        assert!(
            find(&first, b"(factur-x.xml)").is_some(),
            "{name}: no factur-x.xml"
        );
        assert!(
            find(&first, b"<pdfaid:part>3</pdfaid:part>").is_some(),
            "{name}: no PDF/A-3 XMP"
        );
        let xml = cii::to_cii(&d);
        assert!(
            inflated_streams(&first).contains(&xml),
            "{name}: the embedded XML is not the CII document"
        );
        if let Some(dir) = &out {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(format!("{name}.pdf")), &first).unwrap();
        }
        made += 1;
    }
    assert!(made >= 10, "{made} PDFs made");
}

/// The number of pages a PDF says it has (`/Type /Pages … /Count N`).
fn page_count(pdf: &[u8]) -> usize {
    let text = String::from_utf8_lossy(pdf);
    let at = text.find("/Type /Pages").expect("a page tree");
    let count = &text[at..][text[at..].find("/Count ").unwrap() + 7..];
    count
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A buyer's name a guest can type (a billing company of 25 letters wider
/// than the column and 60,000 zero-width spaces, reachable through the
/// order download and the e-mails) is laid out in linear time and takes at
/// most 24 lines: before, the wrap re-measured its whole line at each
/// character once the word passed the column (measured 2026-12-04 through
/// `Counterfoil\einvoice_document()`, release: 1.1 s at 5,000, 19.9 s at
/// 20,000). Bounded here generously (a debug build, a noisy machine): a
/// few seconds, not minutes.
#[test]
fn a_hostile_buyer_name_costs_milliseconds_and_a_bounded_number_of_pages() {
    let case = cases()
        .into_iter()
        .find(|c| c["name"] == "consumer-one-line")
        .unwrap();
    let plain = Document::build(json::input(&case["document"]).unwrap()).unwrap();
    let plain_pages = page_count(&pdf::to_facturx(&plain, "Counterfoil test").unwrap());
    let mut document = case["document"].clone();
    let name = format!("{}{}", "W".repeat(25), "\u{200B}".repeat(60_000));
    document["buyer"]["name"] = Value::String(name.clone());
    let d = Document::build(json::input(&document).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let bytes = pdf::to_facturx(&d, "Counterfoil test").unwrap();
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(5),
        "the PDF of a 60,000-character name took {took:?}"
    );
    assert!(
        page_count(&bytes) <= plain_pages + 1,
        "the name is capped at 24 lines: {} pages (plain {plain_pages})",
        page_count(&bytes)
    );
    assert!(
        inflated_streams(&bytes).contains(&cii::to_cii(&d)),
        "the embedded XML carries the name whole"
    );
}
