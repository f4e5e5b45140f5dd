//! UBL 2.1 Invoice and CreditNote: Peppol BIS Billing 3.0 when the document
//! may claim it ([`super::peppol::claims_peppol`]), else plain EN 16931.
//!
//! Invariants: elements in the order the UBL 2.1 schemas require; every
//! amount is the [`Document`]'s, written with its currency's places and
//! `currencyID`; a credit note is a `CreditNote` (type 381) naming its
//! invoice in `BillingReference` (BT-25, BT-26); document-level allowances
//! and charges (BG-20, BG-21) and their totals (BT-107, BT-108) only when
//! there are any; the same document gives the same bytes.

use super::model::{Document, Kind, Party, VatCategory};
use super::xml::Writer;

const CAC: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2";
const CBC: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";

/// The document as UBL.
pub fn to_ubl(d: &Document) -> Vec<u8> {
    let credit = matches!(d.input.kind, Kind::CreditNote { .. });
    let (root, ns) = if credit {
        (
            "CreditNote",
            "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
        )
    } else {
        (
            "Invoice",
            "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
        )
    };
    let cur = d.input.currency.as_str();
    let money = |v| d.amount(v);
    let mut w = Writer::new();
    w.open(
        root,
        &[("xmlns", ns), ("xmlns:cac", CAC), ("xmlns:cbc", CBC)],
    );
    let (customization, profile) = super::peppol::profile(&d.input);
    w.leaf("cbc:CustomizationID", &[], customization);
    w.leaf_opt("cbc:ProfileID", profile);
    w.leaf("cbc:ID", &[], &d.input.number);
    w.leaf("cbc:IssueDate", &[], &d.input.issue_date);
    if !credit {
        w.leaf_opt("cbc:DueDate", d.input.due_date.as_deref());
    }
    w.leaf(
        if credit {
            "cbc:CreditNoteTypeCode"
        } else {
            "cbc:InvoiceTypeCode"
        },
        &[],
        d.type_code(),
    );
    if d.paid_in_full() {
        w.leaf("cbc:Note", &[], "Paid");
    }
    let x = &d.input.details;
    for note in &x.notes {
        match Party::text(&note.subject) {
            Some(subject) => w.leaf("cbc:Note", &[], &format!("#{subject}#{}", note.text)),
            None => w.leaf("cbc:Note", &[], &note.text),
        };
    }
    w.leaf("cbc:DocumentCurrencyCode", &[], cur);
    w.leaf_opt("cbc:TaxCurrencyCode", x.tax_currency.as_deref());
    w.leaf_opt("cbc:BuyerReference", d.input.buyer_reference.as_deref());
    if x.has_period() {
        w.open("cac:InvoicePeriod", &[]);
        w.leaf_opt("cbc:StartDate", x.period_start.as_deref());
        w.leaf_opt("cbc:EndDate", x.period_end.as_deref());
        w.close();
    }
    let sales_order = Party::text(&x.sales_order_reference);
    if let Some(order) = Party::text(&x.order_reference).or(sales_order.map(|_| "NA")) {
        w.open("cac:OrderReference", &[]);
        w.leaf("cbc:ID", &[], order);
        w.leaf_opt("cbc:SalesOrderID", sales_order);
        w.close();
    }
    if let Kind::CreditNote {
        preceding,
        preceding_date,
    } = &d.input.kind
    {
        w.open("cac:BillingReference", &[])
            .open("cac:InvoiceDocumentReference", &[]);
        w.leaf("cbc:ID", &[], preceding);
        w.leaf_opt("cbc:IssueDate", preceding_date.as_deref());
        w.close().close();
    }
    party(&mut w, "cac:AccountingSupplierParty", &d.input.seller);
    party(&mut w, "cac:AccountingCustomerParty", &d.input.buyer);
    if let Some(delivery) = super::delivery::of(d) {
        w.open("cac:Delivery", &[]);
        w.leaf_opt("cbc:ActualDeliveryDate", delivery.date);
        if let Some(a) = &delivery.address {
            w.open("cac:DeliveryLocation", &[]).open("cac:Address", &[]);
            w.leaf_opt("cbc:StreetName", a.street.as_deref());
            w.leaf_opt("cbc:CityName", a.city.as_deref());
            w.leaf_opt("cbc:PostalZone", a.postcode.as_deref());
            w.open("cac:Country", &[]);
            w.leaf("cbc:IdentificationCode", &[], &a.country);
            w.close().close().close();
        }
        if let Some(name) = delivery.address.as_ref().and_then(|a| Party::text(&a.name)) {
            w.open("cac:DeliveryParty", &[]).open("cac:PartyName", &[]);
            w.leaf("cbc:Name", &[], name);
            w.close().close();
        }
        w.close();
    }
    if let Some(m) = d.means() {
        w.open("cac:PaymentMeans", &[]);
        w.leaf("cbc:PaymentMeansCode", &[], m.code);
        w.leaf_opt("cbc:PaymentID", m.remittance);
        if let Some(iban) = m.account {
            w.open("cac:PayeeFinancialAccount", &[]);
            w.leaf("cbc:ID", &[], iban);
            w.close();
        }
        if let Some(mandate) = m.mandate {
            w.open("cac:PaymentMandate", &[]);
            w.leaf("cbc:ID", &[], mandate);
            w.close();
        }
        w.close();
    }
    if Party::text(&d.input.payment_terms).is_some() {
        w.open("cac:PaymentTerms", &[]);
        w.leaf_opt("cbc:Note", d.input.payment_terms.as_deref());
        w.close();
    }
    for a in &d.allowance_charges {
        w.open("cac:AllowanceCharge", &[]);
        w.leaf(
            "cbc:ChargeIndicator",
            &[],
            if a.charge { "true" } else { "false" },
        );
        w.leaf_opt("cbc:AllowanceChargeReasonCode", a.reason_code.as_deref());
        w.leaf_opt("cbc:AllowanceChargeReason", a.reason.as_deref());
        w.leaf("cbc:Amount", &[("currencyID", cur)], &money(a.amount));
        tax_category(
            &mut w,
            "cac:TaxCategory",
            a.category,
            &a.rate.trimmed(),
            None,
        );
        w.close();
    }
    w.open("cac:TaxTotal", &[]);
    w.leaf(
        "cbc:TaxAmount",
        &[("currencyID", cur)],
        &money(d.totals.vat),
    );
    for b in &d.breakdown {
        w.open("cac:TaxSubtotal", &[]);
        w.leaf("cbc:TaxableAmount", &[("currencyID", cur)], &money(b.base));
        w.leaf("cbc:TaxAmount", &[("currencyID", cur)], &money(b.tax));
        tax_category(
            &mut w,
            "cac:TaxCategory",
            b.category,
            &b.rate.trimmed(),
            Some((b.exemption_code.as_deref(), b.exemption_reason.as_deref())),
        );
        w.close();
    }
    w.close();
    if let (Some(c), Some(v)) = (Party::text(&x.tax_currency), x.vat_in_tax_currency) {
        w.open("cac:TaxTotal", &[]);
        let places = super::model::document_places(c);
        w.leaf(
            "cbc:TaxAmount",
            &[("currencyID", c)],
            &v.round(places).unwrap_or(v).to_string(),
        );
        w.close();
    }
    w.open("cac:LegalMonetaryTotal", &[]);
    w.leaf(
        "cbc:LineExtensionAmount",
        &[("currencyID", cur)],
        &money(d.totals.lines),
    );
    w.leaf(
        "cbc:TaxExclusiveAmount",
        &[("currencyID", cur)],
        &money(d.totals.without_vat),
    );
    w.leaf(
        "cbc:TaxInclusiveAmount",
        &[("currencyID", cur)],
        &money(d.totals.with_vat),
    );
    if d.allowance_charges.iter().any(|a| !a.charge) {
        w.leaf(
            "cbc:AllowanceTotalAmount",
            &[("currencyID", cur)],
            &money(d.totals.allowances),
        );
    }
    if d.allowance_charges.iter().any(|a| a.charge) {
        w.leaf(
            "cbc:ChargeTotalAmount",
            &[("currencyID", cur)],
            &money(d.totals.charges),
        );
    }
    w.leaf(
        "cbc:PrepaidAmount",
        &[("currencyID", cur)],
        &money(d.totals.paid),
    );
    if let Some(r) = d.totals.rounding {
        w.leaf(
            "cbc:PayableRoundingAmount",
            &[("currencyID", cur)],
            &money(r),
        );
    }
    w.leaf(
        "cbc:PayableAmount",
        &[("currencyID", cur)],
        &money(d.totals.due),
    );
    w.close();
    for (i, l) in d.lines.iter().enumerate() {
        w.open(
            if credit {
                "cac:CreditNoteLine"
            } else {
                "cac:InvoiceLine"
            },
            &[],
        );
        w.leaf("cbc:ID", &[], &(i + 1).to_string());
        w.leaf(
            if credit {
                "cbc:CreditedQuantity"
            } else {
                "cbc:InvoicedQuantity"
            },
            &[("unitCode", l.unit_code())],
            &l.input.quantity.trimmed(),
        );
        w.leaf(
            "cbc:LineExtensionAmount",
            &[("currencyID", cur)],
            &money(l.net),
        );
        w.open("cac:Item", &[]);
        w.leaf("cbc:Name", &[], &l.input.name);
        if let Some(sku) = Party::text(&l.input.details.seller_item_id) {
            w.open("cac:SellersItemIdentification", &[]);
            w.leaf("cbc:ID", &[], sku);
            w.close();
        }
        if let Some(gtin) = Party::text(&l.input.details.gtin) {
            w.open("cac:StandardItemIdentification", &[]);
            w.leaf("cbc:ID", &[("schemeID", "0160")], gtin);
            w.close();
        }
        tax_category(
            &mut w,
            "cac:ClassifiedTaxCategory",
            l.input.vat_category,
            &l.input.vat_rate.trimmed(),
            None,
        );
        w.close();
        w.open("cac:Price", &[]);
        w.leaf(
            "cbc:PriceAmount",
            &[("currencyID", cur)],
            &l.input.unit_price.trimmed(),
        );
        w.close();
        w.close();
    }
    w.finish()
}

/// A tax category; a breakdown's (not a line's) with its exemption code and reason.
fn tax_category(
    w: &mut Writer,
    element: &'static str,
    c: VatCategory,
    rate: &str,
    exemption: Option<(Option<&str>, Option<&str>)>,
) {
    w.open(element, &[]);
    w.leaf("cbc:ID", &[], c.code());
    if c != VatCategory::O {
        w.leaf("cbc:Percent", &[], rate);
    }
    if let Some((code, reason)) = exemption {
        w.leaf_opt("cbc:TaxExemptionReasonCode", code);
        w.leaf_opt("cbc:TaxExemptionReason", reason);
    }
    w.open("cac:TaxScheme", &[]);
    w.leaf("cbc:ID", &[], "VAT");
    w.close().close();
}

fn party(w: &mut Writer, role: &'static str, p: &Party) {
    w.open(role, &[]).open("cac:Party", &[]);
    if let (Some(address), Some(scheme)) = (
        Party::text(&p.electronic_address),
        Party::text(&p.electronic_address_scheme),
    ) {
        w.leaf("cbc:EndpointID", &[("schemeID", scheme)], address);
    }
    w.open("cac:PostalAddress", &[]);
    w.leaf_opt("cbc:StreetName", p.street.as_deref());
    w.leaf_opt("cbc:CityName", p.city.as_deref());
    w.leaf_opt("cbc:PostalZone", p.postcode.as_deref());
    w.open("cac:Country", &[]);
    w.leaf("cbc:IdentificationCode", &[], &p.country);
    w.close().close();
    if let Some(vat) = Party::text(&p.vat_id) {
        w.open("cac:PartyTaxScheme", &[]);
        w.leaf("cbc:CompanyID", &[], vat);
        w.open("cac:TaxScheme", &[]);
        w.leaf("cbc:ID", &[], "VAT");
        w.close().close();
    }
    if let Some(tax) = Party::text(&p.tax_registration_id) {
        w.open("cac:PartyTaxScheme", &[]);
        w.leaf("cbc:CompanyID", &[], tax);
        w.open("cac:TaxScheme", &[]);
        w.leaf("cbc:ID", &[], "TAX");
        w.close().close();
    }
    w.open("cac:PartyLegalEntity", &[]);
    w.leaf("cbc:RegistrationName", &[], &p.name);
    if let Some(legal) = Party::text(&p.legal_id) {
        match Party::text(&p.legal_id_scheme) {
            Some(scheme) => w.leaf("cbc:CompanyID", &[("schemeID", scheme)], legal),
            None => w.leaf("cbc:CompanyID", &[], legal),
        };
    }
    w.close();
    if p.email.as_deref().is_some_and(|e| !e.trim().is_empty()) {
        w.open("cac:Contact", &[]);
        w.leaf_opt("cbc:ElectronicMail", p.email.as_deref());
        w.close();
    }
    w.close().close();
}
