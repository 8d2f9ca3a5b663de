//! The one door from interposers into the engine.
//!
//! Every intercepted API call goes through [`api_call`]. When no profiling
//! session is active (before start-up, after shutdown, in a forked child that
//! opted out) it is a single atomic load and the call itself.
//!
//! Two hazards are handled rather than in every wrapper:
//!
//! - **Calls during thread teardown.** A process's `atexit` handlers (HIP's
//!   `__hip_module_dtor` calls `__hipUnregisterFatBinary`) run after the
//!   exiting thread's thread-locals were destroyed, and the engine's
//!   per-thread correlation stack is one of them. The engine notices that
//!   when it enters the call (`Profiler::trace_api`) and forwards such calls
//!   untraced, before anything else that keeps per-thread state runs.
//! - **A panic in the tool.** It must never unwind into C (that aborts the
//!   application). The engine's part runs under `catch_unwind`; the real
//!   function is called exactly once whatever happens.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use rocwasm_core::{BufferTracingKind, Domain};

use crate::call_arguments::{ArgList, Render};

/// An API operation: its tracing kind, its name, and its domain and number
/// in the sdk-core registry (looked up by name on first use, then cached).
pub struct ApiOp {
    /// The tracing kind (`HIP_RUNTIME_API`, `HSA_CORE_API`, `MARKER_CORE_API`, …).
    pub kind: BufferTracingKind,
    /// The C function's name, as the registry lists it (`hipMalloc`).
    pub name: &'static str,
    /// The operation number when known up front (HSA: the slot number).
    known_id: Option<u32>,
    /// `domain index << 32 | operation`, or one of the two markers below.
    resolved: AtomicU64,
}

const UNRESOLVED: u64 = u64::MAX;
const UNKNOWN: u64 = u64::MAX - 1;

impl ApiOp {
    /// An operation whose number is looked up by `name` on first use.
    pub const fn new(kind: BufferTracingKind, name: &'static str) -> Self {
        Self {
            kind,
            name,
            known_id: None,
            resolved: AtomicU64::new(UNRESOLVED),
        }
    }

    /// An operation whose number is known up front (HSA: the slot number).
    pub const fn with_id(kind: BufferTracingKind, name: &'static str, id: u32) -> Self {
        Self {
            kind,
            name,
            known_id: Some(id),
            resolved: AtomicU64::new(UNRESOLVED),
        }
    }

    /// The operation's domain and number; `None` when the registry does not
    /// know the name (e.g. `__hipGetPCH`, which no SDK table lists).
    #[inline]
    pub fn resolve(&self) -> Option<(Domain, u32)> {
        match self.resolved.load(Ordering::Relaxed) {
            UNRESOLVED => self.resolve_slow(),
            UNKNOWN => None,
            v => Some((Domain::ALL[(v >> 32) as usize], v as u32)),
        }
    }

    /// The operation number (see [`ApiOp::resolve`]).
    #[inline]
    pub fn id(&self) -> Option<u32> {
        self.resolve().map(|(_, id)| id)
    }

    #[cold]
    fn resolve_slow(&self) -> Option<(Domain, u32)> {
        let found = Domain::from_buffer_kind(self.kind).and_then(|domain| {
            let id = self
                .known_id
                .or_else(|| rocwasm_core::operation_by_name(self.kind, self.name))?;
            Some((domain, id))
        });
        let index = |d: Domain| Domain::ALL.iter().position(|&x| x == d);
        let packed = found
            .and_then(|(d, id)| Some(((index(d)? as u64) << 32) | id as u64))
            .unwrap_or(UNKNOWN);
        self.resolved.store(packed, Ordering::Relaxed);
        found.filter(|_| packed != UNKNOWN)
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
    let Some((domain, id)) = op.resolve() else {
        return call();
    };
    let call = Cell::new(Some(call));
    let result: Cell<Option<R>> = Cell::new(None);
    let traced = catch_unwind(AssertUnwindSafe(|| {
        s.api_call(domain, id, args, || {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_resolve_to_their_domain_and_number() {
        static MALLOC: ApiOp = ApiOp::new(BufferTracingKind::HipRuntimeApi, "hipMalloc");
        let (domain, id) = MALLOC.resolve().expect("hipMalloc is in the registry");
        assert_eq!(domain, Domain::HipRuntimeApi);
        assert_eq!(
            rocwasm_core::operation_name(BufferTracingKind::HipRuntimeApi, id),
            Some("hipMalloc")
        );
        assert_eq!(MALLOC.resolve(), Some((domain, id)), "cached");

        static SLOT: ApiOp = ApiOp::with_id(BufferTracingKind::HsaCoreApi, "hsa_queue_create", 8);
        assert_eq!(SLOT.resolve(), Some((Domain::HsaCoreApi, 8)));

        static NONE: ApiOp = ApiOp::new(BufferTracingKind::HipRuntimeApi, "__hipGetPCH");
        assert_eq!(NONE.resolve(), None);
        assert_eq!(NONE.resolve(), None, "cached as unknown");
    }
}
