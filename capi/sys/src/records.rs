//! The buffer-tracing records, `rocprofiler_buffer_tracing_*_record_t`,
//! as `#[repr(C)]` mirrors (checked against AMD's layouts by the crate's
//! tests).

use crate::{AsyncCorrelationId, CorrelationId, Handle, KernelDispatchInfo};

/// `rocprofiler_buffer_tracing_{hip,hsa,marker}_api_record_t` (one layout).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ApiRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// The buffer-tracing kind.
    pub kind: i32,
    /// The SDK's operation id.
    pub operation: i32,
    /// Correlation ids.
    pub correlation_id: CorrelationId,
    /// Call start, ns.
    pub start_timestamp: u64,
    /// Call end, ns.
    pub end_timestamp: u64,
    /// Calling thread.
    pub thread_id: u64,
}

/// `rocprofiler_buffer_tracing_kernel_dispatch_record_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelDispatchRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// `KERNEL_DISPATCH`.
    pub kind: i32,
    /// `ROCPROFILER_KERNEL_DISPATCH_COMPLETE`.
    pub operation: i32,
    /// Correlation ids of the launching call (no ancestor: async).
    pub correlation_id: AsyncCorrelationId,
    /// The launching thread.
    pub thread_id: u64,
    /// Kernel start, ns.
    pub start_timestamp: u64,
    /// Kernel end, ns.
    pub end_timestamp: u64,
    /// What was dispatched where.
    pub dispatch_info: KernelDispatchInfo,
}

/// `rocprofiler_buffer_tracing_memory_copy_record_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemoryCopyRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// `MEMORY_COPY`.
    pub kind: i32,
    /// The direction.
    pub operation: i32,
    /// Correlation ids of the launching call (no ancestor: async).
    pub correlation_id: AsyncCorrelationId,
    /// The launching thread.
    pub thread_id: u64,
    /// Copy start, ns.
    pub start_timestamp: u64,
    /// Copy end, ns.
    pub end_timestamp: u64,
    /// Destination agent.
    pub dst_agent_id: Handle,
    /// Source agent.
    pub src_agent_id: Handle,
    /// Bytes copied.
    pub bytes: u64,
    /// Destination address.
    pub dst_address: u64,
    /// Source address.
    pub src_address: u64,
}

/// `rocprofiler_buffer_tracing_memory_allocation_record_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemoryAllocationRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// `MEMORY_ALLOCATION`.
    pub kind: i32,
    /// Allocate or free.
    pub operation: i32,
    /// Correlation ids of the calling API function.
    pub correlation_id: CorrelationId,
    /// The calling thread.
    pub thread_id: u64,
    /// Start, ns.
    pub start_timestamp: u64,
    /// End, ns.
    pub end_timestamp: u64,
    /// The agent whose memory it is.
    pub agent_id: Handle,
    /// The address.
    pub address: u64,
    /// Bytes.
    pub allocation_size: u64,
}

/// `rocprofiler_buffer_tracing_scratch_memory_record_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ScratchMemoryRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// `SCRATCH_MEMORY`.
    pub kind: i32,
    /// Alloc, free or reclaim.
    pub operation: i32,
    /// Correlation ids.
    pub correlation_id: CorrelationId,
    /// The agent.
    pub agent_id: Handle,
    /// The queue.
    pub queue_id: Handle,
    /// The thread.
    pub thread_id: u64,
    /// Start, ns.
    pub start_timestamp: u64,
    /// End, ns.
    pub end_timestamp: u64,
    /// `rocprofiler_scratch_alloc_flag_t`.
    pub flags: i32,
    /// Bytes of scratch allocated (SDK headers after ROCm 7.0; a ROCm 7.0
    /// SDK's records end before it: read it only when `size` covers it).
    pub allocation_size: u64,
}

/// `rocprofiler_buffer_tracing_correlation_id_retirement_record_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RetirementRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// `CORRELATION_ID_RETIREMENT`.
    pub kind: i32,
    /// When the id retired, ns.
    pub timestamp: u64,
    /// The retired internal id.
    pub internal_correlation_id: u64,
}

/// `rocprofiler_buffer_tracing_runtime_initialization_record_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RuntimeInitializationRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// `RUNTIME_INITIALIZATION`.
    pub kind: i32,
    /// Which runtime.
    pub operation: i32,
    /// Always zero.
    pub correlation_id: CorrelationId,
    /// The loading thread.
    pub thread_id: u64,
    /// When, ns.
    pub timestamp: u64,
    /// `10000·major + 100·minor + patch`.
    pub version: u64,
    /// How many times it was loaded before.
    pub instance: u64,
}
