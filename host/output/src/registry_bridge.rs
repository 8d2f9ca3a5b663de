//! The one place that reads API operation names from `rocwasm_core`'s
//! registry (HIP, HSA, marker, … function names by kind and number).
//!
//! Kept apart so that [`crate::names::OperationNames`] does not depend on the
//! registry's exact shape.

use crate::names::OperationNames;

/// Registers every API operation name the core registry knows.
pub(crate) fn seed(_names: &OperationNames) {
    // Filled in once `rocwasm_core::registry` lands (see the crate README in
    // the final report); until then API names come from recorded traces and
    // unnamed numbers print as `<KIND>_OP_<n>`.
}
