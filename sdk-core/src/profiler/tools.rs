//! The tool-facing half of the engine: contexts, buffers and callback
//! threads, services, external correlation ids, the life cycle and lookups
//! (what `rocprofiler_*` functions and the plugin host call).

use super::*;

impl Profiler {
    pub(super) fn config(&self) -> MutexGuard<'_, Config> {
        self.config.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fails with FINALIZED or CONFIGURATION_LOCKED when configuring is over.
    pub(super) fn configurable(&self) -> Result<MutexGuard<'_, Config>, Status> {
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
            roctx_ops: AtomicBool::new(false),
        });
        cfg.contexts.insert(id, (state, ContextConfig::default()));
        self.rebuild(&cfg);
        Ok(id)
    }

    /// Makes `ctx`'s `MARKER_CORE_RANGE_API` records carry the roctx
    /// operation (`roctxMarkA`, `roctxThreadRangeA`, `roctxProcessRangeA`)
    /// as the SDK's records do, instead of the number of their message
    /// (what the outputs and plugins name a record by): a tool written
    /// against the SDK's C API looks the operation's name up and gets the
    /// message from the roctx call's callback, by correlation id.
    pub fn number_markers_as_the_sdk(&self, ctx: ContextId) -> Result<(), Status> {
        let cfg = self.config();
        let (state, _) = cfg.contexts.get(&ctx).ok_or(Status::ContextNotFound)?;
        state.roctx_ops.store(true, Relaxed);
        Ok(())
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

    pub(super) fn set_active(&self, ctx: ContextId, on: bool) -> Result<(), Status> {
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
    pub(super) fn thread(
        cfg: &mut Config,
        id: CallbackThreadId,
    ) -> Result<&CallbackThread, Status> {
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
        // Every kind the headers declare is accepted, as by the SDK; one
        // that no runtime rocwasm intercepts produces (OMPT, KFD events,
        // rocDecode's argument records, …) yields no records, as on a
        // machine without that runtime.
        crate::ops::check_operations(kind, ops)?;
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
        // As for buffers: a kind nothing here produces is accepted and
        // never called back.
        crate::ops::check_operations(kind, ops)?;
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

    /// Dispatch counting for `ctx`, into `buffer` (the buffered service) or
    /// by callback (`None`). Either the context is given a fixed counter
    /// set ([`Profiler::set_dispatch_counters`], a run's `--pmc`: the
    /// engine produces its counter samples), or a native tool chooses the
    /// counters per dispatch and the producer hands the values to it: the
    /// context then takes part in [`Profiler::tool_counting`].
    pub fn configure_dispatch_counting(
        &self,
        ctx: ContextId,
        buffer: Option<BufferId>,
    ) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        if let Some(b) = buffer {
            if !cfg.buffers.contains_key(&b) {
                return Err(Status::BufferNotFound);
            }
        }
        let services = &mut cfg.contexts.get_mut(&ctx).ok_or(Status::ContextInvalid)?.1;
        if services.counting.is_some() {
            return Err(Status::ServiceAlreadyConfigured);
        }
        services.counting = Some(buffer);
        self.rebuild(&cfg);
        Ok(())
    }

    /// The counters buffered dispatch counting of `ctx` counts for every
    /// kernel dispatch (a run's `--pmc`): the producer reads them
    /// ([`Profiler::dispatch_counters`]) and hands their values to
    /// [`Profiler::complete_kernel_dispatch_counted`], which puts one
    /// counter sample per counter into the context's counting buffer.
    /// `ctx` must have configured dispatch counting into a buffer.
    pub fn set_dispatch_counters(&self, ctx: ContextId, names: Vec<String>) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        let services = &mut cfg.contexts.get_mut(&ctx).ok_or(Status::ContextNotFound)?.1;
        if !matches!(services.counting, Some(Some(_))) {
            return Err(Status::InvalidArgument);
        }
        services.counters = names;
        self.rebuild(&cfg);
        Ok(())
    }

    /// Every counter some context counts for every dispatch, each once
    /// (empty when none does): read from the routes, no lock once the
    /// configuration is locked.
    pub fn dispatch_counters(&self) -> Arc<[String]> {
        Arc::clone(&self.routes().counters)
    }

    /// Device counting for `ctx` (a native tool samples an agent's
    /// counters over a window): kernel dispatches are observed while the
    /// context is active, for the producer to add their counters up
    /// ([`Profiler::tool_counting`]). SERVICE_ALREADY_CONFIGURED the
    /// second time.
    pub fn configure_device_counting(&self, ctx: ContextId) -> Result<(), Status> {
        let mut cfg = self.configurable()?;
        let services = &mut cfg.contexts.get_mut(&ctx).ok_or(Status::ContextInvalid)?.1;
        if services.device_counting {
            return Err(Status::ServiceAlreadyConfigured);
        }
        services.device_counting = true;
        self.rebuild(&cfg);
        Ok(())
    }

    /// The active contexts in which a native tool counts (dispatch counting
    /// choosing its counters per dispatch, or device counting), each with
    /// the external correlation id `op` carries in it: who the producer
    /// asks about a kernel dispatch. Empty, without a lock, when none.
    pub fn tool_counting(&self, op: &AsyncOp) -> Vec<(ContextId, u64)> {
        self.routes().domains[Domain::KernelDispatch.index()]
            .iter()
            .filter(|e| e.tool_counting && e.ctx.is_active())
            .map(|e| (e.ctx.id, op.external_id(e.ctx.id)))
            .collect()
    }

    /// True when `ctx` configured dispatch counting.
    pub fn counts_dispatches(&self, ctx: ContextId) -> bool {
        self.config()
            .contexts
            .get(&ctx)
            .is_some_and(|(_, services)| services.counting.is_some())
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

    pub(super) fn context_state(&self, ctx: ContextId) -> Result<Arc<ContextState>, Status> {
        let routes = self.routes();
        routes
            .contexts
            .binary_search_by_key(&ctx, |c| c.id)
            .map(|i| Arc::clone(&routes.contexts[i]))
            .map_err(|_| Status::ContextNotFound)
    }

    pub(super) fn check_thread(thread_id: u64) -> Result<(), Status> {
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

    pub(super) fn finalize_completed(&self) -> bool {
        *self.finalize_done.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the finalization another caller is running, unless this is
    /// a callback thread (whose deliveries that caller may be waiting for).
    pub(super) fn wait_finalized(&self) {
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
}
