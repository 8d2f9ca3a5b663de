//! Many [`Series`] at once, for the per-record loop of an analysis:
//! [`KeyedSums`] by any small key, [`IdSums`] by `u64` id.
//!
//! Both keep keys in first-seen order and turn into a [`StatsTable`] by
//! name at the end ([`KeyedSums::to_table`], [`IdSums::to_table`]), so a
//! plugin resolves names once per key instead of once per record.

use std::collections::HashMap;
use std::hash::Hash;

use crate::hash::FastHash;
use crate::series::Series;
use crate::table::StatsTable;

/// A [`Series`] per key (`(kind, operation)`, …).
///
/// Records of one key usually come in runs (the same kernel launched in a
/// loop), so the last key's slot is remembered and a hash lookup happens only
/// when the key changes.
///
/// ```
/// use rocwasm_stats::KeyedSums;
/// let mut by_op = KeyedSums::new();
/// by_op.add_many(&[(5, 1), (5, 1), (5, 2)], [10, 30, 60]);
/// let table = by_op.to_table(|(kind, op)| format!("{kind}.{op}"));
/// assert_eq!(table.get("5.1").unwrap().total(), 40);
/// ```
#[derive(Debug, Clone)]
pub struct KeyedSums<K> {
    slots: HashMap<K, usize, FastHash>,
    sums: Vec<(K, Series)>,
    last: Option<(K, usize)>,
}

impl<K> Default for KeyedSums<K> {
    fn default() -> Self {
        Self {
            slots: HashMap::default(),
            sums: Vec::new(),
            last: None,
        }
    }
}

impl<K: Hash + Eq + Copy> KeyedSums<K> {
    /// No keys yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds sample `x` to `key`'s series.
    #[inline]
    pub fn add(&mut self, key: K, x: u64) {
        self.slot(key).add(x);
    }

    /// Adds `samples[i]` to `keys[i]` for every `i` (the shorter input
    /// decides). Faster than [`KeyedSums::add`] per sample: a run of equal
    /// keys is summed into a local series and folded into the table once.
    pub fn add_many(&mut self, keys: &[K], samples: impl IntoIterator<Item = u64>) {
        let mut pairs = keys.iter().copied().zip(samples);
        let Some((mut key, first)) = pairs.next() else {
            return;
        };
        let mut run = Series::new();
        run.add(first);
        for (k, x) in pairs {
            if k != key {
                self.slot(key).merge(&run);
                key = k;
                run = Series::new();
            }
            run.add(x);
        }
        self.slot(key).merge(&run);
    }

    fn slot(&mut self, key: K) -> &mut Series {
        let slot = match self.last {
            Some((last, slot)) if last == key => slot,
            _ => {
                let next = self.sums.len();
                let slot = *self.slots.entry(key).or_insert(next);
                if slot == next {
                    self.sums.push((key, Series::new()));
                }
                self.last = Some((key, slot));
                slot
            }
        };
        &mut self.sums[slot].1
    }

    /// Every key with its series, in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &Series)> + '_ {
        self.sums.iter().map(|(k, s)| (*k, s))
    }

    /// Samples across all keys.
    pub fn count(&self) -> u64 {
        self.sums.iter().map(|(_, s)| s.count()).sum()
    }

    /// Distinct keys.
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// True before the first sample.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// A [`StatsTable`] by `name(key)`; keys sharing a name are merged.
    pub fn to_table(&self, mut name: impl FnMut(K) -> String) -> StatsTable {
        let mut table = StatsTable::new();
        for (key, series) in self.iter() {
            table.merge(name(key), series);
        }
        table
    }
}

/// A [`Series`] per `u64` id (kernel ids, agent ids, …): the per-record loop
/// of an analysis, made as cheap as it gets.
///
/// Ids that the profiler hands out from counters are small, so an id below
/// [`IdSums::DENSE_LIMIT`] indexes a table directly (one load, no hashing,
/// no matter how ids interleave); larger ids go to a hash map with a
/// multiplicative hash. Ids keep first-seen order, and [`IdSums::ids`] lets a
/// plugin resolve names once per *new* id instead of once per record.
///
/// ```
/// use rocwasm_stats::IdSums;
/// let mut by_kernel = IdSums::new();
/// by_kernel.add_durations(&[3, 4, 3], &[0, 0, 10], &[5, 7, 30]);
/// assert_eq!(by_kernel.ids(), &[3, 4]);
/// assert_eq!(by_kernel.get(3).unwrap().total(), 25);
/// ```
///
/// Per sample, the work is [`Series::add`]: three stores in the common case
/// (the count and the low words of Σx and Σx²), min and max only when they
/// change.
#[derive(Debug, Clone, Default)]
pub struct IdSums {
    /// `dense[id]` = slot + 1 for small ids (0: not seen yet).
    dense: Vec<u32>,
    sparse: HashMap<u64, u32, FastHash>,
    ids: Vec<u64>,
    series: Vec<Series>,
}

impl IdSums {
    /// Ids below this index a table (4 bytes per id up to the largest seen).
    pub const DENSE_LIMIT: u64 = 1 << 16;

    /// No ids yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds sample `x` to `id`'s series.
    #[inline]
    pub fn add(&mut self, id: u64, x: u64) {
        let slot = self.slot(id);
        self.series[slot].add(x);
    }

    /// Adds `end[i] - start[i]` (0 when reversed) to `ids[i]`, for every `i`
    /// of the shortest input: the kernel-timing loop over a batch's columns.
    pub fn add_durations(&mut self, ids: &[u64], start: &[u64], end: &[u64]) {
        let n = ids.len().min(start.len()).min(end.len());
        let (ids, start, end) = (&ids[..n], &start[..n], &end[..n]);
        let mut i = 0;
        while i < n {
            i = self.add_durations_of_known_ids(ids, start, end, i);
            if i < n {
                // A new (or large) id: the slow path, then back to the loop.
                self.add(ids[i], end[i].saturating_sub(start[i]));
                i += 1;
            }
        }
    }

    /// The hot loop: from row `from`, adds the durations of rows whose id
    /// already has a dense slot; returns the first row that has none (or
    /// `ids.len()`).
    ///
    /// Written for the code the Wasm compiler makes of it: a function of its
    /// own (inlined into a large export its values would be spilled to the
    /// stack), the table and the series borrowed as local slices (through
    /// `self` their pointers would be reloaded after every store into a
    /// series), the columns zipped (no bounds check per column), and one
    /// comparison that both finds "no slot yet" and bounds-checks the series.
    #[inline(never)]
    fn add_durations_of_known_ids(
        &mut self,
        ids: &[u64],
        start: &[u64],
        end: &[u64],
        from: usize,
    ) -> usize {
        let dense = &self.dense[..];
        let series = &mut self.series[..];
        // `dense` holds slot + 1, so 0 ("no slot") wraps to usize::MAX and
        // fails the same bounds check as an id outside the table.
        let slot_of = |id: u64| {
            if id < dense.len() as u64 {
                (dense[id as usize] as usize).wrapping_sub(1)
            } else {
                usize::MAX
            }
        };
        let (ids, start, end) = (&ids[from..], &start[from..], &end[from..]);
        // Four rows per iteration: the loop's fixed cost (the engine's
        // interruption check, moving values around the back edge) is paid
        // once per four records.
        let mut done = 0;
        for ((ids, start), end) in ids
            .chunks_exact(4)
            .zip(start.chunks_exact(4))
            .zip(end.chunks_exact(4))
        {
            let slots = [
                slot_of(ids[0]),
                slot_of(ids[1]),
                slot_of(ids[2]),
                slot_of(ids[3]),
            ];
            if slots.iter().any(|&s| s >= series.len()) {
                break;
            }
            for j in 0..4 {
                series[slots[j]].add(end[j].saturating_sub(start[j]));
            }
            done += 4;
        }
        for (k, ((&id, &start), &end)) in ids.iter().zip(start).zip(end).enumerate().skip(done) {
            let Some(s) = series.get_mut(slot_of(id)) else {
                return from + k;
            };
            s.add(end.saturating_sub(start));
        }
        from + ids.len()
    }

    /// The slot of `id`, made on its first sample.
    #[inline]
    fn slot(&mut self, id: u64) -> usize {
        // Compare as u64 first: `id as usize` truncates on wasm32.
        if id < self.dense.len() as u64 {
            let s = self.dense[id as usize];
            if s != 0 {
                return s as usize - 1;
            }
        }
        self.slot_slow(id)
    }

    #[cold]
    fn slot_slow(&mut self, id: u64) -> usize {
        let next = self.series.len();
        if id < Self::DENSE_LIMIT {
            let id = id as usize;
            if id >= self.dense.len() {
                let len = (id + 1).next_power_of_two().max(64);
                self.dense.resize(len, 0);
            }
            if self.dense[id] != 0 {
                return self.dense[id] as usize - 1;
            }
            self.dense[id] = next as u32 + 1;
        } else {
            let slot = *self.sparse.entry(id).or_insert(next as u32);
            if slot as usize != next {
                return slot as usize;
            }
        }
        self.ids.push(id);
        self.series.push(Series::new());
        next
    }

    /// The series of `id`, if it was seen.
    pub fn get(&self, id: u64) -> Option<&Series> {
        let slot = if id < self.dense.len() as u64 {
            self.dense[id as usize].checked_sub(1)?
        } else {
            *self.sparse.get(&id)?
        };
        self.series.get(slot as usize)
    }

    /// Every id seen, in first-seen order. `&ids()[n..]` are the ids that
    /// appeared since `len()` was `n`.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// Every id with its series, in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Series)> + '_ {
        self.ids.iter().copied().zip(self.series.iter())
    }

    /// Samples across all ids.
    pub fn count(&self) -> u64 {
        self.series.iter().map(Series::count).sum()
    }

    /// Distinct ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True before the first sample.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// A [`StatsTable`] by `name(id)`; ids sharing a name are merged.
    pub fn to_table(&self, mut name: impl FnMut(u64) -> String) -> StatsTable {
        let mut table = StatsTable::new();
        for (id, series) in self.iter() {
            table.merge(name(id), series);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series_of(xs: &[u64]) -> Series {
        let mut s = Series::new();
        xs.iter().for_each(|&x| s.add(x));
        s
    }

    #[test]
    fn keyed_sums_survive_key_changes_and_merge_by_name() {
        let mut k = KeyedSums::new();
        for (key, x) in [(1u64, 10), (1, 20), (2, 5), (1, 30), (3, 7)] {
            k.add(key, x);
        }
        assert_eq!((k.len(), k.count()), (3, 5));
        let firsts: Vec<u64> = k.iter().map(|(key, _)| key).collect();
        assert_eq!(firsts, [1, 2, 3]);
        let t = k.to_table(|key| {
            if key == 3 {
                "one".to_string()
            } else {
                format!("k{key}")
            }
        });
        assert_eq!(t.get("k1").map(Series::total), Some(60));
        assert_eq!(t.get("one").map(Series::count), Some(1));
    }

    #[test]
    fn add_many_equals_adding_one_by_one() {
        let keys = [1u64, 1, 2, 2, 2, 1, 3, 1, 1];
        let xs = [10u64, 1_000_000_000, 7, 9, 11, 5, 0, 123_456_789, 42];
        let mut one = KeyedSums::new();
        keys.iter().zip(xs).for_each(|(&k, x)| one.add(k, x));
        let mut many = KeyedSums::new();
        many.add_many(&keys[..4], xs[..4].iter().copied());
        many.add_many(&keys[4..], xs[4..].iter().copied());
        many.add_many(&[], []);
        let a: Vec<_> = one.iter().map(|(k, s)| (k, *s)).collect();
        let b: Vec<_> = many.iter().map(|(k, s)| (k, *s)).collect();
        assert_eq!(a, b, "exact sums: the same bits either way");
        assert_eq!(
            many.iter().next().unwrap().1,
            &series_of(&[10, 1_000_000_000, 5, 123_456_789, 42])
        );
    }

    #[test]
    fn id_sums_match_per_id_series_for_dense_and_sparse_interleaved_ids() {
        let big = IdSums::DENSE_LIMIT + 5;
        let ids = [1u64, big, 1, 9, u64::MAX, big, 9, 1, 0, 9, 9, 9, 1, 1];
        let start = [0u64, 10, 20, 30, 40, 50, 60, 70, 80, 0, 0, 0, 0, 5];
        let end = [5u64, 25, 20, 100, 41, 53, 58, 90, 81, 1, 2, 3, 4, 5];
        let mut sums = IdSums::new();
        // Twice, so the second pass runs the hot loop over known ids.
        sums.add_durations(&ids, &start, &end);
        sums.add_durations(&ids, &start, &end);
        assert_eq!(sums.ids(), &[1, big, 9, u64::MAX, 0]);
        assert_eq!(sums.count(), 2 * ids.len() as u64);
        let mut expected: HashMap<u64, Series> = HashMap::new();
        for _ in 0..2 {
            for i in 0..ids.len() {
                expected
                    .entry(ids[i])
                    .or_default()
                    .add(end[i].saturating_sub(start[i]));
            }
        }
        for (id, want) in &expected {
            assert_eq!(sums.get(*id), Some(want), "id {id}");
        }
        // 60 → 58 is reversed: it counts as 0.
        assert_eq!(sums.get(9).unwrap().min(), 0);
        assert!(sums.get(2).is_none() && sums.get(big + 1).is_none());
        let table = sums.to_table(|id| if id == 1 || id == 9 { "a" } else { "b" }.to_string());
        assert_eq!(table.get("a").unwrap().count(), 20);
    }
}
