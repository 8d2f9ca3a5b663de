//! `dispatch_counting_service.h`: configuring per-dispatch counter
//! collection. rocwasm counts the simulated GPU's counters for its own runs
//! (`--pmc`) but not yet for a tool's counter configurations, so the two
//! services are *accepted* as the SDK accepts them — a tool that configures
//! every service (AMD's generic test tool does) initializes and runs — and
//! produce no counter records. A context that counts says so once, on
//! standard error, when it is started: nothing is dropped without a word.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

use rocwasm_core::{BufferId, ContextId, Status};

use crate::abi::Handle;
use crate::guard::guard;
use crate::state::engine;
use crate::status::Code;

/// `rocprofiler_configure_buffer_dispatch_counting_service`: accepted for
/// an existing context and buffer (CONTEXT_INVALID, BUFFER_NOT_FOUND
/// otherwise, INVALID_ARGUMENT without a callback); no records follow.
#[no_mangle]
pub extern "C" fn rocprofiler_configure_buffer_dispatch_counting_service(
    context_id: Handle,
    buffer_id: Handle,
    callback: Option<unsafe extern "C" fn()>,
    _callback_data_args: *mut c_void,
) -> Code {
    guard(
        "rocprofiler_configure_buffer_dispatch_counting_service",
        || {
            callback.ok_or(Status::InvalidArgument)?;
            if buffer_id.handle == 0 {
                return Err(Status::BufferNotFound);
            }
            engine()?.configure_dispatch_counting(
                ContextId(context_id.handle),
                Some(BufferId(buffer_id.handle)),
            )
        },
    )
}

/// `rocprofiler_configure_callback_dispatch_counting_service`: accepted for
/// an existing context (CONTEXT_INVALID otherwise, INVALID_ARGUMENT without
/// both callbacks); neither callback is ever made.
#[no_mangle]
pub extern "C" fn rocprofiler_configure_callback_dispatch_counting_service(
    context_id: Handle,
    dispatch_callback: Option<unsafe extern "C" fn()>,
    _dispatch_callback_args: *mut c_void,
    record_callback: Option<unsafe extern "C" fn()>,
    _record_callback_args: *mut c_void,
) -> Code {
    guard(
        "rocprofiler_configure_callback_dispatch_counting_service",
        || {
            dispatch_callback.ok_or(Status::InvalidArgument)?;
            record_callback.ok_or(Status::InvalidArgument)?;
            engine()?.configure_dispatch_counting(ContextId(context_id.handle), None)
        },
    )
}

/// Says, once per process, that a started context's dispatch counting
/// yields nothing.
pub(crate) fn note_start(ctx: ContextId) {
    static SAID: AtomicBool = AtomicBool::new(false);
    let counts = engine().is_ok_and(|e| e.counts_dispatches(ctx));
    if counts && !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "rocwasm: context {} counts dispatches, but rocwasm does not collect hardware \
             counters yet: it gets no counter records",
            ctx.0
        );
    }
}
