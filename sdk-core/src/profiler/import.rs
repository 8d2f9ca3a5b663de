//! Records another profiler measured, imported into this engine's
//! contexts.
//!
//! rocwasm as a client of rocprofiler-sdk (`--backend rocprofiler-sdk`,
//! AMD's library or rocwasm's own) does not intercept anything: the SDK
//! measures the calls, dispatches and copies, and its records are turned
//! into these calls, so that the chain's and the outputs' contexts receive
//! them as if interception had produced them. An imported record keeps the
//! ids, thread and times it was measured with.
//!
//! External correlation ids: the measuring profiler asks for one when the
//! call is made, on the application's thread; its client answers with
//! [`Profiler::request_external_id`], which asks the contexts that
//! configured external-correlation requests (a chain's stage). When the
//! record arrives later, on the measuring profiler's thread, [`Profiler::import`]
//! gives that answer to the contexts that request external ids and 0 to the
//! others: an id pushed with `push_external_correlation_id` lives on the
//! application's thread, which the import does not run on.

use super::*;

impl Profiler {
    /// The external correlation id the contexts that request them give the
    /// call `internal` of `domain`/`op` on thread `thread_id`: the first
    /// non-zero answer of an active context's request service, else 0.
    pub fn request_external_id(
        &self,
        domain: Domain,
        op: u32,
        internal: u64,
        thread_id: u64,
    ) -> u64 {
        if !self.is_tracing(domain) {
            return 0;
        }
        let routes = self.routes();
        for e in &routes.domains[domain.index()] {
            if e.ctx.is_active() && e.request.is_some() {
                let id = self.external_id(e, domain, op, internal, thread_id);
                if id != 0 {
                    return id;
                }
            }
        }
        0
    }

    /// True when some context asks for external correlation ids of
    /// `domain` (a client then asks the measuring profiler to request them).
    pub fn requests_external_ids(&self, domain: Domain) -> bool {
        self.routes().domains[domain.index()]
            .iter()
            .any(|e| e.request.is_some())
    }

    /// True when some context buffers `domain`.
    pub fn buffers_domain(&self, domain: Domain) -> bool {
        self.routes().domains[domain.index()]
            .iter()
            .any(|e| e.buffer.is_some())
    }

    /// True when some context configured callbacks for `domain`: imported
    /// records reach buffers only, so a client says what it cannot call
    /// back.
    pub fn calls_back_domain(&self, domain: Domain) -> bool {
        self.routes().domains[domain.index()]
            .iter()
            .any(|e| e.callback.is_some())
    }

    /// Buffers `record` in every active context that buffers operation `op`
    /// of `domain`. `record` is called once per context with that context's
    /// external id: `external` for contexts that request external ids, 0
    /// for the others (see the module docs).
    pub fn import(&self, domain: Domain, op: u32, external: u64, record: impl Fn(u64) -> Record) {
        if !self.is_tracing(domain) {
            return;
        }
        let routes = self.routes();
        for e in &routes.domains[domain.index()] {
            if !e.ctx.is_active() {
                continue;
            }
            if let Some(b) = e.buffers(op) {
                b.push(&record(if e.request.is_some() { external } else { 0 }));
            }
        }
    }

    /// Calls back every active context that configured callbacks for
    /// `record`'s operation of `domain`, as interception's calls would:
    /// `record.context` and its external id are set per context (as
    /// [`Profiler::import`] sets them), and `user_data` holds one slot per
    /// context of the domain ([`Profiler::callback_slots`] of them), which
    /// the caller keeps from an API call's ENTER to its EXIT.
    pub fn import_callback(
        &self,
        domain: Domain,
        record: &mut CallbackRecord,
        external: u64,
        user_data: &mut [u64],
    ) {
        if !self.is_tracing(domain) {
            return;
        }
        let routes = self.routes();
        for (i, e) in routes.domains[domain.index()].iter().enumerate() {
            if !e.ctx.is_active() {
                continue;
            }
            let (Some(sink), Some(slot)) = (e.calls_back(record.operation), user_data.get_mut(i))
            else {
                continue;
            };
            record.context = e.ctx.id;
            record.correlation.external = if e.request.is_some() { external } else { 0 };
            sink.on_callback(record, slot);
        }
    }

    /// How many user-data slots [`Profiler::import_callback`] needs for
    /// `domain` (its contexts, callback or not).
    pub fn callback_slots(&self, domain: Domain) -> usize {
        self.routes().domains[domain.index()].len()
    }

    /// A dispatch's counter values measured elsewhere (`(name, value summed
    /// over the counter's instances)`; the rocprofiler-sdk back end's
    /// dispatch counting): one counter sample per counter each active
    /// counting context counts ([`Profiler::set_dispatch_counters`]).
    /// `dispatch` is the dispatch as the dispatch filter kept it
    /// ([`Profiler::import_kernel_dispatch`]'s answer, or
    /// [`Profiler::filter_dispatch`]'s when its record never came): the
    /// filter is not asked again (it counts iterations). External ids as
    /// [`Profiler::import`] gives them.
    pub fn import_counter_samples(&self, dispatch: KernelDispatch, values: &[(String, f64)]) {
        if values.is_empty() || self.routes().counters.is_empty() {
            return;
        }
        let external = dispatch.external_correlation_id;
        self.push_counter_samples(
            &dispatch,
            values,
            |_, requests| {
                if requests {
                    external
                } else {
                    0
                }
            },
        );
    }

    /// The dispatch as the dispatch filter (`--kernel-include-regex` and
    /// the like) keeps it (renamed, when it renames), or `None` when it
    /// drops it. Ask once per dispatch: the filter counts iterations.
    pub fn filter_dispatch(&self, dispatch: KernelDispatch) -> Option<KernelDispatch> {
        let mut dispatch = dispatch;
        match self.dispatch_filter.get() {
            Some(f) if !f.select(&mut dispatch, None, &self.symbols) => None,
            _ => Some(dispatch),
        }
    }

    /// [`Profiler::import`] for a kernel dispatch, through the dispatch
    /// filter (`--kernel-include-regex` and the like) as interception's
    /// are. Returns the dispatch as the filter kept it (`None`: dropped, or
    /// no context traces dispatches), for its counter samples.
    pub fn import_kernel_dispatch(&self, dispatch: KernelDispatch) -> Option<KernelDispatch> {
        if !self.is_tracing(Domain::KernelDispatch) {
            return None;
        }
        let dispatch = self.filter_dispatch(dispatch)?;
        let external = dispatch.external_correlation_id;
        self.import(
            Domain::KernelDispatch,
            kernel_dispatch::COMPLETE,
            external,
            |external| {
                Record::KernelDispatch(KernelDispatch {
                    external_correlation_id: external,
                    ..dispatch
                })
            },
        );
        Some(dispatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Batch, BufferPolicy, BufferSink, BufferTracingKind, DeliveryInfo};

    struct Keep(Mutex<Vec<Batch>>);
    impl BufferSink for Keep {
        fn deliver(&self, _: DeliveryInfo, batch: Batch) {
            self.0.lock().unwrap().push(batch);
        }
    }

    #[test]
    fn imported_calls_keep_their_ids_and_times() {
        let p = Profiler::new();
        let ctx = p.create_context().unwrap();
        let sink = Arc::new(Keep(Mutex::new(Vec::new())));
        let buf = p
            .create_buffer(ctx, 1 << 16, 1 << 15, BufferPolicy::Lossless, sink.clone())
            .unwrap();
        p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
            .unwrap();
        p.lock_configuration();
        p.start_context(ctx).unwrap();
        p.import(Domain::HipRuntimeApi, 7, 99, |external| {
            Record::Api(ApiCall {
                kind: BufferTracingKind::HipRuntimeApi.raw(),
                operation: 7,
                correlation_id: 41,
                external_correlation_id: external,
                ancestor: 0,
                thread_id: 5,
                start: 100,
                end: 200,
            })
        });
        p.flush_buffer(buf).unwrap();
        let batches = sink.0.lock().unwrap();
        let calls: Vec<_> = batches.iter().flat_map(|b| b.api_calls.rows()).collect();
        assert_eq!(calls.len(), 1);
        let c = &calls[0];
        assert_eq!(
            (c.correlation_id, c.thread_id, c.start, c.end),
            (41, 5, 100, 200)
        );
        // This context requests no external ids: the answer is not its.
        assert_eq!(c.external_correlation_id, 0);
    }
}
