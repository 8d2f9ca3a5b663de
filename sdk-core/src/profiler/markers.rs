//! Markers as rocprofv3 records them (`MARKER_CORE_RANGE_API`): what the
//! application marked, not the roctx calls.
//!
//! - `roctxMarkA(message)` is one record whose start and end are its time;
//! - `roctxRangePushA(message)` … `roctxRangePop()` is one record from the
//!   push to the matching pop of the same thread (a per-thread stack), with
//!   the push's correlation id and thread;
//! - `roctxRangeStartA(message)` … `roctxRangeStop(id)` is one record from
//!   the start to the stop of that id, on any thread, with the start's
//!   correlation id and thread.
//!
//! A record's operation is its message, interned in the symbol table
//! ([`crate::SymbolTable::intern_marker`]), so every writer prints the
//! message where it prints a function name; the roctx operation
//! (`roctxMarkA`, `roctxThreadRangeA`, `roctxProcessRangeA`) is what a
//! context's operation filter is checked against. A range still open at the
//! end of the run gives no record; [`Profiler::unclosed_marker_ranges`]
//! counts them. The raw calls stay `MARKER_CORE_API` records, for whoever
//! traces that kind.

use super::*;
use crate::marker_ranges::{OpenRange, THREAD_RANGES};

const DOMAIN: Domain = Domain::MarkerCoreRangeApi;

/// Which roctx operation of `MARKER_CORE_RANGE_API` (its place in
/// [`crate::ops::MARKER_CORE_RANGE_API`]).
#[derive(Clone, Copy)]
enum Roctx {
    Mark = 0,
    ThreadRange = 1,
    ProcessRange = 2,
}

/// The operation number of `which`, looked up once.
fn roctx_op(which: Roctx) -> u32 {
    static OPS: OnceLock<Vec<u32>> = OnceLock::new();
    let ops = OPS.get_or_init(|| {
        crate::ops::MARKER_CORE_RANGE_API
            .iter()
            .map(|n| {
                crate::ops::operation_by_name(BufferTracingKind::MarkerCoreRangeApi, n).unwrap_or(0)
            })
            .collect()
    });
    ops.get(which as usize).copied().unwrap_or(0)
}

impl Profiler {
    /// A range or mark of `message` beginning now on this thread; `None`
    /// when no context traces markers.
    #[inline]
    fn open_marker(&self, message: &str) -> Option<OpenRange> {
        if !self.is_tracing(DOMAIN) {
            return None;
        }
        Some(OpenRange {
            message: self.symbols.intern_marker(message),
            // The roctx call's own id when it is traced (as the SDK's
            // callback record of the call carries it), else a new one.
            correlation_id: correlation::current()
                .unwrap_or_else(|| correlation::new_id(&self.ids)),
            thread_id: clock::thread_id(),
            start: clock::now(),
        })
    }

    /// `roctxMarkA(message)`: one record, start = end = now.
    pub fn marker_mark(&self, message: &str) {
        if let Some(m) = self.open_marker(message) {
            self.marker_record(roctx_op(Roctx::Mark), &m, m.start);
        }
    }

    /// `roctxRangePushA(message)` on the calling thread. Every push takes a
    /// place on the thread's stack, traced or not, so that each pop closes
    /// its own push even when tracing started or stopped in between; only a
    /// push made while markers were traced gives a record at its pop.
    pub fn marker_push(&self, message: &str) {
        let r = self.open_marker(message);
        if r.is_some() {
            self.open_ranges.fetch_add(1, Relaxed);
        }
        // A thread past its teardown keeps no stack: nothing recorded.
        let _ = THREAD_RANGES.try_with(|s| s.borrow_mut().push(r));
    }

    /// `roctxRangePop()` on the calling thread: the record of the thread's
    /// innermost open range (a pop with none open records nothing).
    pub fn marker_pop(&self) {
        let Some(r) = THREAD_RANGES
            .try_with(|s| s.borrow_mut().pop())
            .ok()
            .flatten()
            .flatten()
        else {
            return;
        };
        self.open_ranges.fetch_sub(1, Relaxed);
        self.marker_record(roctx_op(Roctx::ThreadRange), &r, clock::now());
    }

    /// `roctxRangeStartA(message)` returned range `id`; the range began at
    /// `start` (a [`clock::now`] taken before the call).
    pub fn marker_start(&self, message: &str, id: u64, start: u64) {
        if let Some(mut r) = self.open_marker(message) {
            r.start = start;
            let mut open = self
                .process_ranges
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if open.insert(id, r).is_none() {
                self.open_ranges.fetch_add(1, Relaxed);
            }
        }
    }

    /// `roctxRangeStop(id)`, from any thread: the record of that range.
    pub fn marker_stop(&self, id: u64) {
        // No range open anywhere (markers untraced): no lock taken.
        if self.open_ranges.load(Relaxed) == 0 {
            return;
        }
        let r = {
            let mut open = self
                .process_ranges
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if open.is_empty() {
                return;
            }
            open.remove(&id)
        };
        if let Some(r) = r {
            self.open_ranges.fetch_sub(1, Relaxed);
            self.marker_record(roctx_op(Roctx::ProcessRange), &r, clock::now());
        }
    }

    /// Marker ranges begun and never ended so far: at the end of a run,
    /// those that give no record.
    pub fn unclosed_marker_ranges(&self) -> u64 {
        self.open_ranges.load(Relaxed)
    }

    /// Writes the record of `r`, ended at `end`, into every active context
    /// that buffers roctx operation `op` of `MARKER_CORE_RANGE_API`.
    fn marker_record(&self, op: u32, r: &OpenRange, end: u64) {
        if self.regions.is_closed() {
            self.regions.drop_one();
            return;
        }
        let routes = self.routes();
        for e in &routes.domains[DOMAIN.index()] {
            if !e.ctx.is_active() {
                continue;
            }
            if let Some(b) = e.buffers(op) {
                let external = self.external_id(e, DOMAIN, op, r.correlation_id, r.thread_id);
                // The SDK's numbering for a C tool's context, the message's
                // for everyone else.
                let operation = if e.ctx.roctx_ops.load(Relaxed) {
                    op
                } else {
                    r.message
                };
                b.push(&Record::Api(ApiCall {
                    kind: e.buffer_kind,
                    operation,
                    correlation_id: r.correlation_id,
                    external_correlation_id: external,
                    ancestor: 0,
                    thread_id: r.thread_id,
                    start: r.start,
                    end: end.max(r.start),
                }));
            }
        }
    }
}
