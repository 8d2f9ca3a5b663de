//! The replay source: a recorded rocprofv3 trace (CSV directory, JSON,
//! rocpd) read batch by batch into a [`Pipeline`], as if the run were live.
//!
//! ```text
//! formats::replay ──batch──> Chain::deliver ──final batch──> host sinks
//!   (CSV dir / JSON /        (transforms, then               (CSV, JSON, rocpd,
//!    rocpd), symbols           analyses)                      Perfetto, --stats)
//! ```
//!
//! What makes a replay look live to plugins:
//! - the kernel symbols, agents and code objects the reader finds are copied
//!   into the engine's symbol table *before* the batch that uses them, so the
//!   `symbols` imports (`kernel-names`, …) answer as in a live run, and the
//!   sinks name kernels from the same table;
//! - kinds and operations were matched by name by the reader, so the numbers
//!   plugins see are this build's; names this build lacks got synthetic
//!   numbers, and the `names` imports answer from the reader's table, so
//!   plugins name those operations as the trace did;
//! - `tool-info.replay` is true.
//!
//! The sinks write what a live run of the same plan would have recorded
//! ([`rocwasm_record::SinkRoute::replay`]), after the transforms.

use std::sync::Arc;

use anyhow::Result;
use rocwasm_core::SymbolTable;
use rocwasm_formats::replay::ReplaySource;
use rocwasm_formats::OperationNames;
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_plugin_host::OperationNameTable;

use crate::pipeline::{Pipeline, Recording, RunReport};

/// A replay in progress: the pipeline and the reader that feeds it.
pub struct Replay<'a> {
    pipeline: Pipeline,
    source: &'a mut ReplaySource,
    synced: SymbolSync,
    batches: u64,
}

impl<'a> Replay<'a> {
    /// Starts the pipeline of `plan` for a replay of `source` (the chain is
    /// compiled, configured and initialised; the outputs are open).
    pub fn start(
        plan: RunPlan,
        process: &ProcessInfo,
        source: &'a mut ReplaySource,
    ) -> Result<Replay<'a>> {
        let recording = Recording {
            meta: source.meta().clone(),
            names: source.names().clone(),
            plugin_names: Arc::new(TraceNames(source.names().clone())),
            symbols: source.symbols().clone(),
        };
        let pipeline = Pipeline::start(plan, process, recording, Vec::new())?;
        let mut synced = SymbolSync::default();
        synced.copy(source.symbols(), pipeline.profiler().symbols());
        Ok(Replay {
            pipeline,
            source,
            synced,
            batches: 0,
        })
    }

    /// The pipeline (its plan, its output directory).
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Reads and delivers every batch of the recording. A corrupt trace is
    /// an error naming the file and line; so is a chain an `abort` policy
    /// stopped.
    pub fn run(&mut self) -> Result<()> {
        while let Some(batch) = self.source.next_batch()? {
            self.synced
                .copy(self.source.symbols(), self.pipeline.profiler().symbols());
            self.pipeline.set_meta(self.source.meta().clone());
            self.pipeline.deliver(batch)?;
            self.batches += 1;
        }
        Ok(())
    }

    /// Batches delivered so far.
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.source.records()
    }

    /// Finishes the chain and the outputs.
    pub fn finish(self) -> RunReport {
        self.pipeline.set_meta(self.source.meta().clone());
        self.pipeline
            .finish()
            .expect("a replay's pipeline is finished once, here")
    }
}

/// The trace's operation names, for the plugins' `names` imports
/// (public for embedders that run chains over recordings themselves).
pub struct TraceNames(pub Arc<OperationNames>);

impl OperationNameTable for TraceNames {
    fn operation_name(&self, kind: u32, op: u32) -> Option<String> {
        // Only names the table holds: its `name` would invent a fallback.
        self.0
            .operations(kind)
            .into_iter()
            .find(|(o, _)| *o == op)
            .map(|(_, n)| n.to_string())
    }

    fn operations(&self, kind: u32) -> Vec<u32> {
        self.0
            .operations(kind)
            .into_iter()
            .map(|(o, _)| o)
            .collect()
    }
}

/// Copies newly found symbols from the reader's table into the engine's.
/// The CSV reader registers kernel names while it reads, so this runs
/// before every delivery; the tables are small (kernels, not dispatches).
/// Public for the CLI's one-plugin replays (`plugin test`, `plugin vet`),
/// whose plugins look kernel names up as a replay's do.
#[derive(Default)]
pub struct SymbolSync {
    agents: usize,
    code_objects: usize,
    kernels: usize,
    counters: usize,
}

impl SymbolSync {
    /// Copies what `from` gained since the last call into `to`.
    pub fn copy(&mut self, from: &SymbolTable, to: &SymbolTable) {
        // Readers only ever add entries, so a count that did not move means
        // nothing new (and saves cloning the tables).
        let agents = from.agents();
        if agents.len() != self.agents {
            self.agents = agents.len();
            agents.into_iter().for_each(|a| to.insert_agent(a));
        }
        let cos = from.code_objects();
        if cos.len() != self.code_objects {
            self.code_objects = cos.len();
            cos.into_iter().for_each(|c| to.insert_code_object(c));
        }
        let kernels = from.kernels();
        if kernels.len() != self.kernels {
            self.kernels = kernels.len();
            kernels.into_iter().for_each(|k| to.insert_kernel(k));
        }
        let counters = from.counters();
        if counters.len() != self.counters {
            self.counters = counters.len();
            counters
                .into_iter()
                .for_each(|(id, name)| to.insert_counter(id, &name));
        }
    }
}
