//! Duration statistics in the shape of rocprofv3's `--stats` tables.
//!
//! [`Stats`] accumulates one series (count, total, min, max, and mean and
//! variance with Welford's online update, so a long run neither overflows nor
//! loses precision the way a sum of squares would). [`StatsTable`] keeps one
//! series per key and renders the classic columns:
//!
//! `Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev`
//!
//! sorted by total duration, largest first (ties by name). `Percentage` is the
//! share of the table's grand total; `StdDev` is the *sample* standard
//! deviation (divisor n − 1, 0 for a single call). Floating-point cells are
//! written with six decimals.
//!
//! ```
//! use rocwasm_plugin_sdk::stats::StatsTable;
//! let mut t: StatsTable = StatsTable::new();
//! t.add("copy", 10);
//! t.add("copy", 30);
//! t.add("scale", 60);
//! let rows = t.sorted();
//! assert_eq!(rows[0].0, "scale");
//! assert_eq!(rows[1].1.mean(), 20.0);
//! assert!(t.to_csv().starts_with("Name,Calls,TotalDurationNs"));
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::output::CsvWriter;
use crate::types::SummaryTable;

/// The rocprofv3 `--stats` header.
pub const STATS_COLUMNS: [&str; 8] = [
    "Name",
    "Calls",
    "TotalDurationNs",
    "AverageNs",
    "Percentage",
    "MinNs",
    "MaxNs",
    "StdDev",
];

/// One series of durations (or any `u64` samples).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stats {
    count: u64,
    total: u128,
    min: u64,
    max: u64,
    mean: f64,
    /// Sum of squared deviations from the running mean.
    m2: f64,
}

impl Stats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample.
    pub fn add(&mut self, x: u64) {
        self.count += 1;
        self.total += x as u128;
        if self.count == 1 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        let delta = x as f64 - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x as f64 - self.mean);
    }

    /// Folds another series in (Chan et al.'s pairwise combination), as if
    /// its samples had been added here.
    pub fn merge(&mut self, other: &Stats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let n = (self.count + other.count) as f64;
        let delta = other.mean - self.mean;
        self.mean += delta * other.count as f64 / n;
        self.m2 += other.m2 + delta * delta * self.count as f64 * other.count as f64 / n;
        self.count += other.count;
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of all samples (a `u128`: a sum of `u64` durations cannot overflow it).
    pub fn total(&self) -> u128 {
        self.total
    }

    /// Smallest sample, 0 when empty.
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest sample, 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Arithmetic mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample variance (divisor n − 1); 0 for fewer than two samples.
    pub fn variance(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            (self.m2 / (self.count - 1) as f64).max(0.0)
        }
    }

    /// Sample standard deviation; 0 for fewer than two samples.
    pub fn stddev(&self) -> f64 {
        self.variance().sqrt()
    }
}

/// Running sums for hot loops: an add is a few additions, one
/// multiplication and two comparisons — no division (unlike
/// [`Stats::add`]) and no 128-bit multiply (slow on `wasm32`). Convert with
/// [`Sums::to_stats`] when reporting.
///
/// The spread is kept as sums of deviations from the first sample (the
/// "shifted data" method): squares of small deviations stay precise in `f64`
/// even when the durations themselves are large.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sums {
    count: u64,
    total: u128,
    min: u64,
    max: u64,
    shift: u64,
    dev_sum: f64,
    dev_sq: f64,
}

impl Sums {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample.
    #[inline]
    pub fn add(&mut self, x: u64) {
        if self.count == 0 {
            self.shift = x;
            self.min = x;
            self.max = x;
        }
        self.count += 1;
        self.total += x as u128;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        let d = x as f64 - self.shift as f64;
        self.dev_sum += d;
        self.dev_sq += d * d;
    }

    /// Folds `other` in, as if its samples had been added here.
    pub fn merge(&mut self, other: &Sums) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        // Re-express other's deviations relative to our shift.
        let delta = other.shift as f64 - self.shift as f64;
        let n = other.count as f64;
        self.dev_sq += other.dev_sq + 2.0 * delta * other.dev_sum + n * delta * delta;
        self.dev_sum += other.dev_sum + n * delta;
        self.count += other.count;
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn total(&self) -> u128 {
        self.total
    }

    /// The same series as [`Stats`] (mean, sample variance, …).
    pub fn to_stats(&self) -> Stats {
        if self.count == 0 {
            return Stats::default();
        }
        let n = self.count as f64;
        let mean = self.total as f64 / n;
        let m2 = (self.dev_sq - self.dev_sum * self.dev_sum / n).max(0.0);
        Stats {
            count: self.count,
            total: self.total,
            min: self.min,
            max: self.max,
            mean,
            m2,
        }
    }
}

/// [`Sums`] per key, for hot loops over a batch's columns.
///
/// Records of one key usually come in runs (the same kernel launched in a
/// loop), so the last key's slot is remembered and a hash lookup happens only
/// when the key changes.
#[derive(Debug, Clone)]
pub struct KeyedSums<K> {
    slots: HashMap<K, usize, FastHash>,
    sums: Vec<(K, Sums)>,
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
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds sample `x` to `key`'s sums.
    #[inline]
    pub fn add(&mut self, key: K, x: u64) {
        self.slot(key).add(x);
    }

    /// Adds `samples[i]` to `keys[i]` for every `i` (the shorter input
    /// decides). Faster than [`KeyedSums::add`] per sample: a run of equal
    /// keys is summed in registers and folded into the table once.
    pub fn add_many(&mut self, keys: &[K], samples: impl IntoIterator<Item = u64>) {
        let mut pairs = keys.iter().copied().zip(samples);
        let Some((mut key, first)) = pairs.next() else {
            return;
        };
        let mut run = Sums::new();
        run.add(first);
        for (k, x) in pairs {
            if k != key {
                self.slot(key).merge(&run);
                key = k;
                run = Sums::new();
            }
            run.add(x);
        }
        self.slot(key).merge(&run);
    }

    fn slot(&mut self, key: K) -> &mut Sums {
        let slot = match self.last {
            Some((last, slot)) if last == key => slot,
            _ => {
                let next = self.sums.len();
                let slot = *self.slots.entry(key).or_insert(next);
                if slot == next {
                    self.sums.push((key, Sums::new()));
                }
                self.last = Some((key, slot));
                slot
            }
        };
        &mut self.sums[slot].1
    }

    /// Every key with its sums, in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &Sums)> + '_ {
        self.sums.iter().map(|(k, s)| (*k, s))
    }

    /// Samples across all keys.
    pub fn count(&self) -> u64 {
        self.sums.iter().map(|(_, s)| s.count()).sum()
    }

    pub fn len(&self) -> usize {
        self.sums.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// A [`StatsTable`] keyed by `name(key)`; keys sharing a name are merged.
    pub fn to_table<N: Eq + Hash + Ord + Clone>(
        &self,
        mut name: impl FnMut(K) -> N,
    ) -> StatsTable<N> {
        let mut table = StatsTable::new();
        for (key, sums) in self.iter() {
            table.merge(name(key), &sums.to_stats());
        }
        table
    }
}

/// [`Sums`] per `u64` id (kernel ids, agent ids, …): the per-record loop of
/// an analysis, made as cheap as it gets.
///
/// Ids that the profiler hands out from counters are small, so an id below
/// [`IdSums::DENSE_LIMIT`] indexes a table directly (one load, no hashing,
/// no matter how ids interleave); larger ids go to a hash map with a
/// multiplicative hash. Ids keep first-seen order, and [`IdSums::ids`] lets a
/// plugin resolve names once per *new* id instead of once per record.
///
/// ```
/// use rocwasm_plugin_sdk::stats::IdSums;
/// let mut by_kernel = IdSums::new();
/// by_kernel.add_durations(&[3, 4, 3], &[0, 0, 10], &[5, 7, 30]);
/// assert_eq!(by_kernel.ids(), &[3, 4]);
/// assert_eq!(by_kernel.get(3).unwrap().total(), 25);
/// ```
///
/// The per-sample work is what [`Sums::add`] does minus everything that can
/// be done once per id: the shift is the id's first sample, set when the id
/// first appears (no first-sample branch); deviations are taken with a
/// wrapping subtraction and a *signed* conversion (one instruction; exact
/// while samples of one id differ by less than 2^63); the sum of deviations
/// is not kept, because `total − count·shift` gives it exactly at the end.
#[derive(Debug, Clone, Default)]
pub struct IdSums {
    /// `dense[id]` = slot + 1 for small ids (0: not seen yet).
    dense: Vec<u32>,
    sparse: HashMap<u64, u32, FastHash>,
    ids: Vec<u64>,
    acc: Vec<Acc>,
}

/// One id's running sums in [`IdSums`]; see there.
///
/// The loop is bound by stores, not arithmetic, so the common path of an
/// add writes three words: the count, the low word of the total and the
/// squared deviations. Min and max are written only when they change, and the
/// total's high word only on a carry (branches that are almost never taken).
#[derive(Debug, Clone, Copy)]
struct Acc {
    count: u64,
    total_lo: u64,
    dev_sq: f64,
    shift: u64,
    min: u64,
    max: u64,
    total_hi: u64,
}

impl Acc {
    fn starting_at(x: u64) -> Acc {
        Acc {
            count: 0,
            total_lo: 0,
            dev_sq: 0.0,
            shift: x,
            min: x,
            max: x,
            total_hi: 0,
        }
    }

    #[inline]
    fn add(&mut self, x: u64) {
        self.count += 1;
        let (lo, carry) = self.total_lo.overflowing_add(x);
        self.total_lo = lo;
        if carry {
            self.total_hi += 1;
        }
        let d = x.wrapping_sub(self.shift) as i64 as f64;
        self.dev_sq += d * d;
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
    }

    fn total(&self) -> u128 {
        (self.total_hi as u128) << 64 | self.total_lo as u128
    }

    fn to_sums(self) -> Sums {
        // total − count·shift, exactly, in i128 (both terms < 2^128 / 2).
        let total = self.total();
        let dev_sum = total as i128 - self.count as i128 * self.shift as i128;
        Sums {
            count: self.count,
            total,
            min: self.min,
            max: self.max,
            shift: self.shift,
            dev_sum: dev_sum as f64,
            dev_sq: self.dev_sq,
        }
    }
}

impl IdSums {
    /// Ids below this index a table (4 bytes per id up to the largest seen).
    pub const DENSE_LIMIT: u64 = 1 << 16;

    pub fn new() -> Self {
        Self::default()
    }

    /// Adds sample `x` to `id`'s sums.
    #[inline]
    pub fn add(&mut self, id: u64, x: u64) {
        let slot = self.slot(id, x);
        self.acc[slot].add(x);
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
    /// stack), the table and the sums borrowed as local slices (through
    /// `self` their pointers would be reloaded after every store into the
    /// sums), the columns zipped (no bounds check per column), and one
    /// comparison that both finds "no slot yet" and bounds-checks the sums.
    #[inline(never)]
    fn add_durations_of_known_ids(
        &mut self,
        ids: &[u64],
        start: &[u64],
        end: &[u64],
        from: usize,
    ) -> usize {
        let dense = &self.dense[..];
        let acc = &mut self.acc[..];
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
            if slots.iter().any(|&s| s >= acc.len()) {
                break;
            }
            for j in 0..4 {
                acc[slots[j]].add(end[j].saturating_sub(start[j]));
            }
            done += 4;
        }
        for (k, ((&id, &start), &end)) in ids.iter().zip(start).zip(end).enumerate().skip(done) {
            let Some(a) = acc.get_mut(slot_of(id)) else {
                return from + k;
            };
            a.add(end.saturating_sub(start));
        }
        from + ids.len()
    }

    /// The slot of `id`; a new id starts its sums at `first`, its first sample.
    #[inline]
    fn slot(&mut self, id: u64, first: u64) -> usize {
        // Compare as u64 first: `id as usize` truncates on wasm32.
        if id < self.dense.len() as u64 {
            let s = self.dense[id as usize];
            if s != 0 {
                return s as usize - 1;
            }
        }
        self.slot_slow(id, first)
    }

    #[cold]
    fn slot_slow(&mut self, id: u64, first: u64) -> usize {
        let next = self.acc.len();
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
        self.acc.push(Acc::starting_at(first));
        next
    }

    /// The sums of `id`, if it was seen.
    pub fn get(&self, id: u64) -> Option<Sums> {
        let slot = if id < self.dense.len() as u64 {
            self.dense[id as usize].checked_sub(1)?
        } else {
            *self.sparse.get(&id)?
        };
        self.acc.get(slot as usize).map(|a| a.to_sums())
    }

    /// Every id seen, in first-seen order. `&ids()[n..]` are the ids that
    /// appeared since `len()` was `n`.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// Every id with its sums, in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, Sums)> + '_ {
        self.ids
            .iter()
            .copied()
            .zip(self.acc.iter().map(|a| a.to_sums()))
    }

    /// Samples across all ids.
    pub fn count(&self) -> u64 {
        self.acc.iter().map(|a| a.count).sum()
    }

    /// Distinct ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// A [`StatsTable`] keyed by `name(id)`; ids sharing a name are merged.
    pub fn to_table<N: Eq + Hash + Ord + Clone>(
        &self,
        mut name: impl FnMut(u64) -> N,
    ) -> StatsTable<N> {
        let mut table = StatsTable::new();
        for (id, sums) in self.iter() {
            table.merge(name(id), &sums.to_stats());
        }
        table
    }
}

/// A fast, non-cryptographic hash for small keys (ids, kind/operation
/// pairs): one rotate, xor and multiply per word, as in Firefox's and rustc's
/// FxHash. The std default (SipHash) resists hash flooding, which costs
/// ~10× more per lookup; the keys here come from the profiler, not from an
/// adversary.
#[derive(Debug, Clone, Copy, Default)]
pub struct FastHasher(u64);

/// [`FastHasher`] as a `HashMap`'s `S` parameter.
pub type FastHash = BuildHasherDefault<FastHasher>;

impl FastHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        for &b in chunks.remainder() {
            self.mix(b as u64);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }
}

/// One [`Stats`] per key (kernel name, API function, …).
#[derive(Debug, Clone)]
pub struct StatsTable<K = String> {
    series: HashMap<K, Stats>,
}

impl<K> Default for StatsTable<K> {
    fn default() -> Self {
        Self {
            series: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash + Ord + Clone> StatsTable<K> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample to `key`'s series.
    pub fn add(&mut self, key: impl Into<K>, x: u64) {
        self.series.entry(key.into()).or_default().add(x);
    }

    /// Folds a whole series into `key`'s.
    pub fn merge(&mut self, key: impl Into<K>, stats: &Stats) {
        self.series.entry(key.into()).or_default().merge(stats);
    }

    pub fn get(&self, key: &K) -> Option<&Stats> {
        self.series.get(key)
    }

    pub fn len(&self) -> usize {
        self.series.len()
    }

    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// Sum of every series' total: the denominator of `Percentage`.
    pub fn grand_total(&self) -> u128 {
        self.series.values().map(Stats::total).sum()
    }

    /// The series, by total duration descending, then key ascending.
    pub fn sorted(&self) -> Vec<(K, Stats)> {
        let mut rows: Vec<(K, Stats)> = self.series.iter().map(|(k, s)| (k.clone(), *s)).collect();
        rows.sort_by(|a, b| b.1.total().cmp(&a.1.total()).then_with(|| a.0.cmp(&b.0)));
        rows
    }
}

impl<K: Eq + Hash + Ord + Clone + std::fmt::Display> StatsTable<K> {
    /// The rows as the `--stats` cells, in [`STATS_COLUMNS`] order.
    pub fn cells(&self) -> Vec<Vec<String>> {
        let grand = self.grand_total();
        self.sorted()
            .into_iter()
            .map(|(key, s)| {
                let pct = if grand == 0 {
                    0.0
                } else {
                    s.total() as f64 * 100.0 / grand as f64
                };
                vec![
                    key.to_string(),
                    s.count().to_string(),
                    s.total().to_string(),
                    format!("{:.6}", s.mean()),
                    format!("{pct:.6}"),
                    s.min().to_string(),
                    s.max().to_string(),
                    format!("{:.6}", s.stddev()),
                ]
            })
            .collect()
    }

    /// The table as CSV with the rocprofv3 header.
    pub fn to_csv(&self) -> String {
        let mut csv = CsvWriter::new(&STATS_COLUMNS);
        for row in self.cells() {
            csv.row(row);
        }
        csv.finish()
    }

    /// The table for the end-of-run summary.
    pub fn to_summary(&self, title: &str) -> SummaryTable {
        SummaryTable {
            title: title.to_string(),
            columns: STATS_COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows: self.cells(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(xs: &[u64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    #[test]
    fn welford_matches_the_two_pass_formula() {
        let xs = [1_000u64, 1_250, 990, 40_000, 7, 1_000_000_123, 55];
        let mut s = Stats::new();
        xs.iter().for_each(|&x| s.add(x));
        let (mean, sd) = naive(&xs);
        assert_eq!(s.count(), 7);
        assert_eq!(s.total(), xs.iter().map(|&x| x as u128).sum::<u128>());
        assert_eq!((s.min(), s.max()), (7, 1_000_000_123));
        assert!((s.mean() - mean).abs() < 1e-6 * mean);
        assert!((s.stddev() - sd).abs() < 1e-6 * sd);
    }

    #[test]
    fn merge_equals_adding_everything_to_one_series() {
        let (a, b) = ([3u64, 9, 27, 81], [2u64, 4, 8]);
        let mut sa = Stats::new();
        a.iter().for_each(|&x| sa.add(x));
        let mut sb = Stats::new();
        b.iter().for_each(|&x| sb.add(x));
        let mut all = Stats::new();
        a.iter().chain(&b).for_each(|&x| all.add(x));
        sa.merge(&sb);
        assert_eq!(
            (sa.count(), sa.total(), sa.min(), sa.max()),
            (all.count(), all.total(), all.min(), all.max())
        );
        assert!((sa.mean() - all.mean()).abs() < 1e-9);
        assert!((sa.stddev() - all.stddev()).abs() < 1e-9);
        let mut empty = Stats::new();
        empty.merge(&all);
        assert_eq!(empty, all);
    }

    #[test]
    fn exact_sums_agree_with_welford() {
        let xs = [
            1_000_000_007u64,
            1_000_000_009,
            1_000_000_008,
            1_000_000_011,
            999_999_999,
        ];
        let mut w = Stats::new();
        let mut s = Sums::new();
        xs.iter().for_each(|&x| {
            w.add(x);
            s.add(x);
        });
        let from_sums = s.to_stats();
        assert_eq!(
            (
                from_sums.count(),
                from_sums.total(),
                from_sums.min(),
                from_sums.max()
            ),
            (5, w.total(), 999_999_999, 1_000_000_011)
        );
        let (_, sd) = naive(&xs);
        assert!(
            (from_sums.stddev() - sd).abs() < 1e-9,
            "{} vs {sd}",
            from_sums.stddev()
        );
        assert!((from_sums.mean() - w.mean()).abs() < 1e-6);
        assert_eq!(Sums::new().to_stats(), Stats::default());
    }

    #[test]
    fn keyed_sums_survive_key_changes_and_merge_by_name() {
        let mut k = KeyedSums::new();
        for (key, x) in [(1u64, 10), (1, 20), (2, 5), (1, 30), (3, 7)] {
            k.add(key, x);
        }
        assert_eq!(k.len(), 3);
        assert_eq!(k.count(), 5);
        let firsts: Vec<u64> = k.iter().map(|(key, _)| key).collect();
        assert_eq!(firsts, [1, 2, 3]);
        let t = k.to_table(|key| {
            if key == 3 {
                "one".to_string()
            } else {
                format!("k{key}")
            }
        });
        assert_eq!(t.get(&"k1".to_string()).map(Stats::total), Some(60));
        assert_eq!(t.get(&"one".to_string()).map(Stats::count), Some(1));
    }

    #[test]
    fn add_many_and_merge_equal_adding_one_by_one() {
        let keys = [1u64, 1, 2, 2, 2, 1, 3, 1, 1];
        let xs = [10u64, 1_000_000_000, 7, 9, 11, 5, 0, 123_456_789, 42];
        let mut one = KeyedSums::new();
        keys.iter().zip(xs).for_each(|(&k, x)| one.add(k, x));
        let mut many = KeyedSums::new();
        many.add_many(&keys[..4], xs[..4].iter().copied());
        many.add_many(&keys[4..], xs[4..].iter().copied());
        many.add_many(&[], []);
        assert_eq!(many.count(), 9);
        for ((k1, a), (k2, b)) in one.iter().zip(many.iter()) {
            assert_eq!(k1, k2);
            let (a, b) = (a.to_stats(), b.to_stats());
            assert_eq!(
                (a.count(), a.total(), a.min(), a.max()),
                (b.count(), b.total(), b.min(), b.max())
            );
            assert!(
                (a.stddev() - b.stddev()).abs() <= 1e-9 * a.stddev().max(1.0),
                "{k1}: {} vs {}",
                a.stddev(),
                b.stddev()
            );
        }
        let mut w = Stats::new();
        [10u64, 1_000_000_000, 5, 123_456_789, 42]
            .iter()
            .for_each(|&x| w.add(x));
        let k1 = many.iter().next().unwrap().1.to_stats();
        assert!((k1.stddev() - w.stddev()).abs() < 1e-6 * w.stddev());
    }

    #[test]
    fn single_and_empty_series_have_zero_spread() {
        let mut s = Stats::new();
        assert_eq!((s.mean(), s.stddev(), s.min(), s.max()), (0.0, 0.0, 0, 0));
        s.add(42);
        assert_eq!(
            (s.mean(), s.stddev(), s.min(), s.max()),
            (42.0, 0.0, 42, 42)
        );
    }

    #[test]
    fn table_sorts_by_total_then_name_and_computes_percentages() {
        let mut t: StatsTable = StatsTable::new();
        for (k, x) in [("b", 50), ("a", 50), ("c", 300), ("a", 50), ("b", 50)] {
            t.add(k, x);
        }
        let cells = t.cells();
        let names: Vec<&str> = cells.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(
            cells[0],
            [
                "c",
                "1",
                "300",
                "300.000000",
                "60.000000",
                "300",
                "300",
                "0.000000"
            ]
        );
        assert_eq!(cells[1][4], "20.000000");
        let csv = t.to_csv();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev")
        );
        assert_eq!(
            lines.next(),
            Some("c,1,300,300.000000,60.000000,300,300,0.000000")
        );
        let summary = t.to_summary("Kernels");
        assert_eq!(summary.columns.len(), 8);
        assert_eq!(summary.rows.len(), 3);
    }

    #[test]
    fn id_sums_match_per_id_series_for_dense_and_sparse_interleaved_ids() {
        let big = IdSums::DENSE_LIMIT + 5;
        let ids = [1u64, big, 1, 9, u64::MAX, big, 9, 1, 0];
        let start = [0u64, 10, 20, 30, 40, 50, 60, 70, 80];
        let end = [5u64, 25, 20, 100, 41, 53, 58, 90, 81];
        let mut sums = IdSums::new();
        sums.add_durations(&ids, &start, &end);
        assert_eq!(sums.ids(), &[1, big, 9, u64::MAX, 0]);
        assert_eq!(sums.count(), 9);
        let mut expected: HashMap<u64, Stats> = HashMap::new();
        for i in 0..ids.len() {
            expected
                .entry(ids[i])
                .or_default()
                .add(end[i].saturating_sub(start[i]));
        }
        for (id, want) in &expected {
            let got = sums.get(*id).unwrap().to_stats();
            assert_eq!(
                (got.count(), got.total(), got.min(), got.max()),
                (want.count(), want.total(), want.min(), want.max()),
                "id {id}"
            );
            assert!((got.stddev() - want.stddev()).abs() < 1e-9, "id {id}");
        }
        // 60 → 58 is reversed: it counts as 0.
        assert_eq!(sums.get(9).unwrap().to_stats().min(), 0);
        assert!(sums.get(2).is_none() && sums.get(big + 1).is_none());
        let table = sums.to_table(|id| if id == 1 || id == 9 { "a" } else { "b" }.to_string());
        assert_eq!(table.get(&"a".to_string()).unwrap().count(), 5);
    }
}
