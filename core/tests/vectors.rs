//! The shared test vectors (`tests/vectors/`): the Rust core must answer each
//! case exactly. The pure-PHP backend runs the same files.

use counterfoil_core::awb::{Awb, AwbError};
use counterfoil_core::series_life::{self, MissingSeries};
use counterfoil_core::{series, Error, NumberFormat, PaymentRef, Period, ScopeKey};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/");
    let text = std::fs::read_to_string(format!("{path}{name}")).expect("vector file");
    serde_json::from_str(&text).expect("vector JSON")
}

fn key_of(case: &Value) -> String {
    if let Some(k) = case["key"].as_str() {
        return k.to_owned();
    }
    let r = &case["key_repeat"];
    r[0].as_str()
        .unwrap()
        .repeat(r[1].as_u64().unwrap() as usize)
}

#[test]
fn scope_keys() {
    let cases = load("scope_keys.json");
    for case in cases.as_array().unwrap() {
        let key = key_of(case);
        match (ScopeKey::new(key.clone()), case["error"].as_str()) {
            (Ok(k), None) => assert_eq!(k.as_str(), key),
            (Err(e), Some(kind)) => assert_eq!(e.name(), kind, "{key:?}"),
            (got, _) => panic!("{key:?}: got {got:?}, expected {case}"),
        }
    }
}

#[test]
fn user_year_scopes() {
    for case in load("user_year_scopes.json").as_array().unwrap() {
        let got = ScopeKey::for_user_year(
            case["user_id"].as_u64().unwrap(),
            case["year"].as_u64().unwrap() as u32,
        );
        match (got, case["key"].as_str(), case["error"].as_str()) {
            (Ok(k), Some(expect), _) => assert_eq!(k.as_str(), expect),
            (Err(e), _, Some(kind)) => assert_eq!(e.name(), kind),
            (got, _, _) => panic!("{case}: got {got:?}"),
        }
    }
}

#[test]
fn formats() {
    for case in load("formats.json").as_array().unwrap() {
        let template = case["template"].as_str().unwrap();
        let parsed = NumberFormat::parse(template);
        let rendered = parsed.clone().and_then(|f| {
            let mut period = Period::new(
                case["year"].as_u64().unwrap() as u32,
                case["month"].as_u64().unwrap() as u32,
            )?;
            if let Some(rule) = case["rule"].as_str() {
                let rule = counterfoil_core::fiscal::PeriodRule::parse(rule).expect("a rule");
                period = period.with_rule(rule);
            }
            Ok(f.render(case["number"].as_u64().unwrap(), period))
        });
        match (rendered, case["expect"].as_str(), case["error"].as_str()) {
            (Ok(s), Some(expect), None) => assert_eq!(s, expect, "{template}"),
            (Err(e), None, Some(kind)) => {
                assert_eq!(e.kind.name(), kind, "{template}");
                if let Some(at) = case["at"].as_u64() {
                    assert_eq!(e.at as u64, at, "{template}");
                }
            }
            (got, _, _) => panic!("{template}: got {got:?}, expected {case}"),
        }
    }
}

#[test]
fn series_rules() {
    let rules = load("series_rules.json");
    assert_eq!(rules["max_batch"].as_u64().unwrap(), series::MAX_BATCH);
    let check = |got: Result<u64, Error>, case: &Value| match (got, case["counter"].as_u64()) {
        (Ok(c), Some(expect)) => assert_eq!(c, expect),
        (Err(e), None) => assert_eq!(e.kind_name(), case["error"].as_str().unwrap()),
        (got, _) => panic!("{case}: got {got:?}"),
    };
    for case in rules["start"].as_array().unwrap() {
        check(
            series::counter_for_start(case["value"].as_u64().unwrap()),
            case,
        );
    }
    for case in rules["next"].as_array().unwrap() {
        check(
            series::counter_for_next(case["value"].as_u64().unwrap()),
            case,
        );
    }
    for case in rules["typed"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let expect = case["value"]
            .as_u64()
            .or_else(|| case["value"].as_str().map(|v| v.parse().unwrap()));
        match (series::parse_typed_number("next", text), expect) {
            (Ok(v), Some(e)) => assert_eq!(v, e, "{case}"),
            (Err(e), None) => assert_eq!(e.kind_name(), case["error"].as_str().unwrap(), "{case}"),
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
    for case in rules["batch"].as_array().unwrap() {
        let count = case["count"].as_u64().unwrap();
        match (series::check_batch(count), case["range"].as_array()) {
            (Ok(()), Some(r)) => {
                let got = series::batch_range(case["last"].as_u64().unwrap(), count);
                assert_eq!(
                    (*got.start(), *got.end()),
                    (r[0].as_u64().unwrap(), r[1].as_u64().unwrap())
                );
            }
            (Err(e), None) => assert_eq!(e.kind_name(), case["error"].as_str().unwrap()),
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
}

#[test]
fn series_plans() {
    let plans = load("series_plans.json");
    for case in plans["start"].as_array().unwrap() {
        let got = MissingSeries::parse(case["plan"].as_str().unwrap()).and_then(|plan| {
            series_life::start_for_new_series(
                plan,
                case["start"].as_u64().unwrap(),
                case["previous"].as_u64(),
            )
        });
        match (got, case.get("expect"), case["error"].as_str()) {
            (Ok(start), Some(expect), None) => assert_eq!(start, expect.as_u64(), "{case}"),
            (Err(e), None, Some(kind)) => assert_eq!(e.kind_name(), kind, "{case}"),
            (got, _, _) => panic!("{case}: got {got:?}"),
        }
    }
    for case in plans["previous"].as_array().unwrap() {
        let scope = ScopeKey::new(case["scope"].as_str().unwrap()).unwrap();
        let existing: Vec<(&str, u64)> = case["existing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e[0].as_str().unwrap(), e[1].as_u64().unwrap()))
            .collect();
        let got = series_life::previous_series(&scope, existing);
        let expect = case["expect"]
            .as_array()
            .map(|e| (e[0].as_str().unwrap(), e[1].as_u64().unwrap()));
        assert_eq!(got, expect, "{case}");
    }
    // A zero-row allocation of an open series: missing, closed (the payment
    // moves on to the successor, at most MAX_SUCCESSORS steps), or wrong.
    let closed = plans["closed"].as_array().unwrap();
    for case in closed {
        let scope = case["scope"].as_str().unwrap();
        let row = case["row"]
            .as_bool()
            .unwrap()
            .then(|| case["successor"].as_str().map(str::to_owned));
        let mut hops = case["hops"].as_u64().unwrap() as u32;
        let got = series_life::forward_to(series_life::closed_or_missing(scope, row), &mut hops);
        match (got, &case["expect"]) {
            (Ok(next), e) if e["forward"].is_string() => {
                assert_eq!(next, e["forward"].as_str().unwrap(), "{case}")
            }
            (Err(err), e) => assert_eq!(err.kind_name(), e["error"].as_str().unwrap(), "{case}"),
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
    let once = plans["continue_once"].as_array().unwrap();
    for case in once {
        let got = series_life::may_continue(
            case["previous"].as_str().unwrap(),
            case["closed_by"].as_str(),
            case["scope"].as_str().unwrap(),
        );
        assert_eq!(got.is_ok(), case["ok"].as_bool().unwrap(), "{case}");
    }
    assert!(closed.len() >= 5 && once.len() >= 3);
}

#[test]
fn export_encodings() {
    use counterfoil_core::export;
    let v = load("export.json");
    let columns: Vec<&str> = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(columns, export::COLUMNS);
    for case in v["cells"].as_array().unwrap() {
        assert_eq!(
            export::csv_cell(case["value"].as_str()),
            case["csv"].as_str().unwrap(),
            "{case}"
        );
    }
    for case in v["lines"].as_array().unwrap() {
        let values: Vec<Option<&str>> = case["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str())
            .collect();
        assert_eq!(export::csv_line(&values), case["csv"].as_str().unwrap());
        assert_eq!(export::jsonl_line(&values), case["jsonl"].as_str().unwrap());
        let mut selected: Vec<Option<String>> =
            values.iter().map(|v| v.map(str::to_owned)).collect();
        selected.remove(12); // What a query selects: no kind.
        let owned: Vec<Option<String>> = values.iter().map(|v| v.map(str::to_owned)).collect();
        assert_eq!(export::row(selected), owned, "{case}");
    }
}

#[test]
fn payment_refs() {
    for case in load("payment_refs.json").as_array().unwrap() {
        let txn = match case["transaction_id"].as_str() {
            Some(t) => t.to_owned(),
            None => {
                let r = &case["transaction_id_repeat"];
                r[0].as_str()
                    .unwrap()
                    .repeat(r[1].as_u64().unwrap() as usize)
            }
        };
        let got = PaymentRef::new(case["gateway"].as_str().unwrap(), &txn);
        match (got, case["error"].as_str()) {
            (Ok(_), None) => {}
            (Err(Error::InvalidArgument { name, .. }), Some(field)) => {
                assert_eq!(name, field, "{case}")
            }
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
}

#[test]
fn recorded_values() {
    let cases = load("recorded_values.json");
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 30, "too few cases: {}", cases.len());
    for case in cases {
        let value = match case["value"].as_str() {
            Some(v) => v.to_owned(),
            None => {
                let r = &case["value_repeat"];
                r[0].as_str()
                    .unwrap()
                    .repeat(r[1].as_u64().unwrap() as usize)
            }
        };
        let got = match case["field"].as_str().unwrap() {
            "source" => counterfoil_core::payment::check_source(&value),
            "amount" => counterfoil_core::payment::check_amount(&value),
            "currency" => counterfoil_core::payment::check_currency(&value),
            "request_key" => counterfoil_core::payment::check_request_key(&value),
            other => panic!("unknown field {other}"),
        };
        match (got, case["error"].as_str()) {
            (Ok(()), None) => {}
            (Err(Error::InvalidArgument { name, .. }), Some(field)) => {
                assert_eq!(name, field, "{case}")
            }
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
}

#[test]
fn number_states() {
    use counterfoil_core::payment::{issued_to, repeat_of_request};
    let cases = load("number_states.json");
    let repeats = cases["repeat_of_request"].as_array().unwrap();
    let issued = cases["issued_to"].as_array().unwrap();
    assert!(repeats.len() >= 6 && issued.len() >= 6);
    for case in repeats {
        let got = repeat_of_request("s:1", "k", 7, case["status"].as_str().unwrap());
        assert_eq!(got.is_ok(), case["handed_out"].as_bool().unwrap(), "{case}");
    }
    for case in issued {
        let got = issued_to(
            case["status"].as_str().unwrap(),
            case["issued_post"].as_u64(),
            case["post"].as_u64().unwrap(),
        );
        assert_eq!(got, case["ours"].as_bool().unwrap(), "{case}");
    }
}

#[test]
fn minor_units() {
    for case in load("minor_units.json").as_array().unwrap() {
        let got = counterfoil_core::money::amount_from_minor_units(
            case["minor"].as_u64().unwrap(),
            case["currency"].as_str().unwrap(),
        );
        match (got, case["error"].as_str()) {
            (Ok((amount, code)), None) => {
                assert_eq!(amount, case["amount"].as_str().unwrap(), "{case}");
                assert_eq!(code, case["code"].as_str().unwrap(), "{case}");
            }
            (Err(Error::InvalidArgument { name, .. }), Some(field)) => {
                assert_eq!(name, field, "{case}")
            }
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
}

#[test]
fn awb_numbers() {
    for case in load("awb.json").as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        match (Awb::normalize(text), case["canonical"].as_str()) {
            (Ok(got), Some(expect)) => assert_eq!(got, expect, "{text:?}"),
            (Err(e), None) => {
                assert_eq!(e.name(), case["error"].as_str().unwrap(), "{text:?}");
                if let AwbError::CheckDigit { expected, got, .. } = e {
                    assert_eq!(u64::from(expected), case["expected"].as_u64().unwrap());
                    assert_eq!(u64::from(got), case["got"].as_u64().unwrap());
                }
            }
            (got, _) => panic!("{text:?}: got {got:?}"),
        }
    }
}

/// Every single-digit substitution of a valid number is caught, unless the
/// substituted number happens to keep check digit = serial mod 7.
#[test]
fn awb_single_digit_substitutions() {
    let valid = "15740121012";
    let mut caught = 0;
    let mut kept = 0;
    for pos in 0..11 {
        for d in b'0'..=b'9' {
            let mut bytes = valid.as_bytes().to_vec();
            if bytes[pos] == d {
                continue;
            }
            bytes[pos] = d;
            let text = String::from_utf8(bytes).unwrap();
            let serial: u32 = text[3..10].parse().unwrap();
            let check: u32 = text[10..].parse().unwrap();
            let should_pass = serial % 7 == check;
            assert_eq!(Awb::is_valid(&text), should_pass, "{text}");
            if should_pass {
                kept += 1;
            } else {
                caught += 1;
            }
        }
    }
    // Prefix changes keep the serial (so pass); most serial and check changes are caught.
    assert!(caught > 60, "caught {caught}, kept {kept}");
}

/// The statements the pure-PHP twin must send as they are: the file is the
/// core's list for the prefix `wp_` (`mysql::sql::numbering_statements`). After a
/// change of a statement, write the file anew with
/// `COUNTERFOIL_WRITE_VECTORS=1 cargo test -p counterfoil-core --test vectors
/// mysql_statements`; the twin's test (`VectorsTest::test_mysql_statements`)
/// then shows where the twin differs.
#[cfg(feature = "mysql")]
#[test]
fn mysql_statements() {
    use counterfoil_core::{mysql::sql::numbering_statements, TablePrefix};
    let ours: serde_json::Map<String, serde_json::Value> =
        numbering_statements(&TablePrefix::new("wp_").unwrap())
            .into_iter()
            .map(|(name, text)| (name.to_owned(), serde_json::Value::String(text)))
            .collect();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/mysql_statements.json"
    );
    if std::env::var_os("COUNTERFOIL_WRITE_VECTORS").is_some() {
        let text = serde_json::to_string_pretty(&ours).unwrap() + "\n";
        std::fs::write(path, text).unwrap();
    }
    let file = load("mysql_statements.json");
    assert_eq!(
        file.as_object().unwrap(),
        &ours,
        "tests/vectors/mysql_statements.json differs from the core's statements: \
         COUNTERFOIL_WRITE_VECTORS=1 cargo test -p counterfoil-core --test vectors mysql_statements"
    );
    assert!(ours.len() >= 25);
}

/// The one-trip payment packet as the core fills it
/// (`mysql::sql::one_trip_payment_packet`), for the twin to fill alike
/// (`VectorsTest::test_one_trip_packets`): odd values included (a quote, a
/// semicolon, a backslash, UTF-8, an empty string, missing ones). Written
/// anew with `COUNTERFOIL_WRITE_VECTORS=1`.
#[cfg(feature = "mysql")]
#[test]
fn one_trip_packets() {
    use counterfoil_core::mysql::sql::{
        one_trip_payment_packet, one_trip_recorded_packet, OneTripPayment, OneTripRecorded,
        RegistrySql,
    };
    use counterfoil_core::TablePrefix;
    let template = RegistrySql::new(&TablePrefix::new("wp_").unwrap()).payment_one_trip;
    let inputs = [
        OneTripPayment {
            scope: "42:2026",
            gateway: "stripe",
            txn: "pi_3Q",
            amount: Some("19.99"),
            currency: Some("EUR"),
            period: Some("2026-12"),
            at: "2026-12-02 07:00:00",
        },
        OneTripPayment {
            scope: "Müller & Söhne:2026-03",
            gateway: "x'); DROP TABLE t; --",
            txn: "a\\b;c\nd %scope%",
            amount: None,
            currency: None,
            period: None,
            at: "2027-01-01 00:00:00",
        },
        OneTripPayment {
            scope: "k",
            gateway: "g",
            txn: "",
            amount: Some(""),
            currency: None,
            period: None,
            at: "1970-01-01 00:00:00",
        },
    ];
    let cases: Vec<serde_json::Value> = inputs
        .iter()
        .map(|p| {
            serde_json::json!({
                "scope": p.scope, "gateway": p.gateway, "txn": p.txn, "amount": p.amount,
                "currency": p.currency, "period": p.period, "at": p.at,
                "packet": one_trip_payment_packet(&template, p),
            })
        })
        .collect();
    let recorded_template = RegistrySql::new(&TablePrefix::new("wp_").unwrap()).recorded_one_trip;
    let recorded = [
        OneTripRecorded {
            scope: "42:2026",
            source: "api",
            call: "call-00000000000000000000000000000001",
            request_key: None,
            at: "2026-12-02 07:00:00",
        },
        OneTripRecorded {
            scope: "Müller & Söhne:2026-03",
            source: "x'); DROP TABLE t; --",
            call: "call-0123456789abcdef0123456789abcdef",
            request_key: Some("order-7;\n%scope%"),
            at: "2027-01-01 00:00:00",
        },
    ];
    let recorded_cases: Vec<serde_json::Value> = recorded
        .iter()
        .map(|r| {
            serde_json::json!({
                "scope": r.scope, "source": r.source, "call": r.call,
                "request_key": r.request_key, "at": r.at,
                "packet": one_trip_recorded_packet(&recorded_template, r),
            })
        })
        .collect();
    let ours = serde_json::json!({ "cases": cases, "recorded_cases": recorded_cases });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/one_trip_packets.json"
    );
    if std::env::var_os("COUNTERFOIL_WRITE_VECTORS").is_some() {
        std::fs::write(path, serde_json::to_string_pretty(&ours).unwrap() + "\n").unwrap();
    }
    assert_eq!(
        load("one_trip_packets.json"),
        ours,
        "tests/vectors/one_trip_packets.json differs from the core's packets: \
         COUNTERFOIL_WRITE_VECTORS=1 cargo test -p counterfoil-core --test vectors one_trip_packets"
    );
    for case in ours["cases"].as_array().unwrap() {
        let packet = case["packet"].as_str().unwrap();
        assert!(
            !packet.contains('%'),
            "every slot filled, no value's text in the packet: {packet}"
        );
        assert!(!packet.contains("DROP"), "{packet}");
        assert_eq!(packet.split(";\n").count(), 6);
    }
    for case in ours["recorded_cases"].as_array().unwrap() {
        let packet = case["packet"].as_str().unwrap();
        assert!(!packet.contains('%'), "every slot filled: {packet}");
        assert!(!packet.contains("DROP"), "{packet}");
        assert_eq!(packet.split(";\n").count(), 5);
    }
}

fn scope_of(case: &Value) -> String {
    match case["scope"].as_str() {
        Some(s) => s.to_owned(),
        None => {
            let r = &case["scope_repeat"];
            r[0].as_str()
                .unwrap()
                .repeat(r[1].as_u64().unwrap() as usize)
        }
    }
}

/// The name a vector gives an error of the credit-note rules: a scope key's
/// kind, else the argument's name.
fn credit_note_error(e: &Error) -> &'static str {
    match e {
        Error::InvalidScopeKey(k) => k.name(),
        Error::InvalidArgument { name, .. } => name,
        other => panic!("not an argument error: {other:?}"),
    }
}

#[test]
fn credit_notes() {
    use counterfoil_core::credit_note;
    let v = load("credit_notes.json");
    for case in v["series"].as_array().unwrap() {
        let scope = scope_of(case);
        let year = case["year"].as_u64().unwrap() as u32;
        let period = counterfoil_core::fiscal::PeriodKey {
            year,
            month: case["month"].as_u64().map(|m| m as u32),
        };
        match (
            credit_note::series_for_period(&scope, period),
            case["error"].as_str(),
        ) {
            (Ok(got), None) => match case["series"].as_str() {
                Some(expect) => assert_eq!(got, expect, "{case}"),
                None => assert_eq!(got.len() as u64, case["series_length"].as_u64().unwrap()),
            },
            (Err(e), Some(kind)) => assert_eq!(credit_note_error(&e), kind, "{case}"),
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
    for case in v["kinds"].as_array().unwrap() {
        let got = credit_note::kind_of(case["scope"].as_str().unwrap());
        assert_eq!(got.as_str(), case["kind"].as_str().unwrap(), "{case}");
    }
    for case in v["minor_units"].as_array().unwrap() {
        let got = credit_note::minor_units(
            case["amount"].as_str().unwrap(),
            case["currency"].as_str().unwrap(),
        );
        match (got, case["error"].as_str()) {
            (Ok(n), None) => assert_eq!(n, case["minor"].as_u64().unwrap(), "{case}"),
            (Err(e), Some(name)) => assert_eq!(credit_note_error(&e), name, "{case}"),
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
    for case in v["amounts"].as_array().unwrap() {
        let got = credit_note::credit_note_amount(
            case["invoice"].as_u64().unwrap(),
            case["credited"].as_u64().unwrap(),
            case["requested"].as_u64(),
        );
        match (got, case["error"].as_str()) {
            (Ok(n), None) => assert_eq!(n, case["amount"].as_u64().unwrap(), "{case}"),
            (Err(e), Some(name)) => assert_eq!(credit_note_error(&e), name, "{case}"),
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
}

#[test]
fn periods() {
    use counterfoil_core::fiscal::{self, PeriodRule};
    let v = load("periods.json");
    let rules = v["rules"].as_array().unwrap();
    for case in rules {
        let text = case["text"].as_str().unwrap();
        match (PeriodRule::parse(text), case["rule"].as_str()) {
            (Ok(r), Some(expect)) => assert_eq!(r.as_string(), expect, "{case}"),
            (Err(Error::InvalidArgument { name, .. }), None) => {
                assert_eq!(name, case["error"].as_str().unwrap(), "{case}")
            }
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
    let days = v["days"].as_array().unwrap();
    for case in days {
        let rule = PeriodRule::parse(case["rule"].as_str().unwrap()).unwrap();
        let d: Vec<u32> = case["date"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        match (
            fiscal::period_of(rule, d[0], d[1], d[2]),
            case["error"].as_str(),
        ) {
            (Ok(key), None) => {
                assert_eq!(key.label(), case["period"].as_str().unwrap(), "{case}");
                assert_eq!(
                    key.next().unwrap().label(),
                    case["next"].as_str().unwrap(),
                    "{case}"
                );
                assert_eq!(
                    fiscal::fiscal_label(rule, key.year),
                    case["fy"].as_str().unwrap(),
                    "{case}"
                );
                assert_eq!(
                    u64::from(fiscal::fiscal_end(rule, key.year)),
                    case["fy_end"].as_u64().unwrap(),
                    "{case}"
                );
            }
            (Err(Error::InvalidArgument { name, .. }), Some(field)) => {
                assert_eq!(name, field, "{case}")
            }
            (got, _) => panic!("{case}: got {got:?}"),
        }
    }
    assert!(rules.len() >= 15 && days.len() >= 20);
}

#[test]
fn chain_entries() {
    use counterfoil_core::chain::{self, Entry};
    let v = load("chain.json");
    assert_eq!(v["genesis"].as_str().unwrap(), chain::GENESIS);
    let fields: Vec<&str> = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(fields, chain::FIELDS);
    let text = |e: &Value, k: &str| e[k].as_str().map(str::to_owned);
    let mut entries = Vec::new();
    for case in v["cases"].as_array().unwrap() {
        let e = &case["event"];
        let entry = Entry {
            scope_key: text(e, "scope_key").unwrap(),
            number: text(e, "number").unwrap().parse().unwrap(),
            event: text(e, "event").unwrap(),
            gateway: text(e, "gateway"),
            transaction_id: text(e, "transaction_id"),
            amount: text(e, "amount"),
            currency: text(e, "currency"),
            post_id: text(e, "post_id").map(|p| p.parse().unwrap()),
            reason: text(e, "reason"),
            at: text(e, "at").unwrap(),
        };
        let prev = case["prev"].as_str().unwrap();
        assert_eq!(
            chain::canonical(prev, &entry),
            case["canonical"].as_str().unwrap()
        );
        assert_eq!(chain::hash(prev, &entry), case["hash"].as_str().unwrap());
        entries.push((
            entry,
            prev.to_owned(),
            case["hash"].as_str().unwrap().to_owned(),
        ));
    }
    assert!(entries.len() >= 5);
    let head = chain::verify(entries.iter().map(|(e, p, h)| (e, p.as_str(), h.as_str()))).unwrap();
    assert_eq!(&head, &entries.last().unwrap().2);
    // An amount changed behind the books' back breaks the chain right there.
    let mut edited = entries.clone();
    edited[0].0.amount = Some("1.99".into());
    let broken =
        chain::verify(edited.iter().map(|(e, p, h)| (e, p.as_str(), h.as_str()))).unwrap_err();
    assert_eq!((broken.at, broken.why), (0, "hash"));
    // An entry removed: the next one's link no longer holds.
    let mut cut = entries.clone();
    cut.remove(1);
    let broken =
        chain::verify(cut.iter().map(|(e, p, h)| (e, p.as_str(), h.as_str()))).unwrap_err();
    assert_eq!((broken.at, broken.why), (1, "link"));
}
