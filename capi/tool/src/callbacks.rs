//! The SDK's callback tracing, into the engine's callback sinks (the
//! chain's stages that asked for callbacks: API calls at ENTER and EXIT
//! with their arguments, kernel-dispatch and memory-copy completions).
//!
//! The engine calls each of its contexts back with a user-data slot of its
//! own, kept from an API call's ENTER to its EXIT. The SDK keeps one
//! `rocprofiler_user_data_t` per call for this tool: at ENTER it holds a
//! boxed slot array for the engine's contexts, taken back at EXIT.
//!
//! The SDK's record and payloads are read by `rocwasm_capi_convert`
//! (`callbacks`), beside the C API's way there; the record's context and
//! external id are the engine's to set per context (`import_callback`).

use std::ffi::{c_char, c_int, c_void};

use rocprofiler_sdk_sys::enums::rocprofiler_callback_phase as phase;
use rocprofiler_sdk_sys::{
    api, CallbackTracingRecord, KernelDispatchData, MemoryCopyData, UserData,
};
use rocwasm_capi_convert::callbacks::{
    api_retval_from_c, copy_data_from_c, dispatch_data_from_c, kind_from_c, phase_from_c,
    record_from_c,
};
use rocwasm_core::{
    Argument, CallbackPayload, CallbackPhase, CallbackTracingKind, Domain, Phase, Profiler,
};

use crate::operations::OperationMaps;

/// The domains whose callbacks this back end makes.
pub fn supported(domain: Domain) -> bool {
    domain.is_api() || matches!(domain, Domain::KernelDispatch | Domain::MemoryCopy)
}

/// One SDK callback, into the engine.
///
/// # Safety
/// `record` and `user_data` are the SDK's, valid for the callback.
pub unsafe fn on_callback(
    profiler: &Profiler,
    ops: &OperationMaps,
    record: &CallbackTracingRecord,
    user_data: *mut UserData,
) {
    let Some(kind) = kind_from_c(record) else {
        return;
    };
    let Some(domain) = Domain::from_callback_kind(kind) else {
        return;
    };
    // A call of an operation rocwasm has no id for is counted once, at its
    // ENTER (its EXIT is the same call), with the records of such calls.
    let counted = i64::from(record.phase) != phase::ROCPROFILER_CALLBACK_PHASE_EXIT;
    let op = match domain.buffer_kind() {
        Some(k) if domain.is_api() && counted => ops.engine(k, record.operation),
        Some(k) if domain.is_api() => ops.engine_quiet(k, record.operation),
        _ => u32::try_from(record.operation).ok(),
    };
    let Some(op) = op else {
        return;
    };
    let phase = phase_from_c(record.phase);
    // SAFETY: the payload of the record's kind, valid for the callback.
    let payload = unsafe { payload_of(domain, kind, record, phase) };
    let mut rec = record_from_c(record, kind, op, payload, rocwasm_core::clock::now());
    let external = rec.correlation.external;
    let slots = profiler.callback_slots(domain);
    match phase {
        Some(CallbackPhase::Enter) if !user_data.is_null() => {
            let mut data = vec![0u64; slots].into_boxed_slice();
            profiler.import_callback(domain, &mut rec, external, &mut data);
            // SAFETY: the SDK's slot for this call, kept until its EXIT.
            unsafe { (*user_data).ptr = Box::into_raw(Box::new(data)) as *mut c_void };
        }
        Some(CallbackPhase::Exit) if !user_data.is_null() => {
            // SAFETY: what ENTER stored (or NULL if ENTER was not seen).
            let stored = unsafe { (*user_data).ptr } as *mut Box<[u64]>;
            if stored.is_null() {
                let mut data = vec![0u64; slots];
                profiler.import_callback(domain, &mut rec, external, &mut data);
            } else {
                // SAFETY: the box ENTER leaked for this call, taken back once.
                let mut data = unsafe { Box::from_raw(stored) };
                profiler.import_callback(domain, &mut rec, external, &mut data);
                // SAFETY: as above; the slot is cleared for any later reader.
                unsafe { (*user_data).ptr = std::ptr::null_mut() };
            }
        }
        _ => {
            let mut data = vec![0u64; slots];
            profiler.import_callback(domain, &mut rec, external, &mut data);
        }
    }
}

/// The engine's payload of an SDK callback record.
///
/// # Safety
/// `record.payload` is NULL or the payload of the record's kind.
unsafe fn payload_of(
    domain: Domain,
    kind: CallbackTracingKind,
    record: &CallbackTracingRecord,
    phase: Phase,
) -> CallbackPayload {
    if record.payload.is_null() {
        return CallbackPayload::None;
    }
    match domain {
        Domain::KernelDispatch => {
            // SAFETY: the kind's payload struct.
            let d = unsafe { &*(record.payload as *const KernelDispatchData) };
            CallbackPayload::KernelDispatch(dispatch_data_from_c(record, d))
        }
        Domain::MemoryCopy => {
            // SAFETY: the kind's payload struct.
            let c = unsafe { &*(record.payload as *const MemoryCopyData) };
            CallbackPayload::MemoryCopy(copy_data_from_c(record, c))
        }
        _ if domain.is_api() => CallbackPayload::Api {
            args: arguments(record),
            retval: (phase == Some(CallbackPhase::Exit))
                // SAFETY: the API payload of the record's kind.
                .then(|| unsafe { api_retval_from_c(kind, record.payload) })
                .flatten(),
        },
        _ => CallbackPayload::None,
    }
}

/// The call's arguments, as the SDK renders them.
fn arguments(record: &CallbackTracingRecord) -> Vec<Argument> {
    unsafe extern "C-unwind" fn each(
        _kind: c_int,
        _op: u32,
        _n: u32,
        _addr: *const c_void,
        _indirection: i32,
        ty: *const c_char,
        name: *const c_char,
        value: *const c_char,
        _dereferences: i32,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: NULL or NUL-terminated strings the SDK keeps for the call.
        let text = |p: *const c_char| unsafe { rocwasm_capi_convert::strings::from_c(p) };
        // SAFETY: `data` is the vector passed below, alive for the call.
        let args = unsafe { &mut *(data as *mut Vec<Argument>) };
        args.push(Argument::new(text(name), text(ty), text(value)));
        0
    }
    let mut args: Vec<Argument> = Vec::new();
    // SAFETY: inside the SDK's callback for `record`, as the function
    // requires; `each` has the callback's type.
    unsafe {
        api::rocprofiler_iterate_callback_tracing_kind_operation_args(
            *record,
            each,
            1,
            &mut args as *mut Vec<Argument> as *mut c_void,
        )
    };
    args
}
