//! Signals: a 64-bit value, waits on conditions, asynchronous handlers, and
//! the profiling timestamps of the packet or copy that last completed them.
//!
//! A `hsa_signal_t` handle is a number never handed out twice in the
//! process (not the signal's address, which the allocator reuses); a
//! registry maps live handles to their `Arc`, so a stale or forged handle is
//! an error rather than a wild pointer, and a handle kept past
//! `hsa_signal_destroy` never silently names some newer signal. Every
//! change of any signal bumps one process-wide generation counter and wakes
//! all waiters (if any thread waits), which re-check their own condition:
//! simple, and cheap for the handful of threads a test application runs.
//! Async handlers (`hsa_amd_signal_async_handler`) run on one runtime
//! thread, like the real runtime's event thread, which looks for work every
//! 50 µs while work keeps coming (see `async_thread`). Each triggered
//! call is counted from the moment the signal change queues it until it has
//! run, so that shutdown (`drain_async_handlers`, before tools' `OnUnload`)
//! can wait for every completion the application has already observed.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use crate::ffi::*;
use crate::util::out;

/// Start and end ticks of the work that completed a signal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Times {
    pub start: u64,
    pub end: u64,
    /// Set when a kernel/barrier on a profiling-enabled queue completed it.
    pub dispatch_profiled: bool,
    /// Set when an async copy with copy profiling enabled completed it.
    pub copy_profiled: bool,
    /// The dispatch that completed it, as the counter model sees it.
    pub launch: Option<sim_scenario::Launch>,
}

struct AsyncHandler {
    condition: u32,
    compare: i64,
    handler: AsyncHandlerFn,
    arg: usize,
}

type AsyncHandlerFn = unsafe extern "C" fn(hsa_signal_value_t, *mut c_void) -> bool;

pub struct Signal {
    handle: u64,
    value: AtomicI64,
    times: Mutex<Times>,
    handlers: Mutex<Vec<AsyncHandler>>,
}

/// The next handle; starts high so a handle is never mistaken for a small
/// integer (or the null signal, 0), and steps by 8 so handles are aligned
/// as the real runtime's (addresses of `amd_signal_t`) are.
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(0x5160_0000_0000);
static REGISTRY: OnceLock<[Shard; SHARDS]> = OnceLock::new();
static GENERATION: Mutex<u64> = Mutex::new(0);
static CHANGED: Condvar = Condvar::new();
/// Threads blocked in [`wait_until`]; changed only under [`GENERATION`].
static WAITERS: AtomicUsize = AtomicUsize::new(0);

/// Live signals by handle, in shards. A real `hsa_signal_load` is one load
/// from the signal's memory; here every signal call looks its handle up, so
/// the lookup must stay cheap when several threads poll signals while
/// others create and destroy them (a tool creates one per kernel dispatch):
/// one lock for the whole table made pollers queue behind a writer, often a
/// writer that the scheduler had preempted. Consecutive handles fall into
/// different shards; the hash is the workspace's `rustc-hash` (handles are
/// our own counters, nothing adversarial).
const SHARDS: usize = 64;
type Shard = RwLock<HashMap<u64, Arc<Signal>, rustc_hash::FxBuildHasher>>;

fn registry(handle: u64) -> &'static Shard {
    let shards = REGISTRY.get_or_init(|| std::array::from_fn(|_| Shard::default()));
    &shards[(handle / 8) as usize % SHARDS]
}

/// Creates a signal and returns its handle.
pub fn create(initial: i64) -> hsa_signal_t {
    let handle = NEXT_HANDLE.fetch_add(8, Ordering::Relaxed);
    let signal = Arc::new(Signal {
        handle,
        value: AtomicI64::new(initial),
        times: Mutex::default(),
        handlers: Mutex::default(),
    });
    registry(handle)
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(handle, signal);
    Handle { handle }
}

/// The signal behind a handle, if it is live.
pub fn get(handle: hsa_signal_t) -> Option<Arc<Signal>> {
    if handle.handle == 0 {
        return None;
    }
    registry(handle.handle)
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&handle.handle)
        .cloned()
}

fn destroy(handle: hsa_signal_t) -> bool {
    registry(handle.handle)
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&handle.handle)
        .is_some()
}

/// Wakes every waiter after any signal changed.
///
/// Only when some thread waits: `Condvar::notify_all` is a system call
/// even with no waiter, and every completed dispatch (and, under a tool,
/// each of its completion handlers) changes a signal. No wake-up is lost:
/// a waiter counts itself in [`WAITERS`] under [`GENERATION`]'s lock before
/// it sleeps, and this bumps the generation under the same lock, after the
/// signal's new value was stored; so either the waiter's check of its
/// condition comes after the bump (and sees the value) or its count does
/// (and it is woken).
pub fn notify_all() {
    let mut generation = GENERATION.lock().unwrap_or_else(|p| p.into_inner());
    *generation = generation.wrapping_add(1);
    if WAITERS.load(Ordering::Relaxed) > 0 {
        CHANGED.notify_all();
    }
}

/// Blocks until `ready()` holds or `deadline` passes; returns whether it holds.
/// `ready` is re-evaluated after every signal change anywhere.
pub fn wait_until(mut ready: impl FnMut() -> bool, deadline: Option<Instant>) -> bool {
    let mut generation = GENERATION.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if ready() {
            return true;
        }
        let seen = *generation;
        // Wake at least every 50 ms even without a change, as a safety net.
        let now = Instant::now();
        let mut slice = Duration::from_millis(50);
        if let Some(d) = deadline {
            if now >= d {
                return false;
            }
            slice = slice.min(d - now);
        }
        WAITERS.fetch_add(1, Ordering::Relaxed);
        let (g, _) = CHANGED
            .wait_timeout_while(generation, slice, |g| *g == seen)
            .unwrap_or_else(|p| p.into_inner());
        WAITERS.fetch_sub(1, Ordering::Relaxed);
        generation = g;
    }
}

pub fn condition_holds(condition: u32, value: i64, compare: i64) -> bool {
    match condition {
        HSA_SIGNAL_CONDITION_EQ => value == compare,
        HSA_SIGNAL_CONDITION_NE => value != compare,
        HSA_SIGNAL_CONDITION_LT => value < compare,
        HSA_SIGNAL_CONDITION_GTE => value >= compare,
        _ => false,
    }
}

impl Signal {
    pub fn load(&self) -> i64 {
        self.value.load(Ordering::Acquire)
    }

    /// Applies `f` to the value atomically, then wakes waiters and fires
    /// handlers; returns the previous value.
    pub fn update(&self, f: impl Fn(i64) -> i64) -> i64 {
        let previous = self
            .value
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(f(v)))
            .unwrap_or_else(|v| v);
        self.changed();
        previous
    }

    fn changed(&self) {
        notify_all();
        let value = self.load();
        let mut handlers = self.handlers.lock().unwrap_or_else(|p| p.into_inner());
        let (ready, waiting): (Vec<_>, Vec<_>) = handlers
            .drain(..)
            .partition(|h| condition_holds(h.condition, value, h.compare));
        *handlers = waiting;
        drop(handlers);
        for h in ready {
            // The job is counted before it is queued, and so before whatever
            // this change lets the application observe (e.g. a barrier that
            // completes its signal next): a shutdown that follows sees it.
            // A failed send drops the job and with it the count.
            async_thread()
                .send(Job {
                    signal_value: value,
                    handler: h,
                    signal: self.self_handle(),
                    counted: InFlight::count(),
                })
                .ok();
        }
    }

    fn self_handle(&self) -> hsa_signal_t {
        Handle {
            handle: self.handle,
        }
    }

    pub fn set_times(&self, times: Times) {
        *self.times.lock().unwrap_or_else(|p| p.into_inner()) = times;
    }

    pub fn times(&self) -> Times {
        *self.times.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Completes one piece of work: records its times, then decrements.
    pub fn complete(&self, times: Times) {
        self.set_times(times);
        self.update(|v| v - 1);
    }

    /// Waits (really) until the value satisfies the condition.
    pub fn wait(&self, condition: u32, compare: i64, deadline: Option<Instant>) -> i64 {
        wait_until(
            || condition_holds(condition, self.load(), compare),
            deadline,
        );
        self.load()
    }
}

/// Handler calls queued or running on the async thread.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// One handler call counted in [`IN_FLIGHT`]: taken when the call is queued,
/// released (and waiters woken) once it has run and, if it asked to, been
/// re-armed, so the count never reads zero between a call and its re-arm.
struct InFlight(());

impl InFlight {
    fn count() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
        notify_all();
    }
}

/// Waits (at most `limit`) until no async handler is queued or running, so
/// that tools unloading at shutdown have seen every completion.
pub fn drain_async_handlers(limit: Duration) -> bool {
    if std::thread::current().name() == Some("sim-hsa-async") {
        return IN_FLIGHT.load(Ordering::Acquire) <= 1;
    }
    wait_until(
        || IN_FLIGHT.load(Ordering::Acquire) == 0,
        Some(Instant::now() + limit),
    )
}

struct Job {
    signal: hsa_signal_t,
    signal_value: i64,
    handler: AsyncHandler,
    counted: InFlight,
}

/// How often the async thread looks for work while it is busy (see
/// [`async_thread`]), and how long without work before it blocks instead.
const ASYNC_POLL: Duration = Duration::from_micros(50);
const ASYNC_IDLE_BEFORE_BLOCKING: Duration = Duration::from_millis(20);

/// The runtime thread that calls async handlers.
///
/// While handlers keep coming (a completion every few microseconds when a
/// tool times every dispatch) it polls its queue every [`ASYNC_POLL`]
/// rather than blocking on it: a blocked receiver costs the sender, the
/// simulated GPU's queue thread, a futex wake-up per completion, which on
/// a small machine was a sixth of that thread's time and so of the
/// simulated GPU's speed. A handler runs at most about that much later,
/// as one behind a real GPU's interrupt would; nothing the application
/// waits for depends on it. After [`ASYNC_IDLE_BEFORE_BLOCKING`] without
/// work it blocks, so an idle runtime does not wake every 50 µs.
fn async_thread() -> &'static std::sync::mpsc::Sender<Job> {
    static SENDER: OnceLock<std::sync::mpsc::Sender<Job>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sim-hsa-async".into())
            .spawn(move || {
                use std::sync::mpsc::TryRecvError;
                let mut idle_since: Option<Instant> = None;
                loop {
                    let job = match rx.try_recv() {
                        Ok(job) => job,
                        Err(TryRecvError::Disconnected) => break,
                        Err(TryRecvError::Empty) => {
                            let since = *idle_since.get_or_insert_with(Instant::now);
                            if since.elapsed() < ASYNC_IDLE_BEFORE_BLOCKING {
                                std::thread::sleep(ASYNC_POLL);
                                continue;
                            }
                            match rx.recv() {
                                Ok(job) => job,
                                Err(_) => break,
                            }
                        }
                    };
                    idle_since = None;
                    run_handler(job);
                }
            })
            .expect("spawn the async handler thread");
        tx
    })
}

/// Calls one queued handler, re-arming it if it asks to be.
fn run_handler(job: Job) {
    // SAFETY: the handler and its argument were registered by the
    // application through hsa_amd_signal_async_handler with this C
    // signature.
    let again = unsafe { (job.handler.handler)(job.signal_value, job.handler.arg as *mut c_void) };
    if again {
        if let Some(signal) = get(job.signal) {
            signal
                .handlers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(job.handler);
            signal.changed();
        }
    }
    // Only now is this call finished for drain_async_handlers.
    drop(job.counted);
}

/// Converts a timeout hint in ticks (ns) to a deadline.
fn deadline(timeout_hint: u64) -> Option<Instant> {
    (timeout_hint != u64::MAX).then(|| Instant::now() + Duration::from_nanos(timeout_hint))
}

pub extern "C" fn hsa_signal_create(
    initial_value: hsa_signal_value_t,
    _num_consumers: u32,
    _consumers: *const hsa_agent_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    out(signal, create(initial_value))
}

pub extern "C" fn hsa_amd_signal_create(
    initial_value: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    _attributes: u64,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    hsa_signal_create(initial_value, num_consumers, consumers, signal)
}

pub extern "C" fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t {
    if destroy(signal) {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_ERROR_INVALID_SIGNAL
    }
}

pub extern "C" fn hsa_signal_load(signal: hsa_signal_t) -> hsa_signal_value_t {
    get(signal).map_or(0, |s| s.load())
}

pub extern "C" fn hsa_signal_store(signal: hsa_signal_t, value: hsa_signal_value_t) {
    if let Some(s) = get(signal) {
        s.update(|_| value);
    }
}

pub extern "C" fn hsa_signal_silent_store(signal: hsa_signal_t, value: hsa_signal_value_t) {
    if let Some(s) = get(signal) {
        s.value.store(value, Ordering::Release);
    }
}

macro_rules! read_modify_write {
    ($($name:ident => |$old:ident, $arg:ident| $new:expr;)*) => {$(
        pub extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
            if let Some(s) = get(signal) {
                s.update(|$old| { let $arg = value; $new });
            }
        }
    )*};
}

read_modify_write! {
    hsa_signal_add => |v, x| v.wrapping_add(x);
    hsa_signal_subtract => |v, x| v.wrapping_sub(x);
    hsa_signal_and => |v, x| v & x;
    hsa_signal_or => |v, x| v | x;
    hsa_signal_xor => |v, x| v ^ x;
}

pub extern "C" fn hsa_signal_exchange(
    signal: hsa_signal_t,
    value: hsa_signal_value_t,
) -> hsa_signal_value_t {
    get(signal).map_or(0, |s| s.update(|_| value))
}

pub extern "C" fn hsa_signal_cas(
    signal: hsa_signal_t,
    expected: hsa_signal_value_t,
    value: hsa_signal_value_t,
) -> hsa_signal_value_t {
    get(signal).map_or(0, |s| s.update(|v| if v == expected { value } else { v }))
}

pub extern "C" fn hsa_signal_wait(
    signal: hsa_signal_t,
    condition: u32,
    compare_value: hsa_signal_value_t,
    timeout_hint: u64,
    _wait_state_hint: u32,
) -> hsa_signal_value_t {
    match get(signal) {
        Some(s) => s.wait(condition, compare_value, deadline(timeout_hint)),
        None => 0,
    }
}

pub extern "C" fn hsa_amd_signal_wait_any(
    signal_count: u32,
    signals: *const hsa_signal_t,
    conditions: *const u32,
    values: *const hsa_signal_value_t,
    timeout_hint: u64,
    _wait_hint: u32,
    satisfying_value: *mut hsa_signal_value_t,
) -> u32 {
    let n = signal_count as usize;
    let (signals, conditions, values) = (
        crate::util::slice(signals, n),
        crate::util::slice(conditions, n),
        crate::util::slice(values, n),
    );
    if signals.len() != n || conditions.len() != n || values.len() != n {
        return u32::MAX;
    }
    let live: Vec<Option<Arc<Signal>>> = signals.iter().map(|s| get(*s)).collect();
    let mut found = None;
    wait_until(
        || {
            found = live.iter().enumerate().find_map(|(i, s)| {
                let v = s.as_ref()?.load();
                condition_holds(conditions[i], v, values[i]).then_some((i, v))
            });
            found.is_some()
        },
        deadline(timeout_hint),
    );
    match found {
        Some((i, v)) => {
            if !satisfying_value.is_null() {
                out(satisfying_value, v);
            }
            i as u32
        }
        None => u32::MAX,
    }
}

pub extern "C" fn hsa_amd_signal_async_handler(
    signal: hsa_signal_t,
    condition: u32,
    value: hsa_signal_value_t,
    handler: Option<AsyncHandlerFn>,
    arg: *mut c_void,
) -> hsa_status_t {
    let Some(s) = get(signal) else {
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    };
    let Some(handler) = handler else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    s.handlers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(AsyncHandler {
            condition,
            compare: value,
            handler,
            arg: arg as usize,
        });
    // The condition may already hold.
    s.changed();
    HSA_STATUS_SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Slow on purpose: the drain must wait for it, not race it.
    unsafe extern "C" fn slow_handler(_value: hsa_signal_value_t, arg: *mut c_void) -> bool {
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: `arg` is the address of the test's static counter.
        let calls = unsafe { &*(arg as *const AtomicU32) };
        calls.fetch_add(1, Ordering::SeqCst) == 0 // re-arm once
    }

    #[test]
    fn drain_waits_for_triggered_handlers_and_their_re_arms() {
        static CALLS: AtomicU32 = AtomicU32::new(0);
        let s = create(1);
        let arg = &CALLS as *const AtomicU32 as *mut c_void;
        let status =
            hsa_amd_signal_async_handler(s, HSA_SIGNAL_CONDITION_LT, 1, Some(slow_handler), arg);
        assert_eq!(status, HSA_STATUS_SUCCESS);
        assert!(drain_async_handlers(Duration::from_secs(5)));
        assert_eq!(CALLS.load(Ordering::SeqCst), 0, "condition not met yet");
        // Completing the signal queues the call; the first call re-arms
        // (the condition still holds, so it is queued again at once).
        hsa_signal_store(s, 0);
        assert!(drain_async_handlers(Duration::from_secs(5)));
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            2,
            "the drain returned before the handler and its re-arm had run"
        );
        assert_eq!(IN_FLIGHT.load(Ordering::SeqCst), 0);
        assert_eq!(hsa_signal_destroy(s), HSA_STATUS_SUCCESS);
    }
}
