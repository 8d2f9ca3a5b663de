//! Asynchronous copies: one copy-engine thread with its own timeline.
//!
//! `hsa_amd_memory_async_copy` queues a job; the engine waits (really) for
//! the dependency signals to reach 0, copies the bytes, schedules the copy on
//! its timeline no earlier than the end of the work that completed the
//! dependencies, with duration `copy_duration_ns(size)`, records the times
//! in the completion signal (readable with `get_async_copy_time` if
//! `hsa_amd_profiling_async_copy_enable(1)` was in force when the copy was
//! issued), and decrements it. Copies run in issue order, so their times are
//! deterministic when one thread issues them.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, OnceLock};

use crate::clock::Timeline;
use crate::ffi::*;
use crate::runtime;
use crate::signal::{self, Signal, Times};
use crate::util::{out, sim_log};

static PROFILING: AtomicBool = AtomicBool::new(false);

struct Job {
    /// `(dst, src, bytes)` runs: one for a linear copy, one per row of a
    /// rectangular copy.
    runs: Vec<(usize, usize, usize)>,
    /// All bytes of the copy (what its duration depends on).
    size: usize,
    deps: Vec<Arc<Signal>>,
    completion: Option<Arc<Signal>>,
    profiled: bool,
}

fn engine() -> &'static Mutex<Sender<Job>> {
    static ENGINE: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let timeline = Timeline::new(runtime::get().scenario.clock.start_ns);
        std::thread::Builder::new()
            .name("sim-hsa-copy".into())
            .spawn(move || {
                for job in rx {
                    signal::wait_until(|| job.deps.iter().all(|s| s.load() == 0), None);
                    for &(dst, src, len) in &job.runs {
                        // SAFETY: the application guaranteed every run is
                        // valid until the completion signal fires (the
                        // async-copy contract); `copy` allows overlap.
                        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
                    }
                    let earliest = job.deps.iter().map(|s| s.times().end).max().unwrap_or(0);
                    let duration = runtime::get().scenario.copy_duration_ns(job.size as u64);
                    let (start, end) = timeline.schedule(earliest, duration);
                    sim_log!("copy {} bytes ticks {start}..{end}", job.size);
                    runtime::get().pace(end);
                    if let Some(s) = job.completion {
                        s.complete(Times {
                            start,
                            end,
                            dispatch_profiled: false,
                            copy_profiled: job.profiled,
                            launch: None,
                        });
                    }
                }
            })
            .expect("spawn the copy engine thread");
        Mutex::new(tx)
    })
}

pub extern "C" fn hsa_amd_memory_async_copy(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    let rt = match runtime::initialized() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    if crate::agent::find(dst_agent.handle).is_none()
        || crate::agent::find(src_agent.handle).is_none()
    {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    if size > 0 && (dst.is_null() || src.is_null()) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    if let Some(status) = rt.inject("hsa_amd_memory_async_copy") {
        return status;
    }
    let runs = if size > 0 {
        vec![(dst as usize, src as usize, size)]
    } else {
        Vec::new()
    };
    queue_job(runs, size, num_dep_signals, dep_signals, completion_signal)
}

/// Queues a copy of `runs` after the dependency signals, completing on
/// `completion_signal`.
fn queue_job(
    runs: Vec<(usize, usize, usize)>,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    let mut deps = Vec::new();
    for handle in crate::util::slice(dep_signals, num_dep_signals as usize) {
        match signal::get(*handle) {
            Some(s) => deps.push(s),
            None => return HSA_STATUS_ERROR_INVALID_SIGNAL,
        }
    }
    let completion = signal::get(completion_signal);
    if completion.is_none() {
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    }
    let job = Job {
        runs,
        size,
        deps,
        completion,
        profiled: PROFILING.load(Ordering::Acquire),
    };
    match engine().lock().unwrap_or_else(|p| p.into_inner()).send(job) {
        Ok(()) => HSA_STATUS_SUCCESS,
        Err(_) => HSA_STATUS_ERROR,
    }
}

/// A rectangular copy of `range` (x in bytes, rows, slices) between two
/// pitched regions, done by the GPU `copy_agent`. Each row is one run; the
/// duration is that of a linear copy of all its bytes.
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hsa_amd_memory_async_copy_rect(
    dst: *const hsa_pitched_ptr_t,
    dst_offset: *const hsa_dim3_t,
    src: *const hsa_pitched_ptr_t,
    src_offset: *const hsa_dim3_t,
    range: *const hsa_dim3_t,
    copy_agent: hsa_agent_t,
    dir: u32,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    let rt = match runtime::initialized() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    if !crate::agent::find(copy_agent.handle).is_some_and(|a| a.is_gpu()) {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    if dst.is_null()
        || dst_offset.is_null()
        || src.is_null()
        || src_offset.is_null()
        || range.is_null()
        || dir >= HSA_AMD_COPY_DIRECTIONS
    {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: non-null pointers to the caller's structs, valid for the call.
    let (dst, dst_offset, src, src_offset, range) =
        unsafe { (*dst, *dst_offset, *src, *src_offset, *range) };
    let fits = |p: &hsa_pitched_ptr_t, o: &hsa_dim3_t| {
        let row = o.x as usize + range.x as usize;
        let rows = o.y as usize + range.y as usize;
        !p.base.is_null() && row <= p.pitch && (range.z <= 1 || rows * p.pitch <= p.slice)
    };
    if !fits(&dst, &dst_offset) || !fits(&src, &src_offset) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    if let Some(status) = rt.inject("hsa_amd_memory_async_copy_rect") {
        return status;
    }
    let at = |p: &hsa_pitched_ptr_t, o: &hsa_dim3_t, y: u32, z: u32| {
        p.base as usize + (o.z + z) as usize * p.slice + (o.y + y) as usize * p.pitch + o.x as usize
    };
    let mut runs = Vec::new();
    if range.x > 0 {
        for z in 0..range.z {
            for y in 0..range.y {
                runs.push((
                    at(&dst, &dst_offset, y, z),
                    at(&src, &src_offset, y, z),
                    range.x as usize,
                ));
            }
        }
    }
    let size = runs.len() * range.x as usize;
    queue_job(runs, size, num_dep_signals, dep_signals, completion_signal)
}

pub extern "C" fn hsa_amd_profiling_async_copy_enable(enable: bool) -> hsa_status_t {
    PROFILING.store(enable, Ordering::Release);
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_amd_profiling_get_async_copy_time(
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_async_copy_time_t,
) -> hsa_status_t {
    let Some(s) = signal::get(signal) else {
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    };
    let t = s.times();
    if !t.copy_profiled {
        return HSA_STATUS_ERROR;
    }
    // The real runtime reports these in the system domain.
    let rt = runtime::get();
    out(
        time,
        hsa_amd_profiling_async_copy_time_t {
            start: rt.tick_to_system(t.start),
            end: rt.tick_to_system(t.end),
        },
    )
}
