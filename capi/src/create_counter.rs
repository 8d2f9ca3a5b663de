//! `rocprofiler_create_counter`: a derived counter a tool defines at run
//! time, an expression over the agent's counters
//! ([`crate::counter_info::Arch::define`]). It gets an id after every
//! definitions file's, is listed among the agent's counters from then on,
//! and is collected, described and checked against the one-pass limits as
//! any derived counter.

use std::ffi::c_char;

use rocwasm_core::Status;

use crate::abi::Handle;
use crate::counter_info;
use crate::guard::guard;
use crate::status::Code;

/// `len` bytes at `ptr` as text (INVALID_ARGUMENT for NULL with a length,
/// or for bytes that are not UTF-8).
///
/// # Safety
/// Non-null `ptr` must point to `len` readable bytes.
unsafe fn text<'a>(ptr: *const c_char, len: usize) -> Result<&'a str, Status> {
    if ptr.is_null() {
        return if len == 0 {
            Ok("")
        } else {
            Err(Status::InvalidArgument)
        };
    }
    // SAFETY: the caller's `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|_| Status::InvalidArgument)
}

/// `rocprofiler_create_counter`: defines counter `name` as `expr` on the
/// agent's architecture and writes its id. AGENT_NOT_FOUND for an agent
/// that is no GPU of the run; INVALID_ARGUMENT, with the reason on standard
/// error, for a name the architecture has, an expression that does not
/// parse or that names no counter of it.
///
/// # Safety
/// `name`, `expr` and `description` must point to their lengths' bytes
/// (`description` may be NULL); `counter_id` must be NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rocprofiler_create_counter(
    name: *const c_char,
    name_len: usize,
    expr: *const c_char,
    expr_len: usize,
    description: *const c_char,
    description_len: usize,
    agent: Handle,
    counter_id: *mut Handle,
) -> Code {
    guard("rocprofiler_create_counter", || {
        if name.is_null() || expr.is_null() || counter_id.is_null() {
            return Err(Status::InvalidArgument);
        }
        // SAFETY: the caller's strings with their lengths.
        let (name, expr, description) = unsafe {
            (
                text(name, name_len)?,
                text(expr, expr_len)?,
                text(description, description_len)?,
            )
        };
        let arch = counter_info::arch_of(agent.handle).ok_or(Status::AgentNotFound)?;
        let arch = counter_info::arch(&arch).ok_or(Status::AgentArchNotSupported)?;
        let id = arch.define(name, expr, description)?;
        // SAFETY: checked non-null; the caller's handle.
        unsafe { (*counter_id).handle = id };
        Ok(())
    })
}
