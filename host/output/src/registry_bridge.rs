//! The one place that reads operation names from `rocwasm_core::registry`
//! (HIP, HSA and marker function names and the async kinds' enumerators, by
//! kind and number).
//!
//! Kept apart so that [`crate::names::OperationNames`] does not depend on the
//! registry's exact shape.

use rocwasm_core::registry;
use rocwasm_core::BufferTracingKind;

use crate::names::OperationNames;

/// Registers every operation name the core registry knows, for every buffer
/// tracing kind.
pub(crate) fn seed(names: &OperationNames) {
    for &kind in BufferTracingKind::ALL {
        for (op, name) in registry::operations(kind) {
            names.register(kind.raw(), op, name);
        }
    }
}
