//! The Factur-X PDF of every vector document (`tests/vectors/einvoice.json`):
//! made twice, the same bytes (no clock, no randomness); a PDF 1.7 file that
//! names its embedded `factur-x.xml` and carries the CII document byte for
//! byte (the stream is deflated: inflated here and compared). The official
//! checks (factur-x reading it back, the schematrons, poppler's rendering)
//! are `tests/tests/einvoice.rs`'s. `COUNTERFOIL_PDF_OUT=dir` keeps the files
//! (and the German, French and Dutch pages). The pages' text is read back
//! from the file as a reader copies it (glyph ids through the font's
//! `/ToUnicode` map): each term the document states, in its language.

use counterfoil_core::einvoice::{cii, json, pdf, Document};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/einvoice.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_array().unwrap().clone()
}

/// The streams of a PDF that are deflated, inflated.
fn inflated_streams(pdf: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = find(&pdf[at..], b"stream\n") {
        let start = at + i + b"stream\n".len();
        let Some(len) = find(&pdf[start..], b"\nendstream") else {
            break;
        };
        if let Ok(bytes) = miniz_oxide::inflate::decompress_to_vec_zlib(&pdf[start..start + len]) {
            out.push(bytes);
        }
        at = start + len + b"\nendstream".len();
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn every_vector_document_makes_the_same_facturx_pdf_carrying_its_cii() {
    let out = std::env::var_os("COUNTERFOIL_PDF_OUT").map(std::path::PathBuf::from);
    let mut made = 0;
    for case in cases() {
        if case.get("error").is_some() {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let d = Document::build(json::input(&case["document"]).unwrap()).unwrap();
        let first = pdf::to_facturx(&d, "Counterfoil test").unwrap();
        let second = pdf::to_facturx(&d, "Counterfoil test").unwrap();
        assert!(first == second, "{name}: two runs wrote other bytes");
        assert!(first.starts_with(b"%PDF-1.7"), "{name}: not a PDF 1.7 file");
        assert!(
            find(&first, b"(factur-x.xml)").is_some(),
            "{name}: no factur-x.xml"
        );
        assert!(
            find(&first, b"<pdfaid:part>3</pdfaid:part>").is_some(),
            "{name}: no PDF/A-3 XMP"
        );
        let xml = cii::to_cii(&d);
        assert!(
            inflated_streams(&first).contains(&xml),
            "{name}: the embedded XML is not the CII document"
        );
        if let Some(dir) = &out {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(format!("{name}.pdf")), &first).unwrap();
        }
        made += 1;
    }
    assert!(made >= 10, "{made} PDFs made");
}

/// The number of pages a PDF says it has (`/Type /Pages … /Count N`).
fn page_count(pdf: &[u8]) -> usize {
    let text = String::from_utf8_lossy(pdf);
    let at = text.find("/Type /Pages").expect("a page tree");
    let count = &text[at..][text[at..].find("/Count ").unwrap() + 7..];
    count
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A buyer's name a guest can type (a billing company of 25 letters wider
/// than the column and 60,000 zero-width spaces, reachable through the
/// order download and the e-mails) is laid out in linear time and takes at
/// most 24 lines: before, the wrap re-measured its whole line at each
/// character once the word passed the column (measured 2026-12-04 through
/// `Counterfoil\einvoice_document()`, release: 1.1 s at 5,000, 19.9 s at
/// 20,000). Bounded here generously (a debug build, a noisy machine): a
/// few seconds, not minutes.
#[test]
fn a_hostile_buyer_name_costs_milliseconds_and_a_bounded_number_of_pages() {
    let case = cases()
        .into_iter()
        .find(|c| c["name"] == "consumer-one-line")
        .unwrap();
    let plain = Document::build(json::input(&case["document"]).unwrap()).unwrap();
    let plain_pages = page_count(&pdf::to_facturx(&plain, "Counterfoil test").unwrap());
    let mut document = case["document"].clone();
    let name = format!("{}{}", "W".repeat(25), "\u{200B}".repeat(60_000));
    document["buyer"]["name"] = Value::String(name.clone());
    let d = Document::build(json::input(&document).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let bytes = pdf::to_facturx(&d, "Counterfoil test").unwrap();
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(5),
        "the PDF of a 60,000-character name took {took:?}"
    );
    assert!(
        page_count(&bytes) <= plain_pages + 1,
        "the name is capped at 24 lines: {} pages (plain {plain_pages})",
        page_count(&bytes)
    );
    assert!(
        inflated_streams(&bytes).contains(&cii::to_cii(&d)),
        "the embedded XML carries the name whole"
    );
}

/// Every stream of a PDF, inflated when deflated.
fn streams(pdf: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = find(&pdf[at..], b"stream\n") {
        let start = at + i + b"stream\n".len();
        let Some(len) = find(&pdf[start..], b"\nendstream") else {
            break;
        };
        let raw = &pdf[start..start + len];
        out.push(
            miniz_oxide::inflate::decompress_to_vec_zlib(raw).unwrap_or_else(|_| raw.to_vec()),
        );
        at = start + len + b"\nendstream".len();
    }
    out
}

/// The hex digits of `s` as a number.
fn hex(s: &[u8]) -> u32 {
    u32::from_str_radix(std::str::from_utf8(s).unwrap(), 16).unwrap()
}

/// The strings a PDF's pages show, in order: each string operand of `Tj`
/// read back as glyph ids (two bytes each, Identity-H) and mapped to its
/// character by the font's `/ToUnicode` map — what a reader copies.
fn page_text(pdf: &[u8]) -> Vec<String> {
    let streams = streams(pdf);
    let cmap = streams
        .iter()
        .find(|s| find(s, b"beginbfchar").is_some())
        .expect("a ToUnicode map");
    let mut to_char = std::collections::HashMap::new();
    let text = String::from_utf8_lossy(cmap);
    for line in text.lines().filter(|l| l.starts_with('<')) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [cid, unicode] = parts[..] {
            let units: Vec<u16> = unicode
                .trim_matches(['<', '>'])
                .as_bytes()
                .chunks(4)
                .map(|c| hex(c) as u16)
                .collect();
            let c = String::from_utf16(&units).unwrap();
            to_char.insert(hex(cid.trim_matches(['<', '>']).as_bytes()) as u16, c);
        }
    }
    let mut out = Vec::new();
    for content in streams.iter().filter(|s| s.starts_with(b"/G0 cs")) {
        let mut i = 0;
        while i < content.len() {
            let (bytes, end) = match content[i] {
                b'(' => {
                    let (mut bytes, mut depth, mut j) = (Vec::new(), 1, i + 1);
                    while depth > 0 {
                        match content[j] {
                            b'\\' => {
                                j += 1;
                                match content[j] {
                                    b'n' => bytes.push(b'\n'),
                                    b'r' => bytes.push(b'\r'),
                                    b't' => bytes.push(b'\t'),
                                    b'b' => bytes.push(8),
                                    b'f' => bytes.push(12),
                                    b'0'..=b'7' => {
                                        let mut v = 0u32;
                                        let mut k = 0;
                                        while k < 3 && (b'0'..=b'7').contains(&content[j + k]) {
                                            v = v * 8 + u32::from(content[j + k] - b'0');
                                            k += 1;
                                        }
                                        bytes.push(v as u8);
                                        j += k - 1;
                                    }
                                    other => bytes.push(other),
                                }
                            }
                            b'(' => {
                                depth += 1;
                                bytes.push(b'(');
                            }
                            b')' => {
                                depth -= 1;
                                if depth > 0 {
                                    bytes.push(b')');
                                }
                            }
                            other => bytes.push(other),
                        }
                        j += 1;
                    }
                    (bytes, j)
                }
                b'<' => {
                    let close = i + find(&content[i..], b">").unwrap();
                    let digits = &content[i + 1..close];
                    (digits.chunks(2).map(|c| hex(c) as u8).collect(), close + 1)
                }
                _ => {
                    i += 1;
                    continue;
                }
            };
            if content[end..].starts_with(b" Tj") {
                out.push(
                    bytes
                        .chunks(2)
                        .map(|g| to_char[&u16::from_be_bytes([g[0], g[1]])].as_str())
                        .collect(),
                );
            }
            i = end;
        }
    }
    out
}

/// A vector's document, with `edit` applied to its input.
fn vector(name: &str, edit: impl FnOnce(&mut Value)) -> Document {
    let mut input = cases()
        .into_iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no vector {name}"))["document"]
        .clone();
    edit(&mut input);
    Document::build(json::input(&input).unwrap()).unwrap()
}

fn shown(d: &Document) -> (Vec<String>, Vec<u8>) {
    let bytes = pdf::to_facturx(d, "Counterfoil test").unwrap();
    (page_text(&bytes), bytes)
}

fn assert_shows(name: &str, texts: &[String], wants: &[&str]) {
    let all = texts.join(" ");
    for want in wants {
        assert!(
            all.contains(want),
            "{name}: {want:?} not on the page:\n{all}"
        );
    }
}

fn assert_hides(name: &str, texts: &[String], unwanted: &[&str]) {
    let all = texts.join(" ");
    for no in unwanted {
        assert!(!all.contains(no), "{name}: {no:?} on the page:\n{all}");
    }
}

/// The text read back from the PDF is the text laid out: the English page
/// of a document with every new term shows each of them.
#[test]
fn the_page_tells_the_supply_the_orders_and_how_it_is_paid() {
    let (texts, bytes) = shown(&vector("partly-paid-by-transfer", |_| {}));
    assert_shows(
        "partly-paid-by-transfer",
        &texts,
        &[
            "INVOICE",
            "Issued 2026-12-03",
            "Due 2026-12-31",
            "Hauptstraße 5",
            "Purchase order",
            "PO-77",
            "Invoicing period",
            "2026-11-01 – 2026-11-30",
            "Paid",
            "40.00 EUR",
            "Amount due",
            "50.61 EUR",
            "Please pay 50.61 EUR to IBAN BE68539007547034, quoting +++090/9337/55493+++. Due by 2026-12-31.",
            "Page 1 of 1",
        ],
    );
    assert!(
        !texts.iter().any(|t| t == "PAID"),
        "partly paid is not PAID"
    );
    assert!(find(&bytes, b"/Lang (en)").is_some());

    let (texts, _) = shown(&vector("sepa-direct-debit", |_| {}));
    assert_shows(
        "sepa-direct-debit",
        &texts,
        &["90.61 EUR will be collected by direct debit under mandate MANDATE-2026-17. Due by 2026-12-10."],
    );
    assert_hides("sepa-direct-debit", &texts, &["IBAN", "PAID"]);

    let (texts, _) = shown(&vector("reverse-charge-with-vatex", |_| {}));
    assert_shows(
        "reverse-charge-with-vatex",
        &texts,
        &[
            "AE 0 % Reverse charge",
            "Reverse charge: art. 196 Directive 2006/112/EC (VATEX-EU-AE)",
        ],
    );
    let (texts, _) = shown(&vector("small-business-exempt", |_| {}));
    assert_shows(
        "small-business-exempt",
        &texts,
        &[
            "Tax number 0123456749-TAX",
            "E 0 % Exempt from VAT",
            "Small business exemption: VAT not charged (art. 56bis VAT Code)",
        ],
    );
    let (texts, _) = shown(&vector("french-seller", |_| {}));
    assert_shows(
        "french-seller",
        &texts,
        &[
            "Notes",
            "Indemnité forfaitaire pour frais de recouvrement : 40 €",
            "Pas d'escompte pour paiement anticipé",
        ],
    );
    let (texts, _) = shown(&vector("credit-note", |_| {}));
    assert_shows("credit-note", &texts, &["CREDIT NOTE", "Corrects invoice"]);
    assert_hides("credit-note", &texts, &["Please pay", "Amount due"]);
}

#[test]
fn cash_on_delivery_shows_the_amount_due_and_not_paid() {
    let (texts, _) = shown(&vector("cash-on-delivery-due", |_| {}));
    let name = "cash-on-delivery-due";
    assert_shows(
        name,
        &texts,
        &[
            "Amount due",
            "24.19 EUR",
            "Please pay 24.19 EUR in cash. Terms: Cash on delivery: pay the courier",
            "Deliver to",
            "Veldstraat 9",
            "Delivery date",
            "2026-12-04",
            "Order number",
            "1042",
            "Thank you for your order",
        ],
    );
    assert!(
        !texts.iter().any(|t| t == "PAID"),
        "{name}: PAID with an amount due"
    );
    assert_hides(name, &texts, &["Paid in full", "IBAN", "BE68539007547034"]);
}

#[test]
fn a_card_paid_invoice_shows_its_means_and_no_iban() {
    let name = "card-paid-vat-charged-per-line";
    let (texts, _) = shown(&vector(name, |_| {}));
    assert_shows(
        name,
        &texts,
        &[
            "PAID",
            "Paid in full by card: nothing is due.",
            "SKU STK-1 · GTIN 4006381333931",
            "VAT in EUR",
            "7.89 EUR",
        ],
    );
    assert_hides(name, &texts, &["IBAN", "BE68539007547034", "Please pay"]);
}

#[test]
fn the_xml_is_the_alternative_of_the_page() {
    let (_, bytes) = shown(&vector("standard-rates", |_| {}));
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("/AFRelationship /Alternative"), "{text}");
    assert!(!text.contains("/AFRelationship /Data"));
    assert!(text.contains("<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>"));
}

/// German, French and Dutch pages: their labels, dates and decimal
/// commas, no English, every character read back as itself (not `?`),
/// and the catalog's `/Lang`.
#[test]
fn german_french_and_dutch_pages_show_their_labels() {
    let languages: [(&str, &[&str], &[&str]); 3] = [
        (
            "de",
            &[
                "RECHNUNG",
                "Rechnungsdatum: 03.12.2026",
                "Fällig am: 31.12.2026",
                "Rechnungsempfänger",
                "Ihre Bestellnummer",
                "Leistungszeitraum",
                "01.11.2026 – 30.11.2026",
                "Menge",
                "Einzelpreis",
                "Nettobetrag",
                "USt.",
                "S 6 % Regelsteuersatz",
                "2,345",
                "Gesamtbetrag",
                "Bezahlt",
                "Offener Betrag",
                "50,61 EUR",
                "Bitte überweisen Sie 50,61 EUR auf IBAN BE68539007547034 unter Angabe von +++090/9337/55493+++. Zahlbar bis 31.12.2026.",
                "Seite 1 von 1",
                "Diese PDF/A-3-Datei enthält",
            ],
            &["Lieferanschrift", "Lieferdatum", "04.12.2026", "Auftragsnummer", "Hinweise", "Bitte zahlen Sie 24,19 EUR in bar."],
        ),
        (
            "fr",
            &[
                "FACTURE",
                "Date de facture : 03/12/2026",
                "Échéance : 31/12/2026",
                "Facturé à",
                "Bon de commande",
                "Période de facturation",
                "du 01/11/2026 au 30/11/2026",
                "Quantité",
                "Prix unitaire",
                "Base imposable",
                "Total TTC",
                "Déjà payé",
                "Reste à payer",
                "Merci de virer 50,61 EUR sur l’IBAN BE68539007547034 en indiquant +++090/9337/55493+++.",
                "Page 1 sur 1",
            ],
            &["Adresse de livraison", "Date de livraison", "N° de commande", "Remarques", "Merci de régler 24,19 EUR en espèces."],
        ),
        (
            "nl",
            &[
                "FACTUUR",
                "Factuurdatum: 03-12-2026",
                "Vervaldatum: 31-12-2026",
                "Factuur aan",
                "Inkoopordernummer",
                "Factuurperiode",
                "01-11-2026 t/m 30-11-2026",
                "Aantal",
                "Stukprijs",
                "Grondslag",
                "Totaal incl. btw",
                "Betaald",
                "Te betalen",
                "Gelieve 50,61 EUR over te maken op IBAN BE68539007547034 onder vermelding van +++090/9337/55493+++.",
                "Pagina 1 van 1",
            ],
            &["Afleveradres", "Leverdatum", "Ordernummer", "Opmerkingen", "Gelieve 24,19 EUR contant te betalen."],
        ),
    ];
    for (lang, transfer, cash) in languages {
        let set = |v: &mut Value| v["language"] = Value::String(lang.to_owned());
        let (texts, bytes) = shown(&vector("partly-paid-by-transfer", set));
        assert_shows(lang, &texts, transfer);
        assert_hides(
            lang,
            &texts,
            &[
                "INVOICE",
                "Amount due",
                "Please pay",
                "Description",
                "Page 1 of 1",
                "?",
            ],
        );
        assert!(
            find(&bytes, format!("/Lang ({lang})").as_bytes()).is_some(),
            "{lang}: the catalog's /Lang"
        );
        let (texts, cod) = shown(&vector("cash-on-delivery-due", set));
        assert_shows(lang, &texts, cash);
        if let Some(dir) = std::env::var_os("COUNTERFOIL_PDF_OUT").map(std::path::PathBuf::from) {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join(format!("partly-paid-by-transfer.{lang}.pdf")),
                &bytes,
            )
            .unwrap();
            std::fs::write(dir.join(format!("cash-on-delivery-due.{lang}.pdf")), &cod).unwrap();
        }
    }
    let (texts, _) = shown(&vector("credit-note", |v| v["language"] = "de-DE".into()));
    assert_shows(
        "credit-note de",
        &texts,
        &["GUTSCHRIFT", "Korrektur zur Rechnung"],
    );
}

/// A shop's own translation (`labels`) wins over the built-in text, in a
/// language without one too; one that would drop a value is not used.
#[test]
fn a_label_given_wins() {
    let d = vector("partly-paid-by-transfer", |v| {
        v["language"] = "es_ES".into();
        v["labels"] = serde_json::json!({
            "invoice_title": "FACTURA",
            "amount_due": "Importe pendiente",
            "pay_transfer": "Pague {amount} en la cuenta {iban}, indicando {reference}.",
            "page": "Página {n} de {total}",
            "total": "Total: {amount}",
            "bill_to": 7,
        });
    });
    let (texts, bytes) = shown(&d);
    assert_shows(
        "es",
        &texts,
        &[
            "FACTURA",
            "Importe pendiente",
            "Pague 50.61 EUR en la cuenta BE68539007547034, indicando +++090/9337/55493+++.",
            "Página 1 de 1",
            "Bill to",
            "Total",
        ],
    );
    assert_hides("es", &texts, &["INVOICE", "Amount due", "Total: {amount}"]);
    assert!(find(&bytes, b"/Lang (es)").is_some());
    let de = vector("partly-paid-by-transfer", |v| {
        v["language"] = "de".into();
        v["labels"] = serde_json::json!({"invoice_title": "RECHNUNG (KOPIE)"});
    });
    assert_shows("de", &shown(&de).0, &["RECHNUNG (KOPIE)", "Offener Betrag"]);
}

/// The baselines of the texts a PDF's pages draw (each `x y Td`).
fn baselines(pdf: &[u8]) -> Vec<f32> {
    let mut out = Vec::new();
    for content in streams(pdf).iter().filter(|s| s.starts_with(b"/G0 cs")) {
        let text = String::from_utf8_lossy(content);
        let tokens: Vec<&str> = text.split_whitespace().collect();
        for (i, t) in tokens.iter().enumerate().skip(2) {
            if *t == "Td" {
                if let Ok(y) = tokens[i - 1].parse::<f32>() {
                    out.push(y);
                }
            }
        }
    }
    out
}

/// Document-level allowances and charges in the totals: the lines' total,
/// each allowance taken off and each charge added under its reason (its
/// code when it has none), then the total without VAT; in German too. Many
/// of them, each with a reason that wraps, run over pages row by row:
/// nothing is drawn below the footer's rule but the footer.
#[test]
fn allowances_and_charges_are_in_the_totals() {
    let name = "coupon-shipping-and-fee";
    let (texts, _) = shown(&vector(name, |_| {}));
    assert_shows(
        name,
        &texts,
        &[
            "Total of the lines",
            "22.35 EUR",
            "Allowance: Coupon WELCOME5",
            "-5.00 EUR",
            "Charge: Shipping",
            "4.95 EUR",
            "Charge: Gift wrapping",
            "1.50 EUR",
            "Total without VAT",
            "23.80 EUR",
            "28.57 EUR",
        ],
    );
    let (texts, _) = shown(&vector(name, |v| {
        v["language"] = "de".into();
        v["charges"][0]["reason"] = Value::Null;
    }));
    assert_shows(
        name,
        &texts,
        &[
            "Summe der Positionen",
            "Nachlass: Coupon WELCOME5",
            "-5,00 EUR",
            "Zuschlag: FC",
            "Summe netto",
            "23,80 EUR",
        ],
    );
    let (texts, _) = shown(&vector("standard-rates", |_| {}));
    assert_hides(
        "standard-rates",
        &texts,
        &["Total of the lines", "Allowance"],
    );

    let reason = "A loyalty reward for the customer's many orders this year, taken off the whole order as agreed";
    let d = vector(name, |v| {
        v["allowances"] = (1..=60)
            .map(|i| serde_json::json!({ "amount": "0.01", "reason": format!("{reason} ({i})"), "vat_category": "S", "vat_rate": "21" }))
            .collect();
    });
    let (texts, bytes) = shown(&d);
    assert_shows(
        name,
        &texts,
        &["A loyalty reward", "(60)", "Total without VAT", "28.20 EUR"],
    );
    assert!(page_count(&bytes) >= 3, "{} pages", page_count(&bytes));
    // The footer's lines are at 50, 39 and 30 points; the rest at 84 or above.
    let low: Vec<f32> = baselines(&bytes)
        .into_iter()
        .filter(|y| *y < 84.0 && ![50.0, 39.0, 30.0].contains(y))
        .collect();
    assert!(
        low.is_empty(),
        "texts drawn below the footer's line: {low:?}"
    );
}

/// The page's labels and their English texts, as the WordPress plugin
/// translates them (`Counterfoil_Documents::pdf_labels()`, held to the same
/// file by `VectorsTest::test_pdf_labels`): `tests/vectors/pdf_labels.json`.
/// After a change of the table, write it anew with
/// `COUNTERFOIL_WRITE_VECTORS=1 cargo test -p counterfoil-core --test einvoice_pdf pdf_labels`.
#[test]
fn pdf_labels_are_the_vector_files() {
    let ours: Vec<Value> = pdf::labels::keys()
        .map(|(key, en)| serde_json::json!({ "key": key, "en": en }))
        .collect();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/pdf_labels.json"
    );
    if std::env::var_os("COUNTERFOIL_WRITE_VECTORS").is_some() {
        let text = serde_json::to_string_pretty(&ours).unwrap() + "\n";
        std::fs::write(path, text).unwrap();
    }
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(
        file.as_array().unwrap(),
        &ours,
        "tests/vectors/pdf_labels.json differs from the core's labels: \
         COUNTERFOIL_WRITE_VECTORS=1 cargo test -p counterfoil-core --test einvoice_pdf pdf_labels"
    );
}
