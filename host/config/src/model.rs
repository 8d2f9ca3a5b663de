//! The validated chain: what the rest of rocwasm consumes.
//!
//! Every value here has been checked and defaulted by [`crate::validate`];
//! consumers never see a raw TOML value, an alias or a unit string.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use rocwasm_core::{BufferPolicy, BufferTracingKind};

use crate::template::PathTemplate;

/// The chain file format version this rocwasm reads.
pub const FORMAT_VERSION: i64 = 1;

/// Default per-call memory cap of a plugin instance.
pub const DEFAULT_MEMORY_LIMIT: u64 = 256 << 20;
/// Default wall-clock budget of one call into a plugin.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(1);
/// Default buffer size of the chain's delivery buffer.
pub const DEFAULT_BUFFER_SIZE: u64 = 4 << 20;
/// Default watermark, as a fraction of the buffer size (75 %).
pub const DEFAULT_WATERMARK_PERCENT: u64 = 75;
/// Default restart budget of `on_failure = "restart"`.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;
/// Default first delay before a restart (doubled after each restart).
pub const DEFAULT_RESTART_BACKOFF: Duration = Duration::from_millis(100);
/// Default output directory (as rocprofv3's `-d`).
pub const DEFAULT_OUTPUT_DIRECTORY: &str = "%hostname%/%pid%";
/// Default output file prefix (as rocprofv3's `-o`).
pub const DEFAULT_OUTPUT_FILE: &str = "%pid%";

/// A validated chain: host-wide settings, outputs, and the ordered stages.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// The chain file, when the chain came from one.
    pub file: Option<PathBuf>,
    pub settings: Settings,
    pub output: Output,
    pub stages: Vec<Stage>,
}

/// `[settings]`: how the host runs the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The chain's delivery buffer (`[settings.buffer]`).
    pub buffer: BufferSettings,
    /// Threads delivering batches to the chain (`delivery_threads`, ≥ 1).
    pub delivery_threads: u32,
    /// Where compiled components are cached (`plugin_cache`), if not the default.
    pub plugin_cache: Option<PathBuf>,
    /// Extra directories searched for stock plugin names (`plugin_path`),
    /// before the caller's defaults.
    pub plugin_path: Vec<PathBuf>,
    /// Limits for stages that set none (`[settings.limits]`).
    pub limits: Limits,
}

/// The chain's buffer: size, watermark and policy, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferSettings {
    pub size: u64,
    /// Delivery starts when this many bytes are buffered (≤ `size`).
    pub watermark: u64,
    pub policy: BufferPolicy,
}

/// `[output]`: where results go and which host sinks write them.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The run's output directory (`directory`), expanded per process.
    pub directory: PathTemplate,
    /// Prefix of every output file name (`file_prefix`), expanded per process.
    pub file_prefix: PathTemplate,
    /// Host sinks that write the chain's final batches (`formats`).
    pub formats: Vec<OutputFormat>,
    /// Domains recorded for the sinks even if no stage asks for them
    /// (`trace`, the rocprofv3 `--*-trace` flags).
    pub trace: Vec<BufferTracingKind>,
    /// Print the stages' summary tables at the end (`summary`).
    pub summary: bool,
}

/// A host output sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OutputFormat {
    /// rocprofv3-compatible CSV files.
    Csv,
    /// rocprofv3-style JSON.
    Json,
    /// A rocpd-compatible SQLite database.
    Rocpd,
    /// A Perfetto trace.
    Perfetto,
}

impl OutputFormat {
    pub const ALL: &'static [OutputFormat] = &[
        OutputFormat::Csv,
        OutputFormat::Json,
        OutputFormat::Rocpd,
        OutputFormat::Perfetto,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Csv => "csv",
            OutputFormat::Json => "json",
            OutputFormat::Rocpd => "rocpd",
            OutputFormat::Perfetto => "perfetto",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One `[[stage]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Unique within the chain.
    pub name: String,
    pub plugin: PluginRef,
    /// Expected SHA-256 of the component, lowercase hex, when given.
    pub sha256: Option<String>,
    pub kind: StageKind,
    /// The buffer-tracing kinds delivered to this stage, aliases expanded,
    /// deduplicated, in SDK order. Empty: every kind the chain delivers
    /// (an analysis may also set up contexts of its own in `init`).
    pub domains: Vec<BufferTracingKind>,
    /// Operation filters per kind: only these operations are delivered.
    /// A kind absent here gets all its operations.
    pub operations: BTreeMap<BufferTracingKind, Vec<Operation>>,
    /// The stage's `config` table, flattened (`a.b` keys, arrays as JSON).
    pub config: BTreeMap<String, String>,
    pub limits: Limits,
    pub on_failure: FailurePolicy,
    pub output: OutputGrant,
}

/// Where a stage's component comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRef {
    /// The `plugin` value as written.
    pub spec: String,
    /// True for a stock name (`kernel-stats`), false for a path.
    pub stock: bool,
    /// The component file: for a path, joined to the chain file's directory;
    /// for a stock name, the file found on the plugin search path (after
    /// [`Chain::resolve_plugins`](crate::Chain::resolve_plugins)) or the bare
    /// name before.
    pub path: PathBuf,
}

/// An operation named in a stage's `operations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The name as sdk-core's registry spells it.
    pub name: String,
    /// The operation number in sdk-core's registry.
    pub id: u32,
}

/// Analysis stages receive batches; transform stages rewrite them for the
/// stages after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StageKind {
    #[default]
    Analysis,
    Transform,
}

impl StageKind {
    pub fn name(self) -> &'static str {
        match self {
            StageKind::Analysis => "analysis",
            StageKind::Transform => "transform",
        }
    }
}

/// Sandbox limits of a stage's plugin instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Linear-memory cap in bytes.
    pub memory: u64,
    /// Wall-clock budget of one call.
    pub deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory: DEFAULT_MEMORY_LIMIT,
            deadline: DEFAULT_DEADLINE,
        }
    }
}

/// What happens when a stage's plugin traps, exceeds a limit or returns a
/// malformed reply. The application and the other stages always run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// Drop the delivery that failed and carry on (a trapped instance is
    /// replaced by a fresh one).
    Skip,
    /// Take the stage out of the chain for the rest of the run.
    #[default]
    Disable,
    /// Re-instantiate and re-initialise the plugin, at most `max_restarts`
    /// times, waiting `backoff` (doubled after each restart); then disable.
    Restart {
        max_restarts: u32,
        backoff: Duration,
    },
    /// Stop profiling: finalise every stage and exit with status 1 when the
    /// application ends.
    Abort,
}

impl FailurePolicy {
    pub fn name(self) -> &'static str {
        match self {
            FailurePolicy::Skip => "skip",
            FailurePolicy::Disable => "disable",
            FailurePolicy::Restart { .. } => "restart",
            FailurePolicy::Abort => "abort",
        }
    }
}

/// A stage's right to write files through the WIT `output` interface.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OutputGrant {
    /// No grant: every `output` call fails (the default: least privilege).
    #[default]
    None,
    /// The run's output directory (`output = true`).
    RunDirectory,
    /// A subdirectory of the run's output directory (`output = "name"`).
    Subdirectory(String),
}

/// `percent` % of `size`, rounded down, without overflow.
pub fn percent_of(size: u64, percent: u64) -> u64 {
    (size as u128 * percent as u128 / 100) as u64
}
