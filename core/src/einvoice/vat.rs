//! VAT categories (UNCL5305, as EN 16931 uses them) and the rate each
//! takes.
//!
//! Invariants: a standard-rated line, allowance or charge (S) has a rate
//! above zero, every other category the rate zero (BT-152, BT-96, BT-103);
//! each category has its code and, where EN 16931 asks one, its exemption
//! reason.

use super::decimal::Dec;
use super::model::{invalid, DocumentError, LineInput};

/// A VAT category code (UNCL5305, as EN 16931 uses them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VatCategory {
    /// Standard rate.
    S,
    /// Zero rated goods.
    Z,
    /// Exempt from VAT.
    E,
    /// Reverse charge (intra-EU B2B services and more).
    AE,
    /// Intra-community supply of goods.
    K,
    /// Export outside the EU.
    G,
    /// Not subject to VAT.
    O,
}

impl VatCategory {
    /// Parses the code.
    pub fn parse(code: &str) -> Option<Self> {
        Some(match code {
            "S" => Self::S,
            "Z" => Self::Z,
            "E" => Self::E,
            "AE" => Self::AE,
            "K" => Self::K,
            "G" => Self::G,
            "O" => Self::O,
            _ => return None,
        })
    }

    /// The code.
    pub fn code(self) -> &'static str {
        match self {
            Self::S => "S",
            Self::Z => "Z",
            Self::E => "E",
            Self::AE => "AE",
            Self::K => "K",
            Self::G => "G",
            Self::O => "O",
        }
    }

    /// The exemption reason written for it (BT-120), where EN 16931 asks for one.
    pub fn exemption_reason(self) -> Option<&'static str> {
        match self {
            Self::S | Self::Z => None,
            Self::E => Some("Exempt from VAT"),
            Self::AE => Some("Reverse charge"),
            Self::K => Some("Intra-community supply"),
            Self::G => Some("Export outside the EU"),
            Self::O => Some("Not subject to VAT"),
        }
    }
}

/// The VATEX codes a category other than exempt (E) takes, each only its own.
const CATEGORY_CODES: [(VatCategory, &[&str]); 4] = [
    (VatCategory::AE, &["VATEX-EU-AE", "VATEX-FR-AE"]),
    (VatCategory::K, &["VATEX-EU-IC"]),
    (VatCategory::G, &["VATEX-EU-G"]),
    (VatCategory::O, &["VATEX-EU-O"]),
];

/// A line's exemption code and reason (BT-121, BT-120): none on a taxed or
/// zero-rated line (BR-S-10, BR-Z-10), a code on CEF's VATEX list
/// (BR-CL-22) that names this category's exemption.
pub(super) fn check_exemption(line: &LineInput) -> Result<(), DocumentError> {
    let d = &line.details;
    let c = line.vat_category;
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    if matches!(c, VatCategory::S | VatCategory::Z)
        && (given(&d.vat_exemption_code) || given(&d.vat_exemption_reason))
    {
        return Err(invalid(
            "BT-120",
            "VAT exemption reason",
            format!(
                "BR-S-10 / BR-Z-10: a line of category {} is not exempt and states no exemption",
                c.code()
            ),
        ));
    }
    if let Some(code) = d
        .vat_exemption_code
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        if !super::codes::is_vatex(code) {
            return Err(invalid(
                "BT-121",
                "VAT exemption reason code",
                format!("`{code}` is not on CEF's VATEX list, such as VATEX-EU-132 (BR-CL-22)"),
            ));
        }
        let fits = match CATEGORY_CODES.iter().find(|(cat, _)| *cat == c) {
            Some((_, codes)) => codes.contains(&code),
            None => !CATEGORY_CODES
                .iter()
                .any(|(_, codes)| codes.contains(&code)),
        };
        if !fits {
            return Err(invalid(
                "BT-121",
                "VAT exemption reason code",
                format!("`{code}` is not an exemption of category {}", c.code()),
            ));
        }
    }
    Ok(())
}

pub(super) fn check_rate(line: &LineInput) -> Result<(), DocumentError> {
    check_category_rate(
        line.vat_category,
        line.vat_rate,
        "BT-152",
        "invoiced item VAT rate",
    )
}

/// A rate that fits its category (BR-S-05, BR-Z-05 … for a line, BR-S-06,
/// BR-S-07 … for an allowance or a charge): above zero for S, zero for the
/// others; refused naming `term`.
pub(super) fn check_category_rate(
    category: VatCategory,
    rate: Dec,
    term: &'static str,
    what: &'static str,
) -> Result<(), DocumentError> {
    let zero = rate.is_zero();
    let ok = match category {
        VatCategory::S => !zero && !rate.is_negative(),
        _ => zero,
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(
            term,
            what,
            format!(
                "category {} takes {}, got {}",
                category.code(),
                if category == VatCategory::S {
                    "a rate above 0"
                } else {
                    "the rate 0"
                },
                rate
            ),
        ))
    }
}
