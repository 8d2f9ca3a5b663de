//! [`Pipeline`]: the launcher's side of a run, from a plan and a source of
//! batches (a recording, or a process's record journal) to the outputs and
//! one report.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use rocwasm_core::{
    Batch, BufferId, ContextId, DeliveryInfo, DispatchVerdicts, Profiler, SymbolTable,
};
use rocwasm_formats::{
    OperationNames, OutputClaims, OutputOptions, OutputSummary, Outputs, RunMetadata, WriteTiming,
};
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_plugin_host::{
    Chain, EngineConfig, HostEnv, OperationNameTable, PluginEngine, Processes, StageSpec,
};
use rocwasm_policy::Admission;
use rocwasm_record::collection::{regions_report, CollectionGate};
use rocwasm_record::kernels::KernelSelection;
use rocwasm_record::live::{traced_process, write_audit};
use rocwasm_record::stages::stage_specs;
use rocwasm_record::{admit_under_policy, PluginReport, SinkRoute};

use crate::sinks::Sinks;
use crate::summaries::Summaries;

/// What a source knows of its records before the first batch.
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

/// One run on the launcher's side: the plan's outputs (each file with one
/// producer), its chain of plugins, and the engine whose symbol table they
/// share; fed batch by batch ([`Pipeline::deliver`]) and finished once into
/// a [`RunReport`]. See the crate docs for the data flow.
pub struct Pipeline {
    plan: RunPlan,
    dir: PathBuf,
    profiler: Arc<Profiler>,
    sinks: Arc<Sinks>,
    route: SinkRoute,
    chain: Mutex<Option<Chain>>,
    start_problems: Vec<String>,
    /// What the site policy admitted, for the audit line.
    admission: Admission,
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
    /// Per process, the dispatch filter's verdicts so far: a replayed
    /// dispatch's counter samples follow its record's verdict (and the
    /// filter is asked once per dispatch).
    verdicts: Mutex<HashMap<u32, DispatchVerdicts>>,
}

/// What a finished run leaves: the chain's tables and problems, the
/// outputs' files, statistics and errors, the run's metadata.
pub struct RunReport {
    /// The chain's tables and problems.
    pub plugins: PluginReport,
    /// Problems outside the chain: writing the audit line.
    pub problems: Vec<String>,
    /// What the sinks wrote.
    pub outputs: OutputSummary,
    /// The files the stages wrote (through the plugins' `output`, here or,
    /// for a journaled process, in the process), with the stage's name,
    /// in path order; each exists. A statistics file the host's sink left
    /// to a stage is among them.
    pub stage_files: Vec<(PathBuf, String)>,
    /// The run's metadata.
    pub meta: RunMetadata,
}

impl Pipeline {
    /// Sets up the run `plan` describes for the recorded process `process`
    /// (which expands the output templates): the sinks, the chain
    /// (compiled or loaded from the cache, configured, initialised), the
    /// recording's symbols in the engine; then opens the outputs. Every
    /// failure to start is an error. `notes` are lines the report should
    /// carry.
    pub fn start(
        plan: RunPlan,
        process: &ProcessInfo,
        recording: Recording,
        notes: Vec<String>,
    ) -> Result<Pipeline> {
        let dir = plan.run_dir(process);
        let admission = admit_under_policy(&plan)?;
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
            // Nobody waits for these writes: as batches come.
            timing: WriteTiming::DuringRun,
            parquet_hive_root: plan.parquet_hive_root(process),
        });
        let claims = outputs.claims();
        let profiler = Arc::new(Profiler::new());
        let kernels = KernelSelection::install(&plan.kernels, &profiler)?;
        let specs = stage_specs(&plan, process);
        let meta = recording.meta.clone();
        // Windows count from the recording's start.
        let collection = CollectionGate::install(&plan.collection, meta.start_ns, &profiler)?;
        if plan.collection.selected_regions {
            anyhow::bail!(
                "{} needs the live application (roctxProfilerResume/roctxProfilerPause as it runs); a recording keeps no pause state: drop it, or use -P/--collection-period",
                rocwasm_plan::CollectionPlan::SELECTED_REGIONS
            );
        }
        let prefix = plan.file_prefix(process);
        let summaries = Summaries::new(&plan.summary, &dir, prefix.as_deref(), &claims)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let processes = Processes::new(traced_process(&meta));
        let sinks = Arc::new(Sinks::new(
            outputs,
            meta,
            profiler.clone(),
            recording.names.clone(),
        ));
        let env = HostEnv::new(profiler.clone())
            .with_output_claim(Arc::new(claims.for_stages()))
            .with_processes(processes.clone());
        let mut pipeline = Pipeline {
            route: SinkRoute::replay(&plan.output.kinds),
            chain: Mutex::new(None),
            start_problems: notes,
            admission,
            finished: AtomicBool::new(false),
            kernels,
            collection,
            summaries,
            processes,
            audit: true,
            claims,
            verdicts: Mutex::new(HashMap::new()),
            plan,
            dir,
            profiler,
            sinks,
        };
        pipeline.start_chain(env, specs, recording)?;
        pipeline.sinks.begin();
        Ok(pipeline)
    }

    /// Every directory the plan names exists before the plugins start, and
    /// the chain must start (an error otherwise).
    fn start_chain(&mut self, env: HostEnv, specs: Vec<StageSpec>, r: Recording) -> Result<()> {
        std::fs::create_dir_all(&self.dir).with_context(|| {
            format!("cannot create the output directory {}", self.dir.display())
        })?;
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
        if specs.is_empty() {
            return Ok(());
        }
        for dir in specs.iter().filter_map(|s| s.output_dir.as_ref()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
        }
        let env = env.with_replay(true).with_operation_names(r.plugin_names);
        let engine = EngineConfig {
            cache_dir: self.plan.plugin_cache.clone(),
            site_cache_dir: self.admission.site_cache.clone(),
            ..EngineConfig::default()
        };
        let engine = Arc::new(PluginEngine::new(engine).context("starting the Wasm runtime")?);
        let chain = Chain::new(engine, env, specs).context("loading the chain's plugins")?;
        *self.chain.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(chain);
        Ok(())
    }

    /// The sinks take exactly `kinds` (none when empty), whatever else the
    /// source holds: a journal also carries what the launcher's stages
    /// trace.
    pub(crate) fn write_only(&mut self, kinds: &[rocwasm_core::BufferTracingKind]) {
        let everything: std::collections::BTreeMap<_, Option<Vec<u32>>> =
            rocwasm_core::BufferTracingKind::ALL
                .iter()
                .map(|&k| (k, None))
                .collect();
        self.route = SinkRoute::new(kinds, &everything);
    }

    /// Leaves the audit line out of the end (writing a journal's outputs:
    /// the process wrote its own).
    pub fn skip_audit(&mut self) {
        self.audit = false;
    }

    /// Claims for their stages the files a journaled process's stages
    /// wrote (after the sinks claimed theirs); a refusal is reported as
    /// any other.
    pub(crate) fn claim_stage_files(&self, files: &[(PathBuf, String)]) {
        for (path, stage) in files {
            let _ = self
                .claims
                .claim(path, &rocwasm_formats::Producer::Stage(stage.clone()));
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
        self.profiler.select_batch(
            &mut batch,
            self.verdicts
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(process)
                .or_default(),
        );
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
        self.route.write(&out, |b| self.sinks.write(b));
        Ok(())
    }

    /// The arguments of API calls a live run journaled, before the batch
    /// holding their records: to the outputs that write them (rocpd).
    pub fn call_args(&self, args: &[rocwasm_formats::CallArgs]) {
        self.sinks.call_args(args);
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
        let plugins = PluginReport::finish_chain(chain);
        self.profiler.finalize();
        let (mut outputs, meta) = self.sinks.finish()?;
        if let Some(k) = &self.kernels {
            outputs.notes.push(k.report(false));
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
            let failures: Vec<String> = plugins
                .problems
                .iter()
                .cloned()
                .chain(outputs.errors.iter().map(|e| format!("{e:#}")))
                .collect();
            problems.extend(write_audit(
                &self.plan,
                &self.admission,
                &self.dir,
                true,
                &failures,
            ));
        }
        let stage_files = self.stage_files();
        Some(RunReport {
            plugins,
            problems,
            outputs,
            stage_files,
            meta,
        })
    }

    /// The files the stages hold in the run's registry and that exist,
    /// spelt under [`Self::dir`] as the sinks spell theirs (the registry
    /// keeps canonical paths).
    fn stage_files(&self) -> Vec<(PathBuf, String)> {
        let canonical_dir = std::fs::canonicalize(&self.dir).ok();
        self.claims
            .stage_files()
            .into_iter()
            .filter(|(path, _)| path.is_file())
            .map(|(path, stage)| {
                let spelt = canonical_dir
                    .as_deref()
                    .and_then(|d| path.strip_prefix(d).ok())
                    .map(|rel| self.dir.join(rel));
                (spelt.unwrap_or(path), stage)
            })
            .collect()
    }
}
