//! `dispatch_counting_service.h`: counters collected around each kernel
//! dispatch, chosen by the tool per dispatch.
//!
//! The flow: as a dispatch's packet is written (on the launching thread)
//! the tool library asks [`choose`]; each active context with a counting
//! service calls its tool's dispatch callback, which may pick a counter
//! configuration (and set user data). When the dispatch completes, the
//! tool library hands [`complete`] the GPU's counters for it; each chosen
//! configuration's counters are evaluated ([`crate::hardware`]) into one
//! `rocprofiler_counter_record_t` per counter instance, and
//!
//! - the callback service calls the tool's record callback with them, on
//!   the thread that saw the dispatch complete;
//! - the buffered service keeps them, after a
//!   `rocprofiler_dispatch_counting_service_record_t` header, for the
//!   buffer ([`crate::buffer::deliver_counting`]): delivered when they
//!   reach the buffer's watermark, when the buffer is flushed, and before
//!   the tool is finalized.
//!
//! A configuration for another agent than the dispatch's counts nothing
//! (said once), as the SDK skips it.

use std::ffi::c_void;
use std::sync::{Arc, RwLock};

use rocwasm_capi_convert::ids::async_correlation_to_c;
use rocwasm_capi_convert::records::dispatch_info_to_c;
use rocwasm_core::{BufferId, ContextId, KernelDispatch, Status};
use rocwasm_counters::Source;

use crate::abi::records::{CounterRecord, DispatchCountingData, DispatchCountingRecord};
use crate::abi::{Handle, UserData};
use crate::counter_config::{self, Config};
use crate::guard::guard;
use crate::state::engine;
use crate::status::Code;

/// `rocprofiler_dispatch_counting_service_cb_t`.
pub use crate::abi::api::DispatchCountingCallback as DispatchCallback;

/// `rocprofiler_dispatch_counting_record_cb_t`.
pub type RecordCallback =
    unsafe extern "C-unwind" fn(DispatchCountingData, *mut CounterRecord, usize, u64, *mut c_void);

/// Where a service's values go.
enum Delivery {
    Callback(RecordCallback, usize),
    Buffer(BufferId),
}

/// One context's counting service.
struct Service {
    ctx: ContextId,
    choose: DispatchCallback,
    choose_data: usize,
    delivery: Delivery,
}

static SERVICES: RwLock<Vec<Arc<Service>>> = RwLock::new(Vec::new());

/// What one context chose for one dispatch.
pub struct Chosen {
    service: Arc<Service>,
    config: Arc<Config>,
    user_data: u64,
    data: DispatchCountingData,
}

fn configure(ctx: ContextId, buffer: Option<BufferId>, service: Service) -> Result<(), Status> {
    engine()?.configure_dispatch_counting(ctx, buffer)?;
    SERVICES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::new(service));
    Ok(())
}

/// `rocprofiler_configure_buffer_dispatch_counting_service`: the values of
/// the dispatches `callback` chooses a configuration for go to the buffer
/// (CONTEXT_INVALID, BUFFER_NOT_FOUND, INVALID_ARGUMENT without a
/// callback, SERVICE_ALREADY_CONFIGURED the second time).
#[no_mangle]
pub extern "C" fn rocprofiler_configure_buffer_dispatch_counting_service(
    context_id: Handle,
    buffer_id: Handle,
    callback: Option<DispatchCallback>,
    callback_data_args: *mut c_void,
) -> Code {
    guard(
        "rocprofiler_configure_buffer_dispatch_counting_service",
        || {
            let choose = callback.ok_or(Status::InvalidArgument)?;
            if buffer_id.handle == 0 {
                return Err(Status::BufferNotFound);
            }
            let (ctx, buffer) = (ContextId(context_id.handle), BufferId(buffer_id.handle));
            configure(
                ctx,
                Some(buffer),
                Service {
                    ctx,
                    choose,
                    choose_data: callback_data_args as usize,
                    delivery: Delivery::Buffer(buffer),
                },
            )
        },
    )
}

/// `rocprofiler_configure_callback_dispatch_counting_service`: the values
/// of the dispatches `dispatch_callback` chooses a configuration for go to
/// `record_callback` (CONTEXT_INVALID, INVALID_ARGUMENT without both
/// callbacks, SERVICE_ALREADY_CONFIGURED the second time).
#[no_mangle]
pub extern "C" fn rocprofiler_configure_callback_dispatch_counting_service(
    context_id: Handle,
    dispatch_callback: Option<DispatchCallback>,
    dispatch_callback_args: *mut c_void,
    record_callback: Option<RecordCallback>,
    record_callback_args: *mut c_void,
) -> Code {
    guard(
        "rocprofiler_configure_callback_dispatch_counting_service",
        || {
            let choose = dispatch_callback.ok_or(Status::InvalidArgument)?;
            let record = record_callback.ok_or(Status::InvalidArgument)?;
            let ctx = ContextId(context_id.handle);
            configure(
                ctx,
                None,
                Service {
                    ctx,
                    choose,
                    choose_data: dispatch_callback_args as usize,
                    delivery: Delivery::Callback(record, record_callback_args as usize),
                },
            )
        },
    )
}

/// A dispatch's packet is being written: each of `contexts` (active, with
/// the external correlation id the dispatch carries in it) that has a
/// counting service asks its tool for a configuration. `dispatch` has the
/// dispatch's fields; `internal` is its correlation id.
pub fn choose(
    contexts: &[(ContextId, u64)],
    internal: u64,
    dispatch: &KernelDispatch,
) -> Vec<Chosen> {
    let services: Vec<Arc<Service>> = {
        let all = SERVICES.read().unwrap_or_else(|e| e.into_inner());
        all.iter()
            .filter(|s| contexts.iter().any(|(c, _)| *c == s.ctx))
            .cloned()
            .collect()
    };
    let mut chosen = Vec::new();
    for service in services {
        let external = contexts
            .iter()
            .find(|(c, _)| *c == service.ctx)
            .map_or(0, |(_, e)| *e);
        let data = DispatchCountingData {
            size: std::mem::size_of::<DispatchCountingData>() as u64,
            correlation_id: async_correlation_to_c(internal, external),
            start_timestamp: 0,
            end_timestamp: 0,
            dispatch_info: dispatch_info_to_c(dispatch),
        };
        let mut config = Handle { handle: 0 };
        let mut user_data = UserData { value: 0 };
        crate::foreign::call_tool("a native tool's dispatch counting callback", || {
            // SAFETY: the tool's callback with the documented arguments;
            // the out-parameters live across the call.
            unsafe {
                (service.choose)(
                    data,
                    &mut config,
                    &mut user_data,
                    service.choose_data as *mut c_void,
                )
            }
        });
        if config.handle == 0 {
            continue;
        }
        let Some(config) = counter_config::get(config.handle) else {
            crate::hardware::say_once(format!(
                "a dispatch counting callback chose counter configuration {}, which does not \
                 exist: the dispatch is not counted",
                config.handle
            ));
            continue;
        };
        if config.agent != dispatch.agent_id {
            crate::hardware::say_once(format!(
                "a dispatch counting callback chose a configuration for agent {} for a dispatch \
                 on agent {}: such dispatches are not counted",
                config.agent, dispatch.agent_id
            ));
            continue;
        }
        chosen.push(Chosen {
            service,
            config,
            // SAFETY: either member is 64 bits; the tool's value is kept
            // as it set it.
            user_data: unsafe { user_data.value },
            data,
        });
    }
    chosen
}

/// The dispatch completed at `start..end`; `source` reads its counters.
pub fn complete(chosen: Vec<Chosen>, start: u64, end: u64, source: &dyn Source) {
    for c in chosen {
        let data = DispatchCountingData {
            start_timestamp: start,
            end_timestamp: end,
            ..c.data
        };
        let mut records = Vec::new();
        for &id in &c.config.counters {
            c.config.arch.evaluate(id, source, |instance, value| {
                records.push(CounterRecord {
                    id: instance,
                    counter_value: value,
                    dispatch_id: data.dispatch_info.dispatch_id,
                    user_data: c.user_data,
                    agent_id: Handle {
                        handle: c.config.agent,
                    },
                });
            });
        }
        match c.service.delivery {
            Delivery::Callback(record, args) => {
                crate::foreign::call_tool(
                    "a native tool's dispatch counting record callback",
                    || {
                        // SAFETY: the tool's callback; `records` lives across
                        // the call.
                        unsafe {
                            record(
                                data,
                                records.as_mut_ptr(),
                                records.len(),
                                c.user_data,
                                args as *mut c_void,
                            )
                        }
                    },
                );
            }
            Delivery::Buffer(buffer) => {
                let header = DispatchCountingRecord {
                    size: std::mem::size_of::<DispatchCountingRecord>() as u64,
                    num_records: records.len() as u64,
                    correlation_id: data.correlation_id,
                    start_timestamp: start,
                    end_timestamp: end,
                    dispatch_info: data.dispatch_info,
                };
                crate::buffer::keep_counting(buffer, header, records);
            }
        }
    }
}
