//! `counter_config.h`: a set of counters prepared for one agent, which
//! dispatch and device counting collect.
//!
//! A configuration names counters of its agent's architecture; its
//! hardware counters must fit the agent's counter registers in one pass
//! (`rocwasm_counters::Catalog::check_one_pass`, the limits per block), or
//! it is refused with `EXCEEDS_HW_LIMIT`, as the SDK refuses it.
//! Configurations are never changed: extending one makes a new one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rocwasm_core::Status;
use rocwasm_counters::CheckError;

use crate::abi::Handle;
use crate::counter_info::{self, Arch};
use crate::guard::guard;
use crate::status::Code;

/// A counter configuration.
pub(crate) struct Config {
    /// The agent it counts on (a record's agent id).
    pub agent: u64,
    /// The agent's architecture.
    pub arch: &'static Arch,
    /// The counters (SDK ids), each once, in the order asked.
    pub counters: Vec<u64>,
}

static CONFIGS: Mutex<Option<HashMap<u64, Arc<Config>>>> = Mutex::new(None);

/// The configuration with this handle.
pub(crate) fn get(id: u64) -> Option<Arc<Config>> {
    CONFIGS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()?
        .get(&id)
        .cloned()
}

/// Checks and registers a configuration; returns its handle.
fn create(agent: u64, asked: &[Handle], extend: u64) -> Result<u64, Status> {
    let arch_name = counter_info::arch_of(agent).ok_or(Status::AgentNotFound)?;
    let arch = counter_info::arch(&arch_name).ok_or(Status::AgentArchNotSupported)?;
    let mut counters: Vec<u64> = Vec::new();
    for c in asked {
        let (a, _) = counter_info::counter(c.handle).ok_or(Status::CounterNotFound)?;
        if a.name != arch.name {
            return Err(Status::MetricNotValidForAgent);
        }
        if !counters.contains(&c.handle) {
            counters.push(c.handle);
        }
    }
    if extend != 0 {
        if let Some(existing) = get(extend) {
            for &c in &existing.counters {
                if !counters.contains(&c) {
                    counters.push(c);
                }
            }
        }
    }
    let names: Vec<String> = counters
        .iter()
        .filter_map(|&id| Some(arch.counter(id)?.name))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    match arch.with_catalog(|c| c.check_one_pass(&names)) {
        Ok(()) => {}
        Err(CheckError::OverLimit(over)) => {
            crate::hardware::say_once(format!("a counter configuration for agent {agent}: {over}"));
            return Err(Status::ExceedsHwLimit);
        }
        Err(e) => {
            crate::hardware::say_once(format!("a counter configuration for agent {agent}: {e}"));
            return Err(Status::CounterNotFound);
        }
    }
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    CONFIGS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(
            id,
            Arc::new(Config {
                agent,
                arch,
                counters,
            }),
        );
    Ok(id)
}

/// `rocprofiler_create_counter_config`: a configuration of `counters_list`
/// for the agent, plus the counters of `*config_id` when it names one
/// (the new configuration's handle replaces it). AGENT_NOT_FOUND,
/// COUNTER_NOT_FOUND, METRIC_NOT_VALID_FOR_AGENT (another architecture's
/// counter), EXCEEDS_HW_LIMIT (more registers of a block than it has: the
/// block and counters are said on standard error).
///
/// # Safety
/// `counters_list` must point to `counters_count` ids (or be NULL with 0);
/// `config_id` must be NULL or point to a writable handle.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_create_counter_config(
    agent_id: Handle,
    counters_list: *const Handle,
    counters_count: usize,
    config_id: *mut Handle,
) -> Code {
    guard("rocprofiler_create_counter_config", || {
        if config_id.is_null() {
            return Err(Status::InvalidArgument);
        }
        // SAFETY: the caller passes `counters_count` readable ids.
        let asked = unsafe { crate::buffer::slice(counters_list, counters_count) };
        // SAFETY: checked non-null; the caller's handle.
        let extend = unsafe { (*config_id).handle };
        let id = create(agent_id.handle, asked, extend)?;
        // SAFETY: as above.
        unsafe { (*config_id).handle = id };
        Ok(())
    })
}

/// `rocprofiler_destroy_counter_config`: forgets a configuration
/// (PROFILE_NOT_FOUND for an unknown handle). Services holding it keep
/// counting with it.
#[no_mangle]
pub extern "C" fn rocprofiler_destroy_counter_config(config_id: Handle) -> Code {
    guard("rocprofiler_destroy_counter_config", || {
        CONFIGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .and_then(|m| m.remove(&config_id.handle))
            .map(|_| ())
            .ok_or(Status::ProfileNotFound)
    })
}

/// `rocprofiler_create_profile_config`: the old name of
/// [`rocprofiler_create_counter_config`].
///
/// # Safety
/// As [`rocprofiler_create_counter_config`].
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_create_profile_config(
    agent_id: Handle,
    counters_list: *const Handle,
    counters_count: usize,
    config_id: *mut Handle,
) -> Code {
    // SAFETY: the same contract.
    unsafe { rocprofiler_create_counter_config(agent_id, counters_list, counters_count, config_id) }
}

/// `rocprofiler_destroy_profile_config`: the old name of
/// [`rocprofiler_destroy_counter_config`].
#[no_mangle]
pub extern "C" fn rocprofiler_destroy_profile_config(config_id: Handle) -> Code {
    rocprofiler_destroy_counter_config(config_id)
}
