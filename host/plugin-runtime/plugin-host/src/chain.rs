//! [`Chain`]: the ordered stages of a run, their common life cycle, and the
//! chain's one shared delivery.
//!
//! ```text
//! new:     chain context → compile all → configure all (decliners dropped)
//!          → on the chain context: one buffer (own callback thread) tracing
//!            the union of the stages' domains and operations
//!          → init all → lock → start the chain context
//! deliver: batch → stage 1 → stage 2 → … → output
//!          (each stage sees its kinds and operations only; a transform's
//!           output is what the stages after it see)
//! finish:  final flush of every buffer → fini of each plugin, once, in order
//! ```
//!
//! # One delivery per chain
//!
//! A chain file's `domains` are a shortcut: "trace these kinds for this
//! stage". The chain does that once for all its stages, as one SDK tool
//! would: one context (the *chain context*), one buffer, buffer tracing of
//! the union of the stages' domains (all operations of a kind as soon as one
//! stage wants them all, else the union of their operation lists). Each batch
//! of that buffer flows through the stages in order, on the buffer's own
//! callback thread, and reaches each stage filtered to its own domains and
//! operations ([`StageView`]); then the optional chain output
//! ([`Chain::set_output`]) gets the batch as the last stage left it. Stages
//! that name no domains receive nothing from this buffer (transforms, which
//! cannot trace, see all of it through their kind filter).
//!
//! A plugin that sets up contexts and buffers of its own in `init` gets its
//! own buffers, delivered to it alone, exactly like an SDK tool. It may also
//! configure callback tracing and external-correlation requests on the chain
//! context (`tool-info.chain-context`), so that its answers land on the
//! records the chain buffers: that is how `correlation-tagger` tags the
//! dispatches every other stage sees.
//!
//! Batches handed to [`Chain::deliver`] (replay, or a host that buffers
//! elsewhere) take the same path; there a stage without domains sees what its
//! kind filter accepts, since nothing was traced for anyone.
//!
//! A transform that fails passes its input on unchanged (downstream stages
//! then see unfiltered records rather than none); records outside its filter
//! bypass it and rejoin its output, so a kernel filter never eats API calls.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, Weak};

use anyhow::{anyhow, bail, Result};
use rocwasm_core::{
    Batch, BufferId, BufferSink, BufferTracingKind, ContextId, DeliveryInfo, Profiler, Status,
};

use crate::bindings::types as wit;
use crate::convert;
use crate::engine::PluginEngine;
use crate::env::{HostEnv, VERSION};
use crate::failure::{Aborted, FailureLog, FailureReport};
use crate::filter::{self, KindFilter, OpFilter, StageView};
use crate::plugin::{Pace, PartEnd, Partial, Plugin, StageMetrics};
use crate::spec::{BufferSettings, StageSpec};
use crate::stage::{RunState, StageCell};
use crate::world::World;

/// Receives every batch of the chain's buffer after the last stage, with
/// its delivery info, on the buffer's callback thread (host sinks: files,
/// tables). Batches given to [`Chain::deliver`] are returned instead.
pub type ChainOutput = Box<dyn FnMut(&DeliveryInfo, &Batch) + Send>;

struct Stage {
    name: String,
    world: World,
    /// What the stage sees of batches handed to [`Chain::deliver`].
    view: StageView,
    /// What it sees of the chain buffer's batches; `None` = nothing.
    traced: Option<StageView>,
    domains: Vec<BufferTracingKind>,
    operations: BTreeMap<BufferTracingKind, Vec<u32>>,
    buffer: BufferSettings,
    cell: Arc<StageCell>,
}

impl Stage {
    fn new(spec: &StageSpec, world: World, cell: Arc<StageCell>) -> Stage {
        let ops = OpFilter::new(&spec.operations);
        let (view, traced) = match (world, spec.domains.is_empty()) {
            // A transform filters whatever the chain carries.
            (World::Transform, _) => {
                let v = StageView::new(spec.kinds.clone(), ops);
                (v.clone(), Some(v))
            }
            // An analysis that asked for nothing traced sees replayed or
            // host-delivered batches only.
            (World::Analysis, true) => (StageView::new(spec.kinds.clone(), ops), None),
            (World::Analysis, false) => {
                let kinds = spec
                    .kinds
                    .intersect(&KindFilter::only(spec.domains.iter().copied()));
                let v = StageView::new(kinds, ops);
                (v.clone(), Some(v))
            }
        };
        Stage {
            name: spec.name.clone(),
            world,
            view,
            traced,
            domains: spec.domains.clone(),
            operations: spec.operations.clone(),
            buffer: spec.buffer,
            cell,
        }
    }
}

/// Where a batch came from, which decides each stage's view of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Caller,
    ChainBuffer,
}

/// The stages after `configure`, shared with the chain buffer's sink.
struct Pipeline {
    stages: Vec<Stage>,
    run: Arc<RunState>,
    output: Mutex<Option<ChainOutput>>,
}

impl Pipeline {
    /// Runs one batch through the stages in order; returns it as the last
    /// transform left it.
    fn run(&self, info: wit::DeliveryInfo, mut batch: Batch, from: Source) -> Result<Batch> {
        self.check_abort()?;
        let pace = match from {
            Source::Caller => Pace::Caller,
            Source::ChainBuffer => Pace::Live,
        };
        for stage in &self.stages {
            let view = match from {
                Source::Caller => &stage.view,
                Source::ChainBuffer => match &stage.traced {
                    Some(v) => v,
                    None => continue,
                },
            };
            match stage.world {
                World::Transform => {
                    let (seen, rest) = view.split(batch);
                    let out = if seen.is_empty() {
                        None
                    } else {
                        stage
                            .cell
                            .with(|p| p.transform(&info, &seen, pace))
                            .map_err(|a| self.stop(a))?
                    };
                    batch = filter::merge(out.unwrap_or(seen), rest);
                }
                World::Analysis => {
                    let selected = view.select(&batch);
                    let seen = selected.as_ref().unwrap_or(&batch);
                    let n = seen.len() as u64;
                    if n > 0 {
                        stage
                            .cell
                            .with(|p| p.deliver_counted(&info, seen, n, pace))
                            .map_err(|a| self.stop(a))?;
                    }
                }
            }
        }
        self.check_abort()?;
        Ok(batch)
    }

    /// Hands a final batch to the chain output, if one is set.
    fn emit(&self, info: &DeliveryInfo, batch: Batch) {
        let mut output = self.output.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = output.as_mut() {
            f(info, &batch);
        }
    }

    /// Remembers an abort so every later call refuses too.
    fn stop(&self, a: Aborted) -> anyhow::Error {
        let mut slot = self.run.aborted.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| (*a.0).clone());
        aborted(a)
    }

    fn check_abort(&self) -> Result<()> {
        let a = self.run.aborted.lock().unwrap_or_else(|e| e.into_inner());
        match &*a {
            Some(r) => Err(aborted(Aborted(Box::new(r.clone())))),
            None => Ok(()),
        }
    }
}

/// The engine's handle on the chain buffer. Weak, so the engine (which may
/// outlive the chain) does not keep the plugins alive.
struct ChainSink(Weak<Pipeline>);

impl BufferSink for ChainSink {
    fn deliver(&self, info: DeliveryInfo, batch: Batch) {
        let Some(pipeline) = self.0.upgrade() else {
            return;
        };
        let winfo = convert::delivery_info_to_wit(info, &pipeline.run.processes);
        // An abort is remembered in the run state; the chain's next call
        // (at the latest `finish`) reports it.
        if let Ok(out) = pipeline.run(winfo, batch, Source::ChainBuffer) {
            pipeline.emit(&info, out);
        }
    }
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
    /// Per stage (in chain order), what its instance used.
    pub metrics: Vec<(String, StageMetrics)>,
}

/// A run's plugins, ready for batches: the stages that stayed after
/// `configure`, in order, with the chain's shared context and buffer (see
/// the module docs). Made by [`Chain::new`], fed by [`Chain::deliver`] and
/// the chain buffer, ended by [`Chain::finish`].
pub struct Chain {
    env: HostEnv,
    pipeline: Arc<Pipeline>,
    declined: Vec<String>,
    failures: FailureLog,
    context: Option<ContextId>,
    buffer: Option<BufferId>,
    /// The chain's buffer counts the run's counters.
    counts: bool,
}

impl Chain {
    /// Compiles, instantiates, configures and initialises every stage, sets
    /// up the chain's shared context and buffer, then locks the engine's
    /// configuration and starts tracing.
    pub fn new(runtime: Arc<PluginEngine>, env: HostEnv, specs: Vec<StageSpec>) -> Result<Chain> {
        Self::build(runtime, env, specs, None, Vec::new(), Vec::new())
    }

    /// As [`Chain::new`], with the chain output in place before tracing
    /// starts, so that it receives every batch of the chain's buffer.
    pub fn with_output(
        runtime: Arc<PluginEngine>,
        env: HostEnv,
        specs: Vec<StageSpec>,
        output: ChainOutput,
    ) -> Result<Chain> {
        Self::build(runtime, env, specs, Some(output), Vec::new(), Vec::new())
    }

    /// As [`Chain::with_output`], and the chain's buffer also traces every
    /// operation of `output_kinds` for the output: kinds no stage names in
    /// its domains but that must reach the output through the chain, so
    /// that its transforms filter them (a kernel filter in front of the
    /// host's `kernel_trace.csv`). Stages see them as their kind filters
    /// and domains allow, as any batch of the chain.
    ///
    /// `counters` (a run's `--pmc`): the chain's buffer counts them for
    /// every dispatch too, so its stages see the counter samples and the
    /// output gets them from the chain; when the chain has no buffer (no
    /// stage names domains) nothing is counted here, and [`Chain::counts`]
    /// says so.
    pub fn with_output_tracing(
        runtime: Arc<PluginEngine>,
        env: HostEnv,
        specs: Vec<StageSpec>,
        output: ChainOutput,
        output_kinds: Vec<BufferTracingKind>,
        counters: Vec<String>,
    ) -> Result<Chain> {
        let mut chain = Self::build(runtime, env, specs, Some(output), output_kinds, counters)?;
        chain.counts = chain.buffer.is_some();
        Ok(chain)
    }

    /// True when the chain's buffer counts the run's counters (see
    /// [`Chain::with_output_tracing`]).
    pub fn counts(&self) -> bool {
        self.counts
    }

    fn build(
        runtime: Arc<PluginEngine>,
        env: HostEnv,
        specs: Vec<StageSpec>,
        output: Option<ChainOutput>,
        output_kinds: Vec<BufferTracingKind>,
        counters: Vec<String>,
    ) -> Result<Chain> {
        let mut names = BTreeSet::new();
        for s in &specs {
            if !names.insert(s.name.as_str()) {
                bail!("two stages are called `{}`", s.name);
            }
        }
        // The chain context exists before `configure` so that every plugin
        // learns its id. Without domains it is only an offer.
        let context = match env.profiler.create_context() {
            Ok(c) => Some(c),
            Err(s) if !output_kinds.is_empty() || specs.iter().any(|s| !s.domains.is_empty()) => {
                bail!("creating the chain's context: {s}")
            }
            Err(_) => None,
        };
        let failures = FailureLog::default();
        let run = Arc::new(RunState {
            aborted: Mutex::default(),
            chain_context: context,
            processes: env.processes.clone(),
        });
        let mut stages = Vec::new();
        for spec in specs {
            let compiled = runtime.compile_stage(&spec.name, &spec.wasm, spec.world)?;
            if !spec.domains.is_empty() && compiled.world == World::Transform {
                bail!(
                    "stage `{}`: a transform cannot trace domains; it sees the chain's batches",
                    spec.name
                );
            }
            let world = compiled.world;
            let plugin = Plugin::new(
                runtime.clone(),
                compiled,
                spec.clone(),
                env.clone(),
                failures.clone(),
            )?;
            let cell = StageCell::new(plugin, run.clone());
            stages.push(Stage::new(&spec, world, cell));
        }

        // Every configure before any init; decliners leave the chain.
        let mut kept = Vec::new();
        let mut declined = Vec::new();
        for (priority, stage) in stages.into_iter().enumerate() {
            let info = wit::ToolInfo {
                version: VERSION,
                runtime_version: env.runtime_version,
                priority: priority as u32,
                name: stage.name.clone(),
                replay: env.replay,
                domains: stage.domains.iter().map(|k| k.raw()).collect(),
                chain_context: context.map(|c| c.0),
            };
            if stage.cell.with(|p| p.configure(info)).map_err(aborted)? {
                kept.push(stage);
            } else {
                declined.push(stage.name.clone());
            }
        }
        let pipeline = Arc::new(Pipeline {
            stages: kept,
            run,
            output: Mutex::new(output),
        });
        let buffer = match context {
            Some(ctx) => trace_domains(
                &env.profiler,
                ctx,
                &pipeline,
                &output_kinds,
                env.durable_memory.as_deref(),
                !counters.is_empty(),
            )?,
            None => None,
        };
        if let (Some(ctx), Some(buffer), false) = (context, buffer, counters.is_empty()) {
            env.profiler
                .configure_dispatch_counting(ctx, Some(buffer))
                .and_then(|()| env.profiler.set_dispatch_counters(ctx, counters))
                .map_err(|s| anyhow::anyhow!("counting on the chain's buffer: {s}"))?;
        }
        for stage in &pipeline.stages {
            stage.cell.with(|p| p.init()).map_err(aborted)?;
        }
        env.profiler.lock_configuration();
        if let Some(ctx) = context {
            // Without domains and without any plugin's services on it, the
            // context has nothing to do and the engine refuses to start it.
            match env.profiler.start_context(ctx) {
                Ok(()) | Err(Status::ContextInvalid) => {}
                Err(s) => bail!("starting the chain's context: {s}"),
            }
        }
        Ok(Chain {
            env,
            pipeline,
            declined,
            failures,
            context,
            buffer,
            counts: false,
        })
    }

    /// The stages left after `configure`, in order.
    pub fn stage_names(&self) -> Vec<&str> {
        self.pipeline
            .stages
            .iter()
            .map(|s| s.name.as_str())
            .collect()
    }

    /// The chain's shared context (`tool-info.chain-context`), if any. Hosts
    /// push external correlation ids on it; its buffer carries the stages'
    /// domains.
    pub fn context(&self) -> Option<ContextId> {
        self.context
    }

    /// The chain's buffer, when some stage names domains. Flushing it runs
    /// what it holds through the stages and into the output.
    pub fn buffer(&self) -> Option<BufferId> {
        self.buffer
    }

    /// Sets (or replaces) the chain output: it receives every later batch
    /// of the chain's buffer after the last stage. Batches delivered before
    /// it is set are not kept; use [`Chain::with_output`] to miss none.
    pub fn set_output(&self, output: ChainOutput) {
        *self
            .pipeline
            .output
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(output);
    }

    /// Delivers one batch through the chain and returns it as the last
    /// transform left it (for the host's own sinks; the chain output is not
    /// called).
    ///
    /// A stage waiting out a restart backoff makes this call wait for it, so
    /// the fresh instance takes the batch: a replay loses only the batch a
    /// plugin failed on (records traced live during a backoff are missed).
    pub fn deliver(&self, info: DeliveryInfo, batch: Batch) -> Result<Batch> {
        let info = convert::delivery_info_to_wit(info, &self.pipeline.run.processes);
        self.pipeline.run(info, batch, Source::Caller)
    }

    /// The failures so far.
    pub fn failures(&self) -> Vec<FailureReport> {
        self.failures.reports()
    }

    /// Final flush of every buffer (the engine is finalised; the chain
    /// buffer's last batches go through the stages and the output), then
    /// each plugin's `fini` exactly once, in chain order.
    pub fn finish(self) -> Result<ChainOutcome> {
        let (ends, outcome) = self.end(false)?;
        let summaries = ends
            .into_iter()
            .map(|(name, end)| match end {
                PartEnd::Tables(tables) => (name, tables),
                PartEnd::Partial(_) | PartEnd::Lost(_) => (name, Vec::new()),
            })
            .collect();
        Ok(ChainOutcome {
            summaries,
            ..outcome
        })
    }

    /// Ends this chain as one *part* of a merged run (WIT 0.3.1's `merge`):
    /// the final flush as [`Chain::finish`], then of each stage that
    /// exports `merge` its partial result (`take-partial`, in place of
    /// `fini`: it writes no files and returns no tables), and of each other
    /// stage its `fini` tables, which cover this part alone. The
    /// outcome's `summaries` hold those tables; `ends` says, per stage,
    /// which it is.
    pub fn finish_partial(self) -> Result<PartOutcome> {
        let (ends, outcome) = self.end(true)?;
        Ok(PartOutcome { ends, outcome })
    }

    /// Folds a partial result another chain's stage `stage` took
    /// ([`Chain::finish_partial`]) into this chain's stage of that name
    /// (`merge-partial`), as if it had taken that part's records too. Call
    /// it before [`Chain::finish`] (or [`Chain::finish_partial`], for a
    /// tree of merges). `Err` names why nothing was folded: no such stage,
    /// a stage that does not export `merge`, or the plugin's refusal or
    /// failure (also in the chain's failures).
    pub fn merge_partial(&self, stage: &str, partial: &Partial) -> Result<()> {
        let s = self
            .pipeline
            .stages
            .iter()
            .find(|s| s.name == stage)
            .ok_or_else(|| anyhow!("the chain has no stage `{stage}`"))?;
        match s.cell.with(|p| p.merge_partial(partial)) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(anyhow!("stage `{stage}`: {why}")),
            Err(a) => Err(aborted(a)),
        }
    }

    /// True when stage `stage`'s plugin exports `merge`.
    pub fn stage_merges(&self, stage: &str) -> bool {
        self.pipeline
            .stages
            .iter()
            .find(|s| s.name == stage)
            .is_some_and(|s| s.cell.with(|p| p.mergeable()))
    }

    /// The final flush, then each stage ended: `fini`, or with `parts` a
    /// mergeable stage's `take-partial`.
    fn end(self, parts: bool) -> Result<(Vec<(String, PartEnd)>, ChainOutcome)> {
        self.env.profiler.finalize();
        let stages = &self.pipeline.stages;
        for stage in stages {
            stage.cell.drain();
        }
        let mut ends = Vec::new();
        let mut metrics = Vec::new();
        let mut abort = None;
        for stage in stages {
            let (result, used) = stage.cell.with(|p| {
                let r = if parts {
                    p.end_part()
                } else {
                    p.fini().map(PartEnd::Tables)
                };
                (r, p.metrics())
            });
            metrics.push((stage.name.clone(), used));
            match result {
                Ok(end) => ends.push((stage.name.clone(), end)),
                Err(Aborted(r)) => {
                    ends.push((stage.name.clone(), PartEnd::Lost(r.to_string())));
                    abort.get_or_insert(r);
                }
            }
        }
        if let Some(r) = abort {
            return Err(aborted(Aborted(r)));
        }
        self.pipeline.check_abort()?;
        let summaries = ends
            .iter()
            .filter_map(|(name, end)| match end {
                PartEnd::Tables(t) => Some((name.clone(), t.clone())),
                _ => None,
            })
            .collect();
        Ok((
            ends,
            ChainOutcome {
                summaries,
                failures: self.failures.reports(),
                declined: self.declined,
                metrics,
            },
        ))
    }
}

/// What [`Chain::finish_partial`] leaves: per stage (in chain order), its
/// partial result or its own tables, and the chain's outcome (`summaries`
/// holds the tables of the stages that do not merge).
#[derive(Debug)]
pub struct PartOutcome {
    /// Per stage, in chain order.
    pub ends: Vec<(String, PartEnd)>,
    /// Failures, declined stages, metrics; the non-merging stages' tables.
    pub outcome: ChainOutcome,
}

/// The buffer services of the chain from each stage's `(domains,
/// operations)`: per kind of any stage's domains, the operations to trace
/// (empty = all, because some stage wants them all).
fn services<'a>(
    stages: impl IntoIterator<
        Item = (
            &'a [BufferTracingKind],
            &'a BTreeMap<BufferTracingKind, Vec<u32>>,
        ),
    >,
) -> BTreeMap<BufferTracingKind, Vec<u32>> {
    // `None` = every operation.
    let mut union: BTreeMap<BufferTracingKind, Option<BTreeSet<u32>>> = BTreeMap::new();
    for (domains, operations) in stages {
        for kind in domains {
            let wanted = operations
                .get(kind)
                .filter(|ops| !ops.is_empty())
                .map(|ops| ops.iter().copied().collect::<BTreeSet<u32>>());
            match union.get_mut(kind) {
                None => {
                    union.insert(*kind, wanted);
                }
                Some(Some(have)) => match wanted {
                    Some(more) => have.extend(more),
                    None => *union.get_mut(kind).expect("present") = None,
                },
                Some(None) => {}
            }
        }
    }
    union
        .into_iter()
        .map(|(k, ops)| (k, ops.map(|s| s.into_iter().collect()).unwrap_or_default()))
        .collect()
}

/// Creates the chain buffer, on a callback thread of its own, and traces the
/// stages' domains and the output's kinds into it. `None` when there are
/// none.
fn trace_domains(
    profiler: &Profiler,
    ctx: ContextId,
    pipeline: &Arc<Pipeline>,
    output_kinds: &[BufferTracingKind],
    memory: Option<&dyn rocwasm_core::buffer::DurableMemory>,
    counts: bool,
) -> Result<Option<BufferId>> {
    let mut services = services(
        pipeline
            .stages
            .iter()
            .map(|s| (s.domains.as_slice(), &s.operations)),
    );
    // Every operation of the output's kinds (empty = all).
    for &kind in output_kinds {
        services.insert(kind, Vec::new());
    }
    // Counting needs the buffer even when no kind is traced.
    if services.is_empty() && !counts {
        return Ok(None);
    }
    let err = |what: &'static str| move |s: Status| anyhow!("the chain's buffer: {what}: {s}");
    let b = pipeline
        .stages
        .iter()
        .find(|s| !s.domains.is_empty())
        .or(pipeline.stages.first())
        .map(|s| s.buffer)
        .unwrap_or_default();
    let sink = Arc::new(ChainSink(Arc::downgrade(pipeline)));
    let buffer = profiler
        .create_buffer_in(ctx, b.size, b.watermark, b.policy, sink, memory)
        .map_err(err("create-buffer"))?;
    // Its own thread: the stages' calls from here may wait for a stage's
    // lock whose holder waits for a flush of the plugin's own buffer, which
    // the default thread must stay free to deliver.
    let thread = profiler
        .create_callback_thread()
        .map_err(err("create-callback-thread"))?;
    profiler
        .assign_callback_thread(buffer, thread)
        .map_err(err("assign-callback-thread"))?;
    for (kind, ops) in &services {
        profiler
            .configure_buffer_tracing(ctx, *kind, ops, buffer)
            .map_err(|s| anyhow!("the chain's buffer: tracing {}: {s}", kind.name()))?;
    }
    Ok(Some(buffer))
}

fn aborted(a: Aborted) -> anyhow::Error {
    anyhow!("run aborted: {}", a.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::BufferTracingKind as K;

    type Spec = (Vec<K>, BTreeMap<K, Vec<u32>>);

    fn stage(domains: &[K], ops: &[(K, &[u32])]) -> Spec {
        (
            domains.to_vec(),
            ops.iter().map(|(k, o)| (*k, o.to_vec())).collect(),
        )
    }

    fn union(stages: &[Spec]) -> BTreeMap<K, Vec<u32>> {
        services(stages.iter().map(|(d, o)| (d.as_slice(), o)))
    }

    #[test]
    fn operation_lists_unite_and_all_wins() {
        let a = stage(
            &[K::HipRuntimeApi, K::KernelDispatch],
            &[(K::HipRuntimeApi, &[3, 1])],
        );
        let b = stage(&[K::HipRuntimeApi], &[(K::HipRuntimeApi, &[2])]);
        let c = stage(&[K::KernelDispatch], &[(K::KernelDispatch, &[2])]);
        let u = union(&[a, b.clone(), c.clone()]);
        assert_eq!(u[&K::HipRuntimeApi], vec![1, 2, 3]);
        assert!(u[&K::KernelDispatch].is_empty(), "a wants every dispatch");
        let u = union(&[c.clone(), b.clone()]);
        assert_eq!(u[&K::KernelDispatch], vec![2]);
        // All first, then a list: still all.
        let all = stage(&[K::HipRuntimeApi], &[]);
        assert!(union(&[all, b])[&K::HipRuntimeApi].is_empty());
        // Operations of a kind outside the domains trace nothing.
        let stray = stage(&[K::KernelDispatch], &[(K::MemoryCopy, &[1])]);
        assert!(!union(&[stray]).contains_key(&K::MemoryCopy));
    }
}
