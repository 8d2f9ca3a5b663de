//! rocwasm's simulated-counter extension: what a dispatch would have
//! counted, from the simulator's model (`sim_scenario::counters`).
//!
//! Not AMD's: a real runtime counts through the AQL profiling extension
//! (`hsa_ven_amd_aqlprofile`) with PM4 packets around the dispatch. The
//! simulated GPU has no counters to program, so a profiler asks this table
//! (`hsa_system_get_major_extension_table(0x2F0, 1, …)`) instead: which
//! counters an agent models and over which instances, and their values for
//! the dispatch whose completion signal it names. A runtime without it (a
//! real one) answers `HSA_STATUS_ERROR_INVALID_ARGUMENT` for the extension.

use std::ffi::{c_char, CStr};

use crate::ffi::*;
use crate::util::out;
use crate::{agent, signal};

/// The extension's number (private to rocwasm's simulated runtime).
pub const HSA_EXTENSION_ROCWASM_SIM_COUNTERS: u16 = 0x2F0;

/// The extension's table, version 1.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CountersTable {
    /// `(agent, name, ids, extents, capacity, count)`: the counter's
    /// dimensions on `agent`, outermost first (`rocprofiler_counter_dimension_id_t`
    /// numbers and extents); `*count` is how many there are.
    /// `HSA_STATUS_ERROR_INVALID_ARGUMENT` when the agent does not model it.
    pub dimensions: extern "C" fn(
        hsa_agent_t,
        *const c_char,
        *mut u32,
        *mut u32,
        usize,
        *mut usize,
    ) -> hsa_status_t,
    /// `(agent, signal, name, values, capacity, count)`: the counter's
    /// values, one per instance (row-major over its dimensions), for the
    /// dispatch that last completed `signal`. `HSA_STATUS_ERROR` when no
    /// dispatch completed it; `HSA_STATUS_ERROR_OUT_OF_RESOURCES` (with
    /// `*count` set) when `capacity` is too small.
    pub sample: extern "C" fn(
        hsa_agent_t,
        hsa_signal_t,
        *const c_char,
        *mut f64,
        usize,
        *mut usize,
    ) -> hsa_status_t,
}

/// The table `hsa_system_get_major_extension_table` copies out.
pub fn table() -> CountersTable {
    CountersTable { dimensions, sample }
}

/// Copies the table's first `length` bytes to `table`.
pub fn copy_table(length: usize, table_out: *mut std::ffi::c_void) -> hsa_status_t {
    if table_out.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let t = table();
    let size = std::mem::size_of::<CountersTable>().min(length);
    // SAFETY: `t` is a plain #[repr(C)] struct of function pointers and the
    // caller gave `length` writable bytes at `table_out`; we copy at most
    // the struct's size.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&t as *const CountersTable).cast::<u8>(),
            table_out.cast(),
            size,
        );
    }
    HSA_STATUS_SUCCESS
}

fn name_of(name: *const c_char) -> Option<&'static str> {
    if name.is_null() {
        return None;
    }
    // SAFETY: the caller passes a NUL-terminated string that outlives the call;
    // we use it only during the call.
    unsafe { CStr::from_ptr(name) }.to_str().ok()
}

/// The device and the counter's layout, or the status to return.
fn modelled(
    agent: hsa_agent_t,
    name: *const c_char,
) -> Result<
    (
        &'static sim_scenario::Device,
        &'static str,
        sim_scenario::counters::Layout,
    ),
    hsa_status_t,
> {
    let device = agent::find(agent.handle)
        .and_then(|a| a.device.as_ref())
        .ok_or(HSA_STATUS_ERROR_INVALID_AGENT)?;
    let name = name_of(name).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
    let m = sim_scenario::counters::modelled_on(&device.arch)
        .find(|m| m.name == name)
        .ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
    Ok((device, m.name, m.layout))
}

/// Writes `items` to `out[..capacity]` and their number to `count`.
fn write_out<T: Copy>(
    items: &[T],
    out_ptr: *mut T,
    capacity: usize,
    count: *mut usize,
) -> hsa_status_t {
    if !count.is_null() {
        out(count, items.len());
    }
    if items.len() > capacity {
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    if !items.is_empty() {
        if out_ptr.is_null() {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: the caller gave `capacity` ≥ `items.len()` writable
        // elements at `out_ptr`.
        unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), out_ptr, items.len()) };
    }
    HSA_STATUS_SUCCESS
}

extern "C" fn dimensions(
    agent: hsa_agent_t,
    name: *const c_char,
    ids: *mut u32,
    extents: *mut u32,
    capacity: usize,
    count: *mut usize,
) -> hsa_status_t {
    let (device, _, layout) = match modelled(agent, name) {
        Ok(m) => m,
        Err(status) => return status,
    };
    let dims = layout.dims(&device.shape());
    let id: Vec<u32> = dims.iter().map(|&(d, _)| d as u32).collect();
    let extent: Vec<u32> = dims.iter().map(|&(_, n)| n).collect();
    let status = write_out(&id, ids, capacity, count);
    if status != HSA_STATUS_SUCCESS {
        return status;
    }
    write_out(&extent, extents, capacity, count)
}

extern "C" fn sample(
    agent: hsa_agent_t,
    signal: hsa_signal_t,
    name: *const c_char,
    values: *mut f64,
    capacity: usize,
    count: *mut usize,
) -> hsa_status_t {
    let (device, name, _) = match modelled(agent, name) {
        Ok(m) => m,
        Err(status) => return status,
    };
    let Some(s) = signal::get(signal) else {
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    };
    let Some(launch) = s.times().launch else {
        return HSA_STATUS_ERROR;
    };
    let Some(v) = sim_scenario::counters::sample(&device.arch, &device.shape(), &launch, name)
    else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    let v: Vec<f64> = v.into_iter().map(|x| x as f64).collect();
    write_out(&v, values, capacity, count)
}
