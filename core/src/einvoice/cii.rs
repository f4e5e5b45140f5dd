//! UN/CEFACT Cross Industry Invoice (D16B), EN 16931 profile — the XML a
//! Factur-X / ZUGFeRD PDF carries (`factur-x.xml`).
//!
//! Invariants: elements in the order the CII schema requires; amounts are the
//! [`Document`]'s (a credit note, type 381, states positive amounts and names
//! its invoice in `InvoiceReferencedDocument`); dates in format 102
//! (`YYYYMMDD`); the same document gives the same bytes.

use super::model::{Document, Kind, Party, VatCategory};
use super::xml::Writer;

/// The EN 16931 guideline (BT-24) of a Factur-X EN 16931 file.
pub const GUIDELINE_ID: &str = "urn:cen.eu:en16931:2017";

fn date102(iso: &str) -> String {
    iso.replace('-', "")
}

/// The document as CII.
pub fn to_cii(d: &Document) -> Vec<u8> {
    let cur = d.input.currency.as_str();
    let money = |v| d.amount(v);
    let mut w = Writer::new();
    w.open(
        "rsm:CrossIndustryInvoice",
        &[
            ("xmlns:rsm", "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"),
            ("xmlns:qdt", "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"),
            ("xmlns:ram", "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"),
            ("xmlns:udt", "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"),
        ],
    );
    w.open("rsm:ExchangedDocumentContext", &[])
        .open("ram:GuidelineSpecifiedDocumentContextParameter", &[]);
    w.leaf("ram:ID", &[], GUIDELINE_ID);
    w.close().close();
    w.open("rsm:ExchangedDocument", &[]);
    w.leaf("ram:ID", &[], &d.input.number);
    w.leaf("ram:TypeCode", &[], d.type_code());
    w.open("ram:IssueDateTime", &[]);
    w.leaf(
        "udt:DateTimeString",
        &[("format", "102")],
        &date102(&d.input.issue_date),
    );
    w.close();
    if d.input.paid {
        w.open("ram:IncludedNote", &[]);
        w.leaf("ram:Content", &[], "Paid");
        w.close();
    }
    w.close();
    w.open("rsm:SupplyChainTradeTransaction", &[]);
    for (i, l) in d.lines.iter().enumerate() {
        w.open("ram:IncludedSupplyChainTradeLineItem", &[]);
        w.open("ram:AssociatedDocumentLineDocument", &[]);
        w.leaf("ram:LineID", &[], &(i + 1).to_string());
        w.close();
        w.open("ram:SpecifiedTradeProduct", &[]);
        w.leaf("ram:Name", &[], &l.input.name);
        w.close();
        w.open("ram:SpecifiedLineTradeAgreement", &[])
            .open("ram:NetPriceProductTradePrice", &[]);
        w.leaf("ram:ChargeAmount", &[], &l.input.unit_price.trimmed());
        w.close().close();
        w.open("ram:SpecifiedLineTradeDelivery", &[]);
        w.leaf(
            "ram:BilledQuantity",
            &[("unitCode", "C62")],
            &l.input.quantity.trimmed(),
        );
        w.close();
        w.open("ram:SpecifiedLineTradeSettlement", &[]);
        w.open("ram:ApplicableTradeTax", &[]);
        w.leaf("ram:TypeCode", &[], "VAT");
        w.leaf("ram:CategoryCode", &[], l.input.vat_category.code());
        if l.input.vat_category != VatCategory::O {
            w.leaf(
                "ram:RateApplicablePercent",
                &[],
                &l.input.vat_rate.trimmed(),
            );
        }
        w.close();
        w.open("ram:SpecifiedTradeSettlementLineMonetarySummation", &[]);
        w.leaf("ram:LineTotalAmount", &[], &money(l.net));
        w.close().close().close();
    }
    w.open("ram:ApplicableHeaderTradeAgreement", &[]);
    w.leaf_opt("ram:BuyerReference", d.input.buyer_reference.as_deref());
    party(&mut w, "ram:SellerTradeParty", &d.input.seller);
    party(&mut w, "ram:BuyerTradeParty", &d.input.buyer);
    w.close();
    w.open("ram:ApplicableHeaderTradeDelivery", &[]);
    if d.breakdown.iter().any(|b| b.category == VatCategory::K) {
        w.open("ram:ShipToTradeParty", &[])
            .open("ram:PostalTradeAddress", &[]);
        w.leaf("ram:CountryID", &[], &d.input.buyer.country);
        w.close().close();
        w.open("ram:ActualDeliverySupplyChainEvent", &[])
            .open("ram:OccurrenceDateTime", &[]);
        w.leaf(
            "udt:DateTimeString",
            &[("format", "102")],
            &date102(&d.input.issue_date),
        );
        w.close().close();
    }
    w.close();
    w.open("ram:ApplicableHeaderTradeSettlement", &[]);
    w.leaf("ram:InvoiceCurrencyCode", &[], cur);
    if let Some(iban) = super::terms::transfer_account(d) {
        w.open("ram:SpecifiedTradeSettlementPaymentMeans", &[]);
        w.leaf("ram:TypeCode", &[], "30");
        w.open("ram:PayeePartyCreditorFinancialAccount", &[]);
        w.leaf("ram:IBANID", &[], iban);
        w.close().close();
    }
    for b in &d.breakdown {
        w.open("ram:ApplicableTradeTax", &[]);
        w.leaf("ram:CalculatedAmount", &[], &money(b.tax));
        w.leaf("ram:TypeCode", &[], "VAT");
        w.leaf_opt("ram:ExemptionReason", b.category.exemption_reason());
        w.leaf("ram:BasisAmount", &[], &money(b.base));
        w.leaf("ram:CategoryCode", &[], b.category.code());
        if b.category != VatCategory::O {
            w.leaf("ram:RateApplicablePercent", &[], &b.rate.trimmed());
        }
        w.close();
    }
    let due_date = Party::text(&d.input.due_date);
    if due_date.is_some() || Party::text(&d.input.payment_terms).is_some() {
        w.open("ram:SpecifiedTradePaymentTerms", &[]);
        w.leaf_opt("ram:Description", d.input.payment_terms.as_deref());
        if let Some(date) = due_date {
            w.open("ram:DueDateDateTime", &[]);
            w.leaf("udt:DateTimeString", &[("format", "102")], &date102(date));
            w.close();
        }
        w.close();
    }
    w.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation", &[]);
    w.leaf("ram:LineTotalAmount", &[], &money(d.totals.lines));
    w.leaf("ram:TaxBasisTotalAmount", &[], &money(d.totals.without_vat));
    w.leaf(
        "ram:TaxTotalAmount",
        &[("currencyID", cur)],
        &money(d.totals.vat),
    );
    if let Some(r) = d.totals.rounding {
        w.leaf("ram:RoundingAmount", &[], &money(r));
    }
    w.leaf("ram:GrandTotalAmount", &[], &money(d.totals.with_vat));
    w.leaf("ram:TotalPrepaidAmount", &[], &money(d.totals.paid));
    w.leaf("ram:DuePayableAmount", &[], &money(d.totals.due));
    w.close();
    if let Kind::CreditNote {
        preceding,
        preceding_date,
    } = &d.input.kind
    {
        w.open("ram:InvoiceReferencedDocument", &[]);
        w.leaf("ram:IssuerAssignedID", &[], preceding);
        if let Some(date) = preceding_date {
            w.open("ram:FormattedIssueDateTime", &[]);
            w.leaf("qdt:DateTimeString", &[("format", "102")], &date102(date));
            w.close();
        }
        w.close();
    }
    w.close().close();
    w.finish()
}

fn party(w: &mut Writer, role: &'static str, p: &Party) {
    w.open(role, &[]);
    w.leaf("ram:Name", &[], &p.name);
    if let Some(legal) = Party::text(&p.legal_id) {
        w.open("ram:SpecifiedLegalOrganization", &[]);
        w.leaf("ram:ID", &[], legal);
        w.close();
    }
    if let Some(email) = Party::text(&p.email) {
        w.open("ram:DefinedTradeContact", &[])
            .open("ram:EmailURIUniversalCommunication", &[]);
        w.leaf("ram:URIID", &[], email);
        w.close().close();
    }
    w.open("ram:PostalTradeAddress", &[]);
    w.leaf_opt("ram:PostcodeCode", p.postcode.as_deref());
    w.leaf_opt("ram:LineOne", p.street.as_deref());
    w.leaf_opt("ram:CityName", p.city.as_deref());
    w.leaf("ram:CountryID", &[], &p.country);
    w.close();
    if let (Some(address), Some(scheme)) = (
        Party::text(&p.electronic_address),
        Party::text(&p.electronic_address_scheme),
    ) {
        w.open("ram:URIUniversalCommunication", &[]);
        w.leaf("ram:URIID", &[("schemeID", scheme)], address);
        w.close();
    }
    if let Some(vat) = Party::text(&p.vat_id) {
        w.open("ram:SpecifiedTaxRegistration", &[]);
        w.leaf("ram:ID", &[("schemeID", "VA")], vat);
        w.close();
    }
    w.close();
}
