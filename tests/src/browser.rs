//! Runs a browser test script (tests/browser/*.mjs: Debian's headless
//! Chromium through playwright-core) against a served site. Screenshots go
//! to `target/screenshots/`.

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::php::{repo_root, FpmSite};

/// Runs `tests/browser/<script>` with the site's base URL; returns what it
/// printed, or fails with its output and the site's logs.
pub fn run(script: &str, site: &FpmSite) -> Result<String> {
    let dir = repo_root().join("tests/browser");
    if !dir.join("node_modules/playwright-core").exists() {
        bail!("playwright-core is missing: run `npm ci` in tests/browser (./scripts/test does)");
    }
    let out = Command::new("node")
        .arg(dir.join(script))
        .arg(site.base_url())
        .arg(crate::target_dir().join("screenshots"))
        .output()
        .context("run node")?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "{script} failed:\n{stdout}\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            site.logs()
        );
    }
    Ok(stdout)
}
