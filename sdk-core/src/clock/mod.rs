//! Timestamps and thread ids, as the SDK reports them.
//!
//! Every record's timestamp is `CLOCK_BOOTTIME` in nanoseconds: unlike
//! `CLOCK_MONOTONIC` it keeps counting across suspend, and it is what the ROCm
//! runtimes use, so our host-side stamps and the GPU's profiling stamps (which
//! the runtime converts to the system domain) share one time line.
//!
//! A traced API call reads the clock twice, and through the vDSO each read
//! of `CLOCK_BOOTTIME` costs about as much as the rest of the tracing
//! together (18–50 ns, depending on the machine and its virtualisation). So
//! where the CPU has an invariant time-stamp counter, [`now`] reads the
//! counter instead (about 8 ns) and maps its ticks onto `CLOCK_BOOTTIME`
//! nanoseconds with a line fitted to pairs of readings of both clocks — see
//! [`counter`] for the fit and how it keeps the result continuous and within
//! microseconds of the system clock. Until the first fit exists (the first
//! few milliseconds) and wherever there is no usable counter, [`now`] is the
//! system clock itself. `ROCWASM_CLOCK=os` forces the system clock.
//!
//! Thread ids are the kernel's `gettid()` values (what rocprofv3 prints as
//! `Thread_Id`), cached per thread because a thread's id never changes.

mod counter;
mod system;

pub use counter::{source, Reading, Source};
pub use system::system_now;

/// Nanoseconds of `CLOCK_BOOTTIME` (see the module docs for how it is read).
#[inline]
pub fn now() -> u64 {
    counter::now()
}

/// Reads the clock without converting: for a start and an end that
/// [`span`] converts together (a traced call's two timestamps), which saves
/// the second look at the fit.
#[inline]
pub fn read() -> Reading {
    counter::read()
}

/// `start` and `end` in `CLOCK_BOOTTIME` nanoseconds; `end` is never before
/// `start`.
#[inline]
pub fn span(start: Reading, end: Reading) -> (u64, u64) {
    let (s, e) = counter::span(start, end);
    (s, e.max(s))
}

thread_local! {
    /// The calling thread's id, 0 until first asked.
    static TID: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The kernel thread id of the calling thread (or of the thread it acts
/// for, see [`act_for_thread`]).
#[inline]
pub fn thread_id() -> u64 {
    TID.with(|t| match t.get() {
        0 => {
            let tid = rustix::thread::gettid().as_raw_nonzero().get() as u64;
            t.set(tid);
            tid
        }
        tid => tid,
    })
}

/// From now on the calling thread reports `tid` as its thread id
/// ([`thread_id`]), for work it does on behalf of that thread; call it
/// before the thread's first traced event.
///
/// The tool library finalizes on a thread of its own (the exiting thread's
/// thread-locals are gone by the time `atexit` handlers run), while the SDK
/// runs a tool's `finalize` on the exiting thread: acting for it, the
/// finalizer's `rocprofiler_get_thread_id` names the thread whose external
/// correlation stack the tool pushed onto, as on the SDK.
pub fn act_for_thread(tid: u64) {
    TID.with(|t| t.set(tid));
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
    fn spans_are_ordered_and_agree_with_now() {
        let before = now();
        let a = read();
        let b = read();
        let after = now();
        let (s, e) = span(a, b);
        // A refit between the reads may move the line by a few ns.
        assert!(s <= e, "{s} {e}");
        assert!(
            before <= s + 1_000 && e <= after + 1_000,
            "{before} {s} {e} {after}"
        );
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
