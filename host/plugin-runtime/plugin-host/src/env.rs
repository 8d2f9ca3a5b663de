//! [`HostEnv`]: what the embedder gives every plugin of a run.
//!
//! The code that wires a run together (the live session, `rocwasm replay`,
//! tests) knows things no plugin can find out for itself: the engine the
//! plugins configure services on, whether records are live or replayed, the
//! profiled runtime's version, operation names a replayed trace brought
//! along, and who else writes into the output directory. It hands them to
//! [`Chain::new`](crate::Chain::new) as one [`HostEnv`]; each stage's host
//! imports (`crate::host`) get the part they answer from, when its store is
//! made (`crate::state`).
//!
//! The two extension points are here too, so that the host interfaces that
//! consume them do not depend on the chain: [`OperationNameTable`] (the
//! `names` interface asks it first) and [`OutputClaim`] (the `output`
//! interface asks it before a stage first writes a file).

use std::path::Path;
use std::sync::{Arc, RwLock};

use rocwasm_core::Profiler;

/// rocwasm's version as plugins see it (`tool-info.version`):
/// 10000·major + 100·minor + patch.
pub(crate) const VERSION: u32 = 100;

/// Operation names of a run beyond the core registry (e.g. a replayed
/// trace's). Keyed by raw buffer-tracing kind numbers.
///
/// A replayed trace may name operations this build does not know; the
/// replay registers them under synthetic numbers, the records carry those
/// numbers, and plugins must still be able to name them. The `names`
/// interface asks this table before the registry.
pub trait OperationNameTable: Send + Sync {
    /// The name of `op` of buffer kind `kind`, if this table knows it.
    fn operation_name(&self, kind: u32, op: u32) -> Option<String>;
    /// Every operation of `kind` this table knows, in any order.
    fn operations(&self, kind: u32) -> Vec<u32>;
}

/// Asked before a stage first writes a file through `output`: may the
/// stage (named by the second argument) write this path? An `Err` is a
/// sentence naming the file and who writes it already; the stage is refused.
///
/// A run's output directory has other writers than plugins (the host's
/// sinks), and only the code that wires a run together knows them all: it
/// passes their registry's check here (`rocwasm_formats::OutputClaims::for_stages`).
/// A function rather than that type, so this crate does not depend on the
/// output sinks.
pub type OutputClaim = Arc<dyn Fn(&Path, &str) -> Result<(), String> + Send + Sync>;

/// A process whose records a run delivers (`delivery-info.process`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TracedProcess {
    /// The node's host name; empty when a recording does not say.
    pub hostname: String,
    /// The process id; 0 when a recording does not say.
    pub pid: u32,
    /// The MPI rank, if any.
    pub rank: Option<u32>,
    /// The batch job id, if any.
    pub job: Option<String>,
    /// Its command line, program first; empty when a recording does not
    /// say (`run.describe-process`).
    pub command: Vec<String>,
    /// What measured its records (`builtin`, `rocprofiler-sdk`); empty
    /// when a recording does not say (`run.describe-process`).
    pub back_end: String,
}

/// The processes of a run, by the index a delivery carries
/// (`rocwasm_core::DeliveryInfo::process`): index 0 is the run's own (the
/// profiled process, or the recording replayed); a replay of several
/// recordings adds one per recording ([`Processes::add`]). Shared: the
/// embedder adds while the chain delivers.
#[derive(Debug, Clone, Default)]
pub struct Processes(Arc<RwLock<Vec<TracedProcess>>>);

impl Processes {
    /// A table holding the run's own process as index 0.
    pub fn new(own: TracedProcess) -> Self {
        Processes(Arc::new(RwLock::new(vec![own])))
    }

    /// Adds a process; its index.
    pub fn add(&self, process: TracedProcess) -> u32 {
        let mut table = self.0.write().unwrap_or_else(|e| e.into_inner());
        table.push(process);
        (table.len() - 1) as u32
    }

    /// Process `index`; an unknown index (none was added) is an unknown
    /// process, all fields empty.
    pub fn get(&self, index: u32) -> TracedProcess {
        let table = self.0.read().unwrap_or_else(|e| e.into_inner());
        table.get(index as usize).cloned().unwrap_or_default()
    }

    /// The process a delivery named by `hostname` and `pid` (the first
    /// added, when a replay holds two recordings of one process).
    pub fn find(&self, hostname: &str, pid: u32) -> Option<TracedProcess> {
        let table = self.0.read().unwrap_or_else(|e| e.into_inner());
        table
            .iter()
            .find(|p| p.pid == pid && p.hostname == hostname)
            .cloned()
    }
}

/// What the plugins' host imports act on.
#[derive(Clone)]
pub struct HostEnv {
    /// The engine plugins configure services on (its symbol table answers
    /// the `symbols` interface).
    pub profiler: Arc<Profiler>,
    /// The profiled runtime's version (10000·major + 100·minor + patch), 0 if unknown.
    pub runtime_version: u32,
    /// True when records come from a recorded trace.
    pub replay: bool,
    /// Operation names beyond this build's registry (a replayed trace's,
    /// including the synthetic numbers it registered for unknown names);
    /// the `names` imports ask it first. `None`: the registry only.
    pub operation_names: Option<Arc<dyn OperationNameTable>>,
    /// The run's check of output files (see [`OutputClaim`]); `None`: no
    /// check (a chain with no other writer, tests).
    pub output_claim: Option<OutputClaim>,
    /// The processes deliveries name (`delivery-info.process`); by default
    /// this one, with its host name and pid and no rank.
    pub processes: Processes,
    /// Where the chain's buffer keeps its halves so that its records
    /// outlive the process (a live run's record journal); `None`: the heap.
    pub durable_memory: Option<Arc<dyn rocwasm_core::buffer::DurableMemory>>,
    /// Tests only: pack 0.3.0 batches as a later host with a larger schema
    /// would, adding a table and a kernel-dispatch column no plugin of this
    /// build knows (`packed_world::pack`). A 0.3.0 plugin must read its own
    /// columns and skip those. `false` in every run.
    #[doc(hidden)]
    pub newer_schema: bool,
}

impl HostEnv {
    /// Plugins acting on `profiler`: a live run, the runtime's version
    /// unknown, names from the registry, output files not checked.
    pub fn new(profiler: Arc<Profiler>) -> Self {
        HostEnv {
            profiler,
            runtime_version: 0,
            replay: false,
            operation_names: None,
            output_claim: None,
            durable_memory: None,
            newer_schema: false,
            processes: Processes::new(TracedProcess {
                hostname: rocwasm_plan::template::hostname(),
                pid: std::process::id(),
                rank: None,
                job: None,
                command: Vec::new(),
                back_end: String::new(),
            }),
        }
    }

    /// Names `processes` in deliveries (see [`Processes`]).
    pub fn with_processes(mut self, processes: Processes) -> Self {
        self.processes = processes;
        self
    }

    /// The chain's buffer keeps its halves in `memory` (see
    /// [`HostEnv::durable_memory`]).
    pub fn with_durable_memory(
        mut self,
        memory: Option<Arc<dyn rocwasm_core::buffer::DurableMemory>>,
    ) -> Self {
        self.durable_memory = memory;
        self
    }

    /// Marks the records as coming from a recorded trace.
    pub fn with_replay(mut self, replay: bool) -> Self {
        self.replay = replay;
        self
    }

    /// The profiled runtime's version (10000·major + 100·minor + patch).
    pub fn with_runtime_version(mut self, version: u32) -> Self {
        self.runtime_version = version;
        self
    }

    /// Lets plugins' `names` imports resolve the operations of `table`.
    pub fn with_operation_names(mut self, table: Arc<dyn OperationNameTable>) -> Self {
        self.operation_names = Some(table);
        self
    }

    /// Checks every file a stage writes through `output` with `claim`
    /// first (see [`OutputClaim`]).
    pub fn with_output_claim(mut self, claim: OutputClaim) -> Self {
        self.output_claim = Some(claim);
        self
    }
}
