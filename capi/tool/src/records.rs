//! The SDK's buffered records, imported into the engine.
//!
//! Each delivery of the SDK's buffer is an array of record headers; each
//! tracing record becomes the engine's record of the same kind
//! ([`rocwasm_core::Profiler::import`]), with the SDK's ids, thread, times
//! and external correlation id (each struct read by
//! `rocwasm_capi_convert::records`, beside the C API's way there). The
//! engine's contexts — the chain's and the outputs' — then buffer and
//! deliver them as they would interception's.

use rocprofiler_sdk_sys::enums::rocprofiler_buffer_category as category;
use rocprofiler_sdk_sys::records::*;
use rocprofiler_sdk_sys::RecordHeader;
use rocwasm_capi_convert::records::{
    allocation_from_c, api_from_c, copy_from_c, dispatch_from_c, read_scratch, retirement_from_c,
    runtime_initialization_from_c, scratch_from_c,
};
use rocwasm_core::{
    ApiCall, BufferTracingKind, Domain, MemoryAllocation, MemoryCopy, Profiler, Record,
    ScratchMemory,
};

use crate::counting::Values;
use crate::operations::OperationMaps;

/// Counts of what a delivery could not import.
#[derive(Debug, Default, Clone, Copy)]
pub struct Skipped {
    /// Records of a kind rocwasm does not record (or not a tracing record).
    pub kinds: u64,
}

/// Imports every record of one delivery.
///
/// # Safety
/// `headers` points to `n` record headers whose payloads are the SDK's
/// records of the kinds the headers name, valid for this call.
pub unsafe fn import_all(
    profiler: &Profiler,
    ops: &OperationMaps,
    counting: &mut Values,
    headers: *mut *mut RecordHeader,
    n: usize,
) -> Skipped {
    let mut skipped = Skipped::default();
    if headers.is_null() {
        return skipped;
    }
    for i in 0..n {
        // SAFETY: `headers` has `n` entries (the caller's contract).
        let h = unsafe { *headers.add(i) };
        if h.is_null() {
            continue;
        }
        // SAFETY: a header the SDK handed us, valid for the delivery.
        let h = unsafe { &*h };
        let (cat, kind) = (h.hash as u32, (h.hash >> 32) as u32);
        let kind = BufferTracingKind::from_raw(kind);
        match kind {
            Some(kind)
                if i64::from(cat) == category::ROCPROFILER_BUFFER_CATEGORY_TRACING
                    && !h.payload.is_null() =>
            {
                // SAFETY: the payload is the record struct of `kind`.
                if !unsafe { import_one(profiler, ops, counting, kind, h.payload) } {
                    skipped.kinds += 1;
                }
            }
            _ if i64::from(cat) == category::ROCPROFILER_BUFFER_CATEGORY_COUNTERS
                && !h.payload.is_null() =>
            {
                use rocprofiler_sdk_sys::enums::rocprofiler_counter_record_kind as counter;
                let kind = i64::from((h.hash >> 32) as u32);
                if kind == counter::ROCPROFILER_COUNTER_RECORD_PROFILE_COUNTING_DISPATCH_HEADER {
                    // SAFETY: the kind's record struct.
                    counting.header(profiler, unsafe {
                        &*(h.payload as *const DispatchCountingRecord)
                    });
                } else if kind != counter::ROCPROFILER_COUNTER_RECORD_VALUE
                    // SAFETY: the kind's record struct.
                    || !counting.value(profiler, unsafe { &*(h.payload as *const CounterRecord) })
                {
                    skipped.kinds += 1;
                }
            }
            _ => skipped.kinds += 1,
        }
    }
    skipped
}

/// Imports one record; false when rocwasm does not record its kind.
///
/// # Safety
/// `payload` points to the SDK's record struct of `kind`.
unsafe fn import_one(
    profiler: &Profiler,
    ops: &OperationMaps,
    counting: &mut Values,
    kind: BufferTracingKind,
    payload: *mut std::ffi::c_void,
) -> bool {
    use BufferTracingKind as K;
    let Some(domain) = Domain::from_buffer_kind(kind) else {
        return false;
    };
    // Each context gets the record with its own external id (0 where it
    // answers no requests): `external_correlation_id` below.
    match kind {
        _ if domain.is_api() => {
            // SAFETY: the HIP, HSA and marker API records share this layout.
            let r = unsafe { &*(payload as *const ApiRecord) };
            // Unmapped operations are counted by `ops`.
            let Some(op) = ops.engine(kind, r.operation) else {
                return true;
            };
            let c = api_from_c(r, kind, op);
            profiler.import(
                domain,
                op,
                c.external_correlation_id,
                |external_correlation_id| {
                    Record::Api(ApiCall {
                        external_correlation_id,
                        ..c
                    })
                },
            );
        }
        K::KernelDispatch => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const KernelDispatchRecord) };
            let kept = profiler.import_kernel_dispatch(dispatch_from_c(r));
            counting.dispatch_seen(profiler, r.dispatch_info.dispatch_id, kept);
        }
        K::MemoryCopy => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const MemoryCopyRecord) };
            let c = copy_from_c(r, r.operation as u32);
            profiler.import(
                domain,
                c.operation,
                c.external_correlation_id,
                |external_correlation_id| {
                    Record::MemoryCopy(MemoryCopy {
                        external_correlation_id,
                        ..c
                    })
                },
            );
        }
        K::MemoryAllocation => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const MemoryAllocationRecord) };
            let c = allocation_from_c(r, r.operation as u32);
            profiler.import(
                domain,
                c.operation,
                c.external_correlation_id,
                |external_correlation_id| {
                    Record::MemoryAllocation(MemoryAllocation {
                        external_correlation_id,
                        ..c
                    })
                },
            );
        }
        K::ScratchMemory => {
            // SAFETY: the kind's record struct, of any SDK version (a ROCm
            // 7.0 SDK's is shorter: `read_scratch`).
            let r = unsafe { read_scratch(payload) };
            let c = scratch_from_c(&r, r.operation as u32);
            profiler.import(
                domain,
                c.operation,
                c.external_correlation_id,
                |external_correlation_id| {
                    Record::ScratchMemory(ScratchMemory {
                        external_correlation_id,
                        ..c
                    })
                },
            );
        }
        K::CorrelationIdRetirement => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const RetirementRecord) };
            let c = retirement_from_c(r);
            profiler.import(domain, 0, 0, |_| Record::Retirement(c));
        }
        K::RuntimeInitialization => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const RuntimeInitializationRecord) };
            let c = runtime_initialization_from_c(r, r.operation as u32);
            profiler.import(domain, c.operation, 0, |_| Record::RuntimeInitialization(c));
        }
        _ => return false,
    }
    true
}
