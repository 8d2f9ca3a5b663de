//! `external_correlation.h`: the per-thread stacks of external ids and the
//! request service, both the engine's (it falls back to the main thread's
//! value as the SDK does).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use rocwasm_core::{
    ContextId, ExternalCorrelationKind, ExternalCorrelationRequest, ExternalCorrelationSink, Status,
};

use crate::abi::{Handle, UserData};
use crate::buffer::slice;
use crate::guard::guard;
use crate::operations;
use crate::state::engine;
use crate::status::Code;

pub use crate::abi::RequestCallback;

struct CRequestSink {
    callback: RequestCallback,
    data: usize,
}

impl ExternalCorrelationSink for CRequestSink {
    fn request(&self, r: &ExternalCorrelationRequest) -> Option<u64> {
        // The operation in the SDK's numbering, through the kind's buffer map.
        let op = rocwasm_ids::BufferTracingKind::from_name(r.kind.name())
            .map_or(r.operation as i32, |k| {
                operations::buffer(k).to_sdk(r.operation)
            });
        let mut value = UserData { value: 0 };
        let answered =
            crate::guard::catching("a native tool's external-correlation request", || {
                let context = Handle {
                    handle: r.context.0,
                };
                let value = &mut value as *mut UserData;
                crate::foreign::call_tool("a native tool's external-correlation request", || {
                    // SAFETY: the tool's callback with the documented
                    // arguments; `value` outlives the call.
                    unsafe {
                        (self.callback)(
                            r.thread_id,
                            context,
                            r.kind.raw() as c_int,
                            op,
                            r.internal_correlation_id,
                            value,
                            self.data as *mut c_void,
                        )
                    }
                })
            })
            .flatten();
        // 0: the tool set a value; non-zero: use the pushed one.
        // SAFETY: reading the union's number, which covers all 64 bits.
        (answered == Some(0)).then_some(unsafe { value.value })
    }
}

/// `rocprofiler_configure_external_correlation_id_request_service`.
///
/// # Safety
/// `kinds` must point to `kinds_count` values (or be NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_configure_external_correlation_id_request_service(
    context_id: Handle,
    kinds: *const c_int,
    kinds_count: usize,
    callback: Option<RequestCallback>,
    callback_args: *mut c_void,
) -> Code {
    guard(
        "rocprofiler_configure_external_correlation_id_request_service",
        || {
            let callback = callback.ok_or(Status::InvalidArgument)?;
            // SAFETY: the caller passes `kinds_count` readable values.
            let raw = unsafe { slice(kinds, kinds_count) };
            let kinds = raw
                .iter()
                .map(|&k| {
                    u32::try_from(k)
                        .ok()
                        .and_then(ExternalCorrelationKind::from_raw)
                        .ok_or(Status::KindNotFound)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let sink = Arc::new(CRequestSink {
                callback,
                data: callback_args as usize,
            });
            engine()?.configure_external_correlation_request(
                ContextId(context_id.handle),
                &kinds,
                sink,
            )
        },
    )
}

/// `rocprofiler_push_external_correlation_id`.
#[no_mangle]
pub extern "C" fn rocprofiler_push_external_correlation_id(
    context: Handle,
    tid: u64,
    external_correlation_id: UserData,
) -> Code {
    guard("rocprofiler_push_external_correlation_id", || {
        // SAFETY: the union's number covers all 64 bits of either member.
        let value = unsafe { external_correlation_id.value };
        engine()?.push_external_correlation_id(ContextId(context.handle), tid, value)
    })
}

/// `rocprofiler_pop_external_correlation_id`: the popped value, if the
/// pointer is not NULL.
///
/// # Safety
/// `external_correlation_id` must be NULL or point to writable memory.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_pop_external_correlation_id(
    context: Handle,
    tid: u64,
    external_correlation_id: *mut UserData,
) -> Code {
    guard("rocprofiler_pop_external_correlation_id", || {
        let value = engine()?.pop_external_correlation_id(ContextId(context.handle), tid)?;
        if !external_correlation_id.is_null() {
            // SAFETY: checked non-null; the caller passes writable memory.
            unsafe { (*external_correlation_id).value = value };
        }
        Ok(())
    })
}
