//! Tracing kinds and callback phases, numbered exactly as the
//! ROCprofiler-SDK 7.0 C enums are.
//!
//! Each kind exists twice, from one definition: as an enum
//! ([`BufferTracingKind::KernelDispatch`]) for the host, and as a plain `u32`
//! constant in a module named after the enum ([`buffer::KERNEL_DISPATCH`]) for
//! code that receives raw numbers, such as a plugin reading a batch's `kind`
//! column. The constant's identifier is the SDK's name without its prefix,
//! and that name is also the string [`BufferTracingKind::name`] returns.
//!
//! The numbers matter only inside one process. Anything that crosses a
//! process or a version boundary (a recorded rocprofv3 trace, a chain file)
//! names kinds by their *name*, because the SDK renumbered them between
//! releases (its 2024 list had `PAGE_MIGRATION` after `KERNEL_DISPATCH`).

/// Declares a C-like enum with its SDK names, name lookups, iteration, and a
/// module of `u32` constants with a `(number, name)` table.
///
/// A macro rather than a derive crate: four enums share exactly this shape,
/// this crate has no dependencies, and `ALL` must be a `const` slice.
macro_rules! sdk_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident : prefix $prefix:literal, constants $consts:ident {
            $($variant:ident = $value:literal => $sdk:ident,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[repr(u32)]
        pub enum $name {
            $(
                #[doc = concat!("`", $prefix, stringify!($sdk), "` = ", stringify!($value), ".")]
                $variant = $value,
            )+
        }

        impl $name {
            /// Every value, in SDK order, `NONE` excluded.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            /// The common prefix of the C enumerators, e.g. `ROCPROFILER_BUFFER_TRACING_`.
            pub const SDK_PREFIX: &'static str = $prefix;

            /// The SDK name without the prefix, e.g. `KERNEL_DISPATCH`.
            pub const fn name(self) -> &'static str {
                match self { $($name::$variant => stringify!($sdk),)+ }
            }

            /// Looks a value up by its SDK name, with or without the prefix
            /// (case-insensitive, so chain files may write `kernel_dispatch`).
            pub fn from_name(name: &str) -> Option<Self> {
                let bare = crate::strip_prefix_ignore_case(name, $prefix);
                Self::ALL.iter().copied().find(|k| k.name().eq_ignore_ascii_case(bare))
            }

            /// The value with this SDK number, if there is one (`NONE` = 0 is not).
            pub const fn from_raw(raw: u32) -> Option<Self> {
                match raw {
                    $($value => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The SDK number.
            pub const fn raw(self) -> u32 {
                self as u32
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }

        #[doc = concat!("[`", stringify!($name), "`] as plain `u32` constants, for code that reads raw numbers.")]
        pub mod $consts {
            $(
                #[doc = concat!("`", $prefix, stringify!($sdk), "`.")]
                pub const $sdk: u32 = $value;
            )+
            /// Every value as `(number, SDK name without prefix)`, in SDK order, `NONE` excluded.
            pub const TABLE: &[(u32, &str)] = &[$(($value, stringify!($sdk)),)+];
        }
    };
}

sdk_enum! {
    /// `rocprofiler_buffer_tracing_kind_t`: what a buffered record describes.
    pub enum BufferTracingKind : prefix "ROCPROFILER_BUFFER_TRACING_", constants buffer {
        HsaCoreApi = 1 => HSA_CORE_API,
        HsaAmdExtApi = 2 => HSA_AMD_EXT_API,
        HsaImageExtApi = 3 => HSA_IMAGE_EXT_API,
        HsaFinalizeExtApi = 4 => HSA_FINALIZE_EXT_API,
        HipRuntimeApi = 5 => HIP_RUNTIME_API,
        HipCompilerApi = 6 => HIP_COMPILER_API,
        MarkerCoreApi = 7 => MARKER_CORE_API,
        MarkerControlApi = 8 => MARKER_CONTROL_API,
        MarkerNameApi = 9 => MARKER_NAME_API,
        MemoryCopy = 10 => MEMORY_COPY,
        KernelDispatch = 11 => KERNEL_DISPATCH,
        ScratchMemory = 12 => SCRATCH_MEMORY,
        CorrelationIdRetirement = 13 => CORRELATION_ID_RETIREMENT,
        RcclApi = 14 => RCCL_API,
        Ompt = 15 => OMPT,
        MemoryAllocation = 16 => MEMORY_ALLOCATION,
        RuntimeInitialization = 17 => RUNTIME_INITIALIZATION,
        RocdecodeApi = 18 => ROCDECODE_API,
        RocjpegApi = 19 => ROCJPEG_API,
        HipStream = 20 => HIP_STREAM,
        HipRuntimeApiExt = 21 => HIP_RUNTIME_API_EXT,
        HipCompilerApiExt = 22 => HIP_COMPILER_API_EXT,
        RocdecodeApiExt = 23 => ROCDECODE_API_EXT,
        KfdEventPageMigrate = 24 => KFD_EVENT_PAGE_MIGRATE,
        KfdEventPageFault = 25 => KFD_EVENT_PAGE_FAULT,
        KfdEventQueue = 26 => KFD_EVENT_QUEUE,
        KfdEventUnmapFromGpu = 27 => KFD_EVENT_UNMAP_FROM_GPU,
        KfdEventDroppedEvents = 28 => KFD_EVENT_DROPPED_EVENTS,
        KfdPageMigrate = 29 => KFD_PAGE_MIGRATE,
        KfdPageFault = 30 => KFD_PAGE_FAULT,
        KfdQueue = 31 => KFD_QUEUE,
        MarkerCoreRangeApi = 32 => MARKER_CORE_RANGE_API,
    }
}

sdk_enum! {
    /// `rocprofiler_callback_tracing_kind_t`: what a synchronous callback describes.
    pub enum CallbackTracingKind : prefix "ROCPROFILER_CALLBACK_TRACING_", constants callback {
        HsaCoreApi = 1 => HSA_CORE_API,
        HsaAmdExtApi = 2 => HSA_AMD_EXT_API,
        HsaImageExtApi = 3 => HSA_IMAGE_EXT_API,
        HsaFinalizeExtApi = 4 => HSA_FINALIZE_EXT_API,
        HipRuntimeApi = 5 => HIP_RUNTIME_API,
        HipCompilerApi = 6 => HIP_COMPILER_API,
        MarkerCoreApi = 7 => MARKER_CORE_API,
        MarkerControlApi = 8 => MARKER_CONTROL_API,
        MarkerNameApi = 9 => MARKER_NAME_API,
        CodeObject = 10 => CODE_OBJECT,
        ScratchMemory = 11 => SCRATCH_MEMORY,
        KernelDispatch = 12 => KERNEL_DISPATCH,
        MemoryCopy = 13 => MEMORY_COPY,
        RcclApi = 14 => RCCL_API,
        Ompt = 15 => OMPT,
        MemoryAllocation = 16 => MEMORY_ALLOCATION,
        RuntimeInitialization = 17 => RUNTIME_INITIALIZATION,
        RocdecodeApi = 18 => ROCDECODE_API,
        RocjpegApi = 19 => ROCJPEG_API,
        HipStream = 20 => HIP_STREAM,
        MarkerCoreRangeApi = 21 => MARKER_CORE_RANGE_API,
    }
}

sdk_enum! {
    /// `rocprofiler_external_correlation_id_request_kind_t`: which operations may
    /// ask a tool for an external correlation id.
    pub enum ExternalCorrelationKind : prefix "ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_", constants external_correlation {
        HsaCoreApi = 1 => HSA_CORE_API,
        HsaAmdExtApi = 2 => HSA_AMD_EXT_API,
        HsaImageExtApi = 3 => HSA_IMAGE_EXT_API,
        HsaFinalizeExtApi = 4 => HSA_FINALIZE_EXT_API,
        HipRuntimeApi = 5 => HIP_RUNTIME_API,
        HipCompilerApi = 6 => HIP_COMPILER_API,
        MarkerCoreApi = 7 => MARKER_CORE_API,
        MarkerControlApi = 8 => MARKER_CONTROL_API,
        MarkerNameApi = 9 => MARKER_NAME_API,
        MemoryCopy = 10 => MEMORY_COPY,
        KernelDispatch = 11 => KERNEL_DISPATCH,
        ScratchMemory = 12 => SCRATCH_MEMORY,
        RcclApi = 13 => RCCL_API,
        Ompt = 14 => OMPT,
        MemoryAllocation = 15 => MEMORY_ALLOCATION,
        RocdecodeApi = 16 => ROCDECODE_API,
        RocjpegApi = 17 => ROCJPEG_API,
        MarkerCoreRangeApi = 18 => MARKER_CORE_RANGE_API,
    }
}

sdk_enum! {
    /// `rocprofiler_callback_phase_t`. `NONE` (0, not a variant) marks async
    /// completions; `ENTER` is also LOAD and `EXIT` also UNLOAD for
    /// code-object callbacks.
    pub enum CallbackPhase : prefix "ROCPROFILER_CALLBACK_PHASE_", constants phase {
        Enter = 1 => ENTER,
        Exit = 2 => EXIT,
    }
}

/// `rocprofiler_buffer_policy_t`: what a buffer does with a record that does
/// not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u32)]
pub enum BufferPolicy {
    /// `ROCPROFILER_BUFFER_POLICY_LOSSLESS` = 2: swap halves and deliver; the
    /// producer waits only when both halves are full.
    #[default]
    Lossless = 2,
    /// `ROCPROFILER_BUFFER_POLICY_DISCARD` = 1: drop the record and count it;
    /// the count reaches the delivery as `drop_count`.
    Discard = 1,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_dense_ordered_and_agree_with_the_enums() {
        for table in [
            buffer::TABLE,
            callback::TABLE,
            external_correlation::TABLE,
            phase::TABLE,
        ] {
            for (i, (v, _)) in table.iter().enumerate() {
                assert_eq!(*v as usize, i + 1);
            }
        }
        assert_eq!(buffer::TABLE.len(), 32);
        assert_eq!(callback::TABLE.len(), 21);
        assert_eq!(external_correlation::TABLE.len(), 18);
        for (&k, &(v, n)) in BufferTracingKind::ALL.iter().zip(buffer::TABLE) {
            assert_eq!((k.raw(), k.name()), (v, n));
            assert_eq!(BufferTracingKind::from_raw(v), Some(k));
        }
        assert_eq!(
            buffer::KERNEL_DISPATCH,
            BufferTracingKind::KernelDispatch.raw()
        );
        assert_eq!(callback::CODE_OBJECT, 10);
    }

    #[test]
    fn names_round_trip_with_and_without_prefix() {
        assert_eq!(
            BufferTracingKind::from_name("ROCPROFILER_BUFFER_TRACING_MEMORY_COPY"),
            Some(BufferTracingKind::MemoryCopy)
        );
        assert_eq!(
            BufferTracingKind::from_name("memory_copy"),
            Some(BufferTracingKind::MemoryCopy)
        );
        assert_eq!(BufferTracingKind::from_name("nope"), None);
        assert_eq!(BufferTracingKind::from_raw(0), None);
        assert_eq!(
            CallbackTracingKind::KernelDispatch.to_string(),
            "KERNEL_DISPATCH"
        );
    }
}
