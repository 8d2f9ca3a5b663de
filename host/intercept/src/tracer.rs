//! The one door from interposers into the engine.
//!
//! Every intercepted API call goes through [`api_call`]. When no profiling
//! session is active (before start-up, after shutdown, in a forked child that
//! opted out) it is a single atomic load and the call itself.
//!
//! Two hazards are handled here rather than in every wrapper:
//!
//! - **Calls during thread teardown.** A process's `atexit` handlers (HIP's
//!   `__hip_module_dtor` calls `__hipUnregisterFatBinary`) run after the
//!   exiting thread's thread-locals were destroyed, and the engine's
//!   per-thread correlation stack is one of them. [`ThreadState`] notices that
//!   and such calls are forwarded untraced.
//! - **A panic in the tool.** It must never unwind into C (that aborts the
//!   application). The engine's part runs under `catch_unwind`; the real
//!   function is called exactly once whatever happens.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};

use rocwasm_core::BufferTracingKind;

use crate::args::{ArgList, Render};

/// An API operation: its tracing kind, its name, and its number in the
/// sdk-core registry (looked up by name on first use, then cached).
pub struct ApiOp {
    pub kind: BufferTracingKind,
    pub name: &'static str,
    id: AtomicU32,
}

const UNRESOLVED: u32 = u32::MAX;
const UNKNOWN: u32 = u32::MAX - 1;

impl ApiOp {
    pub const fn new(kind: BufferTracingKind, name: &'static str) -> Self {
        Self {
            kind,
            name,
            id: AtomicU32::new(UNRESOLVED),
        }
    }

    /// An operation whose number is known up front (HSA: the slot number).
    pub const fn with_id(kind: BufferTracingKind, name: &'static str, id: u32) -> Self {
        Self {
            kind,
            name,
            id: AtomicU32::new(id),
        }
    }

    /// The operation number; `None` when the registry does not know the name
    /// (e.g. `__hipGetPCH`, which no SDK table lists).
    #[inline]
    pub fn id(&self) -> Option<u32> {
        match self.id.load(Ordering::Relaxed) {
            UNRESOLVED => {
                let found = crate::session::operation_id(self.kind, self.name);
                self.id.store(found.unwrap_or(UNKNOWN), Ordering::Relaxed);
                found
            }
            UNKNOWN => None,
            id => Some(id),
        }
    }
}

/// Per-thread liveness: `Live` once the thread registered its guard,
/// `Dead` once thread-local destruction began.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ThreadState {
    New,
    Live,
    Dead,
}

struct TeardownGuard;

impl Drop for TeardownGuard {
    fn drop(&mut self) {
        STATE.with(|s| s.set(ThreadState::Dead));
    }
}

thread_local! {
    // `const` and without a destructor: readable even during teardown.
    static STATE: Cell<ThreadState> = const { Cell::new(ThreadState::New) };
    static GUARD: TeardownGuard = const { TeardownGuard };
}

/// True when this thread may enter the engine.
#[inline]
fn thread_usable() -> bool {
    match STATE.with(|s| s.get()) {
        ThreadState::Live => true,
        ThreadState::Dead => false,
        ThreadState::New => {
            // The guard is registered before the engine's first
            // thread-local, so it is destroyed after them (reverse order):
            // by the time `exit()` runs `atexit` handlers, which glibc does
            // after destroying the exiting thread's thread-locals, the state
            // reads Dead. (A panic in the short window in between is caught
            // in `api_call`.)
            let ok = GUARD.try_with(|_| ()).is_ok();
            STATE.with(|s| {
                s.set(if ok {
                    ThreadState::Live
                } else {
                    ThreadState::Dead
                })
            });
            ok
        }
    }
}

/// Runs `call`, tracing it as `op` when a session wants it.
#[inline]
pub fn api_call<R: Render + Copy>(
    op: &'static ApiOp,
    args: &dyn Fn(&mut ArgList),
    call: impl FnOnce() -> R,
) -> R {
    let Some(s) = crate::session::active() else {
        return call();
    };
    if !thread_usable() {
        return call();
    }
    let call = Cell::new(Some(call));
    let result: Cell<Option<R>> = Cell::new(None);
    let traced = catch_unwind(AssertUnwindSafe(|| {
        s.api_call(op, args, || {
            let f = call.take().expect("called once");
            let r = f();
            result.set(Some(r));
            r
        })
    }));
    match traced {
        Ok(r) => r,
        Err(_) => {
            eprintln!(
                "rocwasm: internal error while tracing {}; continuing untraced",
                op.name
            );
            match result.get() {
                Some(r) => r,
                None => (call.take().expect("not called yet"))(),
            }
        }
    }
}
