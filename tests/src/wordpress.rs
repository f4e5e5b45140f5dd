//! Real WordPress for tests: Debian's `wordpress` package copied under
//! `target/harness/`, its own `wp-config.php` on a fresh database of a
//! harness MariaDB, installed headless (`wp_install()`), with the plugin from
//! `wp-plugin/` copied in and activated.
//!
//! Invariants: nothing of the machine's own WordPress configuration
//! (`/etc/wordpress`) is read; each site has its own directory and database;
//! the plugin under test is the working tree's `wp-plugin/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::mariadb::MariaDb;
use crate::php::{extension_path, repo_root, FpmSite};

/// The administrator's login.
pub const ADMIN_USER: &str = "admin";
/// The administrator's password.
pub const ADMIN_PASSWORD: &str = "admin-password";
/// A subscriber's login (for permission tests).
pub const SUBSCRIBER_USER: &str = "subscriber";
/// The subscriber's password.
pub const SUBSCRIBER_PASSWORD: &str = "subscriber-password";

/// A new site directory under `target/harness/`, unique to this process and moment.
fn site_dir(name: &str) -> PathBuf {
    crate::target_dir().join("harness").join(format!(
        "wp-{name}-{}-{}",
        std::process::id(),
        crate::workers::now_ns()
    ))
}

/// One WordPress site.
pub struct WordPress {
    dir: PathBuf,
    url: String,
    db: String,
}

impl WordPress {
    /// Copies WordPress, writes its config, runs `before_install` SQL (e.g. an
    /// existing article table), installs it and activates the plugin.
    pub fn install(
        server: &dyn SiteServer,
        name: &str,
        before_install: Option<&str>,
    ) -> Result<Self> {
        Self::install_with(server, name, before_install, true)
    }

    /// As [`WordPress::install`]; the plugin is copied in but activated only
    /// when `activate` (a legacy site has never seen Counterfoil).
    pub fn install_with(
        server: &dyn SiteServer,
        name: &str,
        before_install: Option<&str>,
        activate: bool,
    ) -> Result<Self> {
        let url = server.site_database(name)?;
        let db = MariaDb::database_name(&url);
        let dir = site_dir(name);
        lay_out_files(&dir, &db, server.site_port())?;
        if let Some(sql) = before_install {
            server.site_exec(&db, sql)?;
        }
        if before_install.is_none() && server.clones_sites() {
            // One real install per server and process (the template); every
            // other site's database is a copy of it, table by table.
            let template = template_database(server, activate)?;
            let old = MariaDb::database_name(&template);
            for row in MariaDb::query(&template, "SHOW TABLES")? {
                let table = row[0].clone().context("a table name")?;
                server.site_exec(
                    &db,
                    &format!(
                        "CREATE TABLE `{table}` LIKE `{old}`.`{table}`; \
                         INSERT INTO `{table}` SELECT * FROM `{old}`.`{table}`"
                    ),
                )?;
            }
            // The plugin recorded the template's database as where it numbers
            // (its staging-copy guard); this site was installed here.
            let serialized = |name: &str| format!("s:{}:\"{name}\";", name.len());
            server.site_exec(
                &db,
                &format!(
                    "UPDATE wp_options SET option_value = REPLACE(option_value, '{}', '{}') \
                     WHERE option_name = 'counterfoil_site_identity'",
                    serialized(&old),
                    serialized(&db)
                ),
            )?;
            return Ok(WordPress { dir, url, db });
        }
        let site = WordPress { dir, url, db };
        site.run_installer(activate)?;
        Ok(site)
    }

    /// Runs WordPress's installer in the site (headless), activating the
    /// plugin when `activate`.
    fn run_installer(&self, activate: bool) -> Result<()> {
        std::fs::write(self.dir.join("counterfoil-install.php"), INSTALL_PHP)?;
        let out = self
            .php(false)
            .arg("counterfoil-install.php")
            .env("COUNTERFOIL_ACTIVATE", if activate { "1" } else { "0" })
            .output()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !stdout.contains("installed") {
            bail!(
                "WordPress install failed: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// What a host's "staging copy" makes of this site: its files and its
    /// database copied (a new database on `server`, every table with its
    /// rows), the copy's stored address rewritten to `home` (as a copy
    /// tool's search-replace does). The original is untouched.
    pub fn copy_to(&self, server: &MariaDb, name: &str, home: &str) -> Result<WordPress> {
        let url = server.fresh_database(name)?;
        let db = MariaDb::database_name(&url);
        for row in MariaDb::query(&self.url, "SHOW TABLES")? {
            let table = row[0].clone().context("a table name")?;
            server.exec(
                &db,
                &format!(
                    "CREATE TABLE `{table}` LIKE `{old}`.`{table}`; \
                     INSERT INTO `{table}` SELECT * FROM `{old}`.`{table}`",
                    old = self.db
                ),
            )?;
        }
        server.exec(
            &db,
            &format!(
                "UPDATE wp_options SET option_value = '{home}' WHERE option_name IN ('home', 'siteurl')"
            ),
        )?;
        let dir = site_dir(name);
        let cp = Command::new("cp")
            .arg("-r")
            .arg(&self.dir)
            .arg(&dir)
            .status()?;
        if !cp.success() {
            bail!("copy the site's files");
        }
        std::fs::write(dir.join("wp-config.php"), wp_config(&db, server.port()))?;
        Ok(WordPress { dir, url, db })
    }

    /// The site's directory (ABSPATH).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The site's database URL.
    pub fn database_url(&self) -> &str {
        &self.url
    }

    /// The site's database name.
    pub fn database(&self) -> &str {
        &self.db
    }

    /// A PHP CLI command in the site's directory, with or without the extension.
    pub fn php(&self, extension: bool) -> Command {
        let mut c = Command::new("php");
        if extension {
            c.arg("-d")
                .arg(format!("extension={}", extension_path().display()));
        }
        c.current_dir(&self.dir);
        c
    }

    /// Runs PHP code with WordPress loaded; returns stdout, fails on a non-zero exit.
    pub fn eval(&self, extension: bool, code: &str) -> Result<String> {
        let out = self
            .php(extension)
            .arg("-r")
            .arg(format!("require './wp-load.php';\n{code}"))
            .output()?;
        if !out.status.success() {
            bail!(
                "PHP failed ({}): {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Serves the site with php-fpm (`children` workers) and nginx.
    pub fn serve(&self, extension: bool, children: u32) -> Result<FpmSite> {
        FpmSite::start("wp", &self.dir, children, extension, &[])
    }

    /// As [`WordPress::serve`], with extra environment for php-fpm (a fake clock).
    pub fn serve_with_env(
        &self,
        extension: bool,
        children: u32,
        env: &[(&str, String)],
    ) -> Result<FpmSite> {
        FpmSite::start_with_env("wp", &self.dir, children, extension, &[], env)
    }

    /// One value from the site's database ("" for NULL or no row).
    pub fn scalar(&self, sql: &str) -> String {
        MariaDb::scalar(&self.url, sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .unwrap_or_default()
    }

    /// Sets `define('name', php_value);` in wp-config.php (replacing an
    /// earlier define of that name).
    pub fn config_set(&self, name: &str, php_value: &str) {
        let path = self.dir.join("wp-config.php");
        let text = std::fs::read_to_string(&path).expect("read wp-config.php");
        let line = format!("define('{name}', {php_value});");
        let prefix = format!("define('{name}',");
        let text = if let Some(old) = text.lines().find(|l| l.starts_with(&prefix)) {
            text.replace(old, &line)
        } else {
            text.replace(
                "if (!defined('ABSPATH'))",
                &format!("{line}\nif (!defined('ABSPATH'))"),
            )
        };
        std::fs::write(path, text).expect("write wp-config.php");
    }

    /// Installs a must-use plugin (`wp-content/mu-plugins/<name>.php`).
    pub fn mu_plugin(&self, name: &str, php: &str) -> Result<()> {
        let dir = self.dir.join("wp-content/mu-plugins");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("{name}.php")), php)?;
        Ok(())
    }

    /// The webhook secret the plugin generated.
    pub fn webhook_secret(&self) -> Result<String> {
        let s = self.eval(false, "echo get_option('counterfoil_webhook_secret');")?;
        if s.len() < 32 {
            bail!("no webhook secret: {s:?}");
        }
        Ok(s)
    }
}

impl Drop for WordPress {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A site with two series: 5:2026 crossing 9999 → 10000 (for the numeric
/// order), and 6:2026 with a void number whose reason a spreadsheet would run.
pub fn books_site(server: &MariaDb, name: &str) -> Result<WordPress> {
    let wp = WordPress::install(server, name, None)?;
    wp.eval(
        false,
        "initialize_invoice_sequence(5, 2026, 9998);
         initialize_invoice_sequence(6, 2026, 1);
         foreach (array(5, 5, 5, 6, 6, 6) as $i => $u) {
             $p = counterfoil_create_invoice_for_payment(array('gateway' => 'stripe', 'transaction_id' => \"books-$i\",
                 'user_id' => $u, 'year' => 2026, 'amount' => '12.50', 'currency' => 'EUR'));
             if (is_wp_error($p)) { echo $p->get_error_message(); exit(1); }
         }
         counterfoil_void_number('6:2026', 2, '=SUM(A1:A9), then \"quoted\"');",
    )?;
    Ok(wp)
}

/// Where a test site keeps its database: one private server, or a Galera
/// cluster (WordPress connects to its first node).
pub trait SiteServer {
    /// A fresh empty database; its TCP URL.
    fn site_database(&self, label: &str) -> Result<String>;
    /// Whether a site's database may be a copy of an installed template on
    /// this server (one WordPress install per server and test process).
    fn clones_sites(&self) -> bool {
        false
    }
    /// The port WordPress connects to.
    fn site_port(&self) -> u16;
    /// Runs statements on database `db`.
    fn site_exec(&self, db: &str, sql: &str) -> Result<()>;
}

impl SiteServer for MariaDb {
    fn site_database(&self, label: &str) -> Result<String> {
        self.fresh_database(label)
    }
    fn clones_sites(&self) -> bool {
        true
    }
    fn site_port(&self) -> u16 {
        self.port()
    }
    fn site_exec(&self, db: &str, sql: &str) -> Result<()> {
        self.exec(db, sql)
    }
}

impl SiteServer for crate::galera::Galera {
    fn site_database(&self, label: &str) -> Result<String> {
        let db: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        self.exec(&format!("CREATE DATABASE `{db}`"))?;
        Ok(self.url(0, &db))
    }
    fn site_port(&self) -> u16 {
        self.port(0)
    }
    fn site_exec(&self, db: &str, sql: &str) -> Result<()> {
        self.exec(&format!("USE `{db}`; {sql}"))
    }
}

/// The environment variable naming another WordPress (an unpacked release)
/// for the suites, instead of Debian's package.
pub const WORDPRESS_ENV: &str = "COUNTERFOIL_WORDPRESS";

/// The WordPress the suites install: [`WORDPRESS_ENV`], else Debian's
/// `/usr/share/wordpress`.
pub fn wordpress_source() -> PathBuf {
    match std::env::var_os(WORDPRESS_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from("/usr/share/wordpress"),
    }
}

/// A site's files in `dir`: WordPress (Debian's package or
/// [`WORDPRESS_ENV`], copied), its wp-config.php for database `db` on
/// `port`, and the plugin (without its tests).
fn lay_out_files(dir: &Path, db: &str, port: u16) -> Result<()> {
    let source = wordpress_source();
    let cp = Command::new("cp")
        .arg("-rL")
        .arg(&source)
        .arg(dir)
        .status()
        .with_context(|| format!("copy {} (apt-get install wordpress)", source.display()))?;
    if !cp.success() {
        bail!("cp -rL {} failed", source.display());
    }
    // Debian's package keeps its configuration in /etc/wordpress; a release
    // has a sample: either way this site's own wp-config.php is written below.
    let _ = std::fs::remove_file(dir.join(".htaccess"));
    std::fs::write(dir.join("wp-config.php"), wp_config(db, port))?;
    let plugins = dir.join("wp-content/plugins");
    std::fs::create_dir_all(&plugins)?;
    let status = Command::new("cp")
        .arg("-r")
        .arg(repo_root().join("wp-plugin"))
        .arg(plugins.join("counterfoil"))
        .status()?;
    if !status.success() {
        bail!("copy the plugin");
    }
    let _ = std::fs::remove_dir_all(plugins.join("counterfoil/tests"));
    Ok(())
}

/// The installed template database on `server` (WordPress installed, the
/// plugin activated when `activate`), made on first use in this process:
/// its URL. Sites copy its tables instead of running WordPress's installer
/// again (about 1.7 s a site).
fn template_database(server: &dyn SiteServer, activate: bool) -> Result<String> {
    static TEMPLATES: std::sync::Mutex<Vec<((u16, bool), String)>> =
        std::sync::Mutex::new(Vec::new());
    let mut templates = TEMPLATES.lock().unwrap_or_else(|e| e.into_inner());
    let key = (server.site_port(), activate);
    if let Some((_, url)) = templates.iter().find(|(k, _)| *k == key) {
        return Ok(url.clone());
    }
    let name = format!("template_{}", if activate { "active" } else { "inactive" });
    let url = server.site_database(&name)?;
    let site = WordPress {
        dir: site_dir(&name),
        db: MariaDb::database_name(&url),
        url: url.clone(),
    };
    lay_out_files(&site.dir, &site.db, server.site_port())?;
    site.run_installer(activate)?;
    templates.push((key, url.clone()));
    Ok(url)
}

fn wp_config(db: &str, port: u16) -> String {
    let salts: String = [
        "AUTH_KEY",
        "SECURE_AUTH_KEY",
        "LOGGED_IN_KEY",
        "NONCE_KEY",
        "AUTH_SALT",
        "SECURE_AUTH_SALT",
        "LOGGED_IN_SALT",
        "NONCE_SALT",
    ]
    .iter()
    .map(|k| format!("define('{k}', 'counterfoil-test-{k}-not-secret');\n"))
    .collect();
    format!(
        "<?php\n// Written by the Counterfoil test harness.\n\
         define('DB_NAME', '{db}');\ndefine('DB_USER', 'cf');\ndefine('DB_PASSWORD', 'cf');\n\
         define('DB_HOST', '127.0.0.1:{port}');\ndefine('DB_CHARSET', 'utf8mb4');\ndefine('DB_COLLATE', '');\n\
         $table_prefix = 'wp_';\n{salts}\
         $counterfoil_host = isset($_SERVER['HTTP_HOST']) ? $_SERVER['HTTP_HOST'] : '127.0.0.1';\n\
         define('WP_HOME', 'http://' . $counterfoil_host);\ndefine('WP_SITEURL', 'http://' . $counterfoil_host);\n\
         define('DISABLE_WP_CRON', true);\ndefine('AUTOMATIC_UPDATER_DISABLED', true);\n\
         define('WP_HTTP_BLOCK_EXTERNAL', true);\ndefine('FS_METHOD', 'direct');\ndefine('WP_DEBUG', false);\n\
         define('WP_DISABLE_FATAL_ERROR_HANDLER', true);\n\
         if (getenv('COUNTERFOIL_FORCE_PHP_BACKEND')) {{ define('COUNTERFOIL_FORCE_PHP_BACKEND', true); }}\n\
         if (!defined('ABSPATH')) {{ define('ABSPATH', __DIR__ . '/'); }}\n\
         require_once ABSPATH . 'wp-settings.php';\n"
    )
}

const INSTALL_PHP: &str = r#"<?php
// Headless install by the Counterfoil test harness.
define('WP_INSTALLING', true);
require __DIR__ . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
add_filter('pre_wp_mail', '__return_false');
wp_install('Counterfoil', 'admin', 'admin@example.invalid', false, '', 'admin-password');
// Pretty permalinks, so the REST API answers at /wp-json/.
global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%postname%/');
flush_rewrite_rules(false);
// WordPress tests script compression with a background request on the first
// admin visit; settle it now so pages make no requests of their own.
update_site_option('can_compress_scripts', 0);
$activated = getenv('COUNTERFOIL_ACTIVATE') === '0' ? null : activate_plugin('counterfoil/counterfoil.php');
if (is_wp_error($activated)) {
    fwrite(STDERR, $activated->get_error_message());
    exit(1);
}
$subscriber = wp_insert_user(array('user_login' => 'subscriber', 'user_pass' => 'subscriber-password',
    'user_email' => 'subscriber@example.invalid', 'role' => 'subscriber'));
if (is_wp_error($subscriber)) {
    fwrite(STDERR, $subscriber->get_error_message());
    exit(1);
}
echo "installed\n";
"#;
