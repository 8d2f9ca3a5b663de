//! Kind and operation numbers, as constants and name lookups.
//!
//! The numbers are the ROCprofiler-SDK 7.0 C enum values, defined once in the
//! `rocwasm-ids` crate that the host uses too, so a plugin and the host can
//! never disagree on them. Compare records' `kind` fields with the constants
//! (`row.kind == buffer::HIP_RUNTIME_API`); when a number has to leave the
//! process (a file, a config value), use its *name*: the SDK renumbered kinds
//! between releases.
//!
//! ```
//! use rocwasm_plugin_sdk::kind::*;
//! assert_eq!(buffer::HIP_RUNTIME_API, 5);
//! assert_eq!(buffer_kind_by_name("kernel_dispatch"), Some(buffer::KERNEL_DISPATCH));
//! assert_eq!(buffer_kind_name(buffer::KERNEL_DISPATCH), Some("KERNEL_DISPATCH"));
//! assert_eq!(copy::short_name(copy::HOST_TO_DEVICE), Some("HOST_TO_DEVICE"));
//! ```

pub use rocwasm_ids::kind::{
    buffer, callback, external_correlation, BufferTracingKind, CallbackTracingKind,
    ExternalCorrelationKind,
};
/// Operation numbers of the event kinds: copy directions, allocation and
/// scratch operations, runtime initialisation, code objects, dispatches.
pub use rocwasm_ids::ops::{allocation, code_object, copy, kernel_dispatch, runtime_init, scratch};
pub use rocwasm_ids::ApiFamily;

/// `KERNEL_DISPATCH`, `kernel_dispatch` or `ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH` → 11.
pub fn buffer_kind_by_name(name: &str) -> Option<u32> {
    BufferTracingKind::from_name(name).map(BufferTracingKind::raw)
}

/// Like [`buffer_kind_by_name`], for callback-tracing kinds.
pub fn callback_kind_by_name(name: &str) -> Option<u32> {
    CallbackTracingKind::from_name(name).map(CallbackTracingKind::raw)
}

/// Like [`buffer_kind_by_name`], for external-correlation request kinds.
pub fn external_correlation_kind_by_name(name: &str) -> Option<u32> {
    ExternalCorrelationKind::from_name(name).map(ExternalCorrelationKind::raw)
}

/// 11 → `KERNEL_DISPATCH`.
pub fn buffer_kind_name(kind: u32) -> Option<&'static str> {
    BufferTracingKind::from_raw(kind).map(BufferTracingKind::name)
}

/// Like [`buffer_kind_name`], for callback-tracing kinds.
pub fn callback_kind_name(kind: u32) -> Option<&'static str> {
    CallbackTracingKind::from_raw(kind).map(CallbackTracingKind::name)
}

/// Like [`buffer_kind_name`], for external-correlation request kinds.
pub fn external_correlation_kind_name(kind: u32) -> Option<&'static str> {
    ExternalCorrelationKind::from_raw(kind).map(ExternalCorrelationKind::name)
}

/// Parses a comma-separated list of kind names (`"HIP_RUNTIME_API, kernel_dispatch"`)
/// with `lookup`, e.g. [`buffer_kind_by_name`]. Errors name the unknown entry.
pub fn parse_kind_list(list: &str, lookup: fn(&str) -> Option<u32>) -> Result<Vec<u32>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| lookup(s).ok_or_else(|| format!("unknown kind `{s}`")))
        .collect()
}

/// The API domain (`hip`, `hsa`, `marker`, …) a buffer kind of API calls belongs to.
pub fn api_domain(kind: u32) -> Option<&'static str> {
    ApiFamily::of_raw(kind).map(ApiFamily::name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_with_and_without_prefix() {
        assert_eq!(
            buffer_kind_by_name("ROCPROFILER_BUFFER_TRACING_MEMORY_COPY"),
            Some(10)
        );
        assert_eq!(buffer_kind_by_name("memory_copy"), Some(10));
        assert_eq!(
            callback_kind_by_name("CODE_OBJECT"),
            Some(callback::CODE_OBJECT)
        );
        assert_eq!(
            external_correlation_kind_by_name("kernel_dispatch"),
            Some(11)
        );
        assert_eq!(buffer_kind_by_name("nope"), None);
        assert_eq!(callback_kind_name(12), Some("KERNEL_DISPATCH"));
        assert_eq!(buffer_kind_name(0), None);
    }

    #[test]
    fn kind_lists_parse_and_report_unknown_entries() {
        assert_eq!(
            parse_kind_list("hip_runtime_api, KERNEL_DISPATCH,", buffer_kind_by_name),
            Ok(vec![5, 11])
        );
        assert_eq!(parse_kind_list("", buffer_kind_by_name), Ok(vec![]));
        let err = parse_kind_list("HIP_RUNTIME_API,bogus", buffer_kind_by_name).unwrap_err();
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn api_domains() {
        assert_eq!(api_domain(buffer::HIP_RUNTIME_API), Some("hip"));
        assert_eq!(api_domain(buffer::HSA_AMD_EXT_API), Some("hsa"));
        assert_eq!(api_domain(buffer::MARKER_CORE_API), Some("marker"));
        assert_eq!(api_domain(buffer::KERNEL_DISPATCH), None);
    }
}
