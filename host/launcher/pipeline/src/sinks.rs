//! The host's own outputs (`rocwasm-formats` sinks: CSV, JSON, rocpd,
//! Perfetto, `--stats`), written from the loop that reads a recording or a
//! process's record journal.

use std::sync::{Arc, Mutex};

use rocwasm_core::{Batch, BufferTracingKind as K, Profiler};
use rocwasm_formats::{CallArgs, OperationNames, OutputSummary, Outputs, RunMetadata, SinkContext};

/// The outputs of one process. Symbols come from the engine's table (a
/// replay copies the recording's into it before each batch); operation
/// names from the table given at creation.
pub struct Sinks {
    outputs: Mutex<Option<Outputs>>,
    meta: Mutex<RunMetadata>,
    names: Arc<OperationNames>,
    profiler: Arc<Profiler>,
}

impl Sinks {
    /// Drives `outputs` for the run `meta` describes, with symbols from
    /// `profiler` and operation names from `names`.
    pub fn new(
        outputs: Outputs,
        meta: RunMetadata,
        profiler: Arc<Profiler>,
        names: Arc<OperationNames>,
    ) -> Sinks {
        Sinks {
            outputs: Mutex::new(Some(outputs)),
            meta: Mutex::new(meta),
            names,
            profiler,
        }
    }

    fn with_context<R>(&self, meta: &RunMetadata, f: impl FnOnce(&SinkContext<'_>) -> R) -> R {
        f(&SinkContext {
            meta,
            symbols: self.profiler.symbols(),
            names: &self.names,
        })
    }

    /// Replaces the run's metadata (a reader learns it as it reads).
    pub fn set_meta(&self, meta: RunMetadata) {
        *self.meta.lock().unwrap_or_else(|e| e.into_inner()) = meta;
    }

    /// Opens the outputs (headers, metadata).
    pub fn begin(&self) {
        let meta = self.meta.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut guard = self.outputs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = guard.as_mut() {
            self.with_context(&meta, |ctx| o.begin(ctx));
        }
    }

    /// Writes one batch; after [`Sinks::finish`], nothing.
    pub fn write(&self, batch: &Batch) {
        let mut guard = self.outputs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = guard.as_mut() {
            let meta = self.meta.lock().unwrap_or_else(|e| e.into_inner()).clone();
            self.with_context(&meta, |ctx| o.write_batch(batch, ctx));
        }
    }

    /// Hands the arguments of calls whose records come later to the
    /// outputs (`Sink::call_args`).
    pub fn call_args(&self, args: &[CallArgs]) {
        let mut guard = self.outputs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = guard.as_mut() {
            o.call_args(args);
        }
    }

    /// Closes the outputs once; `None` the second time. The run's end time
    /// is the source's (a recording's, a journal's).
    pub fn finish(&self) -> Option<(OutputSummary, RunMetadata)> {
        let outputs = self
            .outputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        let meta = self.meta.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let summary = self.with_context(&meta, |ctx| outputs.finish(ctx));
        Some((summary, meta))
    }
}

/// The output's name table for a live run: every operation of the registry.
pub fn registry_names() -> OperationNames {
    let names = OperationNames::new();
    for &kind in K::ALL {
        for (op, name) in rocwasm_core::operations(kind) {
            names.register(kind.raw(), op, name);
        }
    }
    names
}
