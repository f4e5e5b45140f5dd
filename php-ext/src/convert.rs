//! PHP ints (i64) to and from the core's u64/u32, with exceptions that name
//! the argument. No numbering rule lives here: "at least 1", year ranges,
//! batch bounds are checked by the core.

use ext_php_rs::prelude::*;

use crate::exceptions::{invalid_argument, to_php};

/// A PHP int that must not be negative.
pub fn unsigned(name: &str, value: i64) -> PhpResult<u64> {
    u64::try_from(value)
        .map_err(|_| invalid_argument(format!("{name} must not be negative, got {value}")))
}

/// A PHP int for a year or month (u32); range rules are the core's.
pub fn small(name: &str, value: i64) -> PhpResult<u32> {
    u32::try_from(value).map_err(|_| invalid_argument(format!("{name} {value} is out of range")))
}

/// A number handed out, as a PHP int.
pub fn to_php_int(scope: &str, value: u64) -> PhpResult<i64> {
    i64::try_from(value).map_err(|_| {
        to_php(counterfoil_core::Error::Overflow {
            scope: format!("{scope} (number {value} does not fit in a PHP int)"),
            requested: 1,
        })
    })
}
