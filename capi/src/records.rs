//! Buffered records in the SDK's layouts: a columnar [`Batch`] becomes the
//! `rocprofiler_buffer_tracing_*_record_t` structs and the array of
//! `rocprofiler_record_header_t*` a buffer callback receives.
//!
//! A [`Delivery`] owns every struct of one callback; the pointers it hands
//! out are valid until it is dropped, after the callback returns — as with
//! the SDK, a tool must copy what it keeps. Records are ordered by the time
//! they completed (`end`, or the timestamp of point events), which is the
//! order the SDK's buffer stores them in: the batch's tables are merged
//! back into one sequence. Each struct's fields are written by
//! `rocwasm_capi_convert::records`, beside the tool's way back.

use std::ffi::c_void;

use rocwasm_capi_convert::records::{
    allocation_to_c, api_to_c, copy_to_c, dispatch_to_c, retirement_to_c,
    runtime_initialization_to_c, scratch_to_c,
};
use rocwasm_core::{Batch, BufferTracingKind};

use crate::abi::records::*;
use crate::abi::{enums, RecordHeader};
use crate::operations;

const TRACING: u32 = enums::rocprofiler_buffer_category::ROCPROFILER_BUFFER_CATEGORY_TRACING as u32;

/// Every record struct of one delivery and the header array pointing at them.
#[derive(Default)]
pub struct Delivery {
    api: Vec<ApiRecord>,
    dispatches: Vec<KernelDispatchRecord>,
    copies: Vec<MemoryCopyRecord>,
    allocations: Vec<MemoryAllocationRecord>,
    scratch: Vec<ScratchMemoryRecord>,
    retirements: Vec<RetirementRecord>,
    initializations: Vec<RuntimeInitializationRecord>,
    headers: Vec<RecordHeader>,
    pointers: Vec<*mut RecordHeader>,
}

/// Which table and row a header points to, and when the record completed.
#[derive(Clone, Copy)]
struct Slot {
    time: u64,
    table: u8,
    row: usize,
}

impl Delivery {
    /// The SDK records of `batch`.
    pub fn new(batch: &Batch) -> Delivery {
        let mut d = Delivery::default();
        let mut slots = Vec::with_capacity(batch.len());
        // Every table by name: one the schema gains fails to compile here
        // until the C API delivers it as an SDK record or says why not.
        let Batch {
            api_calls,
            kernel_dispatches,
            memory_copies,
            memory_allocations,
            scratch_memory,
            retirements,
            runtime_initializations,
            counter_samples,
        } = batch;
        // A tool's dispatch counting chooses its counters per dispatch; the
        // engine produces counter samples only for a context given a
        // counter set (`Profiler::set_dispatch_counters`, the run's own
        // outputs), never for a tool's, so none can arrive here yet.
        if !counter_samples.is_empty() {
            static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!(
                    "rocwasm: {} counter sample(s) reached a native tool's buffer, which does \
                     not deliver counter records yet",
                    counter_samples.len()
                );
            }
        }
        for r in api_calls.rows() {
            let kind = BufferTracingKind::from_raw(r.kind);
            let operation = kind.map_or(-1, |k| operations::buffer(k).to_sdk(r.operation));
            slots.push(Slot {
                time: r.end,
                table: 0,
                row: d.api.len(),
            });
            d.api.push(api_to_c(&r, operation));
        }
        for r in kernel_dispatches.rows() {
            slots.push(Slot {
                time: r.end,
                table: 1,
                row: d.dispatches.len(),
            });
            d.dispatches.push(dispatch_to_c(&r));
        }
        for r in memory_copies.rows() {
            slots.push(Slot {
                time: r.end,
                table: 2,
                row: d.copies.len(),
            });
            let op = operations::buffer(BufferTracingKind::MemoryCopy).to_sdk(r.operation);
            d.copies.push(copy_to_c(&r, op));
        }
        for r in memory_allocations.rows() {
            slots.push(Slot {
                time: r.end,
                table: 3,
                row: d.allocations.len(),
            });
            let op = operations::buffer(BufferTracingKind::MemoryAllocation).to_sdk(r.operation);
            d.allocations.push(allocation_to_c(&r, op));
        }
        for r in scratch_memory.rows() {
            slots.push(Slot {
                time: r.end,
                table: 4,
                row: d.scratch.len(),
            });
            let op = operations::buffer(BufferTracingKind::ScratchMemory).to_sdk(r.operation);
            d.scratch.push(scratch_to_c(&r, op));
        }
        for r in retirements.rows() {
            slots.push(Slot {
                time: r.timestamp,
                table: 5,
                row: d.retirements.len(),
            });
            d.retirements.push(retirement_to_c(&r));
        }
        for r in runtime_initializations.rows() {
            slots.push(Slot {
                time: r.timestamp,
                table: 6,
                row: d.initializations.len(),
            });
            let op =
                operations::buffer(BufferTracingKind::RuntimeInitialization).to_sdk(r.operation);
            d.initializations.push(runtime_initialization_to_c(&r, op));
        }
        // Stable: records completing at the same time keep table order.
        slots.sort_by_key(|s| s.time);
        d.headers = slots.iter().map(|s| d.header(*s)).collect();
        let base = d.headers.as_mut_ptr();
        // The headers vector is not touched again, so these stay valid.
        d.pointers = (0..d.headers.len()).map(|i| base.wrapping_add(i)).collect();
        d
    }

    fn header(&mut self, s: Slot) -> RecordHeader {
        fn at<T>(v: &mut [T], row: usize) -> *mut c_void {
            (&mut v[row]) as *mut T as *mut c_void
        }
        let (kind, payload) = match s.table {
            0 => (self.api[s.row].kind as u32, at(&mut self.api, s.row)),
            1 => (
                BufferTracingKind::KernelDispatch.raw(),
                at(&mut self.dispatches, s.row),
            ),
            2 => (
                BufferTracingKind::MemoryCopy.raw(),
                at(&mut self.copies, s.row),
            ),
            3 => (
                BufferTracingKind::MemoryAllocation.raw(),
                at(&mut self.allocations, s.row),
            ),
            4 => (
                BufferTracingKind::ScratchMemory.raw(),
                at(&mut self.scratch, s.row),
            ),
            5 => (
                BufferTracingKind::CorrelationIdRetirement.raw(),
                at(&mut self.retirements, s.row),
            ),
            _ => (
                BufferTracingKind::RuntimeInitialization.raw(),
                at(&mut self.initializations, s.row),
            ),
        };
        RecordHeader::new(TRACING, kind, payload)
    }

    /// The header array and its length, for the buffer callback.
    pub fn headers(&mut self) -> (*mut *mut RecordHeader, usize) {
        (self.pointers.as_mut_ptr(), self.pointers.len())
    }
}

/// `rocprofiler_iterate_buffer_tracing_record_args`: the arguments of a
/// buffered record. As the SDK: INVALID_ARGUMENT for kind NONE or LAST (or
/// beyond), NOT_IMPLEMENTED for every kind whose records carry no
/// arguments, which is every record rocwasm delivers (the argument-carrying
/// `*_API_EXT` kinds are accepted and never recorded); `callback` is not
/// called.
#[no_mangle]
pub extern "C" fn rocprofiler_iterate_buffer_tracing_record_args(
    record: RecordHeader,
    _callback: Option<unsafe extern "C-unwind" fn()>,
    _user_data: *mut c_void,
) -> crate::status::Code {
    use enums::rocprofiler_buffer_tracing_kind as kind;
    crate::guard::guard("rocprofiler_iterate_buffer_tracing_record_args", || {
        let k = i64::from((record.hash >> 32) as u32);
        if k == kind::ROCPROFILER_BUFFER_TRACING_NONE || k >= kind::ROCPROFILER_BUFFER_TRACING_LAST
        {
            return Err(rocwasm_core::Status::InvalidArgument);
        }
        Err(rocwasm_core::Status::NotImplemented)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{ApiCall, KernelDispatch};

    #[test]
    fn a_batch_becomes_sdk_records_in_completion_order() {
        let mut batch = Batch::default();
        let hip_malloc =
            rocwasm_core::operation_by_name(BufferTracingKind::HipRuntimeApi, "hipMalloc").unwrap();
        batch.api_calls.push(ApiCall {
            kind: BufferTracingKind::HipRuntimeApi.raw(),
            operation: hip_malloc,
            correlation_id: 7,
            external_correlation_id: 99,
            ancestor: 0,
            thread_id: 11,
            start: 100,
            end: 300,
        });
        batch.kernel_dispatches.push(KernelDispatch {
            correlation_id: 7,
            start: 150,
            end: 200,
            kernel_id: 3,
            grid_x: 256,
            ..Default::default()
        });
        let mut d = Delivery::new(&batch);
        let (headers, n) = d.headers();
        assert_eq!(n, 2);
        // SAFETY: `d` owns the headers and records for this scope.
        unsafe {
            let first = &**headers;
            assert_eq!(first.hash & 0xffff_ffff, u64::from(TRACING));
            assert_eq!(
                first.hash >> 32,
                u64::from(BufferTracingKind::KernelDispatch.raw())
            );
            let k = &*(first.payload as *const KernelDispatchRecord);
            assert_eq!(
                (
                    k.start_timestamp,
                    k.end_timestamp,
                    k.dispatch_info.kernel_id
                ),
                (150, 200, 3)
            );
            assert_eq!(k.dispatch_info.grid_size.x, 256);
            let second = &**headers.add(1);
            let a = &*(second.payload as *const ApiRecord);
            assert_eq!(
                a.operation,
                enums::rocprofiler_hip_runtime_api_id::ROCPROFILER_HIP_RUNTIME_API_ID_hipMalloc
                    as i32
            );
            assert_eq!(a.correlation_id.external.value, 99);
            assert_eq!(a.size, 64);
        }
    }

    #[test]
    fn record_args_are_answered_as_the_sdk_answers_records_without_arguments() {
        use crate::status::code;
        use rocwasm_core::Status;
        let ask = |kind: u32| {
            rocprofiler_iterate_buffer_tracing_record_args(
                RecordHeader::new(TRACING, kind, std::ptr::null_mut()),
                None,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(ask(0), code(Status::InvalidArgument));
        assert_eq!(ask(u32::MAX), code(Status::InvalidArgument));
        assert_eq!(
            ask(BufferTracingKind::KernelDispatch.raw()),
            code(Status::NotImplemented)
        );
    }
}
