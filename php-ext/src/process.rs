//! One tokio runtime, one store and one allocation lane per store settings,
//! per process.
//!
//! Invariants (docs/design.md §3, fork safety): nothing is created at module
//! start-up; the runtime (current-thread: no threads), the stores and the
//! lanes are created on first use and remembered with the fork generation
//! that created them; a process that has forked since (a php-fpm child, a
//! `pcntl_fork()` child) never touches what it inherited: it forgets it
//! (dropping would close the parent's socket) and builds its own.
//! Connections live across requests.
//!
//! Plain allocations and `current()` on MySQL/MariaDB go through the
//! blocking [`AllocationLane`] (no runtime: one send, one poll and one
//! receive per number); every other call, and PostgreSQL, through the async [`Store`]. A
//! process that uses both holds one connection for each.

use std::future::Future;
use std::ops::RangeInclusive;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use counterfoil_core::{AllocationLane, Engine, ScopeKey, SeriesState, Store, StoreStats};
use ext_php_rs::prelude::*;

use crate::exceptions::to_php;
use crate::settings::Settings;

struct Process {
    /// The fork generation this process state belongs to.
    generation: u64,
    runtime: Option<tokio::runtime::Runtime>,
    /// Per settings (a process has one or a few: a list compared by value
    /// is cheaper than hashing the settings on every call).
    stores: Vec<(Settings, Store)>,
    lanes: Vec<(Settings, AllocationLane)>,
}

/// The entry for `settings` in `list`, made by `make` when missing.
fn entry<'a, T>(
    list: &'a mut Vec<(Settings, T)>,
    settings: &Settings,
    make: impl FnOnce() -> PhpResult<T>,
) -> PhpResult<&'a mut T> {
    let at = match list.iter().position(|(s, _)| s == settings) {
        Some(at) => at,
        None => {
            list.push((settings.clone(), make()?));
            list.len() - 1
        }
    };
    Ok(&mut list[at].1)
}

static PROCESS: Mutex<Option<Process>> = Mutex::new(None);

/// Bumped in every child of `fork()` (a `pthread_atfork` handler), so the
/// check per call is a load, not a `getpid()` system call.
static GENERATION: AtomicU64 = AtomicU64::new(0);

extern "C" fn forked_child() {
    GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Registers the fork handler (module start-up, before php-fpm forks).
pub fn register_fork_handler() -> Result<(), String> {
    // SAFETY: registers a handler that only touches an atomic.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(forked_child)) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("pthread_atfork failed: {rc}"))
    }
}

fn unavailable(reason: String) -> PhpException {
    to_php(counterfoil_core::Error::Unavailable {
        reason,
        may_have_run: false,
    })
}

/// This process's state, built anew after a fork.
fn process(guard: &mut Option<Process>) -> &mut Process {
    let generation = GENERATION.load(Ordering::SeqCst);
    if guard.as_ref().is_some_and(|p| p.generation != generation) {
        // Inherited through fork(): the sockets are the parent's. Forget them.
        std::mem::forget(guard.take());
    }
    guard.get_or_insert_with(|| Process {
        generation,
        runtime: None,
        stores: Vec::new(),
        lanes: Vec::new(),
    })
}

/// A call on a store, borrowing it for the duration of its future.
pub type StoreCall<'a, T> = Pin<Box<dyn Future<Output = counterfoil_core::Result<T>> + 'a>>;

/// Runs `call` on this process's store for `settings`.
pub fn with_store<T>(
    settings: &Settings,
    call: impl for<'a> FnOnce(&'a mut Store) -> StoreCall<'a, T>,
) -> PhpResult<T> {
    let mut guard = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let process = process(&mut guard);
    if process.runtime.is_none() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| unavailable(format!("cannot start the I/O runtime: {e}")))?;
        process.runtime = Some(runtime);
    }
    let runtime = process.runtime.as_ref().expect("created above");
    let store = entry(&mut process.stores, settings, || {
        Store::lazy(settings.store_config()?).map_err(to_php)
    })?;
    runtime.block_on(call(store)).map_err(to_php)
}

/// Runs `call` on this process's blocking lane for `settings`, or `None`
/// when the settings name PostgreSQL (the store serves those).
fn with_lane<T>(
    settings: &Settings,
    call: impl FnOnce(&mut AllocationLane) -> counterfoil_core::Result<T>,
) -> Option<PhpResult<T>> {
    let engine = Engine::of_url(settings.database_url.as_deref().unwrap_or_default());
    if engine != Engine::MySql {
        return None;
    }
    let mut guard = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let process = process(&mut guard);
    let lane = entry(&mut process.lanes, settings, || {
        AllocationLane::new(settings.store_config()?).map_err(to_php)
    });
    Some(lane.and_then(|lane| call(lane).map_err(to_php)))
}

/// Hands out `count` contiguous numbers of `scope`: on MySQL/MariaDB through
/// the blocking lane, on PostgreSQL through the store.
pub fn allocate(
    settings: &Settings,
    scope: &ScopeKey,
    count: u64,
) -> PhpResult<RangeInclusive<u64>> {
    if let Some(done) = with_lane(settings, |lane| lane.allocate_many(scope, count)) {
        return done;
    }
    let scope = scope.clone();
    with_store(settings, move |s| {
        Box::pin(async move { s.allocate_many(&scope, count).await })
    })
}

/// The series as stored: on MySQL/MariaDB through the blocking lane (so a
/// process that reads and allocates holds one connection), on PostgreSQL
/// through the store.
pub fn current(settings: &Settings, scope: &ScopeKey) -> PhpResult<SeriesState> {
    if let Some(done) = with_lane(settings, |lane| lane.current(scope)) {
        return done;
    }
    let scope = scope.clone();
    with_store(settings, move |s| {
        Box::pin(async move { s.current(&scope).await })
    })
}

/// What this process did for `settings` (store and lane together; zero if
/// unused): the counters, the connection id and node of the allocation
/// connection if open (else the store's), and the pid.
pub fn stats(settings: &Settings) -> Facts {
    let guard = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    let generation = GENERATION.load(Ordering::SeqCst);
    let mine = guard.as_ref().filter(|p| p.generation == generation);
    let store = mine.and_then(|p| p.stores.iter().find(|(s, _)| s == settings));
    let store = store.map(|(_, s)| s);
    let lane = mine.and_then(|p| p.lanes.iter().find(|(s, _)| s == settings));
    let lane = lane.map(|(_, l)| l);
    let a = store.map(|s| s.stats()).unwrap_or_default();
    let b = lane.map(|l| l.stats()).unwrap_or_default();
    let total = StoreStats {
        connects: a.connects + b.connects,
        retries: a.retries + b.retries,
        timeouts: a.timeouts + b.timeouts,
        discarded: a.discarded + b.discarded,
    };
    let connection_id = lane
        .and_then(|l| l.connection_id())
        .or_else(|| store.and_then(|s| s.connection_id()));
    let node = lane
        .and_then(|l| l.node())
        .or_else(|| store.and_then(|s| s.node()));
    let (lane_skips, lane_reason) = lane.map(|l| l.skipped_nodes()).unwrap_or_default();
    let (store_skips, store_reason) = store.map(|s| s.skipped_nodes()).unwrap_or_default();
    Facts {
        stats: total,
        connection_id,
        pid: std::process::id(),
        node,
        skipped: lane_skips + store_skips,
        skip_reason: lane_reason.or(store_reason).map(str::to_owned),
    }
}

/// This process's connection facts for one store's settings.
pub struct Facts {
    /// The counters of the store and the lane together.
    pub stats: StoreStats,
    /// The server's id of the allocation connection, if open.
    pub connection_id: Option<u32>,
    /// This process.
    pub pid: u32,
    /// Which node of the list the connection goes to.
    pub node: Option<usize>,
    /// How many times a node was passed over (down, not ready, read-only, a standby).
    pub skipped: u64,
    /// Why the last one was.
    pub skip_reason: Option<String>,
}
