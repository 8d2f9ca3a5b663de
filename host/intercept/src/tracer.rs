//! The one door from interposers into the engine.
//!
//! Every intercepted API call goes through [`api_call`]. When no profiling
//! session is active (before start-up, after shutdown, in a forked child that
//! opted out, or in the tool's own threads) it is a single atomic load and the
//! call itself.

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

impl ApiOp {
    pub const fn new(kind: BufferTracingKind, name: &'static str) -> Self {
        Self {
            kind,
            name,
            id: AtomicU32::new(UNRESOLVED),
        }
    }

    /// The operation number; `None` when the registry does not know the name.
    #[inline]
    pub fn id(&self) -> Option<u32> {
        let id = self.id.load(Ordering::Relaxed);
        if id != UNRESOLVED {
            return Some(id);
        }
        let found = crate::session::operation_id(self.kind, self.name)?;
        self.id.store(found, Ordering::Relaxed);
        Some(found)
    }
}

/// Runs `call`, tracing it as `op` when a session wants it.
#[inline]
pub fn api_call<R: Render>(
    op: &'static ApiOp,
    args: &dyn Fn(&mut ArgList),
    call: impl FnOnce() -> R,
) -> R {
    match crate::session::active() {
        None => call(),
        Some(s) => s.api_call(op, args, call),
    }
}
