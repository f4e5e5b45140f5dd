//! The WebAssembly build of the core: it answers the shared vectors exactly
//! as the Rust core does (loaded in Node), and in the admin pages it previews
//! and validates as the user types, with no request to the server (headless
//! Chromium, network log), on the pure-PHP backend.

use std::process::Command;

use counterfoil_tests::browser;
use counterfoil_tests::php::repo_root;
use counterfoil_tests::wordpress::WordPress;
use counterfoil_tests::MariaDb;

fn wasm_asset() -> std::path::PathBuf {
    let p = repo_root().join("wp-plugin/assets/counterfoil.wasm");
    assert!(
        p.exists(),
        "{} is missing: build it (./scripts/test and ./scripts/package do)",
        p.display()
    );
    p
}

#[test]
fn the_wasm_build_answers_the_shared_vectors() {
    let out = Command::new("node")
        .arg(repo_root().join("tests/wasm/vectors.mjs"))
        .arg(wasm_asset())
        .arg(repo_root().join("tests/vectors"))
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" 0 failed"), "{stdout}");
}

#[test]
fn live_checks_in_the_browser_without_requests() {
    wasm_asset();
    let wp = WordPress::install(MariaDb::shared(), "wasm", None).unwrap();
    wp.eval(false, "initialize_invoice_sequence(1, 2026, 42);")
        .unwrap();
    let site = wp.serve(false, 2).unwrap();
    let out = browser::run("live-checks.mjs", &site).unwrap_or_else(|e| panic!("{e}"));
    println!("{out}");
    assert!(out.contains("no request while typing"), "{out}");
}
