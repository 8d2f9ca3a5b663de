//! Memory: every pool is host memory. Allocations are recorded so that
//! frees can be checked and kernel effects can verify that the pointers in a
//! kernel's arguments really belong to the application.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::ffi::*;
use crate::runtime;
use crate::util::out;

struct Allocation {
    layout: Layout,
}

static ALLOCATIONS: Mutex<BTreeMap<usize, Allocation>> = Mutex::new(BTreeMap::new());

const ALIGN: usize = 4096;

fn allocations() -> std::sync::MutexGuard<'static, BTreeMap<usize, Allocation>> {
    ALLOCATIONS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Allocates `size` bytes (zeroed, page aligned); `None` if impossible.
pub fn allocate(size: usize) -> Option<*mut u8> {
    let layout = Layout::from_size_align(size.max(1), ALIGN).ok()?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    allocations().insert(ptr as usize, Allocation { layout });
    Some(ptr)
}

/// Frees an allocation made by [`allocate`]; false if `ptr` is not one.
pub fn free(ptr: *mut u8) -> bool {
    let Some(a) = allocations().remove(&(ptr as usize)) else {
        return false;
    };
    // SAFETY: `ptr` was returned by `alloc_zeroed` with this layout and is
    // removed from the table, so it is freed exactly once.
    unsafe { std::alloc::dealloc(ptr, a.layout) };
    true
}

/// True if `[ptr, ptr + len)` lies inside one live allocation.
pub fn contains(ptr: usize, len: usize) -> bool {
    let map = allocations();
    map.range(..=ptr)
        .next_back()
        .is_some_and(|(&base, a)| ptr + len <= base + a.layout.size())
}

pub extern "C" fn hsa_amd_memory_pool_allocate(
    pool: hsa_amd_memory_pool_t,
    size: usize,
    _flags: u32,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    let rt = match runtime::initialized() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    let Some((_, p)) = crate::agent::find_pool(pool.handle) else {
        return HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    };
    if let Some(status) = rt.inject("hsa_amd_memory_pool_allocate") {
        return status;
    }
    if size == 0 || size as u64 > p.size {
        return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
    match allocate(size) {
        Some(mem) => out(ptr, mem.cast()),
        None => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
    }
}

pub extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t {
    if ptr.is_null() || free(ptr.cast()) {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    }
}

pub extern "C" fn hsa_memory_allocate(
    region: hsa_region_t,
    size: usize,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    hsa_amd_memory_pool_allocate(region, size, 0, ptr)
}

pub extern "C" fn hsa_memory_free(ptr: *mut c_void) -> hsa_status_t {
    hsa_amd_memory_pool_free(ptr)
}

/// Every agent already sees every allocation.
pub extern "C" fn hsa_amd_agents_allow_access(
    _num_agents: u32,
    _agents: *const hsa_agent_t,
    _flags: *const u32,
    _ptr: *const c_void,
) -> hsa_status_t {
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_memory_register(_ptr: *mut c_void, _size: usize) -> hsa_status_t {
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_memory_deregister(_ptr: *mut c_void, _size: usize) -> hsa_status_t {
    HSA_STATUS_SUCCESS
}

/// Locking host memory for a GPU: the agent address is the host address.
pub extern "C" fn hsa_amd_memory_lock(
    host_ptr: *mut c_void,
    _size: usize,
    _agents: *mut hsa_agent_t,
    _num_agent: i32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    out(agent_ptr, host_ptr)
}

pub extern "C" fn hsa_amd_memory_unlock(_host_ptr: *mut c_void) -> hsa_status_t {
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_memory_copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
) -> hsa_status_t {
    if size == 0 {
        return HSA_STATUS_SUCCESS;
    }
    if dst.is_null() || src.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller guarantees both ranges are valid for `size` bytes
    // (all device memory is host memory here); `copy` tolerates overlap.
    unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t {
    if ptr.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller guarantees `ptr` is valid for `count` 32-bit words.
    let words = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u32>(), count) };
    words.fill(value);
    HSA_STATUS_SUCCESS
}
