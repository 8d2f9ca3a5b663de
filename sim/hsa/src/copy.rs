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
    dst: usize,
    src: usize,
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
                    if job.size > 0 {
                        // SAFETY: the application guaranteed both ranges are
                        // valid for `size` bytes until the completion signal
                        // fires (the async-copy contract); `copy` allows overlap.
                        unsafe {
                            std::ptr::copy(job.src as *const u8, job.dst as *mut u8, job.size)
                        };
                    }
                    let earliest = job.deps.iter().map(|s| s.times().end).max().unwrap_or(0);
                    let duration = runtime::get().scenario.copy_duration_ns(job.size as u64);
                    let (start, end) = timeline.schedule(earliest, duration);
                    sim_log!("copy {} bytes ticks {start}..{end}", job.size);
                    if let Some(s) = job.completion {
                        s.complete(Times {
                            start,
                            end,
                            dispatch_profiled: false,
                            copy_profiled: job.profiled,
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
        dst: dst as usize,
        src: src as usize,
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
    out(
        time,
        hsa_amd_profiling_async_copy_time_t {
            start: t.start,
            end: t.end,
        },
    )
}
