//! [`RunPlan`]: what one run does, resolved.
//!
//! # The contract
//!
//! The plan is the one interface between whoever decides what a run does
//! (the CLI, from a chain file and flags) and whoever does it (the tool
//! library inside the profiled process, or `rocwasm replay`):
//!
//! - **what the sinks write** ([`OutputPlan`]): the output directory and file
//!   prefix as [`PathTemplate`]s, expanded per process; the formats; the
//!   kinds recorded for them; statistics and the terminal summary;
//! - **which plugins run** ([`StagePlan`]s, in chain order): component
//!   (absolute path), world, kind filter, domains and operation filters,
//!   config, limits, failure policy, output grant; and the chain's
//!   [`BufferSettings`];
//! - **which kernel dispatches are kept and how kernels are named**
//!   ([`KernelPlan`]: rocprofv3's kernel options) and **when the run
//!   collects** ([`CollectionPlan`]: `-P/--collection-period`,
//!   `--selected-regions`) and **which summaries it prints**
//!   ([`SummaryPlan`]: `-S`, `--summary-groups`);
//! - **process rules**: what a forked child does, the API call log, the
//!   profiled command (for the outputs' metadata), the compiled-component
//!   cache.
//!
//! Stock plugin names, aliases, sizes and durations are resolved before a
//! plan exists, so its reader parses no TOML and searches no plugin path.
//! In the file, kinds and operations are written by name and durations in
//! nanoseconds; output grants stay relative to the run's output directory,
//! which only the process itself can expand (`%pid%`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use rocwasm_ids::BufferTracingKind;
use serde::{Deserialize, Serialize};

use crate::collection::CollectionPlan;
use crate::format::{OutputFormat, WriteTiming};
use crate::kernels::KernelPlan;
use crate::serde_ids::{kinds, operations};
use crate::stage::{
    BufferSettings, FailurePolicy, Limits, OutputGrant, Placement, Services, World,
};
use crate::summary::SummaryPlan;
use crate::template::{PathTemplate, ProcessInfo};

/// Everything one run does. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunPlan {
    /// Format version; a reader refuses any other ([`RunPlan::VERSION`]).
    pub version: u32,
    /// The chain file the plan came from (for messages only).
    #[serde(default)]
    pub chain: Option<PathBuf>,
    /// What the host's sinks write, and where.
    pub output: OutputPlan,
    /// The plugin chain, in order; empty: none.
    #[serde(default)]
    pub stages: Vec<StagePlan>,
    /// The chain's shared delivery buffer (also the sinks' buffer size).
    pub buffer: BufferSettings,
    /// Where compiled components are cached; `None`: compile every run.
    #[serde(default)]
    pub plugin_cache: Option<PathBuf>,
    /// What a `fork()`ed child does.
    #[serde(default)]
    pub fork: ForkPolicy,
    /// Also write every API call with its arguments and return value to
    /// [`RunPlan::API_LOG_FILE`] (callback tracing of the traced API kinds).
    #[serde(default)]
    pub api_log: bool,
    /// The profiled command, for the outputs' metadata.
    #[serde(default)]
    pub command: Vec<String>,
    /// Which kernel dispatches are kept and how kernels are named
    /// (rocprofv3's kernel options); left out of the file when unset.
    #[serde(default, skip_serializing_if = "KernelPlan::is_default")]
    pub kernels: KernelPlan,
    /// When the run collects (rocprofv3's `-P/--collection-period`); left
    /// out of the file when unset.
    #[serde(default, skip_serializing_if = "CollectionPlan::is_default")]
    pub collection: CollectionPlan,
    /// The end-of-run summaries of the tracing data (rocprofv3's `-S`,
    /// `--summary-groups`, …); left out of the file when unset.
    #[serde(default, skip_serializing_if = "SummaryPlan::is_default")]
    pub summary: SummaryPlan,
    /// The record journal's directory (set by `rocwasm run`): the process
    /// appends what the outputs need to `<journal>/<pid>.journal`, keeps
    /// its output buffers' halves in files beside it, and writes no output
    /// format itself; the launcher writes them from the journal, however
    /// the process ended. `None`: the process writes its outputs at exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<PathBuf>,
}

/// What the host's sinks write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputPlan {
    /// The run's output directory, expanded per process.
    pub directory: PathTemplate,
    /// Prefix of the output file names (`<prefix>_kernel_trace.csv`);
    /// `None`: rocprofv3's plain names.
    #[serde(default)]
    pub file_prefix: Option<PathTemplate>,
    /// The host sinks that write the chain's final batches.
    #[serde(default)]
    pub formats: Vec<OutputFormat>,
    /// Write the host's `*_stats.csv` files.
    #[serde(default)]
    pub stats: bool,
    /// When a live run writes them: from a spool at the end (the default)
    /// or as batches come.
    #[serde(default)]
    pub write: WriteTiming,
    /// Buffer-tracing kinds recorded for the sinks.
    #[serde(default, with = "kinds")]
    pub kinds: Vec<BufferTracingKind>,
    /// Print the stages' summary tables at the end.
    #[serde(default)]
    pub summary: bool,
    /// Record each traced API call's arguments for rocpd's `rocpd_arg`
    /// (`--api-args`; needs rocpd among `formats`).
    #[serde(default)]
    pub api_args: bool,
    /// `--parquet-layout hive`: the root of the Hive-partitioned Parquet
    /// dataset every process of the run writes into (the output
    /// directory's [`PathTemplate::shared_prefix`], kept when a forked
    /// child's directory replaces `directory`); `None`: each process's
    /// Parquet files go to its output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parquet_root: Option<PathTemplate>,
}

/// One stage of the chain, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagePlan {
    /// Unique within the chain; prefixes the plugin's log lines and reports.
    pub name: String,
    /// The component file (absolute).
    pub wasm: PathBuf,
    /// The store reference a shipped plugin was pulled from (`oci://…`,
    /// `dir://…`); `wasm` is then the node's cached copy. `None`: a local file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The world the chain expects; `None`: whatever the component implements.
    #[serde(default)]
    pub world: Option<World>,
    /// Buffer-tracing kinds the stage receives; `None`: all.
    #[serde(default, with = "kinds::option")]
    pub kinds: Option<Vec<BufferTracingKind>>,
    /// Kinds the chain traces *for* the stage (the chain file's `domains`).
    #[serde(default, with = "kinds")]
    pub domains: Vec<BufferTracingKind>,
    /// Per kind, the operations the stage sees; a kind absent, or with an
    /// empty list: all of its operations.
    #[serde(default, with = "operations")]
    pub operations: BTreeMap<BufferTracingKind, Vec<u32>>,
    /// The stage's `config` table, flattened (`a.b` keys, arrays as JSON).
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// The sandbox's caps.
    pub limits: Limits,
    /// What a failure of the plugin does.
    pub failure: FailurePolicy,
    /// Where the plugin may write, under the run's output directory.
    #[serde(default)]
    pub output: OutputGrant,
    /// Callback tracing and external-correlation requests: asked, withheld
    /// or (after admission) decided.
    #[serde(default, skip_serializing_if = "Services::is_default")]
    pub services: Services,
    /// Where the stage runs: in the application (the default) or in the
    /// launcher, on the record journal's batches.
    #[serde(default, skip_serializing_if = "Placement::is_default")]
    pub placement: Placement,
}

/// What a `fork()`ed child of the profiled process does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForkPolicy {
    /// A run of its own, in a directory of its own.
    #[default]
    Run,
    /// Not profiled.
    None,
}

/// Why a plan file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(pub String);

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlanError {}

impl RunPlan {
    /// 3: one plan type (was 2: the run file with its own stage types).
    pub const VERSION: u32 = 3;
    /// Environment variable naming the plan file of a live run.
    pub const ENV: &'static str = "ROCWASM_RUN";
    /// Environment variable naming the plan file of a live run under
    /// `--backend rocprofiler-sdk`: read by rocwasm's rocprofiler-sdk tool
    /// (`rocwasm-sdk-tool`), not by the tool library, which then acts as the
    /// SDK only.
    pub const SDK_TOOL_ENV: &'static str = "ROCWASM_SDK_TOOL_RUN";
    /// File (in the output directory) where the tool writes its end-of-run summary.
    pub const SUMMARY_FILE: &'static str = "rocwasm-summary.txt";
    /// The summary's words after the number of plugin stages that finished in
    /// the process (`rocwasm demo` reads it to tell a live chain from none).
    pub const PLUGINS_RAN: &'static str = "plugin stage(s) ran in the process";
    /// File (in the output directory) of the API call log (`api_log`).
    pub const API_LOG_FILE: &'static str = "api_calls.txt";

    /// The plan of a process that runs native rocprofiler-sdk tools without
    /// `rocwasm run` (a tool linked into the application, or named by
    /// `ROCP_TOOL_LIBRARIES`): no plugins, no output files, no summary —
    /// the tools write what they write.
    pub fn native_tools_only() -> RunPlan {
        RunPlan {
            version: Self::VERSION,
            chain: None,
            output: OutputPlan {
                directory: PathTemplate::literal("."),
                file_prefix: None,
                formats: Vec::new(),
                stats: false,
                write: WriteTiming::default(),
                kinds: Vec::new(),
                summary: false,
                api_args: false,
                parquet_root: None,
            },
            stages: Vec::new(),
            buffer: BufferSettings::default(),
            plugin_cache: None,
            fork: ForkPolicy::None,
            api_log: false,
            command: Vec::new(),
            kernels: KernelPlan::default(),
            collection: CollectionPlan::default(),
            summary: SummaryPlan::default(),
            journal: None,
        }
    }

    /// The record journal directory of a run whose launcher (or, without
    /// one, whose profiled process) has process id `pid`: in the part of
    /// the output directory that names no process (on the file system the
    /// user chose for the outputs, often larger than `/tmp` on a compute
    /// node), `.rocwasm-journal-<pid>`.
    pub fn journal_dir_for(&self, pid: u32) -> PathBuf {
        let fixed: PathBuf = Path::new(self.output.directory.as_str())
            .components()
            .take_while(|c| !c.as_os_str().to_string_lossy().contains('%'))
            .collect();
        fixed.join(format!(".rocwasm-journal-{pid}"))
    }

    /// The file in a journal directory that holds the run's plan (for
    /// `rocwasm write-journal`).
    pub const JOURNAL_PLAN_FILE: &'static str = "plan.json";

    /// True for [`RunPlan::native_tools_only`]'s plan: nothing to write.
    pub fn writes_nothing(&self) -> bool {
        self.chain.is_none()
            && self.stages.is_empty()
            && self.output.formats.is_empty()
            && !self.output.stats
            && !self.output.summary
            && !self.api_log
    }

    /// Reads a plan file, refusing other versions.
    pub fn load(path: &Path) -> Result<Self, PlanError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| PlanError(format!("cannot read the run plan {}: {e}", path.display())))?;
        Self::from_json(&text)
            .map_err(|e| PlanError(format!("invalid run plan {}: {e}", path.display())))
    }

    /// Parses a plan, refusing other versions.
    pub fn from_json(text: &str) -> Result<Self, PlanError> {
        #[derive(Deserialize)]
        struct Version {
            version: u32,
        }
        let version: Version = serde_json::from_str(text).map_err(|e| PlanError(format!("{e}")))?;
        if version.version != Self::VERSION {
            return Err(PlanError(format!(
                "run plan version {} (this tool reads {})",
                version.version,
                Self::VERSION
            )));
        }
        serde_json::from_str(text).map_err(|e| PlanError(format!("{e}")))
    }

    /// The plan as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a plan always serialises")
    }

    /// The output directory of `process`.
    pub fn run_dir(&self, process: &ProcessInfo) -> PathBuf {
        PathBuf::from(self.output.directory.expand(process))
    }

    /// The root of the Hive-partitioned Parquet dataset `process` writes
    /// into (`--parquet-layout hive`, [`OutputPlan::parquet_root`]); `None`
    /// for the flat layout.
    pub fn parquet_hive_root(&self, process: &ProcessInfo) -> Option<PathBuf> {
        self.output
            .parquet_root
            .as_ref()
            .map(|t| PathBuf::from(t.expand(process)))
    }

    /// The output file prefix of `process`, if any.
    pub fn file_prefix(&self, process: &ProcessInfo) -> Option<String> {
        self.output.file_prefix.as_ref().map(|t| t.expand(process))
    }

    /// Every kind the run records: the sinks' and the stages' domains, in
    /// first-seen order.
    pub fn traced_kinds(&self) -> Vec<BufferTracingKind> {
        let mut kinds = self.output.kinds.clone();
        for kind in self.stages.iter().flat_map(|s| &s.domains) {
            if !kinds.contains(kind) {
                kinds.push(*kind);
            }
        }
        kinds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan() -> RunPlan {
        RunPlan {
            version: RunPlan::VERSION,
            chain: None,
            output: OutputPlan {
                directory: PathTemplate::parse("/out/%job%/%rank%/%env{USER}%").unwrap(),
                file_prefix: None,
                formats: vec![OutputFormat::Csv, OutputFormat::Pftrace],
                stats: true,
                write: WriteTiming::DuringRun,
                kinds: vec![BufferTracingKind::KernelDispatch],
                summary: true,
                api_args: false,
                parquet_root: None,
            },
            stages: vec![StagePlan {
                name: "bw".into(),
                wasm: "/p/bw.wasm".into(),
                source: None,
                world: Some(World::Analysis),
                kinds: Some(vec![BufferTracingKind::MemoryCopy]),
                domains: vec![BufferTracingKind::MemoryCopy],
                operations: [(BufferTracingKind::MemoryCopy, vec![2, 3])].into(),
                config: [("top".to_string(), "5".to_string())].into(),
                limits: Limits::default(),
                failure: FailurePolicy::Restart {
                    max: 2,
                    backoff: Duration::from_millis(10),
                },
                output: OutputGrant::Subdirectory("bw".into()),
                services: Services::default(),
                placement: Placement::default(),
            }],
            buffer: BufferSettings::default(),
            plugin_cache: None,
            fork: ForkPolicy::Run,
            api_log: false,
            command: vec!["./app".into()],
            kernels: KernelPlan::default(),
            collection: CollectionPlan::default(),
            summary: SummaryPlan::default(),
            journal: None,
        }
    }

    #[test]
    fn a_plan_round_trips_with_kinds_and_operations_by_name() {
        let p = plan();
        let json = p.to_json();
        assert!(json.contains("\"MEMORY_COPY\""), "{json}");
        assert!(json.contains("\"MEMORY_COPY_HOST_TO_DEVICE\""), "{json}");
        assert!(json.contains("\"/out/%job%/%rank%/%env{USER}%\""), "{json}");
        assert_eq!(RunPlan::from_json(&json).unwrap(), p);
    }

    #[test]
    fn other_versions_and_unknown_names_are_refused() {
        let json = plan().to_json();
        let old = json.replace("\"version\": 3", "\"version\": 2");
        let err = RunPlan::from_json(&old).unwrap_err();
        assert_eq!(err.0, "run plan version 2 (this tool reads 3)");
        let bad = json.replace("\"MEMORY_COPY_HOST_TO_DEVICE\"", "\"SIDEWAYS\"");
        let err = RunPlan::from_json(&bad).unwrap_err();
        assert!(
            err.0.contains("MEMORY_COPY has no operation \"SIDEWAYS\""),
            "{err}"
        );
        let bad = json.replace("%rank%", "%rnk%");
        let err = RunPlan::from_json(&bad).unwrap_err();
        assert!(err.0.contains("unknown key `%rnk%`"), "{err}");
    }

    #[test]
    fn the_run_directory_expands_every_key() {
        let process = ProcessInfo {
            hostname: "node7".into(),
            pid: 42,
            ppid: 1,
            vars: [
                ("SLURM_JOB_ID", "777"),
                ("SLURM_PROCID", "3"),
                ("USER", "ada"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        };
        assert_eq!(plan().run_dir(&process), Path::new("/out/777/3/ada"));
    }
}
