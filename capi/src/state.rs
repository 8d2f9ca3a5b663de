//! The engine the C API works on, and which tool is being configured.
//!
//! The tool library hands the run's engine over once
//! ([`crate::registration::configure_tools`]); until then (a tool calling
//! in from its own constructor, or a process without a session) the
//! configuring functions return `ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED`,
//! as the SDK does outside the configure/initialize window.
//!
//! While a tool's `configure` or `initialize` runs, [`current_tool`] names
//! its [`Client`], so the contexts and buffers it creates are its own: its
//! `finalize` comes after its buffers were flushed, and records that reach a
//! finalized tool's buffer are counted, not delivered.

use std::cell::Cell;
use std::sync::{Arc, Mutex, OnceLock};

use rocwasm_core::{Client, Profiler, Status};

static ENGINE: OnceLock<Arc<Profiler>> = OnceLock::new();

/// Binds the C API to the run's engine (once; later calls are ignored).
pub fn bind(profiler: &Arc<Profiler>) {
    let _ = ENGINE.set(profiler.clone());
}

/// The run's engine; CONFIGURATION_LOCKED before the tool library bound one.
pub fn engine() -> Result<&'static Arc<Profiler>, Status> {
    ENGINE.get().ok_or(Status::ConfigurationLocked)
}

/// The engine, if bound.
pub fn engine_if_bound() -> Option<&'static Arc<Profiler>> {
    ENGINE.get()
}

thread_local! {
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Each native tool's [`Client`]: what it owns in the engine.
static OWNERS: Mutex<Vec<Arc<Client>>> = Mutex::new(Vec::new());

/// Registers a tool's client; returns its index for [`with_current`].
pub fn new_owner() -> (usize, Arc<Client>) {
    let mut owners = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    let client = Client::new();
    owners.push(client.clone());
    (owners.len() - 1, client)
}

/// Runs `f` with tool `index` as the one being configured on this thread.
pub fn with_current<R>(index: usize, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|c| c.replace(Some(index)));
    let r = f();
    CURRENT.with(|c| c.set(before));
    r
}

/// The client of the tool being configured on this thread, if any.
pub fn current_tool() -> Option<Arc<Client>> {
    let index = CURRENT.with(Cell::get)?;
    OWNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(index)
        .cloned()
}
