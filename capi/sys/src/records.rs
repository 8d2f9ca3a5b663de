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

// ── Counters (`counters.h`, `dispatch_counting_service.h`) ─────────────────

/// `rocprofiler_counter_record_t`: one counter instance's value.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterRecord {
    /// Counter id (bits 63–48) and dimension positions.
    pub id: u64,
    /// The value.
    pub counter_value: f64,
    /// The dispatch counted (0 for device counting).
    pub dispatch_id: u64,
    /// The tool's user data of the dispatch (or of the device sample).
    pub user_data: u64,
    /// The agent counted.
    pub agent_id: Handle,
}

/// `rocprofiler_dispatch_counting_service_data_t`: the dispatch a counting
/// callback is about.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DispatchCountingData {
    /// `sizeof` this struct.
    pub size: u64,
    /// The launching call's correlation ids.
    pub correlation_id: AsyncCorrelationId,
    /// Kernel start, ns (0 before the dispatch ran).
    pub start_timestamp: u64,
    /// Kernel end, ns (0 before the dispatch ran).
    pub end_timestamp: u64,
    /// The dispatch.
    pub dispatch_info: KernelDispatchInfo,
}

/// `rocprofiler_dispatch_counting_service_record_t`: the header record of
/// a dispatch's counter values in a buffer (`num_records` value records
/// follow it).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DispatchCountingRecord {
    /// `sizeof` this struct.
    pub size: u64,
    /// How many value records follow.
    pub num_records: u64,
    /// The launching call's correlation ids.
    pub correlation_id: AsyncCorrelationId,
    /// Kernel start, ns.
    pub start_timestamp: u64,
    /// Kernel end, ns.
    pub end_timestamp: u64,
    /// The dispatch.
    pub dispatch_info: KernelDispatchInfo,
}

/// `rocprofiler_counter_record_dimension_info_t`: a dimension of a counter.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterDimensionInfo {
    /// `DIMENSION_SHADER_ENGINE` and the like.
    pub name: *const std::ffi::c_char,
    /// Its extent.
    pub instance_size: usize,
    /// `rocprofiler_counter_dimension_id_t`.
    pub id: u64,
}

/// `rocprofiler_counter_dimension_info_t`: one instance's position in one
/// dimension.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterDimensionPosition {
    /// `sizeof` this struct.
    pub size: u64,
    /// The dimension's name.
    pub dimension_name: *const std::ffi::c_char,
    /// The position.
    pub index: usize,
}

/// `rocprofiler_counter_record_dimension_instance_info_t`: one instance a
/// counter can produce.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterInstanceInfo {
    /// `sizeof` this struct.
    pub size: u64,
    /// The instance id its records carry.
    pub instance_id: u64,
    /// The counter.
    pub counter_id: u64,
    /// Entries of `dimensions`.
    pub dimensions_count: u64,
    /// Its position in each dimension.
    pub dimensions: *const *const CounterDimensionPosition,
}

/// `rocprofiler_counter_info_v0_t`: the id, four strings, then
/// `is_constant` (bit 0) and `is_derived` (bit 1) in one byte.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterInfoV0 {
    /// The counter.
    pub id: Handle,
    /// Its name.
    pub name: *const std::ffi::c_char,
    /// Its description.
    pub description: *const std::ffi::c_char,
    /// Its hardware block (empty when derived).
    pub block: *const std::ffi::c_char,
    /// Its expression (empty when not derived).
    pub expression: *const std::ffi::c_char,
    /// Bit 0 `is_constant`, bit 1 `is_derived`.
    pub flags: u8,
}

/// `rocprofiler_counter_info_v1_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterInfoV1 {
    /// `sizeof` this struct.
    pub size: u64,
    /// The counter.
    pub id: Handle,
    /// Its name.
    pub name: *const std::ffi::c_char,
    /// Its description.
    pub description: *const std::ffi::c_char,
    /// Its hardware block (empty when derived).
    pub block: *const std::ffi::c_char,
    /// Its expression (empty when not derived).
    pub expression: *const std::ffi::c_char,
    /// Bit 0 `is_constant`, bit 1 `is_derived`.
    pub flags: u8,
    /// Entries of `dimensions`.
    pub dimensions_count: u64,
    /// Its dimensions.
    pub dimensions: *const *const CounterDimensionInfo,
    /// Entries of `dimensions_instances`.
    pub dimensions_instances_count: u64,
    /// Every instance it produces.
    pub dimensions_instances: *const *const CounterInstanceInfo,
}
