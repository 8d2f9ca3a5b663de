//! The buffer-tracing records, `rocprofiler_buffer_tracing_*_record_t`, and
//! the engine's rows of a [`rocwasm_core::Batch`], both ways.
//!
//! Each pair takes the operation already mapped (`to_c` the SDK's number,
//! `from_c` the engine's): the C API maps with the headers' tables, the tool
//! with its SDK's names. What the C records cannot carry: a dispatch's or
//! copy's HIP stream (`stream_id`, 0 on the way back), the ancestor of an
//! allocation or scratch event (0 in C), the correlation of a runtime
//! initialization (zeros in C).

use std::ffi::c_void;

use rocprofiler_sdk_sys::records::*;
use rocprofiler_sdk_sys::KernelDispatchInfo;
use rocwasm_core::{
    ApiCall, BufferTracingKind, Correlation, KernelDispatch, MemoryAllocation, MemoryCopy,
    Retirement, RuntimeInitialization, ScratchMemory,
};

use crate::ids::{
    async_correlation_from_c, async_correlation_to_c, correlation_from_c, correlation_to_c,
    dim3_from_c, dim3_to_c, handle, id, size_of,
};

/// The `kind` field of a record of `kind`.
fn kind_to_c(kind: BufferTracingKind) -> i32 {
    kind.raw() as i32
}

// ── API calls (HIP, HSA, marker: one layout) ──────────────────────────────

/// An API call's record; `operation` is the SDK's number.
pub fn api_to_c(r: &ApiCall, operation: i32) -> ApiRecord {
    ApiRecord {
        size: size_of::<ApiRecord>(),
        kind: r.kind as i32,
        operation,
        correlation_id: correlation_to_c(Correlation {
            internal: r.correlation_id,
            external: r.external_correlation_id,
            ancestor: r.ancestor,
        }),
        start_timestamp: r.start,
        end_timestamp: r.end,
        thread_id: r.thread_id,
    }
}

/// An API call of an SDK record of `kind` (the record header's: the
/// record's own `kind` field is not read); `operation` is the engine's.
pub fn api_from_c(r: &ApiRecord, kind: BufferTracingKind, operation: u32) -> ApiCall {
    let c = correlation_from_c(&r.correlation_id);
    ApiCall {
        kind: kind.raw(),
        operation,
        correlation_id: c.internal,
        external_correlation_id: c.external,
        ancestor: c.ancestor,
        thread_id: r.thread_id,
        start: r.start_timestamp,
        end: r.end_timestamp,
    }
}

// ── Kernel dispatch ────────────────────────────────────────────────────────

/// `rocprofiler_kernel_dispatch_info_t` of a dispatch (the buffer record's
/// and the callback payload's).
pub fn dispatch_info_to_c(r: &KernelDispatch) -> KernelDispatchInfo {
    KernelDispatchInfo {
        size: size_of::<KernelDispatchInfo>(),
        agent_id: handle(r.agent_id),
        queue_id: handle(r.queue_id),
        kernel_id: r.kernel_id,
        dispatch_id: r.dispatch_id,
        private_segment_size: r.private_segment_size,
        group_segment_size: r.group_segment_size,
        workgroup_size: dim3_to_c([r.workgroup_x, r.workgroup_y, r.workgroup_z]),
        grid_size: dim3_to_c([r.grid_x, r.grid_y, r.grid_z]),
        reserved_padding: [0; 56],
    }
}

/// The engine's dispatch of the SDK's dispatch info and what the record
/// around it says (a buffered record or a completion callback: both carry
/// ids, thread and times).
pub fn dispatch_info_from_c(
    (internal, external): (u64, u64),
    thread_id: u64,
    (start, end): (u64, u64),
    d: &KernelDispatchInfo,
) -> KernelDispatch {
    let [workgroup_x, workgroup_y, workgroup_z] = dim3_from_c(d.workgroup_size);
    let [grid_x, grid_y, grid_z] = dim3_from_c(d.grid_size);
    KernelDispatch {
        correlation_id: internal,
        external_correlation_id: external,
        thread_id,
        start,
        end,
        agent_id: id(d.agent_id),
        queue_id: id(d.queue_id),
        // The SDK's dispatch names no HIP stream.
        stream_id: 0,
        kernel_id: d.kernel_id,
        dispatch_id: d.dispatch_id,
        private_segment_size: d.private_segment_size,
        group_segment_size: d.group_segment_size,
        workgroup_x,
        workgroup_y,
        workgroup_z,
        grid_x,
        grid_y,
        grid_z,
    }
}

/// A completed dispatch's record (operation `COMPLETE`).
pub fn dispatch_to_c(r: &KernelDispatch) -> KernelDispatchRecord {
    KernelDispatchRecord {
        size: size_of::<KernelDispatchRecord>(),
        kind: kind_to_c(BufferTracingKind::KernelDispatch),
        operation: rocwasm_core::ops::kernel_dispatch::COMPLETE as i32,
        correlation_id: async_correlation_to_c(r.correlation_id, r.external_correlation_id),
        thread_id: r.thread_id,
        start_timestamp: r.start,
        end_timestamp: r.end,
        dispatch_info: dispatch_info_to_c(r),
    }
}

/// The engine's dispatch of an SDK dispatch record.
pub fn dispatch_from_c(r: &KernelDispatchRecord) -> KernelDispatch {
    dispatch_info_from_c(
        async_correlation_from_c(&r.correlation_id),
        r.thread_id,
        (r.start_timestamp, r.end_timestamp),
        &r.dispatch_info,
    )
}

// ── Memory copy ────────────────────────────────────────────────────────────

/// A completed copy's record; `operation` is the SDK's direction.
pub fn copy_to_c(r: &MemoryCopy, operation: i32) -> MemoryCopyRecord {
    MemoryCopyRecord {
        size: size_of::<MemoryCopyRecord>(),
        kind: kind_to_c(BufferTracingKind::MemoryCopy),
        operation,
        correlation_id: async_correlation_to_c(r.correlation_id, r.external_correlation_id),
        thread_id: r.thread_id,
        start_timestamp: r.start,
        end_timestamp: r.end,
        dst_agent_id: handle(r.dst_agent_id),
        src_agent_id: handle(r.src_agent_id),
        bytes: r.bytes,
        dst_address: r.dst_address,
        src_address: r.src_address,
    }
}

/// The engine's copy of an SDK copy record; `operation` is the engine's.
pub fn copy_from_c(r: &MemoryCopyRecord, operation: u32) -> MemoryCopy {
    let (correlation_id, external_correlation_id) = async_correlation_from_c(&r.correlation_id);
    MemoryCopy {
        operation,
        correlation_id,
        external_correlation_id,
        thread_id: r.thread_id,
        start: r.start_timestamp,
        end: r.end_timestamp,
        dst_agent_id: id(r.dst_agent_id),
        src_agent_id: id(r.src_agent_id),
        // The SDK's copy names no HIP stream.
        stream_id: 0,
        bytes: r.bytes,
        dst_address: r.dst_address,
        src_address: r.src_address,
    }
}

// ── Memory allocation ──────────────────────────────────────────────────────

/// An allocation's record; `operation` is the SDK's.
pub fn allocation_to_c(r: &MemoryAllocation, operation: i32) -> MemoryAllocationRecord {
    MemoryAllocationRecord {
        size: size_of::<MemoryAllocationRecord>(),
        kind: kind_to_c(BufferTracingKind::MemoryAllocation),
        operation,
        correlation_id: correlation_to_c(Correlation {
            internal: r.correlation_id,
            external: r.external_correlation_id,
            ancestor: 0,
        }),
        thread_id: r.thread_id,
        start_timestamp: r.start,
        end_timestamp: r.end,
        agent_id: handle(r.agent_id),
        address: r.address,
        allocation_size: r.allocation_size,
    }
}

/// The engine's allocation of an SDK record; `operation` is the engine's.
pub fn allocation_from_c(r: &MemoryAllocationRecord, operation: u32) -> MemoryAllocation {
    let c = correlation_from_c(&r.correlation_id);
    MemoryAllocation {
        operation,
        correlation_id: c.internal,
        external_correlation_id: c.external,
        thread_id: r.thread_id,
        start: r.start_timestamp,
        end: r.end_timestamp,
        agent_id: id(r.agent_id),
        address: r.address,
        allocation_size: r.allocation_size,
    }
}

// ── Scratch memory ─────────────────────────────────────────────────────────

/// A scratch event's record; `operation` is the SDK's.
pub fn scratch_to_c(r: &ScratchMemory, operation: i32) -> ScratchMemoryRecord {
    ScratchMemoryRecord {
        size: size_of::<ScratchMemoryRecord>(),
        kind: kind_to_c(BufferTracingKind::ScratchMemory),
        operation,
        correlation_id: correlation_to_c(Correlation {
            internal: r.correlation_id,
            external: r.external_correlation_id,
            ancestor: 0,
        }),
        agent_id: handle(r.agent_id),
        queue_id: handle(r.queue_id),
        thread_id: r.thread_id,
        start_timestamp: r.start,
        end_timestamp: r.end,
        flags: r.flags as i32,
        allocation_size: r.allocation_size,
    }
}

/// The engine's scratch event of an SDK record; `operation` is the engine's.
pub fn scratch_from_c(r: &ScratchMemoryRecord, operation: u32) -> ScratchMemory {
    let c = correlation_from_c(&r.correlation_id);
    ScratchMemory {
        operation,
        flags: r.flags as u32,
        correlation_id: c.internal,
        external_correlation_id: c.external,
        thread_id: r.thread_id,
        start: r.start_timestamp,
        end: r.end_timestamp,
        agent_id: id(r.agent_id),
        queue_id: id(r.queue_id),
        allocation_size: r.allocation_size,
    }
}

/// The SDK's scratch record at `payload`, whatever its version: a ROCm 7.0
/// SDK's record is 8 bytes shorter (no `allocation_size`), so what the
/// record's own `size` covers is copied into a zeroed one.
///
/// # Safety
/// `payload` points to a scratch-memory record of the SDK, valid for the
/// call, whose first `u64` is its size in bytes.
pub unsafe fn read_scratch(payload: *const c_void) -> ScratchMemoryRecord {
    // SAFETY: every record starts with its `u64` size; the copy stays within
    // both that size and the destination; the struct is plain data, for
    // which all-zero bytes are a value.
    unsafe {
        let have = std::ptr::read_unaligned(payload as *const u64) as usize;
        let mut rec: ScratchMemoryRecord = std::mem::zeroed();
        std::ptr::copy_nonoverlapping(
            payload as *const u8,
            &mut rec as *mut ScratchMemoryRecord as *mut u8,
            have.min(std::mem::size_of::<ScratchMemoryRecord>()),
        );
        rec
    }
}

// ── Correlation-id retirement ──────────────────────────────────────────────

/// A retirement's record.
pub fn retirement_to_c(r: &Retirement) -> RetirementRecord {
    RetirementRecord {
        size: size_of::<RetirementRecord>(),
        kind: kind_to_c(BufferTracingKind::CorrelationIdRetirement),
        timestamp: r.timestamp,
        internal_correlation_id: r.correlation_id,
    }
}

/// The engine's retirement of an SDK record.
pub fn retirement_from_c(r: &RetirementRecord) -> Retirement {
    Retirement {
        timestamp: r.timestamp,
        correlation_id: r.internal_correlation_id,
    }
}

// ── Runtime initialization ─────────────────────────────────────────────────

/// A runtime initialization's record; `operation` is the SDK's.
pub fn runtime_initialization_to_c(
    r: &RuntimeInitialization,
    operation: i32,
) -> RuntimeInitializationRecord {
    RuntimeInitializationRecord {
        size: size_of::<RuntimeInitializationRecord>(),
        kind: kind_to_c(BufferTracingKind::RuntimeInitialization),
        operation,
        correlation_id: correlation_to_c(Correlation::default()),
        thread_id: r.thread_id,
        timestamp: r.timestamp,
        version: r.version,
        instance: r.instance,
    }
}

/// The engine's runtime initialization of an SDK record; `operation` is
/// the engine's.
pub fn runtime_initialization_from_c(
    r: &RuntimeInitializationRecord,
    operation: u32,
) -> RuntimeInitialization {
    RuntimeInitialization {
        operation,
        thread_id: r.thread_id,
        timestamp: r.timestamp,
        version: r.version,
        instance: r.instance,
    }
}

#[cfg(test)]
mod tests {
    //! Engine → C → engine gives back every row, with the operation passed
    //! through unmapped (`as i32`, `as u32`: what the callers' maps do is
    //! theirs). Each family is tried with zeros, all ones and a mixed row.
    use super::*;
    use rocwasm_core::ops::kernel_dispatch::COMPLETE;

    const MAX: u64 = u64::MAX;
    const MAX32: u32 = u32::MAX;

    /// Three rows of a family: zeros, every field at its largest value,
    /// and a distinct ordinary value in each field.
    fn rows<T: Default>(max: T, mixed: T) -> [T; 3] {
        [T::default(), max, mixed]
    }

    #[test]
    fn api_calls_round_trip() {
        let max = ApiCall {
            kind: BufferTracingKind::HipRuntimeApi.raw(),
            operation: MAX32,
            correlation_id: MAX,
            external_correlation_id: MAX,
            ancestor: MAX,
            thread_id: MAX,
            start: MAX,
            end: MAX,
        };
        let mixed = ApiCall {
            kind: BufferTracingKind::MarkerCoreApi.raw(),
            operation: 3,
            correlation_id: 7,
            external_correlation_id: 99,
            ancestor: 5,
            thread_id: 11,
            start: 100,
            end: 300,
        };
        let zero = ApiCall {
            kind: BufferTracingKind::HsaCoreApi.raw(),
            ..ApiCall::default()
        };
        for r in [zero, max, mixed] {
            let c = api_to_c(&r, r.operation as i32);
            assert_eq!((c.size, c.kind as u32), (64, r.kind));
            let kind = BufferTracingKind::from_raw(r.kind).unwrap();
            assert_eq!(api_from_c(&c, kind, c.operation as u32), r);
        }
    }

    #[test]
    fn kernel_dispatches_round_trip_without_their_stream() {
        let max = KernelDispatch {
            correlation_id: MAX,
            external_correlation_id: MAX,
            thread_id: MAX,
            start: MAX,
            end: MAX,
            agent_id: MAX,
            queue_id: MAX,
            stream_id: MAX,
            kernel_id: MAX,
            dispatch_id: MAX,
            private_segment_size: MAX32,
            group_segment_size: MAX32,
            workgroup_x: MAX32,
            workgroup_y: MAX32,
            workgroup_z: MAX32,
            grid_x: MAX32,
            grid_y: MAX32,
            grid_z: MAX32,
        };
        let mixed = KernelDispatch {
            correlation_id: 1,
            external_correlation_id: 2,
            thread_id: 3,
            start: 4,
            end: 5,
            agent_id: 6,
            queue_id: 7,
            stream_id: 8,
            kernel_id: 9,
            dispatch_id: 10,
            private_segment_size: 11,
            group_segment_size: 12,
            workgroup_x: 13,
            workgroup_y: 14,
            workgroup_z: 15,
            grid_x: 16,
            grid_y: 17,
            grid_z: 18,
        };
        for r in rows(max, mixed) {
            let c = dispatch_to_c(&r);
            assert_eq!((c.size, c.dispatch_info.size), (184, 128));
            assert_eq!(c.operation as u32, COMPLETE);
            let lost = KernelDispatch { stream_id: 0, ..r };
            assert_eq!(dispatch_from_c(&c), lost);
        }
    }

    #[test]
    fn memory_copies_round_trip_without_their_stream() {
        let max = MemoryCopy {
            operation: MAX32,
            correlation_id: MAX,
            external_correlation_id: MAX,
            thread_id: MAX,
            start: MAX,
            end: MAX,
            dst_agent_id: MAX,
            src_agent_id: MAX,
            stream_id: MAX,
            bytes: MAX,
            dst_address: MAX,
            src_address: MAX,
        };
        let mixed = MemoryCopy {
            operation: 2,
            correlation_id: 1,
            external_correlation_id: 2,
            thread_id: 3,
            start: 4,
            end: 5,
            dst_agent_id: 6,
            src_agent_id: 7,
            stream_id: 8,
            bytes: 9,
            dst_address: 10,
            src_address: 11,
        };
        for r in rows(max, mixed) {
            let c = copy_to_c(&r, r.operation as i32);
            assert_eq!(c.size, 96);
            let lost = MemoryCopy { stream_id: 0, ..r };
            assert_eq!(copy_from_c(&c, c.operation as u32), lost);
        }
    }

    #[test]
    fn memory_allocations_round_trip() {
        let max = MemoryAllocation {
            operation: MAX32,
            correlation_id: MAX,
            external_correlation_id: MAX,
            thread_id: MAX,
            start: MAX,
            end: MAX,
            agent_id: MAX,
            address: MAX,
            allocation_size: MAX,
        };
        let mixed = MemoryAllocation {
            operation: 1,
            correlation_id: 2,
            external_correlation_id: 3,
            thread_id: 4,
            start: 5,
            end: 6,
            agent_id: 7,
            address: 8,
            allocation_size: 9,
        };
        for r in rows(max, mixed) {
            let c = allocation_to_c(&r, r.operation as i32);
            assert_eq!((c.size, c.correlation_id.ancestor), (88, 0));
            assert_eq!(allocation_from_c(&c, c.operation as u32), r);
        }
    }

    #[test]
    fn scratch_memory_round_trips_and_a_rocm_7_0_record_has_no_size() {
        let max = ScratchMemory {
            operation: MAX32,
            flags: MAX32,
            correlation_id: MAX,
            external_correlation_id: MAX,
            thread_id: MAX,
            start: MAX,
            end: MAX,
            agent_id: MAX,
            queue_id: MAX,
            allocation_size: MAX,
        };
        let mixed = ScratchMemory {
            operation: 1,
            flags: 2,
            correlation_id: 3,
            external_correlation_id: 4,
            thread_id: 5,
            start: 6,
            end: 7,
            agent_id: 8,
            queue_id: 9,
            allocation_size: 10,
        };
        for r in rows(max, mixed) {
            let c = scratch_to_c(&r, r.operation as i32);
            assert_eq!(c.size, 96);
            // SAFETY: a whole record of ours.
            let read = unsafe { read_scratch(&c as *const ScratchMemoryRecord as *const c_void) };
            assert_eq!(scratch_from_c(&read, read.operation as u32), r);
            // ROCm 7.0's record ends before `allocation_size`.
            let mut short = c;
            short.size -= 8;
            // SAFETY: as above (the size says less than there is).
            let read =
                unsafe { read_scratch(&short as *const ScratchMemoryRecord as *const c_void) };
            let lost = ScratchMemory {
                allocation_size: 0,
                ..r
            };
            assert_eq!(scratch_from_c(&read, read.operation as u32), lost);
        }
    }

    #[test]
    fn retirements_round_trip() {
        let max = Retirement {
            timestamp: MAX,
            correlation_id: MAX,
        };
        let mixed = Retirement {
            timestamp: 1,
            correlation_id: 2,
        };
        for r in rows(max, mixed) {
            let c = retirement_to_c(&r);
            assert_eq!(c.size, 32);
            assert_eq!(retirement_from_c(&c), r);
        }
    }

    #[test]
    fn runtime_initializations_round_trip() {
        let max = RuntimeInitialization {
            operation: MAX32,
            thread_id: MAX,
            timestamp: MAX,
            version: MAX,
            instance: MAX,
        };
        let mixed = RuntimeInitialization {
            operation: 1,
            thread_id: 2,
            timestamp: 3,
            version: 60_402,
            instance: 1,
        };
        for r in rows(max, mixed) {
            let c = runtime_initialization_to_c(&r, r.operation as i32);
            assert_eq!(c.size, 72);
            assert_eq!(runtime_initialization_from_c(&c, c.operation as u32), r);
        }
    }
}
