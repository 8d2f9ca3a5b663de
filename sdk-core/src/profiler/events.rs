//! The other producers: async operations (kernel dispatches and memory
//! copies, begun on the launching thread and completed on the runtime's),
//! the dispatch filter and record gate, synchronous events (allocations,
//! scratch memory, runtime initialisation), code objects and kernel
//! symbols.

use super::*;

impl Profiler {
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
                ancestor: 0,
                thread_id: 0,
                enqueue_time: clock::now(),
                externals: Vec::new(),
                entered: Vec::new(),
                externals_pending: false,
                region: None,
                suppressed: true,
            });
        }
        let tid = clock::thread_id();
        let (internal, ancestor) = match correlation::adopt_child() {
            Some(call) => {
                self.pending.add_child(call.id, call.first);
                (call.id, call.ancestor)
            }
            None => {
                let id = correlation::new_id(&self.ids);
                self.pending.add_child(id, false);
                (id, 0)
            }
        };
        let region = match self.dispatch_filter.get() {
            Some(f) if domain == Domain::KernelDispatch && f.wants_regions() => {
                selection::innermost_range()
            }
            _ => None,
        };
        self.async_in_flight.fetch_add(1, AcqRel);
        Some(AsyncOp {
            domain,
            operation: op,
            internal,
            ancestor,
            thread_id: tid,
            enqueue_time: clock::now(),
            externals: Vec::new(),
            entered: Vec::new(),
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

    /// Waits, at most `within`, until every async operation begun has
    /// completed or been cancelled; returns how many had not by then.
    ///
    /// Call it when the application is ending, before anything is flushed:
    /// the runtime reports a dispatch's completion on its own thread, which
    /// can lag behind an application that synchronised and returned from
    /// `main`, so without the wait the last dispatches and copies of a run
    /// could miss the outputs. What does not settle in time (a kernel still
    /// running at exit) is for the caller to report.
    pub fn settle_async(&self, within: std::time::Duration) -> u64 {
        let until = std::time::Instant::now() + within;
        loop {
            let left = self.async_in_flight.load(Acquire);
            if left == 0 || std::time::Instant::now() >= until {
                return left;
            }
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
    }

    /// Releases an async operation that will never complete (e.g. the launch failed).
    pub fn cancel_async(&self, op: AsyncOp) {
        if op.suppressed {
            return;
        }
        self.async_in_flight.fetch_sub(1, AcqRel);
        if self.pending.release(op.internal) {
            self.retire(op.internal);
        }
    }

    /// Writes `record(context's external id)` to every active context that
    /// buffers `op` of `domain`, then makes the completion callbacks, as
    /// the SDK does: a kernel dispatch's COMPLETE (phase NONE) to every
    /// active context that traces it; a memory copy's EXIT, with the user
    /// data its ENTER left, to the contexts that got the ENTER
    /// ([`Profiler::submit_memory_copy`]).
    pub(super) fn complete(&self, op: &AsyncOp, record_op: u32, record: impl Fn(u64) -> Record) {
        let routes = self.routes();
        let copy = op.domain == Domain::MemoryCopy;
        for e in &routes.domains[op.domain.index()] {
            let entered = op.entered.iter().find(|(c, _)| *c == e.ctx.id);
            if !e.ctx.is_active() && entered.is_none() {
                continue;
            }
            let external = op.external_id(e.ctx.id);
            let done = record(external);
            if e.ctx.is_active() {
                if let Some(b) = e.buffers(record_op) {
                    b.push(&done);
                }
            }
            let (phase, mut user_data) = match (copy, entered) {
                (false, _) => (None, 0),
                (true, Some(&(_, data))) => (Some(CallbackPhase::Exit), data),
                (true, None) => continue,
            };
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
                    phase,
                    correlation: Correlation {
                        internal: op.internal,
                        external,
                        ancestor: op.ancestor,
                    },
                    thread_id: op.thread_id,
                    timestamp: clock::now(),
                    payload,
                };
                sink.on_callback(&rec, &mut user_data);
            }
        }
    }

    /// A kernel dispatch is being enqueued (its packet is written), on the
    /// launching thread or the runtime's: the KERNEL_DISPATCH / ENQUEUE
    /// callbacks, ENTER then EXIT with the same user data, to every active
    /// context that calls back ENQUEUE. The payload is the dispatch as
    /// known then: its dispatch info, no timestamps (0), as the SDK's.
    pub fn enqueue_kernel_dispatch(&self, op: &mut AsyncOp, dispatch: &KernelDispatch) {
        let (internal, thread_id) = (op.internal, op.thread_id);
        let payload = |external| {
            CallbackPayload::KernelDispatch(KernelDispatch {
                correlation_id: internal,
                external_correlation_id: external,
                thread_id,
                start: 0,
                end: 0,
                ..*dispatch
            })
        };
        self.submission_callbacks(
            op,
            kernel_dispatch::ENQUEUE,
            payload,
            |rec, sink, user_data| {
                rec.phase = Some(CallbackPhase::Exit);
                rec.timestamp = clock::now();
                sink.on_callback(rec, user_data);
            },
        );
    }

    /// An async memory copy is being submitted, on the submitting thread:
    /// the MEMORY_COPY ENTER callbacks (operation = direction) to every
    /// active context that calls it back, with the copy's agents, size and
    /// addresses and no timestamps (0), as the SDK's; each context's user
    /// data is kept for its EXIT at completion.
    pub fn submit_memory_copy(&self, op: &mut AsyncOp, copy: &MemoryCopy) {
        let (internal, thread_id) = (op.internal, op.thread_id);
        let payload = |external| {
            CallbackPayload::MemoryCopy(MemoryCopy {
                correlation_id: internal,
                external_correlation_id: external,
                thread_id,
                start: 0,
                end: 0,
                ..*copy
            })
        };
        let mut entered = Vec::new();
        self.submission_callbacks(op, copy.operation, payload, |rec, _, user_data| {
            entered.push((rec.context, *user_data));
        });
        op.entered = entered;
    }

    /// The ENTER callbacks of async operation `op` (`record_op` of its
    /// domain) as it is submitted, to every active context that calls that
    /// operation back, with `payload(context's external id)`; then `after`
    /// with the record, the sink and the user data the ENTER left.
    fn submission_callbacks(
        &self,
        op: &mut AsyncOp,
        record_op: u32,
        payload: impl Fn(u64) -> CallbackPayload,
        mut after: impl FnMut(&mut CallbackRecord, &dyn CallbackSink, &mut u64),
    ) {
        let Some(kind) = op.domain.callback_kind() else {
            return;
        };
        if op.suppressed || !self.is_tracing(op.domain) {
            return;
        }
        self.confirm_async(op);
        let routes = self.routes();
        for e in &routes.domains[op.domain.index()] {
            if !e.ctx.is_active() {
                continue;
            }
            let Some(sink) = e.calls_back(record_op) else {
                continue;
            };
            let external = op.external_id(e.ctx.id);
            let mut rec = CallbackRecord {
                context: e.ctx.id,
                kind,
                operation: record_op,
                phase: Some(CallbackPhase::Enter),
                correlation: Correlation {
                    internal: op.internal,
                    external,
                    ancestor: op.ancestor,
                },
                thread_id: op.thread_id,
                timestamp: clock::now(),
                payload: payload(external),
            };
            let mut user_data = 0;
            sink.on_callback(&rec, &mut user_data);
            after(&mut rec, sink.as_ref(), &mut user_data);
        }
    }

    pub(super) fn finish(&self, op: AsyncOp) {
        self.async_in_flight.fetch_sub(1, AcqRel);
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
    pub fn complete_kernel_dispatch(&self, op: AsyncOp, dispatch: KernelDispatch) {
        self.complete_kernel_dispatch_counted(op, dispatch, &[]);
    }

    /// A completed kernel dispatch with the values of its counters
    /// (`(name, value summed over the counter's instances)`, as
    /// [`Profiler::dispatch_counters`] asked): the dispatch as
    /// [`Profiler::complete_kernel_dispatch`] records it and, for each
    /// active context that counts counters, one counter sample per counter
    /// it counts, into its counting buffer. A dispatch the kernel filter
    /// drops is not counted either; one renamed is counted renamed.
    pub fn complete_kernel_dispatch_counted(
        &self,
        mut op: AsyncOp,
        dispatch: KernelDispatch,
        values: &[(String, f64)],
    ) {
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
        if !values.is_empty() {
            self.count_dispatch(&op, &base, values);
        }
        self.complete(&op, kernel_dispatch::COMPLETE, |external| {
            Record::KernelDispatch(KernelDispatch {
                external_correlation_id: external,
                ..base
            })
        });
        self.finish(op);
    }

    /// One counter sample per counter of each counting context.
    fn count_dispatch(&self, op: &AsyncOp, base: &KernelDispatch, values: &[(String, f64)]) {
        self.push_counter_samples(base, values, |ctx, _| op.external_id(ctx));
    }

    /// Each active counting context's counter samples of a dispatch:
    /// `external(context, requests)` is the external id the dispatch
    /// carries in it (`requests`: the context requests external ids).
    pub(super) fn push_counter_samples(
        &self,
        base: &KernelDispatch,
        values: &[(String, f64)],
        external: impl Fn(ContextId, bool) -> u64,
    ) {
        let routes = self.routes();
        let counting = routes.domains[Domain::KernelDispatch.index()]
            .iter()
            .filter(|e| e.ctx.is_active())
            .filter_map(|e| Some((e.ctx.id, e.request.is_some(), e.counting.as_ref()?)));
        for (ctx, requests, (buffer, names)) in counting {
            let external = external(ctx, requests);
            for name in names.iter() {
                let Some(&(_, value)) = values.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                let counter_id = self.symbols.intern_counter(name);
                let sample = crate::CounterSample::of_dispatch(
                    &KernelDispatch {
                        external_correlation_id: external,
                        ..*base
                    },
                    counter_id,
                    value,
                );
                buffer.push(&Record::CounterSample(sample));
            }
        }
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

    /// Passes a recorded batch (a replay's) through the dispatch filter,
    /// in order, as a live run passes each completed dispatch: its kernel
    /// dispatches, and its counter samples with them (a sample follows its
    /// dispatch's verdict: dropped with it, renamed with it). Each dispatch
    /// is asked once, whichever comes first, its record or its samples
    /// (they come from different files): `seen` keeps the verdicts by
    /// (dispatch id, correlation id) across batches of one process.
    /// Without a filter, keeps everything.
    pub fn select_batch(&self, batch: &mut Batch, seen: &mut DispatchVerdicts) {
        let Some(f) = self.dispatch_filter.get() else {
            return;
        };
        let ask = |mut d: KernelDispatch| f.select(&mut d, None, &self.symbols).then_some(d);
        let mut verdict = |d: KernelDispatch| match (d.dispatch_id, d.correlation_id) {
            // A recording without ids: nothing ties a sample to its record.
            (0, 0) => ask(d),
            key => *seen.entry(key).or_insert_with(|| ask(d)),
        };
        let dispatches: KernelDispatchColumns = batch
            .kernel_dispatches
            .rows()
            .filter_map(&mut verdict)
            .collect();
        let samples: CounterSampleColumns = batch
            .counter_samples
            .rows()
            .filter_map(|s| {
                let kept = verdict(s.dispatch())?;
                Some(crate::CounterSample::of_dispatch(
                    &KernelDispatch {
                        thread_id: s.thread_id,
                        external_correlation_id: s.external_correlation_id,
                        ..kept
                    },
                    s.counter_id,
                    s.value(),
                ))
            })
            .collect();
        batch.kernel_dispatches = dispatches;
        batch.counter_samples = samples;
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
    pub(super) fn sync_record(
        &self,
        domain: Domain,
        op: u32,
        record: impl Fn(u64, u64, u64) -> Record,
    ) {
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
            // Phase NONE and correlation ids 0, as the SDK's.
            self.code_object_like_callback(
                Domain::RuntimeInitialization,
                op,
                None,
                CallbackPayload::RuntimeInitialization { version, instance },
            );
        }
    }

    /// Fires callbacks of a non-API callback kind (code objects, runtime init).
    pub(super) fn code_object_like_callback(
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
                    // The SDK's code-object and runtime-initialisation
                    // records carry no correlation ids.
                    correlation: Correlation::default(),
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

    /// A kernel symbol that HIP registered a host function for was
    /// loaded: CODE_OBJECT / HOST_KERNEL_SYMBOL_REGISTER (ENTER), right
    /// after the symbol's DEVICE_KERNEL_SYMBOL_REGISTER, as the SDK does.
    /// Host registrations are never unregistered (nor are they by the SDK).
    pub fn emit_host_kernel_symbol_register(&self, symbol: HostKernelSymbol) {
        if self.is_tracing(Domain::CodeObject) {
            self.code_object_like_callback(
                Domain::CodeObject,
                code_object::HOST_KERNEL_SYMBOL_REGISTER,
                Some(CallbackPhase::Enter),
                CallbackPayload::HostKernelSymbolRegister(symbol),
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
