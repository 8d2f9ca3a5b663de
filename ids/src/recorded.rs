//! Names as recorded traces spell them: every domain (kind) and operation
//! spelling rocprofv3 has written across ROCm 5.x–7.x, mapped to the kind
//! and operation a live rocwasm run records.
//!
//! rocprofv3 writes a record's kind under the SDK's *buffer-tracing* name
//! (the `Domain` or `Kind` column of its CSV files, `strings.buffer_records`
//! in `results.json`, the event category in rocpd). Two things differ from
//! what a live run of this build records:
//!
//! - **The `_EXT` kinds.** From ROCm 7.0 rocprofv3 traces HIP through the
//!   argument-carrying buffer kinds, so its files say `HIP_RUNTIME_API_EXT`
//!   and `HIP_COMPILER_API_EXT` (and `ROCDECODE_API_EXT`). They are the same
//!   calls, with the same operation lists, as the plain kinds, which is what
//!   rocwasm records and what chains subscribe to; [`recorded_kind`] maps
//!   them there.
//! - **ABI-versioned HIP functions.** HIP 6.0 changed `hipDeviceProp_t` and
//!   kept the old entry points for binaries built against 5.x; the SDK names
//!   each table slot after its function, so the operation names include
//!   `hipGetDevicePropertiesR0600` (the 6.x ABI), `hipGetDevicePropertiesR0000`
//!   and `hipChooseDeviceR0000` (the 5.x ABI). These three are operations of
//!   their own here too (after the 5.2 exports), so a replay keeps the name
//!   the recording has; a versioned name this build does not list (a later
//!   ABI) is the unversioned function: [`recorded_operation`] strips the `R`
//!   + four digits suffix when the name itself is not an operation.
//!
//! Older spellings of whole domains (`HIP_API`, `HSA_API`, `MARKER_API`,
//! the runtime names alone) are in [`KIND_ALIASES`]. A recording of the
//! HSA tables under one generic name is split back into its four tables by
//! function name ([`hsa_kind_of_function`]).

use crate::kind::BufferTracingKind as K;
use crate::ops::{operation_by_name, OperationKind};

/// Spellings of kinds that are not the SDK name of the kind a live run
/// records, with that kind. Looked up ignoring ASCII case and the
/// `ROCPROFILER_BUFFER_TRACING_` prefix.
pub const KIND_ALIASES: &[(&str, K)] = &[
    // ROCm 7.x: the argument-carrying buffer kinds.
    ("HIP_RUNTIME_API_EXT", K::HipRuntimeApi),
    ("HIP_COMPILER_API_EXT", K::HipCompilerApi),
    ("ROCDECODE_API_EXT", K::RocdecodeApi),
    // Whole-runtime names (statistics titles, older tools).
    ("HIP_API", K::HipRuntimeApi),
    ("HIP", K::HipRuntimeApi),
    ("HSA_API", K::HsaCoreApi),
    ("HSA", K::HsaCoreApi),
    ("MARKER_API", K::MarkerCoreApi),
    ("MARKER", K::MarkerCoreApi),
    ("ROCTX", K::MarkerCoreApi),
    ("RCCL", K::RcclApi),
];

/// The kind a record written under `name` is replayed as: the buffer kind
/// of that SDK name, or of its alias ([`KIND_ALIASES`]); `None` for a name
/// no rocprofv3 release writes.
pub fn recorded_kind(name: &str) -> Option<K> {
    let bare = crate::strip_prefix_ignore_case(name.trim(), K::SDK_PREFIX);
    if let Some((_, k)) = KIND_ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(bare))
    {
        return Some(*k);
    }
    K::from_name(bare)
}

/// The operation of `kind` that a record naming `name` is, allowing for the
/// ABI-version suffix of HIP functions (`hipGetDevicePropertiesR0600` is
/// `hipGetDeviceProperties`) and the spellings [`operation_by_name`] allows.
pub fn recorded_operation<Kd: OperationKind>(kind: Kd, name: &str) -> Option<u32> {
    operation_by_name(kind, name).or_else(|| operation_by_name(kind, abi_base_name(name)?))
}

/// `name` without a trailing HIP ABI-version tag (`R` and four digits, as in
/// `hipChooseDeviceR0000`), if it has one.
pub fn abi_base_name(name: &str) -> Option<&str> {
    let n = name.len();
    let tag = name.get(n.checked_sub(5)?..)?;
    let mut chars = tag.chars();
    (chars.next() == Some('R') && chars.all(|c| c.is_ascii_digit()) && n > 5)
        .then(|| &name[..n - 5])
}

/// Which of the four HSA tables defines the function `name`, for records
/// that name only "HSA".
pub fn hsa_kind_of_function(name: &str) -> Option<K> {
    [
        K::HsaCoreApi,
        K::HsaAmdExtApi,
        K::HsaImageExtApi,
        K::HsaFinalizeExtApi,
    ]
    .into_iter()
    .find(|&k| operation_by_name(k, name).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::operation_name;

    #[test]
    fn every_sdk_name_and_alias_maps() {
        for &k in K::ALL {
            assert!(recorded_kind(k.name()).is_some(), "{k:?}");
        }
        assert_eq!(recorded_kind("HIP_RUNTIME_API_EXT"), Some(K::HipRuntimeApi));
        assert_eq!(
            recorded_kind("ROCPROFILER_BUFFER_TRACING_HIP_COMPILER_API_EXT"),
            Some(K::HipCompilerApi)
        );
        assert_eq!(recorded_kind("hsa_amd_ext_api"), Some(K::HsaAmdExtApi));
        assert_eq!(recorded_kind(" HSA_CORE_API "), Some(K::HsaCoreApi));
        assert_eq!(recorded_kind("HIP_API"), Some(K::HipRuntimeApi));
        assert_eq!(recorded_kind("HIP_FOO_API"), None);
        // Aliases point at kinds a live run records, never at another alias.
        for (alias, k) in KIND_ALIASES {
            assert!(!k.name().ends_with("_EXT"), "{alias}");
        }
    }

    #[test]
    fn abi_versioned_hip_functions() {
        let k = K::HipRuntimeApi;
        // Recorded names are kept: each versioned entry point is its own
        // operation.
        for name in [
            "hipGetDevicePropertiesR0600",
            "hipGetDevicePropertiesR0000",
            "hipChooseDeviceR0000",
        ] {
            let op = recorded_operation(k, name).unwrap();
            assert_eq!(operation_name(k, op), Some(name));
        }
        assert_ne!(
            recorded_operation(k, "hipGetDevicePropertiesR0600"),
            operation_by_name(k, "hipGetDeviceProperties")
        );
        // A version this build does not list is the unversioned function.
        let later = recorded_operation(k, "hipGetDevicePropertiesR0700").unwrap();
        assert_eq!(operation_name(k, later), Some("hipGetDeviceProperties"));
        assert_eq!(
            recorded_operation(k, "hipMalloc"),
            operation_by_name(k, "hipMalloc")
        );
        assert_eq!(recorded_operation(k, "hipNotAFunctionR0600"), None);
        assert_eq!(abi_base_name("R0600"), None);
        assert_eq!(abi_base_name("hipFooR06"), None);
        assert_eq!(abi_base_name("hipFooX0600"), None);
    }

    #[test]
    fn hsa_functions_find_their_table() {
        assert_eq!(hsa_kind_of_function("hsa_init"), Some(K::HsaCoreApi));
        assert_eq!(
            hsa_kind_of_function("hsa_amd_memory_pool_get_info"),
            Some(K::HsaAmdExtApi)
        );
        assert_eq!(hsa_kind_of_function("hipMalloc"), None);
    }
}
