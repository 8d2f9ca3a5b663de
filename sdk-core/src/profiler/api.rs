//! The producer-facing API path: [`Profiler::trace_api`] wraps one API call
//! in the SDK's order (external ids, ENTER callbacks, the call, EXIT
//! callbacks, buffer records), with a fast path for one buffering context;
//! correlation ids retire when their call and its async children are done.

use super::*;

impl Profiler {
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

    /// True when some context, started or not, has configured a service of
    /// `domain` (buffer or callback tracing). What must be set up when a
    /// runtime comes up — copy timing, intercept queues — asks this, not
    /// [`Profiler::is_tracing`]: the SDK sets them up for every registered
    /// context, and a tool may start its context only later (PyTorch's
    /// profiler configures in `initialize` and starts at `startTrace`).
    pub fn is_configured(&self, domain: Domain) -> bool {
        !self.routes().domains[domain.index()].is_empty()
    }

    /// The external id of `entry`'s context for this event.
    #[inline]
    pub(super) fn external_id(
        &self,
        entry: &Entry,
        domain: Domain,
        op: u32,
        internal: u64,
        tid: u64,
    ) -> u64 {
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

    pub(super) fn trace_api_slow<R>(
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
    pub(super) fn trace_api_buffered<R>(&self, e: &Entry, op: u32, call: impl FnOnce() -> R) -> R {
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
    pub(super) fn call_returned(&self, internal: u64, has_children: bool) {
        if !has_children || self.pending.release(internal) {
            self.retire(internal);
        }
    }

    /// Emits a CORRELATION_ID_RETIREMENT record for `id` where traced. Every
    /// traced call ends here: the untraced check stays inline.
    #[inline]
    pub(super) fn retire(&self, id: u64) {
        if self.is_tracing(Domain::CorrelationIdRetirement) {
            self.emit_retirement(id);
        }
    }

    #[inline(never)]
    pub(super) fn emit_retirement(&self, id: u64) {
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
}
