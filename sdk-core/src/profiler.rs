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

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock};

use crate::batch::{
    ApiCall, Batch, KernelDispatch, KernelDispatchColumns, MemoryAllocation, MemoryCopy,
    Retirement, RuntimeInitialization, RuntimeLibrary, ScratchMemory,
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
use crate::record::Record;
use crate::registry::{self, code_object, kernel_dispatch};
use crate::selection::{self, DispatchFilter, RecordGate, Regions, RegionsReport};
use crate::symbols::{CodeObject, KernelSymbol, SymbolTable};

mod import;

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
        Routes {
            domains,
            contexts,
            sole_buffer,
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
}

impl ContextConfig {
    fn has_services(&self) -> bool {
        !self.buffer.is_empty() || !self.callback.is_empty() || self.external.is_some()
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
    thread_id: u64,
    /// Enqueue time, CLOCK_BOOTTIME ns (for clamping device timestamps).
    pub enqueue_time: u64,
    externals: Vec<(ContextId, u64)>,
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
    symbols: SymbolTable,
    main_thread: u64,
    /// Decides which kernel dispatches are recorded ([`crate::selection`]).
    dispatch_filter: OnceLock<Arc<dyn DispatchFilter>>,
    /// Decides which records of every delivery are kept
    /// ([`crate::selection::RecordGate`]); shared with every buffer's sink.
    record_gate: Arc<OnceLock<Arc<dyn RecordGate>>>,
    /// rocprofv3's `--selected-regions` ([`crate::selection::Regions`]).
    regions: Regions,
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
            symbols: SymbolTable::new(),
            main_thread: clock::main_thread_id(),
            dispatch_filter: OnceLock::new(),
            record_gate: Arc::default(),
            regions: Regions::default(),
        }
    }

    // ------------------------------------------------------------------
    // Tool-facing: contexts
    // ------------------------------------------------------------------

    fn config(&self) -> MutexGuard<'_, Config> {
        self.config.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fails with FINALIZED or CONFIGURATION_LOCKED when configuring is over.
    fn configurable(&self) -> Result<MutexGuard<'_, Config>, Status> {
        let cfg = self.config();
        if self.finalized.load(Acquire) {
            Err(Status::Finalized)
        } else if self.locked.load(Acquire) {
            Err(Status::ConfigurationLocked)
        } else {
            Ok(cfg)
        }
    }

    /// Creates a context, inactive and without services; ids start at 1.
    /// ERROR beyond [`MAX_CONTEXTS`]; FINALIZED or CONFIGURATION_LOCKED once
    /// configuring is over.
    pub fn create_context(&self) -> Result<ContextId, Status> {
        let mut cfg = self.configurable()?;
        if cfg.contexts.len() >= MAX_CONTEXTS {
            return Err(Status::Error);
        }
        let id = ContextId(cfg.next_context);
        cfg.next_context += 1;
        let state = Arc::new(ContextState {
            id,
            active: AtomicBool::new(false),
            external: ExternalIds::default(),
        });
        cfg.contexts.insert(id, (state, ContextConfig::default()));
        self.rebuild(&cfg);
        Ok(id)
    }

    /// Starts delivering records for `ctx`. Allowed any time before finalize.
    /// A context without any service is CONTEXT_INVALID.
    pub fn start_context(&self, ctx: ContextId) -> Result<(), Status> {
        self.set_active(ctx, true)
    }

    /// Stops delivering records for `ctx`: producers skip it from the next
    /// event on; what its buffers already hold is still delivered. Allowed
    /// any time before finalize (then FINALIZED); stopping a stopped context
    /// is not an error.
    pub fn stop_context(&self, ctx: ContextId) -> Result<(), Status> {
        self.set_active(ctx, false)
    }

    fn set_active(&self, ctx: ContextId, on: bool) -> Result<(), Status> {
        let cfg = self.config();
        if self.finalized.load(Acquire) {
            return Err(Status::Finalized);
        }
        let (state, services) = cfg.contexts.get(&ctx).ok_or(Status::ContextNotFound)?;
        if on && !services.has_services() {
            return Err(Status::ContextInvalid);
        }
        state.active.store(on, Release);
        self.update_mask(&cfg);
        Ok(())
    }

    /// Whether `ctx` is started (false once finalization began).
    /// CONTEXT_NOT_FOUND for an unknown context.
    pub fn is_context_active(&self, ctx: ContextId) -> Result<bool, Status> {
        let cfg = self.config();
        let (state, _) = cfg.contexts.get(&ctx).ok_or(Status::ContextNotFound)?;
        Ok(state.is_active())
    }

    // ------------------------------------------------------------------
    // Tool-facing: buffers and callback threads
    // ------------------------------------------------------------------

    /// Creates a buffer of `size` bytes per half (rounded up to 4096) that
    /// starts a delivery once `watermark` bytes are buffered (0 = after every
    /// record, `size` = when full). Records are charged their SDK size (64 B for
    /// an API call, 184 B for a kernel dispatch, …). The buffer is served by the
    /// default callback thread until assigned elsewhere.
    pub fn create_buffer(
        &self,
        ctx: ContextId,
        size: u64,
        watermark: u64,
        policy: BufferPolicy,
        sink: Arc<dyn BufferSink>,
    ) -> Result<BufferId, Status> {
        self.create_buffer_in(ctx, size, watermark, policy, sink, None)
    }

    /// As [`Profiler::create_buffer`], with the halves in `memory` when it
    /// gives any (see [`crate::buffer::durable`]): the records not yet
    /// delivered outlive the process.
    pub fn create_buffer_in(
        &self,
        ctx: ContextId,
        size: u64,
        watermark: u64,
        policy: BufferPolicy,
        sink: Arc<dyn BufferSink>,
        memory: Option<&dyn crate::buffer::DurableMemory>,
    ) -> Result<BufferId, Status> {
        let mut cfg = self.configurable()?;
        if !cfg.contexts.contains_key(&ctx) {
            return Err(Status::ContextNotFound);
        }
        let route = Self::thread(&mut cfg, CallbackThreadId::DEFAULT)?.route();
        let id = BufferId(cfg.next_buffer);
        let sink = Arc::new(GatedSink {
            gate: self.record_gate.clone(),
            sink,
        });
        let buffer = Buffer::new(id, ctx, size, watermark, policy, sink, route, memory)?;
        cfg.next_buffer += 1;
        cfg.buffers.insert(id, buffer);
        Ok(id)
    }

    /// The callback thread `id`, spawning the default thread on first use.
    fn thread(cfg: &mut Config, id: CallbackThreadId) -> Result<&CallbackThread, Status> {
        if id == CallbackThreadId::DEFAULT && !cfg.threads.contains_key(&id) {
            let t = CallbackThread::spawn(id)?;
            cfg.threads.insert(id, t);
        }
        cfg.threads.get(&id).ok_or(Status::ThreadNotFound)
    }

    /// Blocks until every record produced before the call has been delivered.
    /// BUFFER_BUSY when called from the buffer's own callback thread.
    ///
    /// During finalization (e.g. from a sink run by the final flush) this
    /// still flushes; once finalization has completed it returns at once:
    /// finalize delivered everything, and the callback threads are gone.
    pub fn flush_buffer(&self, id: BufferId) -> Result<(), Status> {
        let buffer = self.buffer(id).ok_or(Status::BufferNotFound)?;
        if self.finalize_completed() {
            return Ok(());
        }
        buffer.flush()
    }

    /// The buffer itself (for producers that write records directly, and tests).
    pub fn buffer(&self, id: BufferId) -> Option<Arc<Buffer>> {
        self.config().buffers.get(&id).cloned()
    }

    /// Spawns a new callback thread to serve buffers assigned to it with
    /// [`Profiler::assign_callback_thread`]; ids start at 1
    /// ([`CallbackThreadId::DEFAULT`] is 0). FINALIZED or
    /// CONFIGURATION_LOCKED once configuring is over.
    pub fn create_callback_thread(&self) -> Result<CallbackThreadId, Status> {
        let mut cfg = self.configurable()?;
        let id = CallbackThreadId(cfg.next_thread);
        let t = CallbackThread::spawn(id)?;
        cfg.next_thread += 1;
        cfg.threads.insert(id, t);
        Ok(id)
    }

    /// Moves `buffer`'s deliveries to callback thread `thread`, after
    /// flushing what the old thread had queued (so deliveries stay in
    /// order). BUFFER_NOT_FOUND or THREAD_NOT_FOUND for unknown handles;
    /// FINALIZED or CONFIGURATION_LOCKED once configuring is over.
    pub fn assign_callback_thread(
        &self,
        buffer: BufferId,
        thread: CallbackThreadId,
    ) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        let buf = cfg
            .buffers
            .get(&buffer)
            .cloned()
            .ok_or(Status::BufferNotFound)?;
        let route = Self::thread(&mut cfg, thread)?.route();
        debug_assert_eq!(route.thread, thread);
        // Deliver what the old thread has queued before switching.
        drop(cfg);
        buf.flush()?;
        buf.set_route(route);
        Ok(())
    }

    // ------------------------------------------------------------------
    // Tool-facing: services
    // ------------------------------------------------------------------

    /// Records of `kind` (operations `ops`, empty = all) go to `buffer`.
    pub fn configure_buffer_tracing(
        &self,
        ctx: ContextId,
        kind: BufferTracingKind,
        ops: &[u32],
        buffer: BufferId,
    ) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        if !cfg.contexts.contains_key(&ctx) {
            return Err(Status::ContextNotFound);
        }
        check_buffer_kind(kind)?;
        registry::check_operations(kind, ops)?;
        let buf = cfg.buffers.get(&buffer).ok_or(Status::BufferNotFound)?;
        if buf.context() != ctx {
            return Err(Status::InvalidArgument);
        }
        let services = &mut cfg.contexts.get_mut(&ctx).ok_or(Status::ContextNotFound)?.1;
        if services.buffer.contains_key(&kind) {
            return Err(Status::ServiceAlreadyConfigured);
        }
        services.buffer.insert(kind, (OpFilter::new(ops), buffer));
        self.rebuild(&cfg);
        Ok(())
    }

    /// `sink` is called at ENTER and EXIT of operations `ops` (empty = all) of `kind`.
    pub fn configure_callback_tracing(
        &self,
        ctx: ContextId,
        kind: CallbackTracingKind,
        ops: &[u32],
        sink: Arc<dyn CallbackSink>,
    ) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        let services = &mut cfg.contexts.get_mut(&ctx).ok_or(Status::ContextNotFound)?.1;
        if Domain::from_callback_kind(kind).is_none() {
            return Err(Status::NotImplemented);
        }
        registry::check_operations(kind, ops)?;
        if services.callback.contains_key(&kind) {
            return Err(Status::ServiceAlreadyConfigured);
        }
        services.callback.insert(kind, (OpFilter::new(ops), sink));
        self.rebuild(&cfg);
        Ok(())
    }

    /// `sink` is asked for an external id for operations of `kinds` only
    /// (empty = every kind).
    pub fn configure_external_correlation_request(
        &self,
        ctx: ContextId,
        kinds: &[ExternalCorrelationKind],
        sink: Arc<dyn ExternalCorrelationSink>,
    ) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        let services = &mut cfg.contexts.get_mut(&ctx).ok_or(Status::ContextNotFound)?.1;
        if services.external.is_some() {
            return Err(Status::ServiceAlreadyConfigured);
        }
        let kinds = if kinds.is_empty() {
            ExternalCorrelationKind::ALL.to_vec()
        } else {
            kinds.to_vec()
        };
        services.external = Some((kinds, sink));
        self.rebuild(&cfg);
        Ok(())
    }

    /// After every tool's initialization: later configuration fails with
    /// CONFIGURATION_LOCKED, and the producers' routing snapshot is frozen.
    pub fn lock_configuration(&self) {
        let cfg = self.config();
        self.locked.store(true, Release);
        let routes = self.live.read().unwrap_or_else(|e| e.into_inner()).clone();
        let _ = self.frozen.set(routes);
        drop(cfg);
    }

    /// True once [`Profiler::lock_configuration`] (or finalization) has
    /// locked the configuration.
    pub fn is_configuration_locked(&self) -> bool {
        self.locked.load(Acquire)
    }

    // ------------------------------------------------------------------
    // Tool-facing: external correlation ids
    // ------------------------------------------------------------------

    fn context_state(&self, ctx: ContextId) -> Result<Arc<ContextState>, Status> {
        let routes = self.routes();
        routes
            .contexts
            .binary_search_by_key(&ctx, |c| c.id)
            .map(|i| Arc::clone(&routes.contexts[i]))
            .map_err(|_| Status::ContextNotFound)
    }

    fn check_thread(thread_id: u64) -> Result<(), Status> {
        if thread_id == 0 {
            Err(Status::InvalidArgument)
        } else if !clock::thread_exists(thread_id) {
            Err(Status::ThreadNotFound)
        } else {
            Ok(())
        }
    }

    /// Pushes an external id for `thread_id` in `ctx`. INVALID_ARGUMENT for
    /// thread 0, THREAD_NOT_FOUND for a thread that is not alive in this process.
    pub fn push_external_correlation_id(
        &self,
        ctx: ContextId,
        thread_id: u64,
        value: u64,
    ) -> Result<(), Status> {
        let state = self.context_state(ctx)?;
        Self::check_thread(thread_id)?;
        state.external.push(thread_id, value);
        Ok(())
    }

    /// Pops the top external id of `thread_id` in `ctx`; an empty stack gives 0.
    pub fn pop_external_correlation_id(
        &self,
        ctx: ContextId,
        thread_id: u64,
    ) -> Result<u64, Status> {
        let state = self.context_state(ctx)?;
        Self::check_thread(thread_id)?;
        Ok(state.external.pop(thread_id))
    }

    // ------------------------------------------------------------------
    // Tool-facing: life cycle and lookups
    // ------------------------------------------------------------------

    /// Stops every context, flushes every buffer, stops the callback threads.
    /// Records produced afterwards are not delivered.
    ///
    /// The final flush runs the tools' buffer sinks, which may call back into
    /// the profiler; they get answers, not a deadlock: from the moment
    /// finalization begins, configuration calls and `start_context` /
    /// `stop_context` return FINALIZED, `is_context_active` is false,
    /// `flush_buffer` still flushes (BUFFER_BUSY on the buffer's own callback
    /// thread, as always), external ids can be pushed and popped.
    ///
    /// Idempotent. A call while another is under way returns once that one has
    /// completed — except on a callback thread (a sink calling `finalize`),
    /// which returns at once: the first call may be waiting for that very
    /// thread's delivery.
    pub fn finalize(&self) {
        // Under the mutex: decide who finalizes, stop every context (no
        // `start_context` can slip in between: it checks `finalized` under the
        // same mutex) and take what must be flushed and stopped. Nothing that
        // waits for a sink happens while it is held.
        let (buffers, threads) = {
            let mut cfg = self.config();
            if self.finalized.swap(true, AcqRel) {
                drop(cfg);
                self.wait_finalized();
                return;
            }
            self.locked.store(true, Release);
            for (state, _) in cfg.contexts.values() {
                state.active.store(false, Release);
            }
            self.active.store(0, Release);
            let buffers: Vec<Arc<Buffer>> = cfg.buffers.values().cloned().collect();
            (buffers, std::mem::take(&mut cfg.threads))
        };
        // Marks completion even if something below panics, so that
        // concurrent callers are never left waiting.
        let _done = FinalizeDone(self);
        for b in &buffers {
            let _ = b.flush();
        }
        for t in threads.values() {
            t.stop();
        }
    }

    /// Records lost because a buffer's sink panicked while taking them
    /// (every buffer of this engine, so far).
    pub fn lost_to_sinks(&self) -> u64 {
        self.config()
            .buffers
            .values()
            .map(|b| b.lost_to_sink())
            .sum()
    }

    /// True once finalization has begun (it may still be flushing).
    pub fn is_finalized(&self) -> bool {
        self.finalized.load(Acquire)
    }

    fn finalize_completed(&self) -> bool {
        *self.finalize_done.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the finalization another caller is running, unless this is
    /// a callback thread (whose deliveries that caller may be waiting for).
    fn wait_finalized(&self) {
        if buffer::on_callback_thread() {
            return;
        }
        let mut done = self.finalize_done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self
                .finalize_cond
                .wait(done)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Agents, code objects and kernel symbols seen so far.
    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    /// The contexts that exist, in id order.
    pub fn contexts(&self) -> Vec<ContextId> {
        self.config().contexts.keys().copied().collect()
    }

    /// Whether `ctx` exists and has a service configured (so it could be
    /// started; the SDK's "valid" context).
    pub fn context_has_services(&self, ctx: ContextId) -> bool {
        self.config()
            .contexts
            .get(&ctx)
            .is_some_and(|(_, services)| services.has_services())
    }

    /// Removes `buffer`: it delivers what it holds, then no longer exists
    /// (BUFFER_NOT_FOUND afterwards). Only before the configuration locks
    /// and while no service of a context routes records into it, as the
    /// SDK allows (BUFFER_BUSY otherwise).
    pub fn destroy_buffer(&self, buffer: BufferId) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        let buf = cfg
            .buffers
            .get(&buffer)
            .cloned()
            .ok_or(Status::BufferNotFound)?;
        let in_use = cfg
            .contexts
            .values()
            .any(|(_, services)| services.buffer.values().any(|(_, b)| *b == buffer));
        if in_use {
            return Err(Status::BufferBusy);
        }
        cfg.buffers.remove(&buffer);
        drop(cfg);
        buf.flush()
    }

    // ------------------------------------------------------------------
    // Snapshot maintenance
    // ------------------------------------------------------------------

    fn rebuild(&self, cfg: &Config) {
        let mut domains: Vec<Vec<Entry>> = Domain::ALL.iter().map(|_| Vec::new()).collect();
        for (state, services) in cfg.contexts.values() {
            for &d in Domain::ALL {
                let (b, c, e) = d.kinds();
                let buffer = b
                    .and_then(|b| services.buffer.get(&b))
                    .and_then(|(f, id)| Some((f.clone(), cfg.buffers.get(id)?.clone())));
                let callback = c
                    .and_then(|c| services.callback.get(&c))
                    .map(|(f, s)| (f.clone(), Arc::clone(s)));
                if buffer.is_none() && callback.is_none() {
                    continue;
                }
                let request = services
                    .external
                    .as_ref()
                    .filter(|(kinds, _)| e.is_some_and(|e| kinds.contains(&e)))
                    .map(|(_, s)| Arc::clone(s));
                domains[d.index()].push(Entry {
                    ctx: Arc::clone(state),
                    buffer_kind: b.map_or(0, |k| k.raw()),
                    buffer,
                    callback,
                    request,
                });
            }
        }
        let contexts = cfg.contexts.values().map(|(s, _)| Arc::clone(s)).collect();
        *self.live.write().unwrap_or_else(|e| e.into_inner()) =
            Arc::new(Routes::new(domains, contexts));
        self.update_mask(cfg);
    }

    fn update_mask(&self, _cfg: &Config) {
        let routes = self.routes();
        let mut mask = 0;
        for &d in Domain::ALL {
            if routes.domains[d.index()].iter().any(|e| e.ctx.is_active()) {
                mask |= d.bit();
            }
        }
        self.active.store(mask, Release);
    }

    #[inline]
    fn routes(&self) -> RoutesRef<'_> {
        match self.frozen.get() {
            Some(r) => RoutesRef::Frozen(r),
            None => RoutesRef::Live(self.live.read().unwrap_or_else(|e| e.into_inner()).clone()),
        }
    }

    // ------------------------------------------------------------------
    // Producer-facing
    // ------------------------------------------------------------------

    /// The internal correlation id of the innermost traced call the calling
    /// thread is inside, if any (of any profiler: the per-thread frame stack
    /// is shared).
    pub fn innermost_call() -> Option<u64> {
        correlation::current()
    }

    /// True when some active context traces `domain` (buffer or callback).
    /// One relaxed load: call it before doing any work for an event.
    #[inline]
    pub fn is_tracing(&self, domain: Domain) -> bool {
        self.active.load(Relaxed) & domain.bit() != 0
    }

    /// The external id of `entry`'s context for this event.
    #[inline]
    fn external_id(&self, entry: &Entry, domain: Domain, op: u32, internal: u64, tid: u64) -> u64 {
        // The kind is looked up only when a request sink exists.
        if let Some(sink) = &entry.request {
            if let Some(kind) = domain.external_kind() {
                let req = ExternalCorrelationRequest {
                    thread_id: tid,
                    context: entry.ctx.id,
                    kind,
                    operation: op,
                    internal_correlation_id: internal,
                };
                if let Some(v) = sink.request(&req) {
                    return v;
                }
            }
        }
        entry.ctx.external.current(tid, self.main_thread)
    }

    /// Wraps one API call of `domain`, operation `op`, following the SDK's
    /// wrapper order. `args` is called only if a callback will receive it;
    /// `render_ret` only at EXIT when a callback will. Calls `call` directly
    /// when nothing traces the domain.
    #[inline]
    pub fn trace_api<R>(
        &self,
        domain: Domain,
        op: u32,
        args: impl FnOnce() -> Vec<Argument>,
        call: impl FnOnce() -> R,
        render_ret: impl FnOnce(&R) -> String,
    ) -> R {
        if !self.is_tracing(domain) || !domain.is_api() {
            return call();
        }
        // `--selected-regions`: paused, the call is only counted (the pause
        // and resume calls themselves are always recorded).
        if self.regions.is_closed() && domain != Domain::MarkerControlApi {
            self.regions.drop_one();
            return call();
        }
        // The common case — one context buffers the domain, no callback, no
        // external-id requests — decided when the configuration was locked.
        if let Some(routes) = self.frozen.get() {
            if let Some(e) = routes.sole_buffering(domain, op) {
                return self.trace_api_buffered(e, op, call);
            }
        }
        self.trace_api_slow(domain, op, args, call, render_ret)
    }

    fn trace_api_slow<R>(
        &self,
        domain: Domain,
        op: u32,
        args: impl FnOnce() -> Vec<Argument>,
        call: impl FnOnce() -> R,
        render_ret: impl FnOnce(&R) -> String,
    ) -> R {
        let routes = self.routes();
        let entries = &routes.domains[domain.index()];
        // Which entries take part, decided once so ENTER and EXIT pair up.
        let mut buffered = 0u64;
        let mut called = 0u64;
        for (i, e) in entries.iter().enumerate().take(64) {
            if e.ctx.is_active() {
                if e.buffers(op).is_some() {
                    buffered |= 1 << i;
                }
                if e.calls_back(op).is_some() {
                    called |= 1 << i;
                }
            }
        }
        if buffered | called == 0 {
            return call();
        }
        // One context buffers the call, no callback, no external-id requests:
        // the per-context bookkeeping below is not needed (the frozen
        // configuration takes this path before getting here).
        if called == 0 && buffered.is_power_of_two() {
            let e = &entries[buffered.trailing_zeros() as usize];
            if e.request.is_none() {
                return self.trace_api_buffered(e, op, call);
            }
        }
        let Some(entered) = correlation::enter(&self.ids) else {
            return call();
        };
        let (tid, internal, ancestor) = (entered.tid, entered.id, entered.ancestor);
        let frame = FrameGuard { active: true };

        let mut externals = PerEntry::new(entries.len());
        for i in bits(buffered | called) {
            *externals.slot(i) = self.external_id(&entries[i], domain, op, internal, tid);
        }

        // Callback tracing: the record (with the rendered arguments) and the
        // per-context user data exist only when some callback will run.
        let mut callbacks = None;
        if called != 0 {
            let kind = domain
                .callback_kind()
                .unwrap_or(CallbackTracingKind::HipRuntimeApi);
            let mut rec = CallbackRecord {
                context: ContextId(0),
                kind,
                operation: op,
                phase: Some(CallbackPhase::Enter),
                correlation: Correlation {
                    internal,
                    external: 0,
                    ancestor,
                },
                thread_id: tid,
                timestamp: clock::now(),
                payload: CallbackPayload::Api {
                    args: args(),
                    retval: None,
                },
            };
            let mut user_data = PerEntry::new(entries.len());
            for i in bits(called) {
                let e = &entries[i];
                if let Some((_, sink)) = &e.callback {
                    rec.context = e.ctx.id;
                    rec.correlation.external = externals.get(i);
                    sink.on_callback(&rec, user_data.slot(i));
                }
            }
            callbacks = Some((rec, user_data));
        }

        let start = clock::read();
        let ret = call();
        let end = clock::read();
        let has_children = frame.pop();
        let (start, end) = clock::span(start, end);

        if let Some((mut rec, mut user_data)) = callbacks {
            rec.phase = Some(CallbackPhase::Exit);
            rec.timestamp = end;
            if let CallbackPayload::Api { retval, .. } = &mut rec.payload {
                *retval = Some(render_ret(&ret));
            }
            for i in bits(called) {
                let e = &entries[i];
                if let Some((_, sink)) = &e.callback {
                    rec.context = e.ctx.id;
                    rec.correlation.external = externals.get(i);
                    sink.on_callback(&rec, user_data.slot(i));
                }
            }
        }

        for i in bits(buffered) {
            api_record(&entries[i], op, &entered, externals.get(i), start, end);
        }
        self.call_returned(internal, has_children);
        ret
    }

    /// [`Profiler::trace_api`] for one context that only buffers the call
    /// and asks for no external ids: the same record, less bookkeeping.
    #[inline(never)]
    fn trace_api_buffered<R>(&self, e: &Entry, op: u32, call: impl FnOnce() -> R) -> R {
        let mut call = Some(call);
        // One thread-local lookup for entering and leaving the call.
        let traced = correlation::with_thread(|thread| {
            let entered = thread.enter(&self.ids)?;
            let frame = ThreadFrame(Some(thread));
            let external = e.ctx.external.current(entered.tid, self.main_thread);
            let call = call.take()?;
            let start = clock::read();
            let ret = call();
            let end = clock::read();
            let has_children = frame.pop();
            let (start, end) = clock::span(start, end);
            api_record(e, op, &entered, external, start, end);
            self.call_returned(entered.id, has_children);
            Some(ret)
        });
        match (traced, call.take()) {
            (Some(ret), _) => ret,
            // The thread is past its teardown: untraced.
            (None, Some(call)) => call(),
            (None, None) => unreachable!("the call ran but returned nothing"),
        }
    }

    /// A traced call has returned: retire its id unless async children
    /// still refer to it.
    #[inline]
    fn call_returned(&self, internal: u64, has_children: bool) {
        if !has_children || self.pending.release(internal) {
            self.retire(internal);
        }
    }

    /// Emits a CORRELATION_ID_RETIREMENT record for `id` where traced. Every
    /// traced call ends here: the untraced check stays inline.
    #[inline]
    fn retire(&self, id: u64) {
        if self.is_tracing(Domain::CorrelationIdRetirement) {
            self.emit_retirement(id);
        }
    }

    #[inline(never)]
    fn emit_retirement(&self, id: u64) {
        let record = Record::Retirement(Retirement {
            timestamp: clock::now(),
            correlation_id: id,
        });
        let routes = self.routes();
        for e in &routes.domains[Domain::CorrelationIdRetirement.index()] {
            if e.ctx.is_active() {
                if let Some((_, b)) = &e.buffer {
                    b.push(&record);
                }
            }
        }
    }

    /// Starts an async operation of `domain` (kernel dispatch: operation
    /// `ENQUEUE`; memory copy: the direction) on the launching thread. It
    /// inherits the id of the enclosing traced call (a fresh id when there is
    /// none) and asks for external ids now. `None` when nothing traces it.
    pub fn begin_async(&self, domain: Domain, op: u32) -> Option<AsyncOp> {
        let mut op = self.begin_async_unconfirmed(domain, op)?;
        self.confirm_async(&mut op);
        Some(op)
    }

    /// As [`Profiler::begin_async`], for an operation that may turn out not
    /// to happen (a reserved queue slot that may hold a barrier rather than
    /// a kernel): the ids are drawn now, on the launching thread, but the
    /// tools' external-correlation requests wait for
    /// [`Profiler::confirm_async`], so a tool is never asked about an
    /// operation that is then cancelled.
    pub fn begin_async_unconfirmed(&self, domain: Domain, op: u32) -> Option<AsyncOp> {
        if !self.is_tracing(domain) {
            return None;
        }
        if self.regions.is_closed() {
            return Some(AsyncOp {
                domain,
                operation: op,
                internal: 0,
                thread_id: 0,
                enqueue_time: clock::now(),
                externals: Vec::new(),
                externals_pending: false,
                region: None,
                suppressed: true,
            });
        }
        let tid = clock::thread_id();
        let internal = match correlation::adopt_child() {
            Some((id, first)) => {
                self.pending.add_child(id, first);
                id
            }
            None => {
                let id = correlation::new_id(&self.ids);
                self.pending.add_child(id, false);
                id
            }
        };
        let region = match self.dispatch_filter.get() {
            Some(f) if domain == Domain::KernelDispatch && f.wants_regions() => {
                selection::innermost_range()
            }
            _ => None,
        };
        Some(AsyncOp {
            domain,
            operation: op,
            internal,
            thread_id: tid,
            enqueue_time: clock::now(),
            externals: Vec::new(),
            externals_pending: true,
            region,
            suppressed: false,
        })
    }

    /// The operation does happen: asks each active context's external id
    /// for it (the request services, else the launching thread's pushed
    /// value), as [`Profiler::begin_async`] does at once. Runs once; call it
    /// on the launching thread. An operation completed unconfirmed is
    /// confirmed at completion.
    pub fn confirm_async(&self, op: &mut AsyncOp) {
        if !op.externals_pending || op.suppressed {
            return;
        }
        op.externals_pending = false;
        // One launching call that reserves several queue slots (a barrier
        // packet before its kernel) asks the tools once: the later slots of
        // the same call take the answers of the first, so a tool is never
        // asked about a slot that then holds no dispatch and never sees its
        // answer on no record.
        let key = (self as *const Profiler as usize, op.internal, op.domain);
        if op.domain == Domain::KernelDispatch {
            let reused = LAST_DISPATCH_EXTERNALS
                .try_with(|last| {
                    last.borrow()
                        .as_ref()
                        .filter(|(k, _)| *k == key)
                        .map(|(_, ext)| ext.clone())
                })
                .ok()
                .flatten();
            if let Some(ext) = reused {
                op.externals = ext;
                return;
            }
        }
        let routes = self.routes();
        op.externals = routes.domains[op.domain.index()]
            .iter()
            .filter(|e| e.ctx.is_active())
            .map(|e| {
                (
                    e.ctx.id,
                    self.external_id(e, op.domain, op.operation, op.internal, op.thread_id),
                )
            })
            .collect();
        if op.domain == Domain::KernelDispatch {
            let _ = LAST_DISPATCH_EXTERNALS
                .try_with(|last| *last.borrow_mut() = Some((key, op.externals.clone())));
        }
    }

    /// Releases an async operation that will never complete (e.g. the launch failed).
    pub fn cancel_async(&self, op: AsyncOp) {
        if op.suppressed {
            return;
        }
        if self.pending.release(op.internal) {
            self.retire(op.internal);
        }
    }

    /// Writes `record(context's external id)` to every active context that
    /// buffers `op` of `domain`, then fires COMPLETE callbacks (phase NONE).
    fn complete(&self, op: &AsyncOp, record_op: u32, record: impl Fn(u64) -> Record) {
        let routes = self.routes();
        for e in &routes.domains[op.domain.index()] {
            if !e.ctx.is_active() {
                continue;
            }
            let external = op.external_id(e.ctx.id);
            let done = record(external);
            if let Some(b) = e.buffers(record_op) {
                b.push(&done);
            }
            if let (Some(sink), Some(kind)) = (e.calls_back(record_op), op.domain.callback_kind()) {
                let payload = match done {
                    Record::KernelDispatch(k) => CallbackPayload::KernelDispatch(k),
                    Record::MemoryCopy(c) => CallbackPayload::MemoryCopy(c),
                    _ => CallbackPayload::None,
                };
                let rec = CallbackRecord {
                    context: e.ctx.id,
                    kind,
                    operation: record_op,
                    phase: None,
                    correlation: Correlation {
                        internal: op.internal,
                        external,
                        ancestor: 0,
                    },
                    thread_id: op.thread_id,
                    timestamp: clock::now(),
                    payload,
                };
                sink.on_callback(&rec, &mut 0);
            }
        }
    }

    fn finish(&self, op: AsyncOp) {
        if self.pending.release(op.internal) {
            self.retire(op.internal);
        }
    }

    /// A kernel dispatch completed (on any thread). The engine fills in
    /// `correlation_id`, `external_correlation_id` and `thread_id` (the
    /// launcher's); the caller supplies the timing and dispatch fields.
    ///
    /// A dispatch the [`DispatchFilter`] drops reaches no context (and its
    /// correlation id retires as usual).
    pub fn complete_kernel_dispatch(&self, mut op: AsyncOp, dispatch: KernelDispatch) {
        if op.suppressed {
            return self.regions.drop_one();
        }
        self.confirm_async(&mut op);
        let mut base = KernelDispatch {
            correlation_id: op.internal,
            thread_id: op.thread_id,
            ..dispatch
        };
        if let Some(f) = self.dispatch_filter.get() {
            if !f.select(&mut base, op.region.as_deref(), &self.symbols) {
                self.finish(op);
                return;
            }
        }
        self.complete(&op, kernel_dispatch::COMPLETE, |external| {
            Record::KernelDispatch(KernelDispatch {
                external_correlation_id: external,
                ..base
            })
        });
        self.finish(op);
    }

    /// Installs the filter every kernel dispatch passes before it is
    /// recorded (once; a second call is refused with ERROR). Install it
    /// before the application launches kernels.
    pub fn set_dispatch_filter(&self, filter: Arc<dyn DispatchFilter>) -> Result<(), Status> {
        self.dispatch_filter.set(filter).map_err(|_| Status::Error)
    }

    /// Installs the gate every delivery of every buffer passes (once; a
    /// second call is refused with ERROR).
    pub fn set_record_gate(&self, gate: Arc<dyn RecordGate>) -> Result<(), Status> {
        self.record_gate.set(gate).map_err(|_| Status::Error)
    }

    /// Turns rocprofv3's `--selected-regions` on: from now on the engine
    /// records only between [`Profiler::resume`] and [`Profiler::pause`],
    /// starting paused ([`crate::selection`]). Call it before the
    /// application runs.
    pub fn enable_selected_regions(&self) {
        self.regions.enable();
    }

    /// `roctxProfilerResume`: with `--selected-regions`, collection resumes
    /// (for every thread); otherwise nothing happens.
    pub fn resume(&self) {
        self.regions.switch(true);
    }

    /// `roctxProfilerPause`: with `--selected-regions`, collection pauses
    /// (for every thread); otherwise nothing happens.
    pub fn pause(&self) {
        self.regions.switch(false);
    }

    /// What `--selected-regions` did so far; `None` when it is off.
    pub fn regions_report(&self) -> Option<RegionsReport> {
        self.regions.report()
    }

    /// Passes a recorded batch (a replay's) through the record gate, as a
    /// live run passes each delivery; without a gate, keeps it whole.
    pub fn gate_batch(&self, batch: &mut Batch) {
        if let Some(g) = self.record_gate.get() {
            g.gate(batch);
        }
    }

    /// Passes recorded dispatches (a replay's) through the dispatch
    /// filter, in order, as a live run passes each completed one; without
    /// a filter, keeps them all.
    pub fn select_dispatches(&self, dispatches: &mut KernelDispatchColumns) {
        let Some(f) = self.dispatch_filter.get() else {
            return;
        };
        let kept: KernelDispatchColumns = dispatches
            .rows()
            .filter_map(|mut d| f.select(&mut d, None, &self.symbols).then_some(d))
            .collect();
        *dispatches = kept;
    }

    /// An async memory copy completed (on any thread). `copy.operation` is the
    /// direction; correlation and thread fields are filled in by the engine.
    pub fn complete_memory_copy(&self, mut op: AsyncOp, copy: MemoryCopy) {
        if op.suppressed {
            return self.regions.drop_one();
        }
        self.confirm_async(&mut op);
        let base = MemoryCopy {
            correlation_id: op.internal,
            thread_id: op.thread_id,
            ..copy
        };
        self.complete(&op, copy.operation, |external| {
            Record::MemoryCopy(MemoryCopy {
                external_correlation_id: external,
                ..base
            })
        });
        self.finish(op);
    }

    /// Correlation for a synchronous event on this thread: the enclosing call's
    /// id (0 outside any traced call).
    fn sync_record(&self, domain: Domain, op: u32, record: impl Fn(u64, u64, u64) -> Record) {
        if !self.is_tracing(domain) {
            return;
        }
        if self.regions.is_closed() {
            self.regions.drop_one();
            return;
        }
        let tid = clock::thread_id();
        let internal = correlation::current().unwrap_or(0);
        let routes = self.routes();
        for e in &routes.domains[domain.index()] {
            if e.ctx.is_active() {
                if let Some(b) = e.buffers(op) {
                    let external = self.external_id(e, domain, op, internal, tid);
                    b.push(&record(internal, external, tid));
                }
            }
        }
    }

    /// A memory allocation or free (`row.operation`, addresses, sizes, times);
    /// correlation and thread are filled in from the calling thread.
    pub fn record_memory_allocation(&self, row: MemoryAllocation) {
        self.sync_record(
            Domain::MemoryAllocation,
            row.operation,
            |internal, external, tid| {
                Record::MemoryAllocation(MemoryAllocation {
                    correlation_id: internal,
                    external_correlation_id: external,
                    thread_id: tid,
                    ..row
                })
            },
        );
    }

    /// A scratch-memory event; correlation and thread from the calling thread.
    pub fn record_scratch_memory(&self, row: ScratchMemory) {
        self.sync_record(
            Domain::ScratchMemory,
            row.operation,
            |internal, external, tid| {
                Record::ScratchMemory(ScratchMemory {
                    correlation_id: internal,
                    external_correlation_id: external,
                    thread_id: tid,
                    ..row
                })
            },
        );
    }

    /// A runtime finished initializing; `version` = 10000·major + 100·minor + patch.
    pub fn record_runtime_initialization(
        &self,
        library: RuntimeLibrary,
        version: u64,
        instance: u64,
    ) {
        let op = library as u32;
        let now = clock::now();
        self.sync_record(Domain::RuntimeInitialization, op, |_, _, tid| {
            Record::RuntimeInitialization(RuntimeInitialization {
                operation: op,
                thread_id: tid,
                timestamp: now,
                version,
                instance,
            })
        });
        if self.is_tracing(Domain::RuntimeInitialization) {
            self.code_object_like_callback(
                Domain::RuntimeInitialization,
                op,
                Some(CallbackPhase::Enter),
                CallbackPayload::None,
            );
        }
    }

    /// Fires callbacks of a non-API callback kind (code objects, runtime init).
    fn code_object_like_callback(
        &self,
        domain: Domain,
        op: u32,
        phase: Option<CallbackPhase>,
        payload: CallbackPayload,
    ) {
        let Some(kind) = domain.callback_kind() else {
            return;
        };
        let routes = self.routes();
        let mut rec = None;
        for e in &routes.domains[domain.index()] {
            if !e.ctx.is_active() {
                continue;
            }
            if let Some(sink) = e.calls_back(op) {
                let rec = rec.get_or_insert_with(|| CallbackRecord {
                    context: e.ctx.id,
                    kind,
                    operation: op,
                    phase,
                    correlation: Correlation {
                        internal: correlation::current().unwrap_or(0),
                        external: 0,
                        ancestor: 0,
                    },
                    thread_id: clock::thread_id(),
                    timestamp: clock::now(),
                    payload: payload.clone(),
                });
                rec.context = e.ctx.id;
                sink.on_callback(rec, &mut 0);
            }
        }
    }

    /// A code object was loaded: remember it and fire CODE_OBJECT / LOAD (ENTER).
    pub fn emit_code_object_load(&self, co: CodeObject) {
        self.symbols.insert_code_object(co.clone());
        if self.is_tracing(Domain::CodeObject) {
            self.code_object_like_callback(
                Domain::CodeObject,
                code_object::LOAD,
                Some(CallbackPhase::Enter),
                CallbackPayload::CodeObjectLoad(co),
            );
        }
    }

    /// A code object is being unloaded: CODE_OBJECT / LOAD (EXIT). The table
    /// keeps it (names stay valid until finalization).
    pub fn emit_code_object_unload(&self, id: u64) {
        if let (true, Some(co)) = (
            self.is_tracing(Domain::CodeObject),
            self.symbols.code_object(id),
        ) {
            self.code_object_like_callback(
                Domain::CodeObject,
                code_object::LOAD,
                Some(CallbackPhase::Exit),
                CallbackPayload::CodeObjectLoad(co),
            );
        }
    }

    /// A kernel symbol was registered: remember it and fire
    /// CODE_OBJECT / DEVICE_KERNEL_SYMBOL_REGISTER (ENTER).
    pub fn emit_kernel_symbol_register(&self, symbol: KernelSymbol) {
        self.symbols.insert_kernel(symbol.clone());
        // Callbacks see the name the outputs write.
        let symbol = self.symbols.named(symbol);
        if self.is_tracing(Domain::CodeObject) {
            self.code_object_like_callback(
                Domain::CodeObject,
                code_object::DEVICE_KERNEL_SYMBOL_REGISTER,
                Some(CallbackPhase::Enter),
                CallbackPayload::KernelSymbolRegister(symbol),
            );
        }
    }

    /// A kernel symbol is being unregistered: DEVICE_KERNEL_SYMBOL_REGISTER (EXIT).
    pub fn emit_kernel_symbol_unregister(&self, id: u64) {
        if let (true, Some(k)) = (self.is_tracing(Domain::CodeObject), self.symbols.kernel(id)) {
            self.code_object_like_callback(
                Domain::CodeObject,
                code_object::DEVICE_KERNEL_SYMBOL_REGISTER,
                Some(CallbackPhase::Exit),
                CallbackPayload::KernelSymbolRegister(k),
            );
        }
    }
}

/// Buffer kinds a context may configure: the ones some domain produces.
fn check_buffer_kind(kind: BufferTracingKind) -> Result<(), Status> {
    match kind {
        // Callback-only in the SDK.
        BufferTracingKind::HipStream => Err(Status::KindNotFound),
        k if Domain::from_buffer_kind(k).is_some() => Ok(()),
        _ => Err(Status::NotImplemented),
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
