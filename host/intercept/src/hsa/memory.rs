//! Memory allocation records from `hsa_amd_memory_pool_allocate`/`free`.
//!
//! The pool does not name its agent cheaply, so `agent_id` is 0; sizes of
//! frees come from the allocation they release.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use rocwasm_core::{BufferTracingKind, MemoryAllocation, MemoryAllocationOperation};

use crate::session;

fn live() -> &'static Mutex<HashMap<u64, u64>> {
    static LIVE: OnceLock<Mutex<HashMap<u64, u64>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// After a successful allocation; `out` is the `void**` the caller passed.
pub fn allocated(_pool: u64, size: usize, out: *mut c_void) {
    let Some(s) = session::active().filter(|s| s.wants(BufferTracingKind::MemoryAllocation)) else {
        return;
    };
    if out.is_null() {
        return;
    }
    // SAFETY: on success the runtime stored the allocation in `*out`.
    let address = unsafe { *(out as *const *mut c_void) } as u64;
    live()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(address, size as u64);
    let now = rocwasm_core::clock::now();
    s.memory_allocation(MemoryAllocation {
        operation: MemoryAllocationOperation::Allocate as u32,
        start: now,
        end: now,
        address,
        allocation_size: size as u64,
        ..Default::default()
    });
}

/// Before a free.
pub fn freed(ptr: *mut c_void) {
    let Some(s) = session::active().filter(|s| s.wants(BufferTracingKind::MemoryAllocation)) else {
        return;
    };
    let size = live()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(ptr as u64))
        .unwrap_or(0);
    let now = rocwasm_core::clock::now();
    s.memory_allocation(MemoryAllocation {
        operation: MemoryAllocationOperation::Free as u32,
        start: now,
        end: now,
        address: ptr as u64,
        allocation_size: size,
        ..Default::default()
    });
}
