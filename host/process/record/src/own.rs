//! The pipeline's own context in a live run: buffer tracing of the kinds
//! the sinks take from no chain ([`crate::route::SinkRoute::own`]), and the
//! API callbacks of the API log and of the arguments the outputs write. Its buffer is created on first use, and the context
//! starts only if it has something to do (the engine refuses an empty one).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rocwasm_core::buffer::DurableMemory;
use rocwasm_core::{
    Batch, BufferId, BufferPolicy, BufferTracingKind, ContextId, DeliveryInfo, Domain, Profiler,
    Status,
};

use crate::api_log::ApiLog;
use crate::call_args::PendingArgs;

/// The buffer size when the plan sets none (1 MiB).
const DEFAULT_BUFFER: u64 = 1 << 20;

/// Where the own context's batches go (the record journal).
pub type BatchOut = Arc<dyn Fn(&Batch) + Send + Sync>;

/// See the module docs.
pub struct OwnContext {
    ctx: ContextId,
    size: u64,
    sinks: BatchOut,
    buffer: Mutex<Option<BufferId>>,
    used: AtomicBool,
    /// Where the buffer keeps its halves (a journaled run), else the heap.
    durable: Option<Arc<dyn DurableMemory>>,
}

impl OwnContext {
    /// A new context on `profiler`; its buffer (when one is needed) holds
    /// `size` bytes (0: the default) and is lossless.
    pub fn new(
        profiler: &Profiler,
        size: u64,
        sinks: &BatchOut,
        durable: Option<Arc<dyn DurableMemory>>,
    ) -> Result<OwnContext, Status> {
        Ok(OwnContext {
            ctx: profiler.create_context()?,
            size: if size == 0 { DEFAULT_BUFFER } else { size },
            sinks: sinks.clone(),
            buffer: Mutex::new(None),
            used: AtomicBool::new(false),
            durable,
        })
    }

    /// The context's buffer, created on first use.
    fn buffer(&self, profiler: &Profiler) -> Result<BufferId, String> {
        let mut slot = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = *slot {
            return Ok(b);
        }
        let sinks = self.sinks.clone();
        let sink = move |_info: DeliveryInfo, batch: Batch| sinks(&batch);
        let b = profiler
            .create_buffer_in(
                self.ctx,
                self.size,
                self.size / 2,
                BufferPolicy::Lossless,
                Arc::new(sink),
                self.durable.as_deref(),
            )
            .map_err(|e| format!("create buffer: {e}"))?;
        *slot = Some(b);
        Ok(b)
    }

    /// Buffer tracing of `kinds` (all operations) into the sinks.
    pub fn trace(&self, profiler: &Profiler, kinds: &[BufferTracingKind]) -> Result<(), String> {
        if kinds.is_empty() {
            return Ok(());
        }
        let buffer = self.buffer(profiler)?;
        for &kind in kinds {
            profiler
                .configure_buffer_tracing(self.ctx, kind, &[], buffer)
                .map_err(|e| format!("{}: {e}", kind.name()))?;
        }
        self.used.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Dispatch counting of `counters` (`--pmc`: `NAME` or
    /// `NAME:device=N`) into the sinks: a counter sample per counter and
    /// dispatch.
    pub fn count(&self, profiler: &Profiler, counters: &[String]) -> Result<(), String> {
        if counters.is_empty() {
            return Ok(());
        }
        let buffer = self.buffer(profiler)?;
        let names = bare_counter_names(counters);
        profiler
            .configure_dispatch_counting(self.ctx, Some(buffer))
            .and_then(|()| profiler.set_dispatch_counters(self.ctx, names))
            .map_err(|e| format!("dispatch counting: {e}"))?;
        self.used.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Callback tracing of the API kinds among `kinds`, each call handed
    /// to `log` (`api_calls.txt`, written at EXIT) and to `args` (the
    /// arguments the outputs write, kept at ENTER). Nothing when both are
    /// `None`.
    pub fn calls(
        &self,
        profiler: &Profiler,
        kinds: &[BufferTracingKind],
        log: Option<Arc<ApiLog>>,
        args: Option<Arc<PendingArgs>>,
    ) -> Result<(), String> {
        if log.is_none() && args.is_none() {
            return Ok(());
        }
        for &kind in kinds {
            let Some(cb) = Domain::from_buffer_kind(kind)
                .filter(|d| d.is_api())
                .and_then(|d| d.callback_kind())
            else {
                continue;
            };
            let (log, args) = (log.clone(), args.clone());
            let sink = move |r: &rocwasm_core::CallbackRecord, _: &mut u64| {
                if let Some(log) = &log {
                    log.record(r);
                }
                if let Some(args) = &args {
                    args.record(r);
                }
            };
            profiler
                .configure_callback_tracing(self.ctx, cb, &[], Arc::new(sink))
                .map_err(|e| format!("{}: {e}", cb.name()))?;
            self.used.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Starts the context if it has anything to do.
    pub fn start(&self, profiler: &Profiler) -> Result<(), Status> {
        if self.used.load(Ordering::Relaxed) {
            profiler.start_context(self.ctx)
        } else {
            Ok(())
        }
    }
}

/// `--pmc`'s counters without their `:device=N` (the tool library applies
/// those per agent when it samples).
pub(crate) fn bare_counter_names(requested: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in requested {
        let name = c.split_once(':').map_or(c.as_str(), |(n, _)| n);
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}
