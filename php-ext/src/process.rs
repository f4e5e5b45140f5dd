//! One tokio runtime and one connection per store settings, per process.
//!
//! Invariants (design.md §3, fork safety): nothing is created at module
//! start-up; the runtime (current-thread: no threads) and the stores are
//! created on first use and remembered with the pid that created them; a
//! process whose pid differs (a php-fpm child, a `pcntl_fork()` child) never
//! touches what it inherited: it forgets it (dropping would close the
//! parent's socket) and builds its own. Connections live across requests.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use counterfoil_core::{Store, StoreStats};
use ext_php_rs::prelude::*;

use crate::exceptions::to_php;
use crate::settings::Settings;

struct Process {
    pid: u32,
    runtime: tokio::runtime::Runtime,
    stores: HashMap<Settings, Store>,
}

static PROCESS: Mutex<Option<Process>> = Mutex::new(None);

/// A call on a store, borrowing it for the duration of its future.
pub type StoreCall<'a, T> = Pin<Box<dyn Future<Output = counterfoil_core::Result<T>> + 'a>>;

/// Runs `call` on this process's store for `settings`.
pub fn with_store<T>(
    settings: &Settings,
    call: impl for<'a> FnOnce(&'a mut Store) -> StoreCall<'a, T>,
) -> PhpResult<T> {
    let mut guard = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if guard.as_ref().is_some_and(|p| p.pid != pid) {
        // Inherited through fork(): the socket is the parent's. Forget it.
        std::mem::forget(guard.take());
    }
    if guard.is_none() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                to_php(counterfoil_core::Error::Unavailable {
                    reason: format!("cannot start the I/O runtime: {e}"),
                    may_have_run: false,
                })
            })?;
        *guard = Some(Process {
            pid,
            runtime,
            stores: HashMap::new(),
        });
    }
    let process = guard.as_mut().expect("created above");
    if !process.stores.contains_key(settings) {
        let store = Store::lazy(settings.store_config()?).map_err(to_php)?;
        process.stores.insert(settings.clone(), store);
    }
    let store = process.stores.get_mut(settings).expect("inserted above");
    process.runtime.block_on(call(store)).map_err(to_php)
}

/// What this process's store for `settings` has done (zero if unused).
pub fn stats(settings: &Settings) -> (StoreStats, Option<u32>, u32, Option<usize>) {
    let guard = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    let store = guard
        .as_ref()
        .filter(|p| p.pid == pid)
        .and_then(|p| p.stores.get(settings));
    (
        store.map(|s| s.stats()).unwrap_or_default(),
        store.and_then(|s| s.connection_id()),
        pid,
        store.and_then(|s| s.node()),
    )
}
