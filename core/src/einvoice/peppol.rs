//! When a document may claim Peppol BIS Billing 3.0: only when what Peppol
//! asks beyond EN 16931 holds, so that a UBL file never states a profile
//! its receivers' rules refuse. Otherwise it is plain EN 16931 UBL
//! (`urn:cen.eu:en16931:2017`), valid under CEN's rules.
//!
//! Invariants: a document claims Peppol only when both parties have an
//! electronic address whose scheme is on Peppol's EAS list (PEPPOL-EN16931-
//! R010, R020, CL008: an e-mail, scheme `EM`, is not) and it names a buyer
//! reference (R003); the list is Peppol's as of BIS Billing 3.0.19
//! (2025-Q2); a document that states its own business process (BT-23, such
//! as France's billing mode, which Peppol's R007 refuses) claims none. A
//! document that claims Peppol also meets the national rules
//! Peppol runs by the seller's country, where this module holds them: the
//! Netherlands' (NL-R-002 … NL-R-008), Denmark's (DK-R-002, DK-R-014, and
//! DK-R-005 between two Danish parties), Italy's (IT-R-001 … IT-R-004),
//! Sweden's (SE-R-001 … SE-R-006, SE-R-013) and Norway's (NO-R-001); one
//! that would not is refused naming the term and the rule, never written
//! with a label its receivers refuse. A Greek seller's document claims no
//! Peppol: Greece's rules ask a myDATA MARK number and an invoice number of
//! six segments, which a shop's own numbering does not give.
//! The pure-PHP twin (`Counterfoil_Einvoice::claims_peppol`)
//! holds the same list, and the shared vectors hold both to it.

use super::decimal::Dec;
use super::model::{invalid, missing, DocumentError, DocumentInput, Kind, Party};

/// Peppol BIS Billing 3.0's specification identifier (BT-24).
pub const PEPPOL_CUSTOMIZATION_ID: &str =
    "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";
/// Its business process (BT-23).
pub const PEPPOL_PROFILE_ID: &str = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";
/// EN 16931 itself, without a CIUS (BT-24).
pub const EN16931_CUSTOMIZATION_ID: &str = "urn:cen.eu:en16931:2017";

/// The electronic address schemes Peppol accepts (its EAS code list, as
/// PEPPOL-EN16931-CL008 checks it in BIS Billing 3.0.19).
pub const PEPPOL_EAS: &[&str] = &[
    "0002", "0007", "0009", "0037", "0060", "0088", "0096", "0097", "0106", "0130", "0135", "0142",
    "0147", "0151", "0154", "0158", "0170", "0177", "0183", "0184", "0188", "0190", "0191", "0192",
    "0193", "0194", "0195", "0196", "0198", "0199", "0200", "0201", "0202", "0203", "0204", "0205",
    "0208", "0209", "0210", "0211", "0212", "0213", "0215", "0216", "0217", "0218", "0221", "0225",
    "0230", "0235", "0240", "9910", "9913", "9914", "9915", "9918", "9919", "9920", "9922", "9923",
    "9924", "9925", "9926", "9927", "9928", "9929", "9930", "9931", "9932", "9933", "9934", "9935",
    "9936", "9937", "9938", "9939", "9940", "9941", "9942", "9943", "9944", "9945", "9946", "9947",
    "9948", "9949", "9950", "9951", "9952", "9953", "9957", "9959",
];

/// Whether `p` has a Peppol participant id: an electronic address under a
/// scheme on Peppol's list.
pub fn is_participant(p: &Party) -> bool {
    Party::text(&p.electronic_address).is_some()
        && Party::text(&p.electronic_address_scheme).is_some_and(|s| PEPPOL_EAS.contains(&s))
}

/// Whether a document of `input` claims Peppol BIS Billing 3.0 (see the
/// module's invariants).
pub fn claims_peppol(input: &DocumentInput) -> bool {
    Party::text(&input.details.business_process).is_none()
        && input.seller.country != "GR"
        && is_participant(&input.seller)
        && is_participant(&input.buyer)
        && (Party::text(&input.buyer_reference).is_some()
            || Party::text(&input.details.order_reference).is_some())
}

/// Payment means Dutch invoices take (NL-R-008).
const NL_MEANS: [&str; 6] = ["30", "48", "49", "57", "58", "59"];
/// Payment means Danish invoices between Danish parties take (DK-R-005).
const DK_MEANS: [&str; 11] = [
    "1", "10", "31", "42", "48", "49", "50", "58", "59", "93", "97",
];

fn scheme_is(p: &Party, schemes: &[&str]) -> bool {
    Party::text(&p.legal_id).is_none()
        || Party::text(&p.legal_id_scheme).is_some_and(|s| schemes.contains(&s))
}

/// The national rules Peppol runs for the seller's country, on a document
/// that claims Peppol; `due` is its amount due.
pub fn check_national(input: &DocumentInput, due: Dec) -> Result<(), DocumentError> {
    if !claims_peppol(input) {
        return Ok(());
    }
    let (seller, buyer) = (&input.seller, &input.buyer);
    let invoice = matches!(input.kind, Kind::Invoice);
    let means = super::settlement::means(input, due).map(|m| m.code);
    let address = |p: &Party| {
        Party::text(&p.street).is_some()
            && Party::text(&p.city).is_some()
            && Party::text(&p.postcode).is_some()
    };
    if seller.country == "NL" {
        if !address(seller) {
            return Err(missing(
                "BT-35",
                "seller address line",
                "NL-R-002: a Dutch seller's address names street, city and post code",
            ));
        }
        if !scheme_is(seller, &["0106", "0190"]) {
            return Err(invalid(
                "BT-30",
                "seller legal registration identifier",
                "NL-R-003: a Dutch seller's legal identifier is a KvK (scheme 0106) or OIN (0190) number",
            ));
        }
        if buyer.country == "NL" && !address(buyer) {
            return Err(missing(
                "BT-50",
                "buyer address line",
                "NL-R-004: a Dutch buyer's address names street, city and post code",
            ));
        }
        if buyer.country == "NL" && !scheme_is(buyer, &["0106", "0190"]) {
            return Err(invalid(
                "BT-47",
                "buyer legal registration identifier",
                "NL-R-005: a Dutch buyer's legal identifier is a KvK (scheme 0106) or OIN (0190) number",
            ));
        }
        if invoice && due.is_positive() && means.is_none() {
            return Err(missing(
                "BT-81",
                "payment means type code",
                "NL-R-007: a Dutch seller's invoice with an amount due states its payment means",
            ));
        }
        if buyer.country == "NL" {
            match means {
                Some(code) if !NL_MEANS.contains(&code) => {
                    return Err(invalid(
                        "BT-81",
                        "payment means type code",
                        format!("NL-R-008: a Dutch invoice's means are 30, 48, 49, 57, 58 or 59, not {code}"),
                    ))
                }
                _ => {}
            }
        }
    }
    if seller.country == "DK" {
        if Party::text(&seller.legal_id).is_none() {
            return Err(missing(
                "BT-30",
                "seller legal registration identifier",
                "DK-R-002: a Danish seller states its CVR number",
            ));
        }
        if !scheme_is(seller, &["0184"]) {
            return Err(invalid(
                "BT-30",
                "seller legal registration identifier",
                "DK-R-014: a Danish seller's legal identifier is its CVR number (scheme 0184)",
            ));
        }
    }
    if seller.country == "DK" && buyer.country == "DK" {
        if let Some(code) = means.filter(|c| !DK_MEANS.contains(c)) {
            return Err(invalid(
                "BT-81",
                "payment means type code",
                format!("DK-R-005: between Danish parties the means are 1, 10, 31, 42, 48, 49, 50, 58, 59, 93 or 97, not {code} (a SEPA transfer is 58)"),
            ));
        }
    }
    if seller.country == "IT" {
        check_italy(seller)?;
    }
    if seller.country == "SE" {
        check_sweden(input)?;
    }
    if seller.country == "NO" {
        if let Some(vat) = Party::text(&seller.vat_id).filter(|v| v.starts_with("NO")) {
            if !is_norwegian_vat(vat) {
                return Err(invalid(
                    "BT-31",
                    "seller VAT identifier",
                    format!("NO-R-001: a Norwegian VAT identifier is NO, an organisation number of nine digits with its check digit, then MVA; not {vat}"),
                ));
            }
        }
    }
    Ok(())
}

fn check_italy(seller: &Party) -> Result<(), DocumentError> {
    if let Some(tax) = Party::text(&seller.tax_registration_id) {
        let ok = (11..=16).contains(&tax.len())
            && tax
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if !ok {
            return Err(invalid(
                "BT-32",
                "seller tax registration identifier",
                "IT-R-001: an Italian seller's tax registration is 11 to 16 capitals and digits",
            ));
        }
    }
    for (field, term, what) in [
        (&seller.street, "BT-35", "seller address line"),
        (&seller.city, "BT-37", "seller city"),
        (&seller.postcode, "BT-38", "seller post code"),
    ] {
        if Party::text(field).is_none() {
            return Err(missing(
                term,
                what,
                "IT-R-002 … IT-R-004: an Italian seller's address names street, city and post code",
            ));
        }
    }
    Ok(())
}

fn check_sweden(input: &DocumentInput) -> Result<(), DocumentError> {
    let seller = &input.seller;
    let vat = Party::text(&seller.vat_id).filter(|v| v.starts_with("SE"));
    if let Some(vat) = vat {
        if vat.len() != 14 || !vat[2..].bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(
                "BT-31",
                "seller VAT identifier",
                format!("SE-R-001 / SE-R-002: a Swedish VAT identifier is SE and twelve digits; not {vat}"),
            ));
        }
    }
    if let Some(legal) = Party::text(&seller.legal_id) {
        if !is_swedish_orgnr(legal) {
            return Err(invalid(
                "BT-30",
                "seller legal registration identifier",
                format!("SE-R-003 / SE-R-004 / SE-R-013: a Swedish organisation number is ten digits, the last by Luhn's check; not {legal}"),
            ));
        }
        if let Some(tax) = Party::text(&seller.tax_registration_id) {
            if tax.trim().to_uppercase() != "GODKÄND FÖR F-SKATT" {
                return Err(invalid(
                    "BT-32",
                    "seller tax registration identifier",
                    "SE-R-005: a Swedish seller's tax registration states \"Godkänd för F-skatt\"",
                ));
            }
        }
    }
    if vat.is_some() {
        let allowed = [Dec::new(6, 0), Dec::new(12, 0), Dec::new(25, 0)];
        for l in &input.lines {
            let same = |r: &Dec| l.vat_rate.checked_sub(*r).is_some_and(|d| d.is_zero());
            if l.vat_category == super::vat::VatCategory::S && !allowed.iter().any(same) {
                return Err(invalid(
                    "BT-152",
                    "invoiced item VAT rate",
                    format!(
                        "SE-R-006: a Swedish seller's standard rates are 6, 12 and 25 %, not {}",
                        l.vat_rate
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A Swedish organisation number: ten digits, the last Luhn's check digit.
fn is_swedish_orgnr(n: &str) -> bool {
    let digits: Vec<u32> = n.chars().filter_map(|c| c.to_digit(10)).collect();
    if digits.len() != 10 || n.len() != 10 {
        return false;
    }
    let sum: u32 = digits[..9]
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let v = if i % 2 == 0 { d * 2 } else { *d };
            v / 10 + v % 10
        })
        .sum();
    (10 - sum % 10) % 10 == digits[9]
}

/// A Norwegian VAT identifier: NO, nine digits whose last is the mod-11
/// check digit (weights 3 2 7 6 5 4 3 2), then MVA.
fn is_norwegian_vat(v: &str) -> bool {
    let Some(number) = v.strip_prefix("NO").and_then(|r| r.strip_suffix("MVA")) else {
        return false;
    };
    let digits: Vec<u32> = number.chars().filter_map(|c| c.to_digit(10)).collect();
    if digits.len() != 9 || number.len() != 9 {
        return false;
    }
    let sum: u32 = [3, 2, 7, 6, 5, 4, 3, 2]
        .iter()
        .zip(&digits)
        .map(|(w, d)| w * d)
        .sum();
    match 11 - sum % 11 {
        11 => digits[8] == 0,
        10 => false,
        c => digits[8] == c,
    }
}

/// The specification identifier (BT-24) and business process (BT-23) a UBL
/// document of `input` states.
pub fn profile(input: &DocumentInput) -> (&'static str, Option<&str>) {
    if claims_peppol(input) {
        (PEPPOL_CUSTOMIZATION_ID, Some(PEPPOL_PROFILE_ID))
    } else {
        (
            EN16931_CUSTOMIZATION_ID,
            Party::text(&input.details.business_process),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swedish_and_norwegian_numbers_by_their_check_digits() {
        assert!(is_swedish_orgnr("5560360793") && !is_swedish_orgnr("5560360794"));
        assert!(!is_swedish_orgnr("556036-079") && !is_swedish_orgnr("55603607930"));
        assert!(is_norwegian_vat("NO923609016MVA") && !is_norwegian_vat("NO923609017MVA"));
        assert!(!is_norwegian_vat("NO923609016") && !is_norwegian_vat("SE923609016MVA"));
    }

    fn party(scheme: &str) -> Party {
        Party {
            name: "P".into(),
            country: "BE".into(),
            electronic_address: Some("0123456749".into()),
            electronic_address_scheme: Some(scheme.into()),
            ..Party::default()
        }
    }

    #[test]
    fn an_email_address_is_no_peppol_participant_id() {
        assert!(is_participant(&party("0208")));
        assert!(is_participant(&party("9925")));
        assert!(!is_participant(&party("EM")));
        assert!(!is_participant(&party("")));
        let mut blank = party("0208");
        blank.electronic_address = Some("  ".into());
        assert!(!is_participant(&blank));
    }

    #[test]
    fn the_list_is_sorted_and_unique() {
        assert!(PEPPOL_EAS.windows(2).all(|w| w[0] < w[1]));
    }
}
