//! The one place that reads operation names from `rocwasm_core::ops`
//! (HIP, HSA and marker function names and the async kinds' enumerators, by
//! kind and number).
//!
//! Kept apart so that [`crate::names::OperationNames`] does not depend on the
//! registry's exact shape; this module does not know the table either: it
//! hands each name to the caller.

use rocwasm_core::ops;
use rocwasm_core::BufferTracingKind;

/// Calls `register(kind, op, name)` for every operation name the core
/// registry knows, for every buffer tracing kind.
pub(crate) fn seed(mut register: impl FnMut(u32, u32, &str)) {
    for &kind in BufferTracingKind::ALL {
        for (op, name) in ops::operations(kind) {
            register(kind.raw(), op, name);
        }
    }
}
