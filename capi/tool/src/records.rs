//! The SDK's buffered records, imported into the engine.
//!
//! Each delivery of the SDK's buffer is an array of record headers; each
//! tracing record becomes the engine's record of the same kind
//! ([`rocwasm_core::Profiler::import`]), with the SDK's ids, thread, times
//! and external correlation id. The engine's contexts — the chain's and the
//! outputs' — then buffer and deliver them as they would interception's.

use rocprofiler_sdk_sys::enums::rocprofiler_buffer_category as category;
use rocprofiler_sdk_sys::records::*;
use rocprofiler_sdk_sys::{KernelDispatchInfo, RecordHeader};
use rocwasm_core::{
    ApiCall, BufferTracingKind, Domain, KernelDispatch, MemoryAllocation, MemoryCopy, Profiler,
    Record, Retirement, RuntimeInitialization, ScratchMemory,
};

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
                if !unsafe { import_one(profiler, ops, kind, h.payload) } {
                    skipped.kinds += 1;
                }
            }
            _ => skipped.kinds += 1,
        }
    }
    skipped
}

/// The engine's row of an SDK kernel dispatch (a buffered record or a
/// completion callback's payload: both carry ids, times and the dispatch
/// info).
pub fn dispatch(
    internal: u64,
    external: u64,
    thread_id: u64,
    (start, end): (u64, u64),
    d: &KernelDispatchInfo,
) -> KernelDispatch {
    KernelDispatch {
        correlation_id: internal,
        external_correlation_id: external,
        thread_id,
        start,
        end,
        agent_id: d.agent_id.handle,
        queue_id: d.queue_id.handle,
        // The SDK's dispatch record names no HIP stream.
        stream_id: 0,
        kernel_id: d.kernel_id,
        dispatch_id: d.dispatch_id,
        private_segment_size: d.private_segment_size,
        group_segment_size: d.group_segment_size,
        workgroup_x: d.workgroup_size.x,
        workgroup_y: d.workgroup_size.y,
        workgroup_z: d.workgroup_size.z,
        grid_x: d.grid_size.x,
        grid_y: d.grid_size.y,
        grid_z: d.grid_size.z,
    }
}

/// Imports one record; false when rocwasm does not record its kind.
///
/// # Safety
/// `payload` points to the SDK's record struct of `kind`.
unsafe fn import_one(
    profiler: &Profiler,
    ops: &OperationMaps,
    kind: BufferTracingKind,
    payload: *mut std::ffi::c_void,
) -> bool {
    use BufferTracingKind as K;
    let Some(domain) = Domain::from_buffer_kind(kind) else {
        return false;
    };
    match kind {
        _ if domain.is_api() => {
            // SAFETY: the HIP, HSA and marker API records share this layout.
            let r = unsafe { &*(payload as *const ApiRecord) };
            // Unmapped operations are counted by `ops`.
            let Some(op) = ops.engine(kind, r.operation) else {
                return true;
            };
            // SAFETY: the external id is a number (`value`) by the SDK's contract for ids it requested.
            let external = unsafe { r.correlation_id.external.value };
            profiler.import(domain, op, external, |external| {
                Record::Api(ApiCall {
                    kind: kind.raw(),
                    operation: op,
                    correlation_id: r.correlation_id.internal,
                    external_correlation_id: external,
                    ancestor: r.correlation_id.ancestor,
                    thread_id: r.thread_id,
                    start: r.start_timestamp,
                    end: r.end_timestamp,
                })
            });
        }
        K::KernelDispatch => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const KernelDispatchRecord) };
            profiler.import_kernel_dispatch(dispatch(
                r.correlation_id.internal,
                // SAFETY: as above.
                unsafe { r.correlation_id.external.value },
                r.thread_id,
                (r.start_timestamp, r.end_timestamp),
                &r.dispatch_info,
            ));
        }
        K::MemoryCopy => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const MemoryCopyRecord) };
            let op = r.operation as u32;
            // SAFETY: as above.
            let external = unsafe { r.correlation_id.external.value };
            profiler.import(domain, op, external, |external| {
                Record::MemoryCopy(MemoryCopy {
                    operation: op,
                    correlation_id: r.correlation_id.internal,
                    external_correlation_id: external,
                    thread_id: r.thread_id,
                    start: r.start_timestamp,
                    end: r.end_timestamp,
                    dst_agent_id: r.dst_agent_id.handle,
                    src_agent_id: r.src_agent_id.handle,
                    stream_id: 0,
                    bytes: r.bytes,
                    dst_address: r.dst_address,
                    src_address: r.src_address,
                })
            });
        }
        K::MemoryAllocation => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const MemoryAllocationRecord) };
            let op = r.operation as u32;
            // SAFETY: as above.
            let external = unsafe { r.correlation_id.external.value };
            profiler.import(domain, op, external, |external| {
                Record::MemoryAllocation(MemoryAllocation {
                    operation: op,
                    correlation_id: r.correlation_id.internal,
                    external_correlation_id: external,
                    thread_id: r.thread_id,
                    start: r.start_timestamp,
                    end: r.end_timestamp,
                    agent_id: r.agent_id.handle,
                    address: r.address,
                    allocation_size: r.allocation_size,
                })
            });
        }
        K::ScratchMemory => {
            // A ROCm 7.0 SDK's record is 8 bytes shorter (no `allocation_size`):
            // copy what the record's own `size` covers into a zeroed one.
            // SAFETY: every record starts with its `u64` size; the copy stays
            // within both that size and the destination; the struct is plain
            // data, for which all-zero bytes are a value.
            let r = &unsafe {
                let have = std::ptr::read_unaligned(payload as *const u64) as usize;
                let mut rec: ScratchMemoryRecord = std::mem::zeroed();
                std::ptr::copy_nonoverlapping(
                    payload as *const u8,
                    &mut rec as *mut ScratchMemoryRecord as *mut u8,
                    have.min(std::mem::size_of::<ScratchMemoryRecord>()),
                );
                rec
            };
            let op = r.operation as u32;
            // SAFETY: as above.
            let external = unsafe { r.correlation_id.external.value };
            profiler.import(domain, op, external, |external| {
                Record::ScratchMemory(ScratchMemory {
                    operation: op,
                    flags: r.flags as u32,
                    correlation_id: r.correlation_id.internal,
                    external_correlation_id: external,
                    thread_id: r.thread_id,
                    start: r.start_timestamp,
                    end: r.end_timestamp,
                    agent_id: r.agent_id.handle,
                    queue_id: r.queue_id.handle,
                    allocation_size: r.allocation_size,
                })
            });
        }
        K::CorrelationIdRetirement => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const RetirementRecord) };
            profiler.import(domain, 0, 0, |_| {
                Record::Retirement(Retirement {
                    timestamp: r.timestamp,
                    correlation_id: r.internal_correlation_id,
                })
            });
        }
        K::RuntimeInitialization => {
            // SAFETY: the kind's record struct.
            let r = unsafe { &*(payload as *const RuntimeInitializationRecord) };
            let op = r.operation as u32;
            profiler.import(domain, op, 0, |_| {
                Record::RuntimeInitialization(RuntimeInitialization {
                    operation: op,
                    thread_id: r.thread_id,
                    timestamp: r.timestamp,
                    version: r.version,
                    instance: r.instance,
                })
            });
        }
        _ => return false,
    }
    true
}
