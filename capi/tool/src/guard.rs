//! The tool's two guards at the SDK's boundary: a status turned into an
//! error that says what failed ([`check`]), and a panic kept from
//! unwinding into the SDK ([`contained`]).

use rocprofiler_sdk_sys::api;

/// `Ok` for SUCCESS, else an error naming `what` and the SDK's text.
pub(crate) fn check(what: &str, status: api::Status) -> Result<(), String> {
    if status == 0 {
        return Ok(());
    }
    // SAFETY: the SDK returns a static string for any status.
    let text = unsafe { api::rocprofiler_get_status_string(status) };
    let text = if text.is_null() {
        format!("status {status}")
    } else {
        // SAFETY: a NUL-terminated static string.
        unsafe { std::ffi::CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    Err(format!("{what}: {text}"))
}

/// Runs the body of a function the SDK calls: a panic in rocwasm's code is
/// reported and turned into the function's default answer, never unwound
/// into the SDK (the functions are `"C-unwind"`, the type the SDK's
/// callbacks have, so nothing else stops it); `None` after a panic.
pub(crate) fn contained<R>(what: &str, body: impl FnOnce() -> R) -> Option<R> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).ok();
    if r.is_none() {
        eprintln!("rocwasm: the rocprofiler-sdk tool panicked in {what}; the application goes on");
    }
    r
}
