//! The boundary with native tools' code: C++ exceptions a tool lets escape
//! are caught here, at the call, instead of aborting the application.
//!
//! Rust cannot catch a foreign exception (`catch_unwind` aborts on one), and
//! one unwinding into a Rust frame that may not unwind aborts the process.
//! So every call into a tool — `rocprofiler_configure`, `initialize`,
//! `finalize`, tracing, buffer, request, iteration and hook callbacks — goes
//! through [`call_tool`]: a small C++ function (`shim/catching.cpp`) runs a
//! thunk that makes the call inside `try { … } catch (...)`. The thunk does
//! nothing but the call (through a `"C-unwind"` function pointer, so the
//! exception may pass its frame); everything Rust does around it stays
//! outside, under the usual panic guards. A caught exception is reported on
//! standard error, the first time per kind of call, and the run goes on as
//! the SDK's documentation says a failed call of that kind does (a
//! `configure` that threw opts the tool out, an `initialize` that threw
//! failed, …).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

extern "C" {
    /// `shim/catching.cpp`: runs `thunk(context)` inside try/catch; 0, or 1
    /// with the exception's `what()` in `what` when one was caught.
    fn rocwasm_capi_catching(
        thunk: unsafe extern "C-unwind" fn(*mut c_void),
        context: *mut c_void,
        what: *mut c_char,
        what_size: usize,
    ) -> c_int;
}

/// Makes `call` — one call into a native tool's code and nothing else —
/// and returns its result, or `None` when the tool let a C++ exception
/// escape (reported on standard error as thrown by `site`, once per site).
pub fn call_tool<R, F: FnOnce() -> R>(site: &str, call: F) -> Option<R> {
    struct Frame<F, R> {
        call: Option<F>,
        result: Option<R>,
    }
    unsafe extern "C-unwind" fn thunk<F: FnOnce() -> R, R>(frame: *mut c_void) {
        // SAFETY: `frame` is the `Frame` below, alive and not otherwise
        // borrowed for the duration of `rocwasm_capi_catching`.
        let frame = unsafe { &mut *(frame as *mut Frame<F, R>) };
        if let Some(call) = frame.call.take() {
            frame.result = Some(call());
        }
    }
    let mut frame = Frame {
        call: Some(call),
        result: None,
    };
    let mut what = [0 as c_char; 256];
    // SAFETY: the thunk matches the shim's `void (*)(void*)`; `frame` and
    // `what` outlive the call, and `what.len()` is its size.
    let caught = unsafe {
        rocwasm_capi_catching(
            thunk::<F, R>,
            &mut frame as *mut Frame<F, R> as *mut c_void,
            what.as_mut_ptr(),
            what.len(),
        )
    };
    if caught == 0 {
        return frame.result;
    }
    // SAFETY: the shim NUL-terminated `what` within its size.
    let what = unsafe { CStr::from_ptr(what.as_ptr()) }.to_string_lossy();
    report(site, &what);
    None
}

/// C++ exceptions caught, by call site.
static CAUGHT: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

fn report(site: &str, what: &str) {
    let mut caught = CAUGHT.lock().unwrap_or_else(|e| e.into_inner());
    let n = caught
        .get_or_insert_with(HashMap::new)
        .entry(site.to_string())
        .or_insert(0);
    *n += 1;
    if *n == 1 {
        eprintln!(
            "rocwasm: {site} threw a C++ exception ({what}); rocwasm caught it and the \
             application goes on (later ones from the same place are counted in the summary)"
        );
    }
}

/// Lines for the run's report: where tools threw, and how often.
pub fn caught_lines() -> Vec<String> {
    let caught = CAUGHT.lock().unwrap_or_else(|e| e.into_inner());
    let mut lines: Vec<String> = caught
        .iter()
        .flatten()
        .map(|(site, n)| format!("{site} threw {n} C++ exception(s), caught by rocwasm"))
        .collect();
    lines.sort();
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_returns_passes_its_result_through() {
        assert_eq!(call_tool("a test call", || 41 + 1), Some(42));
    }
}
