//! Sinks that call back into the profiler.
//!
//! A tool's sink may use the tool-facing API while the engine is delivering to
//! it. The case that matters most is the final flush of
//! [`Profiler::finalize`]: a host runs its plugins' last `deliver-batch` there,
//! at application exit, and a plugin that flushes another buffer, stops a
//! context or pushes an external id must get an answer, not hang the process.
//! The same holds for callback sinks on application threads that run while
//! another thread finalizes.
//!
//! Each scenario runs under a watchdog: a deadlock fails the test (after a
//! generous timeout) instead of hanging the test run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rocwasm_core::*;

/// Far longer than any of these scenarios needs on a loaded machine; only a
/// deadlock reaches it.
const WATCHDOG: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and returns its result; panics if `f` has not
/// returned within [`WATCHDOG`] (or panicked).
fn watchdog<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("watched: {what}"))
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("spawn a watched thread");
    match rx.recv_timeout(WATCHDOG) {
        Ok(v) => v,
        Err(RecvTimeoutError::Timeout) => {
            panic!("{what}: still blocked after {WATCHDOG:?} (deadlock)")
        }
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// A receiver that `Fn + Sync` sinks can wait on.
struct Signal(Mutex<Receiver<()>>);

impl Signal {
    fn new() -> (mpsc::Sender<()>, Signal) {
        let (tx, rx) = mpsc::channel();
        (tx, Signal(Mutex::new(rx)))
    }

    fn wait(&self) {
        self.0
            .lock()
            .unwrap()
            .recv()
            .expect("the other side signals before going away");
    }
}

fn hip(name: &str) -> u32 {
    operation_by_name(BufferTracingKind::HipRuntimeApi, name).unwrap()
}

fn hsa(name: &str) -> u32 {
    operation_by_name(BufferTracingKind::HsaCoreApi, name).unwrap()
}

fn call(p: &Profiler, domain: Domain, op: u32) {
    p.trace_api(domain, op, Vec::new, || 0, |r| r.to_string());
}

/// One context, one buffer that delivers only when flushed (watermark = size),
/// one buffered HIP call; then `finalize`, under the watchdog. During the final
/// flush the buffer's sink runs `action` and keeps its result. Returns what the
/// sink kept (one entry per batch delivered while finalizing).
fn during_final_flush<T, F>(action: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(&Profiler, ContextId, DeliveryInfo) -> T + Send + Sync + 'static,
{
    let p = Arc::new(Profiler::new());
    let ctx = p.create_context().unwrap();
    let kept: Arc<Mutex<Vec<T>>> = Arc::default();
    let (k, weak) = (kept.clone(), Arc::downgrade(&p));
    let sink = Arc::new(move |info: DeliveryInfo, _: Batch| {
        let p = weak.upgrade().expect("the test holds the profiler");
        if p.is_finalized() {
            k.lock().unwrap().push(action(&p, ctx, info));
        }
    });
    let buf = p
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, sink)
        .unwrap();
    p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
        .unwrap();
    p.start_context(ctx).unwrap();
    p.lock_configuration();
    call(&p, Domain::HipRuntimeApi, hip("hipMalloc"));

    let q = p.clone();
    watchdog("finalize", move || q.finalize());
    assert!(p.is_finalized());
    let kept = std::mem::take(&mut *kept.lock().unwrap());
    kept
}

#[test]
fn buffer_sink_may_ask_whether_its_context_is_active_during_the_final_flush() {
    let seen = during_final_flush(|p, ctx, _| p.is_context_active(ctx));
    // Finalization stops every context before the final flush.
    assert_eq!(seen, vec![Ok(false)]);
}

#[test]
fn buffer_sink_may_stop_and_start_contexts_during_the_final_flush() {
    let seen = during_final_flush(|p, ctx, _| (p.stop_context(ctx), p.start_context(ctx)));
    assert_eq!(seen, vec![(Err(Status::Finalized), Err(Status::Finalized))]);
}

#[test]
fn buffer_sink_may_push_and_pop_external_ids_during_the_final_flush() {
    let seen = during_final_flush(|p, ctx, _| {
        let tid = clock::thread_id();
        let pushed = p.push_external_correlation_id(ctx, tid, 77);
        let popped = p.pop_external_correlation_id(ctx, tid);
        (pushed, popped)
    });
    assert_eq!(seen, vec![(Ok(()), Ok(77))]);
}

#[test]
fn buffer_sink_may_finalize_during_the_final_flush() {
    // A nested `finalize` on a callback thread cannot wait for the outer one
    // (which waits for this very sink): it returns at once.
    let seen = during_final_flush(|p, _, _| {
        p.finalize();
        p.is_finalized()
    });
    assert_eq!(seen, vec![true]);
}

/// Buffer A (default callback thread, flushed first by `finalize`) has a sink
/// that flushes buffer B (its own callback thread) and its own buffer during
/// the final flush. Flushing B really delivers B's records before returning;
/// flushing A from A's callback thread is BUFFER_BUSY, as at any other time.
#[test]
fn buffer_sink_may_flush_another_buffer_during_the_final_flush() {
    let p = Arc::new(Profiler::new());
    let ctx = p.create_context().unwrap();

    let b_rows = Arc::new(AtomicU64::new(0));
    let b_sink = {
        let b_rows = b_rows.clone();
        Arc::new(move |_: DeliveryInfo, batch: Batch| {
            b_rows.fetch_add(batch.api_calls.rows().count() as u64, SeqCst);
        })
    };

    /// (flush of B, B's records delivered by then, flush of A itself)
    type Seen = (Result<(), Status>, u64, Result<(), Status>);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let b_id: Arc<Mutex<Option<BufferId>>> = Arc::default();
    let a_sink = {
        let (seen, b_id, b_rows, weak) = (
            seen.clone(),
            b_id.clone(),
            b_rows.clone(),
            Arc::downgrade(&p),
        );
        Arc::new(move |info: DeliveryInfo, _: Batch| {
            let p = weak.upgrade().expect("the test holds the profiler");
            if !p.is_finalized() {
                return;
            }
            let b = b_id.lock().unwrap().expect("B exists before any record");
            let flushed_b = p.flush_buffer(b);
            let b_delivered = b_rows.load(SeqCst);
            let flushed_self = p.flush_buffer(info.buffer);
            seen.lock()
                .unwrap()
                .push((flushed_b, b_delivered, flushed_self));
        })
    };

    let a = p
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, a_sink)
        .unwrap();
    let b = p
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, b_sink)
        .unwrap();
    assert!(a.0 < b.0, "finalize flushes buffers in id order: A first");
    *b_id.lock().unwrap() = Some(b);
    let thread = p.create_callback_thread().unwrap();
    p.assign_callback_thread(b, thread).unwrap();
    p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], a)
        .unwrap();
    p.configure_buffer_tracing(ctx, BufferTracingKind::HsaCoreApi, &[], b)
        .unwrap();
    p.start_context(ctx).unwrap();
    p.lock_configuration();
    call(&p, Domain::HipRuntimeApi, hip("hipMalloc"));
    call(&p, Domain::HsaCoreApi, hsa("hsa_init"));
    assert_eq!(b_rows.load(SeqCst), 0, "nothing delivered before finalize");

    let q = p.clone();
    watchdog("finalize", move || q.finalize());
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(Ok(()), 1, Err(Status::BufferBusy))],
        "B's record arrived before flush_buffer(B) returned"
    );
    assert_eq!(b_rows.load(SeqCst), 1, "delivered once");
    // Once finalization is over there is nothing left to deliver.
    assert_eq!(p.flush_buffer(a), Ok(()));
    assert_eq!(p.flush_buffer(b), Ok(()));
}

/// Which sink on the application thread makes the tool-facing calls.
#[derive(Clone, Copy)]
enum AppSink {
    Callback,
    ExternalRequest,
}

/// An application thread is inside a traced call (`hipFree`) when another
/// thread finalizes. A sink of that call — its ENTER callback or its
/// external-correlation request — runs tool-facing calls while the final
/// flush is under way (the buffer sink waits for it to finish): they answer.
fn app_thread_sink_during_finalize(which: AppSink) {
    let p = Arc::new(Profiler::new());
    let ctx = p.create_context().unwrap();

    let (entered_tx, entered) = Signal::new();
    let (flushing_tx, flushing) = Signal::new();
    let (done_tx, done) = Signal::new();
    let (entered_tx, flushing_tx, done_tx) = (
        Mutex::new(entered_tx),
        Mutex::new(flushing_tx),
        Mutex::new(done_tx),
    );

    let buffer_sink = {
        let weak = Arc::downgrade(&p);
        Arc::new(move |_: DeliveryInfo, _: Batch| {
            let p = weak.upgrade().expect("the test holds the profiler");
            if p.is_finalized() {
                flushing_tx.lock().unwrap().send(()).unwrap();
                done.wait();
            }
        })
    };
    type Answers = (
        Result<(), Status>,
        Result<u64, Status>,
        Result<bool, Status>,
        Result<(), Status>,
    );
    let answers: Arc<Mutex<Option<Answers>>> = Arc::default();
    // What the sink does, wherever it runs.
    let tool_calls = {
        let (weak, answers) = (Arc::downgrade(&p), answers.clone());
        move || {
            let p = weak.upgrade().expect("the test holds the profiler");
            entered_tx.lock().unwrap().send(()).unwrap();
            flushing.wait();
            let tid = clock::thread_id();
            *answers.lock().unwrap() = Some((
                p.push_external_correlation_id(ctx, tid, 5),
                p.pop_external_correlation_id(ctx, tid),
                p.is_context_active(ctx),
                p.stop_context(ctx),
            ));
            done_tx.lock().unwrap().send(()).unwrap();
        }
    };

    let buf = p
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, buffer_sink)
        .unwrap();
    p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
        .unwrap();
    let free = hip("hipFree");
    match which {
        AppSink::Callback => p.configure_callback_tracing(
            ctx,
            CallbackTracingKind::HipRuntimeApi,
            &[free],
            Arc::new(move |rec: &CallbackRecord, _: &mut u64| {
                if rec.phase == Some(CallbackPhase::Enter) {
                    tool_calls();
                }
            }),
        ),
        AppSink::ExternalRequest => p.configure_external_correlation_request(
            ctx,
            &[ExternalCorrelationKind::HipRuntimeApi],
            Arc::new(move |req: &ExternalCorrelationRequest| {
                if req.operation == free {
                    tool_calls();
                }
                None
            }),
        ),
    }
    .unwrap();
    p.start_context(ctx).unwrap();
    p.lock_configuration();
    // Something for the final flush to deliver.
    call(&p, Domain::HipRuntimeApi, hip("hipMalloc"));

    let q = p.clone();
    let app = std::thread::spawn(move || call(&q, Domain::HipRuntimeApi, free));
    entered.wait();
    let q = p.clone();
    watchdog("finalize", move || q.finalize());
    watchdog("the application thread", move || app.join().unwrap());
    assert_eq!(
        *answers.lock().unwrap(),
        Some((Ok(()), Ok(5), Ok(false), Err(Status::Finalized)))
    );
}

#[test]
fn callback_sink_may_use_the_profiler_while_another_thread_finalizes() {
    app_thread_sink_during_finalize(AppSink::Callback);
}

#[test]
fn external_request_sink_may_use_the_profiler_while_another_thread_finalizes() {
    app_thread_sink_during_finalize(AppSink::ExternalRequest);
}

/// A second `finalize` while the first is still flushing returns only after
/// the first has completed (its final deliveries included).
#[test]
fn concurrent_finalize_returns_after_the_first_completed() {
    let p = Arc::new(Profiler::new());
    let ctx = p.create_context().unwrap();
    let (in_sink_tx, in_sink) = Signal::new();
    let (release_tx, release) = Signal::new();
    let in_sink_tx = Mutex::new(in_sink_tx);
    let delivered = Arc::new(AtomicBool::new(false));
    let sink = {
        let (weak, delivered) = (Arc::downgrade(&p), delivered.clone());
        Arc::new(move |_: DeliveryInfo, _: Batch| {
            let p = weak.upgrade().expect("the test holds the profiler");
            if p.is_finalized() {
                in_sink_tx.lock().unwrap().send(()).unwrap();
                release.wait();
                delivered.store(true, SeqCst);
            }
        })
    };
    let buf = p
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, sink)
        .unwrap();
    p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
        .unwrap();
    p.start_context(ctx).unwrap();
    p.lock_configuration();
    call(&p, Domain::HipRuntimeApi, hip("hipMalloc"));

    let q = p.clone();
    let first = std::thread::spawn(move || q.finalize());
    in_sink.wait(); // the first finalize is in its final flush
    let (q, d) = (p.clone(), delivered.clone());
    let second = std::thread::spawn(move || {
        q.finalize();
        d.load(SeqCst)
    });
    // Give a wrong (non-waiting) second finalize the chance to return early.
    // A correct one passes whatever the scheduling.
    std::thread::sleep(Duration::from_millis(20));
    release_tx.send(()).unwrap();
    watchdog("first finalize", move || first.join().unwrap());
    let saw_delivery = watchdog("second finalize", move || second.join().unwrap());
    assert!(
        saw_delivery,
        "the second finalize returned before the first one's final flush"
    );
}
