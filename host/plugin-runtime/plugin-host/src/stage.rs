//! A stage's plugin behind its lock, and the sinks through which the engine
//! (`rocwasm_core::Profiler`) reaches it.
//!
//! One call at a time per instance: every call takes the stage's mutex.
//! Batches from the plugin's own buffers arrive on callback threads and are
//! *queued*, then delivered by whoever holds (or next takes) the lock — the
//! sink never waits for the lock. That matters when a plugin flushes its own
//! buffer from inside a call: the engine's callback thread runs our sink
//! while the plugin's thread holds the lock and waits for the flush; a
//! blocking sink would deadlock. The queued batches are delivered right after
//! the call returns (a component instance cannot be re-entered anyway).
//!
//! Synchronous callbacks (callback tracing, external-correlation requests)
//! take the lock and call the plugin on the calling thread. If that thread is
//! already inside this very plugin (the plugin's own host call caused the
//! event), the callback is skipped instead of deadlocking.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};

use rocwasm_core::{
    BufferSink, CallbackRecord, CallbackSink, ContextId, DeliveryInfo, ExternalCorrelationRequest,
    ExternalCorrelationSink,
};

use crate::bindings::types as wit;
use crate::convert;
use crate::env::Processes;
use crate::failure::{Aborted, FailureReport};
use crate::host::StageLink;
use crate::plugin::Plugin;

thread_local! {
    /// Addresses of the stages this thread is currently calling into.
    static INSIDE: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// State shared by every stage of a run.
#[derive(Debug, Default)]
pub(crate) struct RunState {
    /// Set when a plugin with the `abort` policy failed outside a chain call
    /// (in a sink); the chain returns it from its next call.
    pub aborted: Mutex<Option<FailureReport>>,
    /// The chain's shared context (`tool-info.chain-context`), on which
    /// plugins may configure callbacks and external-correlation requests.
    pub chain_context: Option<ContextId>,
    /// The run's processes, which deliveries name.
    pub processes: Processes,
}

pub(crate) struct StageCell {
    plugin: Mutex<Plugin>,
    pending: Mutex<VecDeque<(wit::DeliveryInfo, rocwasm_core::Batch)>>,
    run: Arc<RunState>,
}

impl StageCell {
    pub fn new(plugin: Plugin, run: Arc<RunState>) -> Arc<StageCell> {
        let cell = Arc::new(StageCell {
            plugin: Mutex::new(plugin),
            pending: Mutex::default(),
            run,
        });
        let sink = Arc::new(StageSink(Arc::downgrade(&cell)));
        cell.lock().link_stage(StageLink {
            chain_context: cell.run.chain_context,
            buffers: sink.clone(),
            callbacks: sink.clone(),
            requests: sink,
        });
        cell
    }

    fn lock(&self) -> MutexGuard<'_, Plugin> {
        // A panic in a host call cannot leave the plugin half-updated in a
        // way that matters more than losing the run; keep going.
        self.plugin.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn key(&self) -> usize {
        self as *const StageCell as usize
    }

    fn is_inside(&self) -> bool {
        INSIDE.with(|v| v.borrow().contains(&self.key()))
    }

    /// Runs `f` on the plugin under its lock, then delivers queued batches.
    pub fn with<R>(&self, f: impl FnOnce(&mut Plugin) -> R) -> R {
        let r = {
            let mut p = self.lock();
            INSIDE.with(|v| v.borrow_mut().push(self.key()));
            let r = f(&mut p);
            INSIDE.with(|v| v.borrow_mut().retain(|k| *k != self.key()));
            r
        };
        self.drain();
        r
    }

    fn pending(&self) -> MutexGuard<'_, VecDeque<(wit::DeliveryInfo, rocwasm_core::Batch)>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn enqueue(&self, info: wit::DeliveryInfo, batch: rocwasm_core::Batch) {
        self.pending().push_back((info, batch));
        self.drain();
    }

    /// Delivers queued batches if the lock is free; otherwise its holder will
    /// (it calls `drain` after unlocking, and sees our batch because we
    /// queued it before trying the lock).
    pub fn drain(&self) {
        loop {
            if self.pending().is_empty() {
                return;
            }
            let mut p = match self.plugin.try_lock() {
                Ok(p) => p,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            INSIDE.with(|v| v.borrow_mut().push(self.key()));
            loop {
                let next = self.pending().pop_front();
                let Some((info, batch)) = next else { break };
                if let Err(Aborted(report)) = p.deliver(&info, &batch) {
                    self.abort(*report);
                }
            }
            INSIDE.with(|v| v.borrow_mut().retain(|k| *k != self.key()));
            drop(p);
        }
    }

    pub fn abort(&self, report: FailureReport) {
        let mut a = self.run.aborted.lock().unwrap_or_else(|e| e.into_inner());
        a.get_or_insert(report);
    }
}

/// The engine's handle on a stage: buffer, callback and external-correlation
/// sink in one. Weak, so the engine (which may outlive the chain) does not
/// keep plugins alive.
struct StageSink(Weak<StageCell>);

impl BufferSink for StageSink {
    fn deliver(&self, info: DeliveryInfo, batch: rocwasm_core::Batch) {
        if let Some(cell) = self.0.upgrade() {
            cell.enqueue(
                convert::delivery_info_to_wit(info, &cell.run.processes),
                batch,
            );
        }
    }
}

impl CallbackSink for StageSink {
    fn on_callback(&self, record: &CallbackRecord, user_data: &mut u64) {
        let Some(cell) = self.0.upgrade() else { return };
        if cell.is_inside() {
            return;
        }
        let rec = convert::callback_record_to_wit(record);
        match cell.with(|p| p.on_callback(&rec, *user_data)) {
            Ok(v) => *user_data = v,
            Err(Aborted(r)) => cell.abort(*r),
        }
    }
}

impl ExternalCorrelationSink for StageSink {
    fn request(&self, request: &ExternalCorrelationRequest) -> Option<u64> {
        let cell = self.0.upgrade()?;
        if cell.is_inside() {
            return None;
        }
        let req = convert::external_request_to_wit(request);
        match cell.with(|p| p.on_external_correlation_request(req)) {
            Ok(v) => v,
            Err(Aborted(r)) => {
                cell.abort(*r);
                None
            }
        }
    }
}
