//! [`Chain`]: the ordered stages of a run and their common life cycle.
//!
//! ```text
//! new:     compile all → configure all (decliners dropped) → init all → lock
//! deliver: batch → transform 1 → transform 2 → …   (each sees its kinds only;
//!                  analyses see the batch as the stages before them left it)
//! finish:  final flush of every buffer → fini of each plugin, once, in order
//! ```
//!
//! A stage sees only the buffer kinds in its [`KindFilter`]. For a transform,
//! records outside its filter bypass it and rejoin its output, so a kernel
//! filter never eats API calls. A transform that fails passes its input on
//! unchanged (downstream stages then see unfiltered records rather than
//! none). Analyses see the chain's batches in delivery order.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rocwasm_core::{Batch, BufferTracingKind, ContextId, DeliveryInfo, Profiler};

use crate::bindings::types as wit;
use crate::convert;
use crate::failure::{FailureLog, FailureReport};
use crate::filter::{self, KindFilter};
use crate::plugin::{Aborted, Plugin};
use crate::runtime::Runtime;
use crate::spec::{BufferSettings, StageSpec};
use crate::stage::{RunState, StageCell, StageSink};
use crate::world::World;

/// rocwasm's version as plugins see it: 10000·major + 100·minor + patch.
pub const VERSION: u32 = 100;

/// What the plugins' host imports act on.
#[derive(Clone)]
pub struct HostEnv {
    /// The engine plugins configure services on (its symbol table answers
    /// the `symbols` interface).
    pub profiler: Arc<Profiler>,
    /// The profiled runtime's version (10000·major + 100·minor + patch), 0 if unknown.
    pub runtime_version: u32,
    /// True when records come from a recorded trace.
    pub replay: bool,
}

impl HostEnv {
    pub fn new(profiler: Arc<Profiler>) -> Self {
        HostEnv {
            profiler,
            runtime_version: 0,
            replay: false,
        }
    }
}

struct Stage {
    name: String,
    world: World,
    kinds: KindFilter,
    domains: Vec<BufferTracingKind>,
    buffer: BufferSettings,
    cell: Arc<StageCell>,
    /// The context the chain created for `domains`.
    context: Option<ContextId>,
}

/// What a finished run leaves.
#[derive(Debug, Default)]
pub struct ChainOutcome {
    /// Per stage (in chain order), the tables its `fini` returned.
    pub summaries: Vec<(String, Vec<wit::SummaryTable>)>,
    /// Every failure, once each.
    pub failures: Vec<FailureReport>,
    /// Stages whose `configure` declined.
    pub declined: Vec<String>,
}

pub struct Chain {
    env: HostEnv,
    stages: Vec<Stage>,
    declined: Vec<String>,
    failures: FailureLog,
    run: Arc<RunState>,
}

impl Chain {
    /// Compiles, instantiates, configures and initialises every stage, then
    /// locks the engine's configuration.
    pub fn new(runtime: Arc<Runtime>, env: HostEnv, specs: Vec<StageSpec>) -> Result<Chain> {
        let mut names = BTreeSet::new();
        for s in &specs {
            if !names.insert(s.name.as_str()) {
                bail!("two stages are called `{}`", s.name);
            }
        }
        let failures = FailureLog::default();
        let run = Arc::new(RunState::default());
        let mut stages = Vec::new();
        for spec in specs {
            let compiled = runtime
                .compile(&spec.wasm)
                .with_context(|| format!("stage `{}`", spec.name))?;
            if let Some(expected) = spec.world {
                if expected != compiled.world {
                    bail!(
                        "stage `{}`: expected a {expected}, {} is a {}",
                        spec.name,
                        spec.wasm.display(),
                        compiled.world
                    );
                }
            }
            if !spec.domains.is_empty() && compiled.world == World::Transform {
                bail!(
                    "stage `{}`: a transform cannot trace domains; it sees the chain's batches",
                    spec.name
                );
            }
            let (name, world, kinds) = (spec.name.clone(), compiled.world, spec.kinds.clone());
            let (domains, buffer) = (spec.domains.clone(), spec.buffer);
            let plugin = Plugin::new(
                runtime.clone(),
                compiled,
                spec,
                env.clone(),
                failures.clone(),
            )?;
            let cell = StageCell::new(plugin, run.clone());
            stages.push(Stage {
                name,
                world,
                kinds,
                domains,
                buffer,
                cell,
                context: None,
            });
        }
        let mut chain = Chain {
            env,
            stages,
            declined: Vec::new(),
            failures,
            run,
        };

        // Every configure before any init; decliners leave the chain.
        let mut kept = Vec::new();
        for (priority, stage) in std::mem::take(&mut chain.stages).into_iter().enumerate() {
            let info = wit::ToolInfo {
                version: VERSION,
                runtime_version: chain.env.runtime_version,
                priority: priority as u32,
                name: stage.name.clone(),
                replay: chain.env.replay,
                domains: stage.domains.iter().map(|k| k.raw()).collect(),
            };
            if stage.cell.with(|p| p.configure(info)).map_err(aborted)? {
                kept.push(stage);
            } else {
                chain.declined.push(stage.name.clone());
            }
        }
        chain.stages = kept;
        for stage in &mut chain.stages {
            stage.context = set_up_domains(&chain.env.profiler, stage)?;
        }
        for stage in &chain.stages {
            stage.cell.with(|p| p.init()).map_err(aborted)?;
        }
        chain.env.profiler.lock_configuration();
        for stage in &chain.stages {
            if let Some(ctx) = stage.context {
                chain.env.profiler.start_context(ctx).map_err(|s| {
                    anyhow::anyhow!("stage `{}`: starting its context: {s}", stage.name)
                })?;
            }
        }
        Ok(chain)
    }

    /// The stages left after `configure`, in order.
    pub fn stage_names(&self) -> Vec<&str> {
        self.stages.iter().map(|s| s.name.as_str()).collect()
    }

    /// Delivers one batch through the chain and returns it as the last
    /// transform left it (for the host's own sinks).
    pub fn deliver(&self, info: DeliveryInfo, batch: Batch) -> Result<Batch> {
        self.check_abort()?;
        let info = convert::delivery_info_to_wit(info);
        let mut batch = convert::batch_to_wit(batch);
        for stage in &self.stages {
            match stage.world {
                World::Transform => {
                    let (seen, rest) = stage.kinds.split(batch);
                    let out = stage
                        .cell
                        .with(|p| p.transform(info, &seen))
                        .map_err(|a| self.stop(a))?;
                    batch = filter::merge(out.unwrap_or(seen), rest);
                }
                World::Analysis => {
                    let view = stage.kinds.select(&batch);
                    let seen = view.as_ref().unwrap_or(&batch);
                    let n = convert::wit_len(seen) as u64;
                    if n > 0 {
                        stage
                            .cell
                            .with(|p| p.deliver_counted(info, seen, n))
                            .map_err(|a| self.stop(a))?;
                    }
                }
            }
        }
        self.check_abort()?;
        Ok(convert::batch_from_wit(batch))
    }

    /// The failures so far.
    pub fn failures(&self) -> Vec<FailureReport> {
        self.failures.reports()
    }

    /// Final flush of every buffer (the engine is finalised), then each
    /// plugin's `fini` exactly once, in chain order.
    pub fn finish(self) -> Result<ChainOutcome> {
        self.env.profiler.finalize();
        for stage in &self.stages {
            stage.cell.drain();
        }
        let mut summaries = Vec::new();
        let mut abort = None;
        for stage in &self.stages {
            match stage.cell.with(|p| p.fini()) {
                Ok(tables) => summaries.push((stage.name.clone(), tables)),
                Err(Aborted(r)) => {
                    abort.get_or_insert(r);
                    summaries.push((stage.name.clone(), Vec::new()));
                }
            }
        }
        if let Some(r) = abort {
            return Err(aborted(Aborted(r)));
        }
        self.check_abort()?;
        Ok(ChainOutcome {
            summaries,
            failures: self.failures.reports(),
            declined: self.declined,
        })
    }

    /// Remembers an abort so every later call refuses too.
    fn stop(&self, a: Aborted) -> anyhow::Error {
        let mut slot = self.run.aborted.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| a.0.clone());
        aborted(a)
    }

    fn check_abort(&self) -> Result<()> {
        let a = self.run.aborted.lock().unwrap_or_else(|e| e.into_inner());
        match &*a {
            Some(r) => Err(aborted(Aborted(r.clone()))),
            None => Ok(()),
        }
    }
}

/// Creates the context, buffer and services a stage's `domains` ask for.
fn set_up_domains(profiler: &Profiler, stage: &Stage) -> Result<Option<ContextId>> {
    if stage.domains.is_empty() {
        return Ok(None);
    }
    let err = |s: rocwasm_core::Status| {
        anyhow::anyhow!("stage `{}`: setting up its domains: {s}", stage.name)
    };
    let ctx = profiler.create_context().map_err(err)?;
    let sink = Arc::new(StageSink(Arc::downgrade(&stage.cell)));
    let b = &stage.buffer;
    let buffer = profiler
        .create_buffer(ctx, b.size, b.watermark, b.policy, sink)
        .map_err(err)?;
    for kind in &stage.domains {
        profiler
            .configure_buffer_tracing(ctx, *kind, &[], buffer)
            .map_err(err)?;
    }
    Ok(Some(ctx))
}

fn aborted(a: Aborted) -> anyhow::Error {
    anyhow::anyhow!("run aborted: {}", a.0)
}
