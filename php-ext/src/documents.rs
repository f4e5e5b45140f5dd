//! `Counterfoil\einvoice_document()`: an e-invoice made by the core from a
//! document input (the JSON the plugin's `Counterfoil_Documents::input_for`
//! builds), in one of its three formats.
//!
//! Invariants: nothing here computes or writes a document — the core's
//! `Document::build`, `ubl`, `cii` and `pdf` do, so the extension's bytes
//! are the core's (held to the shared vectors by `php-ext/tests/`); a
//! refusal is an `InvalidArgumentException` whose message begins with the
//! business term it names (`BT-44: …`); an unknown format is one too.

use counterfoil_core::einvoice::{cii, json, pdf, ubl, Document, DocumentError};
use ext_php_rs::binary::Binary;
use ext_php_rs::prelude::*;

use crate::exceptions::invalid_argument;

/// What the PDF says made it.
const PRODUCER: &str = concat!("Counterfoil ", env!("CARGO_PKG_VERSION"));

fn refused(e: DocumentError) -> PhpException {
    invalid_argument(format!("{}: {e}", e.term()))
}

/// The document of `input_json` as `ubl`, `cii` or `pdf` (Factur-X).
pub fn document(input_json: &str, format: &str) -> PhpResult<Binary<u8>> {
    if !matches!(format, "ubl" | "cii" | "pdf") {
        return Err(invalid_argument(format!(
            "the format is ubl, cii or pdf, not `{format}`"
        )));
    }
    let input = json::input_from_str(input_json).map_err(refused)?;
    let d = Document::build(input).map_err(refused)?;
    let bytes = match format {
        "ubl" => ubl::to_ubl(&d),
        "cii" => cii::to_cii(&d),
        _ => pdf::to_facturx(&d, PRODUCER).map_err(|e| invalid_argument(e.to_string()))?,
    };
    Ok(Binary::from(bytes))
}
