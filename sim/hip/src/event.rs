//! Events: an HSA signal completed by a barrier packet on the stream. The
//! event's timestamp is that packet's dispatch time on the virtual clock, so
//! `hipEventElapsedTime` is deterministic for a scenario.

use std::collections::HashMap;
use std::ffi::{c_uint, c_void};
use std::sync::{Mutex, OnceLock};

use crate::device::write_out;
use crate::error::*;
use crate::hsa::{self, Handle};
use crate::stream::{self, hipStream_t};

pub type hipEvent_t = *mut c_void;

struct Event {
    signal: Handle,
    device: usize,
    recorded: bool,
}

static EVENTS: OnceLock<Mutex<HashMap<usize, Event>>> = OnceLock::new();
static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0x4556_0000);

fn events() -> std::sync::MutexGuard<'static, HashMap<usize, Event>> {
    EVENTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// The event's signal, `None` if it was never recorded.
pub fn signal_of(event: hipEvent_t) -> Result<Option<Handle>, hipError_t> {
    let events = events();
    let e = events.get(&(event as usize)).ok_or(hipErrorInvalidHandle)?;
    Ok(e.recorded.then_some(e.signal))
}

fn create(event: *mut hipEvent_t) -> hipError_t {
    if let Err(e) = crate::device::runtime() {
        return e;
    }
    let Some(signal) = hsa::signal_create(0) else {
        return hipErrorOutOfMemory;
    };
    let handle = NEXT.fetch_add(16, std::sync::atomic::Ordering::Relaxed);
    events().insert(
        handle,
        Event {
            signal,
            device: crate::device::current(),
            recorded: false,
        },
    );
    write_out(event, handle as hipEvent_t)
}

pub extern "C" fn hipEventCreate(event: *mut hipEvent_t) -> hipError_t {
    api!("hipEventCreate", { create(event) })
}

pub extern "C" fn hipEventCreateWithFlags(event: *mut hipEvent_t, _flags: c_uint) -> hipError_t {
    api!("hipEventCreateWithFlags", { create(event) })
}

pub extern "C" fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
    api!("hipEventDestroy", {
        match events().remove(&(event as usize)) {
            Some(e) => {
                hsa::signal_wait_done(e.signal);
                hsa::signal_destroy(e.signal);
                hipSuccess
            }
            None => hipErrorInvalidHandle,
        }
    })
}

pub extern "C" fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    api!("hipEventRecord", {
        let s = match stream::resolve(stream) {
            Ok(s) => s,
            Err(e) => return e,
        };
        let signal = {
            let mut events = events();
            let Some(e) = events.get_mut(&(event as usize)) else {
                return hipErrorInvalidHandle;
            };
            e.recorded = true;
            e.device = s.device;
            e.signal
        };
        hsa::signal_wait_done(signal);
        hsa::signal_store(signal, 1);
        s.record(signal).err().unwrap_or(hipSuccess)
    })
}

pub extern "C" fn hipEventSynchronize(event: hipEvent_t) -> hipError_t {
    api!("hipEventSynchronize", {
        match signal_of(event) {
            Ok(Some(s)) => {
                hsa::signal_wait_done(s);
                crate::pool::release_freed(crate::device::current());
                hipSuccess
            }
            Ok(None) => hipSuccess,
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipEventQuery(event: hipEvent_t) -> hipError_t {
    api!("hipEventQuery", {
        match signal_of(event) {
            Ok(Some(s)) if hsa::signal_load(s) >= 1 => hipErrorNotReady,
            Ok(_) => hipSuccess,
            Err(e) => e,
        }
    })
}

fn timestamp(event: hipEvent_t) -> Result<u64, hipError_t> {
    let (signal, device) = {
        let events = events();
        let e = events.get(&(event as usize)).ok_or(hipErrorInvalidHandle)?;
        if !e.recorded {
            return Err(hipErrorInvalidHandle);
        }
        (e.signal, e.device)
    };
    if hsa::signal_load(signal) >= 1 {
        return Err(hipErrorNotReady);
    }
    let agent = crate::device::device(device)?.agent;
    let mut time = hsa::DispatchTime::default();
    // SAFETY: valid agent, signal and out-pointer.
    let status = unsafe { hsa::hsa_amd_profiling_get_dispatch_time(agent, signal, &mut time) };
    if status != hsa::SUCCESS {
        return Err(hipErrorInvalidHandle);
    }
    Ok(time.end)
}

pub extern "C" fn hipEventElapsedTime(
    ms: *mut f32,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    api!("hipEventElapsedTime", {
        match (timestamp(start), timestamp(stop)) {
            (Ok(a), Ok(b)) => write_out(ms, (b as f64 - a as f64) as f32 / 1e6),
            (Err(e), _) | (_, Err(e)) => e,
        }
    })
}

pub extern "C" fn hipStreamWaitEvent(
    stream: hipStream_t,
    event: hipEvent_t,
    _flags: c_uint,
) -> hipError_t {
    api!("hipStreamWaitEvent", {
        let s = match stream::resolve(stream) {
            Ok(s) => s,
            Err(e) => return e,
        };
        match signal_of(event) {
            Ok(Some(signal)) => s.wait_for(signal).err().unwrap_or(hipSuccess),
            Ok(None) => hipSuccess,
            Err(e) => e,
        }
    })
}
