//! No panic crosses into C: every exported function runs its body through
//! [`guard`], which turns a panic into `ROCPROFILER_STATUS_ERROR` and a line
//! on standard error. Unwinding out of an `extern "C"` function would abort
//! the application; a profiler must never take it down.

use crate::status::{code, Code};
use rocwasm_core::Status;

/// Runs `body`, mapping `Err(status)` to its C code and a panic to `ERROR`.
pub fn guard(function: &str, body: impl FnOnce() -> Result<(), Status>) -> Code {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => crate::status::SUCCESS,
        Ok(Err(status)) => code(status),
        Err(_) => {
            eprintln!("rocwasm: {function} panicked; it returns ROCPROFILER_STATUS_ERROR");
            code(Status::Error)
        }
    }
}

/// As [`guard`] for callbacks into our own code from the engine (deliveries,
/// callback records): a panic is reported once per call site and swallowed.
pub fn quietly(what: &str, body: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).is_err() {
        eprintln!("rocwasm: {what} panicked; the rest of the run goes on");
    }
}

/// Runs `body` (a call into a tool), `None` when it panicked.
pub fn catching<R>(what: &str, body: impl FnOnce() -> R) -> Option<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(r) => Some(r),
        Err(_) => {
            eprintln!("rocwasm: {what} panicked");
            None
        }
    }
}
