//! Runs a browser test script (tests/browser/*.mjs: Debian's headless
//! Chromium through playwright-core) against a served site. Screenshots go
//! to `target/screenshots/<script>/`, emptied before each run, so a picture
//! left by an earlier run never passes for this one's (the scripts assert
//! what the page shows; the pictures are for people).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::php::{repo_root, FpmSite};

/// Where `script`'s screenshots go: `target/screenshots/<script stem>/`.
pub fn screenshots_of(script: &str) -> PathBuf {
    crate::target_dir()
        .join("screenshots")
        .join(script.trim_end_matches(".mjs"))
}

/// Runs `tests/browser/<script>` with the site's base URL (its screenshot
/// folder emptied first); returns what it printed, or fails with its output
/// and the site's logs.
pub fn run(script: &str, site: &FpmSite) -> Result<String> {
    run_with(script, site, &[])
}

/// As [`run`], with more arguments after the base URL and the screenshot folder.
pub fn run_with(script: &str, site: &FpmSite, extra: &[&str]) -> Result<String> {
    let dir = repo_root().join("tests/browser");
    if !dir.join("node_modules/playwright-core").exists() {
        bail!("playwright-core is missing: run `npm ci` in tests/browser (./scripts/test does)");
    }
    let shots = screenshots_of(script);
    if shots.exists() {
        std::fs::remove_dir_all(&shots).context("empty the screenshot folder")?;
    }
    std::fs::create_dir_all(&shots)?;
    let out = Command::new("node")
        .arg(dir.join(script))
        .arg(site.base_url())
        .arg(&shots)
        .args(extra)
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
