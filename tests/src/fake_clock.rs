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

/// A fake wall clock set once everyone is ready: processes started with
/// [`MovableClock::env`] read the real time until [`MovableClock::set_at`]
/// moves all of them at once (libfaketime reads its offset from a file on
/// every clock read: `FAKETIME_TIMESTAMP_FILE`, `FAKETIME_NO_CACHE`). So a
/// test that needs "5 s before midnight" gets it when its clients are at
/// the start line, however long a loaded machine took to start them, instead
/// of betting that start-up fits in a lead of a few seconds.
pub struct MovableClock {
    file: std::path::PathBuf,
}

impl MovableClock {
    /// A clock reading the real time until moved.
    pub fn new() -> Result<Self> {
        if !Path::new(LIBFAKETIME).exists() {
            bail!("{LIBFAKETIME} is missing: apt-get install faketime");
        }
        let dir = crate::target_dir().join("harness");
        std::fs::create_dir_all(&dir)?;
        let file = dir.join(format!(
            "faketime-{}-{}",
            std::process::id(),
            crate::workers::now_ns()
        ));
        let clock = Self { file };
        clock.write("+0")?;
        Ok(clock)
    }

    /// The environment of a process on this clock.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("LD_PRELOAD", LIBFAKETIME.to_owned()),
            ("FAKETIME_TIMESTAMP_FILE", self.file.display().to_string()),
            ("FAKETIME_NO_CACHE", "1".to_owned()),
            ("DONT_FAKE_MONOTONIC", "1".to_owned()),
        ]
    }

    /// Moves every process on this clock so that it reads `unix` now.
    pub fn set_at(&self, unix: i64) -> Result<()> {
        let real = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs() as i64;
        self.write(&format!("{:+}", unix - real))
    }

    /// Replaces the offset file whole (rename), so no reader sees half of it.
    fn write(&self, offset: &str) -> Result<()> {
        let next = self.file.with_extension("next");
        std::fs::write(&next, format!("{offset}\n"))?;
        std::fs::rename(&next, &self.file)?;
        Ok(())
    }
}

impl Drop for MovableClock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}
