//! A context, a 4 KiB LOSSLESS buffer with a 3 KiB watermark, two kinds
//! (HIP runtime API and kernel dispatch), eight producer threads. Prints what
//! was produced and delivered, and exits non-zero if they differ.
//!
//! `cargo run -p rocwasm-core --example buffer_demo`

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use rocwasm_core::*;

const THREADS: u64 = 8;
const CALLS_PER_THREAD: u64 = 20_000;

#[derive(Default)]
struct Counts {
    api_calls: AtomicU64,
    dispatches: AtomicU64,
    dropped: AtomicU64,
    batches: AtomicU64,
}

impl BufferSink for Counts {
    fn deliver(&self, info: DeliveryInfo, batch: Batch) {
        self.api_calls
            .fetch_add(batch.api_calls.len() as u64, Relaxed);
        self.dispatches
            .fetch_add(batch.kernel_dispatches.len() as u64, Relaxed);
        self.dropped.fetch_add(info.drop_count, Relaxed);
        self.batches.fetch_add(1, Relaxed);
    }
}

fn main() -> ExitCode {
    let profiler = Arc::new(Profiler::new());
    let counts = Arc::new(Counts::default());

    // What a tool does in its `initialize`.
    let setup = || -> Result<BufferId, Status> {
        let ctx = profiler.create_context()?;
        let buffer =
            profiler.create_buffer(ctx, 4096, 3072, BufferPolicy::Lossless, counts.clone())?;
        profiler.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buffer)?;
        profiler.configure_buffer_tracing(ctx, BufferTracingKind::KernelDispatch, &[], buffer)?;
        profiler.start_context(ctx)?;
        Ok(buffer)
    };
    let buffer = match setup() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("configuration failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    profiler.lock_configuration();

    // What interception does on eight application threads: every call is a
    // hipLaunchKernel whose kernel completes right away.
    let launch =
        operation_by_name(BufferTracingKind::HipRuntimeApi, "hipLaunchKernel").unwrap_or(1);
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let p = Arc::clone(&profiler);
            std::thread::spawn(move || {
                for i in 0..CALLS_PER_THREAD {
                    let op = p.trace_api(
                        Domain::HipRuntimeApi,
                        launch,
                        Vec::new,
                        || p.begin_async(Domain::KernelDispatch, ops::kernel_dispatch::ENQUEUE),
                        |_| String::new(),
                    );
                    if let Some(op) = op {
                        let now = clock::now();
                        let row = KernelDispatch {
                            kernel_id: i % 4,
                            start: now,
                            end: now,
                            ..Default::default()
                        };
                        p.complete_kernel_dispatch(op, row);
                    }
                }
            })
        })
        .collect();
    for w in workers {
        if w.join().is_err() {
            eprintln!("a producer thread panicked");
            return ExitCode::FAILURE;
        }
    }
    if let Err(e) = profiler.flush_buffer(buffer) {
        eprintln!("flush failed: {e}");
        return ExitCode::FAILURE;
    }
    profiler.finalize();

    let produced = 2 * THREADS * CALLS_PER_THREAD;
    let api = counts.api_calls.load(Relaxed);
    let dispatches = counts.dispatches.load(Relaxed);
    let delivered = api + dispatches;
    let dropped = counts.dropped.load(Relaxed);
    let batches = counts.batches.load(Relaxed);
    println!("threads:    {THREADS}");
    println!(
        "produced:   {produced} ({} HIP calls + {} kernel dispatches)",
        produced / 2,
        produced / 2
    );
    println!("delivered:  {delivered} ({api} HIP calls + {dispatches} kernel dispatches)");
    println!("dropped:    {dropped}");
    println!("batches:    {batches}");
    if delivered == produced && dropped == 0 && api == dispatches {
        println!("ok: delivered == produced");
        ExitCode::SUCCESS
    } else {
        println!("MISMATCH");
        ExitCode::FAILURE
    }
}
