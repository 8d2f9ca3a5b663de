//! A validated [`Chain`] → the [`RunPlan`] a run executes.
//!
//! The one place where the chain file's model becomes the plan: `run`
//! writes it for the profiled process, `replay` and `demo` run it directly.

use std::path::{Path, PathBuf};

use rocwasm_plan::{OutputPlan, PathTemplate, RunPlan, StagePlan};

use crate::model::{Chain, World};

/// What the plan needs besides the chain.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Write the host's `*_stats.csv` (`--stats`).
    pub stats: bool,
    /// The compiled-component cache when the chain names none.
    pub default_plugin_cache: Option<PathBuf>,
    /// Log every API call with its arguments (`ROCWASM_API_LOG`).
    pub api_log: bool,
    /// The profiled command, for the outputs' metadata.
    pub command: Vec<String>,
}

impl Chain {
    /// The plan of this chain. Relative paths (the output directory, plugin
    /// files) are made absolute against the current directory, so the plan
    /// means the same in a process that runs elsewhere.
    pub fn to_plan(&self, options: &PlanOptions) -> RunPlan {
        // A transform's `domains` only say which kinds it filters: the
        // sinks record `trace` and what the analyses trace.
        let mut kinds = self.output.trace.clone();
        let analyses = self.stages.iter().filter(|s| s.world == World::Analysis);
        for kind in analyses.flat_map(|s| &s.domains) {
            if !kinds.contains(kind) {
                kinds.push(*kind);
            }
        }
        let mut formats = self.output.formats.clone();
        if formats.is_empty() && !kinds.is_empty() {
            formats.push(crate::model::OutputFormat::Csv);
        }
        RunPlan {
            version: RunPlan::VERSION,
            chain: self.file.clone(),
            output: OutputPlan {
                directory: absolute_template(&self.output.directory),
                // `-o` is merged into the chain's `file_prefix`; with neither,
                // none (see `Output::file_prefix`). An empty one is none.
                file_prefix: self
                    .output
                    .file_prefix
                    .clone()
                    .filter(|p| !p.as_str().is_empty()),
                formats,
                stats: options.stats,
                write: self.output.write,
                kinds,
                summary: self.output.summary,
                api_args: self.output.api_args,
                // The directory's part every process shares, made absolute
                // with it.
                parquet_root: (self.output.parquet_layout == crate::model::ParquetLayout::Hive)
                    .then(|| absolute_template(&self.output.directory).shared_prefix()),
            },
            stages: self.stages.iter().map(stage_plan).collect(),
            buffer: self.settings.buffer,
            plugin_cache: self
                .settings
                .plugin_cache
                .clone()
                .or_else(|| options.default_plugin_cache.clone()),
            fork: Default::default(),
            api_log: options.api_log,
            command: options.command.clone(),
            kernels: self.kernels.clone(),
            collection: self.collection.clone(),
            summary: self.summary.clone(),
            journal: None,
        }
    }
}

fn stage_plan(s: &crate::model::Stage) -> StagePlan {
    StagePlan {
        name: s.name.clone(),
        wasm: std::path::absolute(&s.plugin.path).unwrap_or_else(|_| s.plugin.path.clone()),
        source: s.plugin.shipped.then(|| s.plugin.spec.clone()),
        world: Some(s.world),
        // An empty `domains` accepts every kind.
        kinds: (!s.domains.is_empty()).then(|| s.domains.clone()),
        // A transform's `domains` only say which kinds it filters (its kind
        // filter above); it sees the chain's batches and traces nothing.
        domains: match s.world {
            World::Analysis => s.domains.clone(),
            World::Transform => Vec::new(),
        },
        // What the stage sees of its kinds; for an analysis also what the
        // chain traces (the union over its stages).
        operations: s
            .operations
            .iter()
            .map(|(kind, ops)| (*kind, ops.iter().map(|o| o.id).collect()))
            .collect(),
        config: s.config.clone(),
        limits: s.limits,
        failure: s.on_failure,
        output: s.output.clone(),
        services: s.services,
        placement: s.placement,
    }
}

/// A relative output directory is relative to where the run was started.
fn absolute_template(template: &PathTemplate) -> PathTemplate {
    let text = template.as_str();
    if Path::new(text).is_absolute() {
        return template.clone();
    }
    match std::env::current_dir() {
        Ok(cwd) => PathTemplate::parse(&format!("{}/{text}", cwd.display()))
            // The working directory has no `%` keys of its own to misread
            // unless it contains a `%`; then the template stays relative.
            .unwrap_or_else(|_| template.clone()),
        Err(_) => template.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rocwasm_plan::{FailurePolicy, OutputGrant};

    use super::*;
    use crate::LoadOptions;

    #[test]
    fn every_stage_limit_reaches_the_plan() {
        let text = r#"
version = 1
[settings.limits]
output = "2MiB"
[[stage]]
name = "s"
plugin = "/p/s.wasm"
limits = { memory = "1MiB", deadline = "20ms", callback_deadline = "3ms" }
"#;
        let chain = Chain::parse(
            text,
            Path::new("chain.toml"),
            &LoadOptions {
                plugin_path: vec![],
                check_plugins: false,
                fetcher: None,
            },
        )
        .unwrap();
        let limits = chain.to_plan(&PlanOptions::default()).stages[0].limits;
        assert_eq!(limits.memory_bytes, 1 << 20);
        assert_eq!(limits.deadline, Duration::from_millis(20));
        assert_eq!(limits.callback_deadline, Duration::from_millis(3));
        assert_eq!(limits.output_bytes, 2 << 20);
    }

    #[test]
    fn the_default_chain_becomes_a_plan() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../examples/chains/default.toml");
        let chain = Chain::load(
            &path,
            &LoadOptions {
                plugin_path: vec![],
                check_plugins: false,
                fetcher: None,
            },
        )
        .unwrap();
        let plan = chain.to_plan(&PlanOptions::default());
        assert_eq!(plan.stages.len(), 4);
        assert_eq!(plan.stages[1].limits.memory_bytes, 64 << 20);
        assert_eq!(plan.stages[1].limits.deadline, Duration::from_millis(500));
        assert_eq!(plan.stages[0].output, OutputGrant::RunDirectory);
        assert_eq!(
            plan.stages[2].output,
            OutputGrant::Subdirectory("bandwidth".into())
        );
        assert_eq!(
            plan.stages[2].failure,
            FailurePolicy::Restart {
                max: 3,
                backoff: Duration::from_millis(100)
            }
        );
        assert_eq!(
            plan.stages[0].kinds.as_deref(),
            Some(&[rocwasm_core::BufferTracingKind::KernelDispatch][..])
        );
        assert_eq!(plan.stages[0].world, Some(World::Analysis));
        assert_eq!(plan.stages[1].domains.len(), 2);
        assert_eq!(plan.buffer.size, 4 << 20);
        assert!(plan.output.directory.as_str().starts_with('/'));
        // And it survives the trip through the plan file.
        assert_eq!(RunPlan::from_json(&plan.to_json()).unwrap(), plan);
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
                fetcher: None,
            },
        )
        .unwrap();
        let plan = RunPlan::from_json(&chain.to_plan(&PlanOptions::default()).to_json()).unwrap();
        let hip = rocwasm_core::BufferTracingKind::HipRuntimeApi;
        let want: Vec<u32> = ["hipLaunchKernel", "hipMemcpy"]
            .iter()
            .map(|n| rocwasm_core::operation_by_name(hip, n).unwrap())
            .collect();
        let mut got = plan.stages[0].operations[&hip].clone();
        got.sort_unstable();
        let mut want_sorted = want.clone();
        want_sorted.sort_unstable();
        assert_eq!(got, want_sorted);
        assert!(!plan.stages[0]
            .operations
            .contains_key(&rocwasm_core::BufferTracingKind::KernelDispatch));
    }

    #[test]
    fn flags_chain_maps_too() {
        let chain = Chain::from_flags(&crate::TraceFlags {
            kernel_trace: true,
            stats: true,
            ..Default::default()
        })
        .unwrap();
        let plan = chain.to_plan(&PlanOptions::default());
        assert_eq!(plan.stages[0].name, "kernel-stats");
        assert_eq!(
            plan.stages[0].output.directory(Path::new("o")).as_deref(),
            Some(Path::new("o"))
        );
    }

    /// rocprofv3's default prefix names no file; `-o` does, `%pid%` too.
    #[test]
    fn only_an_explicit_output_file_prefixes_the_files() {
        let with = |output_file: Option<&str>| {
            let chain = Chain::from_flags(&crate::TraceFlags {
                kernel_trace: true,
                output_file: output_file.map(str::to_string),
                ..Default::default()
            })
            .unwrap();
            chain
                .to_plan(&PlanOptions::default())
                .output
                .file_prefix
                .map(|p| p.as_str().to_string())
        };
        assert_eq!(with(None), None);
        assert_eq!(with(Some("%pid%")).as_deref(), Some("%pid%"));
        assert_eq!(with(Some("run")).as_deref(), Some("run"));
    }
}
