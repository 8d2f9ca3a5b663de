//! The system clock: `CLOCK_BOOTTIME` read through `clock_gettime`. It is
//! what the clock falls back to, and what the counter's line is fitted to.

use rustix::time::{clock_gettime, ClockId};

/// Nanoseconds of `CLOCK_BOOTTIME`, read from the system clock.
#[inline]
pub fn system_now() -> u64 {
    let ts = clock_gettime(ClockId::Boottime);
    // Boot time is never negative; the casts cannot lose information.
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}
