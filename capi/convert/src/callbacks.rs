//! The callback-tracing record, `rocprofiler_callback_tracing_record_t`,
//! and the payloads of API calls, kernel dispatches, memory copies and
//! runtime initializations, both ways (code objects and kernel symbols are
//! in [`crate::symbols`]).
//!
//! The record's operation is passed in already mapped, as for buffer
//! records. An API call's arguments are not converted here: the C API
//! writes them into the payload's argument union from interception's bytes
//! (`rocwasm_capi::api_args`), the tool asks its SDK for them as text
//! (`rocprofiler_iterate_callback_tracing_kind_operation_args`). What the C
//! record cannot carry: the time the callback was made (the tool takes its
//! own clock), a dispatch's or copy's HIP stream, a return value that is not
//! a number (the payload's union holds numbers; `"0x1f"` comes back as
//! `"31"`, `"hipSuccess"` as `"0"`).

use std::ffi::{c_int, c_void};

use rocprofiler_sdk_sys::enums::rocprofiler_callback_phase as phase;
use rocprofiler_sdk_sys::{
    api_data_types, c_offsetof, c_sizeof, CallbackTracingRecord, KernelDispatchData,
    MemoryCopyData, RuntimeInitializationData,
};
use rocwasm_core::{
    CallbackPayload, CallbackPhase, CallbackRecord, CallbackTracingKind, ContextId, KernelDispatch,
    MemoryCopy, Phase,
};

use crate::ids::{correlation_from_c, correlation_to_c, handle, id, size_of};
use crate::records::{dispatch_info_from_c, dispatch_info_to_c};

// ── The record ─────────────────────────────────────────────────────────────

/// `rocprofiler_callback_phase_t` of a phase (`NONE`, 0, for completions).
pub fn phase_to_c(p: Phase) -> c_int {
    p.map_or(0, |p| p.raw() as c_int)
}

/// The phase of a `rocprofiler_callback_phase_t` (ENTER is also LOAD,
/// EXIT also UNLOAD); any other value is `None`.
pub fn phase_from_c(p: c_int) -> Phase {
    match i64::from(p) {
        phase::ROCPROFILER_CALLBACK_PHASE_ENTER => Some(CallbackPhase::Enter),
        phase::ROCPROFILER_CALLBACK_PHASE_EXIT => Some(CallbackPhase::Exit),
        _ => None,
    }
}

/// The C record of an engine callback; `operation` is the SDK's number,
/// `payload` the C payload (kept alive by the caller for the callback).
pub fn record_to_c(
    r: &CallbackRecord,
    operation: i32,
    payload: *mut c_void,
) -> CallbackTracingRecord {
    CallbackTracingRecord {
        context_id: handle(r.context.0),
        thread_id: r.thread_id,
        correlation_id: correlation_to_c(r.correlation),
        kind: r.kind.raw() as c_int,
        operation,
        phase: phase_to_c(r.phase),
        payload,
    }
}

/// The engine's kind of a C record, if the engine has it.
pub fn kind_from_c(c: &CallbackTracingRecord) -> Option<CallbackTracingKind> {
    u32::try_from(c.kind)
        .ok()
        .and_then(CallbackTracingKind::from_raw)
}

/// The engine's callback of a C record of `kind` ([`kind_from_c`]);
/// `operation` is the engine's number, `payload` the engine's payload (of
/// the `…_from_c` below), `timestamp` when the callback was made.
pub fn record_from_c(
    c: &CallbackTracingRecord,
    kind: CallbackTracingKind,
    operation: u32,
    payload: CallbackPayload,
    timestamp: u64,
) -> CallbackRecord {
    CallbackRecord {
        context: ContextId(id(c.context_id)),
        kind,
        operation,
        phase: phase_from_c(c.phase),
        correlation: correlation_from_c(&c.correlation_id),
        thread_id: c.thread_id,
        timestamp,
        payload,
    }
}

// ── API calls: the `…_api_data_t` and its return value ─────────────────────

/// The bytes of an API kind's `…_api_data_t` (its size rounded up to 8):
/// `size`, and the return value when it is a number (decimal or `0x` hex),
/// as the return-value union's 64-bit member. The argument union is left
/// zero for the caller. `None` for a kind without API data.
pub fn api_data_to_c(kind: CallbackTracingKind, retval: Option<&str>) -> Option<Vec<u8>> {
    let (ty, _) = api_data_types(i64::from(kind.raw()))?;
    let size = c_sizeof(ty)?;
    let mut bytes = vec![0u8; size.div_ceil(8) * 8];
    bytes[..8].copy_from_slice(&(size as u64).to_ne_bytes());
    let number = retval.and_then(|v| {
        v.parse::<i64>().ok().or_else(|| {
            v.strip_prefix("0x")
                .and_then(|h| i64::from_str_radix(h, 16).ok())
        })
    });
    if let (Some(n), Some(off)) = (number, c_offsetof(&format!("{ty}.retval"))) {
        if let Some(dst) = bytes.get_mut(off..off + 8) {
            dst.copy_from_slice(&n.to_ne_bytes());
        }
    }
    Some(bytes)
}

/// The return value of an API kind's `…_api_data_t` at EXIT, as the `int`
/// member of its return-value union (the `hipError_t` / `hsa_status_t`
/// most calls return), in decimal.
///
/// # Safety
/// `payload` points to the `…_api_data_t` of `kind`, valid for the call.
pub unsafe fn api_retval_from_c(
    kind: CallbackTracingKind,
    payload: *const c_void,
) -> Option<String> {
    let (ty, _) = api_data_types(i64::from(kind.raw()))?;
    let off = c_offsetof(&format!("{ty}.retval"))?;
    // SAFETY: the return-value union lies at `off` in the payload struct.
    let v = unsafe { std::ptr::read_unaligned((payload as *const u8).add(off) as *const i32) };
    Some(v.to_string())
}

// ── Kernel dispatch ────────────────────────────────────────────────────────

/// `rocprofiler_callback_tracing_kernel_dispatch_data_t` of a dispatch (its
/// ids and thread go in the record).
pub fn dispatch_data_to_c(k: &KernelDispatch) -> KernelDispatchData {
    KernelDispatchData {
        size: size_of::<KernelDispatchData>(),
        start_timestamp: k.start,
        end_timestamp: k.end,
        dispatch_info: dispatch_info_to_c(k),
    }
}

/// The engine's dispatch of a dispatch callback: the record's ids and
/// thread, the payload's times and dispatch info.
pub fn dispatch_data_from_c(c: &CallbackTracingRecord, d: &KernelDispatchData) -> KernelDispatch {
    let ids = correlation_from_c(&c.correlation_id);
    dispatch_info_from_c(
        (ids.internal, ids.external),
        c.thread_id,
        (d.start_timestamp, d.end_timestamp),
        &d.dispatch_info,
    )
}

// ── Memory copy ────────────────────────────────────────────────────────────

/// `rocprofiler_callback_tracing_memory_copy_data_t` of a copy (its
/// direction, ids and thread go in the record).
pub fn copy_data_to_c(c: &MemoryCopy) -> MemoryCopyData {
    MemoryCopyData {
        size: size_of::<MemoryCopyData>(),
        start_timestamp: c.start,
        end_timestamp: c.end,
        dst_agent_id: handle(c.dst_agent_id),
        src_agent_id: handle(c.src_agent_id),
        bytes: c.bytes,
        dst_address: c.dst_address,
        src_address: c.src_address,
    }
}

/// The engine's copy of a copy callback: the record's direction (its
/// operation: event operations have the same numbers on both sides), ids
/// and thread, the payload's times, agents, size and addresses.
pub fn copy_data_from_c(c: &CallbackTracingRecord, d: &MemoryCopyData) -> MemoryCopy {
    let ids = correlation_from_c(&c.correlation_id);
    MemoryCopy {
        operation: c.operation as u32,
        correlation_id: ids.internal,
        external_correlation_id: ids.external,
        thread_id: c.thread_id,
        start: d.start_timestamp,
        end: d.end_timestamp,
        dst_agent_id: id(d.dst_agent_id),
        src_agent_id: id(d.src_agent_id),
        // The SDK's copy names no HIP stream.
        stream_id: 0,
        bytes: d.bytes,
        dst_address: d.dst_address,
        src_address: d.src_address,
    }
}

// ── Runtime initialization (written only: the tool does not trace it) ─────

/// `rocprofiler_callback_tracing_runtime_initialization_data_t`.
pub fn runtime_initialization_data_to_c(version: u64, instance: u64) -> RuntimeInitializationData {
    RuntimeInitializationData {
        size: size_of::<RuntimeInitializationData>(),
        version,
        instance,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{Argument, Correlation};

    const MAX: u64 = u64::MAX;

    fn record(kind: CallbackTracingKind, phase: Phase, payload: CallbackPayload) -> CallbackRecord {
        CallbackRecord {
            context: ContextId(3),
            kind,
            operation: 2,
            phase,
            correlation: Correlation {
                internal: MAX,
                external: 42,
                ancestor: 9,
            },
            thread_id: 77,
            timestamp: 1_000,
            payload,
        }
    }

    /// The record, its payload converted by `payload_back` from the C
    /// record, back through C.
    fn round_trip(
        r: &CallbackRecord,
        payload: *mut c_void,
        payload_back: impl Fn(&CallbackTracingRecord) -> CallbackPayload,
    ) -> CallbackRecord {
        let c = record_to_c(r, r.operation as i32, payload);
        assert_eq!(c.payload, payload);
        let kind = kind_from_c(&c).expect("a kind of the engine");
        record_from_c(&c, kind, c.operation as u32, payload_back(&c), r.timestamp)
    }

    #[test]
    fn records_round_trip_with_every_phase_and_edge_ids() {
        let api = CallbackPayload::Api {
            args: vec![Argument::new("sizeBytes", "size_t", 64)],
            retval: None,
        };
        for kind in [
            CallbackTracingKind::HipRuntimeApi,
            CallbackTracingKind::CodeObject,
            CallbackTracingKind::KernelDispatch,
        ] {
            for phase in [None, Some(CallbackPhase::Enter), Some(CallbackPhase::Exit)] {
                let mut r = record(kind, phase, api.clone());
                assert_eq!(round_trip(&r, std::ptr::null_mut(), |_| api.clone()), r);
                r.context = ContextId(MAX);
                r.operation = u32::MAX;
                r.correlation = Correlation::default();
                r.thread_id = 0;
                assert_eq!(round_trip(&r, std::ptr::null_mut(), |_| api.clone()), r);
            }
        }
        assert_eq!(phase_from_c(3), None);
        assert_eq!(phase_from_c(-1), None);
    }

    #[test]
    fn dispatch_callbacks_round_trip_without_their_stream() {
        let k = KernelDispatch {
            correlation_id: MAX,
            external_correlation_id: 42,
            thread_id: 77,
            start: 5,
            end: MAX,
            agent_id: 1,
            queue_id: MAX,
            stream_id: 6,
            kernel_id: 8,
            dispatch_id: MAX,
            private_segment_size: u32::MAX,
            group_segment_size: 0,
            workgroup_x: 64,
            workgroup_y: 1,
            workgroup_z: u32::MAX,
            grid_x: 1 << 20,
            grid_y: 2,
            grid_z: 3,
        };
        let r = record(
            CallbackTracingKind::KernelDispatch,
            None,
            CallbackPayload::KernelDispatch(k),
        );
        let mut data = dispatch_data_to_c(&k);
        assert_eq!(data.size, 152);
        let back = round_trip(&r, &mut data as *mut _ as *mut c_void, |c| {
            CallbackPayload::KernelDispatch(dispatch_data_from_c(c, &data))
        });
        let lost = KernelDispatch { stream_id: 0, ..k };
        assert_eq!(back.payload, CallbackPayload::KernelDispatch(lost));
        assert_eq!(
            CallbackRecord {
                payload: r.payload.clone(),
                ..back
            },
            r
        );
    }

    #[test]
    fn copy_callbacks_round_trip_without_their_stream() {
        let copy = MemoryCopy {
            operation: 2,
            correlation_id: MAX,
            external_correlation_id: 42,
            thread_id: 77,
            start: 0,
            end: MAX,
            dst_agent_id: MAX,
            src_agent_id: 0,
            stream_id: 4,
            bytes: MAX,
            dst_address: 0x7f00_0000_0000,
            src_address: MAX,
        };
        let r = record(
            CallbackTracingKind::MemoryCopy,
            Some(CallbackPhase::Exit),
            CallbackPayload::MemoryCopy(copy),
        );
        let mut data = copy_data_to_c(&copy);
        assert_eq!(data.size, 64);
        let back = round_trip(&r, &mut data as *mut _ as *mut c_void, |c| {
            CallbackPayload::MemoryCopy(copy_data_from_c(c, &data))
        });
        let lost = MemoryCopy {
            stream_id: 0,
            ..copy
        };
        assert_eq!(back.payload, CallbackPayload::MemoryCopy(lost));
    }

    #[test]
    fn api_return_values_round_trip_as_numbers() {
        for kind in [
            CallbackTracingKind::HipRuntimeApi,
            CallbackTracingKind::HsaCoreApi,
            CallbackTracingKind::MarkerCoreApi,
        ] {
            let read = |retval: Option<&str>| {
                let bytes = api_data_to_c(kind, retval).expect("API data");
                let size = u64::from_ne_bytes(bytes[..8].try_into().unwrap());
                assert!(size as usize <= bytes.len() && bytes.len().is_multiple_of(8));
                // SAFETY: the whole struct's bytes, alive for the call.
                unsafe { api_retval_from_c(kind, bytes.as_ptr() as *const c_void) }
            };
            for v in ["0", "1", "-1", "1001", "2147483647", "-2147483648"] {
                assert_eq!(read(Some(v)).as_deref(), Some(v), "{kind:?} {v}");
            }
            assert_eq!(read(Some("0x1f")).as_deref(), Some("31"));
            assert_eq!(read(Some("hipSuccess")).as_deref(), Some("0"));
            assert_eq!(read(None).as_deref(), Some("0"));
        }
        assert!(api_data_to_c(CallbackTracingKind::CodeObject, Some("0")).is_none());
    }
}
