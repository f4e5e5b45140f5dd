//! E-invoices: the EN 16931 document of an invoice or a credit note and its
//! two syntaxes, UBL 2.1 (Peppol BIS Billing 3.0 when both parties are
//! Peppol participants, else plain EN 16931: [`peppol`]) and UN/CEFACT CII (the
//! EN 16931 profile a Factur-X PDF carries); with the feature `pdf`, the
//! Factur-X PDF itself, and with `json`, the input read from JSON.
//!
//! Invariants: one implementation of each rule — the model computes every
//! amount ([`model::Document::build`]), the serializers only write what it
//! holds; pure code (no I/O), so it builds for wasm32 too; the same input
//! gives the same bytes. Checked against the official EN 16931 schematrons
//! and the UBL 2.1 / CII schemas by `tests/tests/einvoice.rs`.

pub mod allowance;
pub mod breakdown;
pub mod cii;
pub mod codes;
pub mod decimal;
pub mod delivery;
pub mod details;
#[cfg(feature = "json")]
pub mod json;
pub mod model;
pub mod party;
#[cfg(feature = "pdf")]
pub mod pdf;
pub mod peppol;
pub mod settlement;
pub mod terms;
pub mod ubl;
pub mod vat;
mod xml;

pub use decimal::Dec;
pub use model::{
    Address, AllowanceCharge, AllowanceChargeInput, Document, DocumentDetails, DocumentError,
    DocumentInput, Kind, LineDetails, LineInput, Note, Party, VatCategory,
};
