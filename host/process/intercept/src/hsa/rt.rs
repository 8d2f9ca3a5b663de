//! Typed calls to the runtime's *original* table functions.
//!
//! The tool's own HSA calls (creating its signals, reading profiling times,
//! iterating symbols) must neither be traced nor re-enter the wrappers, so
//! they go straight to the saved slot ([`crate::hsa::originals`]). When a
//! slot is absent (an older runtime, or no `OnLoad` yet) the call fails with
//! a non-zero status instead of jumping to null.

use std::ffi::c_void;

/// `HSA_STATUS_ERROR`: what a missing original returns.
pub const ERROR: i32 = 0x1000;

macro_rules! originals {
    ($($table:ident :: $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {$(
        /// Calls the runtime's original of this slot.
        ///
        /// # Safety
        /// The arguments must satisfy the HSA function's contract.
        #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
        pub unsafe fn $name($($arg: $ty),*) -> Option<$ret> {
            let p = crate::hsa::originals::$table::original(crate::hsa::originals::$table::slot::$name);
            if p.is_null() {
                return None;
            }
            // SAFETY: the slot holds the runtime's function with this
            // signature (hsa_api_trace.h, table major 1).
            let f: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(p) };
            // SAFETY: the caller's arguments, of the function's C types.
            Some(unsafe { f($($arg),*) })
        }
    )*};
}

originals! {
    core_api::hsa_iterate_agents(cb: extern "C" fn(u64, *mut c_void) -> i32, data: *mut c_void) -> i32;
    core_api::hsa_agent_get_info(agent: u64, attribute: i32, value: *mut c_void) -> i32;
    core_api::hsa_signal_create(initial: i64, consumers: u32, list: *const u64, signal: *mut u64) -> i32;
    core_api::hsa_signal_destroy(signal: u64) -> i32;
    core_api::hsa_signal_subtract_screlease(signal: u64, value: i64) -> ();
    core_api::hsa_system_get_major_extension_table(ext: u16, major: u16, len: usize, table: *mut c_void) -> i32;
    core_api::hsa_executable_iterate_agent_symbols(
        exe: u64, agent: u64, cb: extern "C" fn(u64, u64, u64, *mut c_void) -> i32, data: *mut c_void) -> i32;
    core_api::hsa_executable_symbol_get_info(symbol: u64, attribute: i32, value: *mut c_void) -> i32;
    amd_ext_api::hsa_amd_memory_pool_get_info(pool: u64, attribute: i32, value: *mut c_void) -> i32;
    amd_ext_api::hsa_amd_agent_iterate_memory_pools(
        agent: u64, cb: extern "C" fn(u64, *mut c_void) -> i32, data: *mut c_void) -> i32;
    amd_ext_api::hsa_amd_queue_intercept_create(
        agent: u64, size: u32, ty: u32, cb: *mut c_void, data: *mut c_void, private: u32, group: u32,
        queue: *mut c_void) -> i32;
    amd_ext_api::hsa_amd_queue_intercept_register(queue: *mut c_void, handler: *mut c_void, data: *mut c_void) -> i32;
    amd_ext_api::hsa_amd_profiling_set_profiler_enabled(queue: *mut c_void, enable: i32) -> i32;
    amd_ext_api::hsa_amd_profiling_async_copy_enable(enable: bool) -> i32;
    amd_ext_api::hsa_amd_profiling_get_dispatch_time(agent: u64, signal: u64, time: *mut [u64; 2]) -> i32;
    amd_ext_api::hsa_amd_profiling_get_async_copy_time(signal: u64, time: *mut [u64; 2]) -> i32;
    amd_ext_api::hsa_amd_signal_async_handler(
        signal: u64, cond: i32, value: i64, handler: extern "C" fn(i64, *mut c_void) -> bool, arg: *mut c_void) -> i32;
}

/// True once `OnLoad` wrapped the tables (the originals are reachable).
pub fn tables_installed() -> bool {
    !crate::hsa::originals::core_api::original(
        crate::hsa::originals::core_api::slot::hsa_iterate_agents,
    )
    .is_null()
}

/// `HSA_SIGNAL_CONDITION_LT`.
pub const CONDITION_LT: i32 = 2;

/// A fresh signal with value 1 and any consumer, or `None`.
pub fn new_signal() -> Option<u64> {
    let mut s = 0u64;
    // SAFETY: out-pointer to a local; no consumer list.
    let status = unsafe { hsa_signal_create(1, 0, std::ptr::null(), &mut s) }?;
    (status == 0 && s != 0).then_some(s)
}
