//! [`Series`]: one series of durations, kept as exact integer sums.

/// One series of durations (or any `u64` samples): count, Σx, Σx², min and
/// max, all exact.
///
/// # Why integer sums
///
/// A statistic computed from exact sums is a function of the *set* of
/// samples, not of the order they were added in: adding in another order,
/// in other batches, or merging partial series ([`Series::merge`]) gives
/// the same bits. Floating-point running means (Welford's update, say) are
/// stable but order-dependent in the last bits, which makes "the replay
/// gives the same statistics as the live run" untestable for equality.
///
/// The price is the width: Σx and Σx² are 128-bit. They are stored as two
/// 64-bit words each, and [`Series::add`] adds a square in one 64-bit
/// multiplication whenever the sample is below 2³² (4.3 s for nanosecond
/// durations), so the per-sample cost on `wasm32` stays a few additions and
/// one multiply. Σx² saturates instead of wrapping in the absurd case of
/// samples near 2⁶⁴ (timestamps that are garbage): the deviation is then
/// meaningless, but nothing panics.
///
/// The mean and the sample variance are derived on demand; the variance
/// from n·Σx² − (Σx)² computed exactly in integers and divided once, so it is
/// as precise as an `f64` can hold (see [`Series::variance`]).
///
/// ```
/// use rocwasm_stats::Series;
/// let mut s = Series::new();
/// for d in [2, 4, 4, 4, 5, 5, 7, 9] {
///     s.add(d);
/// }
/// assert_eq!((s.count(), s.total(), s.min(), s.max()), (8, 40, 2, 9));
/// assert_eq!(s.mean(), 5.0);
/// assert_eq!(s.variance(), 32.0 / 7.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Series {
    count: u64,
    total_lo: u64,
    total_hi: u64,
    squares_lo: u64,
    squares_hi: u64,
    /// `u64::MAX` while empty, so that `add` needs no first-sample case.
    min: u64,
    max: u64,
}

impl Default for Series {
    fn default() -> Self {
        Series::new()
    }
}

/// The low and high words of a `u128`.
fn split(x: u128) -> (u64, u64) {
    (x as u64, (x >> 64) as u64)
}

fn join(lo: u64, hi: u64) -> u128 {
    (hi as u128) << 64 | lo as u128
}

impl Series {
    /// An empty series.
    pub const fn new() -> Self {
        Series {
            count: 0,
            total_lo: 0,
            total_hi: 0,
            squares_lo: 0,
            squares_hi: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Adds one sample.
    ///
    /// The common path writes three words (the count and the low words of
    /// the two sums); min, max and the high words are written only when
    /// they change. Hot loops call this once per record.
    #[inline]
    pub fn add(&mut self, x: u64) {
        self.count += 1;
        let (lo, carry) = self.total_lo.overflowing_add(x);
        self.total_lo = lo;
        if carry {
            self.total_hi += 1;
        }
        if x <= u32::MAX as u64 {
            // x² < 2⁶⁴: one 64-bit multiply, a carry into the high word.
            let (lo, carry) = self.squares_lo.overflowing_add(x * x);
            self.squares_lo = lo;
            if carry {
                self.squares_hi += 1;
            }
        } else {
            self.add_wide_square(x);
        }
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
    }

    /// The rare path of [`Series::add`]: a sample of 2³² or more.
    #[cold]
    #[inline(never)]
    fn add_wide_square(&mut self, x: u64) {
        let square = x as u128 * x as u128;
        let sum = join(self.squares_lo, self.squares_hi).saturating_add(square);
        (self.squares_lo, self.squares_hi) = split(sum);
    }

    /// The series whose exact sums are these: `count` samples, Σx =
    /// `total`, Σx² = `sum_of_squares`, the smallest `min` and the largest
    /// `max` (what [`Series::count`], [`Series::total`],
    /// [`Series::sum_of_squares`], [`Series::min`] and [`Series::max`]
    /// give back). For reading a series written elsewhere (a plugin's
    /// partial result); `None` when the figures cannot be one series' (a
    /// count of 0 with samples, min above max).
    pub fn from_sums(
        count: u64,
        total: u128,
        sum_of_squares: u128,
        min: u64,
        max: u64,
    ) -> Option<Series> {
        if count == 0 {
            return (total == 0 && sum_of_squares == 0).then(Series::new);
        }
        if min > max {
            return None;
        }
        let (total_lo, total_hi) = split(total);
        let (squares_lo, squares_hi) = split(sum_of_squares);
        Some(Series {
            count,
            total_lo,
            total_hi,
            squares_lo,
            squares_hi,
            min,
            max,
        })
    }

    /// Folds `other` in, as if its samples had been added here.
    pub fn merge(&mut self, other: &Series) {
        if other.count == 0 {
            return;
        }
        self.count += other.count;
        (self.total_lo, self.total_hi) = split(self.total().wrapping_add(other.total()));
        (self.squares_lo, self.squares_hi) =
            split(self.sum_of_squares().saturating_add(other.sum_of_squares()));
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Σx, exactly (a sum of `u64` samples cannot overflow a `u128`).
    pub fn total(&self) -> u128 {
        join(self.total_lo, self.total_hi)
    }

    /// Σx², exactly (saturated at `u128::MAX`, see the type's docs).
    pub fn sum_of_squares(&self) -> u128 {
        join(self.squares_lo, self.squares_hi)
    }

    /// Smallest sample; 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// Largest sample; 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Arithmetic mean; 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total() as f64 / self.count as f64
        }
    }

    /// Sample variance (divisor n − 1); 0 for fewer than two samples.
    ///
    /// With n samples, S = Σx and Q = Σx², the variance is
    /// (n·Q − S²) / (n·(n − 1)). S² alone would overflow 128 bits long
    /// before the variance is large, so the numerator is computed as
    /// n·(Q − q·S) − r·S, where S = q·n + r: every term is an exact integer
    /// no larger than the result. Only when even that does not fit (a
    /// standard deviation of hours over millions of samples) is it done in
    /// `f64` from the same exact terms.
    pub fn variance(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as u128;
        let (s, q) = (self.total(), self.sum_of_squares());
        let (quotient, remainder) = (s / n, s % n);
        // Q − q·S ≥ S²/n − q·S ≥ 0 (Cauchy–Schwarz), unless Q saturated.
        let reduced = quotient
            .checked_mul(s)
            .map(|qs| q.saturating_sub(qs))
            .unwrap_or(0);
        let exact = n
            .checked_mul(reduced)
            .and_then(|a| remainder.checked_mul(s).map(|b| a.saturating_sub(b)));
        match exact {
            Some(numerator) => numerator as f64 / (n * (n - 1)) as f64,
            None => {
                let r_s_over_n = remainder as f64 * s as f64 / n as f64;
                ((reduced as f64 - r_s_over_n) / (n - 1) as f64).max(0.0)
            }
        }
    }

    /// Sample standard deviation; 0 for fewer than two samples.
    pub fn stddev(&self) -> f64 {
        self.variance().sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_is_rebuilt_from_its_sums() {
        let mut s = Series::new();
        for x in [3, 1 << 40, 7, 0] {
            s.add(x);
        }
        let back = Series::from_sums(s.count(), s.total(), s.sum_of_squares(), s.min(), s.max());
        assert_eq!(back, Some(s));
        assert_eq!(Series::from_sums(0, 0, 0, 0, 0), Some(Series::new()));
        assert_eq!(Series::from_sums(0, 5, 0, 0, 0), None);
        assert_eq!(Series::from_sums(2, 5, 13, 3, 2), None);
    }

    /// Two-pass mean and sample deviation in `f64`, the textbook way.
    fn two_pass(xs: &[u64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    #[test]
    fn matches_the_two_pass_formula_across_magnitudes() {
        let xs = [
            1_000u64,
            1_250,
            990,
            40_000,
            7,
            1_000_000_123,
            55,
            5_000_000_000,
        ];
        let mut s = Series::new();
        xs.iter().for_each(|&x| s.add(x));
        let (mean, sd) = two_pass(&xs);
        assert_eq!(s.count(), 8);
        assert_eq!(s.total(), xs.iter().map(|&x| x as u128).sum::<u128>());
        assert_eq!(
            s.sum_of_squares(),
            xs.iter().map(|&x| x as u128 * x as u128).sum::<u128>()
        );
        assert_eq!((s.min(), s.max()), (7, 5_000_000_000));
        assert!((s.mean() - mean).abs() <= 1e-12 * mean);
        assert!((s.stddev() - sd).abs() <= 1e-12 * sd);
    }

    #[test]
    fn large_equal_samples_have_no_spread_and_close_ones_keep_theirs() {
        // The case that defeats Σx² − n·mean² in floating point.
        let mut same = Series::new();
        (0..1000).for_each(|_| same.add(1_000_000_007));
        assert_eq!(same.variance(), 0.0);
        let xs = [
            1_000_000_007u64,
            1_000_000_009,
            1_000_000_008,
            1_000_000_011,
        ];
        let mut close = Series::new();
        xs.iter().for_each(|&x| close.add(x));
        // Deviations −1.75, 0.25, −0.75, 2.25: Σd² = 8.75, / 3.
        assert_eq!(close.variance(), 8.75 / 3.0);
    }

    #[test]
    fn any_order_and_any_split_give_the_same_bits() {
        let xs: Vec<u64> = (0..500u64).map(|i| (i * 7919) % 1013 + i * i).collect();
        let mut forward = Series::new();
        xs.iter().for_each(|&x| forward.add(x));
        let mut backward = Series::new();
        xs.iter().rev().for_each(|&x| backward.add(x));
        let (mut a, mut b) = (Series::new(), Series::new());
        xs.iter().step_by(2).for_each(|&x| a.add(x));
        xs.iter().skip(1).step_by(2).for_each(|&x| b.add(x));
        b.merge(&a);
        assert_eq!(forward, backward);
        assert_eq!(forward, b);
        assert_eq!(forward.stddev().to_bits(), b.stddev().to_bits());
        let mut empty = Series::new();
        empty.merge(&forward);
        assert_eq!(empty, forward);
        forward.merge(&Series::new());
        assert_eq!(empty, forward);
    }

    #[test]
    fn empty_and_single_series_read_as_zero_spread() {
        let mut s = Series::new();
        assert_eq!((s.mean(), s.stddev(), s.min(), s.max()), (0.0, 0.0, 0, 0));
        s.add(42);
        assert_eq!(
            (s.mean(), s.stddev(), s.min(), s.max()),
            (42.0, 0.0, 42, 42)
        );
    }

    #[test]
    fn huge_samples_neither_panic_nor_lose_the_count() {
        let mut s = Series::new();
        for _ in 0..4 {
            s.add(u64::MAX);
        }
        s.add(0);
        assert_eq!(s.count(), 5);
        assert_eq!(s.total(), 4 * u64::MAX as u128);
        assert_eq!(s.sum_of_squares(), u128::MAX, "saturated");
        assert!(s.variance().is_finite());
        // Deviations of days (2⁴⁹ ns) over 10⁵ samples: n·(Q − q·S) exceeds
        // 128 bits and the f64 fallback answers.
        let mut wide = Series::new();
        for i in 0..100_000u64 {
            wide.add(if i % 2 == 0 { 0 } else { 1 << 50 });
        }
        let sd = wide.stddev();
        let want = (1u64 << 49) as f64 * (100_000.0f64 / 99_999.0).sqrt();
        assert!((sd - want).abs() <= 1e-9 * want, "{sd} vs {want}");
    }
}
