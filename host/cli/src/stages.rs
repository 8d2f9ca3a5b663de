//! A validated chain's stages → the runtime's [`StageSpec`]s.
//!
//! The one place where the chain file's vocabulary (rocwasm-config) meets
//! the plugin runtime's (rocwasm-runtime). `run`, `replay` and `demo` call
//! it once they have expanded the output directory for their process.

use std::path::Path;

use rocwasm_config::{Chain, FailurePolicy, OutputGrant, StageKind};
use rocwasm_runtime::spec::BufferSettings;
use rocwasm_runtime::{KindFilter, Limits, StageSpec, World};

/// One [`StageSpec`] per stage, in chain order. `run_dir` is the expanded
/// `[output] directory` of this process; grants become directories in it.
#[allow(dead_code)] // wired in by `run`/`replay`/`demo`
pub fn stage_specs(chain: &Chain, run_dir: &Path) -> Vec<StageSpec> {
    chain
        .stages
        .iter()
        .map(|s| StageSpec {
            name: s.name.clone(),
            wasm: s.plugin.path.clone(),
            kinds: KindFilter::only(s.domains.iter().copied()),
            config: s.config.clone(),
            limits: Limits {
                memory_bytes: usize::try_from(s.limits.memory).unwrap_or(usize::MAX),
                deadline: s.limits.deadline,
                ..Limits::default()
            },
            failure: match s.on_failure {
                FailurePolicy::Skip => rocwasm_runtime::FailurePolicy::Skip,
                FailurePolicy::Disable => rocwasm_runtime::FailurePolicy::Disable,
                FailurePolicy::Restart {
                    max_restarts,
                    backoff,
                } => rocwasm_runtime::FailurePolicy::Restart {
                    max: max_restarts,
                    backoff,
                },
                FailurePolicy::Abort => rocwasm_runtime::FailurePolicy::Abort,
            },
            output_dir: match &s.output {
                OutputGrant::None => None,
                OutputGrant::RunDirectory => Some(run_dir.to_path_buf()),
                OutputGrant::Subdirectory(d) => Some(run_dir.join(d)),
            },
            world: Some(match s.kind {
                StageKind::Analysis => World::Analysis,
                StageKind::Transform => World::Transform,
            }),
            // A transform's `domains` only say which kinds it filters (its
            // kind filter above); it sees the chain's batches and traces nothing.
            domains: match s.kind {
                StageKind::Analysis => s.domains.clone(),
                StageKind::Transform => Vec::new(),
            },
            // What the stage sees of its kinds; for an analysis also what the
            // chain traces (the union over its stages).
            operations: s
                .operations
                .iter()
                .map(|(kind, ops)| (*kind, ops.iter().map(|o| o.id).collect()))
                .collect(),
            buffer: BufferSettings {
                size: chain.settings.buffer.size,
                watermark: chain.settings.buffer.watermark,
                policy: chain.settings.buffer.policy,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_config::{LoadOptions, TraceFlags};
    use std::time::Duration;

    #[test]
    fn the_default_chain_maps_onto_stage_specs() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chains/default.toml");
        let chain = Chain::load(
            &path,
            &LoadOptions {
                plugin_path: vec![],
                check_plugins: false,
            },
        )
        .unwrap();
        let specs = stage_specs(&chain, Path::new("/out/run"));
        assert_eq!(specs.len(), 3);
        assert_eq!(specs[1].limits.memory_bytes, 64 << 20);
        assert_eq!(specs[1].limits.deadline, Duration::from_millis(500));
        assert_eq!(specs[0].output_dir.as_deref(), Some(Path::new("/out/run")));
        assert_eq!(
            specs[2].output_dir.as_deref(),
            Some(Path::new("/out/run/bandwidth"))
        );
        assert_eq!(
            specs[2].failure,
            rocwasm_runtime::FailurePolicy::Restart {
                max: 3,
                backoff: Duration::from_millis(100)
            }
        );
        assert!(specs[0]
            .kinds
            .accepts(rocwasm_core::BufferTracingKind::KernelDispatch));
        assert!(!specs[0]
            .kinds
            .accepts(rocwasm_core::BufferTracingKind::MemoryCopy));
        assert_eq!(specs[0].world, Some(World::Analysis));
        assert_eq!(specs[1].domains.len(), 2);
        assert_eq!(specs[1].buffer.size, 4 << 20);
    }

    #[test]
    fn operations_map_to_their_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.toml");
        std::fs::write(
            &path,
            r#"
version = 1

[[stage]]
name = "launches"
plugin = "api-stats"
domains = ["hip_runtime_api", "kernel_dispatch"]
operations = { hip_runtime_api = ["hipLaunchKernel", "hipMemcpy"] }
"#,
        )
        .unwrap();
        let chain = Chain::load(
            &path,
            &LoadOptions {
                plugin_path: vec![],
                check_plugins: false,
            },
        )
        .unwrap();
        let specs = stage_specs(&chain, Path::new("o"));
        let hip = rocwasm_core::BufferTracingKind::HipRuntimeApi;
        let want: Vec<u32> = ["hipLaunchKernel", "hipMemcpy"]
            .iter()
            .map(|n| rocwasm_core::operation_by_name(hip, n).unwrap())
            .collect();
        let mut got = specs[0].operations[&hip].clone();
        got.sort_unstable();
        let mut want_sorted = want.clone();
        want_sorted.sort_unstable();
        assert_eq!(got, want_sorted);
        assert!(!specs[0]
            .operations
            .contains_key(&rocwasm_core::BufferTracingKind::KernelDispatch));
    }

    #[test]
    fn flags_chain_maps_too() {
        let chain = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            stats: true,
            ..Default::default()
        })
        .unwrap();
        let specs = stage_specs(&chain, Path::new("o"));
        assert_eq!(specs[0].name, "kernel-stats");
        assert_eq!(specs[0].output_dir.as_deref(), Some(Path::new("o")));
    }
}
