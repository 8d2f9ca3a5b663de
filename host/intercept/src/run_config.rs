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

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Environment variable naming the run file.
pub const ENV: &str = "ROCWASM_RUN";
/// File (in the output directory) where the tool writes its end-of-run summary.
pub const SUMMARY_FILE: &str = "rocwasm-summary.txt";
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
    /// `-o`: file name prefix.
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
    /// The chain file, when plugins run in the process.
    #[serde(default)]
    pub chain: Option<PathBuf>,
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
    pub const VERSION: u32 = 1;

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
