//! [`Pipeline`]: one run from its plan to its report, live or replayed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use rocwasm_core::buffer::DurableMemory;
use rocwasm_core::{
    clock, Batch, BufferId, BufferTracingKind, ContextId, DeliveryInfo, Profiler, SymbolTable,
};
use rocwasm_output::{
    OperationNames, OutputClaims, OutputOptions, OutputSummary, Outputs, RunMetadata, WriteTiming,
};
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_plugin_host::{
    Chain, ChainOutput, EngineConfig, HostEnv, OperationNameTable, PluginEngine, Processes,
    StageSpec, TracedProcess, World,
};

use rocwasm_policy::{admit, audit, Admission, SitePolicy};

use crate::api_log::ApiLog;
use crate::collection::{regions_report, CollectionGate};
use crate::journal::{JournalMeta, JournalSink, ProcessEnd};
use crate::kernels::KernelSelection;
use crate::own::OwnContext;
use crate::report::PluginReport;
use crate::route::SinkRoute;
use crate::sinks::{registry_names, Sinks};
use crate::stages::{stage_specs, traced_by_chain};
use crate::summaries::Summaries;

/// Where a run's records come from.
pub enum Source {
    /// The profiled process: the engine's buffers feed the chain (on its
    /// buffer's callback thread) and the sinks. Nothing stops the
    /// application: a chain that cannot start becomes a problem in the
    /// report and the sinks trace every kind themselves.
    Live,
    /// A recording, read elsewhere and handed over by [`Pipeline::deliver`]
    /// (see [`crate::replay`]); every failure to start is an error.
    Replay(Recording),
}

/// What a replay knows of its recording before the first batch.
pub struct Recording {
    /// The recorded run's metadata (command, host, times).
    pub meta: RunMetadata,
    /// The recording's operation names, for the sinks.
    pub names: Arc<OperationNames>,
    /// The same names for the plugins' `names` imports.
    pub plugin_names: Arc<dyn OperationNameTable>,
    /// The agents, code objects and kernel symbols found so far: in the
    /// engine's table before any plugin starts.
    pub symbols: Arc<SymbolTable>,
}

/// Configures native (C API) tools on a live run's engine before its
/// configuration locks; the `bool` says whether the site policy allows
/// native tools (when not, the hook configures none and says so). Returns
/// lines for the run's report.
pub type NativeTools<'a> = &'a dyn Fn(&Arc<Profiler>, bool) -> Vec<String>;

/// One run: the plan's outputs (each file with one producer), its chain of
/// plugins, and the engine they share; finished once into a [`RunReport`].
/// See the crate docs for the data flow.
pub struct Pipeline {
    plan: RunPlan,
    dir: PathBuf,
    profiler: Arc<Profiler>,
    sinks: Arc<Sinks>,
    route: SinkRoute,
    chain: Mutex<Option<Chain>>,
    start_problems: Vec<String>,
    api_log: Mutex<Option<Arc<ApiLog>>>,
    /// What the site policy admitted, for the audit line.
    admission: Admission,
    live: bool,
    finished: AtomicBool,
    /// rocprofv3's kernel filters on this run's engine, for the report.
    kernels: Option<Arc<KernelSelection>>,
    /// rocprofv3's collection period on this run's engine, for the report.
    collection: Option<Arc<CollectionGate>>,
    /// rocprofv3's `-S`/`--summary-groups`, printed or written at the end.
    summaries: Option<Summaries>,
    /// The processes deliveries name (`delivery-info.process`): this run's,
    /// then those [`Pipeline::add_process`] adds.
    processes: Processes,
    /// Write the audit line at the end (not when writing a journal's
    /// outputs: the process audited its own run).
    audit: bool,
    /// The run's output files and their producers.
    claims: OutputClaims,
}

/// What a live run gets from the tool library that is not in the plan.
#[derive(Default)]
pub struct LiveHooks<'a> {
    /// Configures the native (C API) tools, see [`NativeTools`].
    pub native_tools: Option<NativeTools<'a>>,
    /// Memory for the halves of the buffers that feed the outputs, so that
    /// a journaled run's records outlive the process (see
    /// `rocwasm_core::buffer::durable`).
    pub durable_memory: Option<Arc<dyn DurableMemory>>,
}

/// What a finished run leaves: the chain's tables and problems, the
/// outputs' files, statistics and errors, the run's metadata.
pub struct RunReport {
    /// The chain's tables and problems.
    pub plugins: PluginReport,
    /// Problems outside the chain: at start-up (already printed in a live
    /// run) and writing the audit line.
    pub problems: Vec<String>,
    /// What the sinks wrote.
    pub outputs: OutputSummary,
    /// The run's metadata, with its end time in a live run.
    pub meta: RunMetadata,
}

impl Pipeline {
    /// Sets up the run `plan` describes for this process (`process`
    /// expands the output templates): the sinks, the chain (compiled or
    /// loaded from the cache, configured, initialised), and in a live run
    /// the pipeline's own context; then locks the engine's configuration
    /// and opens the outputs. `notes` are lines the report should carry
    /// (e.g. why a forked child runs no plugins).
    pub fn start(
        plan: RunPlan,
        process: &ProcessInfo,
        source: Source,
        notes: Vec<String>,
    ) -> Result<Pipeline> {
        Self::start_with_tools(plan, process, source, notes, LiveHooks::default())
    }

    /// As [`Pipeline::start`], and in a live run `native_tools` configures
    /// the tools that are not Wasm plugins (rocprofiler-sdk C tools, see
    /// `rocwasm-capi`) on the same engine: after the pipeline's own context
    /// and before the chain, so the configuration locks once, after every
    /// tool's initialisation, as the SDK does. It returns lines for the
    /// report (which tools ran).
    pub fn start_with_tools(
        plan: RunPlan,
        process: &ProcessInfo,
        source: Source,
        notes: Vec<String>,
        hooks: LiveHooks<'_>,
    ) -> Result<Pipeline> {
        let dir = plan.run_dir(process);
        // The site policy, again: a plan handed to the tool library by hand
        // meets the same rules as one `rocwasm run` made.
        let mut notes = notes;
        let (plan, admission) = match (admit_under_policy(&plan), &source) {
            (Ok(a), _) => (plan, a),
            (Err(e), Source::Replay(_)) => return Err(e),
            // Live, a refused chain is dropped and profiling goes on (the
            // application must never be stopped); a refused run is not
            // profiled at all.
            (Err(e), Source::Live) => {
                let mut plan = plan;
                plan.stages.clear();
                let admission = admit_under_policy(&plan)?;
                let text = format!("{e:#}; profiling goes on without plugins");
                eprintln!("rocwasm: {text}");
                notes.push(text);
                (plan, admission)
            }
        };
        // What each stage may configure, as decided: the plugin host
        // refuses the services a stage was not granted.
        let mut plan = plan;
        for stage in &mut plan.stages {
            if let Some(a) = admission.plugins.iter().find(|a| a.stage == stage.name) {
                stage.services = a.services;
            }
        }
        let outputs = Outputs::new(&OutputOptions {
            dir: dir.clone(),
            name: plan.file_prefix(process),
            formats: plan.output.formats.clone(),
            stats: plan.output.stats,
            // A replay writes as it reads: no application waits for it.
            timing: match &source {
                Source::Live => plan.output.write,
                Source::Replay(_) => WriteTiming::DuringRun,
            },
        });
        let claims = outputs.claims();
        let profiler = Arc::new(Profiler::new());
        // Before any symbol or dispatch reaches the engine.
        let kernels = match (KernelSelection::install(&plan.kernels, &profiler), &source) {
            (Ok(k), _) => k,
            (Err(e), Source::Replay(_)) => return Err(e.into()),
            (Err(e), Source::Live) => {
                let text = format!("{e}; every kernel dispatch is kept");
                eprintln!("rocwasm: {text}");
                notes.push(text);
                None
            }
        };
        let specs = stage_specs(&plan, &dir);
        let (meta, names, live) = match &source {
            Source::Live => {
                let mut meta = RunMetadata::for_current_process(plan.command.clone());
                meta.start_ns = clock::now();
                (meta, Arc::new(registry_names()), true)
            }
            Source::Replay(r) => (r.meta.clone(), r.names.clone(), false),
        };
        // Windows count from the run's start: the session's, or the recording's.
        let collection = match (
            CollectionGate::install(&plan.collection, meta.start_ns, &profiler),
            &source,
        ) {
            (Ok(c), _) => c,
            (Err(e), Source::Replay(_)) => return Err(e.into()),
            (Err(e), Source::Live) => {
                let text = format!("{e}; every record is kept");
                eprintln!("rocwasm: {text}");
                notes.push(text);
                None
            }
        };
        // `--selected-regions`: a live engine starts paused; a recording
        // keeps no pause state to replay.
        if plan.collection.selected_regions {
            match &source {
                Source::Live => profiler.enable_selected_regions(),
                Source::Replay(_) => anyhow::bail!(
                    "{} needs the live application (roctxProfilerResume/roctxProfilerPause as it runs); a recording keeps no pause state: drop it, or use -P/--collection-period",
                    rocwasm_plan::CollectionPlan::SELECTED_REGIONS
                ),
            }
        }
        let prefix = plan.file_prefix(process);
        // A journaled live run: the launcher writes the outputs (and the
        // summaries of their data) from the journal.
        let journal = match (&source, &plan.journal) {
            (Source::Live, Some(dir)) => match JournalSink::create(dir) {
                Ok(mut j) => {
                    j.meta(&JournalMeta {
                        meta: meta.clone(),
                        process: process.clone(),
                    });
                    Some(j)
                }
                Err(e) => {
                    let text = format!(
                        "cannot create the record journal in {} ({e}); this process writes its outputs itself at its end",
                        dir.display()
                    );
                    eprintln!("rocwasm: {text}");
                    notes.push(text);
                    None
                }
            },
            (Source::Live, None) if !plan.writes_nothing() => {
                // Loaded without `rocwasm run` (a job script's preload, a
                // plan of its own): say what that costs.
                notes.push(
                    "not started by `rocwasm run` (no record journal): this process writes its outputs itself when it exits, and what it still buffers is lost if it is killed"
                        .to_string(),
                );
                None
            }
            _ => None,
        };
        let summaries = match (
            Summaries::new(&plan.summary, &dir, prefix.as_deref(), &claims),
            &source,
        ) {
            (Ok(_), Source::Live) if journal.is_some() => None,
            (Ok(s), _) => s,
            (Err(e), Source::Replay(_)) => anyhow::bail!("{e}"),
            (Err(e), Source::Live) => {
                let text = format!("{e}; no summary is printed");
                eprintln!("rocwasm: {text}");
                notes.push(text);
                None
            }
        };
        let processes = Processes::new(traced_process(&meta));
        let sinks = Sinks::new(outputs, meta, profiler.clone(), names);
        let durable = journal.is_some().then_some(hooks.durable_memory).flatten();
        let sinks = Arc::new(match journal {
            Some(j) => sinks.journaled(j),
            None => sinks,
        });
        let env = HostEnv::new(profiler.clone())
            .with_output_claim(Arc::new(claims.for_stages()))
            .with_processes(processes.clone())
            .with_durable_memory(durable.clone());
        let mut pipeline = Pipeline {
            route: SinkRoute::default(),
            chain: Mutex::new(None),
            start_problems: notes,
            api_log: Mutex::new(None),
            admission,
            live,
            finished: AtomicBool::new(false),
            kernels,
            collection,
            summaries,
            processes,
            audit: true,
            claims: claims.clone(),
            plan,
            dir,
            profiler,
            sinks,
        };
        match source {
            Source::Live => pipeline.start_live(env, specs, hooks.native_tools, durable)?,
            Source::Replay(r) => pipeline.start_replay(env, specs, r)?,
        }
        pipeline.sinks.begin();
        Ok(pipeline)
    }

    /// The live order: the engine's configuration is locked once, after
    /// every plugin's `init`, as in the SDK. So the own context is
    /// configured first (the kinds the chain will not trace, the API log),
    /// then the chain starts and locks; then the own context starts.
    fn start_live(
        &mut self,
        env: HostEnv,
        specs: Vec<StageSpec>,
        native_tools: Option<NativeTools<'_>>,
        durable: Option<Arc<dyn DurableMemory>>,
    ) -> Result<()> {
        let kinds = self.plan.output.kinds.clone();
        // Sink kinds a transform filters must come out of the chain even
        // when no analysis traces them, or the trace files would skip the
        // filter: the chain's buffer traces them for the output.
        let mut traced = traced_by_chain(&specs);
        let through_transforms = through_transforms(&kinds, &specs, &traced);
        self.route = if specs.is_empty() {
            SinkRoute::without_chain(&kinds)
        } else {
            for &k in &through_transforms {
                traced.insert(k, None);
            }
            SinkRoute::new(&kinds, &traced)
        };
        let profiler = self.profiler.clone();
        let own = OwnContext::new(&profiler, self.plan.buffer.size, &self.sinks, durable)
            .map_err(|e| anyhow::anyhow!("create context: {e}"))?;
        own.trace(&profiler, &self.route.own)
            .map_err(anyhow::Error::msg)?;
        if self.plan.api_log {
            let log = own
                .api_log(&profiler, &self.dir, &kinds)
                .map_err(anyhow::Error::msg)?;
            *self.api_log.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(log);
        }
        if let Some(configure) = native_tools {
            let lines = configure(&profiler, self.admission.native_tools);
            self.start_problems.extend(lines);
        }
        if !specs.is_empty() {
            let output: ChainOutput = {
                let (sinks, route) = (self.sinks.clone(), self.route.clone());
                Box::new(move |_: &DeliveryInfo, batch: &Batch| route.write(&sinks, batch))
            };
            let engine = EngineConfig {
                cache_dir: self.plan.plugin_cache.clone(),
                site_cache_dir: self.admission.site_cache.clone(),
                // Inside someone else's process wasmtime must install no
                // signal handlers (the crate docs, "Signals").
                signals_based_traps: false,
                ..EngineConfig::default()
            };
            match start_chain(engine, env, specs, Some((output, through_transforms))) {
                Ok(c) => *self.chain.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(c),
                Err(e) => {
                    self.problem(format!(
                        "the plugin chain cannot start ({e:#}); profiling goes on without plugins"
                    ));
                    // The chain fails before it locks the engine's
                    // configuration: the pipeline still traces what the
                    // sinks expected from it.
                    let missing: Vec<_> = self.route.from_chain.iter().copied().collect();
                    if let Err(e) = own.trace(&profiler, &missing) {
                        self.problem(format!("tracing without the chain: {e}"));
                    }
                }
            }
        }
        profiler.lock_configuration();
        own.start(&profiler)
            .map_err(|e| anyhow::anyhow!("start context: {e}"))
    }

    /// A replay: every directory the plan names exists before the plugins
    /// start, and the chain must start (an error otherwise).
    fn start_replay(&mut self, env: HostEnv, specs: Vec<StageSpec>, r: Recording) -> Result<()> {
        std::fs::create_dir_all(&self.dir).with_context(|| {
            format!("cannot create the output directory {}", self.dir.display())
        })?;
        self.route = SinkRoute::replay(&self.plan.output.kinds);
        let to = self.profiler.symbols();
        r.symbols
            .agents()
            .into_iter()
            .for_each(|a| to.insert_agent(a));
        r.symbols
            .code_objects()
            .into_iter()
            .for_each(|c| to.insert_code_object(c));
        r.symbols
            .kernels()
            .into_iter()
            .for_each(|k| to.insert_kernel(k));
        let env = env.with_replay(true).with_operation_names(r.plugin_names);
        let engine = EngineConfig {
            cache_dir: self.plan.plugin_cache.clone(),
            site_cache_dir: self.admission.site_cache.clone(),
            ..EngineConfig::default()
        };
        let chain = start_chain(engine, env, specs, None)?;
        *self.chain.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(chain);
        Ok(())
    }

    /// Prints a problem now (`rocwasm:` prefix) and keeps it for the report.
    fn problem(&mut self, text: String) {
        eprintln!("rocwasm: {text}");
        self.start_problems.push(text);
    }

    /// Leaves the audit line out of the end (writing a journal's outputs:
    /// the process wrote its own).
    pub fn skip_audit(&mut self) {
        self.audit = false;
    }

    /// True when this live run journals its records for the launcher (see
    /// [`crate::journal`]).
    pub fn is_journaled(&self) -> bool {
        self.sinks.is_journaled()
    }

    /// Journals the symbols the engine gained since the last batch.
    pub fn journal_symbols(&self) {
        self.sinks.journal_symbols();
    }

    /// Appends the process's own report to its journal (its last frame),
    /// with the files its stages wrote.
    pub fn end_journal(&self, end: &ProcessEnd) {
        let end = ProcessEnd {
            stage_files: self.claims.stage_files(),
            ..end.clone()
        };
        self.sinks.end_journal(&end);
    }

    /// Claims for their stages the files a journaled process's stages
    /// wrote (after the sinks claimed theirs); a refusal is reported as
    /// any other.
    pub(crate) fn claim_stage_files(&self, files: &[(PathBuf, String)]) {
        for (path, stage) in files {
            let _ = self
                .claims
                .claim(path, &rocwasm_output::Producer::Stage(stage.clone()));
        }
    }

    /// The plan the run executes.
    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }

    /// The output directory: the plan's template expanded for this process.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The engine that records (live) and whose symbol table the sinks and
    /// the plugins' `symbols` imports read.
    pub fn profiler(&self) -> &Arc<Profiler> {
        &self.profiler
    }

    /// Replaces the run's metadata (a replay's reader learns more as it
    /// reads).
    pub fn set_meta(&self, meta: RunMetadata) {
        self.sinks.set_meta(meta);
    }

    /// Delivers one batch of a replay through the chain into the sinks;
    /// an error when an `abort` policy stopped the chain.
    pub fn deliver(&self, batch: Batch) -> Result<()> {
        self.deliver_observed(0, batch, |_| {})
    }

    /// As [`Self::deliver`], for the records of `process` (0: the run's
    /// own; else an index from [`Self::add_process`]); `observe` sees the
    /// batch the sinks write (after rocprofv3's filters and the chain's
    /// transforms).
    pub fn deliver_observed(
        &self,
        process: u32,
        mut batch: Batch,
        observe: impl FnOnce(&Batch),
    ) -> Result<()> {
        // rocprofv3's kernel filters, as the engine applies them live.
        self.profiler
            .select_dispatches(&mut batch.kernel_dispatches);
        // rocprofv3's collection period, as the engine gates each delivery.
        self.profiler.gate_batch(&mut batch);
        let info = DeliveryInfo {
            context: ContextId(1),
            buffer: BufferId(1),
            drop_count: 0,
            process,
        };
        let out = match self
            .chain
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            Some(chain) => chain
                .deliver(info, batch)
                .context("delivering a batch to the chain")?,
            None => batch,
        };
        observe(&out);
        self.route.write(&self.sinks, &out);
        Ok(())
    }

    /// Adds a recorded process to the table deliveries name; the index to
    /// pass to [`Pipeline::deliver_observed`] for its batches.
    pub fn add_process(&self, meta: &RunMetadata) -> u32 {
        self.processes.add(traced_process(meta))
    }

    /// Ends the run once (later calls return `None`): flushes every buffer,
    /// finishes the chain (each plugin's `fini`, once), closes the outputs.
    pub fn finish(&self) -> Option<RunReport> {
        if self.finished.swap(true, Ordering::AcqRel) {
            return None;
        }
        let chain = self.chain.lock().unwrap_or_else(|e| e.into_inner()).take();
        // Finishing the chain finalizes the engine first (stops contexts,
        // delivers every buffered record: the chain's through the stages
        // into the sinks, the own context's straight into them).
        let plugins = match chain {
            Some(chain) => {
                let before = chain.failures();
                match chain.finish() {
                    Ok(outcome) => PluginReport::finished(outcome),
                    Err(e) => PluginReport::stopped(&before, &e),
                }
            }
            None => PluginReport::default(),
        };
        self.profiler.finalize();
        if let Some(log) = self
            .api_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            log.flush();
        }
        let (mut outputs, meta) = self.sinks.finish(self.live)?;
        if let Some(k) = &self.kernels {
            outputs.notes.push(k.report(self.live));
        }
        if let Some(c) = &self.collection {
            outputs.notes.push(c.report());
        }
        if let Some(r) = self.profiler.regions_report() {
            outputs.notes.push(regions_report(&r));
        }
        if let Some(s) = &self.summaries {
            s.emit(&mut outputs);
        }
        let mut problems = self.start_problems.clone();
        // A process profiled only for native tools without `rocwasm run`
        // runs no plugin and writes no file of ours, not even the audit.
        if self.audit && !self.plan.writes_nothing() {
            problems.extend(self.write_audit(&plugins, &outputs));
        }
        Some(RunReport {
            plugins,
            problems,
            outputs,
            meta,
        })
    }

    /// The run's audit line, into the output directory and the site log.
    fn write_audit(&self, plugins: &PluginReport, outputs: &OutputSummary) -> Vec<String> {
        if let Err(e) = std::fs::create_dir_all(&self.dir) {
            return vec![format!("cannot create {}: {e}", self.dir.display())];
        }
        let failures: Vec<String> = plugins
            .problems
            .iter()
            .cloned()
            .chain(outputs.errors.iter().map(|e| format!("{e:#}")))
            .collect();
        let line = audit::line(&self.plan, &self.admission, !self.live, &failures);
        let problems = audit::write(&line, &self.dir, self.admission.audit_log.as_deref());
        for p in &problems {
            eprintln!("rocwasm: {p}");
        }
        problems
    }
}

/// Creates the stages' output directories, starts the plugin engine and
/// the chain.
fn start_chain(
    engine: EngineConfig,
    env: HostEnv,
    specs: Vec<StageSpec>,
    output: Option<(ChainOutput, Vec<BufferTracingKind>)>,
) -> Result<Chain> {
    for dir in specs.iter().filter_map(|s| s.output_dir.as_ref()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    }
    let engine = Arc::new(PluginEngine::new(engine).context("starting the Wasm runtime")?);
    match output {
        Some((output, kinds)) => Chain::with_output_tracing(engine, env, specs, output, kinds),
        None => Chain::new(engine, env, specs),
    }
    .context("loading the chain's plugins")
}

/// The plan against the site policy in force.
pub(crate) fn admit_under_policy(plan: &RunPlan) -> Result<Admission> {
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
fn traced_process(meta: &RunMetadata) -> TracedProcess {
    TracedProcess {
        hostname: meta.hostname.clone(),
        pid: meta.pid,
        rank: meta.rank,
        job: meta.job.clone(),
    }
}
