//! Every text the page prints that is not the document's own: its labels
//! and sentences, in English, German, French and Dutch, each overridable by
//! key (the input's `labels`, such as a WordPress shop's own translations).
//!
//! Invariants: the language is the input's `language` by its primary
//! subtag (`de`, `de-AT`, `de_DE` read as German), English when absent or
//! unknown; each built-in text has the same placeholders as its English
//! one (`{amount}`, `{date}` …), filled in one pass at layout time, so a
//! value that looks like a placeholder is printed as given; an override is
//! used only when it is not blank, at most [`MAX_OVERRIDE`] characters and
//! has the placeholders of the English text, no fewer and no others — a
//! translation cannot drop the amount or the IBAN from a sentence, nor
//! print a placeholder unfilled — else the built-in text stands;
//! every built-in text is in the font's base subset (the test below), so
//! the built-in languages never make a document subset its own font; the
//! catalog's `/Lang` is the built-in language, or the language given when
//! its labels are given (the page is then in the shop's language).

use std::collections::BTreeMap;

use crate::einvoice::DocumentDetails;

/// The longest override used, in characters.
pub const MAX_OVERRIDE: usize = 400;

/// A built-in language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// English, the default.
    En,
    /// German.
    De,
    /// French.
    Fr,
    /// Dutch.
    Nl,
}

macro_rules! table {
    ($($key:ident $name:literal [$en:literal, $de:literal, $fr:literal, $nl:literal])*) => {
        /// A text of the page.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Key {
            $(
                #[doc = concat!("`", $name, "`: ", $en)]
                $key,
            )*
        }

        impl Key {
            /// Every key, in the table's order.
            pub const ALL: &'static [Key] = &[$(Key::$key,)*];

            /// Its name, as the input's `labels` give it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Key::$key => $name,)*
                }
            }

            /// Its built-in text in `lang`.
            pub fn builtin(self, lang: Lang) -> &'static str {
                match self {
                    $(Key::$key => match lang {
                        Lang::En => $en,
                        Lang::De => $de,
                        Lang::Fr => $fr,
                        Lang::Nl => $nl,
                    },)*
                }
            }
        }
    };
}

table! {
    // The document.
    InvoiceTitle "invoice_title" ["INVOICE", "RECHNUNG", "FACTURE", "FACTUUR"]
    CreditNoteTitle "credit_note_title" ["CREDIT NOTE", "GUTSCHRIFT", "AVOIR", "CREDITNOTA"]
    Invoice "invoice" ["Invoice", "Rechnung", "Facture", "Factuur"]
    CreditNote "credit_note" ["Credit note", "Gutschrift", "Avoir", "Creditnota"]
    Issued "issued" ["Issued {date}", "Rechnungsdatum: {date}", "Date de facture : {date}", "Factuurdatum: {date}"]
    IssuedCreditNote "issued_credit_note" ["Issued {date}", "Datum der Gutschrift: {date}", "Date de l’avoir : {date}", "Datum creditnota: {date}"]
    Due "due" ["Due {date}", "Fällig am: {date}", "Échéance : {date}", "Vervaldatum: {date}"]
    PaidStamp "paid_stamp" ["PAID", "BEZAHLT", "PAYÉE", "BETAALD"]
    SettledStamp "settled_stamp" ["SETTLED", "BEGLICHEN", "RÉGLÉ", "VEREFFEND"]
    Corrects "corrects" ["Corrects invoice {number}", "Korrektur zur Rechnung {number}", "Rectifie la facture {number}", "Correctie op factuur {number}"]
    CorrectsOf "corrects_of" ["Corrects invoice {number} of {date}", "Korrektur zur Rechnung {number} vom {date}", "Rectifie la facture {number} du {date}", "Correctie op factuur {number} van {date}"]
    Continued "continued" ["{document} {number} (continued)", "{document} {number} (Fortsetzung)", "{document} {number} (suite)", "{document} {number} (vervolg)"]
    // The parties.
    From "from" ["From", "Von", "Émetteur", "Van"]
    BillTo "bill_to" ["Bill to", "Rechnungsempfänger", "Facturé à", "Factuur aan"]
    DeliverTo "deliver_to" ["Deliver to", "Lieferanschrift", "Adresse de livraison", "Afleveradres"]
    VatId "vat_id" ["VAT ID {id}", "USt-IdNr. {id}", "N° TVA {id}", "Btw-nr. {id}"]
    Registration "registration" ["Registration {id}", "Registernummer {id}", "Immatriculation {id}", "Registratienummer {id}"]
    TaxNumber "tax_number" ["Tax number {id}", "Steuernummer {id}", "N° fiscal {id}", "Fiscaal nummer {id}"]
    // What the document answers, and when.
    YourReference "your_reference" ["Your reference", "Ihre Referenz", "Votre référence", "Uw referentie"]
    PurchaseOrder "purchase_order" ["Purchase order", "Ihre Bestellnummer", "Bon de commande", "Inkoopordernummer"]
    SalesOrder "sales_order" ["Order number", "Auftragsnummer", "N° de commande", "Ordernummer"]
    DeliveryDate "delivery_date" ["Delivery date", "Lieferdatum", "Date de livraison", "Leverdatum"]
    Period "period" ["Invoicing period", "Leistungszeitraum", "Période de facturation", "Factuurperiode"]
    PeriodRange "period_range" ["{start} – {end}", "{start} – {end}", "du {start} au {end}", "{start} t/m {end}"]
    PeriodFrom "period_from" ["from {start}", "ab {start}", "à partir du {start}", "vanaf {start}"]
    PeriodUntil "period_until" ["until {end}", "bis {end}", "jusqu’au {end}", "tot en met {end}"]
    // The lines.
    Description "description" ["Description", "Beschreibung", "Désignation", "Omschrijving"]
    Quantity "quantity" ["Quantity", "Menge", "Quantité", "Aantal"]
    UnitPrice "unit_price" ["Unit price", "Einzelpreis", "Prix unitaire", "Stukprijs"]
    Vat "vat" ["VAT", "USt.", "TVA", "Btw"]
    Amount "amount" ["Amount", "Betrag", "Montant", "Bedrag"]
    Sku "sku" ["SKU {sku}", "Art.-Nr. {sku}", "Réf. {sku}", "Art.nr. {sku}"]
    Gtin "gtin" ["GTIN {gtin}", "GTIN {gtin}", "GTIN {gtin}", "GTIN {gtin}"]
    // The VAT breakdown.
    VatBreakdown "vat_breakdown" ["VAT breakdown", "USt.-Aufstellung", "Détail de la TVA", "Btw-specificatie"]
    TaxableAmount "taxable_amount" ["Taxable amount", "Nettobetrag", "Base imposable", "Grondslag"]
    CategoryS "category_s" ["Standard rate", "Regelsteuersatz", "Taux normal", "Standaardtarief"]
    CategoryZ "category_z" ["Zero rated", "Nullsatz", "Taux zéro", "Nultarief"]
    CategoryE "category_e" ["Exempt from VAT", "Steuerfrei", "Exonéré de TVA", "Vrijgesteld van btw"]
    CategoryAe "category_ae" ["Reverse charge", "Steuerschuldnerschaft des Leistungsempfängers", "Autoliquidation", "Btw verlegd"]
    CategoryK "category_k" ["Intra-community supply", "Innergemeinschaftliche Lieferung", "Livraison intracommunautaire", "Intracommunautaire levering"]
    CategoryG "category_g" ["Export outside the EU", "Ausfuhrlieferung", "Exportation hors de l’UE", "Uitvoer buiten de EU"]
    CategoryO "category_o" ["Not subject to VAT", "Nicht steuerbar", "Non soumis à la TVA", "Niet onderworpen aan btw"]
    // The totals.
    LinesTotal "lines_total" ["Total of the lines", "Summe der Positionen", "Total des lignes", "Totaal van de regels"]
    Allowance "allowance" ["Allowance: {reason}", "Nachlass: {reason}", "Remise : {reason}", "Korting: {reason}"]
    Charge "charge" ["Charge: {reason}", "Zuschlag: {reason}", "Frais : {reason}", "Toeslag: {reason}"]
    TotalWithoutVat "total_without_vat" ["Total without VAT", "Summe netto", "Total HT", "Totaal excl. btw"]
    TotalVat "total_vat" ["VAT", "Umsatzsteuer", "TVA", "Btw"]
    Total "total" ["Total", "Gesamtbetrag", "Total TTC", "Totaal incl. btw"]
    VatInCurrency "vat_in_currency" ["VAT in {currency}", "Umsatzsteuer in {currency}", "TVA en {currency}", "Btw in {currency}"]
    Rounding "rounding" ["Rounding", "Rundung", "Arrondi", "Afronding"]
    Paid "paid" ["Paid", "Bezahlt", "Déjà payé", "Betaald"]
    AmountDue "amount_due" ["Amount due", "Offener Betrag", "Reste à payer", "Te betalen"]
    Refunded "refunded" ["Refunded", "Erstattet", "Remboursé", "Terugbetaald"]
    ToRefund "to_refund" ["To be refunded", "Zu erstatten", "À rembourser", "Terug te betalen"]
    // How it is paid: the means, then the sentences they go in.
    ByCard "by_card" ["by card", "per Karte", "par carte", "per kaart"]
    ByCash "by_cash" ["in cash", "in bar", "en espèces", "contant"]
    ByCheque "by_cheque" ["by cheque", "per Scheck", "par chèque", "per cheque"]
    ByTransfer "by_transfer" ["by credit transfer", "per Überweisung", "par virement", "per overschrijving"]
    ByDebit "by_debit" ["by direct debit (mandate {mandate})", "per Lastschrift (Mandat {mandate})", "par prélèvement (mandat {mandate})", "via automatische incasso (machtiging {mandate})"]
    ByOnline "by_online" ["through an online payment service", "über einen Online-Zahlungsdienst", "via un service de paiement en ligne", "via een online betaaldienst"]
    ByAgreement "by_agreement" ["as agreed", "wie vereinbart", "selon les modalités convenues", "zoals overeengekomen"]
    ByCode "by_code" ["by payment means {code}", "per Zahlungsart {code}", "par le moyen de paiement {code}", "via betaalwijze {code}"]
    PayTransfer "pay_transfer" ["Please pay {amount} to IBAN {iban}, quoting {reference}.", "Bitte überweisen Sie {amount} auf IBAN {iban} unter Angabe von {reference}.", "Merci de virer {amount} sur l’IBAN {iban} en indiquant {reference}.", "Gelieve {amount} over te maken op IBAN {iban} onder vermelding van {reference}."]
    PayDebit "pay_debit" ["{amount} will be collected by direct debit under mandate {mandate}.", "{amount} wird per Lastschrift (Mandat {mandate}) eingezogen.", "{amount} sera prélevé (mandat {mandate}).", "{amount} wordt via automatische incasso geïnd (machtiging {mandate})."]
    PayBy "pay_by" ["Please pay {amount} {by}.", "Bitte zahlen Sie {amount} {by}.", "Merci de régler {amount} {by}.", "Gelieve {amount} {by} te betalen."]
    PayDue "pay_due" ["Amount due: {amount}.", "Offener Betrag: {amount}.", "Reste à payer : {amount}.", "Te betalen: {amount}."]
    PaidInFull "paid_in_full" ["Paid in full: nothing is due.", "Vollständig bezahlt: Es ist nichts mehr offen.", "Payée intégralement : rien n’est dû.", "Volledig betaald: er staat niets meer open."]
    PaidInFullBy "paid_in_full_by" ["Paid in full {by}: nothing is due.", "Vollständig bezahlt {by}: Es ist nichts mehr offen.", "Payée intégralement {by} : rien n’est dû.", "Volledig betaald {by}: er staat niets meer open."]
    NothingDue "nothing_due" ["Nothing is due.", "Es ist nichts zu zahlen.", "Aucun montant n’est dû.", "Er hoeft niets betaald te worden."]
    DueBy "due_by" ["Due by {date}.", "Zahlbar bis {date}.", "À régler au plus tard le {date}.", "Te betalen uiterlijk op {date}."]
    Terms "terms" ["Terms: {terms}", "Zahlungsbedingungen: {terms}", "Conditions de paiement : {terms}", "Betalingsvoorwaarden: {terms}"]
    Settled "settled" ["Settled in full: nothing is due.", "Vollständig beglichen: Es ist nichts mehr offen.", "Réglé intégralement : rien n’est dû.", "Volledig vereffend: er staat niets meer open."]
    SettledBy "settled_by" ["Refunded {by}: nothing is due.", "Erstattet {by}: Es ist nichts mehr offen.", "Remboursé {by} : rien n’est dû.", "Terugbetaald {by}: er staat niets meer open."]
    Refund "refund" ["We will refund you {amount}.", "Wir erstatten Ihnen {amount}.", "Nous vous remboursons {amount}.", "Wij betalen u {amount} terug."]
    RefundBy "refund_by" ["We will refund you {amount} {by}.", "Wir erstatten Ihnen {amount} {by}.", "Nous vous remboursons {amount} {by}.", "Wij betalen u {amount} {by} terug."]
    // The rest of the page.
    Notes "notes" ["Notes", "Hinweise", "Remarques", "Opmerkingen"]
    Page "page" ["Page {n} of {total}", "Seite {n} von {total}", "Page {n} sur {total}", "Pagina {n} van {total}"]
    Footer "footer" ["This PDF/A-3 file carries its EN 16931 e-invoice as factur-x.xml (Factur-X 1.0, profile EN 16931).", "Diese PDF/A-3-Datei enthält ihre E-Rechnung nach EN 16931 als factur-x.xml (Factur-X 1.0, Profil EN 16931).", "Ce fichier PDF/A-3 contient sa facture électronique EN 16931 sous le nom factur-x.xml (Factur-X 1.0, profil EN 16931).", "Dit PDF/A-3-bestand bevat zijn e-factuur volgens EN 16931 als factur-x.xml (Factur-X 1.0, profiel EN 16931)."]
    // How numbers and dates are written.
    DecimalSeparator "decimal_separator" [".", ",", ",", ","]
    Date "date" ["{yyyy}-{mm}-{dd}", "{dd}.{mm}.{yyyy}", "{dd}/{mm}/{yyyy}", "{dd}-{mm}-{yyyy}"]
}

/// The keys and their English texts: what a translation gives (`labels`).
pub fn keys() -> impl Iterator<Item = (&'static str, &'static str)> {
    Key::ALL.iter().map(|k| (k.name(), k.builtin(Lang::En)))
}

/// The placeholders of a text: each `{name}`.
fn placeholders(s: &str) -> impl Iterator<Item = &str> {
    s.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

/// The page's texts for one document.
pub struct Labels<'a> {
    lang: Lang,
    tag: String,
    overrides: &'a BTreeMap<String, String>,
}

impl<'a> Labels<'a> {
    /// The texts `details` asks for (see the module's invariants).
    pub fn of(details: &'a DocumentDetails) -> Labels<'a> {
        let primary = details
            .language
            .as_deref()
            .unwrap_or("")
            .trim()
            .split(['-', '_'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let lang = match primary.as_str() {
            "de" => Lang::De,
            "fr" => Lang::Fr,
            "nl" => Lang::Nl,
            _ => Lang::En,
        };
        let given = (2..=3).contains(&primary.len())
            && primary.bytes().all(|b| b.is_ascii_lowercase())
            && !details.labels.is_empty();
        let tag = match lang {
            Lang::En if given => primary,
            Lang::En => "en".to_owned(),
            _ => primary,
        };
        Labels {
            lang,
            tag,
            overrides: &details.labels,
        }
    }

    /// The built-in language.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// The language tag the catalog's `/Lang` states.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The text of `key`: the override when usable, else the built-in one.
    pub fn get(&self, key: Key) -> &'a str {
        let builtin = key.builtin(self.lang);
        let english = key.builtin(Lang::En);
        match self.overrides.get(key.name()) {
            Some(o)
                if !o.trim().is_empty()
                    && o.chars().count() <= MAX_OVERRIDE
                    && placeholders(english).all(|p| placeholders(o).any(|q| q == p))
                    && placeholders(o).all(|q| placeholders(english).any(|p| p == q)) =>
            {
                o
            }
            _ => builtin,
        }
    }

    /// The text of `key` with its placeholders filled from `values`.
    pub fn fill(&self, key: Key, values: &[(&str, &str)]) -> String {
        fill(self.get(key), values)
    }

    /// A `YYYY-MM-DD` date as this language writes it (as given when it is
    /// not one).
    pub fn date(&self, iso: &str) -> String {
        let mut parts = iso.splitn(3, '-');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(y), Some(m), Some(d)) => {
                self.fill(Key::Date, &[("yyyy", y), ("mm", m), ("dd", d)])
            }
            _ => iso.to_owned(),
        }
    }

    /// A decimal number written with this language's separator.
    pub fn number(&self, s: &str) -> String {
        match self.get(Key::DecimalSeparator) {
            "." => s.to_owned(),
            sep => s.replacen('.', sep, 1),
        }
    }
}

/// `template` with each `{name}` of `values` replaced, in one pass: the
/// values are not searched for placeholders, an unknown `{…}` stays as is.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v, close))
        });
        match value {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LANGS: [Lang; 4] = [Lang::En, Lang::De, Lang::Fr, Lang::Nl];

    fn details(language: &str, labels: &[(&str, &str)]) -> DocumentDetails {
        DocumentDetails {
            language: Some(language.into()),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..DocumentDetails::default()
        }
    }

    #[test]
    fn every_language_has_every_text_with_the_english_placeholders() {
        let mut names: Vec<&str> = Key::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Key::ALL.len(), "key names are unique");
        for &key in Key::ALL {
            let mut english: Vec<&str> = placeholders(key.builtin(Lang::En)).collect();
            english.sort_unstable();
            for lang in LANGS {
                let text = key.builtin(lang);
                assert!(!text.trim().is_empty(), "{key:?} in {lang:?}");
                let mut own: Vec<&str> = placeholders(text).collect();
                own.sort_unstable();
                assert_eq!(own, english, "{key:?} in {lang:?}: {text}");
            }
        }
    }

    #[test]
    fn every_built_in_text_is_in_the_fonts_base_subset() {
        let base: std::collections::BTreeSet<char> = super::super::font::base_chars().collect();
        for &key in Key::ALL {
            for lang in LANGS {
                for c in key.builtin(lang).chars() {
                    assert!(base.contains(&c), "{c:?} of {key:?} in {lang:?}");
                }
            }
        }
    }

    #[test]
    fn the_language_by_its_primary_subtag_english_otherwise() {
        for (given, lang, tag) in [
            ("de", Lang::De, "de"),
            ("de-AT", Lang::De, "de"),
            ("fr_BE", Lang::Fr, "fr"),
            (" NL ", Lang::Nl, "nl"),
            ("en-GB", Lang::En, "en"),
            ("es", Lang::En, "en"),
            ("", Lang::En, "en"),
            ("x", Lang::En, "en"),
        ] {
            let d = details(given, &[]);
            let l = Labels::of(&d);
            assert_eq!((l.lang(), l.tag()), (lang, tag), "{given:?}");
        }
        let none = DocumentDetails::default();
        assert_eq!(Labels::of(&none).tag(), "en");
        // A shop's own translation: the page is in its language.
        let d = details("es_ES", &[("invoice_title", "FACTURA")]);
        let l = Labels::of(&d);
        assert_eq!((l.tag(), l.get(Key::InvoiceTitle)), ("es", "FACTURA"));
        assert_eq!(l.get(Key::Total), "Total");
    }

    #[test]
    fn an_override_wins_unless_its_placeholders_differ_or_it_is_blank() {
        let long = "x".repeat(MAX_OVERRIDE + 1);
        let d = details(
            "de",
            &[
                ("invoice_title", "RECHNUNG (KOPIE)"),
                ("pay_transfer", "Zahlbar: {amount} an {iban}."),
                ("page", "{n}/{total}"),
                ("total", "  "),
                ("amount", "Betrag in {currency}"),
                ("notes", &long),
            ],
        );
        let l = Labels::of(&d);
        assert_eq!(l.get(Key::InvoiceTitle), "RECHNUNG (KOPIE)");
        assert_eq!(l.fill(Key::Page, &[("n", "1"), ("total", "2")]), "1/2");
        assert_eq!(
            l.get(Key::PayTransfer),
            Key::PayTransfer.builtin(Lang::De),
            "the reference is dropped: the built-in text stands"
        );
        assert_eq!(l.get(Key::Total), "Gesamtbetrag");
        assert_eq!(l.get(Key::Amount), "Betrag", "no placeholder of its own");
        assert_eq!(l.get(Key::Notes), "Hinweise");
    }

    #[test]
    fn filled_in_one_pass_dates_and_numbers_by_language() {
        assert_eq!(
            fill("{a} and {b} {unknown} {", &[("a", "{b}"), ("b", "2")]),
            "{b} and 2 {unknown} {"
        );
        let de = details("de", &[]);
        let l = Labels::of(&de);
        assert_eq!(l.date("2026-12-03"), "03.12.2026");
        assert_eq!(l.date("soon"), "soon");
        assert_eq!(l.number("-1378.05"), "-1378,05");
        let en = DocumentDetails::default();
        let l = Labels::of(&en);
        assert_eq!(
            (l.date("2026-12-03"), l.number("5.5")),
            ("2026-12-03".into(), "5.5".into())
        );
    }
}
