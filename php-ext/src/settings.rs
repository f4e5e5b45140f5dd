//! Where the extension's connection settings come from.
//!
//! Invariants: php.ini (`counterfoil.*`, settable in php.ini, `-d`, or a
//! php-fpm pool's `php_admin_value`, not by `ini_set`) gives the defaults;
//! `Counterfoil\configure()` overrides them for the rest of the process; a
//! `Counterfoil\Sequences` built with options overrides both for itself.
//! Every value is validated by the core type it becomes before it is kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use counterfoil_core::mysql::url_from_parts;
use counterfoil_core::{NodeListPolicy, NumberFormat, StoreConfig, TablePrefix};
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};
use ext_php_rs::zend::ExecutorGlobals;

use crate::exceptions::invalid_argument;

/// The ini directives and their defaults.
pub const INI_DATABASE_URL: &str = "counterfoil.database_url";
/// Table prefix directive.
pub const INI_TABLE_PREFIX: &str = "counterfoil.table_prefix";
/// Deadline directive, milliseconds.
pub const INI_TIMEOUT_MS: &str = "counterfoil.timeout_ms";
/// Number template directive.
pub const INI_FORMAT: &str = "counterfoil.format";

/// Resolved settings of one store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Settings {
    pub database_url: Option<String>,
    pub table_prefix: String,
    pub timeout_ms: u64,
    pub format: String,
    /// Record every number of `allocate_invoice_number()` in the registry
    /// (`{prefix}counterfoil_numbers`), in the allocation's transaction.
    pub registry: bool,
    /// Accept a node list of independent servers (option
    /// `unsafe_allow_independent_nodes`): only for failover tests between
    /// throw-away servers (docs/design.md §9).
    pub independent_nodes: bool,
    /// Send a payment's first delivery, a held payment's completion and a
    /// recorded allocation's first try as one multi-statement packet
    /// (option `one_trip_payments`,
    /// default on; off: the flow of several statements, for comparison).
    pub one_trip_payments: bool,
    /// Why numbering is paused in this process (option `paused`: the
    /// WordPress plugin on a copy of its site, at another address or
    /// environment): `allocate_invoice_number()` then takes no number and
    /// throws `DatabaseUnavailableException` with the reason. None: not
    /// paused (an empty string, or no option).
    pub paused: Option<String>,
}

impl Settings {
    /// The store configuration, or an error saying how to configure.
    pub fn store_config(&self) -> PhpResult<StoreConfig> {
        let url = self.database_url.clone().ok_or_else(|| {
            invalid_argument(
                "no database configured: set counterfoil.database_url in php.ini, or call \
                 Counterfoil\\configure(['database_url' => 'mysql://user:pass@host:port/db'])"
                    .into(),
            )
        })?;
        let node_list = if self.independent_nodes {
            NodeListPolicy::UnsafeAllowIndependentServers
        } else {
            NodeListPolicy::OneCluster
        };
        Ok(StoreConfig::new(url)
            .table_prefix(&self.table_prefix)
            .map_err(crate::exceptions::to_php)?
            .deadline(std::time::Duration::from_millis(self.timeout_ms))
            .node_list(node_list)
            .one_trip_payments(self.one_trip_payments))
    }

    /// The parsed number template.
    pub fn number_format(&self) -> PhpResult<NumberFormat> {
        NumberFormat::parse(&self.format).map_err(|e| crate::exceptions::to_php(e.into()))
    }

    /// These settings with `options` (a PHP array) applied on top.
    pub fn with_options(&self, options: &ZendHashTable) -> PhpResult<Self> {
        let mut out = self.clone();
        let mut parts: HashMap<&'static str, String> = HashMap::new();
        for (key, value) in options {
            let key = key.to_string();
            let text = scalar(&key, value)?;
            match key.as_str() {
                "database_url" => out.database_url = Some(text).filter(|u| !u.is_empty()),
                "host" | "nodes" | "user" | "password" | "database" => {
                    let k = ["host", "nodes", "user", "password", "database"]
                        .into_iter()
                        .find(|k| *k == key)
                        .expect("matched above");
                    parts.insert(k, text);
                }
                "table_prefix" => {
                    TablePrefix::new(&text).map_err(crate::exceptions::to_php)?;
                    out.table_prefix = text;
                }
                "timeout_ms" => out.timeout_ms = parse_timeout(&text)?,
                "registry" => out.registry = matches!(text.as_str(), "1" | "true" | "on" | "yes"),
                "unsafe_allow_independent_nodes" => {
                    out.independent_nodes = matches!(text.as_str(), "1" | "true" | "on" | "yes")
                }
                "one_trip_payments" => {
                    out.one_trip_payments = matches!(text.as_str(), "1" | "true" | "on" | "yes")
                }
                "format" => {
                    NumberFormat::parse(&text).map_err(|e| crate::exceptions::to_php(e.into()))?;
                    out.format = text;
                }
                "paused" => out.paused = Some(text).filter(|r| !r.trim().is_empty()),
                other => {
                    return Err(invalid_argument(format!(
                        "unknown option `{other}`; known options: database_url, host, nodes, \
                         user, password, database, table_prefix, timeout_ms, format, registry, \
                         one_trip_payments, unsafe_allow_independent_nodes, paused"
                    )))
                }
            }
        }
        if !parts.is_empty() {
            let get = |k: &str| parts.get(k).cloned().unwrap_or_default();
            // `nodes`: DB_HOST-style hosts separated by commas, in order of
            // preference (a Galera cluster: the first healthy one writes).
            let hosts = if get("nodes").is_empty() {
                get("host")
            } else {
                get("nodes")
            };
            if hosts.trim().is_empty() || get("database").is_empty() {
                return Err(invalid_argument(
                    "options host (or nodes) and database go together (with user and password)"
                        .into(),
                ));
            }
            let urls = hosts
                .split(',')
                .map(|h| url_from_parts(h, &get("user"), &get("password"), &get("database")))
                .collect::<counterfoil_core::Result<Vec<String>>>()
                .map_err(crate::exceptions::to_php)?;
            out.database_url = Some(urls.join(","));
        }
        Ok(out)
    }
}

fn scalar(key: &str, value: &Zval) -> PhpResult<String> {
    if let Some(s) = value.string() {
        return Ok(s);
    }
    if let Some(n) = value.long() {
        return Ok(n.to_string());
    }
    if let Some(b) = value.bool() {
        return Ok(if b { "1" } else { "0" }.into());
    }
    Err(invalid_argument(format!(
        "option `{key}` must be a string or an int"
    )))
}

fn parse_timeout(text: &str) -> PhpResult<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| (1..=3_600_000).contains(ms))
        .ok_or_else(|| {
            invalid_argument(format!(
                "timeout_ms must be a whole number of milliseconds from 1 to 3600000, got `{text}`"
            ))
        })
}

/// The process-wide settings with their template parsed once, shared by
/// reference so that a call copies nothing.
#[derive(Debug)]
pub struct Current {
    pub settings: Settings,
    pub format: NumberFormat,
}

impl Current {
    fn new(settings: Settings) -> PhpResult<Arc<Self>> {
        let format = settings.number_format()?;
        Ok(Arc::new(Self { settings, format }))
    }
}

/// Settings given to `Counterfoil\configure()` in this process (plain data,
/// so a forked child inherits them, as it inherits php.ini).
static CONFIGURED: Mutex<Option<Arc<Current>>> = Mutex::new(None);
/// php.ini settings, read once (they cannot change at run time).
static FROM_INI: Mutex<Option<Arc<Current>>> = Mutex::new(None);

/// The process-wide settings: `configure()` if called, else php.ini.
pub fn current() -> PhpResult<Arc<Current>> {
    if let Some(s) = CONFIGURED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
    {
        return Ok(Arc::clone(s));
    }
    from_ini()
}

/// Replaces the process-wide settings.
pub fn configure(options: &ZendHashTable) -> PhpResult<()> {
    let next = Current::new(from_ini()?.settings.with_options(options)?)?;
    *CONFIGURED.lock().unwrap_or_else(|e| e.into_inner()) = Some(next);
    Ok(())
}

fn from_ini() -> PhpResult<Arc<Current>> {
    let mut cached = FROM_INI.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = cached.as_ref() {
        return Ok(Arc::clone(s));
    }
    let ini = ExecutorGlobals::get().ini_values();
    let get = |k: &str| ini.get(k).cloned().flatten().filter(|v| !v.is_empty());
    let settings = Settings {
        database_url: get(INI_DATABASE_URL),
        table_prefix: get(INI_TABLE_PREFIX).unwrap_or_else(|| "wp_".into()),
        timeout_ms: match get(INI_TIMEOUT_MS) {
            Some(t) => parse_timeout(&t)?,
            None => 5000,
        },
        format: get(INI_FORMAT).unwrap_or_else(|| counterfoil_core::DEFAULT_TEMPLATE.into()),
        registry: false,
        independent_nodes: false,
        one_trip_payments: true,
        paused: None,
    };
    let current = Current::new(settings)?;
    *cached = Some(Arc::clone(&current));
    Ok(current)
}
