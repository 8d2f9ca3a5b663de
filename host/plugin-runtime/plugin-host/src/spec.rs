//! [`StageSpec`]: everything the runtime needs to know about one stage.
//!
//! A plain struct on purpose: a run builds it from its plan's
//! [`StagePlan`] ([`StageSpec::from_plan`]), and tests build it directly.
//! Its vocabulary ([`Limits`], [`BufferSettings`], the failure policy, the
//! world) is the plan's, defined once in `rocwasm-plan`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rocwasm_core::BufferTracingKind;
pub use rocwasm_plan::{BufferSettings, Limits, Services};
use rocwasm_plan::{OutputGrant, StagePlan, World};

use crate::failure::FailurePolicy;
use crate::filter::KindFilter;

/// One stage of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSpec {
    /// Unique within the chain; prefixes the plugin's log lines and reports.
    pub name: String,
    /// The component file.
    pub wasm: PathBuf,
    /// Buffer kinds this stage receives in chain deliveries (empty = all).
    pub kinds: KindFilter,
    /// The stage's `config` table, flattened (`a.b` keys, arrays as JSON).
    pub config: BTreeMap<String, String>,
    /// The sandbox's bounds: memory, per-call deadlines, output bytes, log rate.
    pub limits: Limits,
    /// What a trap, a deadline overrun or a memory-cap hit leads to.
    pub failure: FailurePolicy,
    /// The directory `output` writes into; `None` = every write fails.
    pub output_dir: Option<PathBuf>,
    /// Put before every file name the plugin writes, with `_`
    /// (`myrun_kernel_stats.csv`): the run's file prefix (rocprofv3's `-o`)
    /// when it is explicit and the grant is the run's output directory,
    /// which the host's sinks write with the same prefix. `None`: the
    /// plugin's names as they are.
    pub file_prefix: Option<String>,
    /// The world the chain expects; `None` = whatever the component is.
    pub world: Option<World>,
    /// Kinds the host traces *for* the plugin (the chain file's `domains`).
    /// The chain traces the union of its stages' domains on one shared
    /// context into one buffer, and each of its batches reaches this stage
    /// with only these kinds (see [`crate::chain`]); the plugin learns them in
    /// `tool-info.domains`. Empty: the plugin sets up its own services, and
    /// receives nothing from the chain's buffer.
    pub domains: Vec<BufferTracingKind>,
    /// Operation filters per kind of [`Self::domains`] (the chain file's
    /// `operations`): the stage sees only these operations of the kind. A
    /// kind absent here, or with an empty list, gets all its operations.
    pub operations: BTreeMap<BufferTracingKind, Vec<u32>>,
    /// The chain's buffer. Every stage of a chain carries the same chain-wide
    /// settings; the chain uses the first stage's.
    pub buffer: BufferSettings,
    /// Whether the plugin may configure callback tracing and
    /// external-correlation requests (plugin code on the application's
    /// threads); a service not granted answers `error` and is reported once.
    pub services: Services,
}

impl StageSpec {
    /// The spec of a planned stage, for a process whose expanded output
    /// directory is `run_dir` (grants become directories in it) and whose
    /// expanded file prefix is `file_prefix` (the run's, when explicit:
    /// applied to the files of a grant of the run's directory itself, not
    /// of a subdirectory), with the chain's `buffer`.
    pub fn from_plan(
        plan: &StagePlan,
        buffer: BufferSettings,
        run_dir: &Path,
        file_prefix: Option<&str>,
    ) -> Self {
        StageSpec {
            name: plan.name.clone(),
            wasm: plan.wasm.clone(),
            kinds: match &plan.kinds {
                None => KindFilter::all(),
                Some(kinds) => KindFilter::only(kinds.iter().copied()),
            },
            config: plan.config.clone(),
            limits: plan.limits,
            failure: plan.failure,
            output_dir: plan.output.directory(run_dir),
            file_prefix: match plan.output {
                OutputGrant::RunDirectory => {
                    file_prefix.filter(|p| !p.is_empty()).map(str::to_string)
                }
                _ => None,
            },
            world: plan.world,
            domains: plan.domains.clone(),
            operations: plan.operations.clone(),
            buffer,
            services: plan.services,
        }
    }

    /// A stage with default limits, the default policy, no kind filter, no
    /// configuration and no output grant.
    pub fn new(name: impl Into<String>, wasm: impl Into<PathBuf>) -> Self {
        StageSpec {
            name: name.into(),
            wasm: wasm.into(),
            kinds: KindFilter::all(),
            config: BTreeMap::new(),
            limits: Limits::default(),
            failure: FailurePolicy::default(),
            output_dir: None,
            file_prefix: None,
            world: None,
            domains: Vec::new(),
            operations: BTreeMap::new(),
            buffer: BufferSettings::default(),
            services: Services::default(),
        }
    }

    /// Sets `key` of the stage's configuration (what `config.get` returns).
    pub fn with_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.insert(key.into(), value.into());
        self
    }

    /// Grants the plugin `dir` for its `output` writes (WASI guests get no
    /// preopened directory: their files go through `output` too).
    pub fn with_output_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.output_dir = Some(dir.into());
        self
    }

    /// Puts `prefix` and `_` before every file name the plugin writes
    /// (see [`Self::file_prefix`]).
    pub fn with_file_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.file_prefix = Some(prefix.into());
        self
    }

    /// Only these buffer kinds of the chain's batches reach the stage.
    pub fn with_kinds(mut self, kinds: KindFilter) -> Self {
        self.kinds = kinds;
        self
    }

    /// What the stage does when its plugin fails.
    pub fn with_failure(mut self, policy: FailurePolicy) -> Self {
        self.failure = policy;
        self
    }

    /// The host traces `kinds` for this stage into the chain's buffer (see
    /// [`Self::domains`]).
    pub fn with_domains(mut self, kinds: impl IntoIterator<Item = BufferTracingKind>) -> Self {
        self.domains = kinds.into_iter().collect();
        self
    }

    /// Only operations `ops` of `kind` reach this stage (empty = all). The
    /// kind should be one of [`Self::domains`] (or, for a transform, of its
    /// kind filter): operations of other kinds are not traced for it.
    pub fn with_operations(
        mut self,
        kind: BufferTracingKind,
        ops: impl IntoIterator<Item = u32>,
    ) -> Self {
        self.operations.insert(kind, ops.into_iter().collect());
        self
    }

    /// The chain buffer's size, watermark and policy.
    pub fn with_buffer(mut self, buffer: BufferSettings) -> Self {
        self.buffer = buffer;
        self
    }

    /// Replaces every limit at once.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}
