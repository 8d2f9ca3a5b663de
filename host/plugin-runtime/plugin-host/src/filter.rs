//! Per-stage filters: a stage sees only the buffer kinds, and of those the
//! operations, it asked for.
//!
//! Every table of a batch holds one kind, except the API table, whose rows
//! carry their kind (HIP, HSA, marker …) in a column, and the counter
//! samples (each its dispatch's); those are filtered row by row, the others
//! as a whole. [`KindFilter`] does that without
//! copying when a stage sees everything. An [`OpFilter`] narrows kinds further
//! to some operations (API functions, copy directions, allocation verbs); a
//! [`StageView`] is the two together, what one stage sees of a batch.

use std::collections::{BTreeMap, BTreeSet};

use rocwasm_core::{Batch, BufferTracingKind as K, TableRow};

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
    pub fn select(&self, batch: &Batch) -> Option<Batch> {
        if self.is_all() || self.covers(batch) {
            return None;
        }
        Some(self.partition(batch.clone()).0)
    }

    /// Splits `batch` into what this stage sees and what passes it by
    /// untouched (for transforms: a kernel filter must not eat API calls).
    pub fn split(&self, batch: Batch) -> (Batch, Batch) {
        if self.is_all() {
            return (batch, Batch::default());
        }
        self.partition(batch)
    }

    /// Records of `batch` this stage would see.
    pub fn count(&self, batch: &Batch) -> u64 {
        let mut n = 0u64;
        // A table of one kind counts whole; the others (API calls, counter
        // samples) row by row, by each row's kind.
        macro_rules! tables {
            ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {$(
                match <rocwasm_core::$row as TableRow>::KIND {
                    Some(kind) => {
                        if self.accepts(kind) {
                            n += batch.$field.len() as u64;
                        }
                    }
                    None => {
                        n += batch.$field.rows().filter(|r| self.accepts_raw(r.kind())).count() as u64;
                    }
                }
            )*};
        }
        rocwasm_core::batch_tables!(tables);
        n
    }

    /// True when every record of `batch` is accepted (no copy needed).
    fn covers(&self, batch: &Batch) -> bool {
        self.count(batch) == batch.len() as u64
    }

    /// The records this stage sees, and the others: a table of one kind
    /// whole, the others row by row.
    fn partition(&self, mut all: Batch) -> (Batch, Batch) {
        let mut seen = Batch::default();
        let mut rest = Batch::default();
        macro_rules! tables {
            ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {$(
                let t = std::mem::take(&mut all.$field);
                match <rocwasm_core::$row as TableRow>::KIND {
                    Some(kind) if self.accepts(kind) => seen.$field = t,
                    Some(_) => rest.$field = t,
                    None => {
                        for r in t.rows() {
                            if self.accepts_raw(r.kind()) {
                                seen.$field.push(r)
                            } else {
                                rest.$field.push(r)
                            }
                        }
                    }
                }
            )*};
        }
        rocwasm_core::batch_tables!(tables);
        (seen, rest)
    }
}

/// Re-joins a transform's output with the records that bypassed it. The
/// bypassing API rows follow the transform's rows; other tables never mix.
pub fn merge(mut out: Batch, mut rest: Batch) -> Batch {
    out.append(&mut rest);
    out
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
    pub fn select(&self, batch: &Batch) -> Option<Batch> {
        if self.ops.is_all() {
            return self.kinds.select(batch);
        }
        Some(self.partition(batch.clone()).0)
    }

    /// As [`KindFilter::split`], with the operation filter applied.
    pub fn split(&self, batch: Batch) -> (Batch, Batch) {
        if self.ops.is_all() {
            return self.kinds.split(batch);
        }
        self.partition(batch)
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

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{ApiCall, KernelDispatch, MemoryCopy};

    fn sample() -> Batch {
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
        // A kernel's counter sample goes with the kernel dispatches.
        b.counter_samples.push(rocwasm_core::CounterSample {
            counter_id: 1,
            ..Default::default()
        });
        b
    }

    #[test]
    fn select_keeps_only_requested_kinds() {
        let f = KindFilter::only([K::KernelDispatch, K::HipRuntimeApi]);
        let s = f.select(&sample()).expect("a partial view");
        assert_eq!(s.api_calls.correlation_id, vec![1]);
        assert_eq!(s.kernel_dispatches.correlation_id, vec![1]);
        assert!(s.memory_copies.bytes.is_empty());
        assert_eq!(s.counter_samples.counter_id, vec![1]);
        assert_eq!(f.count(&sample()), 3);
        let copies = KindFilter::only([K::MemoryCopy]).select(&sample()).unwrap();
        assert!(copies.counter_samples.is_empty());
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
        let seen = view.select(&b.clone()).unwrap();
        assert_eq!(seen.api_calls.correlation_id, vec![1, 3, 4]);
        assert_eq!(seen.memory_copies.operation, vec![3]);

        // Kinds and operations together; what a transform does not see
        // passes it by.
        let view = StageView::new(KindFilter::only([K::HipRuntimeApi]), ops);
        let (seen, rest) = view.split(b);
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
        assert_eq!(seen.len(), 2);
        assert_eq!(rest.len(), 3);
        let back = merge(seen, rest);
        assert_eq!(back.len(), 5);
    }
}
