//! When a document may claim Peppol BIS Billing 3.0: only when what Peppol
//! asks beyond EN 16931 holds, so that a UBL file never states a profile
//! its receivers' rules refuse. Otherwise it is plain EN 16931 UBL
//! (`urn:cen.eu:en16931:2017`), valid under CEN's rules.
//!
//! Invariants: a document claims Peppol only when both parties have an
//! electronic address whose scheme is on Peppol's EAS list (PEPPOL-EN16931-
//! R010, R020, CL008: an e-mail, scheme `EM`, is not) and it names a buyer
//! reference (R003); the list is Peppol's as of BIS Billing 3.0.19
//! (2025-Q2). The pure-PHP twin (`Counterfoil_Einvoice::claims_peppol`)
//! holds the same list, and the shared vectors hold both to it.

use super::model::{DocumentInput, Party};

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
    is_participant(&input.seller)
        && is_participant(&input.buyer)
        && Party::text(&input.buyer_reference).is_some()
}

/// The specification identifier (BT-24) and business process (BT-23) a UBL
/// document of `input` states.
pub fn profile(input: &DocumentInput) -> (&'static str, Option<&'static str>) {
    if claims_peppol(input) {
        (PEPPOL_CUSTOMIZATION_ID, Some(PEPPOL_PROFILE_ID))
    } else {
        (EN16931_CUSTOMIZATION_ID, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
