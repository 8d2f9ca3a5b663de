//! The run configuration `rocwasm run` writes and the tool library reads.
//!
//! The launcher resolves everything that needs the command line or the chain
//! file (which kinds are traced, which outputs, which plugins) and writes it
//! as JSON; `ROCWASM_RUN` names the file. The in-process side then needs no
//! argument parsing and no TOML.
//!
//! This file is compiled into both `rocwasm-intercept` and the `rocwasm` CLI
//! (`#[path]` include): one definition, and the CLI never links the
//! interposers. It may use only `serde` and `std`.
//!
//! # The contract
//!
//! The run file is the one interface between the launcher and the tool:
//!
//! - **what the sinks write**: `kinds` (SDK buffer-tracing names),
//!   `formats`, `stats`, `output_dir`/`output_name`;
//! - **which plugins run in the process**: `stages`, in chain order, each a
//!   [`RunStage`] carrying everything the runtime's `StageSpec` needs
//!   (component path, world, kind filter, domains, operation filters,
//!   config, limits, failure policy, output grant, chain buffer), and
//!   `plugin_cache`, where the tool caches compiled components;
//! - **process rules**: `fork`, `api_log`, `command`.
//!
//! The launcher resolves the chain file (stock names to paths, aliases to
//! kinds, sizes and durations to numbers) so that the tool parses no TOML
//! and searches no plugin path. Kinds and operations travel by *name*, so
//! the file reads well and a mismatch between the two sides' registries is
//! an error rather than a silent renumbering. Paths are absolute; a stage's
//! output grant is relative to the run's output directory, which the tool
//! expands per process (a forked child moves it with the run directory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Environment variable naming the run file.
pub const ENV: &str = "ROCWASM_RUN";
/// File (in the output directory) where the tool writes its end-of-run summary.
pub const SUMMARY_FILE: &str = "rocwasm-summary.txt";
/// The summary's words after the number of plugin stages that finished in
/// the process (`rocwasm demo` reads it to tell a live chain from none).
pub const PLUGINS_RAN: &str = "plugin stage(s) ran in the process";
/// File (in the output directory) of the API call log (`api_log`).
pub const API_LOG_FILE: &str = "api_calls.txt";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Format version of this file.
    pub version: u32,
    /// Output directory template: `%pid%`, `%hostname%`, `%rank%` are expanded
    /// in the profiled process.
    pub output_dir: String,
    /// `[output] file_prefix` or `-o` (unless the default): file name
    /// prefix, a template expanded in the profiled process like `output_dir`.
    #[serde(default)]
    pub output_name: Option<String>,
    /// `csv`, `json`, `rocpd`, `pftrace`.
    #[serde(default)]
    pub formats: Vec<String>,
    /// Write `*_stats.csv`.
    #[serde(default)]
    pub stats: bool,
    /// Buffer-tracing kinds by SDK name (`KERNEL_DISPATCH`, `HIP_RUNTIME_API`, …).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// The chain file the stages came from (for messages only).
    #[serde(default)]
    pub chain: Option<PathBuf>,
    /// The plugin chain the tool runs in the process, in order; empty: none.
    #[serde(default)]
    pub stages: Vec<RunStage>,
    /// Where the tool caches compiled components; `None`: compile every run.
    #[serde(default)]
    pub plugin_cache: Option<PathBuf>,
    /// Buffer size in bytes (0 = default).
    #[serde(default)]
    pub buffer_size: u64,
    /// What a `fork()`ed child does: `run` (its own run, own directory) or `none`.
    #[serde(default = "default_fork")]
    pub fork: String,
    /// Also write every API call with its arguments and return value to
    /// `api_calls.txt` (callback tracing of the traced API kinds).
    #[serde(default)]
    pub api_log: bool,
    /// The profiled command, for the metadata of outputs.
    #[serde(default)]
    pub command: Vec<String>,
}

fn default_fork() -> String {
    "run".into()
}

impl RunConfig {
    /// 2: `stages` and `plugin_cache` (the chain runs in the process).
    pub const VERSION: u32 = 2;

    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let cfg: RunConfig = serde_json::from_str(&text)
            .map_err(|e| format!("invalid run file {}: {e}", path.display()))?;
        if cfg.version != Self::VERSION {
            return Err(format!(
                "run file version {} (this tool reads {})",
                cfg.version,
                Self::VERSION
            ));
        }
        Ok(cfg)
    }

    /// The output directory for process `pid`.
    pub fn expand_dir(&self, pid: u32) -> PathBuf {
        PathBuf::from(expand(&self.output_dir, pid))
    }
}

/// One stage of the chain, resolved by the launcher: what the tool turns into
/// a `rocwasm_runtime::StageSpec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunStage {
    /// Unique within the chain.
    pub name: String,
    /// The component file (absolute).
    pub wasm: PathBuf,
    /// `analysis` or `transform`: the world the chain expects (`None`:
    /// whatever the component implements).
    #[serde(default)]
    pub world: Option<String>,
    /// Buffer-tracing kinds (SDK names) the stage receives; `None`: all.
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    /// Kinds the chain traces for the stage (the chain file's `domains`).
    #[serde(default)]
    pub domains: Vec<String>,
    /// Per kind (SDK name), the operation names the stage sees; a kind
    /// absent or with an empty list: all of its operations.
    #[serde(default)]
    pub operations: BTreeMap<String, Vec<String>>,
    /// The stage's `config` table, flattened.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    pub limits: RunLimits,
    pub failure: RunFailure,
    /// Where the plugin may write, relative to the run's output directory:
    /// `None` no writes, `""` the directory itself, `"sub"` a subdirectory.
    #[serde(default)]
    pub output: Option<String>,
    /// The chain's shared buffer (every stage carries the same values).
    pub buffer: RunBuffer,
}

/// A stage's resource caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLimits {
    pub memory_bytes: u64,
    /// Budget of one delivery or life-cycle call.
    pub deadline_ns: u64,
    /// Budget of one synchronous call on an application thread.
    pub callback_deadline_ns: u64,
    pub output_bytes: u64,
    pub log_per_second: u32,
}

/// What happens when the stage's plugin fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RunFailure {
    Skip,
    Disable,
    Restart { max: u32, backoff_ns: u64 },
    Abort,
}

/// The chain's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunBuffer {
    pub size: u64,
    pub watermark: u64,
    /// `true`: producers wait rather than lose records; `false`: discard
    /// and count.
    pub lossless: bool,
}

/// Expands `%pid%`, `%hostname%` and `%rank%` (from the MPI launchers' variables).
pub fn expand(template: &str, pid: u32) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let rank = [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
        "MV2_COMM_WORLD_RANK",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok())
    .unwrap_or_else(|| "0".into());
    template
        .replace("%pid%", &pid.to_string())
        .replace("%hostname%", &host)
        .replace("%rank%", &rank)
}
