//! Per-stage filters: a stage sees only the buffer kinds, and of those the
//! operations, it asked for.
//!
//! Every table of a batch holds one kind, except the API table, whose rows
//! carry their kind (HIP, HSA, marker …) in a column; that table is filtered
//! row by row, the others as a whole. [`KindFilter`] does that without
//! copying when a stage sees everything. An [`OpFilter`] narrows kinds further
//! to some operations (API functions, copy directions, allocation verbs); a
//! [`StageView`] is the two together, what one stage sees of a batch.

use std::collections::{BTreeMap, BTreeSet};

use rocwasm_core::{ApiCallColumns, Batch, BufferTracingKind as K, TableRow};

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

    /// True when the filter accepts every kind (nothing to filter).
    pub fn is_all(&self) -> bool {
        self.0.is_empty()
    }

    /// True when records of `kind` pass.
    pub fn accepts(&self, kind: K) -> bool {
        self.0.is_empty() || self.0.contains(&kind)
    }

    /// The kinds both filters accept (`all` is the neutral element).
    pub fn intersect(&self, other: &KindFilter) -> KindFilter {
        match (self.is_all(), other.is_all()) {
            (true, _) => other.clone(),
            (_, true) => self.clone(),
            _ => KindFilter(self.0.intersection(&other.0).copied().collect()),
        }
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
            let kept = Batch {
                api_calls: rows.rows().filter(|r| self.accepts_raw(r.kind)).collect(),
                ..Batch::default()
            };
            out.api_calls = batch_to_wit(kept).api_calls;
        }
        // Every other table holds one kind (the WIT batch has the same
        // tables, under the same names).
        macro_rules! tables {
            ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {$(
                if <rocwasm_core::$row as TableRow>::KIND.is_some_and(|k| self.accepts(k)) {
                    out.$field = batch.$field.clone();
                }
            )*};
        }
        crate::convert::wit_batch_tables!(tables);
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
        macro_rules! tables {
            ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {$(
                if let Some(kind) = <rocwasm_core::$row as TableRow>::KIND {
                    let t = std::mem::take(&mut all.$field);
                    if self.accepts(kind) {
                        seen.$field = t
                    } else {
                        rest.$field = t
                    }
                }
            )*};
        }
        crate::convert::wit_batch_tables!(tables);
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

/// Per-kind operation filters. A kind absent here (or given an empty list)
/// passes every operation, as an empty operation list does in the SDK.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpFilter(BTreeMap<K, BTreeSet<u32>>);

impl OpFilter {
    /// Every operation of every kind.
    pub fn all() -> Self {
        OpFilter::default()
    }

    /// From a stage's `operations` map; empty lists mean "all of that kind".
    pub fn new(ops: &BTreeMap<K, Vec<u32>>) -> Self {
        OpFilter(
            ops.iter()
                .filter(|(_, list)| !list.is_empty())
                .map(|(k, list)| (*k, list.iter().copied().collect()))
                .collect(),
        )
    }

    /// True when no kind is narrowed to some operations.
    pub fn is_all(&self) -> bool {
        self.0.is_empty()
    }

    /// True when operation `op` of `kind` passes: always for a kind without
    /// a list.
    pub fn allows(&self, kind: K, op: u32) -> bool {
        self.0.get(&kind).is_none_or(|ops| ops.contains(&op))
    }

    fn allows_raw(&self, raw: u32, op: u32) -> bool {
        K::from_raw(raw).is_none_or(|k| self.allows(k, op))
    }
}

/// What one stage sees of a batch: its kinds, and of those its operations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StageView {
    /// The kinds the stage sees.
    pub kinds: KindFilter,
    /// Of those kinds, the operations it sees.
    pub ops: OpFilter,
}

impl StageView {
    /// A stage seeing `ops` of `kinds`.
    pub fn new(kinds: KindFilter, ops: OpFilter) -> Self {
        StageView { kinds, ops }
    }

    /// As [`KindFilter::select`], with the operation filter applied.
    pub fn select(&self, batch: &wit::Batch) -> Option<wit::Batch> {
        if self.ops.is_all() {
            return self.kinds.select(batch);
        }
        let (seen, _) = self.partition(batch_from_wit(batch.clone()));
        Some(batch_to_wit(seen))
    }

    /// As [`KindFilter::split`], with the operation filter applied.
    pub fn split(&self, batch: wit::Batch) -> (wit::Batch, Batch) {
        if self.ops.is_all() {
            return self.kinds.split(batch);
        }
        let (seen, rest) = self.partition(batch_from_wit(batch));
        (batch_to_wit(seen), rest)
    }

    /// Rows this stage sees, and the others, each table in its order.
    fn partition(&self, mut all: Batch) -> (Batch, Batch) {
        let mut seen = Batch::default();
        let mut rest = Batch::default();
        let (kinds, ops) = (&self.kinds, &self.ops);
        // Row by row, each with its kind and operation ([`TableRow`]).
        macro_rules! tables {
            ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {$(
                for r in std::mem::take(&mut all.$field).rows() {
                    let (kind, op) = (r.kind(), r.operation());
                    if kinds.accepts_raw(kind) && ops.allows_raw(kind, op) {
                        seen.$field.push(r)
                    } else {
                        rest.$field.push(r)
                    }
                }
            )*};
        }
        rocwasm_core::batch_tables!(tables);
        (seen, rest)
    }
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
    fn operation_filters_narrow_rows_within_their_kinds() {
        let mut b = Batch::default();
        for (op, id) in [(5, 1), (6, 2), (5, 3)] {
            b.api_calls.push(ApiCall {
                kind: K::HipRuntimeApi as u32,
                operation: op,
                correlation_id: id,
                ..Default::default()
            });
        }
        b.api_calls.push(ApiCall {
            kind: K::HsaCoreApi as u32,
            operation: 6,
            correlation_id: 4,
            ..Default::default()
        });
        for dir in [2, 3, 2] {
            b.memory_copies.push(MemoryCopy {
                operation: dir,
                ..Default::default()
            });
        }
        let ops = OpFilter::new(&BTreeMap::from([
            (K::HipRuntimeApi, vec![5]),
            (K::MemoryCopy, vec![3]),
            (K::KernelDispatch, vec![]),
        ]));
        assert!(ops.allows(K::HsaCoreApi, 99) && ops.allows(K::KernelDispatch, 1));
        let view = StageView::new(KindFilter::all(), ops.clone());
        let seen = view.select(&batch_to_wit(b.clone())).unwrap();
        assert_eq!(seen.api_calls.correlation_id, vec![1, 3, 4]);
        assert_eq!(seen.memory_copies.operation, vec![3]);

        // Kinds and operations together; what a transform does not see
        // passes it by.
        let view = StageView::new(KindFilter::only([K::HipRuntimeApi]), ops);
        let (seen, rest) = view.split(batch_to_wit(b));
        assert_eq!(seen.api_calls.correlation_id, vec![1, 3]);
        assert!(seen.memory_copies.operation.is_empty());
        assert_eq!(rest.api_calls.correlation_id, vec![2, 4]);
        assert_eq!(rest.memory_copies.len(), 3);
    }

    #[test]
    fn intersect_treats_all_as_neutral() {
        let a = KindFilter::only([K::KernelDispatch, K::MemoryCopy]);
        let b = KindFilter::only([K::MemoryCopy, K::HipRuntimeApi]);
        assert_eq!(a.intersect(&b), KindFilter::only([K::MemoryCopy]));
        assert_eq!(KindFilter::all().intersect(&b), b);
        assert_eq!(a.intersect(&KindFilter::all()), a);
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
