//! Operation names in `operations = { kind = ["name", …] }`, checked against
//! sdk-core's kind/operation registry ([`rocwasm_core::ops`]).
//!
//! Matching follows the registry: the exact name first, then
//! case-insensitively, then with the kind's name as a prefix (so
//! `HOST_TO_DEVICE` finds `MEMORY_COPY_HOST_TO_DEVICE`). The validated chain
//! keeps the registry's spelling and number.

use rocwasm_core::ops::{self, OperationKind};
use rocwasm_core::BufferTracingKind;

/// The answer for one operation name of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The operation's number and its name as the registry spells it.
    Found(u32, &'static str),
    /// The kind has operations, and this is not one of them.
    Unknown,
    /// The kind has no named operations, so it cannot be filtered by name.
    NoOperations,
}

/// Looks `name` up among the operations of `kind`.
pub fn lookup(kind: BufferTracingKind, name: &str) -> Lookup {
    if kind.operation_names().is_empty() {
        return Lookup::NoOperations;
    }
    match ops::operation_by_name(kind, name) {
        Some(id) => Lookup::Found(id, ops::operation_name(kind, id).unwrap_or("")),
        None => Lookup::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names() {
        assert!(matches!(
            lookup(BufferTracingKind::HipRuntimeApi, "hipMemcpy"),
            Lookup::Found(_, "hipMemcpy")
        ));
        assert!(matches!(
            lookup(BufferTracingKind::MemoryCopy, "host_to_device"),
            Lookup::Found(_, "MEMORY_COPY_HOST_TO_DEVICE")
        ));
        assert_eq!(
            lookup(BufferTracingKind::HipRuntimeApi, "hipMemcopy"),
            Lookup::Unknown
        );
        assert_eq!(
            lookup(BufferTracingKind::RcclApi, "ncclAllReduce"),
            Lookup::NoOperations
        );
    }
}
