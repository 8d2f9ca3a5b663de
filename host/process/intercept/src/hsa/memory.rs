//! Memory allocation records from `hsa_amd_memory_pool_allocate`/`free`.
//!
//! An allocation is timed around the runtime's call and names the agent
//! owning the pool ([`agents::of_pool`]); a free repeats the agent and size
//! of the allocation it releases.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use rocwasm_core::{BufferTracingKind, MemoryAllocation, MemoryAllocationOperation};

use super::agents;
use crate::session;

/// Live allocations: address → (size, agent id).
fn live() -> &'static Mutex<HashMap<u64, (u64, u64)>> {
    static LIVE: OnceLock<Mutex<HashMap<u64, (u64, u64)>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// Before an allocation: its start time when allocations are traced (else 0,
/// without reading the clock).
pub fn start() -> u64 {
    session::active()
        .filter(|s| s.wants(BufferTracingKind::MemoryAllocation))
        .map_or(0, |_| rocwasm_core::clock::now())
}

/// After a successful allocation that began at `start`; `out` is the
/// `void**` the caller passed.
pub fn allocated(pool: u64, size: usize, out: *mut c_void, start: u64) {
    let Some(s) = session::active().filter(|s| s.wants(BufferTracingKind::MemoryAllocation)) else {
        return;
    };
    if out.is_null() {
        return;
    }
    // SAFETY: on success the runtime stored the allocation in `*out`.
    let address = unsafe { *(out as *const *mut c_void) } as u64;
    let agent_id = agents::of_pool(pool).map_or(0, |a| a.info.id);
    live()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(address, (size as u64, agent_id));
    s.memory_allocation(MemoryAllocation {
        operation: MemoryAllocationOperation::Allocate as u32,
        start,
        end: rocwasm_core::clock::now(),
        agent_id,
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
    let (size, agent_id) = live()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(ptr as u64))
        .unwrap_or((0, 0));
    let now = rocwasm_core::clock::now();
    s.memory_allocation(MemoryAllocation {
        operation: MemoryAllocationOperation::Free as u32,
        start: now,
        end: now,
        agent_id,
        address: ptr as u64,
        allocation_size: size,
        ..Default::default()
    });
}
