//! `context.h`: contexts are the engine's, one to one. A context a tool
//! creates while it is being configured is that tool's (see
//! [`crate::state`]).

use std::ffi::c_int;

use rocwasm_core::{ContextId, Status};

use crate::abi::Handle;
use crate::guard::guard;
use crate::state::{self, engine};
use crate::status::Code;

/// `rocprofiler_create_context`.
///
/// # Safety
/// `context_id` must be NULL or point to a writable `rocprofiler_context_id_t`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_create_context(context_id: *mut Handle) -> Code {
    guard("rocprofiler_create_context", || {
        if context_id.is_null() {
            return Err(Status::InvalidArgument);
        }
        // A tool's own while it configures; otherwise (a tool calling from
        // elsewhere) the engine's.
        let ctx = match state::current_tool() {
            Some(tool) => tool.create_context(engine()?)?,
            None => engine()?.create_context()?,
        };
        // Its marker records are numbered as the SDK numbers them.
        engine()?.number_markers_as_the_sdk(ctx)?;
        // SAFETY: checked non-null; the caller passes a writable handle.
        unsafe { (*context_id).handle = ctx.0 };
        Ok(())
    })
}

/// `rocprofiler_start_context`.
#[no_mangle]
pub extern "C" fn rocprofiler_start_context(context_id: Handle) -> Code {
    guard("rocprofiler_start_context", || {
        let ctx = ContextId(context_id.handle);
        engine()?.start_context(ctx)?;
        crate::device_counting::on_start(ctx);
        Ok(())
    })
}

/// `rocprofiler_stop_context`.
#[no_mangle]
pub extern "C" fn rocprofiler_stop_context(context_id: Handle) -> Code {
    guard("rocprofiler_stop_context", || {
        engine()?.stop_context(ContextId(context_id.handle))
    })
}

/// `rocprofiler_context_is_active`: 1 when started, else 0.
///
/// # Safety
/// `status` must be NULL or point to a writable `int`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_context_is_active(
    context_id: Handle,
    status: *mut c_int,
) -> Code {
    guard("rocprofiler_context_is_active", || {
        if status.is_null() {
            return Err(Status::InvalidArgument);
        }
        let active = engine()?.is_context_active(ContextId(context_id.handle))?;
        // SAFETY: checked non-null; the caller passes a writable int.
        unsafe { *status = c_int::from(active) };
        Ok(())
    })
}

/// `rocprofiler_context_is_valid`: 1 when the context exists and has a
/// service configured (it could be started), else 0.
///
/// # Safety
/// `status` must be NULL or point to a writable `int`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_context_is_valid(
    context_id: Handle,
    status: *mut c_int,
) -> Code {
    guard("rocprofiler_context_is_valid", || {
        if status.is_null() {
            return Err(Status::InvalidArgument);
        }
        let engine = engine()?;
        let ctx = ContextId(context_id.handle);
        let valid = engine.contexts().contains(&ctx) && engine.context_has_services(ctx);
        // SAFETY: checked non-null; the caller passes a writable int.
        unsafe { *status = c_int::from(valid) };
        Ok(())
    })
}
