//! Operation names of one run: `(kind, operation)` ↔ name.
//!
//! Batches carry operations as numbers, files carry names. A live run gets its
//! names from the SDK registry of `rocwasm-core`; a replayed trace may name an
//! operation this build does not know (a newer HIP, an RCCL call). Such a name
//! is *registered* under a synthetic number (from [`SYNTHETIC_BASE`] up, per
//! kind) so that nothing is lost: the record keeps flowing through the chain,
//! and every sink prints the original name again.
//!
//! Numbers this table cannot name print as `<KIND>_OP_<n>` and parse back to
//! `n`, so even an unnamed operation survives a write/replay round trip.
//!
//! The table is shared (`&self` methods, interior lock) because a replay
//! reader extends it while sinks and plugins read it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rocwasm_core::BufferTracingKind;

/// First operation number handed out to names the registry does not know.
pub const SYNTHETIC_BASE: u32 = 0x4000_0000;

#[derive(Debug, Default)]
struct Inner {
    by_op: HashMap<(u32, u32), Arc<str>>,
    /// kind → name → op; nested so that lookups by `&str` do not allocate.
    by_name: HashMap<u32, HashMap<Box<str>, u32>>,
    next_synthetic: HashMap<u32, u32>,
}

/// The name table of a run. Cheap to query; see the module docs.
#[derive(Debug, Default)]
pub struct OperationNames {
    inner: RwLock<Inner>,
}

impl OperationNames {
    /// A table with every name this build knows: the core registry's (API
    /// functions and the asynchronous kinds' operations: copy directions,
    /// allocation, scratch, dispatch, runtime initialisation), and `<KIND>_NONE`
    /// for operation 0 of those asynchronous kinds.
    pub fn new() -> Self {
        let names = Self::default();
        for kind in NAMED_NONE {
            names.register(kind.raw(), 0, &format!("{}_NONE", kind.name()));
        }
        crate::registry_bridge::seed(|kind, op, name| names.register(kind, op, name));
        names
    }

    /// An empty table (tests, or callers that seed names themselves).
    pub fn empty() -> Self {
        Self::default()
    }

    /// Records that `op` of `kind` is called `name`. A later registration of the
    /// same number wins; the reverse lookup keeps the first number per name.
    pub fn register(&self, kind: u32, op: u32, name: &str) {
        let mut inner = write(&self.inner);
        inner.by_op.insert((kind, op), Arc::from(name));
        inner
            .by_name
            .entry(kind)
            .or_default()
            .entry(name.into())
            .or_insert(op);
    }

    /// The operation's name, or `<KIND>_OP_<n>` when nobody named it.
    pub fn name(&self, kind: u32, op: u32) -> Arc<str> {
        if let Some(n) = read(&self.inner).by_op.get(&(kind, op)) {
            return n.clone();
        }
        Arc::from(fallback_name(kind, op))
    }

    /// The number of a named operation, if known (including the
    /// `<KIND>_OP_<n>` fallback form).
    pub fn lookup(&self, kind: u32, name: &str) -> Option<u32> {
        if let Some(&op) = read(&self.inner)
            .by_name
            .get(&kind)
            .and_then(|m| m.get(name))
        {
            return Some(op);
        }
        parse_fallback(kind, name)
    }

    /// The number of a named operation, registering a synthetic number for a
    /// name seen for the first time (see the module docs).
    pub fn resolve_or_register(&self, kind: u32, name: &str) -> u32 {
        if let Some(op) = self.lookup(kind, name) {
            return op;
        }
        let mut inner = write(&self.inner);
        // Re-check under the write lock: another reader may have won the race.
        if let Some(&op) = inner.by_name.get(&kind).and_then(|m| m.get(name)) {
            return op;
        }
        let next = inner.next_synthetic.entry(kind).or_insert(SYNTHETIC_BASE);
        let op = *next;
        *next += 1;
        inner.by_op.insert((kind, op), Arc::from(name));
        inner
            .by_name
            .entry(kind)
            .or_default()
            .insert(name.into(), op);
        op
    }

    /// Every `(operation, name)` of `kind`, sorted by operation number.
    pub fn operations(&self, kind: u32) -> Vec<(u32, Arc<str>)> {
        let inner = read(&self.inner);
        let mut ops: Vec<_> = inner
            .by_op
            .iter()
            .filter(|((k, _), _)| *k == kind)
            .map(|((_, op), name)| (*op, name.clone()))
            .collect();
        ops.sort_by_key(|(op, _)| *op);
        ops
    }
}

/// The SDK name of a kind number, or `KIND_<n>` for a number this build
/// lacks. Borrowed for every known kind: writers ask once per record.
pub fn kind_name(kind: u32) -> Cow<'static, str> {
    match BufferTracingKind::from_raw(kind) {
        Some(k) => Cow::Borrowed(k.name()),
        None => Cow::Owned(format!("KIND_{kind}")),
    }
}

fn fallback_name(kind: u32, op: u32) -> String {
    format!("{}_OP_{op}", kind_name(kind))
}

fn parse_fallback(kind: u32, name: &str) -> Option<u32> {
    let prefix = format!("{}_OP_", kind_name(kind));
    name.strip_prefix(&prefix)?.parse().ok()
}

/// The kinds whose operations are a small fixed enum
/// (`rocprofiler_*_operation_t`) name their operation 0 too:
/// `<KIND>_NONE`. Their other names, like every kind's, come from the core
/// registry.
const NAMED_NONE: [BufferTracingKind; 5] = [
    BufferTracingKind::KernelDispatch,
    BufferTracingKind::MemoryCopy,
    BufferTracingKind::MemoryAllocation,
    BufferTracingKind::ScratchMemory,
    BufferTracingKind::RuntimeInitialization,
];

// A poisoned lock means a panic while inserting into a map; the map is still
// usable, so recover the guard instead of propagating the panic.
fn read(l: &RwLock<Inner>) -> std::sync::RwLockReadGuard<'_, Inner> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write(l: &RwLock<Inner>) -> std::sync::RwLockWriteGuard<'_, Inner> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIP: u32 = BufferTracingKind::HipRuntimeApi as u32;

    #[test]
    fn builtin_names_round_trip() {
        let n = OperationNames::new();
        let copy = BufferTracingKind::MemoryCopy as u32;
        assert_eq!(&*n.name(copy, 2), "MEMORY_COPY_HOST_TO_DEVICE");
        assert_eq!(n.lookup(copy, "MEMORY_COPY_DEVICE_TO_HOST"), Some(3));
        assert_eq!(&*n.name(copy, 0), "MEMORY_COPY_NONE");
        let scratch = BufferTracingKind::ScratchMemory as u32;
        assert_eq!(&*n.name(scratch, 3), "SCRATCH_MEMORY_ASYNC_RECLAIM");
        assert_eq!(n.lookup(scratch, "SCRATCH_MEMORY_NONE"), Some(0));
    }

    #[test]
    fn api_names_come_from_the_core_registry() {
        let n = OperationNames::new();
        let op = n
            .lookup(HIP, "hipLaunchKernel")
            .expect("registry names HIP functions");
        assert!(op > 0 && op < SYNTHETIC_BASE);
        assert_eq!(&*n.name(HIP, op), "hipLaunchKernel");
    }

    #[test]
    fn unknown_names_get_stable_synthetic_numbers() {
        let n = OperationNames::empty();
        let a = n.resolve_or_register(HIP, "hipFutureCall");
        let b = n.resolve_or_register(HIP, "hipOtherCall");
        assert!(a >= SYNTHETIC_BASE && b == a + 1);
        assert_eq!(n.resolve_or_register(HIP, "hipFutureCall"), a);
        assert_eq!(&*n.name(HIP, a), "hipFutureCall");
    }

    #[test]
    fn unnamed_numbers_survive_a_round_trip() {
        let n = OperationNames::empty();
        let name = n.name(HIP, 4242);
        assert_eq!(&*name, "HIP_RUNTIME_API_OP_4242");
        assert_eq!(n.lookup(HIP, &name), Some(4242));
    }
}
