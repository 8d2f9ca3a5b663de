//! The plan's stages → the runtime's [`StageSpec`]s, and what the chain
//! traces for them.

use std::collections::BTreeMap;

use rocwasm_core::BufferTracingKind;
use rocwasm_plan::{Placement, ProcessInfo, RunPlan};
use rocwasm_plugin_host::{StageSpec, World};

/// One spec per planned stage, in order, for `process`: output grants are
/// resolved under its expanded output directory, and a grant of that
/// directory itself names its files with the run's file prefix when the
/// plan has one (an explicit `-o`/`file_prefix`), as the sinks do.
pub fn stage_specs(plan: &RunPlan, process: &ProcessInfo) -> Vec<StageSpec> {
    let run_dir = plan.run_dir(process);
    let prefix = plan.file_prefix(process);
    plan.stages
        .iter()
        .map(|s| StageSpec::from_plan(s, plan.buffer, &run_dir, prefix.as_deref()))
        .collect()
}

/// `plan` with only the stages placed at `placement` (`placement` in the
/// chain file): the application runs one part of the chain, the launcher
/// the other.
pub fn placed(plan: &RunPlan, placement: Placement) -> RunPlan {
    let mut plan = plan.clone();
    plan.stages.retain(|s| s.placement == placement);
    plan
}

/// The kinds the chain will trace for its stages, with the operations of
/// each (`None`: all of them): the union of the stages' domains, as the
/// runtime's chain computes it. Transforms trace nothing; a stage that
/// declines in `configure` is still counted (it is known only later).
pub fn traced_by_chain(specs: &[StageSpec]) -> BTreeMap<BufferTracingKind, Option<Vec<u32>>> {
    let mut union: BTreeMap<BufferTracingKind, Option<Vec<u32>>> = BTreeMap::new();
    for spec in specs {
        if spec.world == Some(World::Transform) {
            continue;
        }
        for &kind in &spec.domains {
            let wanted = spec.operations.get(&kind).filter(|ops| !ops.is_empty());
            let slot = union.entry(kind).or_insert_with(|| Some(Vec::new()));
            match (slot.as_mut(), wanted) {
                (Some(have), Some(ops)) => {
                    have.extend(ops);
                    have.sort_unstable();
                    have.dedup();
                }
                _ => *slot = None,
            }
        }
    }
    union
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_plan::{
        BufferPolicy, BufferSettings, FailurePolicy, Limits, OutputGrant, OutputPlan, PathTemplate,
        StagePlan,
    };
    use std::path::PathBuf;
    use std::time::Duration;

    fn stage(name: &str) -> StagePlan {
        StagePlan {
            name: name.into(),
            wasm: PathBuf::from("/p/x.wasm"),
            source: None,
            world: Some(World::Analysis),
            kinds: None,
            domains: vec![],
            operations: BTreeMap::new(),
            config: BTreeMap::new(),
            limits: Limits {
                memory_bytes: 64 << 20,
                deadline: Duration::from_millis(500),
                callback_deadline: Duration::from_millis(20),
                output_bytes: 1 << 20,
                log_per_second: 7,
            },
            failure: FailurePolicy::Restart {
                max: 3,
                backoff: Duration::from_millis(100),
            },
            output: OutputGrant::Subdirectory("bandwidth".into()),
            services: Default::default(),
            placement: Default::default(),
        }
    }

    fn plan(stages: Vec<StagePlan>) -> RunPlan {
        RunPlan {
            version: RunPlan::VERSION,
            chain: None,
            output: OutputPlan {
                directory: PathTemplate::parse("/out/%pid%").unwrap(),
                file_prefix: None,
                formats: vec![],
                stats: false,
                write: Default::default(),
                kinds: vec![],
                summary: false,
                api_args: false,
                parquet_root: None,
            },
            stages,
            buffer: BufferSettings {
                size: 4 << 20,
                watermark: 3 << 20,
                policy: BufferPolicy::Discard,
            },
            plugin_cache: None,
            fork: Default::default(),
            api_log: false,
            command: vec![],
            kernels: Default::default(),
            collection: Default::default(),
            summary: Default::default(),
            journal: None,
        }
    }

    /// Process `pid` on node `n`.
    fn process(pid: u32) -> ProcessInfo {
        ProcessInfo {
            hostname: "n".into(),
            pid,
            ..ProcessInfo::default()
        }
    }

    /// The plan as the tool reads it: through its file format.
    fn read_back(plan: &RunPlan) -> RunPlan {
        RunPlan::from_json(&plan.to_json()).unwrap()
    }

    #[test]
    fn every_field_reaches_the_spec() {
        use BufferTracingKind as K;
        let mut s = stage("bw");
        s.domains = vec![K::MemoryCopy, K::KernelDispatch];
        s.kinds = Some(vec![K::MemoryCopy]);
        let h2d =
            rocwasm_core::operation_by_name(K::MemoryCopy, "MEMORY_COPY_HOST_TO_DEVICE").unwrap();
        let d2h =
            rocwasm_core::operation_by_name(K::MemoryCopy, "MEMORY_COPY_DEVICE_TO_HOST").unwrap();
        s.operations.insert(K::MemoryCopy, vec![h2d, d2h]);
        s.config.insert("a.b".into(), "1".into());
        let plan = read_back(&plan(vec![s]));
        let spec = &stage_specs(&plan, &process(7))[0];
        assert_eq!(spec.name, "bw");
        assert_eq!(spec.wasm, PathBuf::from("/p/x.wasm"));
        assert_eq!(spec.world, Some(World::Analysis));
        assert!(spec.kinds.accepts(K::MemoryCopy));
        assert!(!spec.kinds.accepts(K::KernelDispatch));
        assert_eq!(spec.domains, vec![K::MemoryCopy, K::KernelDispatch]);
        assert!(spec.operations[&K::MemoryCopy].contains(&h2d));
        assert_eq!(spec.operations[&K::MemoryCopy].len(), 2);
        assert_eq!(spec.config["a.b"], "1");
        assert_eq!(spec.limits.memory_bytes, 64 << 20);
        assert_eq!(spec.limits.deadline, Duration::from_millis(500));
        assert_eq!(spec.limits.callback_deadline, Duration::from_millis(20));
        assert_eq!(spec.limits.output_bytes, 1 << 20);
        assert_eq!(spec.limits.log_per_second, 7);
        assert_eq!(
            spec.failure,
            FailurePolicy::Restart {
                max: 3,
                backoff: Duration::from_millis(100)
            }
        );
        assert_eq!(spec.output_dir, Some(PathBuf::from("/out/7/bandwidth")));
        assert_eq!(spec.file_prefix, None);
        assert_eq!(spec.buffer.size, 4 << 20);
        assert_eq!(spec.buffer.watermark, 3 << 20);
        assert_eq!(spec.buffer.policy, BufferPolicy::Discard);
    }

    #[test]
    fn grants_and_worlds() {
        let mut s = stage("t");
        s.output = OutputGrant::RunDirectory;
        s.world = Some(World::Transform);
        let spec = &stage_specs(&read_back(&plan(vec![s.clone()])), &process(3))[0];
        assert_eq!(spec.output_dir, Some(PathBuf::from("/out/3")));
        assert_eq!(spec.world, Some(World::Transform));
        s.output = OutputGrant::None;
        s.world = None;
        let spec = &stage_specs(&read_back(&plan(vec![s])), &process(3))[0];
        assert_eq!(spec.output_dir, None);
        assert_eq!(spec.world, None);
        assert!(spec.kinds.is_all());
    }

    #[test]
    fn an_explicit_file_prefix_names_the_files_of_the_run_directory_only() {
        let mut top = stage("top");
        top.output = OutputGrant::RunDirectory;
        let sub = stage("sub");
        let mut p = plan(vec![top, sub]);
        // No prefix (`-o` not given): the plugins' names as they are.
        let specs = stage_specs(&read_back(&p), &process(9));
        assert_eq!(specs[0].file_prefix, None);
        // `-o run_%pid%`: expanded per process, for the run directory's
        // grant; a subdirectory is the plugin's own.
        p.output.file_prefix = Some(PathTemplate::parse("run_%pid%").unwrap());
        let specs = stage_specs(&read_back(&p), &process(9));
        assert_eq!(specs[0].output_dir, Some(PathBuf::from("/out/9")));
        assert_eq!(specs[0].file_prefix.as_deref(), Some("run_9"));
        assert_eq!(specs[1].output_dir, Some(PathBuf::from("/out/9/bandwidth")));
        assert_eq!(specs[1].file_prefix, None);
    }

    #[test]
    fn unknown_names_are_errors_naming_them() {
        let json = plan(vec![stage("odd")]).to_json();
        let bad = json.replace("\"domains\": []", "\"domains\": [\"KERNEL_DISPATCHES\"]");
        let e = RunPlan::from_json(&bad).unwrap_err().to_string();
        assert!(e.contains("KERNEL_DISPATCHES"), "{e}");
        let bad = json.replace("\"world\": \"analysis\"", "\"world\": \"filter\"");
        assert!(RunPlan::from_json(&bad).is_err());
    }

    #[test]
    fn the_chain_traces_the_union_of_domains() {
        use BufferTracingKind as K;
        let a = StageSpec::new("a", "a.wasm")
            .with_domains([K::MemoryCopy, K::KernelDispatch])
            .with_operations(K::MemoryCopy, [2]);
        let b = StageSpec::new("b", "b.wasm")
            .with_domains([K::MemoryCopy])
            .with_operations(K::MemoryCopy, [3, 2]);
        let mut t = StageSpec::new("t", "t.wasm").with_domains([K::HipRuntimeApi]);
        t.world = Some(World::Transform);
        let u = traced_by_chain(&[a.clone(), b]);
        assert_eq!(u[&K::MemoryCopy], Some(vec![2, 3]));
        assert_eq!(u[&K::KernelDispatch], None);
        let all = StageSpec::new("c", "c.wasm").with_domains([K::MemoryCopy]);
        assert_eq!(traced_by_chain(&[a, all])[&K::MemoryCopy], None);
        assert!(traced_by_chain(&[t]).is_empty());
    }
}
