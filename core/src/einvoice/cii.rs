//! UN/CEFACT Cross Industry Invoice (D16B), EN 16931 profile — the XML a
//! Factur-X / ZUGFeRD PDF carries (`factur-x.xml`).
//!
//! Invariants: elements in the order the CII schema requires; amounts are the
//! [`Document`]'s (a credit note, type 381, states positive amounts and names
//! its invoice in `InvoiceReferencedDocument`); document-level allowances
//! and charges (BG-20, BG-21) and their totals only when there are any;
//! dates in format 102 (`YYYYMMDD`); the same document gives the same bytes.

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
    w.open("rsm:ExchangedDocumentContext", &[]);
    if let Some(process) = Party::text(&d.input.details.business_process) {
        w.open("ram:BusinessProcessSpecifiedDocumentContextParameter", &[]);
        w.leaf("ram:ID", &[], process);
        w.close();
    }
    w.open("ram:GuidelineSpecifiedDocumentContextParameter", &[]);
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
    if d.paid_in_full() {
        w.open("ram:IncludedNote", &[]);
        w.leaf("ram:Content", &[], "Paid");
        w.close();
    }
    let x = &d.input.details;
    for note in &x.notes {
        w.open("ram:IncludedNote", &[]);
        w.leaf("ram:Content", &[], &note.text);
        w.leaf_opt("ram:SubjectCode", note.subject.as_deref());
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
        if let Some(gtin) = Party::text(&l.input.details.gtin) {
            w.leaf("ram:GlobalID", &[("schemeID", "0160")], gtin);
        }
        w.leaf_opt(
            "ram:SellerAssignedID",
            l.input.details.seller_item_id.as_deref(),
        );
        w.leaf("ram:Name", &[], &l.input.name);
        w.close();
        w.open("ram:SpecifiedLineTradeAgreement", &[])
            .open("ram:NetPriceProductTradePrice", &[]);
        w.leaf("ram:ChargeAmount", &[], &l.input.unit_price.trimmed());
        w.close().close();
        w.open("ram:SpecifiedLineTradeDelivery", &[]);
        w.leaf(
            "ram:BilledQuantity",
            &[("unitCode", l.unit_code())],
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
    if let Some(order) = Party::text(&x.sales_order_reference) {
        w.open("ram:SellerOrderReferencedDocument", &[]);
        w.leaf("ram:IssuerAssignedID", &[], order);
        w.close();
    }
    if let Some(order) = Party::text(&x.order_reference) {
        w.open("ram:BuyerOrderReferencedDocument", &[]);
        w.leaf("ram:IssuerAssignedID", &[], order);
        w.close();
    }
    w.close();
    w.open("ram:ApplicableHeaderTradeDelivery", &[]);
    if let Some(delivery) = super::delivery::of(d) {
        if let Some(a) = &delivery.address {
            w.open("ram:ShipToTradeParty", &[]);
            w.leaf_opt("ram:Name", a.name.as_deref());
            w.open("ram:PostalTradeAddress", &[]);
            w.leaf_opt("ram:PostcodeCode", a.postcode.as_deref());
            w.leaf_opt("ram:LineOne", a.street.as_deref());
            w.leaf_opt("ram:CityName", a.city.as_deref());
            w.leaf("ram:CountryID", &[], &a.country);
            w.close().close();
        }
        if let Some(date) = delivery.date {
            w.open("ram:ActualDeliverySupplyChainEvent", &[])
                .open("ram:OccurrenceDateTime", &[]);
            w.leaf("udt:DateTimeString", &[("format", "102")], &date102(date));
            w.close().close();
        }
    }
    w.close();
    w.open("ram:ApplicableHeaderTradeSettlement", &[]);
    let means = d.means();
    w.leaf_opt(
        "ram:PaymentReference",
        means.as_ref().and_then(|m| m.remittance),
    );
    w.leaf_opt("ram:TaxCurrencyCode", x.tax_currency.as_deref());
    w.leaf("ram:InvoiceCurrencyCode", &[], cur);
    if let Some(m) = &means {
        w.open("ram:SpecifiedTradeSettlementPaymentMeans", &[]);
        w.leaf("ram:TypeCode", &[], m.code);
        if let Some(iban) = m.account {
            w.open("ram:PayeePartyCreditorFinancialAccount", &[]);
            w.leaf("ram:IBANID", &[], iban);
            w.close();
        }
        w.close();
    }
    for b in &d.breakdown {
        w.open("ram:ApplicableTradeTax", &[]);
        w.leaf("ram:CalculatedAmount", &[], &money(b.tax));
        w.leaf("ram:TypeCode", &[], "VAT");
        w.leaf_opt("ram:ExemptionReason", b.exemption_reason.as_deref());
        w.leaf("ram:BasisAmount", &[], &money(b.base));
        w.leaf("ram:CategoryCode", &[], b.category.code());
        w.leaf_opt("ram:ExemptionReasonCode", b.exemption_code.as_deref());
        if b.category != VatCategory::O {
            w.leaf("ram:RateApplicablePercent", &[], &b.rate.trimmed());
        }
        w.close();
    }
    if x.has_period() {
        w.open("ram:BillingSpecifiedPeriod", &[]);
        for (element, date) in [
            ("ram:StartDateTime", Party::text(&x.period_start)),
            ("ram:EndDateTime", Party::text(&x.period_end)),
        ] {
            if let Some(date) = date {
                w.open(element, &[]);
                w.leaf("udt:DateTimeString", &[("format", "102")], &date102(date));
                w.close();
            }
        }
        w.close();
    }
    for a in &d.allowance_charges {
        w.open("ram:SpecifiedTradeAllowanceCharge", &[]);
        w.open("ram:ChargeIndicator", &[]);
        w.leaf(
            "udt:Indicator",
            &[],
            if a.charge { "true" } else { "false" },
        );
        w.close();
        w.leaf("ram:ActualAmount", &[], &money(a.amount));
        w.leaf_opt("ram:ReasonCode", a.reason_code.as_deref());
        w.leaf_opt("ram:Reason", a.reason.as_deref());
        w.open("ram:CategoryTradeTax", &[]);
        w.leaf("ram:TypeCode", &[], "VAT");
        w.leaf("ram:CategoryCode", &[], a.category.code());
        if a.category != VatCategory::O {
            w.leaf("ram:RateApplicablePercent", &[], &a.rate.trimmed());
        }
        w.close().close();
    }
    let due_date = Party::text(&d.input.due_date);
    let mandate = means.as_ref().and_then(|m| m.mandate);
    if due_date.is_some() || Party::text(&d.input.payment_terms).is_some() || mandate.is_some() {
        w.open("ram:SpecifiedTradePaymentTerms", &[]);
        w.leaf_opt("ram:Description", d.input.payment_terms.as_deref());
        if let Some(date) = due_date {
            w.open("ram:DueDateDateTime", &[]);
            w.leaf("udt:DateTimeString", &[("format", "102")], &date102(date));
            w.close();
        }
        w.leaf_opt("ram:DirectDebitMandateID", mandate);
        w.close();
    }
    w.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation", &[]);
    w.leaf("ram:LineTotalAmount", &[], &money(d.totals.lines));
    if d.allowance_charges.iter().any(|a| a.charge) {
        w.leaf("ram:ChargeTotalAmount", &[], &money(d.totals.charges));
    }
    if d.allowance_charges.iter().any(|a| !a.charge) {
        w.leaf("ram:AllowanceTotalAmount", &[], &money(d.totals.allowances));
    }
    w.leaf("ram:TaxBasisTotalAmount", &[], &money(d.totals.without_vat));
    w.leaf(
        "ram:TaxTotalAmount",
        &[("currencyID", cur)],
        &money(d.totals.vat),
    );
    if let (Some(c), Some(v)) = (Party::text(&x.tax_currency), x.vat_in_tax_currency) {
        let places = super::model::document_places(c);
        w.leaf(
            "ram:TaxTotalAmount",
            &[("currencyID", c)],
            &v.round(places).unwrap_or(v).to_string(),
        );
    }
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
        match Party::text(&p.legal_id_scheme) {
            Some(scheme) => w.leaf("ram:ID", &[("schemeID", scheme)], legal),
            None => w.leaf("ram:ID", &[], legal),
        };
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
    if let Some(tax) = Party::text(&p.tax_registration_id) {
        w.open("ram:SpecifiedTaxRegistration", &[]);
        w.leaf("ram:ID", &[("schemeID", "FC")], tax);
        w.close();
    }
    w.close();
}
