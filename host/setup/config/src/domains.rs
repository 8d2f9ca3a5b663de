//! Domain names in chain files: buffer-tracing kind names plus a few
//! rocprofv3-style aliases.
//!
//! A domain is written as a `BufferTracingKind` name, case-insensitive, with
//! or without the `ROCPROFILER_BUFFER_TRACING_` prefix (`kernel_dispatch`,
//! `HIP_RUNTIME_API`), or as one of these aliases, which name several kinds:
//!
//! | alias | kinds |
//! |---|---|
//! | `hip` | `HIP_RUNTIME_API`, `HIP_COMPILER_API` (rocprofv3 `--hip-trace`) |
//! | `hsa` | `HSA_CORE_API`, `HSA_AMD_EXT_API`, `HSA_IMAGE_EXT_API`, `HSA_FINALIZE_EXT_API` (`--hsa-trace`) |
//! | `marker` | `MARKER_CONTROL_API`, `MARKER_CORE_RANGE_API` (`--marker-trace`: what the application marked, and its pause/resume calls; rocprofv3 records no `MARKER_CORE_API` or `MARKER_NAME_API` calls, name those kinds to trace them) |
//! | `kernel` | `KERNEL_DISPATCH` (`--kernel-trace`) |
//! | `memory_copy` | `MEMORY_COPY` (`--memory-copy-trace`; also the kind's own name) |
//! | `memory_allocation` | `MEMORY_ALLOCATION` (`--memory-allocation-trace`) |
//! | `scratch_memory` | `SCRATCH_MEMORY` (`--scratch-memory-trace`; the kind's own name) |
//! | `runtime` | rocprofv3 `-r/--runtime-trace`: `HIP_RUNTIME_API`, `marker`'s kinds, `KERNEL_DISPATCH`, `MEMORY_COPY`, `MEMORY_ALLOCATION`, `SCRATCH_MEMORY`, `RCCL_API`, `ROCDECODE_API`, `ROCJPEG_API` |
//! | `sys` | rocprofv3 `-s/--sys-trace`: `runtime` plus `HIP_COMPILER_API` and the four HSA kinds |
//!
//! Only kinds whose records travel in a columnar [`rocwasm_core::Batch`] can
//! be delivered to a stage; [`batch_table`] says which table holds them.

use rocwasm_core::BufferTracingKind::{self, *};

/// The aliases, in the order the documentation lists them.
pub const ALIASES: &[(&str, &[BufferTracingKind])] = &[
    ("hip", &[HipRuntimeApi, HipCompilerApi]),
    (
        "hsa",
        &[HsaCoreApi, HsaAmdExtApi, HsaImageExtApi, HsaFinalizeExtApi],
    ),
    (
        "marker",
        // rocprofv3 `--marker-trace`: the marks and ranges
        // (MARKER_CORE_RANGE_API) and the pause/resume calls.
        &[MarkerControlApi, MarkerCoreRangeApi],
    ),
    ("kernel", &[KernelDispatch]),
    ("memory_copy", &[MemoryCopy]),
    ("memory_allocation", &[MemoryAllocation]),
    ("scratch_memory", &[ScratchMemory]),
    // rocprofv3 (ROCm 7.0) `--runtime-trace`: hip_runtime_trace, marker,
    // kernel, memory copy, memory allocation, scratch memory, RCCL,
    // rocDecode, rocJPEG — not the HIP compiler API nor HSA.
    (
        "runtime",
        &[
            HipRuntimeApi,
            MarkerControlApi,
            MemoryCopy,
            KernelDispatch,
            ScratchMemory,
            RcclApi,
            MemoryAllocation,
            RocdecodeApi,
            RocjpegApi,
            MarkerCoreRangeApi,
        ],
    ),
    // rocprofv3 `--sys-trace`: the same with `--hip-trace` (runtime and
    // compiler) and `--hsa-trace`.
    (
        "sys",
        &[
            HsaCoreApi,
            HsaAmdExtApi,
            HsaImageExtApi,
            HsaFinalizeExtApi,
            HipRuntimeApi,
            HipCompilerApi,
            MarkerControlApi,
            MemoryCopy,
            KernelDispatch,
            ScratchMemory,
            RcclApi,
            MemoryAllocation,
            RocdecodeApi,
            RocjpegApi,
            MarkerCoreRangeApi,
        ],
    ),
];

/// The kinds a domain name stands for: an alias's kinds, or the one kind of
/// that name. `None` when the name is neither.
pub fn resolve(name: &str) -> Option<Vec<BufferTracingKind>> {
    if let Some((_, kinds)) = ALIASES.iter().find(|(a, _)| a.eq_ignore_ascii_case(name)) {
        return Some(kinds.to_vec());
    }
    BufferTracingKind::from_name(name).map(|k| vec![k])
}

/// The [`rocwasm_core::Batch`] table that carries records of `kind`, or
/// `None` when batches cannot carry it (callback-only `HIP_STREAM`, the
/// `_EXT` kinds whose records carry arguments, the KFD events).
pub fn batch_table(kind: BufferTracingKind) -> Option<&'static str> {
    Some(match kind {
        HsaCoreApi | HsaAmdExtApi | HsaImageExtApi | HsaFinalizeExtApi | HipRuntimeApi
        | HipCompilerApi | MarkerCoreApi | MarkerControlApi | MarkerNameApi | RcclApi | Ompt
        | RocdecodeApi | RocjpegApi | MarkerCoreRangeApi => "api_calls",
        // Each in a table of its own, which the batch names.
        KernelDispatch
        | MemoryCopy
        | MemoryAllocation
        | ScratchMemory
        | CorrelationIdRetirement
        | RuntimeInitialization => return rocwasm_core::Batch::table_of(kind),
        HipStream
        | HipRuntimeApiExt
        | HipCompilerApiExt
        | RocdecodeApiExt
        | KfdEventPageMigrate
        | KfdEventPageFault
        | KfdEventQueue
        | KfdEventUnmapFromGpu
        | KfdEventDroppedEvents
        | KfdPageMigrate
        | KfdPageFault
        | KfdQueue => return None,
    })
}

/// Why `kind` cannot be a domain of a stage, in words for an error message.
pub fn why_not_deliverable(kind: BufferTracingKind) -> String {
    match kind {
        HipStream => "`HIP_STREAM` is a callback-only kind; it has no buffered records".into(),
        _ => format!("`{kind}` records cannot be delivered in batches yet"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_names() {
        assert_eq!(resolve("HIP").unwrap(), vec![HipRuntimeApi, HipCompilerApi]);
        assert_eq!(resolve("kernel").unwrap(), vec![KernelDispatch]);
        assert_eq!(resolve("kernel_dispatch").unwrap(), vec![KernelDispatch]);
        assert_eq!(
            resolve("ROCPROFILER_BUFFER_TRACING_MEMORY_COPY").unwrap(),
            vec![MemoryCopy]
        );
        assert_eq!(
            resolve("marker").unwrap(),
            vec![MarkerControlApi, MarkerCoreRangeApi]
        );
        assert!(resolve("kernels").is_none());
    }

    #[test]
    fn runtime_and_sys_are_rocprofv3s_sets() {
        let runtime = resolve("runtime").unwrap();
        let sys = resolve("sys").unwrap();
        for k in [HipCompilerApi, HsaCoreApi, HsaAmdExtApi] {
            assert!(!runtime.contains(&k) && sys.contains(&k), "{k}");
        }
        for k in &runtime {
            assert!(sys.contains(k), "sys ⊇ runtime: {k}");
            assert!(batch_table(*k).is_some(), "{k} is deliverable");
        }
        for k in [
            HipRuntimeApi,
            KernelDispatch,
            MemoryCopy,
            MemoryAllocation,
            ScratchMemory,
            RcclApi,
            MarkerCoreRangeApi,
        ] {
            assert!(runtime.contains(&k), "{k}");
        }
        assert_eq!(sys.len(), runtime.len() + 5);
        assert!(
            sys.windows(2).all(|w| w[0] < w[1]),
            "SDK order, no duplicates"
        );
        assert!(
            runtime.windows(2).all(|w| w[0] < w[1]),
            "SDK order, no duplicates"
        );
    }

    #[test]
    fn every_kind_has_a_deliverability_answer() {
        for k in BufferTracingKind::ALL {
            // Deliverable kinds name a table; the others explain themselves.
            match batch_table(*k) {
                Some(t) => assert!(!t.is_empty()),
                None => assert!(why_not_deliverable(*k).contains(k.name())),
            }
        }
        assert_eq!(batch_table(KernelDispatch), Some("kernel_dispatches"));
        assert_eq!(batch_table(HipStream), None);
    }
}
