//! Producer cost per 64-byte record (an API-call record), for one and eight
//! producer threads, LOSSLESS and DISCARD; plus the cost of an untraced and a
//! traced `trace_api` call.
//!
//! `cargo bench -p rocwasm-core --bench producer`
//!
//! Multi-thread figures are wall time divided by the total number of records
//! (all threads together), so on a machine with fewer cores than threads they
//! include the threads' time-sharing.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocwasm_core::*;

fn buffer(policy: BufferPolicy) -> (Arc<Profiler>, Arc<Buffer>) {
    let p = Arc::new(Profiler::new());
    let ctx = p.create_context().unwrap();
    let sink = Arc::new(|_: DeliveryInfo, b: Batch| {
        black_box(b.len());
    });
    let id = p
        .create_buffer(ctx, 1 << 20, 1 << 19, policy, sink)
        .unwrap();
    p.lock_configuration();
    let b = p.buffer(id).unwrap();
    (p, b)
}

fn record(thread: u64, seq: u64) -> Record {
    Record::Api(ApiCall {
        kind: 5,
        operation: 1,
        correlation_id: seq,
        thread_id: thread,
        start: seq,
        end: seq + 1,
        ..Default::default()
    })
}

fn push_from(threads: u64, b: &Arc<Buffer>, total: u64) -> Duration {
    let per = total.div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                for i in 0..per {
                    black_box(b.push(&record(t, i)));
                }
            });
        }
    });
    start.elapsed()
}

fn producers(c: &mut Criterion) {
    let mut g = c.benchmark_group("push_64B_record");
    g.throughput(Throughput::Elements(1));
    for policy in [BufferPolicy::Lossless, BufferPolicy::Discard] {
        for threads in [1u64, 8] {
            let (p, b) = buffer(policy);
            g.bench_function(format!("{policy:?}/{threads}_threads"), |bench| {
                bench.iter_custom(|iters| push_from(threads, &b, iters.max(threads)))
            });
            p.finalize();
        }
    }
    g.finish();
}

/// CPU time of the calling thread: on a loaded machine wall time would also
/// count the time this thread spent descheduled.
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The producer alone: a buffer big enough that no delivery runs while timed,
/// with both halves touched beforehand (no page faults), timed in thread CPU time.
fn push_undisturbed(iters: u64) -> Duration {
    const CHUNK: u64 = 1 << 18; // records per 16 MiB half
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(CHUNK);
        let p = Profiler::new();
        let ctx = p.create_context().unwrap();
        let sink = Arc::new(|_: DeliveryInfo, b: Batch| {
            black_box(b.len());
        });
        let size = CHUNK * 64;
        let id = p
            .create_buffer(ctx, size, size, BufferPolicy::Lossless, sink)
            .unwrap();
        let b = p.buffer(id).unwrap();
        for _ in 0..2 {
            for i in 0..CHUNK {
                b.push(&record(1, i));
            }
            p.flush_buffer(id).unwrap();
        }
        let start = thread_cpu_time();
        for i in 0..n {
            black_box(b.push(&record(1, i)));
        }
        total += thread_cpu_time() - start;
        left -= n;
        p.finalize();
    }
    total
}

fn producer_only(c: &mut Criterion) {
    let mut g = c.benchmark_group("push_64B_record");
    g.throughput(Throughput::Elements(1));
    g.bench_function("no_delivery/1_thread", |b| b.iter_custom(push_undisturbed));
    g.finish();
}

fn api_calls(c: &mut Criterion) {
    let mut g = c.benchmark_group("trace_api");
    let p = Profiler::new();
    g.bench_function("untraced", |b| {
        b.iter(|| {
            p.trace_api(
                Domain::HipRuntimeApi,
                1,
                Vec::new,
                || black_box(1),
                |_| String::new(),
            )
        })
    });
    let ctx = p.create_context().unwrap();
    let sink = Arc::new(|_: DeliveryInfo, b: Batch| {
        black_box(b.len());
    });
    let buf = p
        .create_buffer(ctx, 1 << 20, 1 << 19, BufferPolicy::Discard, sink)
        .unwrap();
    p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
        .unwrap();
    p.start_context(ctx).unwrap();
    p.lock_configuration();
    g.bench_function("buffered", |b| {
        b.iter(|| {
            p.trace_api(
                Domain::HipRuntimeApi,
                1,
                Vec::new,
                || black_box(1),
                |_| String::new(),
            )
        })
    });
    g.finish();
    p.finalize();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = producer_only, producers, api_calls
}
criterion_main!(benches);
