//! Tracing kinds, callback phases and status codes, numbered exactly as the
//! ROCprofiler-SDK 7.0 C enums are.
//!
//! The numbers matter only inside one process (plugins receive them in batches
//! and may compare them with the constants of the Rust plugin SDK). Anything
//! that crosses a process or a version boundary — a recorded rocprofv3 trace,
//! a chain file — names kinds by their *name*, because the SDK renumbered them
//! between releases (2024 had `PAGE_MIGRATION` after `KERNEL_DISPATCH`).

use serde::{Deserialize, Serialize};

/// Declares a C-like enum with its SDK name suffixes, plus name lookups and
/// iteration. A macro rather than a derive crate: three enums share the exact
/// same shape and we want `ALL` as a const slice.
macro_rules! sdk_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : prefix $prefix:literal {
            $($variant:ident = $value:literal => $sdk:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[repr(u32)]
        $vis enum $name {
            $($variant = $value,)+
        }

        impl $name {
            /// Every value, in SDK order, `NONE` excluded.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            /// The common prefix of the C enumerators, e.g. `ROCPROFILER_BUFFER_TRACING_`.
            pub const SDK_PREFIX: &'static str = $prefix;

            /// The SDK name without the prefix, e.g. `KERNEL_DISPATCH`.
            pub const fn name(self) -> &'static str {
                match self { $($name::$variant => $sdk,)+ }
            }

            /// Looks a value up by its SDK name, with or without the prefix
            /// (case-insensitive, so chain files may write `kernel_dispatch`).
            pub fn from_name(name: &str) -> Option<Self> {
                let bare = if name.len() >= $prefix.len()
                    && name[..$prefix.len()].eq_ignore_ascii_case($prefix)
                {
                    &name[$prefix.len()..]
                } else {
                    name
                };
                Self::ALL.iter().copied().find(|k| k.name().eq_ignore_ascii_case(bare))
            }

            /// The value with this SDK number, if there is one (`NONE` = 0 is not).
            pub fn from_raw(raw: u32) -> Option<Self> {
                Self::ALL.iter().copied().find(|k| *k as u32 == raw)
            }

            pub const fn raw(self) -> u32 {
                self as u32
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

sdk_enum! {
    /// `rocprofiler_buffer_tracing_kind_t`: what a buffered record describes.
    pub enum BufferTracingKind : prefix "ROCPROFILER_BUFFER_TRACING_" {
        HsaCoreApi = 1 => "HSA_CORE_API",
        HsaAmdExtApi = 2 => "HSA_AMD_EXT_API",
        HsaImageExtApi = 3 => "HSA_IMAGE_EXT_API",
        HsaFinalizeExtApi = 4 => "HSA_FINALIZE_EXT_API",
        HipRuntimeApi = 5 => "HIP_RUNTIME_API",
        HipCompilerApi = 6 => "HIP_COMPILER_API",
        MarkerCoreApi = 7 => "MARKER_CORE_API",
        MarkerControlApi = 8 => "MARKER_CONTROL_API",
        MarkerNameApi = 9 => "MARKER_NAME_API",
        MemoryCopy = 10 => "MEMORY_COPY",
        KernelDispatch = 11 => "KERNEL_DISPATCH",
        ScratchMemory = 12 => "SCRATCH_MEMORY",
        CorrelationIdRetirement = 13 => "CORRELATION_ID_RETIREMENT",
        RcclApi = 14 => "RCCL_API",
        Ompt = 15 => "OMPT",
        MemoryAllocation = 16 => "MEMORY_ALLOCATION",
        RuntimeInitialization = 17 => "RUNTIME_INITIALIZATION",
        RocdecodeApi = 18 => "ROCDECODE_API",
        RocjpegApi = 19 => "ROCJPEG_API",
        HipStream = 20 => "HIP_STREAM",
        HipRuntimeApiExt = 21 => "HIP_RUNTIME_API_EXT",
        HipCompilerApiExt = 22 => "HIP_COMPILER_API_EXT",
        RocdecodeApiExt = 23 => "ROCDECODE_API_EXT",
        KfdEventPageMigrate = 24 => "KFD_EVENT_PAGE_MIGRATE",
        KfdEventPageFault = 25 => "KFD_EVENT_PAGE_FAULT",
        KfdEventQueue = 26 => "KFD_EVENT_QUEUE",
        KfdEventUnmapFromGpu = 27 => "KFD_EVENT_UNMAP_FROM_GPU",
        KfdEventDroppedEvents = 28 => "KFD_EVENT_DROPPED_EVENTS",
        KfdPageMigrate = 29 => "KFD_PAGE_MIGRATE",
        KfdPageFault = 30 => "KFD_PAGE_FAULT",
        KfdQueue = 31 => "KFD_QUEUE",
        MarkerCoreRangeApi = 32 => "MARKER_CORE_RANGE_API",
    }
}

sdk_enum! {
    /// `rocprofiler_callback_tracing_kind_t`: what a synchronous callback describes.
    pub enum CallbackTracingKind : prefix "ROCPROFILER_CALLBACK_TRACING_" {
        HsaCoreApi = 1 => "HSA_CORE_API",
        HsaAmdExtApi = 2 => "HSA_AMD_EXT_API",
        HsaImageExtApi = 3 => "HSA_IMAGE_EXT_API",
        HsaFinalizeExtApi = 4 => "HSA_FINALIZE_EXT_API",
        HipRuntimeApi = 5 => "HIP_RUNTIME_API",
        HipCompilerApi = 6 => "HIP_COMPILER_API",
        MarkerCoreApi = 7 => "MARKER_CORE_API",
        MarkerControlApi = 8 => "MARKER_CONTROL_API",
        MarkerNameApi = 9 => "MARKER_NAME_API",
        CodeObject = 10 => "CODE_OBJECT",
        ScratchMemory = 11 => "SCRATCH_MEMORY",
        KernelDispatch = 12 => "KERNEL_DISPATCH",
        MemoryCopy = 13 => "MEMORY_COPY",
        RcclApi = 14 => "RCCL_API",
        Ompt = 15 => "OMPT",
        MemoryAllocation = 16 => "MEMORY_ALLOCATION",
        RuntimeInitialization = 17 => "RUNTIME_INITIALIZATION",
        RocdecodeApi = 18 => "ROCDECODE_API",
        RocjpegApi = 19 => "ROCJPEG_API",
        HipStream = 20 => "HIP_STREAM",
        MarkerCoreRangeApi = 21 => "MARKER_CORE_RANGE_API",
    }
}

sdk_enum! {
    /// `rocprofiler_external_correlation_id_request_kind_t`: which operations may
    /// ask a tool for an external correlation id.
    pub enum ExternalCorrelationKind : prefix "ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_" {
        HsaCoreApi = 1 => "HSA_CORE_API",
        HsaAmdExtApi = 2 => "HSA_AMD_EXT_API",
        HsaImageExtApi = 3 => "HSA_IMAGE_EXT_API",
        HsaFinalizeExtApi = 4 => "HSA_FINALIZE_EXT_API",
        HipRuntimeApi = 5 => "HIP_RUNTIME_API",
        HipCompilerApi = 6 => "HIP_COMPILER_API",
        MarkerCoreApi = 7 => "MARKER_CORE_API",
        MarkerControlApi = 8 => "MARKER_CONTROL_API",
        MarkerNameApi = 9 => "MARKER_NAME_API",
        MemoryCopy = 10 => "MEMORY_COPY",
        KernelDispatch = 11 => "KERNEL_DISPATCH",
        ScratchMemory = 12 => "SCRATCH_MEMORY",
        RcclApi = 13 => "RCCL_API",
        Ompt = 14 => "OMPT",
        MemoryAllocation = 15 => "MEMORY_ALLOCATION",
        RocdecodeApi = 16 => "ROCDECODE_API",
        RocjpegApi = 17 => "ROCJPEG_API",
        MarkerCoreRangeApi = 18 => "MARKER_CORE_RANGE_API",
    }
}

sdk_enum! {
    /// `rocprofiler_callback_phase_t`. `None` marks async completions; `Enter` is
    /// also LOAD and `Exit` also UNLOAD for code-object callbacks.
    pub enum CallbackPhase : prefix "ROCPROFILER_CALLBACK_PHASE_" {
        Enter = 1 => "ENTER",
        Exit = 2 => "EXIT",
    }
}

/// The SDK's `rocprofiler_status_t` values that the tool-facing model can return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
pub enum Status {
    #[error("ROCPROFILER_STATUS_ERROR")]
    Error,
    #[error("ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND")]
    ContextNotFound,
    #[error("ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND")]
    BufferNotFound,
    #[error("ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND")]
    KindNotFound,
    #[error("ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND")]
    OperationNotFound,
    #[error("ROCPROFILER_STATUS_ERROR_THREAD_NOT_FOUND")]
    ThreadNotFound,
    #[error("ROCPROFILER_STATUS_ERROR_CONTEXT_INVALID")]
    ContextInvalid,
    #[error("ROCPROFILER_STATUS_ERROR_BUFFER_BUSY")]
    BufferBusy,
    #[error("ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED")]
    ServiceAlreadyConfigured,
    #[error("ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED")]
    ConfigurationLocked,
    #[error("ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED")]
    NotImplemented,
    #[error("ROCPROFILER_STATUS_ERROR_FINALIZED")]
    Finalized,
    #[error("ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT")]
    InvalidArgument,
}

/// What a buffer does with a record that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum BufferPolicy {
    /// Swap halves and deliver; the producer waits only when both halves are full.
    #[default]
    Lossless,
    /// Drop the record and count it; the count reaches the delivery as `drop_count`.
    Discard,
}
