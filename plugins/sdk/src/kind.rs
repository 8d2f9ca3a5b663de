//! Kind and operation numbers, as constants and name tables.
//!
//! The numbers are the ROCprofiler-SDK 7.0 C enum values, the same ones
//! `sdk-core/src/kind.rs` defines for the host. Compare records' `kind`
//! fields with them (`row.kind == BUFFER_HIP_RUNTIME_API`); when a number has
//! to leave the process (a file, a config value), use its *name*: the SDK
//! renumbered kinds between releases.
//!
//! ```
//! use rocwasm_plugin_sdk::kind::*;
//! assert_eq!(BUFFER_HIP_RUNTIME_API, 5);
//! assert_eq!(buffer_kind_by_name("kernel_dispatch"), Some(BUFFER_KERNEL_DISPATCH));
//! assert_eq!(buffer_kind_name(BUFFER_KERNEL_DISPATCH), Some("KERNEL_DISPATCH"));
//! ```

/// Declares one constant per kind plus a `(number, name)` table, in SDK order.
macro_rules! kinds {
    ($table:ident, $($konst:ident = $value:literal => $name:literal,)+) => {
        $(
            #[doc = concat!("`", $name, "` = ", stringify!($value), ".")]
            pub const $konst: u32 = $value;
        )+
        /// Every kind as `(number, SDK name without prefix)`, in SDK order, `NONE` excluded.
        pub const $table: &[(u32, &str)] = &[$(($value, $name),)+];
    };
}

kinds! {
    BUFFER_KINDS,
    BUFFER_HSA_CORE_API = 1 => "HSA_CORE_API",
    BUFFER_HSA_AMD_EXT_API = 2 => "HSA_AMD_EXT_API",
    BUFFER_HSA_IMAGE_EXT_API = 3 => "HSA_IMAGE_EXT_API",
    BUFFER_HSA_FINALIZE_EXT_API = 4 => "HSA_FINALIZE_EXT_API",
    BUFFER_HIP_RUNTIME_API = 5 => "HIP_RUNTIME_API",
    BUFFER_HIP_COMPILER_API = 6 => "HIP_COMPILER_API",
    BUFFER_MARKER_CORE_API = 7 => "MARKER_CORE_API",
    BUFFER_MARKER_CONTROL_API = 8 => "MARKER_CONTROL_API",
    BUFFER_MARKER_NAME_API = 9 => "MARKER_NAME_API",
    BUFFER_MEMORY_COPY = 10 => "MEMORY_COPY",
    BUFFER_KERNEL_DISPATCH = 11 => "KERNEL_DISPATCH",
    BUFFER_SCRATCH_MEMORY = 12 => "SCRATCH_MEMORY",
    BUFFER_CORRELATION_ID_RETIREMENT = 13 => "CORRELATION_ID_RETIREMENT",
    BUFFER_RCCL_API = 14 => "RCCL_API",
    BUFFER_OMPT = 15 => "OMPT",
    BUFFER_MEMORY_ALLOCATION = 16 => "MEMORY_ALLOCATION",
    BUFFER_RUNTIME_INITIALIZATION = 17 => "RUNTIME_INITIALIZATION",
    BUFFER_ROCDECODE_API = 18 => "ROCDECODE_API",
    BUFFER_ROCJPEG_API = 19 => "ROCJPEG_API",
    BUFFER_HIP_STREAM = 20 => "HIP_STREAM",
    BUFFER_HIP_RUNTIME_API_EXT = 21 => "HIP_RUNTIME_API_EXT",
    BUFFER_HIP_COMPILER_API_EXT = 22 => "HIP_COMPILER_API_EXT",
    BUFFER_ROCDECODE_API_EXT = 23 => "ROCDECODE_API_EXT",
    BUFFER_KFD_EVENT_PAGE_MIGRATE = 24 => "KFD_EVENT_PAGE_MIGRATE",
    BUFFER_KFD_EVENT_PAGE_FAULT = 25 => "KFD_EVENT_PAGE_FAULT",
    BUFFER_KFD_EVENT_QUEUE = 26 => "KFD_EVENT_QUEUE",
    BUFFER_KFD_EVENT_UNMAP_FROM_GPU = 27 => "KFD_EVENT_UNMAP_FROM_GPU",
    BUFFER_KFD_EVENT_DROPPED_EVENTS = 28 => "KFD_EVENT_DROPPED_EVENTS",
    BUFFER_KFD_PAGE_MIGRATE = 29 => "KFD_PAGE_MIGRATE",
    BUFFER_KFD_PAGE_FAULT = 30 => "KFD_PAGE_FAULT",
    BUFFER_KFD_QUEUE = 31 => "KFD_QUEUE",
    BUFFER_MARKER_CORE_RANGE_API = 32 => "MARKER_CORE_RANGE_API",
}

kinds! {
    CALLBACK_KINDS,
    CALLBACK_HSA_CORE_API = 1 => "HSA_CORE_API",
    CALLBACK_HSA_AMD_EXT_API = 2 => "HSA_AMD_EXT_API",
    CALLBACK_HSA_IMAGE_EXT_API = 3 => "HSA_IMAGE_EXT_API",
    CALLBACK_HSA_FINALIZE_EXT_API = 4 => "HSA_FINALIZE_EXT_API",
    CALLBACK_HIP_RUNTIME_API = 5 => "HIP_RUNTIME_API",
    CALLBACK_HIP_COMPILER_API = 6 => "HIP_COMPILER_API",
    CALLBACK_MARKER_CORE_API = 7 => "MARKER_CORE_API",
    CALLBACK_MARKER_CONTROL_API = 8 => "MARKER_CONTROL_API",
    CALLBACK_MARKER_NAME_API = 9 => "MARKER_NAME_API",
    CALLBACK_CODE_OBJECT = 10 => "CODE_OBJECT",
    CALLBACK_SCRATCH_MEMORY = 11 => "SCRATCH_MEMORY",
    CALLBACK_KERNEL_DISPATCH = 12 => "KERNEL_DISPATCH",
    CALLBACK_MEMORY_COPY = 13 => "MEMORY_COPY",
    CALLBACK_RCCL_API = 14 => "RCCL_API",
    CALLBACK_OMPT = 15 => "OMPT",
    CALLBACK_MEMORY_ALLOCATION = 16 => "MEMORY_ALLOCATION",
    CALLBACK_RUNTIME_INITIALIZATION = 17 => "RUNTIME_INITIALIZATION",
    CALLBACK_ROCDECODE_API = 18 => "ROCDECODE_API",
    CALLBACK_ROCJPEG_API = 19 => "ROCJPEG_API",
    CALLBACK_HIP_STREAM = 20 => "HIP_STREAM",
    CALLBACK_MARKER_CORE_RANGE_API = 21 => "MARKER_CORE_RANGE_API",
}

kinds! {
    EXTERNAL_CORRELATION_KINDS,
    EXTERNAL_CORRELATION_HSA_CORE_API = 1 => "HSA_CORE_API",
    EXTERNAL_CORRELATION_HSA_AMD_EXT_API = 2 => "HSA_AMD_EXT_API",
    EXTERNAL_CORRELATION_HSA_IMAGE_EXT_API = 3 => "HSA_IMAGE_EXT_API",
    EXTERNAL_CORRELATION_HSA_FINALIZE_EXT_API = 4 => "HSA_FINALIZE_EXT_API",
    EXTERNAL_CORRELATION_HIP_RUNTIME_API = 5 => "HIP_RUNTIME_API",
    EXTERNAL_CORRELATION_HIP_COMPILER_API = 6 => "HIP_COMPILER_API",
    EXTERNAL_CORRELATION_MARKER_CORE_API = 7 => "MARKER_CORE_API",
    EXTERNAL_CORRELATION_MARKER_CONTROL_API = 8 => "MARKER_CONTROL_API",
    EXTERNAL_CORRELATION_MARKER_NAME_API = 9 => "MARKER_NAME_API",
    EXTERNAL_CORRELATION_MEMORY_COPY = 10 => "MEMORY_COPY",
    EXTERNAL_CORRELATION_KERNEL_DISPATCH = 11 => "KERNEL_DISPATCH",
    EXTERNAL_CORRELATION_SCRATCH_MEMORY = 12 => "SCRATCH_MEMORY",
    EXTERNAL_CORRELATION_RCCL_API = 13 => "RCCL_API",
    EXTERNAL_CORRELATION_OMPT = 14 => "OMPT",
    EXTERNAL_CORRELATION_MEMORY_ALLOCATION = 15 => "MEMORY_ALLOCATION",
    EXTERNAL_CORRELATION_ROCDECODE_API = 16 => "ROCDECODE_API",
    EXTERNAL_CORRELATION_ROCJPEG_API = 17 => "ROCJPEG_API",
    EXTERNAL_CORRELATION_MARKER_CORE_RANGE_API = 18 => "MARKER_CORE_RANGE_API",
}

/// Memory-copy directions (the `operation` of `MEMORY_COPY` records).
pub mod copy {
    pub const NONE: u32 = 0;
    pub const HOST_TO_HOST: u32 = 1;
    pub const HOST_TO_DEVICE: u32 = 2;
    pub const DEVICE_TO_HOST: u32 = 3;
    pub const DEVICE_TO_DEVICE: u32 = 4;

    /// The direction's SDK name, e.g. `HOST_TO_DEVICE`, or `None` for an unknown number.
    pub fn direction_name(op: u32) -> Option<&'static str> {
        Some(match op {
            NONE => "NONE",
            HOST_TO_HOST => "HOST_TO_HOST",
            HOST_TO_DEVICE => "HOST_TO_DEVICE",
            DEVICE_TO_HOST => "DEVICE_TO_HOST",
            DEVICE_TO_DEVICE => "DEVICE_TO_DEVICE",
            _ => return None,
        })
    }
}

/// Memory-allocation operations (the `operation` of `MEMORY_ALLOCATION` records).
pub mod allocation {
    pub const ALLOCATE: u32 = 1;
    pub const VMEM_ALLOCATE: u32 = 2;
    pub const FREE: u32 = 3;
    pub const VMEM_FREE: u32 = 4;
}

/// Scratch-memory operations (the `operation` of `SCRATCH_MEMORY` records).
pub mod scratch {
    pub const ALLOC: u32 = 1;
    pub const FREE: u32 = 2;
    pub const ASYNC_RECLAIM: u32 = 3;
}

fn by_name(table: &[(u32, &str)], prefix: &str, name: &str) -> Option<u32> {
    let bare = match name.get(..prefix.len()) {
        Some(head) if head.eq_ignore_ascii_case(prefix) => &name[prefix.len()..],
        _ => name,
    };
    table
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(bare))
        .map(|(v, _)| *v)
}

fn by_number(table: &[(u32, &'static str)], kind: u32) -> Option<&'static str> {
    table.iter().find(|(v, _)| *v == kind).map(|(_, n)| *n)
}

/// `KERNEL_DISPATCH`, `kernel_dispatch` or `ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH` → 11.
pub fn buffer_kind_by_name(name: &str) -> Option<u32> {
    by_name(BUFFER_KINDS, "ROCPROFILER_BUFFER_TRACING_", name)
}

/// Like [`buffer_kind_by_name`], for callback-tracing kinds.
pub fn callback_kind_by_name(name: &str) -> Option<u32> {
    by_name(CALLBACK_KINDS, "ROCPROFILER_CALLBACK_TRACING_", name)
}

/// Like [`buffer_kind_by_name`], for external-correlation request kinds.
pub fn external_correlation_kind_by_name(name: &str) -> Option<u32> {
    by_name(
        EXTERNAL_CORRELATION_KINDS,
        "ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_",
        name,
    )
}

/// 11 → `KERNEL_DISPATCH`.
pub fn buffer_kind_name(kind: u32) -> Option<&'static str> {
    by_number(BUFFER_KINDS, kind)
}

/// Like [`buffer_kind_name`], for callback-tracing kinds.
pub fn callback_kind_name(kind: u32) -> Option<&'static str> {
    by_number(CALLBACK_KINDS, kind)
}

/// Like [`buffer_kind_name`], for external-correlation request kinds.
pub fn external_correlation_kind_name(kind: u32) -> Option<&'static str> {
    by_number(EXTERNAL_CORRELATION_KINDS, kind)
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
    Some(match kind {
        BUFFER_HSA_CORE_API..=BUFFER_HSA_FINALIZE_EXT_API => "hsa",
        BUFFER_HIP_RUNTIME_API
        | BUFFER_HIP_COMPILER_API
        | BUFFER_HIP_RUNTIME_API_EXT
        | BUFFER_HIP_COMPILER_API_EXT => "hip",
        BUFFER_MARKER_CORE_API..=BUFFER_MARKER_NAME_API | BUFFER_MARKER_CORE_RANGE_API => "marker",
        BUFFER_RCCL_API => "rccl",
        BUFFER_ROCDECODE_API | BUFFER_ROCDECODE_API_EXT => "rocdecode",
        BUFFER_ROCJPEG_API => "rocjpeg",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_dense_and_ordered() {
        for table in [BUFFER_KINDS, CALLBACK_KINDS, EXTERNAL_CORRELATION_KINDS] {
            for (i, (v, _)) in table.iter().enumerate() {
                assert_eq!(*v as usize, i + 1);
            }
        }
        assert_eq!(BUFFER_KINDS.len(), 32);
        assert_eq!(CALLBACK_KINDS.len(), 21);
        assert_eq!(EXTERNAL_CORRELATION_KINDS.len(), 18);
    }

    #[test]
    fn names_round_trip_with_and_without_prefix() {
        assert_eq!(
            buffer_kind_by_name("ROCPROFILER_BUFFER_TRACING_MEMORY_COPY"),
            Some(10)
        );
        assert_eq!(buffer_kind_by_name("memory_copy"), Some(10));
        assert_eq!(
            callback_kind_by_name("CODE_OBJECT"),
            Some(CALLBACK_CODE_OBJECT)
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
        assert_eq!(api_domain(BUFFER_HIP_RUNTIME_API), Some("hip"));
        assert_eq!(api_domain(BUFFER_HSA_AMD_EXT_API), Some("hsa"));
        assert_eq!(api_domain(BUFFER_MARKER_CORE_API), Some("marker"));
        assert_eq!(api_domain(BUFFER_KERNEL_DISPATCH), None);
    }
}
