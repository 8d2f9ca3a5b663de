//! Stream-ordered allocation: `hipMallocAsync`/`hipFreeAsync` and each
//! device's default memory pool, modelled on the real runtime's pool (facts
//! in `sim/README.md`, "Stream-ordered allocation"):
//!
//! - An allocation first looks for a freed block of at least the size asked
//!   for, smallest first, that is safe to reuse: freed (or allocated) on the
//!   same stream, whose work after the free is ordered after the free by the
//!   stream itself; or, if the block is at most 1/8 larger than asked for,
//!   one whose free has completed on the GPU. Otherwise it allocates from
//!   the device's HSA pool (a MEMORY_ALLOCATION record), at once, on the
//!   host: the memory exists before any later work of the stream runs.
//! - A free moves the block to the free list with a marker (a barrier
//!   packet's signal) that completes when the stream's work before the free
//!   has. Memory goes back to HSA (`hsa_amd_memory_pool_free`) only when
//!   its marker has completed and: a stream, event or device sync runs
//!   (down to the pool's release threshold, default 0), `hipMemPoolTrimTo`
//!   asks, or the free list grows beyond the blocks in use.
//!
//! Uses `objects` (the allocation table and HSA pool primitives) and
//! `stream` (markers, syncs). `memory` (`hipFree`: [`forget`]),
//! `synchronize` and `event` (syncs: [`release_freed`]) use it, never the
//! other way round.

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};

use crate::device::{self, runtime, write_out};
use crate::error::*;
use crate::hsa::Handle;
use crate::objects::{self, Object};
use crate::stream::{self, hipStream_t};

pub type hipMemPool_t = *mut c_void;

// `hipMemPoolAttr` (hip_runtime_api.h).
const ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: c_int = 1;
const ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: c_int = 3;
const ATTR_RELEASE_THRESHOLD: c_int = 4;
const ATTR_RESERVED_MEM_CURRENT: c_int = 5;
const ATTR_RESERVED_MEM_HIGH: c_int = 6;
const ATTR_USED_MEM_CURRENT: c_int = 7;
const ATTR_USED_MEM_HIGH: c_int = 8;

struct Busy {
    ptr: usize,
    size: usize,
    /// Streams on which the block may be reused without waiting.
    safe: Vec<usize>,
}

/// A stream's marker (`Stream::marker`), released back to the stream when
/// dropped.
struct Marker {
    stream: Arc<stream::Stream>,
    signal: Handle,
}

impl Marker {
    fn done(&self) -> bool {
        self.stream.marker_done(self.signal)
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        self.stream.release_marker(self.signal);
    }
}

struct Freed {
    ptr: usize,
    size: usize,
    safe: Vec<usize>,
    /// Completes once the stream's work before the free has.
    marker: Marker,
}

impl Freed {
    fn done(&self) -> bool {
        self.marker.done()
    }
}

#[derive(Default)]
struct State {
    busy: Vec<Busy>,
    free: Vec<Freed>,
    /// Markers of blocks reused before their free completed.
    stale_markers: Vec<Marker>,
    release_threshold: u64,
    reserved_high: u64,
    used_high: u64,
}

impl State {
    fn used(&self) -> u64 {
        self.busy.iter().map(|b| b.size as u64).sum()
    }

    fn free_bytes(&self) -> u64 {
        self.free.iter().map(|b| b.size as u64).sum()
    }

    fn note_highs(&mut self) {
        let used = self.used();
        self.used_high = self.used_high.max(used);
        self.reserved_high = self.reserved_high.max(used + self.free_bytes());
    }

    /// Returns completed freed blocks to HSA, smallest first, while more
    /// than `hold` bytes are free.
    fn release(&mut self, hold: u64) {
        self.stale_markers.retain(|m| !m.done());
        self.free.sort_by_key(|b| (b.size, b.ptr));
        let mut free = self.free_bytes();
        let mut i = 0;
        while i < self.free.len() && free > hold {
            if !self.free[i].done() {
                i += 1;
                continue;
            }
            let block = self.free.remove(i);
            free -= block.size as u64;
            objects::pool_free(block.ptr as *mut c_void);
        }
    }
}

/// A device's default pool (the `hipMemPool_t` is its address).
pub struct Pool {
    device: usize,
    state: Mutex<State>,
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn handle(&'static self) -> hipMemPool_t {
        self as *const Pool as hipMemPool_t
    }

    fn allocate(&self, size: usize, stream: usize) -> Result<*mut c_void, hipError_t> {
        let mut state = self.lock();
        state.free.sort_by_key(|b| (b.size, b.ptr));
        // 9/8 of the size, as a real-valued bound, in integers.
        let close = |block: usize| block.saturating_mul(8) <= size.saturating_mul(9);
        let found = state.free.iter().position(|b| {
            b.size >= size && (b.safe.contains(&stream) || (close(b.size) && b.done()))
        });
        let (ptr, block_size, mut safe) = match found {
            Some(i) => {
                let block = state.free.remove(i);
                if !block.done() {
                    // Reused in stream order before its free completed: the
                    // marker is released once it has.
                    state.stale_markers.push(block.marker);
                }
                (block.ptr, block.size, block.safe)
            }
            None => {
                let pool = device::device(self.device)?.pool;
                let mem = objects::pool_allocate(pool, size, Object::Device)?;
                (mem as usize, size, Vec::new())
            }
        };
        if !safe.contains(&stream) {
            safe.push(stream);
        }
        state.busy.push(Busy {
            ptr,
            size: block_size,
            safe,
        });
        state.note_highs();
        Ok(ptr as *mut c_void)
    }

    /// Moves a block in use to the free list; false if it is not this
    /// pool's.
    fn free(
        &self,
        ptr: *mut c_void,
        s: &Arc<stream::Stream>,
        stream: usize,
    ) -> Result<bool, hipError_t> {
        let mut state = self.lock();
        let Some(i) = state.busy.iter().position(|b| b.ptr == ptr as usize) else {
            return Ok(false);
        };
        // A free list larger than the blocks in use gives its completed
        // blocks back first (the real runtime does so when it dispatches
        // directly, its default on Linux).
        if state.free_bytes() > state.used() {
            state.release(0);
        }
        let marker = Marker {
            stream: s.clone(),
            signal: s.marker()?,
        };
        let mut block = state.busy.remove(i);
        if !block.safe.contains(&stream) {
            block.safe.push(stream);
        }
        state.free.push(Freed {
            ptr: block.ptr,
            size: block.size,
            safe: block.safe,
            marker,
        });
        Ok(true)
    }
}

fn pools() -> &'static [Pool] {
    static POOLS: OnceLock<Vec<Pool>> = OnceLock::new();
    POOLS.get_or_init(|| {
        let n = runtime().map_or(0, |rt| rt.devices.len());
        (0..n)
            .map(|device| Pool {
                device,
                state: Mutex::default(),
            })
            .collect()
    })
}

fn default_pool(dev: usize) -> Result<&'static Pool, hipError_t> {
    device::device(dev)?;
    pools().get(dev).ok_or(hipErrorInvalidDevice)
}

fn from_handle(handle: hipMemPool_t) -> Result<&'static Pool, hipError_t> {
    pools()
        .iter()
        .find(|p| std::ptr::eq(*p, handle as *const Pool))
        .ok_or(hipErrorInvalidValue)
}

/// Returns the completed freed memory of `dev`'s pools to HSA, down to their
/// release thresholds (what the real runtime does on every sync).
pub fn release_freed(dev: usize) {
    if let Some(pool) = pools().get(dev) {
        let mut state = pool.lock();
        let hold = state.release_threshold;
        state.release(hold);
    }
}

/// Takes `ptr` out of whichever pool it is in use from (hipFree of pool
/// memory: the caller frees it); false if no pool has it in use.
pub fn forget(ptr: *mut c_void) -> bool {
    let Some(all) = runtime().ok().map(|_| pools()) else {
        return false;
    };
    all.iter().any(|pool| {
        let mut state = pool.lock();
        match state.busy.iter().position(|b| b.ptr == ptr as usize) {
            Some(i) => {
                state.busy.remove(i);
                true
            }
            None => false,
        }
    })
}

fn malloc_async(
    ptr: *mut *mut c_void,
    size: usize,
    pool: Option<hipMemPool_t>,
    stream: hipStream_t,
) -> hipError_t {
    if ptr.is_null() {
        return hipErrorInvalidValue;
    }
    let s = match stream::resolve(stream) {
        Ok(s) => s,
        Err(e) => return e,
    };
    if size == 0 {
        return write_out(ptr, std::ptr::null_mut());
    }
    let pool = match pool {
        Some(handle) => from_handle(handle),
        None => default_pool(s.device),
    };
    let id = Arc::as_ptr(&s) as usize;
    match pool.and_then(|p| p.allocate(size, id)) {
        Ok(mem) => write_out(ptr, mem),
        Err(e) => e,
    }
}

pub extern "C" fn hipMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipMallocAsync", { malloc_async(ptr, size, None, stream) })
}

pub extern "C" fn hipMallocFromPoolAsync(
    ptr: *mut *mut c_void,
    size: usize,
    pool: hipMemPool_t,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipMallocFromPoolAsync", {
        if pool.is_null() {
            return hipErrorInvalidValue;
        }
        malloc_async(ptr, size, Some(pool), stream)
    })
}

pub extern "C" fn hipFreeAsync(ptr: *mut c_void, stream: hipStream_t) -> hipError_t {
    api!("hipFreeAsync", {
        if ptr.is_null() {
            return hipErrorInvalidValue;
        }
        let s = match stream::resolve(stream) {
            Ok(s) => s,
            Err(e) => return e,
        };
        let id = Arc::as_ptr(&s) as usize;
        for pool in pools() {
            match pool.free(ptr, &s, id) {
                Ok(true) => return hipSuccess,
                Ok(false) => {}
                Err(e) => return e,
            }
        }
        // Not pool memory: like the real runtime, an ordinary (synchronous)
        // free, which knows whether the pointer is an allocation.
        match objects::find_object(ptr) {
            Some((base, _, _)) if base == ptr as usize => {
                stream::synchronize_device(device::current());
                objects::pool_free(ptr)
            }
            _ => hipErrorInvalidValue,
        }
    })
}

pub extern "C" fn hipDeviceGetDefaultMemPool(pool: *mut hipMemPool_t, dev: c_int) -> hipError_t {
    api!("hipDeviceGetDefaultMemPool", {
        if pool.is_null() {
            return hipErrorInvalidValue;
        }
        match usize::try_from(dev)
            .map_err(|_| hipErrorInvalidDevice)
            .and_then(default_pool)
        {
            Ok(p) => write_out(pool, p.handle()),
            Err(e) => e,
        }
    })
}

/// The current pool of a device: always its default pool here.
pub extern "C" fn hipDeviceGetMemPool(pool: *mut hipMemPool_t, dev: c_int) -> hipError_t {
    api!("hipDeviceGetMemPool", {
        if pool.is_null() {
            return hipErrorInvalidValue;
        }
        match usize::try_from(dev)
            .map_err(|_| hipErrorInvalidDevice)
            .and_then(default_pool)
        {
            Ok(p) => write_out(pool, p.handle()),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipMemPoolTrimTo(pool: hipMemPool_t, min_bytes_to_keep: usize) -> hipError_t {
    api!("hipMemPoolTrimTo", {
        match from_handle(pool) {
            Ok(p) => {
                p.lock().release(min_bytes_to_keep as u64);
                hipSuccess
            }
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipMemPoolGetAttribute(
    pool: hipMemPool_t,
    attr: c_int,
    value: *mut c_void,
) -> hipError_t {
    api!("hipMemPoolGetAttribute", {
        let p = match from_handle(pool) {
            Ok(p) => p,
            Err(e) => return e,
        };
        if value.is_null() {
            return hipErrorInvalidValue;
        }
        let state = p.lock();
        let bytes = match attr {
            ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES..=ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => {
                // The three reuse policies, all enabled (the default).
                return write_out(value.cast::<c_int>(), 1);
            }
            ATTR_RELEASE_THRESHOLD => state.release_threshold,
            ATTR_RESERVED_MEM_CURRENT => state.used() + state.free_bytes(),
            ATTR_RESERVED_MEM_HIGH => state.reserved_high,
            ATTR_USED_MEM_CURRENT => state.used(),
            ATTR_USED_MEM_HIGH => state.used_high,
            _ => return hipErrorInvalidValue,
        };
        write_out(value.cast::<u64>(), bytes)
    })
}

pub extern "C" fn hipMemPoolSetAttribute(
    pool: hipMemPool_t,
    attr: c_int,
    value: *mut c_void,
) -> hipError_t {
    api!("hipMemPoolSetAttribute", {
        let p = match from_handle(pool) {
            Ok(p) => p,
            Err(e) => return e,
        };
        if value.is_null() {
            return hipErrorInvalidValue;
        }
        let mut state = p.lock();
        match attr {
            // Accepted; the simulated pool always follows all three.
            ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES..=ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => {}
            ATTR_RELEASE_THRESHOLD => {
                // SAFETY: the attribute's value is a uint64_t.
                state.release_threshold = unsafe { *value.cast::<u64>() };
            }
            // The high-water marks can only be reset (to the current value).
            ATTR_RESERVED_MEM_HIGH => state.reserved_high = state.used() + state.free_bytes(),
            ATTR_USED_MEM_HIGH => state.used_high = state.used(),
            _ => return hipErrorInvalidValue,
        }
        hipSuccess
    })
}
