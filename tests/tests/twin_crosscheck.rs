//! The pure-PHP twin against the Rust core on generated input: thousands of
//! random strings (ASCII, braces and tokens, C0/C1 controls, Unicode
//! whitespace of several kinds, accented and CJK letters) go through both as
//! scope keys, number templates and transaction ids, and every verdict must
//! be the same (kind and byte offset). The shared vectors hold the cases
//! worth naming; this finds the ones nobody thought of.

use std::process::Command;

use counterfoil_core::{NumberFormat, PaymentRef, ScopeKey};
use counterfoil_tests::php::repo_root;
use serde_json::{json, Value};

const ALPHABET: &[char] = &[
    'a', 'b', 'z', 'A', '0', '4', '2', ':', '-', '_', '/', ' ', '{', '}', 's', 'e', 'q', 'y', 'r',
    'm', 'o', 'n', 't', 'h', '\t', '\n', '\r', '\u{7f}', '\u{80}', '\u{85}', '\u{9f}', '\u{a0}',
    '\u{1680}', '\u{180e}', '\u{2000}', '\u{200b}', '\u{2028}', '\u{202f}', '\u{3000}', '\u{feff}',
    'é', '東', '"', '\'', '\\', '%',
];

/// A random string: mostly pieces of templates, with odd characters mixed in.
fn random_string() -> String {
    const PIECES: &[&str] = &[
        "{seq}", "{seq:04}", "{year}", "{yy}", "{month}", "{{", "}}", "{seq:0", "{bad}", ":2026",
    ];
    let mut s = String::new();
    for _ in 0..fastrand::usize(0..8) {
        if fastrand::u8(..4) == 0 {
            s.push_str(PIECES[fastrand::usize(..PIECES.len())]);
        } else {
            s.push(ALPHABET[fastrand::usize(..ALPHABET.len())]);
        }
    }
    s
}

fn core_verdicts(s: &str) -> Value {
    let scope = match ScopeKey::new(s) {
        Ok(_) => "ok".to_owned(),
        Err(e) => e.name().to_owned(),
    };
    let format = match NumberFormat::parse(s) {
        Ok(_) => "ok".to_owned(),
        Err(e) => format!("{}@{}", e.kind.name(), e.at),
    };
    let txn = match PaymentRef::new("stripe", s) {
        Ok(_) => "ok".to_owned(),
        Err(counterfoil_core::Error::InvalidArgument { name, .. }) => name.to_owned(),
        Err(e) => format!("{e:?}"),
    };
    json!({"s": s, "scope": scope, "format": format, "txn": txn})
}

const TWIN: &str = r#"<?php
define('ABSPATH', '/');
require $argv[1] . '/includes/class-counterfoil-autoloader.php';
Counterfoil_Autoloader::register();
$out = array();
foreach (json_decode(file_get_contents('php://stdin'), true) as $case) {
    $s = $case['s'];
    $k = Counterfoil_Rules::scope_key_error($s);
    $f = Counterfoil_Rules::format_error($s);
    try {
        Counterfoil_Rules::payment_ref('stripe', $s);
        $t = 'ok';
    } catch (Counterfoil\InvalidArgumentException $e) {
        $t = preg_match('/`([a-z_]+)`/', $e->getMessage(), $m) ? $m[1] : $e->getMessage();
    }
    $out[] = array('s' => $s, 'scope' => null === $k ? 'ok' : $k[0], 'format' => null === $f ? 'ok' : $f[0] . '@' . $f[1], 'txn' => $t);
}
echo json_encode($out, JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE);
"#;

#[test]
fn the_twin_and_the_core_agree_on_random_strings() {
    fastrand::seed(
        std::env::var("COUNTERFOIL_CROSSCHECK_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20_261_130),
    );
    let cases: Vec<Value> = (0..5_000)
        .map(|_| core_verdicts(&random_string()))
        .collect();
    let script =
        counterfoil_tests::target_dir().join(format!("twin-crosscheck-{}.php", std::process::id()));
    std::fs::write(&script, TWIN).unwrap();
    let mut child = Command::new("php")
        .arg(&script)
        .arg(repo_root().join("wp-plugin"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let input = serde_json::to_vec(&cases).unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&script);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let twin: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(twin.len(), cases.len());
    let differ: Vec<String> = cases
        .iter()
        .zip(&twin)
        .filter(|(c, t)| c != t)
        .take(10)
        .map(|(c, t)| format!("core {c}\ntwin {t}"))
        .collect();
    assert!(
        differ.is_empty(),
        "the twin differs from the core:\n{}",
        differ.join("\n")
    );
    // The generator reaches every kind of verdict (so the check can fail).
    for (field, kinds) in [
        (
            "scope",
            &["ok", "control_character", "surrounding_whitespace", "empty"][..],
        ),
        ("txn", &["ok", "transaction_id"][..]),
    ] {
        for kind in kinds {
            assert!(
                cases.iter().any(|c| c[field] == *kind),
                "no case with {field} = {kind}"
            );
        }
    }
    assert!(cases.iter().any(|c| c["format"] == "ok"));
    assert!(cases.iter().any(|c| c["format"]
        .as_str()
        .unwrap()
        .starts_with("control_character")));
}
