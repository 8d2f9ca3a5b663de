//! The HSA runtime underneath: declarations of the `hsa_*` functions HIP
//! uses (resolved at run time from `libhsa-runtime64.so.1`, so an HSA tool
//! that rewrote the API table sees these calls) and small safe wrappers.
//!
//! `build.rs` reads this file to build the link stub: every `fn hsa_*`
//! declared here must exist in the real runtime.

#![allow(non_camel_case_types)]

use std::ffi::c_void;

pub type Status = u32;
pub const SUCCESS: Status = 0;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Handle {
    pub handle: u64,
}

/// `hsa_queue_t`, as far as HIP reads it.
#[repr(C)]
pub struct Queue {
    pub type_: u32,
    pub features: u32,
    pub base_address: *mut c_void,
    pub doorbell_signal: Handle,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// `hsa_pitched_ptr_t`.
#[repr(C)]
pub struct PitchedPtr {
    pub base: *mut c_void,
    pub pitch: usize,
    pub slice: usize,
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Default)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[repr(C)]
#[derive(Default)]
pub struct DispatchTime {
    pub start: u64,
    pub end: u64,
}

pub type AgentCallback = extern "C" fn(Handle, *mut c_void) -> Status;

#[link(name = "hsa-runtime64")]
extern "C" {
    pub fn hsa_init() -> Status;
    pub fn hsa_iterate_agents(callback: AgentCallback, data: *mut c_void) -> Status;
    pub fn hsa_agent_get_info(agent: Handle, attribute: u32, value: *mut c_void) -> Status;
    pub fn hsa_amd_agent_iterate_memory_pools(
        agent: Handle,
        callback: AgentCallback,
        data: *mut c_void,
    ) -> Status;
    pub fn hsa_amd_memory_pool_get_info(pool: Handle, attribute: u32, value: *mut c_void)
        -> Status;
    pub fn hsa_amd_memory_pool_allocate(
        pool: Handle,
        size: usize,
        flags: u32,
        ptr: *mut *mut c_void,
    ) -> Status;
    pub fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> Status;
    pub fn hsa_amd_memory_lock(
        host_ptr: *mut c_void,
        size: usize,
        agents: *mut Handle,
        num_agents: i32,
        agent_ptr: *mut *mut c_void,
    ) -> Status;
    pub fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> Status;
    pub fn hsa_signal_create(
        initial: i64,
        num_consumers: u32,
        consumers: *const Handle,
        signal: *mut Handle,
    ) -> Status;
    pub fn hsa_signal_destroy(signal: Handle) -> Status;
    pub fn hsa_signal_load_scacquire(signal: Handle) -> i64;
    pub fn hsa_signal_store_screlease(signal: Handle, value: i64);
    pub fn hsa_signal_wait_scacquire(
        signal: Handle,
        condition: u32,
        compare: i64,
        timeout: u64,
        hint: u32,
    ) -> i64;
    pub fn hsa_queue_create(
        agent: Handle,
        size: u32,
        type_: u32,
        callback: *const c_void,
        data: *mut c_void,
        private_segment_size: u32,
        group_segment_size: u32,
        queue: *mut *mut Queue,
    ) -> Status;
    pub fn hsa_queue_add_write_index_scacq_screl(queue: *const Queue, value: u64) -> u64;
    pub fn hsa_queue_load_read_index_scacquire(queue: *const Queue) -> u64;
    pub fn hsa_amd_memory_async_copy(
        dst: *mut c_void,
        dst_agent: Handle,
        src: *const c_void,
        src_agent: Handle,
        size: usize,
        num_dep_signals: u32,
        dep_signals: *const Handle,
        completion_signal: Handle,
    ) -> Status;
    pub fn hsa_amd_memory_async_copy_rect(
        dst: *const PitchedPtr,
        dst_offset: *const Dim3,
        src: *const PitchedPtr,
        src_offset: *const Dim3,
        range: *const Dim3,
        copy_agent: Handle,
        dir: u32,
        num_dep_signals: u32,
        dep_signals: *const Handle,
        completion_signal: Handle,
    ) -> Status;
    pub fn hsa_amd_profiling_set_profiler_enabled(queue: *mut Queue, enable: i32) -> Status;
    pub fn hsa_amd_profiling_get_dispatch_time(
        agent: Handle,
        signal: Handle,
        time: *mut DispatchTime,
    ) -> Status;
    pub fn hsa_system_get_major_extension_table(
        extension: u16,
        version_major: u16,
        table_length: usize,
        table: *mut c_void,
    ) -> Status;
    pub fn hsa_code_object_reader_create_from_memory(
        code: *const c_void,
        size: usize,
        reader: *mut Handle,
    ) -> Status;
    pub fn hsa_executable_create_alt(
        profile: u32,
        rounding: u32,
        options: *const i8,
        executable: *mut Handle,
    ) -> Status;
    pub fn hsa_executable_load_agent_code_object(
        executable: Handle,
        agent: Handle,
        reader: Handle,
        options: *const i8,
        loaded: *mut Handle,
    ) -> Status;
    pub fn hsa_executable_freeze(executable: Handle, options: *const i8) -> Status;
    pub fn hsa_executable_get_symbol_by_name(
        executable: Handle,
        name: *const i8,
        agent: *const Handle,
        symbol: *mut Handle,
    ) -> Status;
    pub fn hsa_executable_symbol_get_info(
        symbol: Handle,
        attribute: u32,
        value: *mut c_void,
    ) -> Status;
}

pub const AGENT_INFO_NAME: u32 = 0;
pub const AGENT_INFO_DEVICE: u32 = 17;
pub const AMD_AGENT_INFO_COMPUTE_UNIT_COUNT: u32 = 0xA002;
pub const AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
pub const AMD_AGENT_INFO_PRODUCT_NAME: u32 = 0xA009;
pub const POOL_INFO_GLOBAL_FLAGS: u32 = 1;
pub const POOL_INFO_SIZE: u32 = 2;
pub const GLOBAL_FLAG_KERNARG: u32 = 1;
pub const GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
pub const SYMBOL_INFO_KERNEL_OBJECT: u32 = 22;
pub const CONDITION_LT: u32 = 2;
pub const PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
pub const PACKET_TYPE_BARRIER_AND: u16 = 3;
/// Barrier bit plus system-scope acquire and release fences.
pub const HEADER_FENCES: u16 = (1 << 8) | (2 << 9) | (2 << 11);

/// Reads an attribute of fixed-size type `T`.
pub fn agent_info<T: Default>(agent: Handle, attribute: u32) -> Option<T> {
    let mut value = T::default();
    // SAFETY: `value` is a `T`, the type the attribute is documented to have.
    let status = unsafe { hsa_agent_get_info(agent, attribute, (&mut value as *mut T).cast()) };
    (status == SUCCESS).then_some(value)
}

/// Reads a `char[64]` string attribute.
pub fn agent_string(agent: Handle, attribute: u32) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: string attributes fill at most 64 bytes.
    unsafe { hsa_agent_get_info(agent, attribute, buf.as_mut_ptr().cast()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

pub fn pool_info<T: Default>(pool: Handle, attribute: u32) -> Option<T> {
    let mut value = T::default();
    // SAFETY: as in `agent_info`.
    let status =
        unsafe { hsa_amd_memory_pool_get_info(pool, attribute, (&mut value as *mut T).cast()) };
    (status == SUCCESS).then_some(value)
}

/// Collects the handles an iterate-style call reports.
pub fn collect(iterate: impl FnOnce(AgentCallback, *mut c_void) -> Status) -> Vec<Handle> {
    extern "C" fn push(h: Handle, data: *mut c_void) -> Status {
        // SAFETY: `data` is the `Vec<Handle>` passed below, alive for the call.
        unsafe { (*data.cast::<Vec<Handle>>()).push(h) };
        SUCCESS
    }
    let mut list: Vec<Handle> = Vec::new();
    iterate(push, (&mut list as *mut Vec<Handle>).cast());
    list
}

pub fn signal_create(initial: i64) -> Option<Handle> {
    let mut s = Handle::default();
    // SAFETY: `s` is a valid out-pointer.
    let status = unsafe { hsa_signal_create(initial, 0, std::ptr::null(), &mut s) };
    (status == SUCCESS).then_some(s)
}

pub fn signal_load(s: Handle) -> i64 {
    // SAFETY: plain call with a signal handle.
    unsafe { hsa_signal_load_scacquire(s) }
}

pub fn signal_store(s: Handle, v: i64) {
    // SAFETY: plain call with a signal handle.
    unsafe { hsa_signal_store_screlease(s, v) }
}

pub fn signal_destroy(s: Handle) {
    // SAFETY: plain call with a signal handle we own.
    unsafe { hsa_signal_destroy(s) };
}

/// Blocks until the signal's value is below 1 (the work completed).
pub fn signal_wait_done(s: Handle) {
    // SAFETY: plain call with a signal handle.
    while unsafe { hsa_signal_wait_scacquire(s, CONDITION_LT, 1, u64::MAX, 0) } >= 1 {}
}

/// `HSA_EXTENSION_AMD_LOADER`.
pub const EXTENSION_AMD_LOADER: u16 = 0x201;

/// The AMD loader extension's table (`hsa_ven_amd_loader_1_03_pfn_t`):
/// only the entry HIP uses is typed.
#[repr(C)]
pub struct LoaderTable {
    pub query_host_address: *const c_void,
    pub query_segment_descriptors: *const c_void,
    pub query_executable: *const c_void,
    pub executable_iterate_loaded_code_objects: *const c_void,
    pub loaded_code_object_get_info: *const c_void,
    pub code_object_reader_create_from_file_with_offset_size: Option<
        unsafe extern "C" fn(fd: i32, offset: usize, size: usize, reader: *mut Handle) -> Status,
    >,
    pub iterate_executables: *const c_void,
}
