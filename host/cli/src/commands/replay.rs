//! `rocwasm replay PATH [-c CHAIN] [--stats -d -o --output-format]`: drive a
//! chain with a recorded rocprofv3 trace, as if the run were live.
//!
//! ```text
//! rocwasm-replay ──batch──> Chain::deliver ──final batch──> host sinks
//!   (CSV dir / JSON /        (transforms, then               (CSV, JSON, rocpd,
//!    rocpd), symbols           analyses)                      Perfetto, --stats)
//! ```
//!
//! What makes a replay look live to plugins:
//! - the kernel symbols, agents and code objects the reader finds are copied
//!   into the engine's symbol table *before* the batch that uses them, so the
//!   `symbols` imports (`kernel-names`, …) answer as in a live run;
//! - kinds and operations were matched by name by the reader, so the numbers
//!   plugins see are this build's; names this build lacks got synthetic
//!   numbers, and the `names` imports answer from the reader's table, so
//!   plugins name those operations as the trace did;
//! - `tool-info.replay` is true.
//!
//! The sinks write what a live run of the same chain would have recorded:
//! the kinds in `[output] trace` and the stages' `domains` (everything, when
//! the chain names none), after the transforms. Sinks and stages claim
//! their files in one registry (`rocwasm_output::OutputClaims`), as in a
//! live run: a file has one producer, a second is refused and reported, and
//! the host's `--stats` files leave to a stage the ones it already wrote.
//!
//! Exit status: 2 when PATH does not exist or the chain is invalid; 1 when
//! the trace is corrupt (one line: `FILE:LINE: what is wrong`), a plugin
//! cannot be loaded, a stage with `on_failure = "abort"` fails, or an output
//! cannot be written (a refused claim included).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use anyhow::Context;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use rocwasm_config::PlanOptions;
use rocwasm_core::{
    Batch, BufferId, BufferTracingKind as K, ContextId, DeliveryInfo, Profiler, SymbolTable,
};
use rocwasm_output::{OutputOptions, Outputs, SinkContext};
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_replay::{OperationNames, ReplayOptions, ReplaySource};
use rocwasm_plugin_host::{
    ChainOutcome, HostEnv, OperationNameTable, PluginEngine, EngineConfig, SummaryTable,
};

use crate::cli::ReplayArgs;
use crate::commands::chain::chain_for;
use crate::failure::{Failure, Result};

/// Rows shown per native `--stats` table.
const STATS_TOP: usize = 20;

pub fn replay(args: ReplayArgs) -> Result {
    if !args.path.exists() {
        return Err(Failure::usage(format!(
            "{}: no such file or directory",
            args.path.display()
        )));
    }
    let mut flags = args.flags();
    // `--stats` asked for the host's own statistics (files and tables) too.
    let host_stats = flags.stats;
    // Replay has no --*-trace flags: without a chain, the useful default is
    // the `--stats` chain (kernel, API and copy statistics plugins).
    if args.chain.is_none() {
        flags.stats = true;
    }
    let chain = chain_for(args.chain.as_deref(), &flags)?;
    let started = Instant::now();
    let since = SystemTime::now();

    let mut source = rocwasm_replay::open_with(&args.path, &ReplayOptions::default())
        .map_err(|e| Failure::Runtime(e.into()))?;
    tracing::info!(path = %args.path.display(), format = ?source.format, "replaying");

    // The same plan a live run of this chain executes, expanded for this
    // process by the same templates.
    let plan = chain.to_plan(&PlanOptions {
        stats: host_stats,
        default_plugin_cache: EngineConfig::default().cache_dir,
        api_log: false,
        command: Vec::new(),
    });
    let process = ProcessInfo::current();
    let run_dir = plan.run_dir(&process);
    let prefix = plan.file_prefix(&process);
    create_output_dirs(&plan, &run_dir)?;

    // The sinks, first: the stages claim their files in the sinks' registry.
    let mut outputs = Outputs::new(&OutputOptions {
        dir: run_dir.clone(),
        name: prefix,
        formats: plan.output.formats.clone(),
        stats: plan.output.stats,
    });

    // The plugins' engine: symbols are copied into it as the reader finds them.
    let profiler = Arc::new(Profiler::new());
    let mut synced = SymbolSync::default();
    synced.copy(source.symbols(), profiler.symbols());
    let env = HostEnv::new(profiler)
        .with_replay(true)
        .with_operation_names(Arc::new(TraceNames(source.names().clone())))
        .with_output_claim(Arc::new(outputs.claims().for_stages()));
    let runtime = PluginEngine::new(EngineConfig {
        cache_dir: plan.plugin_cache.clone(),
        ..EngineConfig::default()
    })
    .context("starting the Wasm runtime")?;
    let specs: Vec<_> = plan
        .stages
        .iter()
        .map(|s| rocwasm_plugin_host::StageSpec::from_plan(s, plan.buffer, &run_dir))
        .collect();
    let plugins = rocwasm_plugin_host::Chain::new(Arc::new(runtime), env.clone(), specs)
        .context("loading the chain's plugins")?;

    let recorded = RecordedKinds(plan.output.kinds.iter().copied().collect());
    let symbols = source.symbols().clone();
    let names = source.names().clone();
    outputs.begin(&SinkContext {
        meta: source.meta(),
        symbols: &symbols,
        names: &names,
    });

    let info = DeliveryInfo {
        context: ContextId(1),
        buffer: BufferId(1),
        drop_count: 0,
    };
    let mut batches = 0u64;
    while let Some(batch) = next_batch(&mut source)? {
        synced.copy(&symbols, env.profiler.symbols());
        let mut out = plugins
            .deliver(info, batch)
            .context("delivering a batch to the chain")?;
        recorded.restrict(&mut out);
        let meta = source.meta().clone();
        let ctx = SinkContext {
            meta: &meta,
            symbols: &symbols,
            names: &names,
        };
        outputs.write_batch(&out, &ctx);
        batches += 1;
    }
    let records = source.records();

    let outcome = plugins.finish().context("finishing the chain")?;
    let meta = source.meta().clone();
    let written = outputs.finish(&SinkContext {
        meta: &meta,
        symbols: &symbols,
        names: &names,
    });

    println!(
        "replayed {records} record(s) in {batches} batch(es) from {} ({}) through {} stage(s) in {:.2} s",
        args.path.display(),
        format_name(source.format),
        outcome.summaries.len(),
        started.elapsed().as_secs_f64(),
    );
    if plan.output.summary {
        print_plugin_tables(&outcome);
    }
    if host_stats {
        println!("host statistics (--stats):");
        print!("{}", written.stats.render_summary(STATS_TOP));
    }
    let files = output_files(&run_dir, written.files, since);
    if !files.is_empty() {
        println!("outputs in {}:", run_dir.display());
        for f in &files {
            println!("  {}", f.strip_prefix(&run_dir).unwrap_or(f).display());
        }
    }
    for note in &written.notes {
        println!("{note}");
    }
    report_problems(&outcome, &written.errors)
}

/// The next batch; a corrupt trace is one `FILE:LINE: …` line, status 1.
fn next_batch(source: &mut ReplaySource) -> Result<Option<Batch>> {
    source.next_batch().map_err(|e| Failure::Runtime(e.into()))
}

/// Plugin failures and sink errors go to stderr; either makes the replay
/// fail (status 1) after everything that could be written was written.
fn report_problems(outcome: &ChainOutcome, sink_errors: &[anyhow::Error]) -> Result {
    for name in &outcome.declined {
        eprintln!("rocwasm: stage `{name}` declined to run (its configure returned false)");
    }
    for f in &outcome.failures {
        eprintln!("rocwasm: {f}");
    }
    for e in sink_errors {
        eprintln!("rocwasm: {e:#}");
    }
    match (outcome.failures.len(), sink_errors.len()) {
        (0, 0) => Ok(()),
        (p, s) => Err(Failure::runtime(format!(
            "replay finished with {p} plugin failure(s) and {s} output error(s) (see above)"
        ))),
    }
}

/// `[output] directory` and every granted subdirectory, before plugins start.
fn create_output_dirs(plan: &RunPlan, run_dir: &Path) -> Result {
    let mut dirs = vec![run_dir.to_path_buf()];
    dirs.extend(
        plan.stages
            .iter()
            .filter_map(|s| s.output.directory(run_dir)),
    );
    for d in dirs {
        std::fs::create_dir_all(&d)
            .with_context(|| format!("cannot create the output directory {}", d.display()))?;
    }
    Ok(())
}

fn format_name(f: rocwasm_replay::TraceFormat) -> &'static str {
    match f {
        rocwasm_replay::TraceFormat::Csv => "rocprofv3 CSV",
        rocwasm_replay::TraceFormat::Json => "rocprofv3 JSON",
        rocwasm_replay::TraceFormat::Rocpd => "rocpd",
    }
}

/// The kinds a live run of the chain would have recorded for the sinks:
/// `[output] trace` plus the analyses' `domains` (a transform's `domains`
/// only say which kinds it filters). Empty = everything.
struct RecordedKinds(BTreeSet<K>);

impl RecordedKinds {
    fn keeps(&self, kind: K) -> bool {
        self.0.is_empty() || self.0.contains(&kind)
    }

    /// Drops the records of kinds the chain does not record.
    fn restrict(&self, batch: &mut Batch) {
        if self.0.is_empty() {
            return;
        }
        batch
            .api_calls
            .retain(|r| K::from_raw(r.kind).is_some_and(|k| self.0.contains(&k)));
        macro_rules! table {
            ($t:ident, $kind:expr) => {
                if !self.keeps($kind) {
                    batch.$t.clear();
                }
            };
        }
        table!(kernel_dispatches, K::KernelDispatch);
        table!(memory_copies, K::MemoryCopy);
        table!(memory_allocations, K::MemoryAllocation);
        table!(scratch_memory, K::ScratchMemory);
        table!(retirements, K::CorrelationIdRetirement);
        table!(runtime_initializations, K::RuntimeInitialization);
    }
}

/// The trace's operation names, for the plugins' `names` imports.
struct TraceNames(Arc<OperationNames>);

impl OperationNameTable for TraceNames {
    fn operation_name(&self, kind: u32, op: u32) -> Option<String> {
        // Only names the table holds: its `name` would invent a fallback.
        self.0
            .operations(kind)
            .into_iter()
            .find(|(o, _)| *o == op)
            .map(|(_, n)| n.to_string())
    }

    fn operations(&self, kind: u32) -> Vec<u32> {
        self.0
            .operations(kind)
            .into_iter()
            .map(|(o, _)| o)
            .collect()
    }
}

/// Copies newly found symbols from the reader's table into the engine's.
/// The CSV reader registers kernel names while it reads, so this runs
/// before every delivery; the tables are small (kernels, not dispatches).
#[derive(Default)]
struct SymbolSync {
    agents: usize,
    code_objects: usize,
    kernels: usize,
}

impl SymbolSync {
    fn copy(&mut self, from: &SymbolTable, to: &SymbolTable) {
        // Readers only ever add entries, so a count that did not move means
        // nothing new (and saves cloning the tables).
        let agents = from.agents();
        if agents.len() != self.agents {
            self.agents = agents.len();
            agents.into_iter().for_each(|a| to.insert_agent(a));
        }
        let cos = from.code_objects();
        if cos.len() != self.code_objects {
            self.code_objects = cos.len();
            cos.into_iter().for_each(|c| to.insert_code_object(c));
        }
        let kernels = from.kernels();
        if kernels.len() != self.kernels {
            self.kernels = kernels.len();
            kernels.into_iter().for_each(|k| to.insert_kernel(k));
        }
    }
}

/// Every stage's `fini` tables, one comfy-table each.
pub(crate) fn print_plugin_tables(outcome: &ChainOutcome) {
    for (stage, tables) in &outcome.summaries {
        for t in tables {
            println!("{}", render_table(stage, t));
        }
    }
}

fn render_table(stage: &str, t: &SummaryTable) -> String {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(t.columns.clone());
    for row in &t.rows {
        table.add_row(row.clone());
    }
    format!("[{stage}] {} ({} row(s))\n{table}", t.title, t.rows.len())
}

/// The files the sinks wrote, then the files the plugins wrote into the
/// output directory during this replay (modified since it started).
fn output_files(run_dir: &Path, sink_files: Vec<PathBuf>, since: SystemTime) -> Vec<PathBuf> {
    let mut seen: BTreeSet<PathBuf> = sink_files.iter().cloned().collect();
    let mut files = sink_files;
    let mut stack = vec![run_dir.to_path_buf()];
    let mut plugin_files = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.modified().is_ok_and(|m| m >= since) && seen.insert(path.clone()) {
                plugin_files.push(path);
            }
        }
    }
    plugin_files.sort();
    files.extend(plugin_files);
    files
}
