//! The C types and constants of the HSA API that the simulation implements
//! (values from `hsa.h`, `hsa_ext_amd.h`, `hsa_ven_amd_loader.h` of ROCm 5.2).
//! Struct layouts are checked against the real headers in `table::layout_check`.

#![allow(non_camel_case_types, dead_code)]

use std::ffi::c_void;

pub type hsa_status_t = u32;
pub const HSA_STATUS_SUCCESS: hsa_status_t = 0;
pub const HSA_STATUS_INFO_BREAK: hsa_status_t = 0x1;
pub const HSA_STATUS_ERROR: hsa_status_t = 0x1000;
pub const HSA_STATUS_ERROR_INVALID_ARGUMENT: hsa_status_t = 0x1001;
pub const HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: hsa_status_t = 0x1002;
pub const HSA_STATUS_ERROR_INVALID_ALLOCATION: hsa_status_t = 0x1003;
pub const HSA_STATUS_ERROR_INVALID_AGENT: hsa_status_t = 0x1004;
pub const HSA_STATUS_ERROR_INVALID_REGION: hsa_status_t = 0x1005;
pub const HSA_STATUS_ERROR_INVALID_SIGNAL: hsa_status_t = 0x1006;
pub const HSA_STATUS_ERROR_INVALID_QUEUE: hsa_status_t = 0x1007;
pub const HSA_STATUS_ERROR_OUT_OF_RESOURCES: hsa_status_t = 0x1008;
pub const HSA_STATUS_ERROR_NOT_INITIALIZED: hsa_status_t = 0x100B;
pub const HSA_STATUS_ERROR_INVALID_INDEX: hsa_status_t = 0x100E;
pub const HSA_STATUS_ERROR_INVALID_ISA: hsa_status_t = 0x100F;
pub const HSA_STATUS_ERROR_INVALID_CODE_OBJECT: hsa_status_t = 0x1010;
pub const HSA_STATUS_ERROR_INVALID_EXECUTABLE: hsa_status_t = 0x1011;
pub const HSA_STATUS_ERROR_FROZEN_EXECUTABLE: hsa_status_t = 0x1012;
pub const HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: hsa_status_t = 0x1013;
pub const HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: hsa_status_t = 0x1019;
pub const HSA_STATUS_ERROR_INVALID_FILE: hsa_status_t = 0x1020;
pub const HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: hsa_status_t = 0x1021;
pub const HSA_STATUS_ERROR_INVALID_MEMORY_POOL: hsa_status_t = 40;

/// Every HSA handle is `struct { uint64_t handle; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Handle {
    pub handle: u64,
}
pub type hsa_agent_t = Handle;
pub type hsa_signal_t = Handle;
pub type hsa_region_t = Handle;
pub type hsa_amd_memory_pool_t = Handle;
pub type hsa_isa_t = Handle;
pub type hsa_executable_t = Handle;
pub type hsa_executable_symbol_t = Handle;
pub type hsa_code_object_reader_t = Handle;
pub type hsa_loaded_code_object_t = Handle;

pub type hsa_signal_value_t = i64;

// System, agent, ISA attributes.
pub const HSA_SYSTEM_INFO_VERSION_MAJOR: u32 = 0;
pub const HSA_SYSTEM_INFO_VERSION_MINOR: u32 = 1;
pub const HSA_SYSTEM_INFO_TIMESTAMP: u32 = 2;
pub const HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY: u32 = 3;
pub const HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT: u32 = 4;
pub const HSA_SYSTEM_INFO_ENDIANNESS: u32 = 5;
pub const HSA_SYSTEM_INFO_MACHINE_MODEL: u32 = 6;
pub const HSA_SYSTEM_INFO_EXTENSIONS: u32 = 7;

pub const HSA_DEVICE_TYPE_CPU: u32 = 0;
pub const HSA_DEVICE_TYPE_GPU: u32 = 1;

pub const HSA_AGENT_INFO_NAME: u32 = 0;
pub const HSA_AGENT_INFO_VENDOR_NAME: u32 = 1;
pub const HSA_AGENT_INFO_FEATURE: u32 = 2;
pub const HSA_AGENT_INFO_MACHINE_MODEL: u32 = 3;
pub const HSA_AGENT_INFO_PROFILE: u32 = 4;
pub const HSA_AGENT_INFO_WAVEFRONT_SIZE: u32 = 6;
pub const HSA_AGENT_INFO_WORKGROUP_MAX_DIM: u32 = 7;
pub const HSA_AGENT_INFO_WORKGROUP_MAX_SIZE: u32 = 8;
pub const HSA_AGENT_INFO_GRID_MAX_DIM: u32 = 9;
pub const HSA_AGENT_INFO_GRID_MAX_SIZE: u32 = 10;
pub const HSA_AGENT_INFO_QUEUES_MAX: u32 = 12;
pub const HSA_AGENT_INFO_QUEUE_MIN_SIZE: u32 = 13;
pub const HSA_AGENT_INFO_QUEUE_MAX_SIZE: u32 = 14;
pub const HSA_AGENT_INFO_QUEUE_TYPE: u32 = 15;
pub const HSA_AGENT_INFO_NODE: u32 = 16;
pub const HSA_AGENT_INFO_DEVICE: u32 = 17;
pub const HSA_AGENT_INFO_CACHE_SIZE: u32 = 18;
pub const HSA_AGENT_INFO_ISA: u32 = 19;
pub const HSA_AGENT_INFO_VERSION_MAJOR: u32 = 21;
pub const HSA_AGENT_INFO_VERSION_MINOR: u32 = 22;
pub const HSA_AMD_AGENT_INFO_CHIP_ID: u32 = 0xA000;
pub const HSA_AMD_AGENT_INFO_CACHELINE_SIZE: u32 = 0xA001;
pub const HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT: u32 = 0xA002;
pub const HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
pub const HSA_AMD_AGENT_INFO_DRIVER_NODE_ID: u32 = 0xA004;
pub const HSA_AMD_AGENT_INFO_BDFID: u32 = 0xA006;
pub const HSA_AMD_AGENT_INFO_PRODUCT_NAME: u32 = 0xA009;
pub const HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU: u32 = 0xA00A;
pub const HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU: u32 = 0xA00B;
pub const HSA_AMD_AGENT_INFO_UUID: u32 = 0xA011;
pub const HSA_AMD_AGENT_INFO_ASIC_REVISION: u32 = 0xA012;

pub const HSA_ISA_INFO_NAME_LENGTH: u32 = 0;
pub const HSA_ISA_INFO_NAME: u32 = 1;

// Memory pools and regions.
pub const HSA_AMD_SEGMENT_GLOBAL: u32 = 0;
pub const HSA_REGION_SEGMENT_GLOBAL: u32 = 0;
pub const HSA_AMD_MEMORY_POOL_INFO_SEGMENT: u32 = 0;
pub const HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS: u32 = 1;
pub const HSA_AMD_MEMORY_POOL_INFO_SIZE: u32 = 2;
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
pub const HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL: u32 = 15;
pub const HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE: u32 = 16;
pub const HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS: u32 = 0;
pub const HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT: u32 = 1;
pub const HSA_REGION_INFO_SEGMENT: u32 = 0;
pub const HSA_REGION_INFO_GLOBAL_FLAGS: u32 = 1;
pub const HSA_REGION_INFO_SIZE: u32 = 2;
pub const HSA_REGION_INFO_ALLOC_MAX_SIZE: u32 = 4;
pub const HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
pub const HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
pub const HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
/// Global-segment flags: kernarg, fine grained, coarse grained.
pub const GLOBAL_FLAG_KERNARG: u32 = 1;
pub const GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
pub const GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;

// Signals.
pub const HSA_SIGNAL_CONDITION_EQ: u32 = 0;
pub const HSA_SIGNAL_CONDITION_NE: u32 = 1;
pub const HSA_SIGNAL_CONDITION_LT: u32 = 2;
pub const HSA_SIGNAL_CONDITION_GTE: u32 = 3;

// Queues and packets.
pub const HSA_QUEUE_TYPE_MULTI: u32 = 0;
pub const HSA_QUEUE_FEATURE_KERNEL_DISPATCH: u32 = 1;
pub const HSA_QUEUE_FEATURE_AGENT_DISPATCH: u32 = 2;
pub const HSA_PACKET_TYPE_VENDOR_SPECIFIC: u16 = 0;
pub const HSA_PACKET_TYPE_INVALID: u16 = 1;
pub const HSA_PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
pub const HSA_PACKET_TYPE_BARRIER_AND: u16 = 3;
pub const HSA_PACKET_TYPE_AGENT_DISPATCH: u16 = 4;
pub const HSA_PACKET_TYPE_BARRIER_OR: u16 = 5;
/// The packet type occupies the low 8 bits of the header.
pub const HSA_PACKET_HEADER_TYPE_MASK: u16 = 0xff;

/// `hsa_queue_t`.
#[repr(C)]
pub struct hsa_queue_t {
    pub type_: u32,
    pub features: u32,
    pub base_address: *mut c_void,
    pub doorbell_signal: hsa_signal_t,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// One 64-byte AQL packet, viewed as a kernel dispatch packet.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_kernel_dispatch_packet_t {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size_x: u16,
    pub workgroup_size_y: u16,
    pub workgroup_size_z: u16,
    pub reserved0: u16,
    pub grid_size_x: u32,
    pub grid_size_y: u32,
    pub grid_size_z: u32,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: *mut c_void,
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}

/// The same 64 bytes viewed as a barrier-AND/OR packet.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_barrier_and_packet_t {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [hsa_signal_t; 5],
    pub reserved2: u64,
    pub completion_signal: hsa_signal_t,
}

/// Raw bytes of one packet, as copied out of (and into) a ring.
pub type RawPacket = [u64; 8];

#[repr(C)]
pub struct hsa_amd_profiling_dispatch_time_t {
    pub start: u64,
    pub end: u64,
}

/// A pitched pointer of a rectangular copy: byte `(x, y, z)` is at
/// `base + z · slice + y · pitch + x`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hsa_pitched_ptr_t {
    pub base: *mut c_void,
    pub pitch: usize,
    pub slice: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct hsa_dim3_t {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hsa_amd_copy_direction_t`: hsaHostToHost … hsaDeviceToDevice.
pub const HSA_AMD_COPY_DIRECTIONS: u32 = 4;

#[repr(C)]
pub struct hsa_amd_profiling_async_copy_time_t {
    pub start: u64,
    pub end: u64,
}

// Executables and the loader extension.
pub const HSA_EXTENSION_AMD_LOADER: u16 = 0x201;
pub const HSA_SYMBOL_KIND_VARIABLE: u32 = 0;
pub const HSA_SYMBOL_KIND_KERNEL: u32 = 1;
pub const HSA_EXECUTABLE_SYMBOL_INFO_TYPE: u32 = 0;
pub const HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH: u32 = 1;
pub const HSA_EXECUTABLE_SYMBOL_INFO_NAME: u32 = 2;
pub const HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE: u32 = 5;
pub const HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION: u32 = 17;
pub const HSA_EXECUTABLE_SYMBOL_INFO_AGENT: u32 = 20;
pub const HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS: u32 = 21;
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT: u32 = 22;
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT: u32 = 12;
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
pub const HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK: u32 = 15;
pub const HSA_EXECUTABLE_STATE_UNFROZEN: u32 = 0;
pub const HSA_EXECUTABLE_STATE_FROZEN: u32 = 1;
pub const HSA_EXECUTABLE_INFO_PROFILE: u32 = 1;
pub const HSA_EXECUTABLE_INFO_STATE: u32 = 2;

pub const LOADED_CODE_OBJECT_INFO_EXECUTABLE: u32 = 1;
pub const LOADED_CODE_OBJECT_INFO_KIND: u32 = 2;
pub const LOADED_CODE_OBJECT_INFO_AGENT: u32 = 3;
pub const LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE: u32 = 4;
pub const LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE: u32 = 5;
pub const LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE: u32 = 6;
pub const LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_FILE: u32 = 7;
pub const LOADED_CODE_OBJECT_INFO_LOAD_DELTA: u32 = 8;
pub const LOADED_CODE_OBJECT_INFO_LOAD_BASE: u32 = 9;
pub const LOADED_CODE_OBJECT_INFO_LOAD_SIZE: u32 = 10;
pub const LOADED_CODE_OBJECT_INFO_URI_LENGTH: u32 = 11;
pub const LOADED_CODE_OBJECT_INFO_URI: u32 = 12;
pub const LOADED_CODE_OBJECT_KIND_AGENT: u32 = 2;
/// `HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY` (NONE = 0, FILE = 1, MEMORY = 2).
pub const CODE_OBJECT_STORAGE_TYPE_MEMORY: u32 = 2;

/// `hsa_ven_amd_loader_1_03_pfn_t` (the newest 5.2 loader table; older
/// versions are prefixes of it).
#[repr(C)]
pub struct LoaderTable {
    pub query_host_address: *const c_void,
    pub query_segment_descriptors: *const c_void,
    pub query_executable: *const c_void,
    pub executable_iterate_loaded_code_objects: *const c_void,
    pub loaded_code_object_get_info: *const c_void,
    pub code_object_reader_create_from_file_with_offset_size: *const c_void,
    pub iterate_executables: *const c_void,
}

pub type AsyncHandler = unsafe extern "C" fn(value: hsa_signal_value_t, arg: *mut c_void) -> bool;
pub type QueueErrorCallback =
    Option<unsafe extern "C" fn(hsa_status_t, *mut hsa_queue_t, *mut c_void)>;
pub type InterceptWriter = unsafe extern "C" fn(pkts: *const c_void, count: u64);
pub type InterceptHandler = unsafe extern "C" fn(
    pkts: *const c_void,
    count: u64,
    user_pkt_index: u64,
    data: *mut c_void,
    writer: InterceptWriter,
);
