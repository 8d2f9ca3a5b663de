//! Operation names in `operations = { kind = ["name", …] }`, checked against
//! sdk-core's kind/operation registry.

use rocwasm_core::BufferTracingKind;

/// The answer for one operation name of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The registry knows the operation: its number.
    Found(u32),
    /// The registry knows the kind's operations and this is not one of them.
    Unknown,
    /// No operation list for this kind is available; the name is kept as
    /// written and matched by the engine at run time.
    Unchecked,
}

/// Looks `name` up among the operations of `kind` (case-sensitive: API
/// function names are).
pub fn lookup(kind: BufferTracingKind, name: &str) -> Lookup {
    // sdk-core's registry (`sdk-core/src/registry.rs`) is not in the tree yet;
    // until it is, operation names are carried unchecked.
    let _ = (kind, name);
    Lookup::Unchecked
}
