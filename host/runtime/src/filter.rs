//! Per-stage kind filters: a stage sees only the buffer kinds it asked for.
//!
//! Every table of a batch holds one kind, except the API table, whose rows
//! carry their kind (HIP, HSA, marker …) in a column; that table is filtered
//! row by row, the others as a whole.

use std::collections::BTreeSet;

use rocwasm_core::{ApiCallColumns, Batch, BufferTracingKind as K};

use crate::bindings::types as wit;
use crate::convert::{batch_from_wit, batch_to_wit};

/// A set of buffer kinds; empty means every kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KindFilter(BTreeSet<K>);

impl KindFilter {
    /// Accepts every kind.
    pub fn all() -> Self {
        KindFilter(BTreeSet::new())
    }

    /// Accepts exactly these kinds (an empty list accepts every kind).
    pub fn only(kinds: impl IntoIterator<Item = K>) -> Self {
        KindFilter(kinds.into_iter().collect())
    }

    pub fn is_all(&self) -> bool {
        self.0.is_empty()
    }

    pub fn accepts(&self, kind: K) -> bool {
        self.0.is_empty() || self.0.contains(&kind)
    }

    fn accepts_raw(&self, raw: u32) -> bool {
        self.0.is_empty() || K::from_raw(raw).is_some_and(|k| self.0.contains(&k))
    }

    /// The part of `batch` this stage may see, or `None` when that is all of
    /// it (so the caller passes the original without copying).
    pub fn select(&self, batch: &wit::Batch) -> Option<wit::Batch> {
        if self.is_all() || self.covers(batch) {
            return None;
        }
        let mut out = wit_empty();
        let api = &batch.api_calls;
        if api.kind.iter().any(|k| self.accepts_raw(*k)) {
            let rows = api_to_core(api.clone());
            let mut kept = Batch::default();
            kept.api_calls = rows.rows().filter(|r| self.accepts_raw(r.kind)).collect();
            out.api_calls = batch_to_wit(kept).api_calls;
        }
        macro_rules! table {
            ($t:ident, $kind:expr) => {
                if self.accepts($kind) {
                    out.$t = batch.$t.clone();
                }
            };
        }
        table!(kernel_dispatches, K::KernelDispatch);
        table!(memory_copies, K::MemoryCopy);
        table!(memory_allocations, K::MemoryAllocation);
        table!(scratch_memory, K::ScratchMemory);
        table!(retirements, K::CorrelationIdRetirement);
        table!(runtime_initializations, K::RuntimeInitialization);
        Some(out)
    }

    /// Splits `batch` into what this stage sees and what passes it by
    /// untouched (for transforms: a kernel filter must not eat API calls).
    pub fn split(&self, batch: wit::Batch) -> (wit::Batch, Batch) {
        if self.is_all() {
            return (batch, Batch::default());
        }
        let mut all = batch_from_wit(batch);
        let mut seen = Batch::default();
        let mut rest = Batch::default();
        let api = std::mem::take(&mut all.api_calls);
        for r in api.rows() {
            if self.accepts_raw(r.kind) {
                seen.api_calls.push(r)
            } else {
                rest.api_calls.push(r)
            }
        }
        macro_rules! table {
            ($t:ident, $kind:expr) => {
                let t = std::mem::take(&mut all.$t);
                if self.accepts($kind) {
                    seen.$t = t
                } else {
                    rest.$t = t
                }
            };
        }
        table!(kernel_dispatches, K::KernelDispatch);
        table!(memory_copies, K::MemoryCopy);
        table!(memory_allocations, K::MemoryAllocation);
        table!(scratch_memory, K::ScratchMemory);
        table!(retirements, K::CorrelationIdRetirement);
        table!(runtime_initializations, K::RuntimeInitialization);
        (batch_to_wit(seen), rest)
    }

    /// Records of `batch` this stage would see.
    pub fn count(&self, batch: &wit::Batch) -> u64 {
        let mut n = batch
            .api_calls
            .kind
            .iter()
            .filter(|k| self.accepts_raw(**k))
            .count();
        let mut add = |kind: K, len: usize| {
            if self.accepts(kind) {
                n += len
            }
        };
        add(
            K::KernelDispatch,
            batch.kernel_dispatches.correlation_id.len(),
        );
        add(K::MemoryCopy, batch.memory_copies.operation.len());
        add(
            K::MemoryAllocation,
            batch.memory_allocations.operation.len(),
        );
        add(K::ScratchMemory, batch.scratch_memory.operation.len());
        add(
            K::CorrelationIdRetirement,
            batch.retirements.timestamp.len(),
        );
        add(
            K::RuntimeInitialization,
            batch.runtime_initializations.operation.len(),
        );
        n as u64
    }

    /// True when every record of `batch` is accepted (no copy needed).
    fn covers(&self, batch: &wit::Batch) -> bool {
        self.count(batch) == crate::convert::wit_len(batch) as u64
    }
}

/// Re-joins a transform's output with the records that bypassed it. The
/// bypassing API rows follow the transform's rows; other tables never mix.
pub fn merge(out: wit::Batch, mut rest: Batch) -> wit::Batch {
    if rest.is_empty() {
        return out;
    }
    let mut out = batch_from_wit(out);
    out.append(&mut rest);
    batch_to_wit(out)
}

fn api_to_core(t: wit::ApiCallColumns) -> ApiCallColumns {
    let mut b = wit_empty();
    b.api_calls = t;
    batch_from_wit(b).api_calls
}

fn wit_empty() -> wit::Batch {
    crate::convert::empty_batch()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{ApiCall, KernelDispatch, MemoryCopy};

    fn sample() -> wit::Batch {
        let mut b = Batch::default();
        b.api_calls.push(ApiCall {
            kind: K::HipRuntimeApi as u32,
            correlation_id: 1,
            ..Default::default()
        });
        b.api_calls.push(ApiCall {
            kind: K::HsaCoreApi as u32,
            correlation_id: 2,
            ..Default::default()
        });
        b.kernel_dispatches.push(KernelDispatch {
            correlation_id: 1,
            ..Default::default()
        });
        b.memory_copies.push(MemoryCopy {
            bytes: 9,
            ..Default::default()
        });
        batch_to_wit(b)
    }

    #[test]
    fn select_keeps_only_requested_kinds() {
        let f = KindFilter::only([K::KernelDispatch, K::HipRuntimeApi]);
        let s = f.select(&sample()).expect("a partial view");
        assert_eq!(s.api_calls.correlation_id, vec![1]);
        assert_eq!(s.kernel_dispatches.correlation_id, vec![1]);
        assert!(s.memory_copies.bytes.is_empty());
        assert_eq!(f.count(&sample()), 2);
        assert!(KindFilter::all().select(&sample()).is_none());
    }

    #[test]
    fn split_and_merge_lose_nothing() {
        let f = KindFilter::only([K::KernelDispatch]);
        let (seen, rest) = f.split(sample());
        assert_eq!(crate::convert::wit_len(&seen), 1);
        assert_eq!(rest.len(), 3);
        let back = merge(seen, rest);
        assert_eq!(crate::convert::wit_len(&back), 4);
    }
}
