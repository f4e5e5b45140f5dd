//! WooCommerce for the suites: by default the stand-in under
//! `tests/woocommerce-stand-in/` (not WooCommerce: only what the Counterfoil
//! integration and its tests call, with WooCommerce's names and signatures),
//! or a real WooCommerce when `COUNTERFOIL_WOOCOMMERCE` names an unpacked
//! plugin directory (the one holding `woocommerce.php`). With a real one,
//! `COUNTERFOIL_WOOCOMMERCE_HPOS=1` stores orders in its own tables (HPOS),
//! else in posts.
//!
//! WP Overnight's "PDF Invoices & Packing Slips for WooCommerce", for the
//! suites that need it ([`install_with_wpo`]): by default the stand-in under
//! `tests/wpo-stand-in/` (not WP Overnight's plugin: its class names, hooks
//! and order meta for only the code paths Counterfoil meets), or the real
//! plugin when `COUNTERFOIL_WPO` names an unpacked one (the folder holding
//! `woocommerce-pdf-invoices-packingslips.php`, its `vendor/` included); the
//! real one needs a real WooCommerce (`COUNTERFOIL_WOOCOMMERCE`).
//!
//! Invariants: the suites call only WooCommerce's public API (through the
//! must-use plugin `tests/woocommerce/helpers.php`) and WP Overnight's
//! (`wcpdf_get_document()`, its documents' methods, its e-mail
//! attachments), so the same test runs against the stand-ins and the real
//! plugins; which ones ran is printed.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::php::repo_root;
use crate::wordpress::{SiteServer, WordPress};

/// The environment variable naming a real, unpacked WooCommerce.
pub const ENV: &str = "COUNTERFOIL_WOOCOMMERCE";
/// With a real WooCommerce: `1` for its order tables (HPOS).
pub const HPOS_ENV: &str = "COUNTERFOIL_WOOCOMMERCE_HPOS";
/// The environment variable naming a real, unpacked WP Overnight PDF plugin.
pub const WPO_ENV: &str = "COUNTERFOIL_WPO";

/// Which WooCommerce a suite runs against.
pub struct Source {
    /// The directory copied into `wp-content/plugins/<folder>`.
    pub dir: PathBuf,
    /// Its folder name under `wp-content/plugins/`.
    pub folder: &'static str,
    /// Its main file in that folder.
    pub main: &'static str,
    /// Whether it is the real WooCommerce.
    pub real: bool,
}

/// The stand-in, or the real WooCommerce that [`ENV`] names.
pub fn source() -> Source {
    match std::env::var_os(ENV) {
        Some(dir) if !dir.is_empty() => Source {
            dir: PathBuf::from(dir),
            folder: "woocommerce",
            main: "woocommerce.php",
            real: true,
        },
        _ => Source {
            dir: repo_root().join("tests/woocommerce-stand-in"),
            folder: "woocommerce-stand-in",
            main: "woocommerce-stand-in.php",
            real: false,
        },
    }
}

/// The WP Overnight stand-in, or the real plugin that [`WPO_ENV`] names.
pub fn wpo_source() -> Source {
    match std::env::var_os(WPO_ENV) {
        Some(dir) if !dir.is_empty() => Source {
            dir: PathBuf::from(dir),
            folder: "woocommerce-pdf-invoices-packing-slips",
            main: "woocommerce-pdf-invoices-packingslips.php",
            real: true,
        },
        _ => Source {
            dir: repo_root().join("tests/wpo-stand-in"),
            folder: "wpo-stand-in",
            main: "wpo-stand-in.php",
            real: false,
        },
    }
}

/// Copies a plugin's folder into the site's `wp-content/plugins/`.
fn copy_plugin(wp: &WordPress, src: &Source) -> Result<()> {
    let dest = wp.dir().join("wp-content/plugins").join(src.folder);
    let cp = Command::new("cp")
        .arg("-r")
        .arg(&src.dir)
        .arg(&dest)
        .status()
        .with_context(|| format!("copy {}", src.dir.display()))?;
    if !cp.success() {
        bail!("copy {} failed", src.dir.display());
    }
    Ok(())
}

/// A WordPress site with Counterfoil and WooCommerce (stand-in or real)
/// active, the test helpers as a must-use plugin, and prices in `currency`.
pub fn install(server: &dyn SiteServer, name: &str) -> Result<WordPress> {
    let src = source();
    let wp = WordPress::install(server, name, None)?;
    copy_plugin(&wp, &src)?;
    let helpers = std::fs::read_to_string(repo_root().join("tests/woocommerce/helpers.php"))?;
    wp.mu_plugin("counterfoil-woocommerce-helpers", &helpers)?;
    let hpos = std::env::var(HPOS_ENV).map(|v| v == "1").unwrap_or(false);
    let out = wp.eval(
        false,
        &format!(
            "require_once ABSPATH . 'wp-admin/includes/plugin.php';
             $r = activate_plugin('{}/{}');
             if (is_wp_error($r)) {{ echo $r->get_error_message(); exit(1); }}
             cf_test_woocommerce_ready({});
             echo 'active ', WC()->version;",
            src.folder,
            src.main,
            if hpos { "true" } else { "false" }
        ),
    )?;
    if !out.contains("active") {
        bail!("WooCommerce not active: {out}");
    }
    // Which storage WooCommerce itself says it uses (in a new process).
    let storage = wp.eval(
        false,
        "echo class_exists('Automattic\\WooCommerce\\Utilities\\OrderUtil')
             && Automattic\\WooCommerce\\Utilities\\OrderUtil::custom_orders_table_usage_is_enabled() ? 'HPOS' : 'posts';",
    )?;
    if hpos && storage.trim() != "HPOS" {
        bail!("HPOS asked for, WooCommerce stores orders in {storage}");
    }
    println!(
        "WooCommerce: {} ({}, {} storage) on WordPress {}",
        out.trim().trim_start_matches("active "),
        if src.real { "real" } else { "STAND-IN" },
        storage.trim(),
        wp.eval(false, "echo get_bloginfo('version');")?.trim()
    );
    Ok(wp)
}

/// A site as [`install`] makes it, with WP Overnight's PDF plugin (the
/// stand-in, or the real one [`WPO_ENV`] names) active too.
pub fn install_with_wpo(server: &dyn SiteServer, name: &str) -> Result<WordPress> {
    let wpo = wpo_source();
    if wpo.real && !source().real {
        bail!(
            "{WPO_ENV} names WP Overnight's real plugin, which needs a real WooCommerce: set {ENV} too"
        );
    }
    let wp = install(server, name)?;
    copy_plugin(&wp, &wpo)?;
    let out = wp.eval(
        false,
        &format!(
            "require_once ABSPATH . 'wp-admin/includes/plugin.php';
             $r = activate_plugin('{}/{}');
             if (is_wp_error($r)) {{ echo $r->get_error_message(); exit(1); }}
             echo 'active';",
            wpo.folder, wpo.main
        ),
    )?;
    if !out.contains("active") {
        bail!("WP Overnight's plugin not active: {out}");
    }
    // Its classes load on init when WooCommerce is there (in a new process);
    // the real plugin installs itself (default settings, its temporary
    // folders) on its first admin page, which a site set up here never shows.
    let version = wp.eval(
        false,
        "if (function_exists('WPO_WCPDF') && isset(WPO_WCPDF()->install)) { WPO_WCPDF()->install->do_install(); }
         echo function_exists('WPO_WCPDF') && WPO_WCPDF()->documents ? WPO_WCPDF()->version : 'not loaded';",
    )?;
    if version.trim() == "not loaded" || version.trim().is_empty() {
        bail!("WP Overnight's plugin did not load its classes: {version}");
    }
    println!(
        "WP Overnight PDF Invoices: {} ({})",
        version.trim(),
        if wpo.real { "real" } else { "STAND-IN" }
    );
    Ok(wp)
}
