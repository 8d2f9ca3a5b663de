//! Names and iteration of kinds and operations (`buffer_tracing.h`,
//! `callback_tracing.h`, `external_correlation.h`, `intercept_table.h`).
//!
//! Every name comes from the headers' enumerators (kinds without their
//! `ROCPROFILER_…_` prefix, API operations as the function's name, event
//! operations as `MEMORY_COPY_HOST_TO_DEVICE` and the like), kept as
//! NUL-terminated strings that live as long as the process, as the SDK
//! promises for its names.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::{Mutex, OnceLock};

use rocwasm_core::{BufferTracingKind, CallbackTracingKind, Status};

use crate::abi::enums::BY_NAME;
use crate::guard::guard;
use crate::operations;
use crate::status::Code;

/// A name that lives as long as the process.
fn interned(s: &str) -> &'static CString {
    static NAMES: OnceLock<Mutex<HashMap<String, &'static CString>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    names
        .entry(s.to_string())
        .or_insert_with(|| Box::leak(Box::new(CString::new(s).unwrap_or_default())))
}

/// `(value, name without prefix)` of the enum `enum_name`, without NONE and LAST.
fn enumerators(enum_name: &str, prefix: &str) -> Vec<(i64, &'static str)> {
    BY_NAME
        .iter()
        .find(|(n, _)| *n == enum_name)
        .map(|(_, all)| {
            all.iter()
                .filter_map(|(n, v)| {
                    let short = n.strip_prefix(prefix)?;
                    (short != "NONE" && short != "LAST").then_some((*v, short))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn buffer_kinds() -> Vec<(i64, &'static str)> {
    enumerators(
        "rocprofiler_buffer_tracing_kind",
        "ROCPROFILER_BUFFER_TRACING_",
    )
}

fn callback_kinds() -> Vec<(i64, &'static str)> {
    enumerators(
        "rocprofiler_callback_tracing_kind",
        "ROCPROFILER_CALLBACK_TRACING_",
    )
}

fn external_kinds() -> Vec<(i64, &'static str)> {
    enumerators(
        "rocprofiler_external_correlation_id_request_kind",
        "ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_",
    )
}

/// Writes `name` (and its length) to the out-pointers a query was given.
///
/// # Safety
/// Each pointer must be NULL or writable.
unsafe fn answer(name: &str, out: *mut *const c_char, len: *mut u64) {
    let c = interned(name);
    // SAFETY: the caller's pointers are NULL or writable.
    unsafe {
        if !out.is_null() {
            *out = c.as_ptr();
        }
        if !len.is_null() {
            *len = name.len() as u64;
        }
    }
}

fn kind_name(kinds: &[(i64, &'static str)], kind: c_int) -> Result<&'static str, Status> {
    kinds
        .iter()
        .find(|(v, _)| *v == i64::from(kind))
        .map(|(_, n)| *n)
        .ok_or(Status::KindNotFound)
}

/// The SDK operations of a buffer kind (empty when the engine has no map for it).
fn buffer_operations(kind: c_int) -> Result<&'static [(i32, String)], Status> {
    kind_name(&buffer_kinds(), kind)?;
    Ok(u32::try_from(kind)
        .ok()
        .and_then(BufferTracingKind::from_raw)
        .map_or(&[][..], |k| operations::buffer(k).sdk_operations()))
}

fn callback_operations(kind: c_int) -> Result<&'static [(i32, String)], Status> {
    kind_name(&callback_kinds(), kind)?;
    Ok(u32::try_from(kind)
        .ok()
        .and_then(CallbackTracingKind::from_raw)
        .map_or(&[][..], |k| operations::callback(k).sdk_operations()))
}

fn operation_name(ops: &[(i32, String)], op: i32) -> Result<&str, Status> {
    ops.iter()
        .find(|(v, _)| *v == op)
        .map(|(_, n)| n.as_str())
        .ok_or(Status::OperationNotFound)
}

/// `rocprofiler_query_buffer_tracing_kind_name`.
///
/// # Safety
/// `name` and `name_len` must each be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_buffer_tracing_kind_name(
    kind: c_int,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Code {
    guard("rocprofiler_query_buffer_tracing_kind_name", || {
        let n = kind_name(&buffer_kinds(), kind)?;
        // SAFETY: as the caller promises.
        unsafe { answer(n, name, name_len) };
        Ok(())
    })
}

/// `rocprofiler_query_buffer_tracing_kind_operation_name`.
///
/// # Safety
/// `name` and `name_len` must each be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_buffer_tracing_kind_operation_name(
    kind: c_int,
    operation: i32,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Code {
    guard(
        "rocprofiler_query_buffer_tracing_kind_operation_name",
        || {
            let ops = buffer_operations(kind)?;
            let n = operation_name(ops, operation)?;
            // SAFETY: as the caller promises.
            unsafe { answer(n, name, name_len) };
            Ok(())
        },
    )
}

/// `rocprofiler_query_callback_tracing_kind_name`.
///
/// # Safety
/// `name` and `name_len` must each be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_callback_tracing_kind_name(
    kind: c_int,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Code {
    guard("rocprofiler_query_callback_tracing_kind_name", || {
        let n = kind_name(&callback_kinds(), kind)?;
        // SAFETY: as the caller promises.
        unsafe { answer(n, name, name_len) };
        Ok(())
    })
}

/// `rocprofiler_query_callback_tracing_kind_operation_name`.
///
/// # Safety
/// `name` and `name_len` must each be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_callback_tracing_kind_operation_name(
    kind: c_int,
    operation: u32,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Code {
    guard(
        "rocprofiler_query_callback_tracing_kind_operation_name",
        || {
            let ops = callback_operations(kind)?;
            let n = operation_name(ops, operation as i32)?;
            // SAFETY: as the caller promises.
            unsafe { answer(n, name, name_len) };
            Ok(())
        },
    )
}

/// `rocprofiler_query_external_correlation_id_request_kind_name`.
///
/// # Safety
/// `name` and `name_len` must each be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_external_correlation_id_request_kind_name(
    kind: c_int,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Code {
    guard(
        "rocprofiler_query_external_correlation_id_request_kind_name",
        || {
            let n = kind_name(&external_kinds(), kind)?;
            // SAFETY: as the caller promises.
            unsafe { answer(n, name, name_len) };
            Ok(())
        },
    )
}

/// `rocprofiler_query_intercept_table_name`.
///
/// # Safety
/// `name` and `name_len` must each be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_intercept_table_name(
    kind: c_int,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> Code {
    guard("rocprofiler_query_intercept_table_name", || {
        let tables = enumerators("rocprofiler_intercept_table", "ROCPROFILER_");
        let n = tables
            .iter()
            .find(|(v, n)| *v == i64::from(kind) && !n.ends_with("_LAST"))
            .map(|(_, n)| *n)
            .ok_or(Status::KindNotFound)?;
        // SAFETY: as the caller promises.
        unsafe { answer(n, name, name_len) };
        Ok(())
    })
}

/// A kind iteration callback.
pub type KindCallback = unsafe extern "C-unwind" fn(kind: c_int, data: *mut c_void) -> c_int;
pub use crate::abi::OperationCallback;

fn iterate_kinds(kinds: &[(i64, &str)], callback: KindCallback, data: *mut c_void) {
    for (v, _) in kinds {
        let go_on = crate::foreign::call_tool("a native tool's kind iteration callback", || {
            // SAFETY: the tool's callback with the documented arguments.
            unsafe { callback(*v as c_int, data) }
        });
        // Non-zero, or an exception, ends the iteration.
        if go_on != Some(0) {
            break;
        }
    }
}

fn iterate_operations(
    kind: c_int,
    ops: &[(i32, String)],
    callback: OperationCallback,
    data: *mut c_void,
) {
    for (v, _) in ops {
        let go_on =
            crate::foreign::call_tool("a native tool's operation iteration callback", || {
                // SAFETY: the tool's callback with the documented arguments.
                unsafe { callback(kind, *v, data) }
            });
        // Non-zero, or an exception, ends the iteration.
        if go_on != Some(0) {
            break;
        }
    }
}

/// `rocprofiler_iterate_buffer_tracing_kinds`: every kind but NONE and
/// LAST, until the callback returns non-zero.
#[no_mangle]
pub extern "C" fn rocprofiler_iterate_buffer_tracing_kinds(
    callback: Option<KindCallback>,
    data: *mut c_void,
) -> Code {
    guard("rocprofiler_iterate_buffer_tracing_kinds", || {
        iterate_kinds(
            &buffer_kinds(),
            callback.ok_or(Status::InvalidArgument)?,
            data,
        );
        Ok(())
    })
}

/// `rocprofiler_iterate_buffer_tracing_kind_operations`.
#[no_mangle]
pub extern "C" fn rocprofiler_iterate_buffer_tracing_kind_operations(
    kind: c_int,
    callback: Option<OperationCallback>,
    data: *mut c_void,
) -> Code {
    guard("rocprofiler_iterate_buffer_tracing_kind_operations", || {
        let ops = buffer_operations(kind)?;
        iterate_operations(kind, ops, callback.ok_or(Status::InvalidArgument)?, data);
        Ok(())
    })
}

/// `rocprofiler_iterate_callback_tracing_kinds`.
#[no_mangle]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kinds(
    callback: Option<KindCallback>,
    data: *mut c_void,
) -> Code {
    guard("rocprofiler_iterate_callback_tracing_kinds", || {
        iterate_kinds(
            &callback_kinds(),
            callback.ok_or(Status::InvalidArgument)?,
            data,
        );
        Ok(())
    })
}

/// `rocprofiler_iterate_callback_tracing_kind_operations`.
#[no_mangle]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kind_operations(
    kind: c_int,
    callback: Option<OperationCallback>,
    data: *mut c_void,
) -> Code {
    guard(
        "rocprofiler_iterate_callback_tracing_kind_operations",
        || {
            let ops = callback_operations(kind)?;
            iterate_operations(kind, ops, callback.ok_or(Status::InvalidArgument)?, data);
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn kinds_and_operations_have_the_sdk_names() {
        let mut name: *const c_char = std::ptr::null();
        let mut len = 0u64;
        let kind = BufferTracingKind::MemoryCopy.raw() as c_int;
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(
                rocprofiler_query_buffer_tracing_kind_name(kind, &mut name, &mut len),
                0
            );
            assert_eq!(CStr::from_ptr(name).to_str().unwrap(), "MEMORY_COPY");
            assert_eq!(len, 11);
            assert_eq!(
                rocprofiler_query_buffer_tracing_kind_operation_name(kind, 2, &mut name, &mut len),
                0
            );
            assert_eq!(
                CStr::from_ptr(name).to_str().unwrap(),
                "MEMORY_COPY_HOST_TO_DEVICE"
            );
            let hip = BufferTracingKind::HipRuntimeApi.raw() as c_int;
            let malloc = crate::abi::enums::rocprofiler_hip_runtime_api_id::ROCPROFILER_HIP_RUNTIME_API_ID_hipMalloc as i32;
            assert_eq!(
                rocprofiler_query_buffer_tracing_kind_operation_name(
                    hip, malloc, &mut name, &mut len
                ),
                0
            );
            assert_eq!(CStr::from_ptr(name).to_str().unwrap(), "hipMalloc");
            assert_ne!(
                rocprofiler_query_buffer_tracing_kind_name(9999, &mut name, &mut len),
                0
            );
        }
    }
}
