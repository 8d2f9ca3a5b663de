//! The engine: contexts, services, buffers, callback threads and the producer
//! entry points that interception calls on application threads.
//!
//! # Two sides
//!
//! *Tool-facing* methods (`create_context`, `configure_*`, `flush_buffer`, …)
//! follow the ROCprofiler-SDK rules and return its status codes. They take a
//! mutex; they are rare.
//!
//! *Producer-facing* methods (`is_tracing`, `trace_api`, `begin_async`,
//! `complete_*`, `record_*`, `emit_*`) run on application and runtime threads
//! and must be cheap. They never take the configuration mutex: they read an
//! immutable [`Routes`] snapshot — per domain, the contexts that want it, with
//! their operation filters, buffers and sinks. Every configuration change
//! builds a new snapshot; [`Profiler::lock_configuration`] freezes the last one
//! into a `OnceLock`, after which reading it is one load. An untraced call costs
//! one relaxed load of the `active` bitmask.
//!
//! # Sinks run with no engine lock held
//!
//! A tool's sinks (buffer deliveries, callbacks, external-correlation
//! requests) may call any tool-facing method: a plugin flushes another buffer
//! from its `deliver-batch`, stops a context from a callback, pushes an
//! external id. So no engine lock is ever held while a sink runs, nor while
//! waiting for one (a flush, the join of a callback thread): the
//! configuration mutex guards configuration changes only, and
//! [`Profiler::finalize`] takes it just long enough to mark finalization and
//! take a snapshot of the buffers and threads it then flushes and stops.
//!
//! # The API wrapper order (FACTS §2)
//!
//! [`Profiler::trace_api`]: active contexts? (no → straight call) → internal id
//! and ancestor → external id per interested context (request callback only
//! where that context asked for this kind) → ENTER callbacks (arguments
//! rendered only if a callback will run) → start timestamp → the call → end
//! timestamp → EXIT callbacks with the return value → buffer records →
//! retirement of the id if it has no pending async children.
//!
//! # Where each part is
//!
//! This file holds the types (contexts' entries, routes, the configuration,
//! [`AsyncOp`], [`Profiler`]) and the helpers the parts share; the methods
//! are split by concern: `tools` (contexts, buffers, callback threads,
//! services, external ids, life cycle, lookups), `routes` (the snapshots
//! producers read), `api` (the API-call path), `events` (async operations,
//! filters and gates, synchronous events, code objects), `import` (records
//! another profiler measured).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock};

use crate::batch::{
    ApiCall, Batch, CounterSampleColumns, KernelDispatch, KernelDispatchColumns, MemoryAllocation,
    MemoryCopy, Retirement, RuntimeInitialization, RuntimeLibrary, ScratchMemory,
};
use crate::buffer::{self, Buffer};
use crate::callback::*;
use crate::callback_thread::CallbackThread;
use crate::clock;
use crate::correlation::{self, ExternalIds, Pending};
use crate::domain::Domain;
use crate::kind::{
    BufferPolicy, BufferTracingKind, CallbackPhase, CallbackTracingKind, ExternalCorrelationKind,
    Status,
};
use crate::ops::{code_object, kernel_dispatch};
use crate::record::Record;
use crate::selection::{self, DispatchFilter, RecordGate, Regions, RegionsReport};
use crate::symbols::{CodeObject, KernelSymbol, SymbolTable};

mod api;
mod events;
mod import;
mod markers;
mod routes;
mod tools;

/// At most this many contexts (the producer side tracks them in `u64` masks).
pub const MAX_CONTEXTS: usize = 64;

/// An operation filter: `None` = every operation.
#[derive(Clone, Debug)]
struct OpFilter(Option<Vec<u64>>);

impl OpFilter {
    fn new(ops: &[u32]) -> OpFilter {
        if ops.is_empty() {
            return OpFilter(None);
        }
        let max = *ops.iter().max().unwrap_or(&0) as usize;
        let mut bits = vec![0u64; max / 64 + 1];
        for &op in ops {
            bits[op as usize / 64] |= 1 << (op % 64);
        }
        OpFilter(Some(bits))
    }

    #[inline]
    fn allows(&self, op: u32) -> bool {
        match &self.0 {
            None => true,
            Some(bits) => bits
                .get(op as usize / 64)
                .is_some_and(|w| w & (1 << (op % 64)) != 0),
        }
    }
}

/// The producer-visible part of a context.
pub(crate) struct ContextState {
    id: ContextId,
    active: AtomicBool,
    external: ExternalIds,
    /// Its `MARKER_CORE_RANGE_API` records carry the roctx operation, as
    /// the SDK's do, rather than the message's number
    /// ([`Profiler::number_markers_as_the_sdk`]).
    roctx_ops: AtomicBool,
}

impl ContextState {
    #[inline]
    fn is_active(&self) -> bool {
        self.active.load(Relaxed)
    }
}

/// One context's interest in one domain.
struct Entry {
    ctx: Arc<ContextState>,
    /// The raw buffer-tracing kind of the domain (its records carry it).
    buffer_kind: u32,
    buffer: Option<(OpFilter, Arc<Buffer>)>,
    callback: Option<(OpFilter, Arc<dyn CallbackSink>)>,
    request: Option<Arc<dyn ExternalCorrelationSink>>,
    /// Dispatch counting (kernel-dispatch entries only): the counting
    /// buffer and the counters ([`Profiler::set_dispatch_counters`]).
    counting: Option<(Arc<Buffer>, Arc<[String]>)>,
    /// A native tool counts in this context (kernel-dispatch entries
    /// only): dispatch counting that chooses its counters per dispatch, or
    /// device counting ([`Profiler::tool_counting`]).
    tool_counting: bool,
}

impl Entry {
    #[inline]
    fn buffers(&self, op: u32) -> Option<&Arc<Buffer>> {
        self.buffer
            .as_ref()
            .filter(|(f, _)| f.allows(op))
            .map(|(_, b)| b)
    }

    #[inline]
    fn calls_back(&self, op: u32) -> Option<&Arc<dyn CallbackSink>> {
        self.callback
            .as_ref()
            .filter(|(f, _)| f.allows(op))
            .map(|(_, s)| s)
    }
}

/// The immutable routing snapshot the producers read.
#[derive(Default)]
struct Routes {
    /// Indexed by [`Domain::index`].
    domains: Vec<Vec<Entry>>,
    /// Every context, sorted by id.
    contexts: Vec<Arc<ContextState>>,
    /// Indexed by [`Domain::index`]: the domain has exactly one entry, which
    /// buffers and neither calls back nor requests external ids.
    sole_buffer: Vec<bool>,
    /// Every counter some context counts for every dispatch, each once.
    counters: Arc<[String]>,
}

impl Routes {
    fn new(domains: Vec<Vec<Entry>>, contexts: Vec<Arc<ContextState>>) -> Routes {
        let sole_buffer = domains
            .iter()
            .map(|entries| match entries.as_slice() {
                [e] => e.buffer.is_some() && e.callback.is_none() && e.request.is_none(),
                _ => false,
            })
            .collect();
        let mut counters: Vec<String> = Vec::new();
        for e in &domains[Domain::KernelDispatch.index()] {
            for name in e.counting.iter().flat_map(|(_, names)| names.iter()) {
                if !counters.contains(name) {
                    counters.push(name.clone());
                }
            }
        }
        Routes {
            domains,
            contexts,
            sole_buffer,
            counters: counters.into(),
        }
    }

    /// The entry that alone traces `op` of `domain`, into a buffer only.
    #[inline(always)]
    fn sole_buffering(&self, domain: Domain, op: u32) -> Option<&Entry> {
        let i = domain.index();
        if !*self.sole_buffer.get(i)? {
            return None;
        }
        let e = self.domains[i].first()?;
        (e.ctx.is_active() && e.buffers(op).is_some()).then_some(e)
    }
}

/// Configuration of one context (tool side).
#[derive(Default)]
struct ContextConfig {
    buffer: BTreeMap<BufferTracingKind, (OpFilter, BufferId)>,
    callback: BTreeMap<CallbackTracingKind, (OpFilter, Arc<dyn CallbackSink>)>,
    external: Option<(
        Vec<ExternalCorrelationKind>,
        Arc<dyn ExternalCorrelationSink>,
    )>,
    /// Dispatch counting was configured (into this buffer, or by callback).
    counting: Option<Option<BufferId>>,
    /// The counters the context counts for every dispatch
    /// ([`Profiler::set_dispatch_counters`]).
    counters: Vec<String>,
    /// Device counting was configured.
    device_counting: bool,
}

impl ContextConfig {
    fn has_services(&self) -> bool {
        !self.buffer.is_empty()
            || !self.callback.is_empty()
            || self.external.is_some()
            || self.counting.is_some()
            || self.device_counting
    }

    /// A native tool counts here: dispatch counting without a fixed
    /// counter set (the tool chooses per dispatch), or device counting.
    fn tool_counting(&self) -> bool {
        (self.counting.is_some() && self.counters.is_empty()) || self.device_counting
    }
}

#[derive(Default)]
struct Config {
    contexts: BTreeMap<ContextId, (Arc<ContextState>, ContextConfig)>,
    buffers: BTreeMap<BufferId, Arc<Buffer>>,
    threads: BTreeMap<CallbackThreadId, CallbackThread>,
    next_context: u64,
    next_buffer: u64,
    next_thread: u64,
}

/// `(profiler, internal id, domain)` of the last kernel-dispatch slot this
/// thread asked tools about, and their answers (see [`Profiler::confirm_async`]).
type DispatchExternals = ((usize, u64, Domain), Vec<(ContextId, u64)>);

thread_local! {
    static LAST_DISPATCH_EXTERNALS: std::cell::RefCell<Option<DispatchExternals>> =
        const { std::cell::RefCell::new(None) };
}

/// An asynchronous operation (kernel dispatch, memory copy) between its enqueue
/// on the launching thread and its completion on any thread. Pass it to the
/// matching `complete_*` method or to [`Profiler::cancel_async`]; dropping it
/// leaks a reference and the launching id is never retired.
#[must_use = "complete or cancel the async operation, or its correlation id never retires"]
#[derive(Debug)]
pub struct AsyncOp {
    domain: Domain,
    operation: u32,
    internal: u64,
    /// The ancestor of the call the operation belongs to (0 when none).
    ancestor: u64,
    thread_id: u64,
    /// Enqueue time, CLOCK_BOOTTIME ns (for clamping device timestamps).
    pub enqueue_time: u64,
    externals: Vec<(ContextId, u64)>,
    /// The contexts called back at submission (a memory copy's ENTER),
    /// with the user data each kept: the same contexts get the EXIT.
    entered: Vec<(ContextId, u64)>,
    /// The external ids are still to be asked for
    /// ([`Profiler::begin_async_unconfirmed`]).
    externals_pending: bool,
    /// The innermost roctx range at launch, when the dispatch filter reads it.
    region: Option<Arc<str>>,
    /// Launched while `--selected-regions` had collection paused: its
    /// completion is counted, not recorded (a launch that never completes
    /// would have left no record, so it is not counted).
    suppressed: bool,
}

impl AsyncOp {
    /// The internal correlation id of the launching call.
    pub fn correlation_id(&self) -> u64 {
        self.internal
    }

    /// The operation given to [`Profiler::begin_async`].
    pub fn operation(&self) -> u32 {
        self.operation
    }

    /// The launching thread.
    pub fn thread_id(&self) -> u64 {
        self.thread_id
    }

    /// The external id this operation carries for `context` (0 if none).
    pub fn external_id(&self, context: ContextId) -> u64 {
        self.externals
            .iter()
            .find(|(c, _)| *c == context)
            .map_or(0, |(_, v)| *v)
    }
}

/// A replay's dispatch-filter verdicts of one process, by (dispatch id,
/// correlation id): the dispatch as the filter kept it, or `None` when it
/// dropped it ([`Profiler::select_batch`]).
pub type DispatchVerdicts = std::collections::HashMap<(u64, u64), Option<KernelDispatch>>;

/// The ROCprofiler-SDK model: share it as `Arc<Profiler>`.
pub struct Profiler {
    config: Mutex<Config>,
    live: RwLock<Arc<Routes>>,
    frozen: OnceLock<Arc<Routes>>,
    /// Bit [`Domain::bit`] set when some active context traces the domain.
    active: AtomicU64,
    locked: AtomicBool,
    /// Set when finalization begins (under the configuration mutex, so that
    /// no context can be started after finalize stopped them all).
    finalized: AtomicBool,
    /// True once finalization has completed; concurrent `finalize` calls wait
    /// on `finalize_cond` for it.
    finalize_done: Mutex<bool>,
    finalize_cond: Condvar,
    ids: correlation::IdSource,
    pending: Pending,
    /// Async operations begun and neither completed nor cancelled yet
    /// (dispatches and copies the runtime has not reported done):
    /// [`Profiler::settle_async`] waits for them at the end of a run.
    async_in_flight: AtomicU64,
    symbols: SymbolTable,
    main_thread: u64,
    /// Decides which kernel dispatches are recorded ([`crate::selection`]).
    dispatch_filter: OnceLock<Arc<dyn DispatchFilter>>,
    /// Decides which records of every delivery are kept
    /// ([`crate::selection::RecordGate`]); shared with every buffer's sink.
    record_gate: Arc<OnceLock<Arc<dyn RecordGate>>>,
    /// rocprofv3's `--selected-regions` ([`crate::selection::Regions`]).
    regions: Regions,
    /// `roctxRangeStartA` ranges not stopped yet ([`markers`]).
    process_ranges: crate::marker_ranges::ProcessRanges,
    /// Marker ranges begun and not ended yet, of every thread.
    open_ranges: AtomicU64,
}

/// A buffer's sink behind the engine's [`RecordGate`]: a delivery the gate
/// empties is not made.
struct GatedSink {
    gate: Arc<OnceLock<Arc<dyn RecordGate>>>,
    sink: Arc<dyn BufferSink>,
}

impl BufferSink for GatedSink {
    fn deliver(&self, info: DeliveryInfo, mut batch: Batch) {
        if let Some(g) = self.gate.get() {
            if batch.is_empty() {
                return self.sink.deliver(info, batch);
            }
            g.gate(&mut batch);
            if batch.is_empty() {
                return;
            }
        }
        self.sink.deliver(info, batch)
    }
}

impl Default for Profiler {
    fn default() -> Self {
        Self::new()
    }
}

/// Borrowed frozen routes, or a live snapshot.
enum RoutesRef<'a> {
    Frozen(&'a Routes),
    Live(Arc<Routes>),
}

impl std::ops::Deref for RoutesRef<'_> {
    type Target = Routes;
    fn deref(&self) -> &Routes {
        match self {
            RoutesRef::Frozen(r) => r,
            RoutesRef::Live(r) => r,
        }
    }
}

impl Profiler {
    /// A profiler with no context, buffer or callback thread yet (the
    /// default callback thread is spawned with the first buffer), open for
    /// configuration.
    pub fn new() -> Profiler {
        Profiler {
            config: Mutex::new(Config {
                next_context: 1,
                next_buffer: 1,
                next_thread: 1,
                ..Config::default()
            }),
            live: RwLock::new(Arc::new(Routes::new(
                Domain::ALL.iter().map(|_| Vec::new()).collect(),
                Vec::new(),
            ))),
            frozen: OnceLock::new(),
            active: AtomicU64::new(0),
            locked: AtomicBool::new(false),
            finalized: AtomicBool::new(false),
            finalize_done: Mutex::new(false),
            finalize_cond: Condvar::new(),
            ids: correlation::IdSource::new(),
            pending: Pending::default(),
            async_in_flight: AtomicU64::new(0),
            symbols: SymbolTable::new(),
            main_thread: clock::main_thread_id(),
            dispatch_filter: OnceLock::new(),
            record_gate: Arc::default(),
            regions: Regions::default(),
            process_ranges: Default::default(),
            open_ranges: AtomicU64::new(0),
        }
    }
}

/// One `u64` per routing entry of a call (external ids, user data): inline
/// for the usual handful of contexts, so a traced call neither allocates nor
/// clears a 64-slot array.
struct PerEntry {
    inline: [u64; 4],
    heap: Vec<u64>,
}

impl PerEntry {
    #[inline]
    fn new(entries: usize) -> PerEntry {
        PerEntry {
            inline: [0; 4],
            heap: if entries > 4 {
                vec![0; entries]
            } else {
                Vec::new()
            },
        }
    }

    #[inline]
    fn slot(&mut self, i: usize) -> &mut u64 {
        if self.heap.is_empty() {
            &mut self.inline[i]
        } else {
            &mut self.heap[i]
        }
    }

    #[inline]
    fn get(&self, i: usize) -> u64 {
        if self.heap.is_empty() {
            self.inline[i]
        } else {
            self.heap[i]
        }
    }
}

/// Writes the buffer record of a finished API call into `e`'s buffer.
#[inline]
fn api_record(
    e: &Entry,
    op: u32,
    call: &correlation::Entered,
    external: u64,
    start: u64,
    end: u64,
) {
    if let Some((_, buffer)) = &e.buffer {
        buffer.push_from(
            call.slot,
            &Record::Api(ApiCall {
                kind: e.buffer_kind,
                operation: op,
                correlation_id: call.id,
                external_correlation_id: external,
                ancestor: call.ancestor,
                thread_id: call.tid,
                start,
                end,
            }),
        );
    }
}

/// The indices of the set bits of `mask`, lowest first.
#[inline]
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let i = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(i)
    })
}

/// Marks finalization completed and wakes concurrent `finalize` callers.
struct FinalizeDone<'a>(&'a Profiler);

impl Drop for FinalizeDone<'_> {
    fn drop(&mut self) {
        let p = self.0;
        *p.finalize_done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        p.finalize_cond.notify_all();
    }
}

/// Pops the frame of a call entered on `ThreadState` even if the call
/// unwinds.
struct ThreadFrame<'a>(Option<&'a correlation::ThreadState>);

impl ThreadFrame<'_> {
    #[inline(always)]
    fn pop(mut self) -> bool {
        self.0.take().is_some_and(|t| t.leave())
    }
}

impl Drop for ThreadFrame<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            t.leave();
        }
    }
}

/// Pops the thread's correlation frame even if the wrapped call unwinds.
struct FrameGuard {
    active: bool,
}

impl FrameGuard {
    #[inline]
    fn pop(mut self) -> bool {
        self.active = false;
        correlation::leave()
    }
}

impl Drop for FrameGuard {
    fn drop(&mut self) {
        if self.active {
            correlation::leave();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Batch;

    /// More contexts than `PerEntry` keeps inline: every context gets its own
    /// external id and its own user-data slot, ENTER pairs with EXIT, and each
    /// buffer receives exactly its context's record.
    #[test]
    fn many_contexts_keep_their_own_external_ids_and_user_data() {
        const N: u64 = 7;
        let p = Profiler::new();
        let tid = clock::thread_id();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let batches = Arc::new(Mutex::new(Vec::new()));
        let mut ids = Vec::new();
        for n in 0..N {
            let ctx = p.create_context().unwrap();
            let b = Arc::clone(&batches);
            let buf = p
                .create_buffer(
                    ctx,
                    4096,
                    4096,
                    BufferPolicy::Lossless,
                    Arc::new(move |info: DeliveryInfo, batch: Batch| {
                        b.lock().unwrap().push((info.context, batch));
                    }),
                )
                .unwrap();
            p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
                .unwrap();
            let c = Arc::clone(&calls);
            let sink = Arc::new(move |rec: &CallbackRecord, user: &mut u64| {
                if rec.phase == Some(CallbackPhase::Enter) {
                    assert_eq!(*user, 0, "a fresh slot per context");
                    *user = rec.context.0 * 1000 + rec.correlation.external;
                } else {
                    assert_eq!(*user, rec.context.0 * 1000 + rec.correlation.external);
                }
                c.lock().unwrap().push((rec.context, rec.phase, *user));
            });
            p.configure_callback_tracing(ctx, CallbackTracingKind::HipRuntimeApi, &[], sink)
                .unwrap();
            p.push_external_correlation_id(ctx, tid, 10 + n).unwrap();
            p.start_context(ctx).unwrap();
            ids.push((ctx, buf, 10 + n));
        }
        p.lock_configuration();
        let ret = p.trace_api(Domain::HipRuntimeApi, 3, Vec::new, || 42, |r| r.to_string());
        assert_eq!(ret, 42);
        for &(_, buf, _) in &ids {
            p.flush_buffer(buf).unwrap();
        }

        let calls = calls.lock().unwrap();
        assert_eq!(calls.len() as u64, 2 * N);
        for &(ctx, _, ext) in &ids {
            let mark = ctx.0 * 1000 + ext;
            let phases: Vec<_> = calls.iter().filter(|c| c.0 == ctx).collect();
            assert_eq!(phases.len(), 2);
            assert_eq!(phases[0].1, Some(CallbackPhase::Enter));
            assert_eq!(phases[1].1, Some(CallbackPhase::Exit));
            assert!(phases.iter().all(|c| c.2 == mark));
        }
        let batches = batches.lock().unwrap();
        assert_eq!(batches.len() as u64, N);
        for &(ctx, _, ext) in &ids {
            let (_, batch) = batches.iter().find(|(c, _)| *c == ctx).unwrap();
            let rows: Vec<_> = batch.api_calls.rows().collect();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].external_correlation_id, ext);
            assert_eq!(rows[0].operation, 3);
            assert_eq!(rows[0].thread_id, tid);
            assert!(rows[0].start <= rows[0].end);
        }
    }
}
