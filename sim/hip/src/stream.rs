//! Streams over HSA queues.
//!
//! Each stream owns one HSA queue on its device (created on first use, with
//! profiling enabled so events can be timed) and remembers the signal of the
//! last operation it submitted. Work is in order:
//! - a kernel becomes a dispatch packet with a fresh completion signal; if
//!   the previous operation was a copy (which runs on the copy engine, not on
//!   the queue) a barrier-AND packet waiting for the copy goes first;
//! - a copy becomes `hsa_amd_memory_async_copy` depending on the last signal;
//! - an event record becomes a barrier-AND packet completing the event's
//!   signal (its dispatch time is the event's timestamp);
//! - copies from and to pageable memory go through the stream's staging
//!   buffer (`copy_staged_in`/`copy_staged_out`, see `memory.rs`).
//!
//! The null stream is an ordinary per-device stream here (no implicit
//! synchronisation with other streams); `hipDeviceSynchronize` waits for all
//! streams of the device. Completed signals and kernel-argument buffers are
//! reclaimed when the stream is synchronised or grows a backlog.
//!
//! Uses `device`, `hsa` and `transfer` (the staging slot size) only: the
//! modules that queue work (`memory`, `pool`, `event`, `module`) build on
//! it, and the syncs that also hand freed pool memory back
//! (`hipStreamSynchronize`, `hipDeviceSynchronize`) are in `synchronize.rs`.

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::device::{self, runtime, write_out};
use crate::error::*;
use crate::hsa::{self, Handle};

/// How long a submitting thread sleeps while its queue's ring is full.
/// Short against the ring's work (a full 1024-packet ring of the shortest
/// simulated kernels is milliseconds), long against a context switch.
const RING_FULL_BACKOFF: std::time::Duration = std::time::Duration::from_micros(50);

#[derive(Default)]
struct State {
    queue: Option<usize>,
    /// The signal of the last operation, and whether it was a copy.
    last: Option<(Handle, bool)>,
    /// Signals (and kernel-argument buffers) still to reclaim.
    pending: Vec<(Handle, Option<usize>)>,
    /// The pinned staging buffer of copies from and to pageable memory,
    /// allocated on first use.
    staging: Option<Staging>,
    /// Markers someone still reads (`marker`): not reclaimed.
    held: Vec<Handle>,
}

/// How many slots the staging buffer has: like the real runtime's, a ring
/// of four chunks of the staging size, each reused once the copy that last
/// used it has completed (see `sim/README.md`, "Copies of pageable memory").
pub const STAGING_SLOTS: usize = 4;

/// A stream's staging buffer: `STAGING_SLOTS` slots of `slot` bytes from the
/// host pool, and the completion signal of the last copy through each slot
/// (kept alive by `reclaim` while it is named here).
struct Staging {
    base: usize,
    slot: usize,
    next: usize,
    busy: [Option<Handle>; STAGING_SLOTS],
}

pub struct Stream {
    pub device: usize,
    state: Mutex<State>,
}

pub type hipStream_t = *mut c_void;

static STREAMS: OnceLock<Mutex<HashMap<usize, Arc<Stream>>>> = OnceLock::new();
static NULL_STREAMS: OnceLock<Mutex<HashMap<usize, Arc<Stream>>>> = OnceLock::new();

fn streams() -> std::sync::MutexGuard<'static, HashMap<usize, Arc<Stream>>> {
    STREAMS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// The stream behind a handle (null: the current device's null stream).
pub fn resolve(handle: hipStream_t) -> Result<Arc<Stream>, hipError_t> {
    if handle.is_null() {
        let dev = device::current();
        device::device(dev)?;
        let mut nulls = NULL_STREAMS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        return Ok(nulls
            .entry(dev)
            .or_insert_with(|| {
                Arc::new(Stream {
                    device: dev,
                    state: Mutex::default(),
                })
            })
            .clone());
    }
    streams()
        .get(&(handle as usize))
        .cloned()
        .ok_or(hipErrorInvalidHandle)
}

fn all_streams_of(dev: usize) -> Vec<Arc<Stream>> {
    let mut list: Vec<Arc<Stream>> = streams()
        .values()
        .filter(|s| s.device == dev)
        .cloned()
        .collect();
    if let Some(nulls) = NULL_STREAMS.get() {
        list.extend(
            nulls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&dev)
                .cloned(),
        );
    }
    list
}

pub fn synchronize_device(dev: usize) {
    for s in all_streams_of(dev) {
        s.synchronize();
    }
}

/// One AQL packet: the 32-bit header+setup word and the rest of the body.
pub struct Packet {
    pub header: u16,
    pub setup: u16,
    pub body: [u8; 60],
}

impl Packet {
    pub fn barrier_and(deps: &[Handle], completion: Handle) -> Packet {
        let mut body = [0u8; 60];
        // dep_signal[0..5] at packet offset 8 (body offset 4); completion at 56.
        for (i, d) in deps.iter().take(5).enumerate() {
            body[4 + 8 * i..12 + 8 * i].copy_from_slice(&d.handle.to_le_bytes());
        }
        body[52..60].copy_from_slice(&completion.handle.to_le_bytes());
        Packet {
            header: hsa::PACKET_TYPE_BARRIER_AND | hsa::HEADER_FENCES,
            setup: 0,
            body,
        }
    }
}

impl Stream {
    fn queue(&self, state: &mut State) -> Result<*mut hsa::Queue, hipError_t> {
        if let Some(q) = state.queue {
            return Ok(q as *mut hsa::Queue);
        }
        let dev = device::device(self.device)?;
        let mut q: *mut hsa::Queue = std::ptr::null_mut();
        // SAFETY: valid agent and out-pointer; no error callback.
        let status = unsafe {
            hsa::hsa_queue_create(
                dev.agent,
                1024,
                0,
                std::ptr::null(),
                std::ptr::null_mut(),
                u32::MAX,
                u32::MAX,
                &mut q,
            )
        };
        if status != hsa::SUCCESS || q.is_null() {
            return Err(hipErrorOutOfMemory);
        }
        // SAFETY: `q` is the queue just created.
        unsafe { hsa::hsa_amd_profiling_set_profiler_enabled(q, 1) };
        state.queue = Some(q as usize);
        Ok(q)
    }

    /// Writes one packet into the queue and rings the doorbell.
    fn submit(&self, state: &mut State, packet: &Packet) -> Result<(), hipError_t> {
        let q = self.queue(state)?;
        // SAFETY: `q` is a live queue created by this stream; HSA owns it.
        let (base, size, doorbell) =
            unsafe { ((*q).base_address, (*q).size, (*q).doorbell_signal) };
        // SAFETY: reserving a slot is a plain call on a live queue.
        let index = unsafe { hsa::hsa_queue_add_write_index_scacq_screl(q, 1) };
        // Wait for the slot to be free (the ring holds `size` packets). The
        // ring is full, so the simulated GPU has `size` packets of work: this
        // thread sleeps rather than spinning, because on a small machine a
        // spinning application thread takes the core the simulated GPU (and
        // the thread completing its signals) would run on, which a real
        // GPU never shares with the host.
        // SAFETY: plain call on a live queue.
        while index - unsafe { hsa::hsa_queue_load_read_index_scacquire(q) } >= u64::from(size) {
            std::thread::sleep(RING_FULL_BACKOFF);
        }
        let slot = (base as usize + (index % u64::from(size)) as usize * 64) as *mut u8;
        // SAFETY: `slot` is a 64-byte packet slot of the ring that this
        // writer reserved; the body is written before the header is
        // published with a release store, as the AQL protocol requires.
        unsafe {
            std::ptr::copy_nonoverlapping(packet.body.as_ptr(), slot.add(4), 60);
            let word = u32::from(packet.header) | (u32::from(packet.setup) << 16);
            AtomicU32::from_ptr(slot.cast::<u32>()).store(word, Ordering::Release);
        }
        hsa::signal_store(doorbell, index as i64);
        Ok(())
    }

    /// Before queue work: make it wait for a preceding copy.
    fn order_after_copy(&self, state: &mut State) -> Result<(), hipError_t> {
        if let Some((signal, true)) = state.last {
            let done = hsa::signal_create(1).ok_or(hipErrorOutOfMemory)?;
            self.submit(state, &Packet::barrier_and(&[signal], done))?;
            state.pending.push((done, None));
            state.last = Some((done, false));
        }
        Ok(())
    }

    /// Submits a kernel dispatch (built by `make`, given its completion signal).
    pub fn launch(
        &self,
        make: impl FnOnce(Handle) -> Packet,
        kernarg: Option<usize>,
    ) -> Result<(), hipError_t> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.reclaim(&mut state, false);
        self.order_after_copy(&mut state)?;
        let signal = hsa::signal_create(1).ok_or(hipErrorOutOfMemory)?;
        self.submit(&mut state, &make(signal))?;
        state.pending.push((signal, kernarg));
        state.last = Some((signal, false));
        Ok(())
    }

    /// Submits an asynchronous copy after the stream's previous work.
    pub fn copy(
        &self,
        dst: *mut c_void,
        dst_agent: Handle,
        src: *const c_void,
        src_agent: Handle,
        size: usize,
    ) -> Result<(), hipError_t> {
        self.submit_copy(|deps, signal| {
            // SAFETY: the application guarantees the ranges; the dependency
            // array lives for the call.
            unsafe {
                hsa::hsa_amd_memory_async_copy(
                    dst,
                    dst_agent,
                    src,
                    src_agent,
                    size,
                    deps.len() as u32,
                    deps.as_ptr(),
                    signal,
                )
            }
        })
    }

    /// Queues a rectangular copy (`hsa_amd_memory_async_copy_rect`) done by
    /// the GPU `agent` in direction `dir` (`hsa_amd_copy_direction_t`).
    pub fn copy_rect(
        &self,
        dst: hsa::PitchedPtr,
        src: hsa::PitchedPtr,
        range: hsa::Dim3,
        agent: Handle,
        dir: u32,
    ) -> Result<(), hipError_t> {
        let origin = hsa::Dim3::default();
        self.submit_copy(|deps, signal| {
            // SAFETY: the structs and the dependency array live for the call;
            // the application guarantees the regions.
            unsafe {
                hsa::hsa_amd_memory_async_copy_rect(
                    &dst,
                    &origin,
                    &src,
                    &origin,
                    &range,
                    agent,
                    dir,
                    deps.len() as u32,
                    deps.as_ptr(),
                    signal,
                )
            }
        })
    }

    /// Issues a copy (`issue(dependencies, completion signal)`) after the
    /// stream's previous work and makes it the stream's last work.
    fn submit_copy(
        &self,
        issue: impl FnOnce(&[Handle], Handle) -> hsa::Status,
    ) -> Result<(), hipError_t> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.reclaim(&mut state, false);
        Self::issue_copy(&mut state, issue).map(|_| ())
    }

    /// [`Stream::submit_copy`] with the state locked; returns the copy's
    /// completion signal (owned by the stream).
    fn issue_copy(
        state: &mut State,
        issue: impl FnOnce(&[Handle], Handle) -> hsa::Status,
    ) -> Result<Handle, hipError_t> {
        let signal = hsa::signal_create(1).ok_or(hipErrorOutOfMemory)?;
        let deps: Vec<Handle> = state.last.iter().map(|(s, _)| *s).collect();
        if issue(&deps, signal) != hsa::SUCCESS {
            hsa::signal_destroy(signal);
            return Err(hipErrorInvalidValue);
        }
        state.pending.push((signal, None));
        state.last = Some((signal, true));
        Ok(signal)
    }

    /// A free slot of the staging buffer (allocating the buffer first if
    /// needed): waits for the copy that last used the next slot of the ring.
    /// Returns the slot's index and address.
    fn acquire_slot(&self, state: &mut State, len: usize) -> Result<(usize, usize), hipError_t> {
        let slot = crate::transfer::transfer().stage;
        if len > slot {
            return Err(hipErrorInvalidValue);
        }
        if state.staging.is_none() {
            let host_pool = runtime()?.host_pool;
            let mut mem: *mut c_void = std::ptr::null_mut();
            // SAFETY: a valid pool handle and out-pointer.
            let status = unsafe {
                hsa::hsa_amd_memory_pool_allocate(host_pool, slot * STAGING_SLOTS, 0, &mut mem)
            };
            if status != hsa::SUCCESS || mem.is_null() {
                return Err(hipErrorOutOfMemory);
            }
            state.staging = Some(Staging {
                base: mem as usize,
                slot,
                next: 0,
                busy: [None; STAGING_SLOTS],
            });
        }
        let staging = state.staging.as_mut().expect("allocated above");
        let index = staging.next;
        staging.next = (index + 1) % STAGING_SLOTS;
        if let Some(previous) = staging.busy[index].take() {
            // Named in `busy`, so `reclaim` has not destroyed it.
            hsa::signal_wait_done(previous);
        }
        Ok((index, staging.base + index * staging.slot))
    }

    /// A staged copy to device memory: the CPU copies `len` bytes of `src`
    /// into a staging slot now, then the copy engine copies the slot to
    /// `dst` after the stream's previous work. The caller may reuse `src`
    /// as soon as this returns.
    pub fn copy_staged_in(
        &self,
        dst: *mut c_void,
        dst_agent: Handle,
        src: *const u8,
        len: usize,
        src_agent: Handle,
    ) -> Result<(), hipError_t> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.reclaim(&mut state, false);
        let (index, slot) = self.acquire_slot(&mut state, len)?;
        // SAFETY: the application guarantees `src` is valid for `len`
        // bytes; the slot holds at least `len` bytes and no copy reads it
        // (its previous copy has completed).
        unsafe { std::ptr::copy_nonoverlapping(src, slot as *mut u8, len) };
        let signal = Self::issue_copy(&mut state, |deps, signal| {
            // SAFETY: both ranges are valid for `len` bytes until the copy
            // completes (the slot is not reused before); `deps` lives for
            // the call.
            unsafe {
                hsa::hsa_amd_memory_async_copy(
                    dst,
                    dst_agent,
                    slot as *const c_void,
                    src_agent,
                    len,
                    deps.len() as u32,
                    deps.as_ptr(),
                    signal,
                )
            }
        })?;
        if let Some(staging) = state.staging.as_mut() {
            staging.busy[index] = Some(signal);
        }
        Ok(())
    }

    /// A staged copy from device memory: the copy engine copies `len` bytes
    /// of `src` into a staging slot after the stream's previous work; this
    /// waits for it, then the CPU copies the slot to `dst`.
    pub fn copy_staged_out(
        &self,
        dst: *mut u8,
        dst_agent: Handle,
        src: *const c_void,
        len: usize,
        src_agent: Handle,
    ) -> Result<(), hipError_t> {
        let (signal, slot) = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            self.reclaim(&mut state, false);
            let (index, slot) = self.acquire_slot(&mut state, len)?;
            let signal = Self::issue_copy(&mut state, |deps, signal| {
                // SAFETY: as in `copy_staged_in`.
                unsafe {
                    hsa::hsa_amd_memory_async_copy(
                        slot as *mut c_void,
                        dst_agent,
                        src,
                        src_agent,
                        len,
                        deps.len() as u32,
                        deps.as_ptr(),
                        signal,
                    )
                }
            })?;
            if let Some(staging) = state.staging.as_mut() {
                staging.busy[index] = Some(signal);
            }
            (signal, slot)
        };
        // Named in `busy` until the slot is reused, which needs this
        // stream's lock after this wait: the signal is alive.
        hsa::signal_wait_done(signal);
        // SAFETY: the copy into the slot has completed; the application
        // guarantees `dst` is valid for `len` bytes.
        unsafe { std::ptr::copy_nonoverlapping(slot as *const u8, dst, len) };
        Ok(())
    }

    /// A marker: a signal that completes once all work submitted so far
    /// has (a barrier-AND packet), and that a sync of the stream waits for.
    /// The stream keeps it alive until [`Stream::release_marker`].
    pub fn marker(&self) -> Result<Handle, hipError_t> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.reclaim(&mut state, false);
        let deps: Vec<Handle> = match state.last {
            Some((s, true)) => vec![s],
            _ => vec![],
        };
        let signal = hsa::signal_create(1).ok_or(hipErrorOutOfMemory)?;
        if let Err(e) = self.submit(&mut state, &Packet::barrier_and(&deps, signal)) {
            hsa::signal_destroy(signal);
            return Err(e);
        }
        state.pending.push((signal, None));
        state.last = Some((signal, false));
        state.held.push(signal);
        Ok(signal)
    }

    /// Whether a marker has completed.
    pub fn marker_done(&self, marker: Handle) -> bool {
        hsa::signal_load(marker) < 1
    }

    /// Lets the stream reclaim a marker's signal like any other.
    pub fn release_marker(&self, marker: Handle) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.held.retain(|&h| h != marker);
    }

    /// Frees the staging buffer (the stream is idle and being destroyed).
    fn release_staging(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(staging) = state.staging.take() {
            // SAFETY: the buffer came from hsa_amd_memory_pool_allocate and
            // the stream has completed every copy through it.
            unsafe { hsa::hsa_amd_memory_pool_free(staging.base as *mut c_void) };
        }
        self.reclaim(&mut state, true);
    }

    /// Makes `signal` complete after all work so far (used by events).
    pub fn record(&self, signal: Handle) -> Result<(), hipError_t> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let deps: Vec<Handle> = match state.last {
            Some((s, true)) => vec![s],
            _ => vec![],
        };
        self.submit(&mut state, &Packet::barrier_and(&deps, signal))?;
        state.last = Some((signal, false));
        Ok(())
    }

    /// Makes later work wait for `signal` (used by hipStreamWaitEvent).
    pub fn wait_for(&self, signal: Handle) -> Result<(), hipError_t> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.order_after_copy(&mut state)?;
        let done = hsa::signal_create(1).ok_or(hipErrorOutOfMemory)?;
        self.submit(&mut state, &Packet::barrier_and(&[signal], done))?;
        state.pending.push((done, None));
        state.last = Some((done, false));
        Ok(())
    }

    pub fn last_signal(&self) -> Option<Handle> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last
            .map(|(s, _)| s)
    }

    pub fn is_idle(&self) -> bool {
        self.last_signal().is_none_or(|s| hsa::signal_load(s) < 1)
    }

    pub fn synchronize(&self) {
        if let Some(s) = self.last_signal() {
            hsa::signal_wait_done(s);
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.reclaim(&mut state, true);
    }

    /// Frees the signals (and kernel-argument buffers) that nothing can read
    /// any more: after a sync, or once 256 are waiting.
    ///
    /// A completed signal is not yet free: the operation after it on this
    /// stream names it as a dependency (a barrier packet's `dep_signal`, a
    /// copy's dependency list), and the queue or copy engine looks the
    /// handle up only when it gets to that operation, which may be later.
    /// Stream work completes in order, so once a later operation has
    /// completed, every dependency on an earlier signal has been resolved:
    /// only signals submitted before the newest completed one are destroyed.
    /// This matters because the sync may run on another thread than the one
    /// submitting (`hipFree` and `hipDeviceSynchronize` synchronise every
    /// stream of the device while their owners keep submitting); a signal
    /// destroyed too early left a barrier waiting on a signal that no
    /// longer existed.
    fn reclaim(&self, state: &mut State, all: bool) {
        if !all && state.pending.len() < 256 {
            return;
        }
        // Work completes in order: the newest completed signal is the one
        // before the oldest still running. Looked for from the oldest end,
        // a stream far ahead of its queue loads one signal here rather than
        // every one still running (past 256 waiting signals this runs on
        // every launch).
        let newest_done = match state
            .pending
            .iter()
            .position(|(signal, _)| hsa::signal_load(*signal) >= 1)
        {
            Some(0) => return,
            Some(running) => running - 1,
            None if state.pending.is_empty() => return,
            None => state.pending.len() - 1,
        };
        // The stream's last signal, the newest submitted, is never before
        // the newest completed one: it is kept.
        // Signals a staging slot still names (the slot's next user waits
        // for them) and held markers are kept too.
        let staged: Vec<Handle> = state
            .staging
            .iter()
            .flat_map(|s| s.busy.iter().flatten().copied())
            .chain(state.held.iter().copied())
            .collect();
        let mut index = 0;
        state.pending.retain(|(signal, kernarg)| {
            let before_newest_done = index < newest_done;
            index += 1;
            if !before_newest_done || hsa::signal_load(*signal) >= 1 || staged.contains(signal) {
                return true;
            }
            hsa::signal_destroy(*signal);
            if let Some(k) = kernarg {
                // SAFETY: the buffer came from hsa_amd_memory_pool_allocate
                // and the dispatch that read it has completed.
                unsafe { hsa::hsa_amd_memory_pool_free(*k as *mut c_void) };
            }
            false
        });
    }
}

fn create(stream: *mut hipStream_t) -> hipError_t {
    if stream.is_null() {
        return hipErrorInvalidValue;
    }
    if let Err(e) = runtime() {
        return e;
    }
    let s = Arc::new(Stream {
        device: device::current(),
        state: Mutex::default(),
    });
    let handle = Arc::as_ptr(&s) as usize;
    streams().insert(handle, s);
    write_out(stream, handle as hipStream_t)
}

pub extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t {
    api!("hipStreamCreate", { create(stream) })
}

pub extern "C" fn hipStreamCreateWithFlags(stream: *mut hipStream_t, _flags: c_uint) -> hipError_t {
    api!("hipStreamCreateWithFlags", { create(stream) })
}

pub extern "C" fn hipStreamCreateWithPriority(
    stream: *mut hipStream_t,
    _flags: c_uint,
    _priority: c_int,
) -> hipError_t {
    api!("hipStreamCreateWithPriority", { create(stream) })
}

pub extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    api!("hipStreamDestroy", {
        let Some(s) = streams().remove(&(stream as usize)) else {
            return hipErrorInvalidHandle;
        };
        s.synchronize();
        s.release_staging();
        hipSuccess
    })
}

pub extern "C" fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
    api!("hipStreamQuery", {
        match resolve(stream) {
            Ok(s) if s.is_idle() => hipSuccess,
            Ok(_) => hipErrorNotReady,
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipGetStreamDeviceId(stream: hipStream_t) -> c_int {
    resolve(stream).map_or(-1, |s| s.device as c_int)
}

pub extern "C" fn hipDeviceReset() -> hipError_t {
    api!("hipDeviceReset", {
        if let Err(e) = runtime() {
            return e;
        }
        synchronize_device(device::current());
        hipSuccess
    })
}
