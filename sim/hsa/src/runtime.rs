//! Process-wide state: the scenario, the agents, the init reference count,
//! and the clock domains.
//!
//! Time has two domains, as on a real GPU. *Ticks* are the device clock:
//! every queue timeline and the copy engine start at `[clock] start_ns` and
//! advance by simulated work. The *system domain* is what the real runtime
//! reports its profiling timestamps in (`hsa_amd_profiling_get_dispatch_time`
//! and `get_async_copy_time` document "the HSA system clock domain", and
//! `HSA_SYSTEM_INFO_TIMESTAMP` reads it; ROCr on Linux counts it in ns of
//! `CLOCK_BOOTTIME`, the clock profilers stamp host events with).
//!
//! With `[clock] follow_host = true` (the default) a tick maps to the system
//! domain by a fixed offset taken when the runtime was first created
//! (`boottime_then - start_ns`), work starts no earlier than the host's
//! current tick, and a packet completes only once the host clock has reached
//! its end tick ([`Runtime::pace`]): device times then line up with the
//! host's, after the launch and before the completion, as on hardware.
//! With `follow_host = false` the system domain *is* the virtual clock
//! (offset 0): every timestamp repeats exactly across runs of a
//! single-threaded program, and none lines up with host time.

use std::sync::{Mutex, OnceLock};

use sim_scenario::{ErrorInjector, Scenario};

use crate::ffi::*;
use crate::topology::{self, Agent};

pub struct Runtime {
    pub scenario: Scenario,
    pub agents: Vec<Agent>,
    pub injector: ErrorInjector,
    /// `CLOCK_BOOTTIME` ns minus ticks.
    tick_to_system: i128,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static INIT_COUNT: Mutex<u32> = Mutex::new(0);

/// The process's runtime state, created on first use.
pub fn get() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        let scenario = Scenario::from_env_or_default("sim-hsa");
        let agents = topology::build(&scenario);
        let (injector, unknown) = ErrorInjector::new(&scenario.errors, status_by_name);
        for name in unknown {
            eprintln!("sim-hsa: ignoring injected error with unknown code {name}");
        }
        let tick_to_system = if scenario.clock.follow_host {
            boottime_ns() as i128 - scenario.clock.start_ns as i128
        } else {
            0
        };
        Runtime {
            scenario,
            agents,
            injector,
            tick_to_system,
        }
    })
}

/// The runtime if `hsa_init` has been called (and not undone).
pub fn initialized() -> Result<&'static Runtime, hsa_status_t> {
    if *INIT_COUNT.lock().unwrap_or_else(|p| p.into_inner()) == 0 {
        return Err(HSA_STATUS_ERROR_NOT_INITIALIZED);
    }
    Ok(get())
}

/// Counts an `hsa_init`; true on the first one.
pub fn acquire() -> bool {
    let mut n = INIT_COUNT.lock().unwrap_or_else(|p| p.into_inner());
    *n += 1;
    *n == 1
}

/// Counts an `hsa_shut_down`; `Err` if not initialized, `Ok(true)` on the last one.
pub fn release() -> Result<bool, hsa_status_t> {
    let mut n = INIT_COUNT.lock().unwrap_or_else(|p| p.into_inner());
    if *n == 0 {
        return Err(HSA_STATUS_ERROR_NOT_INITIALIZED);
    }
    *n -= 1;
    Ok(*n == 0)
}

impl Runtime {
    pub fn tick_to_system(&self, tick: u64) -> u64 {
        (tick as i128 + self.tick_to_system).max(0) as u64
    }

    /// The host clock in the tick domain.
    pub fn now_ticks(&self) -> u64 {
        (boottime_ns() as i128 - self.tick_to_system).max(0) as u64
    }

    /// `HSA_SYSTEM_INFO_TIMESTAMP`: the system domain's current value (the
    /// host clock; with `follow_host = false`, the host clock too, which
    /// then has nothing to do with the virtual device times).
    pub fn system_now(&self) -> u64 {
        boottime_ns()
    }

    /// Returns once work ending at tick `end` would have ended on the host's
    /// clock (at once with `follow_host = false`): a real GPU signals a
    /// packet's completion after it ran, never before its end timestamp.
    ///
    /// Sleeps for long waits and spins for the last 100 µs: a sleep (or a
    /// `yield`, on a loaded machine) lasts at least a scheduler slice, which
    /// would stretch a 4 µs kernel to a millisecond. The spinning thread is
    /// the queue's packet processor, busy as the GPU would be.
    pub fn pace(&self, end: u64) {
        if !self.scenario.clock.follow_host {
            return;
        }
        loop {
            let now = self.now_ticks();
            if now >= end {
                return;
            }
            let left = end - now;
            if left > 200_000 {
                std::thread::sleep(std::time::Duration::from_nanos(left - 100_000));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// An injected HSA failure for `api`, if the scenario asks for one now.
    pub fn inject(&self, api: &str) -> Option<hsa_status_t> {
        self.injector.check(api).map(|c| c as hsa_status_t)
    }
}

pub fn boottime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn status_by_name(name: &str) -> Option<i64> {
    Some(match name {
        "HSA_STATUS_ERROR" => HSA_STATUS_ERROR,
        "HSA_STATUS_ERROR_INVALID_ARGUMENT" => HSA_STATUS_ERROR_INVALID_ARGUMENT,
        "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION" => HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
        "HSA_STATUS_ERROR_INVALID_ALLOCATION" => HSA_STATUS_ERROR_INVALID_ALLOCATION,
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES" => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        "HSA_STATUS_ERROR_NOT_INITIALIZED" => HSA_STATUS_ERROR_NOT_INITIALIZED,
        _ => return None,
    } as i64)
}
