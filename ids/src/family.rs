//! Kind families: which runtime's API a kind of API call belongs to.
//!
//! rocprofv3 reports HIP runtime and compiler calls together as "HIP API",
//! the four HSA tables together as "HSA API", and the roctx kinds together
//! as "MARKER API"; statistics files, JSON categories and the plugin SDK's
//! per-domain tables follow that grouping. It is defined here once.

use crate::kind::BufferTracingKind;

/// The runtime library an API-call kind belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ApiFamily {
    /// The four HSA tables (core, AMD extension, image, finalizer).
    Hsa,
    /// HIP runtime and compiler calls, with or without arguments (`_EXT`).
    Hip,
    /// roctx: marks, ranges, control, names.
    Marker,
    /// RCCL collectives.
    Rccl,
    /// rocDecode.
    Rocdecode,
    /// rocJPEG.
    Rocjpeg,
}

impl ApiFamily {
    /// Every family.
    pub const ALL: &'static [ApiFamily] = &[
        ApiFamily::Hsa,
        ApiFamily::Hip,
        ApiFamily::Marker,
        ApiFamily::Rccl,
        ApiFamily::Rocdecode,
        ApiFamily::Rocjpeg,
    ];

    /// The family of an API-call kind; `None` for kinds that are not API calls.
    pub const fn of(kind: BufferTracingKind) -> Option<ApiFamily> {
        use BufferTracingKind as K;
        Some(match kind {
            K::HsaCoreApi | K::HsaAmdExtApi | K::HsaImageExtApi | K::HsaFinalizeExtApi => {
                ApiFamily::Hsa
            }
            K::HipRuntimeApi | K::HipCompilerApi | K::HipRuntimeApiExt | K::HipCompilerApiExt => {
                ApiFamily::Hip
            }
            K::MarkerCoreApi | K::MarkerControlApi | K::MarkerNameApi | K::MarkerCoreRangeApi => {
                ApiFamily::Marker
            }
            K::RcclApi => ApiFamily::Rccl,
            K::RocdecodeApi | K::RocdecodeApiExt => ApiFamily::Rocdecode,
            K::RocjpegApi => ApiFamily::Rocjpeg,
            _ => return None,
        })
    }

    /// The family of a raw buffer-kind number.
    pub const fn of_raw(kind: u32) -> Option<ApiFamily> {
        match BufferTracingKind::from_raw(kind) {
            Some(k) => ApiFamily::of(k),
            None => None,
        }
    }

    /// Lower-case short name: `hsa`, `hip`, `marker`, `rccl`, `rocdecode`, `rocjpeg`.
    pub const fn name(self) -> &'static str {
        match self {
            ApiFamily::Hsa => "hsa",
            ApiFamily::Hip => "hip",
            ApiFamily::Marker => "marker",
            ApiFamily::Rccl => "rccl",
            ApiFamily::Rocdecode => "rocdecode",
            ApiFamily::Rocjpeg => "rocjpeg",
        }
    }

    /// rocprofv3's category: `hip_api`, `hsa_api`, `marker_api`, …
    pub const fn category(self) -> &'static str {
        match self {
            ApiFamily::Hsa => "hsa_api",
            ApiFamily::Hip => "hip_api",
            ApiFamily::Marker => "marker_api",
            ApiFamily::Rccl => "rccl_api",
            ApiFamily::Rocdecode => "rocdecode_api",
            ApiFamily::Rocjpeg => "rocjpeg_api",
        }
    }

    /// rocprofv3's statistics domain title: `HIP_API`, `HSA_API`, `MARKER_API`, …
    pub const fn title(self) -> &'static str {
        match self {
            ApiFamily::Hsa => "HSA_API",
            ApiFamily::Hip => "HIP_API",
            ApiFamily::Marker => "MARKER_API",
            ApiFamily::Rccl => "RCCL_API",
            ApiFamily::Rocdecode => "ROCDECODE_API",
            ApiFamily::Rocjpeg => "ROCJPEG_API",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        use BufferTracingKind as K;
        assert_eq!(ApiFamily::of(K::HipRuntimeApiExt), Some(ApiFamily::Hip));
        assert_eq!(ApiFamily::of(K::HsaAmdExtApi), Some(ApiFamily::Hsa));
        assert_eq!(
            ApiFamily::of(K::MarkerCoreRangeApi),
            Some(ApiFamily::Marker)
        );
        assert_eq!(ApiFamily::of(K::KernelDispatch), None);
        assert_eq!(ApiFamily::of_raw(0), None);
        // Every kind whose name ends in `_API` (or `_API_EXT`) is in a family.
        for &k in K::ALL {
            let api = k.name().ends_with("_API") || k.name().ends_with("_API_EXT");
            assert_eq!(ApiFamily::of(k).is_some(), api, "{k:?}");
        }
    }
}
