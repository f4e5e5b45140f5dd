"""Checks e-invoices by OpenPeppol's own rules, when a checkout of them is
named: COUNTERFOIL_PEPPOL_RULES (a checkout of OpenPEPPOL/peppol-bis-invoice-3,
its rules/sch/*.sch) and COUNTERFOIL_SCHXSLT (a checkout of schxslt/schxslt,
whose XSLT 2.0 pipeline compiles Schematron to XSLT), run by saxonche. Neither
is committed: fetch both by hand. The compiled stylesheets are kept in
COUNTERFOIL_PEPPOL_CACHE (default: a folder next to this run's files).

Every document is judged by CEN-EN16931-UBL.sch or -CII.sch (CEN's rules as
Peppol bundles them, BR-CO-25 among them); a document that claims Peppol
BIS Billing 3.0 (its specification identifier names
urn:fdc:peppol.eu:2017:poacc:billing:3.0) also by PEPPOL-EN16931-UBL.sch or
-CII.sch (Peppol's own, the national rules among them). A document that does
not claim Peppol is not held to Peppol's rules, as its receivers would not. Prints one JSON object per
file: {"file", "peppol": claimed, "rules": {"peppol": [ids], "cen": [ids]}, "fatal":
[{"id", "text", "rules"}], "warnings": [ids]}. Peppol's rules are fatal
unless flagged warning.

Usage: python peppol.py FILE...
"""
import json
import os
import sys

from lxml import etree
from saxonche import PySaxonProcessor

SVRL = "{http://purl.oclc.org/dsdl/svrl}"
RULES = {
    "Invoice": (("peppol", "PEPPOL-EN16931-UBL.sch"), ("cen", "CEN-EN16931-UBL.sch")),
    "CreditNote": (("peppol", "PEPPOL-EN16931-UBL.sch"), ("cen", "CEN-EN16931-UBL.sch")),
    "CrossIndustryInvoice": (("peppol", "PEPPOL-EN16931-CII.sch"), ("cen", "CEN-EN16931-CII.sch")),
}


def need(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"{name} is not set: it names a checkout (see this file's doc)")
    return value


def compiled(proc, xslt30, sch, cache):
    """The XSLT of Schematron file `sch`, compiled by SchXslt (cached)."""
    out = os.path.join(cache, os.path.basename(sch) + ".xsl")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(sch):
        pipeline = os.path.join(
            need("COUNTERFOIL_SCHXSLT"), "core/src/main/resources/xslt/2.0/pipeline-for-svrl.xsl"
        )
        executable = xslt30.compile_stylesheet(stylesheet_file=pipeline)
        text = executable.transform_to_string(source_file=os.path.abspath(sch))
        if not text:
            sys.exit(f"SchXslt made nothing of {sch}: {xslt30.error_message}")
        os.makedirs(cache, exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    return xslt30.compile_stylesheet(stylesheet_file=out)


def main(files):
    rules_dir = os.path.join(need("COUNTERFOIL_PEPPOL_RULES"), "rules/sch")
    cache = os.environ.get("COUNTERFOIL_PEPPOL_CACHE") or os.path.join(
        os.path.dirname(os.path.abspath(files[0])) if files else ".", "peppol-xslt"
    )
    stylesheets = {}
    with PySaxonProcessor(license=False) as proc:
        xslt30 = proc.new_xslt30_processor()
        for path in files:
            root = etree.parse(path).getroot()
            local = etree.QName(root).localname
            claims = "urn:fdc:peppol.eu:2017:poacc:billing:3.0" in " ".join(
                e.text or "" for e in root.iter("{*}CustomizationID", "{*}ID") if e.getparent() is not None
                and etree.QName(e.getparent()).localname in (local, "GuidelineSpecifiedDocumentContextParameter")
            )
            fatal, warnings, ran = [], [], {}
            for label, sch in RULES[local]:
                if label == "peppol" and not claims:
                    continue
                if sch not in stylesheets:
                    stylesheets[sch] = compiled(proc, xslt30, os.path.join(rules_dir, sch), cache)
                svrl = stylesheets[sch].transform_to_string(source_file=os.path.abspath(path))
                report = etree.fromstring(svrl.encode("utf-8"))
                ids = []
                for fa in report.iter(SVRL + "failed-assert"):
                    t = fa.find(SVRL + "text")
                    text = " ".join("".join(t.itertext()).split()) if t is not None else ""
                    rule = fa.get("id") or fa.get("test", "")
                    ids.append(rule)
                    if fa.get("flag") == "warning":
                        warnings.append(rule)
                    else:
                        fatal.append({"id": rule, "text": text[:300], "rules": label})
                ran[label] = ids
            print(json.dumps({"file": path, "peppol": claims, "rules": ran, "fatal": fatal, "warnings": warnings}))
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
