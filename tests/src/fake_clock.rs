//! A fake wall clock for whole processes: Debian's libfaketime
//! (`apt-get install faketime`) preloaded with an offset, so php-fpm, its
//! workers and the test clients all see the same moment — a few seconds
//! before a New Year's midnight, say — and the clock keeps running.
//!
//! Invariants: only the wall clock moves (`DONT_FAKE_MONOTONIC=1`: deadlines
//! and timeouts measure real time); every process given [`env_at`] from one
//! call shares one offset; the database server keeps the real clock.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Result};

/// Where Debian's `faketime` package puts the library.
pub const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// Environment that makes a process's wall clock read `unix` now (and run on
/// from there).
pub fn env_at(unix: i64) -> Result<Vec<(&'static str, String)>> {
    if !Path::new(LIBFAKETIME).exists() {
        bail!("{LIBFAKETIME} is missing: apt-get install faketime");
    }
    let real = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs() as i64;
    let offset = unix - real;
    Ok(vec![
        ("LD_PRELOAD", LIBFAKETIME.to_owned()),
        ("FAKETIME", format!("{offset:+}")),
        ("DONT_FAKE_MONOTONIC", "1".to_owned()),
    ])
}
