//! The shared test harness of Counterfoil's end-to-end suites.
//!
//! - [`mariadb`]: private MariaDB servers (own datadir, socket and port under
//!   `target/harness/`), never the machine's own service; each test gets its
//!   own database; servers stop when their handle drops, and also when the
//!   test process dies (the server is bound to the harness with
//!   `PR_SET_PDEATHSIG`), so nothing is left running after a suite.
//! - [`workers`]: start several OS processes that wait at a common start line,
//!   then collect what each printed and when it ran (to prove the overlap).
//! - [`check`]: the checker of allocation histories: no duplicate, no
//!   unexplained gap.

pub mod browser;
pub mod burst;
pub mod chain_walk;
pub mod check;
pub mod commit_cut;
pub mod engines;
pub mod fake_clock;
pub mod galera;
pub mod history;
pub mod legacy;
pub mod mariadb;
pub mod php;
pub mod postgres;
pub mod waiting;
pub mod webhook;
pub mod woocommerce;
pub mod wordpress;
pub mod workers;
pub mod wp_session;

pub use check::{check_contiguous, Allocation};
pub use mariadb::MariaDb;

/// A current-thread tokio runtime for a test's store: one per call, idling
/// between calls as a PHP worker's does.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The workspace's `target/` directory.
pub fn target_dir() -> std::path::PathBuf {
    if let Ok(dir) = std::env::var("CARGO_TARGET_DIR") {
        return dir.into();
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .join("target")
}

/// Blocks until SIGINT (Ctrl-C) or SIGTERM, for the binaries that keep the
/// services they started up until told to stop (the demo, harness-mariadb).
pub fn wait_for_stop_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let mut term = signal(SignalKind::terminate())?;
            let mut int = signal(SignalKind::interrupt())?;
            tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
            anyhow::Ok(())
        })
}

/// What a finished command printed: its stdout, then its stderr.
pub fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
