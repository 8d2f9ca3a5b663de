//! The allocation table: every allocation made through this runtime (and
//! every range registered with `hipHostRegister`) is an [`Object`], which
//! is how copies are planned (memory that is no object is *pageable*, see
//! `sim/README.md`, "Copies of pageable memory"); and the HSA pool
//! allocate/free primitives that keep the table up to date.
//!
//! The lowest memory layer: uses only `error` and `hsa`. `memory` (the
//! allocation and copy calls) and `pool` (stream-ordered allocation) build
//! on it.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::error::*;
use crate::hsa::{self, Handle};

/// What a runtime allocation (or registered range) is, for planning copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    /// Device memory (`hipMalloc`, `hipMallocAsync`, …).
    Device,
    /// Pinned host memory the runtime allocated (`hipHostMalloc`,
    /// `hipMallocManaged`).
    Host,
    /// Application memory pinned with `hipHostRegister`.
    Registered,
}

impl Object {
    pub fn is_device(self) -> bool {
        self == Object::Device
    }
}

/// Live objects: base address → (size, what).
static OBJECTS: Mutex<BTreeMap<usize, (usize, Object)>> = Mutex::new(BTreeMap::new());

fn objects() -> std::sync::MutexGuard<'static, BTreeMap<usize, (usize, Object)>> {
    OBJECTS.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn add_object(base: *mut c_void, size: usize, what: Object) {
    objects().insert(base as usize, (size, what));
}

pub fn remove_object(base: *mut c_void) -> Option<(usize, Object)> {
    objects().remove(&(base as usize))
}

/// The object containing `ptr`: (its base, its size, what it is).
pub fn find_object(ptr: *const c_void) -> Option<(usize, usize, Object)> {
    let p = ptr as usize;
    objects()
        .range(..=p)
        .next_back()
        .filter(|(&base, &(size, _))| p < base + size.max(1))
        .map(|(&base, &(size, what))| (base, size, what))
}

/// Allocates `size` bytes from an HSA pool (null for 0 bytes) and records it
/// as `what`.
pub fn pool_allocate(pool: Handle, size: usize, what: Object) -> Result<*mut c_void, hipError_t> {
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    let mut mem: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid pool handle and out-pointer.
    let status = unsafe { hsa::hsa_amd_memory_pool_allocate(pool, size, 0, &mut mem) };
    if status != hsa::SUCCESS {
        return Err(hipErrorOutOfMemory);
    }
    add_object(mem, size, what);
    Ok(mem)
}

/// Returns an allocation to its HSA pool and forgets the object.
pub fn pool_free(ptr: *mut c_void) -> hipError_t {
    if matches!(find_object(ptr), Some((_, _, Object::Registered))) {
        // Registered memory is the application's: hipHostUnregister it.
        return hipErrorInvalidValue;
    }
    // SAFETY: freeing a pointer the application got from an allocation call
    // (HSA refuses anything else).
    match unsafe { hsa::hsa_amd_memory_pool_free(ptr) } {
        hsa::SUCCESS => {
            remove_object(ptr);
            hipSuccess
        }
        _ => hipErrorInvalidValue,
    }
}
