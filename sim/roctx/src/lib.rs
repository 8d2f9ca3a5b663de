//! A simulated `libroctx64.so.4` (version node `ROCTX_4.1`): the legacy
//! roctx marker API that ROCm 5 applications link against.
//!
//! - `roctxMarkA(msg)`: an instantaneous marker;
//! - `roctxRangePushA(msg)` / `roctxRangePop()`: per-thread nested ranges;
//!   push returns the depth of the new range (0 for the outermost), pop
//!   returns the depth of the range it closed, or -1 when none is open;
//! - `roctxRangeStartA(msg)` / `roctxRangeStop(id)`: process-wide ranges that
//!   may start and stop on different threads; ids start at 1;
//! - `roctxProfilerPause(tid)` / `roctxProfilerResume(tid)`: ask a running
//!   profiler to stop or resume collecting (0: the whole process); without
//!   a profiler they do nothing and return 0.
//!
//! A profiler intercepts these by symbol interposition; the simulation only
//! keeps the bookkeeping that gives the return values their meaning, and
//! prints each event when `ROCWASM_SIM_LOG` is set.

#![allow(non_snake_case)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

thread_local! {
    static STACK: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static OPEN: Mutex<Option<HashMap<u64, String>>> = Mutex::new(None);

fn text(message: *const c_char) -> String {
    if message.is_null() {
        return String::new();
    }
    // SAFETY: roctx messages are NUL-terminated C strings (checked non-null).
    unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned()
}

fn log(event: std::fmt::Arguments) {
    if std::env::var_os("ROCWASM_SIM_LOG").is_some_and(|v| v != "0") {
        eprintln!("sim-roctx: {event}");
    }
}

/// `void roctxMarkA(const char* message)`: an instantaneous marker. Nothing
/// is recorded here; a profiler sees the call by interposing the symbol.
/// `message` is a NUL-terminated string or null (read as empty).
pub extern "C" fn roctxMarkA(message: *const c_char) {
    log(format_args!("mark {:?}", text(message)));
}

/// `int roctxRangePushA(const char* message)`: opens a nested range on the
/// calling thread and returns its depth (0 for the outermost). `message` is
/// a NUL-terminated string or null (read as empty).
pub extern "C" fn roctxRangePushA(message: *const c_char) -> i32 {
    let message = text(message);
    log(format_args!("push {message:?}"));
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.push(message);
        s.len() as i32 - 1
    })
}

/// `int roctxRangePop(void)`: closes the calling thread's innermost range
/// and returns its depth (the value its push returned), or -1 when the
/// thread has no open range.
pub extern "C" fn roctxRangePop() -> i32 {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        match s.pop() {
            Some(message) => {
                log(format_args!("pop {message:?}"));
                s.len() as i32
            }
            None => -1,
        }
    })
}

/// `roctx_range_id_t roctxRangeStartA(const char* message)`: opens a
/// process-wide range and returns its id (unique in the process, from 1),
/// which any thread may pass to [`roctxRangeStop`]. `message` is a
/// NUL-terminated string or null (read as empty).
pub extern "C" fn roctxRangeStartA(message: *const c_char) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let message = text(message);
    log(format_args!("start {id} {message:?}"));
    OPEN.lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(id, message);
    id
}

/// `void roctxRangeStop(roctx_range_id_t id)`: closes the range `id` opened
/// by [`roctxRangeStartA`]; an unknown or already closed id is only logged.
pub extern "C" fn roctxRangeStop(id: u64) {
    let closed = OPEN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .remove(&id);
    match closed {
        Some(message) => log(format_args!("stop {id} {message:?}")),
        None => log(format_args!("stop of unknown range {id}")),
    }
}

/// `int roctxProfilerPause(roctx_thread_id_t tid)`: asks a profiler to stop
/// collecting (`tid` 0: every thread). A profiler sees the call by
/// interposing the symbol; here it is only logged. Returns 0.
pub extern "C" fn roctxProfilerPause(tid: u64) -> i32 {
    log(format_args!("profiler pause {tid}"));
    0
}

/// `int roctxProfilerResume(roctx_thread_id_t tid)`: asks a profiler to
/// resume collecting (`tid` 0: every thread). Only logged here. Returns 0.
pub extern "C" fn roctxProfilerResume(tid: u64) -> i32 {
    log(format_args!("profiler resume {tid}"));
    0
}

/// `int roctxGetThreadId(roctx_thread_id_t* tid)`: the OS thread id.
///
/// # Safety
/// `tid` is null or points to a writable 64-bit id (the C contract).
pub unsafe extern "C" fn roctxGetThreadId(tid: *mut u64) -> i32 {
    if tid.is_null() {
        return -1;
    }
    // SAFETY: gettid has no preconditions.
    let id = unsafe { libc_gettid() };
    // SAFETY: the caller passes a valid pointer to a 64-bit id (checked non-null).
    unsafe { tid.write(id as u64) };
    0
}

extern "C" {
    #[link_name = "gettid"]
    fn libc_gettid() -> i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_pop_nest_per_thread() {
        let a = c"a".as_ptr();
        assert_eq!(roctxRangePushA(a), 0);
        assert_eq!(roctxRangePushA(a), 1);
        std::thread::spawn(move || {
            assert_eq!(roctxRangePushA(c"other".as_ptr()), 0);
            assert_eq!(roctxRangePop(), 0);
            assert_eq!(roctxRangePop(), -1);
        })
        .join()
        .unwrap();
        assert_eq!(roctxRangePop(), 1);
        assert_eq!(roctxRangePop(), 0);
        assert_eq!(roctxRangePop(), -1);
    }

    #[test]
    fn start_stop_ids_are_distinct() {
        let a = roctxRangeStartA(c"x".as_ptr());
        let b = roctxRangeStartA(std::ptr::null());
        assert_ne!(a, b);
        assert!(a >= 1 && b >= 1);
        roctxRangeStop(a);
        roctxRangeStop(b);
        assert!(OPEN.lock().unwrap().as_ref().unwrap().get(&a).is_none());
    }
}

/// Exports as assembly thunks so they keep the `ROCTX_4.1` version (rustc's
/// own anonymous version script would strip it from `#[no_mangle]` items).
macro_rules! export {
    ($($name:ident),*) => {$(
        core::arch::global_asm!(
            concat!(".globl ", stringify!($name)),
            concat!(".type ", stringify!($name), ",@function"),
            concat!(stringify!($name), ":"),
            "jmp {f}@PLT",
            concat!(".size ", stringify!($name), ", . - ", stringify!($name)),
            f = sym $name,
        );
    )*};
}

export!(
    roctxMarkA,
    roctxRangePushA,
    roctxRangePop,
    roctxRangeStartA,
    roctxRangeStop,
    roctxGetThreadId,
    roctxProfilerPause,
    roctxProfilerResume
);
