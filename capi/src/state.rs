//! The engine the C API works on, and which tool is being configured.
//!
//! The tool library hands the run's engine over once
//! ([`crate::registration::configure_tools`]); until then (a tool calling
//! in from its own constructor, or a process without a session) the
//! configuring functions return `ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED`,
//! as the SDK does outside the configure/initialize window.
//!
//! While a tool's `configure` or `initialize` runs, [`current_tool`] names
//! it, so the contexts and buffers it creates are its own: its `finalize`
//! comes after its buffers were flushed, and records that reach a finalized
//! tool's buffer are counted, not delivered.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rocwasm_core::{BufferId, ContextId, Profiler, Status};

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

/// What one tool owns: its contexts and buffers, and whether it has been
/// finalized (its buffers then count what still arrives instead of
/// delivering it).
#[derive(Debug, Default)]
pub struct Owned {
    /// Contexts the tool created.
    pub contexts: Mutex<Vec<ContextId>>,
    /// Buffers the tool created.
    pub buffers: Mutex<Vec<BufferId>>,
    /// Set once the tool's `finalize` has run (or is running).
    pub finalized: AtomicBool,
    /// Records that arrived after `finalized` and were not delivered.
    pub undelivered: AtomicU64,
}

thread_local! {
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
}

static OWNERS: Mutex<Vec<Arc<Owned>>> = Mutex::new(Vec::new());

/// Registers a tool's resource list; returns its index for [`with_current`].
pub fn new_owner() -> (usize, Arc<Owned>) {
    let mut owners = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    let owned = Arc::new(Owned::default());
    owners.push(owned.clone());
    (owners.len() - 1, owned)
}

/// Runs `f` with tool `index` as the one being configured on this thread.
pub fn with_current<R>(index: usize, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|c| c.replace(Some(index)));
    let r = f();
    CURRENT.with(|c| c.set(before));
    r
}

/// The resources of the tool being configured on this thread, if any.
pub fn current_tool() -> Option<Arc<Owned>> {
    let index = CURRENT.with(Cell::get)?;
    OWNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(index)
        .cloned()
}

/// Notes that the current tool created `ctx`.
pub fn owns_context(ctx: ContextId) {
    if let Some(t) = current_tool() {
        t.contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(ctx);
    }
}

/// Notes that the current tool created `buffer`; returns its owner's record
/// (for the buffer's delivery to check `finalized`).
pub fn owns_buffer(buffer: BufferId) -> Option<Arc<Owned>> {
    let t = current_tool()?;
    t.buffers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(buffer);
    Some(t)
}

/// Marks `owned` finalized (true the first time).
pub fn finalize_once(owned: &Owned) -> bool {
    !owned.finalized.swap(true, Ordering::AcqRel)
}
