//! `rocprofiler-sdk-sys`: rocprofiler-sdk's C API as Rust sees it — the
//! types as `#[repr(C)]` mirrors of `capi/include/rocprofiler-sdk/` (field
//! for field, same order and widths), every enum of the headers as
//! constants ([`enums`], generated from the headers by `build.rs`), AMD's
//! measured layouts ([`c_sizeof`], [`c_offsetof`]), the buffer records
//! ([`records`]) and the declarations of the API's functions ([`api`]).
//!
//! Two crates use it: `rocwasm-capi`, which *defines* the API's functions
//! over rocwasm's engine (the tool library that is `librocprofiler-sdk`),
//! and `rocwasm-sdk-tool`, which *calls* them as a client (rocwasm's chain
//! and outputs as a rocprofiler-sdk tool, on AMD's library or rocwasm's).
//! Each fact of the C side is therefore written once, here and in the
//! headers it is generated from.
//!
//! The mirrors are checked against the recorded ABI table
//! (`capi/abi/amd-rocprofiler-sdk-develop-1b1610f.tsv`, AMD's measured sizes and
//! offsets) by this crate's tests, so the headers and these structs cannot
//! drift apart.

use std::ffi::{c_char, c_int, c_void};

/// `rocprofiler_version_triplet_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VersionTriplet {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch.
    pub patch: u32,
}

pub mod api;
pub mod records;

// The function pointers a tool hands the SDK are `"C-unwind"`: a tool
// written in C++ may let an exception escape them, and the caller (rocwasm's
// C API) catches it at its boundary (`rocwasm_capi::foreign`) instead of
// letting it abort the process inside Rust frames.

/// `rocprofiler_callback_tracing_operation_args_cb_t`.
pub type ArgCallback = unsafe extern "C-unwind" fn(
    kind: c_int,
    operation: u32,
    arg_number: u32,
    arg_value_addr: *const c_void,
    arg_indirection_count: i32,
    arg_type: *const c_char,
    arg_name: *const c_char,
    arg_value_str: *const c_char,
    arg_dereference_count: i32,
    data: *mut c_void,
) -> c_int;

/// `rocprofiler_query_available_agents_cb_t`.
pub type AgentsCallback = unsafe extern "C-unwind" fn(
    version: c_int,
    agents: *mut *const c_void,
    num_agents: usize,
    user_data: *mut c_void,
) -> c_int;

/// `rocprofiler_buffer_tracing_cb_t`.
pub type BufferCallback = unsafe extern "C-unwind" fn(
    context: Handle,
    buffer: Handle,
    headers: *mut *mut RecordHeader,
    num_headers: usize,
    data: *mut c_void,
    drop_count: u64,
);

/// `rocprofiler_external_correlation_id_request_cb_t`.
pub type RequestCallback = unsafe extern "C-unwind" fn(
    thread_id: u64,
    context_id: Handle,
    kind: c_int,
    operation: i32,
    internal_corr_id_value: u64,
    external_corr_id_value: *mut UserData,
    data: *mut c_void,
) -> c_int;

/// An operation iteration callback.
pub type OperationCallback =
    unsafe extern "C-unwind" fn(kind: c_int, operation: i32, data: *mut c_void) -> c_int;

/// `rocprofiler_callback_tracing_cb_t`.
pub type TracingCallback = unsafe extern "C-unwind" fn(
    record: CallbackTracingRecord,
    user_data: *mut UserData,
    data: *mut c_void,
);

/// Every enum of the headers: `enums::<name without _t>::<ENUMERATOR>` and
/// `enums::<name>::ALL`.
pub mod enums {
    include!(concat!(env!("OUT_DIR"), "/enums.rs"));
}

/// `rocprofiler_context_id_t`, `rocprofiler_buffer_id_t`,
/// `rocprofiler_agent_id_t`, `rocprofiler_queue_id_t`,
/// `rocprofiler_callback_thread_t`: a 64-bit handle in a struct.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Handle {
    /// The handle; 0 is never a valid context, buffer or thread.
    pub handle: u64,
}

/// `rocprofiler_user_data_t`: a tool's 64 bits, a number or a pointer.
#[repr(C)]
#[derive(Clone, Copy)]
pub union UserData {
    /// As a number.
    pub value: u64,
    /// As a pointer.
    pub ptr: *mut c_void,
}

impl std::fmt::Debug for UserData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: both fields are 64 bits of plain data; reading the number is always valid.
        write!(f, "UserData({:#x})", unsafe { self.value })
    }
}

/// `rocprofiler_correlation_id_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CorrelationId {
    /// The internal id, unique in the run.
    pub internal: u64,
    /// The tool's external id for this context.
    pub external: UserData,
    /// The internal id of the enclosing call on the same thread (0 at top level).
    pub ancestor: u64,
}

/// `rocprofiler_async_correlation_id_t` (the correlation of async records).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AsyncCorrelationId {
    /// The internal id of the launching call.
    pub internal: u64,
    /// The tool's external id for this context.
    pub external: UserData,
}

/// `rocprofiler_dim3_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Dim3 {
    /// x.
    pub x: u32,
    /// y.
    pub y: u32,
    /// z.
    pub z: u32,
}

/// `rocprofiler_record_header_t`: what a buffer callback's array points to.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RecordHeader {
    /// `category | kind << 32` (the C union of `{category, kind}` and `hash`).
    pub hash: u64,
    /// The record.
    pub payload: *mut c_void,
}

impl RecordHeader {
    /// A header for a record of `category` and `kind` at `payload`.
    pub fn new(category: u32, kind: u32, payload: *mut c_void) -> Self {
        RecordHeader {
            hash: u64::from(category) | (u64::from(kind) << 32),
            payload,
        }
    }
}

/// `rocprofiler_callback_tracing_record_t` (passed by value to callbacks).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CallbackTracingRecord {
    /// The context whose service this record is for.
    pub context_id: Handle,
    /// The thread the event belongs to.
    pub thread_id: u64,
    /// The record's correlation ids.
    pub correlation_id: CorrelationId,
    /// `rocprofiler_callback_tracing_kind_t`.
    pub kind: c_int,
    /// The operation within the kind.
    pub operation: i32,
    /// `rocprofiler_callback_phase_t`.
    pub phase: c_int,
    /// Kind-specific data.
    pub payload: *mut c_void,
}

/// `rocprofiler_kernel_dispatch_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelDispatchInfo {
    /// `sizeof` this struct.
    pub size: u64,
    /// The GPU.
    pub agent_id: Handle,
    /// The HSA queue.
    pub queue_id: Handle,
    /// The kernel symbol.
    pub kernel_id: u64,
    /// The dispatch number.
    pub dispatch_id: u64,
    /// Private (scratch) bytes per work-item.
    pub private_segment_size: u32,
    /// Group (LDS) bytes per work-group.
    pub group_segment_size: u32,
    /// Work-group size.
    pub workgroup_size: Dim3,
    /// Grid size in work-items.
    pub grid_size: Dim3,
    /// Reserved.
    pub reserved_padding: [u8; 56],
}

/// `rocprofiler_client_id_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ClientId {
    /// `sizeof` this struct.
    pub size: usize,
    /// The tool's name, set by the tool in `configure` if it likes.
    pub name: *const c_char,
    /// The library's handle for the tool.
    pub handle: u32,
}

/// `rocprofiler_client_finalize_t`.
pub type ClientFinalize = extern "C" fn(ClientId);

/// `rocprofiler_tool_initialize_t`.
pub type ToolInitialize = unsafe extern "C-unwind" fn(ClientFinalize, *mut c_void) -> c_int;

/// `rocprofiler_tool_finalize_t`.
pub type ToolFinalize = unsafe extern "C-unwind" fn(*mut c_void);

/// `rocprofiler_tool_configure_result_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ToolConfigureResult {
    /// `sizeof` the struct as the tool compiled it.
    pub size: usize,
    /// Called once after every tool was configured.
    pub initialize: Option<ToolInitialize>,
    /// Called once at the end.
    pub finalize: Option<ToolFinalize>,
    /// Passed to both.
    pub tool_data: *mut c_void,
}

/// `rocprofiler_configure_func_t` (the tool's exported `rocprofiler_configure`).
pub type ConfigureFn =
    unsafe extern "C-unwind" fn(u32, *const c_char, u32, *mut ClientId) -> *mut ToolConfigureResult;

/// The C types of an API callback-tracing kind's payload: the
/// `…_api_data_t` struct, and the argument union inside it. `kind` is a
/// `rocprofiler_callback_tracing_kind_t`.
pub fn api_data_types(kind: i64) -> Option<(&'static str, &'static str)> {
    use enums::rocprofiler_callback_tracing_kind as k;
    Some(match kind {
        k::ROCPROFILER_CALLBACK_TRACING_HSA_CORE_API
        | k::ROCPROFILER_CALLBACK_TRACING_HSA_AMD_EXT_API
        | k::ROCPROFILER_CALLBACK_TRACING_HSA_IMAGE_EXT_API
        | k::ROCPROFILER_CALLBACK_TRACING_HSA_FINALIZE_EXT_API => (
            "rocprofiler_callback_tracing_hsa_api_data_t",
            "rocprofiler_hsa_api_args_t",
        ),
        k::ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API
        | k::ROCPROFILER_CALLBACK_TRACING_HIP_COMPILER_API => (
            "rocprofiler_callback_tracing_hip_api_data_t",
            "rocprofiler_hip_api_args_t",
        ),
        k::ROCPROFILER_CALLBACK_TRACING_MARKER_CORE_API
        | k::ROCPROFILER_CALLBACK_TRACING_MARKER_CONTROL_API
        | k::ROCPROFILER_CALLBACK_TRACING_MARKER_NAME_API => (
            "rocprofiler_callback_tracing_marker_api_data_t",
            "rocprofiler_marker_api_args_t",
        ),
        _ => return None,
    })
}

/// `sizeof` a C type as AMD's headers lay it out (the ABI table).
pub fn c_sizeof(name: &str) -> Option<usize> {
    layout("sizeof", name)
}

/// `offsetof` a field (`type.field`) as AMD's headers lay it out.
pub fn c_offsetof(path: &str) -> Option<usize> {
    layout("offsetof", path)
}

/// The table indexed once (it has thousands of facts, and payloads look
/// several up per callback).
fn layout(what: &str, name: &str) -> Option<usize> {
    type Index = std::collections::HashMap<(&'static str, &'static str), u64>;
    static INDEX: std::sync::OnceLock<Index> = std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| {
            enums::LAYOUT
                .iter()
                .map(|(k, n, v)| ((*k, *n), *v))
                .collect()
        })
        .get(&(what, name))
        .map(|v| *v as usize)
}

/// `hsa_agent_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaAgent {
    /// The runtime's handle.
    pub handle: u64,
}

/// `rocprofiler_callback_tracing_code_object_load_data_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CodeObjectLoadData {
    /// `sizeof` this struct.
    pub size: u64,
    /// The code object's id.
    pub code_object_id: u64,
    /// The agent it was loaded onto.
    pub agent_id: Handle,
    /// The same agent as HSA's handle.
    pub hsa_agent: HsaAgent,
    /// Where it came from (`file://…`, `memory://…`).
    pub uri: *const c_char,
    /// Base address of the loaded segments.
    pub load_base: u64,
    /// Their size.
    pub load_size: u64,
    /// Load address minus the ELF's virtual address.
    pub load_delta: i64,
    /// `rocprofiler_code_object_storage_type_t`.
    pub storage_type: c_int,
    /// File descriptor, or the first half of the memory location.
    pub storage_a: u64,
    /// The memory location's size.
    pub storage_b: u64,
}

/// `rocprofiler_callback_tracing_kernel_dispatch_data_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelDispatchData {
    /// `sizeof` this struct.
    pub size: u64,
    /// Kernel start, ns.
    pub start_timestamp: u64,
    /// Kernel end, ns.
    pub end_timestamp: u64,
    /// What was dispatched where.
    pub dispatch_info: KernelDispatchInfo,
}

/// `rocprofiler_callback_tracing_memory_copy_data_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemoryCopyData {
    /// `sizeof` this struct.
    pub size: u64,
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

/// `rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelSymbolRegisterData {
    /// `sizeof` this struct.
    pub size: u64,
    /// The kernel's id (what dispatch records name).
    pub kernel_id: u64,
    /// Its code object.
    pub code_object_id: u64,
    /// Its (mangled) name.
    pub kernel_name: *const c_char,
    /// The kernel object a dispatch packet names.
    pub kernel_object: u64,
    /// Kernel-argument bytes.
    pub kernarg_segment_size: u32,
    /// Their alignment.
    pub kernarg_segment_alignment: u32,
    /// Static LDS bytes per work-group.
    pub group_segment_size: u32,
    /// Static scratch bytes per work-item.
    pub private_segment_size: u32,
    /// Scalar registers.
    pub sgpr_count: u32,
    /// Vector registers.
    pub arch_vgpr_count: u32,
    /// Accumulation registers.
    pub accum_vgpr_count: u32,
    /// Entry offset from the kernel descriptor.
    pub kernel_code_entry_byte_offset: i64,
    /// The kernel's code address.
    pub kernel_address: u64,
}

/// `rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HostKernelSymbolRegisterData {
    /// `sizeof` this struct.
    pub size: u64,
    /// Numbers host registrations, from 1.
    pub host_function_id: u64,
    /// The device symbol's kernel id.
    pub kernel_id: u64,
    /// The device symbol's code object.
    pub code_object_id: u64,
    /// The host stub's address.
    pub host_function: u64,
    /// The module handle it was registered with.
    pub modules: u64,
    /// The device function's name.
    pub device_function: *const c_char,
    /// `threadLimit` as registered.
    pub thread_limit: u32,
    /// `tid` as registered.
    pub thread_ids: Dim3,
    /// `bid` as registered.
    pub block_ids: Dim3,
    /// `blockDim` as registered.
    pub block_dims: Dim3,
    /// `gridDim` as registered.
    pub grid_dims: Dim3,
    /// `wSize` as registered.
    pub workgroup_size: u64,
}

/// `rocprofiler_callback_tracing_runtime_initialization_data_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RuntimeInitializationData {
    /// `sizeof` this struct.
    pub size: u64,
    /// 10000·major + 100·minor + patch.
    pub version: u64,
    /// Earlier loads of the runtime.
    pub instance: u64,
}
