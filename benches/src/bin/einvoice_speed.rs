//! How fast the core writes e-invoices (issue 40): documents per second on
//! one core for the model alone (every amount computed), UBL, CII and the
//! Factur-X PDF, with a
//! year of 100,000 invoices written as both, against the baseline of the
//! same run: serializing the same document's input as JSON (serde_json).
//!
//! Usage: `cargo run --release -p counterfoil-benches --bin einvoice-speed -- [--documents N] [--rounds R]`

use std::time::Instant;

use anyhow::Result;
use counterfoil_benches::{median, opt};
use counterfoil_core::einvoice::{
    cii, pdf, ubl, Dec, Document, DocumentInput, Kind, LineInput, Party, VatCategory,
};

fn party(name: &str, country: &str, vat: &str) -> Party {
    Party {
        name: name.into(),
        street: Some("Rue Haute 1".into()),
        city: Some("Brussels".into()),
        postcode: Some("1000".into()),
        country: country.into(),
        vat_id: Some(vat.into()),
        legal_id: Some("0123456749".into()),
        email: Some("billing@example.invalid".into()),
        electronic_address: Some("0123456749".into()),
        electronic_address_scheme: Some("0208".into()),
        iban: Some("BE68539007547034".into()),
        ..Party::default()
    }
}

/// The i-th document of a year: three lines at two rates.
fn input(i: usize) -> DocumentInput {
    let line = |name: &str, q: &str, p: &str, rate: &str| LineInput {
        name: name.into(),
        quantity: Dec::parse(q).unwrap(),
        unit_price: Dec::parse(p).unwrap(),
        vat_rate: Dec::parse(rate).unwrap(),
        vat_category: VatCategory::S,
        details: Default::default(),
    };
    DocumentInput {
        kind: Kind::Invoice,
        number: format!("2026-{:06}", i + 1),
        issue_date: "2026-12-03".into(),
        currency: "EUR".into(),
        buyer_reference: Some(format!("order {i}")),
        seller: party("Counterfoil Shop BV", "BE", "BE0123456749"),
        buyer: party("Acme GmbH", "DE", "DE123456789"),
        lines: vec![
            line("Book", "3", "19.99", "6"),
            line("Pen", "1", "2.35", "21"),
            line("Bag", "2", "10", "21"),
        ],
        paid: true,
        rounding: None,
        due_date: None,
        payment_terms: None,
        details: Default::default(),
    }
}

fn json_of(d: &DocumentInput) -> Vec<u8> {
    let party = |p: &Party| {
        serde_json::json!({"name": p.name, "street": p.street, "city": p.city, "postcode": p.postcode,
        "country": p.country, "vat_id": p.vat_id, "legal_id": p.legal_id, "email": p.email,
        "electronic_address": p.electronic_address, "electronic_address_scheme": p.electronic_address_scheme, "iban": p.iban})
    };
    let lines: Vec<_> = d
        .lines
        .iter()
        .map(|l| serde_json::json!({"name": l.name, "quantity": l.quantity.to_string(), "unit_price": l.unit_price.to_string(),
            "vat_rate": l.vat_rate.to_string(), "vat_category": l.vat_category.code()}))
        .collect();
    serde_json::to_vec(
        &serde_json::json!({"number": d.number, "issue_date": d.issue_date, "currency": d.currency,
        "seller": party(&d.seller), "buyer": party(&d.buyer), "lines": lines, "paid": d.paid}),
    )
    .unwrap()
}

/// Documents per second of `work` over `n` inputs, and the bytes written.
fn rate(n: usize, mut work: impl FnMut(usize) -> usize) -> (f64, usize) {
    let t = Instant::now();
    let mut bytes = 0;
    for i in 0..n {
        bytes += work(i);
    }
    (n as f64 / t.elapsed().as_secs_f64(), bytes)
}

fn main() -> Result<()> {
    counterfoil_benches::help_or_go(
        "Usage: einvoice-speed [--documents N] [--rounds R]

Documents per second on one core: the model, UBL, CII, the Factur-X PDF, and a year of 100,000 invoices as UBL and CII, against serde_json of the same input.",
    );
    let args: Vec<String> = std::env::args().collect();
    let n = opt(&args, "--documents", 20_000);
    let rounds = opt(&args, "--rounds", 5);
    let n_pdf = (n / 20).max(1);
    let inputs: Vec<DocumentInput> = (0..n).map(input).collect();
    let mut cells: Vec<(&str, Vec<f64>)> = [
        "JSON of the input (baseline)",
        "model (amounts)",
        "model + UBL",
        "model + CII",
        "model + Factur-X PDF (with its CII)",
    ]
    .into_iter()
    .map(|name| (name, Vec::new()))
    .collect();
    for _ in 0..rounds {
        cells[0].1.push(rate(n, |i| json_of(&inputs[i]).len()).0);
        cells[1].1.push(
            rate(n, |i| {
                Document::build(inputs[i].clone()).unwrap().lines.len()
            })
            .0,
        );
        cells[2].1.push(
            rate(n, |i| {
                ubl::to_ubl(&Document::build(inputs[i].clone()).unwrap()).len()
            })
            .0,
        );
        cells[3].1.push(
            rate(n, |i| {
                cii::to_cii(&Document::build(inputs[i].clone()).unwrap()).len()
            })
            .0,
        );
        // A PDF takes longer: a twentieth of the documents a round.
        cells[4].1.push(
            rate(n_pdf, |i| {
                pdf::to_facturx(&Document::build(inputs[i].clone()).unwrap(), "bench")
                    .unwrap()
                    .len()
            })
            .0,
        );
    }
    let base = median(cells[0].1.clone());
    println!(
        "\nOne core, {n} documents a round ({n_pdf} for the PDF; 3 lines, 2 VAT rates), median of {rounds} rounds\n"
    );
    println!("| what | documents/s | vs JSON of the input |");
    println!("|---|---|---|");
    for (name, rates) in &cells {
        let m = median(rates.clone());
        println!("| {name} | {m:.0} | {:.2}× |", m / base);
    }
    let year = 100_000;
    let t = Instant::now();
    let mut bytes = 0usize;
    for i in 0..year {
        let d = Document::build(input(i)).unwrap();
        bytes += ubl::to_ubl(&d).len() + cii::to_cii(&d).len();
    }
    println!(
        "\nA year of {year} invoices as UBL and CII: {:.1} s, {:.0} MB written",
        t.elapsed().as_secs_f64(),
        bytes as f64 / 1e6
    );
    Ok(())
}
