//! Timestamps and thread ids, as the SDK reports them.
//!
//! Every record's timestamp is `CLOCK_BOOTTIME` in nanoseconds: unlike
//! `CLOCK_MONOTONIC` it keeps counting across suspend, and it is what the ROCm
//! runtimes use, so our host-side stamps and the GPU's profiling stamps (which
//! the runtime converts to the system domain) share one time line.
//!
//! Thread ids are the kernel's `gettid()` values (what rocprofv3 prints as
//! `Thread_Id`), cached per thread because a thread's id never changes.

use rustix::time::{clock_gettime, ClockId};

/// Nanoseconds of `CLOCK_BOOTTIME`.
#[inline]
pub fn now() -> u64 {
    let ts = clock_gettime(ClockId::Boottime);
    // Boot time is never negative; the casts cannot lose information.
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

thread_local! {
    static TID: u64 = rustix::thread::gettid().as_raw_nonzero().get() as u64;
}

/// The kernel thread id of the calling thread.
#[inline]
pub fn thread_id() -> u64 {
    TID.with(|t| *t)
}

/// The process id, which is also the kernel thread id of the main thread.
/// External correlation ids fall back to this thread's stack.
pub fn main_thread_id() -> u64 {
    rustix::process::getpid().as_raw_nonzero().get() as u64
}

/// True when `tid` names a live thread of this process.
pub fn thread_exists(tid: u64) -> bool {
    if tid == 0 || tid > i32::MAX as u64 {
        return false;
    }
    tid == thread_id() || std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_monotonic_and_nonzero() {
        let a = now();
        let b = now();
        assert!(a > 0 && b >= a);
    }

    #[test]
    fn thread_ids() {
        let me = thread_id();
        assert!(thread_exists(me));
        assert!(thread_exists(main_thread_id()));
        assert!(!thread_exists(0));
        assert!(!thread_exists(u64::MAX));
        let other = std::thread::spawn(thread_id).join().unwrap();
        assert_ne!(other, me);
    }
}
