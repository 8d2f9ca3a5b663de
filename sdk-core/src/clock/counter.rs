//! The CPU's time-stamp counter as a `CLOCK_BOOTTIME` clock.
//!
//! [`safe_arch`] reads the counter (`rdtsc`, inlined, without `unsafe` in
//! this crate); this module turns its ticks into `CLOCK_BOOTTIME`
//! nanoseconds. (quanta, the usual crate for this, fits its scale to
//! `CLOCK_MONOTONIC` with a busy loop of up to 200 ms on first use — seen
//! taking over 100 ms inside a profiled application here — and never
//! refits; records need the boot-time line for runs that last hours.) The
//! counter is used on x86-64 CPUs whose counter is invariant and which the
//! kernel itself keeps time with (`current_clocksource` is `tsc`); elsewhere
//! the clock is the system clock.
//!
//! # The line
//!
//! A reading of `t` ticks is `anchor_ns + (t - anchor_ticks) · rate`
//! nanoseconds ([`Line`]). The parameters come from *samples*: a counter
//! reading bracketed by two system-clock readings, the tightest of three
//! tries, so one sample is good to a few tens of nanoseconds (a sample that
//! could not be bracketed within 20 µs is not used). [`Fit`] keeps the first
//! sample as its *base* and, at each refit:
//!
//! - estimates the rate over the whole baseline since the base (the error of
//!   the two end samples shrinks as the baseline grows: tens of ns over 5 ms
//!   is 1e-5, over a minute 1e-9);
//! - starts the new line where the old one stands at this moment, so the
//!   clock never jumps back, and tilts it to work off the offset the old
//!   line had accumulated over the next interval — slewing, as NTP does (the
//!   tilt is at most 500 ppm);
//! - *steps* instead when the offset is over a millisecond: after a suspend
//!   `CLOCK_BOOTTIME` has moved on while the counter may not have, and the
//!   clock must follow at once. The base restarts there.
//!
//! Refits are lazy: the first reading after the published `next_fit` tick
//! takes a sample and publishes the new line (intervals grow from 5 ms to one
//! second as the rate settles), so no thread is started and an idle process
//! does nothing. Before the first line exists (the first 5 ms after first
//! use), readings are the system clock while it waits for the baseline.
//!
//! # Publishing
//!
//! The line is three words behind a sequence lock built from atomics: the one
//! writer (whoever holds the [`Fit`] mutex, taken with `try_lock` so a reader
//! never waits for it) makes the sequence odd, stores the words, makes it
//! even; a reader retries while the sequence is odd or changed under it.
//!
//! After `fork()` the child keeps the parent's line (the counter goes on);
//! if the fit was being updated at that instant the child's fit stays
//! locked and its line is never refitted, which costs accuracy only.

use std::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering::*};
use std::sync::{Mutex, Once};

use super::system::system_now;

/// What [`super::now`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `clock_gettime(CLOCK_BOOTTIME)` on every call: no usable counter, the
    /// first milliseconds before the first fit, or `ROCWASM_CLOCK=os`.
    System,
    /// The time-stamp counter, mapped onto `CLOCK_BOOTTIME`.
    Counter,
}

/// The source [`super::now`] reads at this moment.
pub fn source() -> Source {
    init();
    match MODE.load(Acquire) {
        COUNTER => Source::Counter,
        _ => Source::System,
    }
}

const UNINIT: u8 = 0;
/// The counter will be used once the first fit exists.
const CALIBRATING: u8 = 1;
const COUNTER: u8 = 2;
const SYSTEM: u8 = 3;

/// The base must be this old before the first line is fitted.
const FIRST_BASELINE_NS: u64 = 5_000_000;
/// Refit intervals: a quarter of the baseline, within these bounds.
const MIN_INTERVAL_NS: u64 = 5_000_000;
const MAX_INTERVAL_NS: u64 = 1_000_000_000;
/// An offset beyond this is stepped, not slewed.
const STEP_NS: i64 = 1_000_000;
/// The most a refit tilts the line to work off an offset.
const MAX_SLEW: f64 = 5e-4;
/// A sample bracketed wider than this is not used (see [`sample`]).
const MAX_SAMPLE_WIDTH_NS: u64 = 20_000;
/// How long a refit that found no usable sample waits before trying again.
const RETRY_NS: f64 = 1_000_000.0;
/// Plausible counter periods (ns per tick): 10 GHz … 10 MHz.
const RATE_RANGE: std::ops::RangeInclusive<f64> = 0.1..=100.0;

static MODE: AtomicU8 = AtomicU8::new(UNINIT);
static INIT: Once = Once::new();
static FIT: Mutex<Option<Fit>> = Mutex::new(None);

static SEQ: AtomicU64 = AtomicU64::new(0);
static ANCHOR_TICKS: AtomicU64 = AtomicU64::new(0);
static ANCHOR_NS: AtomicU64 = AtomicU64::new(0);
static RATE_Q32: AtomicU64 = AtomicU64::new(0);
/// The first tick at which the line is due for a refit.
static NEXT_FIT: AtomicU64 = AtomicU64::new(0);

/// A clock reading not yet turned into nanoseconds (see [`super::read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Counter ticks, to be mapped through the line.
    Ticks(u64),
    /// Already `CLOCK_BOOTTIME` nanoseconds (the system clock was read).
    Ns(u64),
}

#[inline]
pub(super) fn read() -> Reading {
    if MODE.load(Relaxed) == COUNTER {
        Reading::Ticks(ticks())
    } else {
        Reading::Ns(not_counting())
    }
}

#[inline]
pub(super) fn now() -> u64 {
    match read() {
        Reading::Ticks(t) => current_line(t).map(t),
        Reading::Ns(ns) => ns,
    }
}

/// Both readings in nanoseconds, through one look at the line.
#[inline(always)]
pub(super) fn span(start: Reading, end: Reading) -> (u64, u64) {
    match (start, end) {
        (Reading::Ticks(a), Reading::Ticks(b)) => current_line(b).map_span(a, b),
        (Reading::Ticks(a), Reading::Ns(b)) => (current_line(a).map(a), b),
        (Reading::Ns(a), Reading::Ticks(b)) => (a, current_line(b).map(b)),
        (Reading::Ns(a), Reading::Ns(b)) => (a, b),
    }
}

/// The line to map tick `t` with, refitted first when it is due.
#[inline]
fn current_line(t: u64) -> Line {
    if t >= NEXT_FIT.load(Relaxed) {
        refit(t);
    }
    published()
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn ticks() -> u64 {
    safe_arch::read_timestamp_counter()
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn ticks() -> u64 {
    // Never read: `counter_is_invariant` keeps the mode at SYSTEM.
    0
}

#[cold]
fn not_counting() -> u64 {
    init();
    match MODE.load(Acquire) {
        COUNTER => {
            let t = ticks();
            current_line(t).map(t)
        }
        CALIBRATING => {
            let ns = system_now();
            try_first_fit(ns);
            ns
        }
        _ => system_now(),
    }
}

fn init() {
    INIT.call_once(|| {
        let wanted = !matches!(std::env::var("ROCWASM_CLOCK").as_deref(), Ok("os"));
        if !(wanted && counter_is_invariant()) {
            MODE.store(SYSTEM, Release);
            return;
        }
        let Some(first) = (0..10).find_map(|_| sample()) else {
            MODE.store(SYSTEM, Release);
            return;
        };
        *FIT.lock().unwrap_or_else(|e| e.into_inner()) = Some(Fit::new(first));
        MODE.store(CALIBRATING, Release);
    });
}

/// True when the CPU's counter ticks at a constant rate in every power state
/// (and, as quanta also requires, has `rdtscp`: CPUs without it predate
/// reliably synchronised counters), and the kernel keeps time with it too:
/// Linux stops using the counter when it finds it unsynchronised between
/// sockets or drifting, and so must we.
#[cfg(target_arch = "x86_64")]
fn counter_is_invariant() -> bool {
    let cpuid = raw_cpuid::CpuId::new();
    let invariant = cpuid
        .get_advanced_power_mgmt_info()
        .is_some_and(|p| p.has_invariant_tsc());
    let rdtscp = cpuid
        .get_extended_processor_and_feature_identifiers()
        .is_some_and(|f| f.has_rdtscp());
    let kernel_uses_it =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .is_ok_and(|s| s.trim() == "tsc");
    invariant && rdtscp && kernel_uses_it
}

#[cfg(not(target_arch = "x86_64"))]
fn counter_is_invariant() -> bool {
    false
}

/// A counter reading between two system-clock readings, stamped at their
/// middle: the tightest bracket of three tries. `None` when every try was
/// wider than [`MAX_SAMPLE_WIDTH_NS`] (the thread was preempted or the
/// machine is overloaded): such a sample would bend the line, so the fit
/// waits for a better moment.
fn sample() -> Option<Sample> {
    let mut best: Option<(u64, Sample)> = None;
    for _ in 0..3 {
        let before = system_now();
        let ticks = ticks();
        let after = system_now();
        let width = after.saturating_sub(before);
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((
                width,
                Sample {
                    ticks,
                    ns: before + width / 2,
                },
            ));
        }
    }
    best.filter(|(w, _)| *w <= MAX_SAMPLE_WIDTH_NS)
        .map(|(_, s)| s)
}

#[cold]
fn try_first_fit(ns: u64) {
    let Ok(mut guard) = FIT.try_lock() else {
        return;
    };
    let Some(fit) = guard.as_mut() else {
        return;
    };
    if ns.saturating_sub(fit.base.ns) < FIRST_BASELINE_NS || MODE.load(Relaxed) != CALIBRATING {
        return;
    }
    let Some(s) = sample() else {
        return;
    };
    match fit.first_line(s) {
        Some((line, next)) => {
            publish(line, next);
            MODE.store(COUNTER, Release);
        }
        // A counter that does not count plausibly is not used.
        None => MODE.store(SYSTEM, Release),
    }
}

#[cold]
#[inline(never)]
fn refit(t: u64) {
    if let Ok(mut guard) = FIT.try_lock() {
        if let Some(fit) = guard.as_mut() {
            // Another thread may have refitted since this one looked.
            if t >= NEXT_FIT.load(Relaxed) {
                let line = published();
                match sample() {
                    Some(s) => {
                        let (line, next) = fit.refit(s, line);
                        publish(line, next);
                    }
                    None => {
                        let wait = (RETRY_NS / line.rate()) as u64;
                        NEXT_FIT.store(t.saturating_add(wait), Relaxed);
                    }
                }
            }
        }
    }
}

fn publish(line: Line, next_fit: u64) {
    let seq = SEQ.load(Relaxed);
    SEQ.store(seq.wrapping_add(1), Relaxed);
    fence(Release);
    ANCHOR_TICKS.store(line.anchor_ticks, Relaxed);
    ANCHOR_NS.store(line.anchor_ns, Relaxed);
    RATE_Q32.store(line.rate_q32, Relaxed);
    SEQ.store(seq.wrapping_add(2), Release);
    NEXT_FIT.store(next_fit, Relaxed);
}

#[inline]
fn published() -> Line {
    loop {
        let seq = SEQ.load(Acquire);
        let line = Line {
            anchor_ticks: ANCHOR_TICKS.load(Relaxed),
            anchor_ns: ANCHOR_NS.load(Relaxed),
            rate_q32: RATE_Q32.load(Relaxed),
        };
        fence(Acquire);
        if seq & 1 == 0 && SEQ.load(Relaxed) == seq {
            return line;
        }
        std::hint::spin_loop();
    }
}

/// A counter reading and the system clock at that moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sample {
    pub ticks: u64,
    pub ns: u64,
}

/// Ticks to nanoseconds: `anchor_ns + (ticks - anchor_ticks) · rate`, the
/// rate in ns per tick as 32.32 fixed point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub anchor_ticks: u64,
    pub anchor_ns: u64,
    pub rate_q32: u64,
}

impl Line {
    fn new(anchor: Sample, rate: f64) -> Line {
        Line {
            anchor_ticks: anchor.ticks,
            anchor_ns: anchor.ns,
            rate_q32: (rate * (1u64 << 32) as f64) as u64,
        }
    }

    fn rate(&self) -> f64 {
        self.rate_q32 as f64 / (1u64 << 32) as f64
    }

    /// Also right for a reading taken just before the anchor (a reader that
    /// read the counter, then a line published after that).
    #[inline]
    pub(crate) fn map(&self, ticks: u64) -> u64 {
        let delta = ticks.wrapping_sub(self.anchor_ticks) as i64 as i128;
        // The rate is below 2^39 (at most 100 ns per tick, `RATE_RANGE`), so
        // both factors are i64 and this is one 64 × 64 → 128-bit multiply.
        let ns = (delta * self.rate_q32 as i64 as i128) >> 32;
        (self.anchor_ns as i128 + ns).max(0) as u64
    }

    /// `start` and `end` (read after it), mapped: `end` as `start` plus the
    /// elapsed ticks' nanoseconds, one narrow multiply instead of a second
    /// mapping (it may differ from [`Line::map`]`(end)` by 1 ns of rounding).
    #[inline]
    pub(crate) fn map_span(&self, start: u64, end: u64) -> (u64, u64) {
        let s = self.map(start);
        let e = match end
            .checked_sub(start)
            .and_then(|d| d.checked_mul(self.rate_q32))
        {
            Some(ns_q32) => s.saturating_add(ns_q32 >> 32),
            None => self.map(end),
        };
        (s, e)
    }
}

/// The fitting state: the base sample and the interval policy (module docs).
#[derive(Debug)]
pub(crate) struct Fit {
    base: Sample,
}

impl Fit {
    pub(crate) fn new(base: Sample) -> Fit {
        Fit { base }
    }

    /// The rate over the baseline from the base to `s`.
    fn rate_to(&self, s: Sample) -> Option<f64> {
        let ticks = s.ticks.checked_sub(self.base.ticks)?;
        let ns = s.ns.checked_sub(self.base.ns)?;
        let rate = ns as f64 / ticks as f64;
        (ticks > 0 && RATE_RANGE.contains(&rate)).then_some(rate)
    }

    /// The tick at which a line anchored at `s` is next refitted.
    fn next_fit(&self, s: Sample, rate: f64) -> u64 {
        let interval_ns =
            (s.ns.saturating_sub(self.base.ns) / 4).clamp(MIN_INTERVAL_NS, MAX_INTERVAL_NS);
        s.ticks.saturating_add((interval_ns as f64 / rate) as u64)
    }

    /// The first line, through `s`; `None` when the counter's rate is not
    /// plausible (or it did not move).
    pub(crate) fn first_line(&mut self, s: Sample) -> Option<(Line, u64)> {
        let rate = self.rate_to(s)?;
        Some((Line::new(s, rate), self.next_fit(s, rate)))
    }

    /// The line that follows `current` from sample `s` (module docs).
    pub(crate) fn refit(&mut self, s: Sample, current: Line) -> (Line, u64) {
        let here = current.map(s.ticks);
        let offset = s.ns as i64 - here as i64;
        let Some(rate) = self.rate_to(s).filter(|_| offset.abs() <= STEP_NS) else {
            // A step (or a counter that went back): restart the baseline here.
            self.base = s;
            let rate = current.rate();
            return (Line::new(s, rate), self.next_fit(s, rate));
        };
        let next = self.next_fit(s, rate);
        let interval_ns = (next.saturating_sub(s.ticks)) as f64 * rate;
        let slew = (offset as f64 / interval_ns).clamp(-MAX_SLEW, MAX_SLEW);
        let anchor = Sample {
            ticks: s.ticks,
            ns: here,
        };
        (Line::new(anchor, rate * (1.0 + slew)), next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3 GHz counter whose true rate is `1/3` ns per tick, plus `skew`.
    fn truth(ticks: u64, skew: f64) -> u64 {
        1_000_000_000 + (ticks as f64 * (1.0 / 3.0) * (1.0 + skew)) as u64
    }

    fn sample_at(ticks: u64, skew: f64) -> Sample {
        Sample {
            ticks,
            ns: truth(ticks, skew),
        }
    }

    #[test]
    fn first_line_needs_a_moving_plausible_counter() {
        let base = sample_at(1_000, 0.0);
        let mut fit = Fit::new(base);
        assert!(fit.first_line(base).is_none(), "no baseline yet");
        let stuck = Sample {
            ticks: 1_000,
            ns: base.ns + 5_000_000,
        };
        assert!(fit.first_line(stuck).is_none(), "the counter did not move");
        let (line, next) = fit.first_line(sample_at(15_001_000, 0.0)).unwrap();
        assert!((line.rate() - 1.0 / 3.0).abs() < 1e-9);
        assert!(next > 15_001_000);
        // A tick later than the anchor maps onto the true clock.
        let t = 18_001_000;
        assert!((line.map(t) as i64 - truth(t, 0.0) as i64).abs() <= 2);
    }

    #[test]
    fn refits_slew_continuously_towards_the_system_clock() {
        // The first line is 20 ppm fast (a noisy first sample): refits must
        // bring it back without ever stepping.
        let mut fit = Fit::new(sample_at(0, 0.0));
        let (mut line, mut next) = fit.first_line(sample_at(15_000_000, 0.0)).unwrap();
        line.rate_q32 = (line.rate_q32 as f64 * (1.0 + 20e-6)) as u64;
        let mut worst_late = 0i64;
        for _ in 0..200 {
            let s = sample_at(next, 0.0);
            let before = line.map(s.ticks);
            let (new, n) = fit.refit(s, line);
            assert_eq!(new.map(s.ticks), before, "continuous at the refit");
            assert!(new.rate_q32 > 0 && n > next);
            line = new;
            next = n;
            worst_late = (line.map(next) as i64 - truth(next, 0.0) as i64).abs();
        }
        assert!(
            worst_late < 1_000,
            "converged to within 1 µs: {worst_late} ns off"
        );
    }

    #[test]
    fn a_large_offset_steps_and_restarts_the_baseline() {
        let mut fit = Fit::new(sample_at(0, 0.0));
        let (line, next) = fit.first_line(sample_at(15_000_000, 0.0)).unwrap();
        // A suspend: the system clock moved 10 s more than the counter.
        let s = Sample {
            ticks: next,
            ns: truth(next, 0.0) + 10_000_000_000,
        };
        let (stepped, _) = fit.refit(s, line);
        assert_eq!(stepped.map(s.ticks), s.ns);
        assert_eq!(fit.base, s);
    }

    #[test]
    fn a_line_maps_readings_before_its_anchor() {
        let line = Line::new(sample_at(3_000_000, 0.0), 1.0 / 3.0);
        let earlier = 2_999_997;
        assert_eq!(line.map(earlier), line.anchor_ns - 1);
    }

    #[test]
    fn spans_map_like_their_two_ends() {
        let line = Line::new(sample_at(3_000_000, 0.0), 1.0 / 3.0);
        for (a, b) in [
            (3_000_000, 3_000_000),
            (2_999_000, 3_000_500),
            (4_000_000, 4_000_001),
            (4_000_000, 4_000_000 + (1 << 40)),
        ] {
            let (s, e) = line.map_span(a, b);
            assert_eq!(s, line.map(a));
            assert!(
                e.abs_diff(line.map(b)) <= 1,
                "{a} {b}: {e} vs {}",
                line.map(b)
            );
        }
        // A product too wide for 64 bits falls back to mapping the end.
        let (_, e) = line.map_span(0, u64::MAX);
        assert_eq!(e, line.map(u64::MAX));
        // An end before the start (another CPU's counter) maps on its own.
        let (s, e) = line.map_span(5_000_000, 4_999_000);
        assert_eq!((s, e), (line.map(5_000_000), line.map(4_999_000)));
    }

    #[test]
    fn now_follows_the_system_boot_clock() {
        // Bracket each reading by the system clock: whatever the scheduler
        // does, a correct clock lies inside the bracket (plus tolerance for
        // the fit's error). Runs past the first fit and several refits.
        let until = system_now() + 40_000_000;
        let mut last = 0;
        let mut reads = 0u64;
        while system_now() < until {
            let before = system_now();
            let t = super::now();
            let after = system_now();
            assert!(t >= last, "went back: {last} then {t}");
            assert!(
                t + 20_000 >= before && t <= after + 20_000,
                "{t} not within 20 µs of [{before}, {after}] (source {:?})",
                source()
            );
            last = t;
            reads += 1;
        }
        assert!(reads > 1000);
        if counter_is_invariant() && std::env::var("ROCWASM_CLOCK").as_deref() != Ok("os") {
            assert_eq!(
                source(),
                Source::Counter,
                "the counter is in use after 40 ms"
            );
        }
    }
}
