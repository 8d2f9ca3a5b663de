//! `rocprofiler_status_t`: the engine's [`Status`] as the header's numbers,
//! and the status-name and status-string queries.

use std::ffi::{c_char, CStr};

use rocwasm_core::Status;

use crate::abi::enums::rocprofiler_status as header;

/// A `rocprofiler_status_t` as C sees it.
pub type Code = i32;

/// `ROCPROFILER_STATUS_SUCCESS`.
pub const SUCCESS: Code = header::ROCPROFILER_STATUS_SUCCESS as Code;

/// The header's value of `status` (looked up by its SDK name, which
/// `rocwasm-ids` and the header share).
pub fn code(status: Status) -> Code {
    header::ALL
        .iter()
        .find(|(name, _)| *name == status.name())
        .map(|(_, v)| *v as Code)
        .unwrap_or(header::ROCPROFILER_STATUS_ERROR as Code)
}

/// A short sentence for each status the library returns (others get their name).
fn description(name: &str) -> &'static CStr {
    match name {
        "ROCPROFILER_STATUS_SUCCESS" => c"success",
        "ROCPROFILER_STATUS_ERROR" => c"generic error",
        "ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND" => c"no context has this handle",
        "ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND" => c"no buffer has this handle",
        "ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND" => c"this tracing kind does not exist",
        "ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND" => {
            c"this operation does not exist in the tracing kind"
        }
        "ROCPROFILER_STATUS_ERROR_THREAD_NOT_FOUND" => c"no callback thread has this handle",
        "ROCPROFILER_STATUS_ERROR_CONTEXT_INVALID" => {
            c"the context has no service configured, or a service conflicts"
        }
        "ROCPROFILER_STATUS_ERROR_BUFFER_BUSY" => {
            c"the buffer is being delivered on this callback thread"
        }
        "ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED" => {
            c"this service is already configured in the context"
        }
        "ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED" => {
            c"configuration is possible only while tools are configured and initialized"
        }
        "ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED" => c"rocwasm does not implement this function",
        "ROCPROFILER_STATUS_ERROR_FINALIZED" => c"the profiler has been finalized",
        "ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT" => c"an argument is invalid",
        "ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND" => c"no agent has this id",
        "ROCPROFILER_STATUS_ERROR_COUNTER_NOT_FOUND" => c"no counter has this id",
        "ROCPROFILER_STATUS_ERROR_CONTEXT_ERROR" => {
            c"the context's device counting is busy with another sample"
        }
        "ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_STARTED" => c"the context has not been started",
        "ROCPROFILER_STATUS_ERROR_METRIC_NOT_VALID_FOR_AGENT" => {
            c"the counter belongs to another agent's architecture"
        }
        "ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES" => {
            c"the output array is too small (the count needed was written)"
        }
        "ROCPROFILER_STATUS_ERROR_PROFILE_NOT_FOUND" => c"no counter configuration has this id",
        "ROCPROFILER_STATUS_ERROR_AGENT_MISMATCH" => {
            c"the counter configuration was made for another agent"
        }
        "ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT" => {
            c"the counters need more hardware counters of a block than it has in one pass"
        }
        "ROCPROFILER_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED" => {
            c"no counter definitions for this agent's architecture"
        }
        _ => c"",
    }
}

/// The enumerator name of `status`, or `None` for an unknown value.
pub fn name_of(status: Code) -> Option<&'static str> {
    header::ALL
        .iter()
        .find(|(n, v)| *v == i64::from(status) && !n.ends_with("_LAST"))
        .map(|(n, _)| *n)
}

static NAMES: std::sync::OnceLock<Vec<(Code, std::ffi::CString)>> = std::sync::OnceLock::new();

fn c_name(status: Code) -> *const c_char {
    let names = NAMES.get_or_init(|| {
        header::ALL
            .iter()
            .map(|(n, v)| (*v as Code, std::ffi::CString::new(*n).unwrap_or_default()))
            .collect()
    });
    names
        .iter()
        .find(|(v, _)| *v == status)
        .map_or(std::ptr::null(), |(_, n)| n.as_ptr())
}

/// `rocprofiler_get_status_name`: the enumerator's name; NULL for an unknown value.
#[no_mangle]
pub extern "C" fn rocprofiler_get_status_name(status: Code) -> *const c_char {
    c_name(status)
}

/// `rocprofiler_get_status_string`: a description of the status; NULL for
/// an unknown value.
#[no_mangle]
pub extern "C" fn rocprofiler_get_status_string(status: Code) -> *const c_char {
    match name_of(status) {
        Some(name) => {
            let d = description(name);
            if d.is_empty() {
                c_name(status)
            } else {
                d.as_ptr()
            }
        }
        None => std::ptr::null(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_status_has_a_header_value() {
        for s in [
            Status::Error,
            Status::ContextNotFound,
            Status::BufferNotFound,
            Status::KindNotFound,
            Status::OperationNotFound,
            Status::ThreadNotFound,
            Status::ContextInvalid,
            Status::BufferBusy,
            Status::ServiceAlreadyConfigured,
            Status::ConfigurationLocked,
            Status::NotImplemented,
            Status::Finalized,
            Status::InvalidArgument,
        ] {
            assert!(
                header::ALL.iter().any(|(n, _)| *n == s.name()),
                "{} is not in rocprofiler_status_t",
                s.name()
            );
            assert_eq!(name_of(code(s)), Some(s.name()));
        }
    }
}
