//! Agents, code objects and kernel symbols from the SDK, into the engine's
//! symbol table (which names every dispatch the outputs and plugins see).
//!
//! Agents are asked for once at initialisation
//! (`rocprofiler_query_available_agents`); code objects and kernel symbols
//! arrive through CODE_OBJECT callback tracing as the runtime loads them,
//! and go through the engine's `emit_*` so that chain stages tracing code
//! objects are called back as with interception. The SDK's structs are
//! read by `rocwasm_capi_convert` (`agents`, `symbols`), beside the C API's
//! way there.

use std::ffi::{c_int, c_void};

use rocprofiler_sdk_sys::enums::{
    rocprofiler_callback_phase as phase, rocprofiler_code_object_operation as co_op,
};
use rocprofiler_sdk_sys::{c_offsetof, c_sizeof, CallbackTracingRecord};
use rocprofiler_sdk_sys::{CodeObjectLoadData, KernelSymbolRegisterData};
use rocwasm_capi_convert::agents::{agent_from_c, AGENT};
use rocwasm_capi_convert::symbols::{code_object_from_c, kernel_symbol_from_c};
use rocwasm_core::Profiler;

/// Every agent the SDK lists, into `profiler`'s symbol table; the SDK's
/// status (0: success).
pub fn query_agents(profiler: &Profiler) -> i32 {
    unsafe extern "C-unwind" fn each(
        _version: c_int,
        agents: *mut *const c_void,
        n: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the profiler passed below, alive for the call.
        let profiler = unsafe { &*(data as *const Profiler) };
        for i in 0..n {
            // SAFETY: the SDK passes `n` agent pointers.
            let a = unsafe { *agents.add(i) } as *const u8;
            if a.is_null() {
                continue;
            }
            // SAFETY: each points to an agent struct of version 0 of the
            // size asked for (ours, or ROCm 7.0's: both reach past every
            // field read), its strings kept by the SDK.
            let info = unsafe { agent_from_c(a) };
            profiler.symbols().insert_agent(info);
        }
        0
    }
    let query = |size: usize| {
        // SAFETY: `each` has the callback's signature; the profiler outlives the call.
        unsafe {
            rocprofiler_sdk_sys::api::rocprofiler_query_available_agents(
                rocprofiler_sdk_sys::enums::rocprofiler_agent_version::ROCPROFILER_AGENT_INFO_VERSION_0
                    as c_int,
                each,
                size,
                profiler as *const Profiler as *mut c_void,
            )
        }
    };
    let status = query(c_sizeof(AGENT).unwrap_or(0));
    if i64::from(status)
        != rocprofiler_sdk_sys::enums::rocprofiler_status::ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI
    {
        return status;
    }
    // An SDK of ROCm 7.0, whose agent struct ends with an 8-byte uuid (ours
    // has 16): everything read here lies before it, at the same offsets.
    match c_offsetof(&format!("{AGENT}.uuid")) {
        Some(uuid) => query(uuid + 8),
        None => status,
    }
}

/// A CODE_OBJECT callback: loads and kernel symbols into the engine (which
/// calls back the chain's stages that trace code objects); `journal` is
/// called after each insertion so the record journal has the names.
///
/// # Safety
/// `record.payload` is the SDK's payload of the record's operation.
pub unsafe fn on_code_object(
    profiler: &Profiler,
    record: &CallbackTracingRecord,
    journal: impl Fn(),
) {
    if record.payload.is_null() {
        return;
    }
    let load = i64::from(record.phase) == phase::ROCPROFILER_CALLBACK_PHASE_LOAD;
    let op = i64::from(record.operation);
    if op == co_op::ROCPROFILER_CODE_OBJECT_LOAD {
        // SAFETY: the operation's payload struct.
        let d = unsafe { &*(record.payload as *const CodeObjectLoadData) };
        if !load {
            profiler.emit_code_object_unload(d.code_object_id);
            return;
        }
        // SAFETY: NULL or a NUL-terminated URI valid for the callback.
        profiler.emit_code_object_load(unsafe { code_object_from_c(d) });
        journal();
    } else if op == co_op::ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER {
        // SAFETY: the operation's payload struct.
        let k = unsafe { &*(record.payload as *const KernelSymbolRegisterData) };
        if !load {
            profiler.emit_kernel_symbol_unregister(k.kernel_id);
            return;
        }
        // SAFETY: NULL or a NUL-terminated name valid for the callback.
        profiler.emit_kernel_symbol_register(unsafe { kernel_symbol_from_c(k) });
        journal();
    }
}
