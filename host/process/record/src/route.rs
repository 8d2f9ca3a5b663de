//! Which buffer feeds the sinks each kind.
//!
//! Two buffers can feed the host's sinks in a live run:
//!
//! - the **chain's** buffer, after the last stage: its records carry the
//!   chain context's external correlation ids (a `correlation-tagger`'s
//!   answers) and went through the chain's transforms;
//! - the pipeline's **own** buffer ([`crate::own`]), for kinds the sinks
//!   want but the chain does not trace (or traces only some operations of).
//!
//! A kind comes from exactly one of them ([`SinkRoute`]), so no record is
//! written twice. A replay has one source, the recording, and every batch
//! goes through the chain: [`SinkRoute::replay`] only drops the kinds a
//! live run of the same plan would not have recorded.

use std::collections::{BTreeMap, BTreeSet};

use rocwasm_core::{Batch, BufferTracingKind as K};

/// Which kinds the sinks take from the chain's buffer, and which the session
/// traces itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkRoute {
    /// Traced on the session's own context, all operations.
    pub own: Vec<K>,
    /// Taken from the chain's final batches.
    pub from_chain: BTreeSet<K>,
    /// Kinds the chain traces that the sinks do not take (dropped before
    /// the sinks); empty in the common case, so batches pass uncopied.
    pub chain_only: BTreeSet<K>,
}

impl SinkRoute {
    /// `sink_kinds`: what the outputs record; `chain`: what the chain traces
    /// per kind (`None` = every operation).
    pub fn new(sink_kinds: &[K], chain: &BTreeMap<K, Option<Vec<u32>>>) -> SinkRoute {
        let mut plan = SinkRoute::default();
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
    pub fn without_chain(sink_kinds: &[K]) -> SinkRoute {
        SinkRoute {
            own: sink_kinds.to_vec(),
            ..SinkRoute::default()
        }
    }

    /// A replay: every record comes out of the chain, and the sinks keep
    /// what a live run of the plan would have recorded, `sink_kinds` (the
    /// plan's `output.kinds`; empty: everything the recording holds).
    pub fn replay(sink_kinds: &[K]) -> SinkRoute {
        let everything: BTreeMap<K, Option<Vec<u32>>> = K::ALL.iter().map(|&k| (k, None)).collect();
        if sink_kinds.is_empty() {
            SinkRoute::new(K::ALL, &everything)
        } else {
            SinkRoute::new(sink_kinds, &everything)
        }
    }

    /// Hands a chain batch to `write` (the sinks, or the record journal),
    /// without the records of kinds the sinks take elsewhere (copied only
    /// when there are such kinds).
    pub fn write(&self, batch: &Batch, write: impl FnOnce(&Batch)) {
        if self.chain_only.is_empty() {
            write(batch);
        } else {
            let mut batch = batch.clone();
            self.restrict(&mut batch);
            write(&batch);
        }
    }

    /// Drops from a chain batch the records of kinds the sinks take elsewhere.
    pub fn restrict(&self, batch: &mut Batch) {
        batch.retain_kinds(|k| !self.chain_only.contains(&k));
    }
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
        let plan = SinkRoute::new(&sinks, &c);
        assert_eq!(plan.own, vec![K::MemoryCopy, K::MarkerCoreApi]);
        assert_eq!(
            plan.from_chain,
            [K::KernelDispatch, K::HipRuntimeApi].into_iter().collect()
        );
        assert_eq!(
            plan.chain_only,
            [K::MemoryCopy, K::HipCompilerApi].into_iter().collect()
        );
        let all = SinkRoute::without_chain(&sinks);
        assert_eq!(all.own, sinks.to_vec());
        assert!(all.from_chain.is_empty() && all.chain_only.is_empty());
    }

    #[test]
    fn restrict_drops_only_kinds_taken_elsewhere() {
        let plan = SinkRoute::new(
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

    #[test]
    fn a_replay_keeps_what_a_live_run_would_record() {
        let mut batch = Batch::default();
        batch.kernel_dispatches.push(KernelDispatch::default());
        batch.memory_copies.push(MemoryCopy::default());
        batch.api_calls.push(ApiCall {
            kind: K::HipRuntimeApi.raw(),
            operation: 1,
            ..ApiCall::default()
        });
        // No kinds named: everything the recording holds.
        let all = SinkRoute::replay(&[]);
        assert!(all.own.is_empty() && all.chain_only.is_empty());
        let mut kept = batch.clone();
        all.restrict(&mut kept);
        assert_eq!(
            (
                kept.kernel_dispatches.len(),
                kept.memory_copies.len(),
                kept.api_calls.len()
            ),
            (1, 1, 1)
        );
        // Kernel dispatches only: the rest is dropped before the sinks.
        let some = SinkRoute::replay(&[K::KernelDispatch]);
        assert!(some.own.is_empty());
        some.restrict(&mut batch);
        assert_eq!(
            (
                batch.kernel_dispatches.len(),
                batch.memory_copies.len(),
                batch.api_calls.len()
            ),
            (1, 0, 0)
        );
    }
}
