//! [`StageSpec`]: everything the runtime needs to know about one stage.
//!
//! A plain struct on purpose: the chain file's TOML types (`rocwasm-config`)
//! are mapped onto it by the CLI, and tests build it directly.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use rocwasm_core::{BufferPolicy, BufferTracingKind};

use crate::failure::FailurePolicy;
use crate::filter::KindFilter;
use crate::world::World;

/// Resource caps of one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory the guest may grow to, in bytes (all memories together).
    pub memory_bytes: usize,
    /// Wall-clock budget of one delivery (`deliver-batch`, `transform-batch`)
    /// and of each life-cycle call.
    pub deadline: Duration,
    /// Budget of one synchronous call on an application thread
    /// (`on-callback`, `on-external-correlation-request`): the application
    /// waits for it, so it is much shorter.
    pub callback_deadline: Duration,
    /// Total bytes the plugin may write through `output` in one run.
    pub output_bytes: u64,
    /// Log messages per second before messages are dropped (and counted).
    pub log_per_second: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 256 << 20,
            deadline: Duration::from_secs(1),
            callback_deadline: Duration::from_millis(50),
            output_bytes: 1 << 30,
            log_per_second: 100,
        }
    }
}

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
    pub limits: Limits,
    pub failure: FailurePolicy,
    /// The directory `output` writes into; `None` = every write fails.
    pub output_dir: Option<PathBuf>,
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
}

/// The chain's shared buffer: size, watermark and policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferSettings {
    pub size: u64,
    pub watermark: u64,
    pub policy: BufferPolicy,
}

impl Default for BufferSettings {
    fn default() -> Self {
        BufferSettings {
            size: 1 << 20,
            watermark: 1 << 19,
            policy: BufferPolicy::Lossless,
        }
    }
}

impl StageSpec {
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
            world: None,
            domains: Vec::new(),
            operations: BTreeMap::new(),
            buffer: BufferSettings::default(),
        }
    }

    pub fn with_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.insert(key.into(), value.into());
        self
    }

    pub fn with_output_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.output_dir = Some(dir.into());
        self
    }

    pub fn with_kinds(mut self, kinds: KindFilter) -> Self {
        self.kinds = kinds;
        self
    }

    pub fn with_failure(mut self, policy: FailurePolicy) -> Self {
        self.failure = policy;
        self
    }

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

    pub fn with_buffer(mut self, buffer: BufferSettings) -> Self {
        self.buffer = buffer;
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}
