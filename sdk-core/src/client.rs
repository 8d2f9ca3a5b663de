//! A client of the engine: one tool — a Wasm plugin or a native tool — and
//! what it owns.
//!
//! The SDK's model has no owner for a context or a buffer: any tool may
//! name any id. A profiler that runs several tools side by side needs one,
//! and both kinds of tool need the same: a plugin must not stop or flush
//! another's contexts and buffers, and at the end each tool's buffers are
//! flushed before its own `finalize`/`fini`, after which what still reaches
//! them is counted, not delivered. A [`Client`] is that record: the
//! contexts, buffers and callback threads it created through it, and
//! whether it has been finalized. The C API (`rocwasm-capi`) keeps one per
//! native tool, the plugin host one per plugin.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::callback::{BufferId, BufferSink, CallbackThreadId, ContextId};
use crate::kind::BufferPolicy;
use crate::profiler::Profiler;
use crate::Status;

/// What one tool owns in the engine; share it as `Arc<Client>`.
#[derive(Debug, Default)]
pub struct Client {
    contexts: Mutex<BTreeSet<ContextId>>,
    buffers: Mutex<BTreeSet<BufferId>>,
    threads: Mutex<BTreeSet<CallbackThreadId>>,
    finalized: AtomicBool,
    finished: AtomicBool,
    undelivered: AtomicU64,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Client {
    /// A client that owns nothing yet.
    pub fn new() -> Arc<Client> {
        Arc::new(Client::default())
    }

    /// Creates a context in `engine`, owned by this client.
    pub fn create_context(&self, engine: &Profiler) -> Result<ContextId, Status> {
        let ctx = engine.create_context()?;
        locked(&self.contexts).insert(ctx);
        Ok(ctx)
    }

    /// Creates a buffer for context `ctx` (which the caller has checked it
    /// may use) in `engine`, owned by this client.
    pub fn create_buffer(
        &self,
        engine: &Profiler,
        ctx: ContextId,
        size: u64,
        watermark: u64,
        policy: BufferPolicy,
        sink: Arc<dyn BufferSink>,
    ) -> Result<BufferId, Status> {
        let id = engine.create_buffer(ctx, size, watermark, policy, sink)?;
        locked(&self.buffers).insert(id);
        Ok(id)
    }

    /// Creates a callback thread in `engine`, owned by this client.
    pub fn create_callback_thread(&self, engine: &Profiler) -> Result<CallbackThreadId, Status> {
        let id = engine.create_callback_thread()?;
        locked(&self.threads).insert(id);
        Ok(id)
    }

    /// `ctx` if this client owns it, else CONTEXT_NOT_FOUND.
    pub fn context(&self, ctx: ContextId) -> Result<ContextId, Status> {
        locked(&self.contexts)
            .contains(&ctx)
            .then_some(ctx)
            .ok_or(Status::ContextNotFound)
    }

    /// `buffer` if this client owns it, else BUFFER_NOT_FOUND.
    pub fn buffer(&self, buffer: BufferId) -> Result<BufferId, Status> {
        locked(&self.buffers)
            .contains(&buffer)
            .then_some(buffer)
            .ok_or(Status::BufferNotFound)
    }

    /// True when this client created callback thread `thread`.
    pub fn owns_thread(&self, thread: CallbackThreadId) -> bool {
        locked(&self.threads).contains(&thread)
    }

    /// The contexts this client created, in id order.
    pub fn contexts(&self) -> Vec<ContextId> {
        locked(&self.contexts).iter().copied().collect()
    }

    /// The buffers this client created, in id order.
    pub fn buffers(&self) -> Vec<BufferId> {
        locked(&self.buffers).iter().copied().collect()
    }

    /// Flushes every buffer of this client (each delivers what it holds);
    /// a buffer that cannot be flushed now (BUFFER_BUSY from its own
    /// callback thread) is left as it is.
    pub fn flush_buffers(&self, engine: &Profiler) {
        for b in self.buffers() {
            let _ = engine.flush_buffer(b);
        }
    }

    /// Stops every context of this client.
    pub fn stop_contexts(&self, engine: &Profiler) {
        for c in self.contexts() {
            let _ = engine.stop_context(c);
        }
    }

    /// Marks the client finalized; true the first time only.
    pub fn finalize_once(&self) -> bool {
        !self.finalized.swap(true, Ordering::AcqRel)
    }

    /// True once [`Client::finalize_once`] was called.
    pub fn is_finalized(&self) -> bool {
        self.finalized.load(Ordering::Acquire)
    }

    /// Marks the client's finalization done (its finalize function has
    /// returned): from now on what reaches its buffers is counted, not
    /// delivered. Until then the tool still gets what it flushes from its
    /// own finalize.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }

    /// True once [`Client::finish`] was called.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// Counts `n` records that reached the client's buffers after it was
    /// finalized and were not delivered.
    pub fn count_undelivered(&self, n: u64) {
        self.undelivered.fetch_add(n, Ordering::Relaxed);
    }

    /// Records that reached the client after its finalization.
    pub fn undelivered(&self) -> u64 {
        self.undelivered.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_sees_only_what_it_created() {
        let engine = Profiler::new();
        let (a, b) = (Client::new(), Client::new());
        let ctx = a.create_context(&engine).unwrap();
        assert_eq!(a.context(ctx), Ok(ctx));
        assert_eq!(b.context(ctx), Err(Status::ContextNotFound));
        let buf = a
            .create_buffer(
                &engine,
                ctx,
                4096,
                2048,
                BufferPolicy::Lossless,
                Arc::new(|_, _| {}),
            )
            .unwrap();
        assert_eq!(a.buffer(buf), Ok(buf));
        assert_eq!(b.buffer(buf), Err(Status::BufferNotFound));
        let thread = b.create_callback_thread(&engine).unwrap();
        assert!(b.owns_thread(thread) && !a.owns_thread(thread));
        assert_eq!((a.contexts(), a.buffers()), (vec![ctx], vec![buf]));
        assert!(a.finalize_once() && !a.finalize_once() && a.is_finalized());
        a.count_undelivered(3);
        assert_eq!(a.undelivered(), 3);
    }
}
