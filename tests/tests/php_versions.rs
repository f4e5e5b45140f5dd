//! The plugin on the PHP versions Debian does not ship, for real: PHP 7.4,
//! 8.0, 8.1, 8.3 and 8.4 compiled to WebAssembly (`@php-wasm/node`, run by
//! Node: tests/php-wasm/run.mjs) on the host's filesystem. On each, the
//! plugin's PHPUnit suite (its bootstrap loads WordPress with the plugin
//! active) (Debian's PHPUnit 9.6:
//! the shared vectors through `Counterfoil_Rules`, the payment flow, the
//! admin forms…) passes on the pure-PHP backend against a real WordPress
//! installed by the harness and the harness's MariaDB over TCP.
//!
//! `Requires PHP` in the plugin header and readme.txt must be the oldest
//! version from which every version passes: the test fails if the header
//! claims less (or more).

use std::path::PathBuf;
use std::process::{Command, Output};

use counterfoil_tests::mariadb::MariaDb;
use counterfoil_tests::php::repo_root;
use counterfoil_tests::wordpress::WordPress;

const VERSIONS: [&str; 5] = ["7.4", "8.0", "8.1", "8.3", "8.4"];

fn runner() -> PathBuf {
    repo_root().join("tests/php-wasm/run.mjs")
}

fn wasm_php(version: &str, wp: Option<&WordPress>, args: &[&str]) -> Output {
    assert!(
        repo_root()
            .join("tests/php-wasm/node_modules/@php-wasm/node")
            .is_dir(),
        "tests/php-wasm/node_modules is missing: npm ci in tests/php-wasm (./scripts/test does)"
    );
    let mut c = Command::new("node");
    c.arg(runner()).arg(version).args(args);
    if let Some(wp) = wp {
        c.current_dir(wp.dir())
            .env("COUNTERFOIL_WP_DIR", wp.dir())
            .env("COUNTERFOIL_VECTORS", repo_root().join("tests/vectors"))
            .env("COUNTERFOIL_EXPECT_BACKEND", "php");
    }
    c.output().expect("run node (apt-get install nodejs)")
}

/// Whether every plugin file compiles and the suite passes on `version`,
/// and what it said.
fn passes(version: &str) -> (bool, String) {
    let plugin = repo_root().join("wp-plugin");
    // The suite, in a real WordPress of its own (its bootstrap loads
    // WordPress with the plugin active: every file the plugin loads).
    let wp = WordPress::install(
        MariaDb::shared(),
        &format!("php{}", version.replace('.', "")),
        None,
    )
    .unwrap();
    // mysqli_poll() traps in PHP compiled to WebAssembly (php-wasm's select
    // on sockets): the pure-PHP backend's statements run synchronously here.
    // The asynchronous path is version-independent mysqli (PHP ≥ 5.3) and
    // is tested on Debian's PHP (wp_deadline.rs).
    wp.mu_plugin(
        "wasm-sync",
        "<?php add_filter('counterfoil_async_statements', '__return_false');",
    )
    .unwrap();
    let tests = plugin.join("tests");
    let out = wasm_php(
        version,
        Some(&wp),
        &[
            // Debian's PHPUnit lives in /usr/share/php (Debian's php.ini puts
            // it on the include path; the WebAssembly PHP has no php.ini).
            "-d",
            "include_path=.:/usr/share/php",
            "-d",
            "memory_limit=512M",
            "/usr/bin/phpunit",
            "--bootstrap",
            tests.join("bootstrap.php").to_str().unwrap(),
            "--colors=never",
            tests.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let ok = out.status.success() && stdout.contains("OK (");
    (
        ok,
        format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn the_plugin_on_php_7_4_to_8_4_and_requires_php_tells_the_truth() {
    let mut results = Vec::new();
    for v in VERSIONS {
        let (ok, said) = passes(v);
        println!(
            "PHP {v} (WebAssembly): {}",
            if ok { "passes" } else { "fails" }
        );
        if !ok {
            println!(
                "{}",
                said.lines()
                    .rev()
                    .take(25)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        results.push((v, ok, said));
    }
    // The oldest version from which every version passes.
    let oldest = (0..VERSIONS.len())
        .find(|&i| results[i..].iter().all(|(_, ok, _)| *ok))
        .map(|i| VERSIONS[i]);
    let newest = results.last().unwrap();
    assert!(newest.1, "the newest PHP fails:\n{}", newest.2);
    let oldest = oldest.expect("some version passes");
    let header = std::fs::read_to_string(repo_root().join("wp-plugin/counterfoil.php")).unwrap();
    let readme = std::fs::read_to_string(repo_root().join("wp-plugin/readme.txt")).unwrap();
    let claimed = |text: &str| {
        text.lines()
            .find_map(|l| {
                l.trim_start_matches([' ', '*'])
                    .strip_prefix("Requires PHP:")
            })
            .map(|v| v.trim().to_owned())
            .expect("a Requires PHP line")
    };
    assert_eq!(claimed(&header), oldest, "the plugin header's Requires PHP");
    assert_eq!(claimed(&readme), oldest, "readme.txt's Requires PHP");
}
