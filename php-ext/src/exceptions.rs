//! The PHP exception hierarchy and the one mapping from core errors to it.
//!
//! Invariants: every `counterfoil_core::Error` becomes exactly one of these
//! classes; the exception code is the server's error code where there is one
//! (1205, 1213, …), else 0; the message is the core's, which says what to do.
//!
//! | class (namespace `Counterfoil`)  | extends                      | for |
//! |----------------------------------|------------------------------|-----|
//! | `InvalidArgumentException`       | `\InvalidArgumentException`  | bad scope, template, start, count, year, user id, option |
//! | `SeriesNotFoundException`        | `\RuntimeException`          | allocating from / moving a series that does not exist |
//! | `SeriesExistsException`          | `\RuntimeException`          | `Sequences::create()` of an existing series |
//! | `SeriesClosedException`          | `\RuntimeException`          | allocating from a series that a later one continues (the `continue` plan) |
//! | `OverflowException`              | `\OverflowException`         | a counter that would pass the largest number |
//! | `DatabaseUnavailableException`   | `\RuntimeException`          | cannot connect, connection lost, server error, unsafe durability |
//! | `TimeoutException`               | `\RuntimeException`          | the call did not finish within `counterfoil.timeout_ms` |
//!
//! The classes are registered at module start-up as plain subclasses of the
//! SPL classes, with no Rust object behind them: they keep the engine's own
//! exception object handlers, so a thrown exception has its file, line and
//! trace, and PHP code can construct them (`new
//! Counterfoil\SeriesNotFoundException("…")`) like any exception.

use std::sync::atomic::{AtomicPtr, Ordering};

use counterfoil_core::Error;
use ext_php_rs::args::ArgInfoTables;
use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::exception::PhpException;
use ext_php_rs::zend::ClassEntry;

/// SPL's class entry `symbol` (e.g. `spl_ce_RuntimeException`), exported by
/// the PHP binary (php, php-fpm) as C extensions use it. Looked up with
/// `dlsym` rather than linked, so the library also loads outside PHP (the
/// stub generator); \Exception when absent.
fn spl(symbol: &std::ffi::CStr) -> &'static ClassEntry {
    // SAFETY: dlsym on the global namespace; the symbol, when present, is a
    // `zend_class_entry *` variable that SPL sets at engine start-up (before
    // any dynamically loaded extension starts) and never frees.
    unsafe {
        let slot = libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr()) as *const *mut ClassEntry;
        slot.as_ref().and_then(|ce| ce.as_ref())
    }
    .unwrap_or_else(ext_php_rs::zend::ce::exception)
}

fn invalid_argument_ce() -> &'static ClassEntry {
    spl(c"spl_ce_InvalidArgumentException")
}

fn runtime_ce() -> &'static ClassEntry {
    spl(c"spl_ce_RuntimeException")
}

fn overflow_ce() -> &'static ClassEntry {
    spl(c"spl_ce_OverflowException")
}

/// The exception classes, in registration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    InvalidArgument = 0,
    SeriesNotFound = 1,
    SeriesExists = 2,
    Overflow = 3,
    DatabaseUnavailable = 4,
    Timeout = 5,
    SeriesClosed = 6,
}

type ParentFn = fn() -> &'static ClassEntry;

const CLASSES: [(Kind, &str, ParentFn, &str); 7] = [
    (
        Kind::InvalidArgument,
        "Counterfoil\\InvalidArgumentException",
        invalid_argument_ce,
        "\\InvalidArgumentException",
    ),
    (
        Kind::SeriesNotFound,
        "Counterfoil\\SeriesNotFoundException",
        runtime_ce,
        "\\RuntimeException",
    ),
    (
        Kind::SeriesExists,
        "Counterfoil\\SeriesExistsException",
        runtime_ce,
        "\\RuntimeException",
    ),
    (
        Kind::Overflow,
        "Counterfoil\\OverflowException",
        overflow_ce,
        "\\OverflowException",
    ),
    (
        Kind::DatabaseUnavailable,
        "Counterfoil\\DatabaseUnavailableException",
        runtime_ce,
        "\\RuntimeException",
    ),
    (
        Kind::Timeout,
        "Counterfoil\\TimeoutException",
        runtime_ce,
        "\\RuntimeException",
    ),
    (
        Kind::SeriesClosed,
        "Counterfoil\\SeriesClosedException",
        runtime_ce,
        "\\RuntimeException",
    ),
];

static REGISTERED: [AtomicPtr<ClassEntry>; 7] = [
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
];

fn remember<const K: usize>(ce: &'static mut ClassEntry, _: ArgInfoTables) {
    REGISTERED[K].store(ce, Ordering::Release);
}

const REMEMBER: [fn(&'static mut ClassEntry, ArgInfoTables); 7] = [
    remember::<0>,
    remember::<1>,
    remember::<2>,
    remember::<3>,
    remember::<4>,
    remember::<5>,
    remember::<6>,
];

/// Registers the exception classes (module start-up only).
pub fn register() -> Result<(), String> {
    for (kind, name, parent, stub) in CLASSES {
        ClassBuilder::new(name)
            .extends((parent, stub))
            .registration(REMEMBER[kind as usize])
            .register()
            .map_err(|e| format!("cannot register {name}: {e}"))?;
    }
    Ok(())
}

fn class(kind: Kind) -> &'static ClassEntry {
    let ptr = REGISTERED[kind as usize].load(Ordering::Acquire);
    // SAFETY: set once at module start-up to an entry the engine keeps for
    // the life of the process; null only if start-up failed (then PHP never
    // calls our functions), with \RuntimeException as the fallback.
    unsafe { ptr.as_ref() }.unwrap_or_else(runtime_ce)
}

fn of(kind: Kind, message: String, code: i32) -> PhpException {
    PhpException::new(message, code, class(kind))
}

/// The one mapping from a core error to a PHP exception.
pub fn to_php(err: Error) -> PhpException {
    let code = err.server_code().map_or(0, i32::from);
    let kind = match &err {
        e if e.is_invalid_input() => Kind::InvalidArgument,
        Error::SeriesNotFound { .. } => Kind::SeriesNotFound,
        Error::SeriesExists { .. } => Kind::SeriesExists,
        Error::SeriesClosed { .. } => Kind::SeriesClosed,
        Error::Overflow { .. } => Kind::Overflow,
        Error::Timeout { .. } => Kind::Timeout,
        _ => Kind::DatabaseUnavailable,
    };
    of(kind, err.to_string(), code)
}

/// An argument refused while converting PHP values to core types.
pub fn invalid_argument(message: String) -> PhpException {
    of(Kind::InvalidArgument, message, 0)
}
