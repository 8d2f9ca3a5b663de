//! [`LiveRun`]: one process's profiling run, from its plan to its report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use rocwasm_core::buffer::DurableMemory;
use rocwasm_core::{clock, Batch, BufferTracingKind, DeliveryInfo, Profiler};
use rocwasm_journal::RunMetadata;
use rocwasm_plan::claims::OutputClaims;
use rocwasm_plan::{OutputFormat, Placement, ProcessInfo, RunPlan};
use rocwasm_plugin_host::{
    Chain, ChainOutput, EngineConfig, HostEnv, PluginEngine, Processes, StageSpec, TracedProcess,
    World,
};
use rocwasm_policy::{admit, audit, Admission, SitePolicy};

use crate::api_log::ApiLog;
use crate::call_args::PendingArgs;
use crate::collection::{regions_report, CollectionGate};
use crate::journal::{JournalMeta, JournalSink, ProcessEnd};
use crate::kernels::KernelSelection;
use crate::own::{BatchOut, OwnContext};
use crate::report::PluginReport;
use crate::route::SinkRoute;
use crate::stages::{placed, stage_specs, traced_by_chain};

/// Configures native (C API) tools on a live run's engine before its
/// configuration locks; the `bool` says whether the site policy allows
/// native tools (when not, the hook configures none and says so). Returns
/// lines for the run's report.
pub type NativeTools<'a> = &'a dyn Fn(&Arc<Profiler>, bool) -> Vec<String>;

/// Makes the durable memory of a journal: its directory and stem in, the
/// memory its output buffers keep their halves in out.
pub type DurableMemoryFor = fn(PathBuf, String) -> Arc<dyn DurableMemory>;

/// What a live run gets from the tool library that is not in the plan.
#[derive(Default)]
pub struct LiveHooks<'a> {
    /// Configures the native (C API) tools, see [`NativeTools`].
    pub native_tools: Option<NativeTools<'a>>,
    /// Memory for the halves of the buffers that feed the outputs, in the
    /// journal directory it is given, in files named after the journal's
    /// stem (see `rocwasm_journal::halves`), so that the records outlive the
    /// process (see `rocwasm_core::buffer::durable`).
    pub durable_memory: Option<DurableMemoryFor>,
    /// What measures this process's records: `Builtin` (the tool library's
    /// interception, the default) or `RocprofilerSdk` (rocwasm's SDK tool).
    /// Never `Auto`: by the time a run starts, one of the two was chosen.
    pub back_end: rocwasm_plan::Backend,
}

/// What a finished live run leaves.
pub struct LiveReport {
    /// The in-process chain's tables and problems.
    pub plugins: PluginReport,
    /// Problems outside the chain: at start-up (already printed), of the
    /// journal, of the audit line.
    pub problems: Vec<String>,
    /// Notes of the run's filters (kernel selection, collection period,
    /// regions) and of the journal.
    pub notes: Vec<String>,
    /// The run's metadata, with its end time.
    pub meta: RunMetadata,
}

/// One process's profiling run: the engine, the in-process chain, the
/// record journal. See the crate docs.
pub struct LiveRun {
    plan: RunPlan,
    dir: PathBuf,
    profiler: Arc<Profiler>,
    journal: Arc<Mutex<Option<JournalSink>>>,
    /// The journal directory when this process made it itself (no
    /// launcher): it then has the outputs written at its end.
    own_journal: Option<PathBuf>,
    route: SinkRoute,
    chain: Mutex<Option<Chain>>,
    start_problems: Vec<String>,
    api_log: Mutex<Option<Arc<ApiLog>>>,
    admission: Admission,
    finished: AtomicBool,
    /// Async operations still in flight when the application ended
    /// ([`LiveRun::settle_async`]).
    unsettled: std::sync::atomic::AtomicU64,
    kernels: Option<Arc<KernelSelection>>,
    collection: Option<Arc<CollectionGate>>,
    claims: OutputClaims,
    meta: RunMetadata,
    /// Why the journal could not be created (a failure for the audit).
    journal_error: Option<String>,
    /// Why the site policy refused the plan's chain (a failure for the
    /// audit: an admin reads there that a refused chain was handed over).
    policy_refusal: Option<String>,
}

impl LiveRun {
    /// Starts the run `plan` describes in this process (`process` expands
    /// the output templates): the record journal, the engine's own context,
    /// the native tools (`hooks`), the chain (compiled or loaded from the
    /// cache, configured, initialised); then locks the engine's
    /// configuration. `notes` are lines the report should carry (e.g. why a
    /// forked child runs no plugins). Nothing here stops the application:
    /// what cannot start becomes a problem in the report.
    pub fn start(
        plan: RunPlan,
        process: &ProcessInfo,
        notes: Vec<String>,
        hooks: LiveHooks<'_>,
    ) -> Result<LiveRun> {
        let dir = plan.run_dir(process);
        let mut notes = notes;
        // The site policy, again: a plan handed to the tool library by hand
        // meets the same rules as one `rocwasm run` made. A refused chain is
        // dropped and profiling goes on; a refused run is not profiled.
        let mut policy_refusal = None;
        let (mut plan, admission) = match admit_under_policy(&plan) {
            Ok(a) => (plan, a),
            Err(e) => {
                let mut plan = plan;
                plan.stages.clear();
                let admission = admit_under_policy(&plan)?;
                let text = format!("{e:#}; profiling goes on without plugins");
                eprintln!("rocwasm: {text}");
                notes.push(text);
                policy_refusal = Some(format!("{e:#}"));
                (plan, admission)
            }
        };
        // What each stage may configure, as decided: the plugin host
        // refuses the services a stage was not granted.
        for stage in &mut plan.stages {
            if let Some(a) = admission.plugins.iter().find(|a| a.stage == stage.name) {
                stage.services = a.services;
            }
        }
        let claims = OutputClaims::new();
        let profiler = Arc::new(Profiler::new());
        // Before any symbol or dispatch reaches the engine.
        let kernels = KernelSelection::install(&plan.kernels, &profiler).unwrap_or_else(|e| {
            let text = format!("{e}; every kernel dispatch is kept");
            eprintln!("rocwasm: {text}");
            notes.push(text);
            None
        });
        // The stages placed in the launcher read the journal: the kinds
        // they trace are journaled besides the outputs'.
        let specs = stage_specs(&placed(&plan, Placement::Application), process);
        let launcher_kinds: Vec<BufferTracingKind> =
            traced_by_chain(&stage_specs(&placed(&plan, Placement::Rocwasm), process))
                .into_keys()
                .collect();
        let mut meta = RunMetadata::for_current_process(plan.command.clone());
        meta.start_ns = clock::now();
        meta.back_end = Some(hooks.back_end.name().to_string());
        let collection = CollectionGate::install(&plan.collection, meta.start_ns, &profiler)
            .unwrap_or_else(|e| {
                let text = format!("{e}; every record is kept");
                eprintln!("rocwasm: {text}");
                notes.push(text);
                None
            });
        // `--selected-regions`: the engine starts paused.
        if plan.collection.selected_regions {
            profiler.enable_selected_regions();
        }
        // The record journal: the launcher's directory, or (no launcher)
        // one of this process's own, whose outputs it has written at its end.
        let mut journal_dir_used = None;
        let mut journal_error = None;
        let (journal, own_journal) = if plan.writes_nothing() {
            (None, None)
        } else {
            let (journal_dir, own) = match &plan.journal {
                Some(d) => (d.clone(), None),
                None => {
                    // Absolute: the application may change its directory
                    // before its end, when the outputs are written.
                    let d = plan.journal_dir_for(process.pid);
                    let d = std::path::absolute(&d).unwrap_or(d);
                    (d.clone(), Some(d))
                }
            };
            match JournalSink::create(&journal_dir) {
                Ok(mut j) => {
                    j.meta(&JournalMeta {
                        meta: meta.clone(),
                        process: process.clone(),
                        output_directory: Some(plan.output.directory.clone()),
                    });
                    journal_dir_used = Some((journal_dir.clone(), j.stem().to_string()));
                    if let Some(d) = &own {
                        let _ = std::fs::write(d.join(RunPlan::JOURNAL_PLAN_FILE), plan.to_json());
                    }
                    (Some(j), own)
                }
                Err(e) => {
                    let text = format!(
                        "cannot create the record journal in {} ({e}): no output file will be written",
                        journal_dir.display()
                    );
                    eprintln!("rocwasm: {text}");
                    journal_error = Some(text.clone());
                    notes.push(text);
                    (None, None)
                }
            }
        };
        let durable = journal_dir_used
            .and_then(|(dir, stem)| hooks.durable_memory.map(|memory| memory(dir, stem)));
        let processes = Processes::new(traced_process(&meta));
        let env = HostEnv::new(profiler.clone())
            .with_output_claim(Arc::new(claims.for_stages()))
            .with_processes(processes)
            .with_durable_memory(durable.clone());
        let mut run = LiveRun {
            plan,
            dir,
            profiler,
            journal: Arc::new(Mutex::new(journal)),
            own_journal,
            route: SinkRoute::default(),
            chain: Mutex::new(None),
            start_problems: notes,
            api_log: Mutex::new(None),
            admission,
            finished: AtomicBool::new(false),
            unsettled: std::sync::atomic::AtomicU64::new(0),
            kernels,
            collection,
            claims,
            meta,
            journal_error,
            policy_refusal,
        };
        run.start_engine(env, specs, hooks.native_tools, durable, &launcher_kinds)?;
        Ok(run)
    }

    /// The engine's configuration is locked once, after every plugin's
    /// `init`, as in the SDK. So the own context is configured first (the
    /// kinds the chain will not trace, the API log), then the native tools,
    /// then the chain starts and locks; then the own context starts.
    fn start_engine(
        &mut self,
        env: HostEnv,
        specs: Vec<StageSpec>,
        native_tools: Option<NativeTools<'_>>,
        durable: Option<Arc<dyn DurableMemory>>,
        launcher_kinds: &[BufferTracingKind],
    ) -> Result<()> {
        let kinds = self.plan.output.kinds.clone();
        // What the journal takes: the outputs' kinds and those of the
        // stages placed in the launcher.
        let mut journal_kinds = kinds.clone();
        for &k in launcher_kinds {
            if !journal_kinds.contains(&k) {
                journal_kinds.push(k);
            }
        }
        // Sink kinds a transform filters must come out of the chain even
        // when no analysis traces them, or the trace files would skip the
        // filter: the chain's buffer traces them for the output.
        let mut traced = traced_by_chain(&specs);
        let through_transforms = through_transforms(&kinds, &specs, &traced);
        self.route = if specs.is_empty() {
            SinkRoute::without_chain(&journal_kinds)
        } else {
            for &k in &through_transforms {
                traced.insert(k, None);
            }
            SinkRoute::new(&journal_kinds, &traced)
        };
        let profiler = self.profiler.clone();
        let out: BatchOut = {
            let (journal, profiler) = (self.journal.clone(), profiler.clone());
            Arc::new(move |batch: &Batch| {
                if let Some(j) = journal.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                    j.batch(profiler.symbols(), batch);
                }
            })
        };
        let own = OwnContext::new(&profiler, self.plan.buffer.size, &out, durable)
            .map_err(|e| anyhow::anyhow!("create context: {e}"))?;
        own.trace(&profiler, &self.route.own)
            .map_err(anyhow::Error::msg)?;
        // The run's counters: the chain's buffer counts them when there is
        // a chain in the application (its stages see them, and the outputs
        // get them from it), else the own context.
        if specs.is_empty() {
            own.count(&profiler, &self.plan.collection.counters)
                .map_err(anyhow::Error::msg)?;
        }
        let log = if self.plan.api_log {
            let log = Arc::new(ApiLog::new(&self.dir).map_err(anyhow::Error::msg)?);
            *self.api_log.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(log.clone());
            Some(log)
        } else {
            None
        };
        // rocpd writes each call's arguments (`rocpd_arg`) when the run
        // asks (`--api-args`): they are kept and journaled only for it
        // (crate::call_args).
        let mut journal = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        let args = match journal.as_mut() {
            Some(j)
                if self.plan.output.api_args
                    && self.plan.output.formats.contains(&OutputFormat::Rocpd) =>
            {
                let args = Arc::new(PendingArgs::default());
                j.set_args(args.clone());
                Some(args)
            }
            _ => None,
        };
        drop(journal);
        let api_traced = kinds.iter().any(|k| {
            rocwasm_core::Domain::from_buffer_kind(*k)
                .is_some_and(|d| d.is_api() && d.callback_kind().is_some())
        });
        if args.is_some() && !api_traced {
            self.problem(
                "--api-args: no API calls are traced, so rocpd_arg stays empty (add --hip-trace, \
                 --hsa-trace or another API trace)"
                    .into(),
            );
        }
        own.calls(&profiler, &kinds, log, args)
            .map_err(anyhow::Error::msg)?;
        if let Some(configure) = native_tools {
            let lines = configure(&profiler, self.admission.native_tools);
            self.start_problems.extend(lines);
        }
        if !specs.is_empty() {
            let output: ChainOutput = {
                let (out, route) = (out.clone(), self.route.clone());
                Box::new(move |_: &DeliveryInfo, batch: &Batch| route.write(batch, |b| out(b)))
            };
            let engine = EngineConfig {
                cache_dir: self.plan.plugin_cache.clone(),
                site_cache_dir: self.admission.site_cache.clone(),
                // Inside someone else's process wasmtime must install no
                // signal handlers (the crate docs, "Signals").
                signals_based_traps: false,
                ..EngineConfig::default()
            };
            let counters = crate::own::bare_counter_names(&self.plan.collection.counters);
            match start_chain(engine, env, specs, output, through_transforms, counters) {
                Ok(c) => *self.chain.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(c),
                Err(e) => {
                    self.problem(format!(
                        "the plugin chain cannot start ({e:#}); profiling goes on without plugins"
                    ));
                    // The chain fails before it locks the engine's
                    // configuration: the own context still traces what the
                    // outputs expected from it.
                    let missing: Vec<_> = self.route.from_chain.iter().copied().collect();
                    if let Err(e) = own.trace(&profiler, &missing) {
                        self.problem(format!("tracing without the chain: {e}"));
                    }
                    if let Err(e) = own.count(&profiler, &self.plan.collection.counters) {
                        self.problem(format!("counting without the chain: {e}"));
                    }
                }
            }
        }
        profiler.lock_configuration();
        own.start(&profiler)
            .map_err(|e| anyhow::anyhow!("start context: {e}"))
    }

    /// Prints a problem now (`rocwasm:` prefix) and keeps it for the report.
    fn problem(&mut self, text: String) {
        eprintln!("rocwasm: {text}");
        self.start_problems.push(text);
    }

    /// The plan the run executes.
    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }

    /// The output directory: the plan's template expanded for this process.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The engine that records, whose symbol table the plugins' `symbols`
    /// imports read.
    pub fn profiler(&self) -> &Arc<Profiler> {
        &self.profiler
    }

    /// The journal directory this process made itself (no launcher):
    /// after [`LiveRun::end_journal`], the outputs are to be written from it
    /// (`rocwasm write-journal`).
    pub fn own_journal(&self) -> Option<&Path> {
        self.own_journal.as_deref()
    }

    fn with_journal(&self, f: impl FnOnce(&mut JournalSink)) {
        if let Some(j) = self
            .journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            f(j);
        }
    }

    /// Journals the symbols the engine gained: records still in the
    /// buffers when the process dies can then be named.
    pub fn journal_symbols(&self) {
        self.with_journal(|j| j.symbols(self.profiler.symbols()));
    }

    /// Appends the process's own report to its journal (its last frame),
    /// with the files its stages wrote.
    pub fn end_journal(&self, end: &ProcessEnd) {
        let end = ProcessEnd {
            stage_files: self.claims.stage_files(),
            ..end.clone()
        };
        self.with_journal(|j| j.end(self.profiler.symbols(), &end));
    }

    /// The application is ending: waits, at most [`Self::SETTLE`], for the
    /// runtime to report the dispatches and copies still in flight, so that
    /// the last ones of a run reach the outputs; what does not settle is
    /// reported by [`Self::finish`]. Call it before anything is flushed.
    pub fn settle_async(&self) {
        let left = self.profiler.settle_async(Self::SETTLE);
        self.unsettled.store(left, Ordering::Release);
    }

    /// How long [`Self::settle_async`] waits.
    pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

    /// Ends the run once (later calls return `None`): flushes every buffer
    /// into the journal, finishes the chain (each plugin's `fini`, once),
    /// writes the audit line.
    pub fn finish(&self) -> Option<LiveReport> {
        if self.finished.swap(true, Ordering::AcqRel) {
            return None;
        }
        let chain = self.chain.lock().unwrap_or_else(|e| e.into_inner()).take();
        // Finishing the chain finalizes the engine first (stops contexts,
        // delivers every buffered record: the chain's through the stages
        // into the journal, the own context's straight into it).
        let plugins = PluginReport::finish_chain(chain);
        self.profiler.finalize();
        let mut api_log_problem = None;
        if let Some(log) = self
            .api_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            api_log_problem = log.flush();
        }
        let mut meta = self.meta.clone();
        meta.end_ns = clock::now();
        let mut notes = Vec::new();
        let mut problems = self.start_problems.clone();
        if let Some(k) = &self.kernels {
            notes.push(k.report(true));
        }
        if let Some(c) = &self.collection {
            notes.push(c.report());
        }
        if let Some(r) = self.profiler.regions_report() {
            notes.push(regions_report(&r));
        }
        let unclosed = self.profiler.unclosed_marker_ranges();
        if unclosed > 0 {
            notes.push(format!(
                "{unclosed} marker range(s) were still open when the application ended \
                 (roctxRangePushA without its roctxRangePop, or roctxRangeStartA without its \
                 roctxRangeStop): they have no record, as with rocprofv3"
            ));
        }
        let mut journal_problem = None;
        self.with_journal(|j| {
            notes.push(format!(
                "{} records reached the record journal",
                j.records()
            ));
            journal_problem = j.problem();
        });
        problems.extend(journal_problem.clone());
        problems.extend(api_log_problem);
        let unsettled = self.unsettled.load(Ordering::Acquire);
        if unsettled > 0 {
            problems.push(format!(
                "{unsettled} kernel dispatch(es) or memory copies were still running when the \
                 application ended (waited {} s for them): they are not in the outputs",
                Self::SETTLE.as_secs()
            ));
        }
        let lost = self.profiler.lost_to_sinks();
        if lost > 0 {
            problems.push(format!(
                "{lost} record(s) were lost: a buffer's consumer failed while taking them \
                 (its delivery thread went on with the next)"
            ));
        }
        // A process profiled only for native tools without `rocwasm run`
        // runs no plugin and writes no file of ours, not even the audit.
        if !self.plan.writes_nothing() {
            let failures: Vec<String> = plugins
                .problems
                .iter()
                .cloned()
                .chain(self.policy_refusal.clone())
                .chain(self.journal_error.clone())
                .chain(journal_problem)
                .collect();
            problems.extend(write_audit(
                &self.plan,
                &self.admission,
                &self.dir,
                false,
                &failures,
            ));
        }
        Some(LiveReport {
            plugins,
            problems,
            notes,
            meta,
        })
    }
}

/// Writes a run's audit line (`plan` as `admission` admitted it, `replay`
/// or live, with its `failures`) into `dir` and the site's log; returns,
/// and prints, the problems doing so.
pub fn write_audit(
    plan: &RunPlan,
    admission: &Admission,
    dir: &Path,
    replay: bool,
    failures: &[String],
) -> Vec<String> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        return vec![format!("cannot create {}: {e}", dir.display())];
    }
    let line = audit::line(plan, admission, replay, failures);
    let problems = audit::write(&line, dir, admission.audit_log.as_deref());
    for p in &problems {
        eprintln!("rocwasm: {p}");
    }
    problems
}

/// Creates the stages' output directories, starts the plugin engine and
/// the chain, whose final batches go to `output`.
fn start_chain(
    engine: EngineConfig,
    env: HostEnv,
    specs: Vec<StageSpec>,
    output: ChainOutput,
    kinds: Vec<BufferTracingKind>,
    counters: Vec<String>,
) -> Result<Chain> {
    for dir in specs.iter().filter_map(|s| s.output_dir.as_ref()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    }
    let engine = Arc::new(PluginEngine::new(engine).context("starting the Wasm runtime")?);
    Chain::with_output_tracing(engine, env, specs, output, kinds, counters)
        .context("loading the chain's plugins")
}

/// The plan against the site policy in force.
pub fn admit_under_policy(plan: &RunPlan) -> Result<Admission> {
    let policy = SitePolicy::current()?;
    Ok(admit(plan, policy.as_ref())?)
}

/// The sink kinds some transform of the chain filters (its kind filter
/// accepts them) and that no analysis traces in full (`traced`: what the
/// stages trace, [`traced_by_chain`]).
fn through_transforms(
    sink_kinds: &[BufferTracingKind],
    specs: &[StageSpec],
    traced: &BTreeMap<BufferTracingKind, Option<Vec<u32>>>,
) -> Vec<BufferTracingKind> {
    sink_kinds
        .iter()
        .copied()
        .filter(|k| !matches!(traced.get(k), Some(None)))
        .filter(|&k| {
            specs
                .iter()
                .any(|s| s.world == Some(World::Transform) && s.kinds.accepts(k))
        })
        .collect()
}

/// The process a run's metadata describes, as plugins see it.
pub fn traced_process(meta: &RunMetadata) -> TracedProcess {
    TracedProcess {
        hostname: meta.hostname.clone(),
        pid: meta.pid,
        rank: meta.rank,
        job: meta.job.clone(),
        command: meta.command.clone(),
        back_end: meta.back_end.clone().unwrap_or_default(),
    }
}
