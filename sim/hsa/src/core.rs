//! Initialisation, shutdown, extensions and status strings.

use std::ffi::{c_char, c_void};

use crate::ffi::*;
use crate::util::{out, sim_log};
use crate::{loader, runtime, tools};

pub extern "C" fn hsa_init() -> hsa_status_t {
    let rt = runtime::get();
    if let Some(status) = rt.inject("hsa_init") {
        return status;
    }
    if runtime::acquire() {
        sim_log!(
            "hsa_init: {} GPU agent(s), layout {}",
            rt.agents.len() - 1,
            crate::table::tables().layout.name
        );
        // After the runtime counts as open, so OnLoad may call into it.
        tools::load_all();
    }
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_shut_down() -> hsa_status_t {
    match runtime::release() {
        Err(e) => e,
        Ok(last) => {
            if last {
                tools::unload_all();
            }
            HSA_STATUS_SUCCESS
        }
    }
}

pub extern "C" fn hsa_system_extension_supported(
    extension: u16,
    major: u16,
    _minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    out(result, supported(extension, major))
}

/// The extensions (major version 1) the simulated runtime has: AMD's
/// loader, and rocwasm's simulated counters.
fn supported(extension: u16, major: u16) -> bool {
    major == 1
        && (extension == HSA_EXTENSION_AMD_LOADER
            || extension == crate::counters::HSA_EXTENSION_ROCWASM_SIM_COUNTERS)
}

pub extern "C" fn hsa_system_major_extension_supported(
    extension: u16,
    major: u16,
    minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    let supported = supported(extension, major);
    if supported && !minor.is_null() {
        let m = if extension == HSA_EXTENSION_AMD_LOADER {
            3
        } else {
            0
        };
        out(minor, m);
    }
    out(result, supported)
}

pub extern "C" fn hsa_system_get_extension_table(
    extension: u16,
    major: u16,
    _minor: u16,
    table: *mut c_void,
) -> hsa_status_t {
    hsa_system_get_major_extension_table(
        extension,
        major,
        std::mem::size_of::<LoaderTable>(),
        table,
    )
}

pub extern "C" fn hsa_system_get_major_extension_table(
    extension: u16,
    major: u16,
    length: usize,
    table: *mut c_void,
) -> hsa_status_t {
    if major != 1 {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    match extension {
        HSA_EXTENSION_AMD_LOADER => loader::copy_loader_table(length, table),
        crate::counters::HSA_EXTENSION_ROCWASM_SIM_COUNTERS => {
            crate::counters::copy_table(length, table)
        }
        _ => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}

pub extern "C" fn hsa_extension_get_name(extension: u16, name: *mut *const c_char) -> hsa_status_t {
    let text: &'static [u8] = match extension {
        HSA_EXTENSION_AMD_LOADER => b"HSA_EXTENSION_AMD_LOADER\0",
        crate::counters::HSA_EXTENSION_ROCWASM_SIM_COUNTERS => {
            b"HSA_EXTENSION_ROCWASM_SIM_COUNTERS\0"
        }
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    out(name, text.as_ptr().cast())
}

pub extern "C" fn hsa_status_string(
    status: hsa_status_t,
    string: *mut *const c_char,
) -> hsa_status_t {
    let text: &'static [u8] = match status {
        HSA_STATUS_SUCCESS => b"HSA_STATUS_SUCCESS: The function has been executed successfully.\0",
        HSA_STATUS_INFO_BREAK => b"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted.\0",
        HSA_STATUS_ERROR => b"HSA_STATUS_ERROR: A generic error has occurred.\0",
        HSA_STATUS_ERROR_INVALID_ARGUMENT => b"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition.\0",
        HSA_STATUS_ERROR_INVALID_AGENT => b"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.\0",
        HSA_STATUS_ERROR_INVALID_SIGNAL => b"HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.\0",
        HSA_STATUS_ERROR_INVALID_QUEUE => b"HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.\0",
        HSA_STATUS_ERROR_OUT_OF_RESOURCES => b"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.\0",
        HSA_STATUS_ERROR_NOT_INITIALIZED => b"HSA_STATUS_ERROR_NOT_INITIALIZED: The runtime has not been initialized.\0",
        _ => b"HSA status not described by the simulated runtime\0",
    };
    out(string, text.as_ptr().cast())
}

/// `hsa_amd_image_get_info_max_dim`: exported (through the thunk below) but
/// in no table; images are not simulated.
pub extern "C" fn hsa_amd_image_get_info_max_dim(
    _agent: hsa_agent_t,
    _attribute: u32,
    _value: *mut c_void,
) -> hsa_status_t {
    HSA_STATUS_ERROR
}

// An assembly thunk keeps the export under `ROCR_1` (see `table::trampoline`).
core::arch::global_asm!(
    ".globl hsa_amd_image_get_info_max_dim",
    ".type hsa_amd_image_get_info_max_dim,@function",
    "hsa_amd_image_get_info_max_dim:",
    "jmp {f}@PLT",
    ".size hsa_amd_image_get_info_max_dim, . - hsa_amd_image_get_info_max_dim",
    f = sym hsa_amd_image_get_info_max_dim,
);
