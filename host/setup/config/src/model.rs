//! The validated chain: what the rest of rocwasm consumes.
//!
//! Every value here has been checked and defaulted by [`crate::validate`];
//! consumers never see a raw TOML value, an alias or a unit string.

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use rocwasm_core::{BufferPolicy, BufferTracingKind};
/// A stage's vocabulary, defined once in the run plan.
pub use rocwasm_plan::{
    BufferSettings, FailurePolicy, IterationRange, KernelPlan, Limits, OutputFormat, OutputGrant,
    ParquetLayout, PathTemplate, Placement, Services, World, WriteTiming,
};

/// The chain file format version this rocwasm reads.
pub const FORMAT_VERSION: i64 = 1;
/// Default output directory (as rocprofv3's `-d`).
pub const DEFAULT_OUTPUT_DIRECTORY: &str = "%hostname%/%pid%";
/// Default output file prefix (as rocprofv3's `-o`).
pub const DEFAULT_OUTPUT_FILE: &str = "%pid%";

/// A validated chain: host-wide settings, outputs, and the ordered stages.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// The chain file, when the chain came from one.
    pub file: Option<PathBuf>,
    /// `[settings]`, defaults filled in.
    pub settings: Settings,
    /// `[output]`, defaults filled in (amended by rocprofv3-style flags).
    pub output: Output,
    /// `[kernels]`: which dispatches are kept and how kernels are named
    /// (rocprofv3's kernel options; amended by their flags).
    pub kernels: KernelPlan,
    /// `[collection]`: when the run collects (rocprofv3's
    /// `-P/--collection-period`; amended by its flags).
    pub collection: rocwasm_plan::CollectionPlan,
    /// `[summary]`: rocprofv3's end-of-run summaries (`-S`,
    /// `--summary-groups`, …; amended by their flags).
    pub summary: rocwasm_plan::SummaryPlan,
    /// The `[[stage]]` tables in file order: each delivery runs through
    /// them first to last.
    pub stages: Vec<Stage>,
}

/// `[settings]`: how the host runs the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Who measures a live run (`backend`): rocwasm's interception or a
    /// rocprofiler-sdk library.
    pub backend: rocwasm_plan::Backend,
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

/// `[output]`: where results go and which host sinks write them.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The run's output directory (`directory`), expanded per process.
    pub directory: PathTemplate,
    /// Prefix of every output file name (`file_prefix`, `-o`), expanded per
    /// process; `None` when neither sets one: rocprofv3's default prefix
    /// ([`DEFAULT_OUTPUT_FILE`]) names the process, which a run's directory
    /// already does, so its files keep their plain names. An explicit
    /// `%pid%` is applied.
    pub file_prefix: Option<PathTemplate>,
    /// Host sinks that write the chain's final batches (`formats`).
    pub formats: Vec<OutputFormat>,
    /// Domains recorded for the sinks even if no stage asks for them
    /// (`trace`, the rocprofv3 `--*-trace` flags).
    pub trace: Vec<BufferTracingKind>,
    /// Print the stages' summary tables at the end (`summary`).
    pub summary: bool,
    /// When a live run writes the formats (`write`): from a spool at the
    /// end, or as batches come.
    pub write: WriteTiming,
    /// Record each traced API call's arguments for rocpd's `rocpd_arg`
    /// (`api_args`, `--api-args`). Off by default: rendering every call's
    /// arguments as text in the application costs a traced call several
    /// times what tracing it does (docs/PERFORMANCE.md).
    pub api_args: bool,
    /// Where Parquet files go (`parquet_layout`, `--parquet-layout`): each
    /// process's run directory, or one Hive-partitioned dataset.
    pub parquet_layout: ParquetLayout,
}

impl Default for Output {
    /// rocprofv3's defaults: `%hostname%/%pid%`, `%pid%`, CSV, summary on,
    /// written at the end.
    fn default() -> Self {
        Output {
            directory: PathTemplate::parse(DEFAULT_OUTPUT_DIRECTORY).expect("valid default"),
            file_prefix: None,
            formats: vec![OutputFormat::Csv],
            trace: Vec::new(),
            summary: true,
            write: WriteTiming::default(),
            api_args: false,
            parquet_layout: ParquetLayout::Flat,
        }
    }
}

/// One `[[stage]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Unique within the chain.
    pub name: String,
    /// The component (`plugin`): a path or a stock plugin name.
    pub plugin: PluginRef,
    /// Expected SHA-256 of the component, lowercase hex, when given.
    pub sha256: Option<String>,
    /// The world the stage's component implements.
    pub world: World,
    /// The buffer-tracing kinds delivered to this stage, aliases expanded,
    /// deduplicated, in SDK order. Empty: every kind the chain delivers
    /// (an analysis may also set up contexts of its own in `init`).
    pub domains: Vec<BufferTracingKind>,
    /// Operation filters per kind: only these operations are delivered.
    /// A kind absent here gets all its operations.
    pub operations: BTreeMap<BufferTracingKind, Vec<Operation>>,
    /// The stage's `config` table, flattened (`a.b` keys, arrays as JSON).
    pub config: BTreeMap<String, String>,
    /// Memory cap and per-call deadline (`limits`); keys the stage leaves
    /// out come from `[settings.limits]`.
    pub limits: Limits,
    /// What a trap, limit overrun or malformed reply does (`on_failure`,
    /// with `max_restarts` and `restart_backoff`); default: disable the stage.
    pub on_failure: FailurePolicy,
    /// Where the stage may write files (`output`); default: nowhere.
    pub output: OutputGrant,
    /// Callback tracing and external-correlation requests (`callbacks`,
    /// `external_correlation`): granted unless withheld here or by the
    /// site policy.
    pub services: Services,
    /// Where the stage runs (`placement`): in the application (default) or
    /// in the launcher on the record journal's batches.
    pub placement: Placement,
}

/// Where a stage's component comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRef {
    /// The `plugin` value as written.
    pub spec: String,
    /// True for a stock name (`kernel-stats`), false for a path.
    pub stock: bool,
    /// True for a shipped plugin (`oci://…`, `dir://…`): `path` is then the
    /// node's cached copy, its digest checked when it was pulled.
    pub shipped: bool,
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

/// `percent` % of `size`, rounded down, without overflow.
pub fn percent_of(size: u64, percent: u64) -> u64 {
    (size as u128 * percent as u128 / 100) as u64
}
