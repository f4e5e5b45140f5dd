//! `counterfoil`: the PHP extension. A thin binding of `counterfoil-core`:
//! it converts PHP values to core types and core errors to PHP exceptions;
//! every numbering rule is the core's.
//!
//! - The article's global functions: `initialize_invoice_sequence()` and
//!   `allocate_invoice_number()`, on the process-wide settings.
//! - `Counterfoil\configure()`, `Counterfoil\connection_info()`.
//! - `Counterfoil\einvoice_document()`: the core's e-invoices ([`documents`]).
//! - `Counterfoil\Sequences`: the whole API on any scope key.
//! - The exception hierarchy of [`exceptions`].
//!
//! Fork safety and connection reuse are [`process`]'s job.
#![cfg_attr(windows, feature(abi_vectorcall))]

mod convert;
mod documents;
mod exceptions;
mod process;
mod sequences;
mod settings;

use counterfoil_core::{Initialized, Period, ScopeKey};
use ext_php_rs::boxed::ZBox;
use ext_php_rs::flags::IniEntryPermission;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendHashTable;
use ext_php_rs::zend::{IniEntryDef, IniEntryDefs};

use convert::{small, unsigned};
use exceptions::to_php;

static INI_ENTRIES: IniEntryDefs<5> = IniEntryDefs::new([
    IniEntryDef::new(c"counterfoil.database_url", c"", IniEntryPermission::System),
    IniEntryDef::new(
        c"counterfoil.table_prefix",
        c"wp_",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(
        c"counterfoil.timeout_ms",
        c"5000",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(
        c"counterfoil.format",
        c"{year}-{seq:04}",
        IniEntryPermission::System,
    ),
    IniEntryDef::end(),
]);

/// Module start-up: registers the ini directives. Creates no runtime, no
/// thread and no connection (php-fpm forks after this).
pub extern "C" fn startup(_ty: i32, module_number: i32) -> i32 {
    IniEntryDef::register(INI_ENTRIES.as_slice(), module_number);
    match exceptions::register().and_then(|()| process::register_fork_handler()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("counterfoil: {e}");
            -1
        }
    }
}

fn user_year_scope(user_id: i64, year: i64) -> PhpResult<(ScopeKey, u32)> {
    let user = unsigned("user_id", user_id)?;
    let year = small("year", year)?;
    let scope = ScopeKey::for_user_year(user, year).map_err(|e| to_php(e.into()))?;
    Ok((scope, year))
}

/// Creates the invoice series of `$user_id` for `$year`, whose first number
/// is `$starting_number`. Returns false (and changes nothing) when the series
/// exists.
///
/// @throws \Counterfoil\InvalidArgumentException when `$starting_number < 1`,
///   `$user_id < 0` or `$year` is outside 1..9999.
/// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
#[php_function]
pub fn initialize_invoice_sequence(
    user_id: i64,
    year: i64,
    starting_number: i64,
) -> PhpResult<bool> {
    let (scope, _) = user_year_scope(user_id, year)?;
    let start = unsigned("starting_number", starting_number)?;
    counterfoil_core::series::counter_for_start(start).map_err(to_php)?;
    let current = settings::current()?;
    let outcome = process::with_store(&current.settings, |s| {
        Box::pin(async move {
            s.ensure_schema().await?;
            s.initialize(&scope, start).await
        })
    })?;
    Ok(matches!(outcome, Initialized::Created { .. }))
}

/// Hands out the next invoice number of `$user_id` for `$year`, rendered with
/// `counterfoil.format` (default `{year}-{seq:04}`, e.g. `2019-0002`).
///
/// @throws \Counterfoil\SeriesNotFoundException when the series was never initialized.
/// @throws \Counterfoil\InvalidArgumentException for a negative user id or a year outside 1..9999.
/// @throws \Counterfoil\DatabaseUnavailableException|\Counterfoil\TimeoutException
#[php_function]
pub fn allocate_invoice_number(user_id: i64, year: i64) -> PhpResult<String> {
    let (scope, year) = user_year_scope(user_id, year)?;
    let current = settings::current()?;
    if let Some(reason) = &current.settings.paused {
        // A copy of the site: no number of any series is taken here.
        return Err(to_php(counterfoil_core::Error::Refused(format!(
            "numbering is paused: {reason}"
        ))));
    }
    let period = Period::new(year, sequences::current_month()).map_err(|e| to_php(e.into()))?;
    let settings = &current.settings;
    let number = if settings.registry {
        process::with_store(settings, move |s| {
            Box::pin(async move { s.allocate_recorded(&scope, "api").await })
        })?
    } else {
        *process::allocate(settings, &scope, 1)?.end()
    };
    Ok(current.format.render(number, period))
}

/// Sets this process's connection settings (overrides php.ini). Options:
/// `database_url`, or `host` (WordPress `DB_HOST` forms), `user`, `password`,
/// `database`; `table_prefix`, `timeout_ms`, `format`; `registry` (bool: record
/// each number of `allocate_invoice_number()` in the registry table, in the
/// allocation's transaction); `one_trip_payments` (bool, default true: a
/// payment's first delivery, a held payment's completion and a recorded
/// allocation's first try as one multi-statement packet; false: the flow of
/// several statements); `paused` (a reason: `allocate_invoice_number()`
/// takes no number and throws `DatabaseUnavailableException` with it; the
/// WordPress plugin sets it on a copy of its site; empty or absent: not
/// paused).
///
/// @throws \Counterfoil\InvalidArgumentException for an unknown or invalid option.
#[php_function]
#[php(name = "Counterfoil\\configure")]
pub fn configure(options: &ZendHashTable) -> PhpResult<()> {
    settings::configure(options)
}

/// This process's connection to the database of the process-wide settings:
/// `pid`, `connects`, `retries`, `timeouts`, `discarded`, `connection_id`
/// (0 when none), `node`, `skipped` and `skipped_reason` (why the last node
/// passed over was skipped: down, not ready, read-only, a standby).
#[php_function]
#[php(name = "Counterfoil\\connection_info")]
pub fn connection_info() -> PhpResult<ZBox<ZendHashTable>> {
    sequences::info(&settings::current()?.settings)
}

/// Whether `$number` is a valid air waybill number in an accepted spelling
/// (`157-40121012`, `157-4012 1012`, `15740121012`, surrounding spaces).
#[php_function]
#[php(name = "Counterfoil\\awb_is_valid")]
pub fn awb_is_valid(number: &str) -> bool {
    counterfoil_core::awb::Awb::is_valid(number)
}

/// The canonical spelling (`157-40121012`) of an air waybill number.
///
/// @throws \Counterfoil\InvalidArgumentException saying what is wrong (length,
///   a non-digit and where, the check digit expected and found).
#[php_function]
#[php(name = "Counterfoil\\awb_normalize")]
pub fn awb_normalize(number: &str) -> PhpResult<String> {
    counterfoil_core::awb::Awb::normalize(number)
        .map_err(|e| exceptions::invalid_argument(format!("invalid air waybill number: {e}")))
}

/// An e-invoice of a document input (JSON) as `ubl`, `cii` or `pdf`.
#[php_function]
#[php(name = "Counterfoil\\einvoice_document")]
pub fn einvoice_document(
    input_json: &str,
    format: &str,
) -> PhpResult<ext_php_rs::binary::Binary<u8>> {
    documents::document(input_json, format)
}

#[php_module]
#[php(startup = "startup")]
pub fn get_module(module: ModuleBuilder) -> ModuleBuilder {
    module
        .name("counterfoil")
        .class::<sequences::Sequences>()
        .function(wrap_function!(initialize_invoice_sequence))
        .function(wrap_function!(allocate_invoice_number))
        .function(wrap_function!(configure))
        .function(wrap_function!(connection_info))
        .function(wrap_function!(awb_is_valid))
        .function(wrap_function!(awb_normalize))
        .function(wrap_function!(einvoice_document))
}
