//! The parties of a document: the seller and the buyer as EN 16931 names
//! them, and the checks a valid document makes of them.
//!
//! Invariants: a party checked here has a name and a country on BR-CL-14's
//! list, an electronic address only with its scheme (BR-62, BR-63), a VAT
//! identifier only with its country prefix (BR-CO-09), and the seller a
//! legal registration or a VAT identifier (BR-CO-26);
//! a VAT category's parties carry the VAT identifiers its rules ask, and a
//! supply not subject to VAT carries none (BR-O-02, BR-O-03).

use super::model::{invalid, missing, present, DocumentError};
use super::vat::VatCategory;

/// A seller or a buyer (the shape; the seller also `iban`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Party {
    /// Legal name (BT-27 / BT-44).
    pub name: String,
    /// Street (BT-35 / BT-50).
    pub street: Option<String>,
    /// City (BT-37 / BT-52).
    pub city: Option<String>,
    /// Post code (BT-38 / BT-53).
    pub postcode: Option<String>,
    /// Country, ISO 3166-1 alpha-2 (BT-40 / BT-55).
    pub country: String,
    /// VAT identifier (BT-31 / BT-48).
    pub vat_id: Option<String>,
    /// Legal registration identifier (BT-30 / BT-47).
    pub legal_id: Option<String>,
    /// Its scheme, an ISO 6523 ICD (BT-30-1 / BT-47-1): `0002` a French
    /// SIREN, `0106` a Dutch KvK number, `0184` a Danish CVR number.
    pub legal_id_scheme: Option<String>,
    /// The seller's tax registration identifier (BT-32), such as a small
    /// business's tax number where it has no VAT identifier.
    pub tax_registration_id: Option<String>,
    /// E-mail of the contact (BT-43 / BT-58).
    pub email: Option<String>,
    /// Electronic address (BT-34 / BT-49), such as a Peppol participant id.
    pub electronic_address: Option<String>,
    /// Its scheme, an ISO 6523 ICD or EAS code (`0208`, `9925`, `EM`, …).
    pub electronic_address_scheme: Option<String>,
    /// The seller's account for payment means (BT-84).
    pub iban: Option<String>,
}

impl Party {
    /// A field's text when present and not blank.
    pub fn text(field: &Option<String>) -> Option<&str> {
        field.as_deref().filter(|s| !s.trim().is_empty())
    }

    /// The seller's account (BT-84), when given.
    pub fn account(&self) -> Option<&str> {
        Self::text(&self.iban)
    }
}

pub(super) fn check_party(p: &Party, seller: bool) -> Result<(), DocumentError> {
    let (name, country, address, scheme) = if seller {
        ("BT-27", "BT-40", "BT-34", "BT-34-1")
    } else {
        ("BT-44", "BT-55", "BT-49", "BT-49-1")
    };
    if p.name.trim().is_empty() {
        return Err(missing(
            name,
            if seller { "seller name" } else { "buyer name" },
            "BR-06 / BR-07: both parties are named",
        ));
    }
    if !super::codes::is_country(&p.country) {
        return Err(if p.country.is_empty() {
            missing(
                country,
                "country code",
                "BR-09 / BR-11: both postal addresses name a country",
            )
        } else {
            invalid(
                country,
                "country code",
                format!(
                    "`{}` is not an ISO 3166-1 alpha-2 code such as BE or GB (BR-CL-14)",
                    p.country
                ),
            )
        });
    }
    if present(&p.electronic_address) != present(&p.electronic_address_scheme) {
        return Err(missing(
            scheme,
            "electronic address scheme",
            "BR-62 / BR-63: an electronic address names its scheme",
        ));
    }
    let _ = address;
    if let Some(icd) = Party::text(&p.legal_id_scheme) {
        if !present(&p.legal_id) {
            return Err(missing(
                if seller { "BT-30" } else { "BT-47" },
                "legal registration identifier",
                "a scheme (BT-30-1 / BT-47-1) is given for an identifier that is not",
            ));
        }
        if !super::codes::is_icd(icd) {
            return Err(invalid(
                if seller { "BT-30" } else { "BT-47" },
                "legal registration identifier",
                format!(
                    "scheme `{icd}` is not an ISO 6523 ICD code such as 0002 or 0106 (BR-CL-11)"
                ),
            ));
        }
    }
    if let Some(vat) = Party::text(&p.vat_id) {
        if !super::codes::has_vat_prefix(vat) {
            return Err(invalid(
                if seller { "BT-31" } else { "BT-48" },
                if seller {
                    "seller VAT identifier"
                } else {
                    "buyer VAT identifier"
                },
                format!(
                    "BR-CO-09: `{vat}` does not begin with its country's code (BE…, EL for Greece)"
                ),
            ));
        }
    }
    if seller && !present(&p.vat_id) && !present(&p.legal_id) {
        return Err(missing(
            "BT-30",
            "seller legal registration identifier",
            "BR-CO-26: the seller is identified by a legal registration (BT-30) or a VAT identifier (BT-31)",
        ));
    }
    Ok(())
}

pub(super) fn check_category_parties(
    c: VatCategory,
    seller: &Party,
    buyer: &Party,
) -> Result<(), DocumentError> {
    let seller_vat = present(&seller.vat_id);
    let seller_tax = seller_vat || present(&seller.tax_registration_id);
    match c {
        VatCategory::S | VatCategory::Z | VatCategory::E if !seller_tax => Err(missing(
            "BT-31",
            "seller VAT identifier",
            "BR-S-02 / BR-Z-02 / BR-E-02: a supply with VAT (or zero-rated, exempt) names the seller's VAT identifier (BT-31) or tax registration (BT-32)",
        )),
        VatCategory::G if !seller_vat => Err(missing(
            "BT-31",
            "seller VAT identifier",
            "BR-G-02: an export names the seller's VAT identifier",
        )),
        VatCategory::AE | VatCategory::K if !seller_vat => Err(missing(
            "BT-31",
            "seller VAT identifier",
            "BR-AE-02 / BR-IC-02: reverse charge and intra-community supply name the seller's VAT identifier",
        )),
        VatCategory::AE | VatCategory::K if !present(&buyer.vat_id) => Err(missing(
            "BT-48",
            "buyer VAT identifier",
            "BR-AE-02 / BR-IC-02: reverse charge and intra-community supply name the buyer's VAT identifier",
        )),
        VatCategory::O if seller_tax || present(&buyer.vat_id) => Err(invalid(
            "BT-31",
            "seller VAT identifier",
            "BR-O-02 / BR-O-03: a supply not subject to VAT names no VAT identifier of either party",
        )),
        _ => Ok(()),
    }
}
