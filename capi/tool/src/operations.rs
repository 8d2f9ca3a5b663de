//! The SDK's operation numbers and the engine's, matched by name.
//!
//! rocprofiler-sdk numbers a kind's API functions in its own header order;
//! the engine numbers them as `rocwasm-ids` lists them. This client asks the
//! SDK it runs on for each operation's name
//! (`rocprofiler_iterate_buffer_tracing_kind_operations`,
//! `rocprofiler_query_buffer_tracing_kind_operation_name`) — AMD's library
//! of any version, or rocwasm's — and finds the engine's operation of that
//! name. ROCm 6 renamed the first version of a function that gained a
//! second (`hipGetDevicePropertiesR0000`): that is ROCm 5's function, the
//! one the built-in back end records under its unversioned name, so the
//! suffix `R0000` is dropped; the later ABI (`…R0600`) is an operation of
//! its own. Operations of event kinds (dispatch, copy
//! directions, allocation, scratch, runtime initialisation) have the same
//! numbers on both sides.
//!
//! An SDK operation with no engine operation (a function the engine's ids
//! do not list, e.g. a ROCm 7 addition) cannot be recorded under a name the
//! outputs know: its records are counted ([`OperationMaps::unmapped`]) and
//! reported in the run's summary, never dropped silently.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};

use rocprofiler_sdk_sys::api;
use rocwasm_core::{operation_by_name, BufferTracingKind, Domain};

/// Per-kind maps from SDK operation to engine operation.
#[derive(Debug, Default)]
pub struct OperationMaps {
    /// API kinds only; event kinds map one to one.
    api: HashMap<u32, HashMap<i32, u32>>,
    unmapped: AtomicU64,
    /// The first few SDK operation names that had no engine operation.
    unmapped_names: std::sync::Mutex<Vec<String>>,
}

impl OperationMaps {
    /// Asks the SDK for the names of every API kind's operations.
    pub fn query() -> OperationMaps {
        let mut maps = OperationMaps::default();
        for &kind in BufferTracingKind::ALL {
            if !Domain::from_buffer_kind(kind).is_some_and(|d| d.is_api()) {
                continue;
            }
            let mut ops: Vec<i32> = Vec::new();
            unsafe extern "C-unwind" fn collect(_kind: c_int, op: i32, data: *mut c_void) -> c_int {
                // SAFETY: `data` is the `Vec` passed below, alive for the call.
                unsafe { &mut *(data as *mut Vec<i32>) }.push(op);
                0
            }
            // SAFETY: the SDK calls `collect` once per operation, with the
            // vector we pass.
            unsafe {
                api::rocprofiler_iterate_buffer_tracing_kind_operations(
                    kind.raw() as c_int,
                    collect,
                    &mut ops as *mut Vec<i32> as *mut c_void,
                )
            };
            let mut map = HashMap::new();
            for op in ops {
                let Some(name) = operation_name(kind, op) else {
                    continue;
                };
                // `…R0000` is the 5.x ABI of a function whose 5.x name the
                // engine records as interception sees it (a 5.x program
                // calls `hipGetDeviceProperties`): the unversioned
                // operation, as the built-in back end names the call.
                let found = name
                    .strip_suffix("R0000")
                    .and_then(|base| operation_by_name(kind, base))
                    .or_else(|| operation_by_name(kind, &name));
                if let Some(engine) = found {
                    map.insert(op, engine);
                }
            }
            maps.api.insert(kind.raw(), map);
        }
        maps
    }

    /// The engine operation of SDK operation `op` of `kind`; `None` (and
    /// counted) when the engine has none.
    pub fn engine(&self, kind: BufferTracingKind, op: i32) -> Option<u32> {
        match self.api.get(&kind.raw()) {
            None if Domain::from_buffer_kind(kind).is_some_and(|d| d.is_api()) => None,
            None => u32::try_from(op).ok(),
            Some(map) => {
                let found = map.get(&op).copied();
                if found.is_none() {
                    self.unmapped.fetch_add(1, Ordering::Relaxed);
                    let mut names = self
                        .unmapped_names
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    if names.len() < 5 {
                        let name = operation_name(kind, op).unwrap_or_else(|| op.to_string());
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                }
                found
            }
        }
    }

    /// As [`OperationMaps::engine`], without counting a miss (for requests,
    /// whose records are counted when they arrive).
    pub fn engine_quiet(&self, kind: BufferTracingKind, op: i32) -> Option<u32> {
        match self.api.get(&kind.raw()) {
            None if Domain::from_buffer_kind(kind).is_some_and(|d| d.is_api()) => None,
            None => u32::try_from(op).ok(),
            Some(map) => map.get(&op).copied(),
        }
    }

    /// A line for the report when records were not mapped, naming some of
    /// their operations.
    pub fn unmapped(&self) -> Option<String> {
        let n = self.unmapped.load(Ordering::Relaxed);
        (n > 0).then(|| {
            let names = self
                .unmapped_names
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            format!(
                "{n} record(s) and callback(s) of SDK operations rocwasm has no id for were not recorded (e.g. {})",
                names.join(", ")
            )
        })
    }
}

/// The SDK's name of operation `op` of buffer-tracing `kind`.
fn operation_name(kind: BufferTracingKind, op: i32) -> Option<String> {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut len = 0usize;
    // SAFETY: out-pointers to locals; the SDK writes a pointer to a name it
    // keeps for the process.
    let status = unsafe {
        api::rocprofiler_query_buffer_tracing_kind_operation_name(
            kind.raw() as c_int,
            op,
            &mut name,
            &mut len,
        )
    };
    if status != 0 || name.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string the SDK owns.
    Some(
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned(),
    )
}
