//! The run file's [`RunStage`]s → the runtime's [`StageSpec`]s.
//!
//! The launcher wrote kinds and operations by name; here they become this
//! build's numbers. An unknown name is an error naming the stage, never a
//! silently dropped filter: a filter that vanished would hand a stage
//! records it did not ask for.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rocwasm_core::{BufferPolicy, BufferTracingKind};
use rocwasm_runtime::{BufferSettings, FailurePolicy, KindFilter, Limits, StageSpec, World};

use crate::run_config::{RunFailure, RunStage};

/// One spec per stage, in order; output grants are resolved under `run_dir`.
pub fn stage_specs(stages: &[RunStage], run_dir: &Path) -> Result<Vec<StageSpec>, String> {
    stages.iter().map(|s| stage_spec(s, run_dir)).collect()
}

fn stage_spec(s: &RunStage, run_dir: &Path) -> Result<StageSpec, String> {
    let err = |what: String| format!("stage `{}`: {what}", s.name);
    let kind = |name: &String| {
        BufferTracingKind::from_name(name).ok_or_else(|| err(format!("unknown kind {name:?}")))
    };
    let kinds = match &s.kinds {
        None => KindFilter::all(),
        Some(names) => KindFilter::only(names.iter().map(kind).collect::<Result<Vec<_>, _>>()?),
    };
    let domains = s.domains.iter().map(kind).collect::<Result<Vec<_>, _>>()?;
    let mut operations = BTreeMap::new();
    for (k, ops) in &s.operations {
        let k = kind(k)?;
        let ops = ops
            .iter()
            .map(|op| {
                rocwasm_core::operation_by_name(k, op)
                    .ok_or_else(|| err(format!("{} has no operation {op:?}", k.name())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        operations.insert(k, ops);
    }
    let world = match s.world.as_deref() {
        None => None,
        Some("analysis") => Some(World::Analysis),
        Some("transform") => Some(World::Transform),
        Some(other) => return Err(err(format!("unknown world {other:?}"))),
    };
    let failure = match s.failure {
        RunFailure::Skip => FailurePolicy::Skip,
        RunFailure::Disable => FailurePolicy::Disable,
        RunFailure::Restart { max, backoff_ns } => FailurePolicy::Restart {
            max,
            backoff: Duration::from_nanos(backoff_ns),
        },
        RunFailure::Abort => FailurePolicy::Abort,
    };
    let l = &s.limits;
    let mut spec = StageSpec::new(&s.name, &s.wasm)
        .with_kinds(kinds)
        .with_failure(failure)
        .with_domains(domains)
        .with_limits(Limits {
            memory_bytes: usize::try_from(l.memory_bytes).unwrap_or(usize::MAX),
            deadline: Duration::from_nanos(l.deadline_ns),
            callback_deadline: Duration::from_nanos(l.callback_deadline_ns),
            output_bytes: l.output_bytes,
            log_per_second: l.log_per_second,
        })
        .with_buffer(BufferSettings {
            size: s.buffer.size,
            watermark: s.buffer.watermark,
            policy: if s.buffer.lossless {
                BufferPolicy::Lossless
            } else {
                BufferPolicy::Discard
            },
        });
    for (k, ops) in operations {
        spec = spec.with_operations(k, ops);
    }
    spec.config = s.config.clone();
    spec.world = world;
    spec.output_dir = s.output.as_ref().map(|rel| match rel.as_str() {
        "" => run_dir.to_path_buf(),
        sub => run_dir.join(sub),
    });
    Ok(spec)
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
    use crate::run_config::{RunBuffer, RunLimits};
    use std::path::PathBuf;

    fn stage(name: &str) -> RunStage {
        RunStage {
            name: name.into(),
            wasm: PathBuf::from("/p/x.wasm"),
            world: Some("analysis".into()),
            kinds: None,
            domains: vec![],
            operations: BTreeMap::new(),
            config: BTreeMap::new(),
            limits: RunLimits {
                memory_bytes: 64 << 20,
                deadline_ns: 500_000_000,
                callback_deadline_ns: 20_000_000,
                output_bytes: 1 << 20,
                log_per_second: 7,
            },
            failure: RunFailure::Restart {
                max: 3,
                backoff_ns: 100_000_000,
            },
            output: Some("bandwidth".into()),
            buffer: RunBuffer {
                size: 4 << 20,
                watermark: 3 << 20,
                lossless: false,
            },
        }
    }

    #[test]
    fn every_field_reaches_the_spec() {
        let mut s = stage("bw");
        s.domains = vec!["MEMORY_COPY".into(), "kernel_dispatch".into()];
        s.kinds = Some(vec!["MEMORY_COPY".into()]);
        s.operations.insert(
            "MEMORY_COPY".into(),
            vec![
                "MEMORY_COPY_HOST_TO_DEVICE".into(),
                "MEMORY_COPY_DEVICE_TO_HOST".into(),
            ],
        );
        s.config.insert("a.b".into(), "1".into());
        let spec = stage_spec(&s, Path::new("/out/7")).unwrap();
        assert_eq!(spec.name, "bw");
        assert_eq!(spec.wasm, PathBuf::from("/p/x.wasm"));
        assert_eq!(spec.world, Some(World::Analysis));
        assert!(spec.kinds.accepts(BufferTracingKind::MemoryCopy));
        assert!(!spec.kinds.accepts(BufferTracingKind::KernelDispatch));
        assert_eq!(
            spec.domains,
            vec![
                BufferTracingKind::MemoryCopy,
                BufferTracingKind::KernelDispatch
            ]
        );
        let h2d = rocwasm_core::operation_by_name(
            BufferTracingKind::MemoryCopy,
            "MEMORY_COPY_HOST_TO_DEVICE",
        )
        .unwrap();
        assert!(spec.operations[&BufferTracingKind::MemoryCopy].contains(&h2d));
        assert_eq!(spec.operations[&BufferTracingKind::MemoryCopy].len(), 2);
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
        assert_eq!(spec.buffer.size, 4 << 20);
        assert_eq!(spec.buffer.watermark, 3 << 20);
        assert_eq!(spec.buffer.policy, BufferPolicy::Discard);
    }

    #[test]
    fn grants_and_worlds() {
        let mut s = stage("t");
        s.output = Some(String::new());
        s.world = Some("transform".into());
        let spec = stage_spec(&s, Path::new("/out")).unwrap();
        assert_eq!(spec.output_dir, Some(PathBuf::from("/out")));
        assert_eq!(spec.world, Some(World::Transform));
        s.output = None;
        s.world = None;
        let spec = stage_spec(&s, Path::new("/out")).unwrap();
        assert_eq!(spec.output_dir, None);
        assert_eq!(spec.world, None);
        assert!(spec.kinds.is_all());
    }

    #[test]
    fn unknown_names_are_errors_naming_the_stage() {
        let mut s = stage("odd");
        s.domains = vec!["KERNEL_DISPATCHES".into()];
        let e = stage_spec(&s, Path::new("/")).unwrap_err();
        assert!(
            e.contains("stage `odd`") && e.contains("KERNEL_DISPATCHES"),
            "{e}"
        );
        let mut s = stage("odd");
        s.operations
            .insert("MEMORY_COPY".into(), vec!["SIDEWAYS".into()]);
        let e = stage_spec(&s, Path::new("/")).unwrap_err();
        assert!(e.contains("SIDEWAYS"), "{e}");
        let mut s = stage("odd");
        s.world = Some("filter".into());
        assert!(stage_spec(&s, Path::new("/")).is_err());
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
