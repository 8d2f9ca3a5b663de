//! One plugin, alone, on a recorded trace: what `rocwasm plugin vet
//! --trace` and `rocwasm plugin test` both measure.
//!
//! The recording (rocprofv3 CSV directory, JSON or rocpd) is read batch by
//! batch by the replay readers (`rocwasm_formats::replay`) and every batch is delivered to a chain of this
//! one stage, as a replay would. Its files go to a scratch directory that
//! is listed, then removed, so a plugin that writes behaves as in a run.
//! The engine decides what is counted: with `consume_fuel`, every Wasm
//! instruction (wasmtime fuel; about twice as slow), without it the wall
//! time is the plugin's real cost.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use rocwasm_core::{BufferId, ContextId, DeliveryInfo, Profiler};
use rocwasm_formats::replay::ReplayOptions;
use rocwasm_pipeline::SymbolSync;
use rocwasm_plugin_host::{
    Chain, HostEnv, PluginEngine, StageMetrics, StageSpec, SummaryTable, World,
};

/// What one run of the plugin over the trace left.
pub struct Measured {
    /// Records read from the trace.
    pub records: u64,
    /// Wasm instructions executed (when the engine counts fuel).
    pub instructions: Option<u64>,
    /// The most linear memory the instance held, in bytes.
    pub peak_memory: u64,
    /// Failure reports, one line each.
    pub failures: Vec<String>,
    /// The tables its `fini` returned.
    pub summaries: Vec<SummaryTable>,
    /// Names of the files it wrote, sorted.
    pub files: Vec<String>,
    /// Time spent delivering the batches and finishing the chain (trace
    /// reading and plugin compilation excluded).
    pub wall: Duration,
}

/// Replays `trace` through the plugin `file` alone on `engine`, with the
/// `key=value` `config` pairs.
pub fn measure(
    engine: &Arc<PluginEngine>,
    name: &str,
    file: &Path,
    world: World,
    trace: &Path,
    config: &[String],
) -> anyhow::Result<Measured> {
    let mut source = rocwasm_formats::replay::open_with(trace, &ReplayOptions::default())?;
    let profiler = Arc::new(Profiler::new());
    let env = HostEnv::new(profiler.clone()).with_replay(true);
    let mut spec = StageSpec::new(name, file);
    spec.world = Some(world);
    for kv in config {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("--config {kv}: expected KEY=VALUE"))?;
        spec = spec.with_config(k, v);
    }
    let scratch = tempdir_for(name)?;
    spec = spec.with_output_dir(&scratch);
    let result = run_alone(engine, env, &profiler, spec, &mut source);
    let mut files: Vec<String> = std::fs::read_dir(&scratch)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let _ = std::fs::remove_dir_all(&scratch);
    let run = result?;
    Ok(Measured {
        records: source.records(),
        instructions: run.used.instructions,
        peak_memory: run.used.peak_memory,
        failures: run.failures,
        summaries: run.summaries,
        files,
        wall: run.wall,
    })
}

/// A fresh scratch directory for the plugin's files.
fn tempdir_for(name: &str) -> anyhow::Result<std::path::PathBuf> {
    let base = std::env::temp_dir();
    for n in 0..1000u32 {
        let dir = base.join(format!("rocwasm-alone-{}-{name}-{n}", std::process::id()));
        if std::fs::create_dir(&dir).is_ok() {
            return Ok(dir);
        }
    }
    anyhow::bail!("cannot create a scratch directory in {}", base.display())
}

struct Run {
    used: StageMetrics,
    failures: Vec<String>,
    summaries: Vec<SummaryTable>,
    wall: Duration,
}

/// Delivers every batch of `source` to a chain of `spec` alone.
fn run_alone(
    engine: &Arc<PluginEngine>,
    env: HostEnv,
    profiler: &Profiler,
    spec: StageSpec,
    source: &mut rocwasm_formats::replay::ReplaySource,
) -> anyhow::Result<Run> {
    // The trace's kernel symbols, as a replay hands them to the engine, so
    // the plugin's name lookups answer.
    let mut symbols = SymbolSync::default();
    symbols.copy(source.symbols(), profiler.symbols());
    let chain = Chain::new(engine.clone(), env, vec![spec])?;
    let info = DeliveryInfo {
        context: ContextId(1),
        buffer: BufferId(1),
        drop_count: 0,
        process: 0,
    };
    let mut wall = Duration::ZERO;
    while let Some(batch) = source.next_batch()? {
        symbols.copy(source.symbols(), profiler.symbols());
        let started = Instant::now();
        chain.deliver(info, batch)?;
        wall += started.elapsed();
    }
    let started = Instant::now();
    let outcome = chain.finish()?;
    wall += started.elapsed();
    let failures = outcome.failures.iter().map(|f| f.to_string()).collect();
    let (_, used) = outcome.metrics.into_iter().next().unwrap_or_default();
    let summaries = outcome
        .summaries
        .into_iter()
        .next()
        .map(|(_, tables)| tables)
        .unwrap_or_default();
    Ok(Run {
        used,
        failures,
        summaries,
        wall,
    })
}
