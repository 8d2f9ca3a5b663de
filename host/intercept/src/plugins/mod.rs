//! The chain's Wasm plugins, running inside the profiled application.
//!
//! ```text
//! start:  RunStage (run file) ─spec─> StageSpec ─> Chain::with_output
//!         (compile or load from the cache → configure all → chain context
//!          and buffer → init all → lock → start)
//! run:    chain buffer ─> stage 1 ─> … ─> stage n ─> output hook ─> sinks
//!         app thread ─> callback tracing / external-correlation request
//!                       ─> the subscribed plugin, synchronously
//! finish: final flush ─> each fini once ─> tables and failures for
//!         rocwasm-summary.txt
//! ```
//!
//! # Signals
//!
//! Wasmtime normally installs SIGSEGV, SIGILL, SIGBUS and SIGFPE handlers
//! (out-of-bounds accesses and divisions by zero in guests fault in
//! hardware and the handler turns the fault into a trap). Inside someone
//! else's process those handlers would sit in front of the application's
//! own, and an application that installs its handlers later would break
//! wasm traps. The tool's engine therefore runs with
//! `signals_based_traps(false)`: wasmtime installs no handler and compiles
//! explicit bounds and divisor checks instead (guests run somewhat slower;
//! compiled components are cached under a different engine hash than the
//! CLI's). Traps, deadlines (epochs) and memory caps work the same.
//!
//! # Failures
//!
//! Nothing here may end the application: a chain that cannot start leaves
//! profiling running without plugins (the sinks then trace every kind
//! themselves), a plugin that fails is handled by its stage's policy, and
//! every failure becomes one `rocwasm:` line on stderr and in the summary.

pub mod spec;
pub mod summary;

use std::sync::Arc;

use anyhow::{Context, Result};
use rocwasm_core::Profiler;
use rocwasm_output::OutputClaims;
use rocwasm_plugin_host::{Chain, ChainOutput, HostEnv, PluginEngine, EngineConfig, StageSpec};

use rocwasm_plan::RunPlan;
use summary::PluginReport;

/// Compiles (or loads) and starts the chain; `output` receives its final
/// batches. Creates the stages' output directories first. The stages'
/// `output` writes are claimed in `claims`, the registry the session's sinks
/// claim their files in, so a stage cannot overwrite a sink's file (or the
/// other way round).
pub fn start(
    config: &RunPlan,
    specs: Vec<StageSpec>,
    profiler: Arc<Profiler>,
    output: ChainOutput,
    claims: OutputClaims,
) -> Result<Chain> {
    for dir in specs.iter().filter_map(|s| s.output_dir.as_ref()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    }
    let runtime = PluginEngine::new(EngineConfig {
        cache_dir: config.plugin_cache.clone(),
        signals_based_traps: false,
        ..EngineConfig::default()
    })
    .context("starting the Wasm runtime")?;
    let env = HostEnv::new(profiler).with_output_claim(Arc::new(claims.for_stages()));
    Chain::with_output(Arc::new(runtime), env, specs, output).context("starting the plugin chain")
}

/// Finishes the chain (final flush of every buffer, each `fini` once) and
/// collects what the summary shows.
pub fn finish(chain: Chain) -> PluginReport {
    let before = chain.failures();
    match chain.finish() {
        Ok(outcome) => PluginReport {
            tables: outcome.summaries,
            problems: outcome
                .declined
                .iter()
                .map(|name| {
                    format!("stage `{name}` declined to run (its configure returned false)")
                })
                .chain(outcome.failures.iter().map(|f| f.to_string()))
                .collect(),
        },
        // An `abort` policy stopped the run: the reports gathered so far,
        // then why it stopped.
        Err(e) => PluginReport {
            tables: Vec::new(),
            problems: before
                .iter()
                .map(|f| f.to_string())
                .chain([format!("the plugin chain stopped: {e:#}")])
                .collect(),
        },
    }
}
