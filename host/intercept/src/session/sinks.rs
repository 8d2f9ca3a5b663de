//! The host's own outputs (`rocwasm-output` sinks: CSV, JSON, rocpd,
//! Perfetto, `--stats`) and which buffer feeds them each kind.
//!
//! Two buffers can feed the sinks:
//!
//! - the **chain's** buffer, after the last stage: its records carry the
//!   chain context's external correlation ids (a `correlation-tagger`'s
//!   answers) and went through the chain's transforms;
//! - the session's **own** buffer, for kinds the sinks want but the chain
//!   does not trace (or traces only some operations of).
//!
//! A kind comes from exactly one of them ([`SinkPlan`]), so no record is
//! written twice.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use rocwasm_core::{clock, Batch, BufferTracingKind as K, Profiler};
use rocwasm_output::{OperationNames, OutputSummary, Outputs, RunMetadata, SinkContext};

/// Which kinds the sinks take from the chain's buffer, and which the session
/// traces itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkPlan {
    /// Traced on the session's own context, all operations.
    pub own: Vec<K>,
    /// Taken from the chain's final batches.
    pub from_chain: BTreeSet<K>,
    /// Kinds the chain traces that the sinks do not take (dropped before
    /// the sinks); empty in the common case, so batches pass uncopied.
    pub chain_only: BTreeSet<K>,
}

impl SinkPlan {
    /// `sink_kinds`: what the outputs record; `chain`: what the chain traces
    /// per kind (`None` = every operation).
    pub fn new(sink_kinds: &[K], chain: &BTreeMap<K, Option<Vec<u32>>>) -> SinkPlan {
        let mut plan = SinkPlan::default();
        for &kind in sink_kinds {
            match chain.get(&kind) {
                // All of it passes through the chain: take it from there.
                Some(None) => {
                    plan.from_chain.insert(kind);
                }
                // Not traced, or only some operations: the sinks want every
                // operation, so the session traces the kind itself.
                _ => plan.own.push(kind),
            }
        }
        plan.chain_only = chain
            .keys()
            .copied()
            .filter(|k| !plan.from_chain.contains(k))
            .collect();
        plan
    }

    /// The chain failed to start: the session traces everything itself.
    pub fn without_chain(sink_kinds: &[K]) -> SinkPlan {
        SinkPlan {
            own: sink_kinds.to_vec(),
            ..SinkPlan::default()
        }
    }

    /// Drops from a chain batch the records of kinds the sinks take elsewhere.
    pub fn restrict(&self, batch: &mut Batch) {
        let drop = |k: K| self.chain_only.contains(&k);
        batch
            .api_calls
            .retain(|r| K::from_raw(r.kind).is_none_or(|k| !drop(k)));
        macro_rules! table {
            ($t:ident, $kind:expr) => {
                if drop($kind) {
                    batch.$t.clear();
                }
            };
        }
        table!(kernel_dispatches, K::KernelDispatch);
        table!(memory_copies, K::MemoryCopy);
        table!(memory_allocations, K::MemoryAllocation);
        table!(scratch_memory, K::ScratchMemory);
        table!(retirements, K::CorrelationIdRetirement);
        table!(runtime_initializations, K::RuntimeInitialization);
    }
}

/// The outputs of one process, written from whichever delivery thread
/// brings a batch.
pub struct Sinks {
    outputs: Mutex<Option<Outputs>>,
    meta: Mutex<RunMetadata>,
    names: OperationNames,
    profiler: Arc<Profiler>,
}

impl Sinks {
    /// Drives `outputs` for the run `meta` describes, with symbols from
    /// `profiler` and the registry's operation names.
    pub fn new(outputs: Outputs, meta: RunMetadata, profiler: Arc<Profiler>) -> Sinks {
        Sinks {
            outputs: Mutex::new(Some(outputs)),
            meta: Mutex::new(meta),
            names: operation_names(),
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

    /// Closes the outputs once; `None` the second time.
    pub fn finish(&self) -> Option<(OutputSummary, RunMetadata)> {
        let outputs = self
            .outputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        let mut meta = self.meta.lock().unwrap_or_else(|e| e.into_inner()).clone();
        meta.end_ns = clock::now();
        let summary = self.with_context(&meta, |ctx| outputs.finish(ctx));
        Some((summary, meta))
    }
}

/// The output's name table, completed with every operation of the registry.
fn operation_names() -> OperationNames {
    let names = OperationNames::new();
    for &kind in K::ALL {
        for (op, name) in rocwasm_core::operations(kind) {
            names.register(kind.raw(), op, name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{ApiCall, KernelDispatch, MemoryCopy};

    fn chain(entries: &[(K, Option<Vec<u32>>)]) -> BTreeMap<K, Option<Vec<u32>>> {
        entries.iter().cloned().collect()
    }

    #[test]
    fn each_kind_comes_from_one_buffer() {
        let sinks = [
            K::KernelDispatch,
            K::HipRuntimeApi,
            K::MemoryCopy,
            K::MarkerCoreApi,
        ];
        let c = chain(&[
            (K::KernelDispatch, None),
            (K::HipRuntimeApi, None),
            // Some directions only: the sinks want all of them.
            (K::MemoryCopy, Some(vec![2, 3])),
            // Traced for a stage, not recorded by the sinks.
            (K::HipCompilerApi, None),
        ]);
        let plan = SinkPlan::new(&sinks, &c);
        assert_eq!(plan.own, vec![K::MemoryCopy, K::MarkerCoreApi]);
        assert_eq!(
            plan.from_chain,
            [K::KernelDispatch, K::HipRuntimeApi].into_iter().collect()
        );
        assert_eq!(
            plan.chain_only,
            [K::MemoryCopy, K::HipCompilerApi].into_iter().collect()
        );
        let all = SinkPlan::without_chain(&sinks);
        assert_eq!(all.own, sinks.to_vec());
        assert!(all.from_chain.is_empty() && all.chain_only.is_empty());
    }

    #[test]
    fn restrict_drops_only_kinds_taken_elsewhere() {
        let plan = SinkPlan::new(
            &[K::KernelDispatch, K::HipRuntimeApi],
            &chain(&[
                (K::KernelDispatch, None),
                (K::HipRuntimeApi, None),
                (K::HipCompilerApi, None),
                (K::MemoryCopy, Some(vec![2])),
            ]),
        );
        let mut batch = Batch::default();
        let api = |kind: K| ApiCall {
            kind: kind.raw(),
            operation: 1,
            ..ApiCall::default()
        };
        batch.api_calls.push(api(K::HipRuntimeApi));
        batch.api_calls.push(api(K::HipCompilerApi));
        batch.kernel_dispatches.push(KernelDispatch::default());
        batch.memory_copies.push(MemoryCopy::default());
        plan.restrict(&mut batch);
        assert_eq!(batch.api_calls.len(), 1);
        assert_eq!(batch.api_calls.row(0).kind, K::HipRuntimeApi.raw());
        assert_eq!(batch.kernel_dispatches.len(), 1);
        assert_eq!(batch.memory_copies.len(), 0);
    }
}
