//! What a buffered `trace_api` adds to a call, measured the way
//! `host/process/intercept/bench/overhead.sh` does it but without HIP or a sink that
//! writes anything: in one process, bursts of a trivial call alternate with
//! bursts of the same call traced into a LOSSLESS buffer, each burst followed
//! by a pause; prints the median of the per-pair differences in the calling
//! thread's CPU ns per call. A quick A/B for changes to the record path.
//!
//!   cargo run --release -p rocwasm-core --example paired_overhead -- [PAUSE_US] [BURST] [BUFFER_BYTES]
//!
//! Defaults: 5000 µs, 4000 calls, 1 MiB (the run's default buffer). Not a
//! test: the figure moves with the machine.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use rocwasm_core::*;
use rustix::time::{clock_gettime, ClockId};

const PAIRS: usize = 151;

fn thread_cpu_ns() -> f64 {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

#[inline(never)]
fn trivial_call(x: &mut u64) -> u64 {
    *x = black_box(*x + 1);
    *x
}

fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    std::env::args()
        .nth(i)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let pause = Duration::from_micros(arg(1, 5000));
    let burst: usize = arg(2, 4000);
    let size: u64 = arg(3, 1 << 20);
    let p = Profiler::new();
    let ctx = p.create_context().expect("context");
    let sink: Arc<dyn BufferSink> = Arc::new(|_: DeliveryInfo, b: Batch| {
        black_box(b.len());
    });
    let buf = p
        .create_buffer(ctx, size, size / 2, BufferPolicy::Lossless, sink)
        .expect("buffer");
    p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
        .expect("tracing");
    p.start_context(ctx).expect("start");
    p.lock_configuration();

    let mut x = 0u64;
    let mut timed = |traced: bool| {
        let start = thread_cpu_ns();
        for _ in 0..burst {
            if traced {
                black_box(p.trace_api(
                    Domain::HipRuntimeApi,
                    1,
                    Vec::new,
                    || trivial_call(&mut x),
                    |_| String::new(),
                ));
            } else {
                black_box(trivial_call(&mut x));
            }
        }
        let per_call = (thread_cpu_ns() - start) / burst as f64;
        std::thread::sleep(pause);
        per_call
    };
    let mut added: Vec<f64> = (0..PAIRS)
        .map(|pair| {
            // Alternate which goes first, so neither always follows a pause.
            let (traced, bare) = if pair % 2 == 0 {
                let t = timed(true);
                (t, timed(false))
            } else {
                let b = timed(false);
                (timed(true), b)
            };
            traced - bare
        })
        .collect();
    added.sort_by(f64::total_cmp);
    println!(
        "pause {} us, bursts of {burst}, {size}-byte buffer: added {:.1} ns per call (median of {PAIRS} pairs)",
        pause.as_micros(),
        added[PAIRS / 2]
    );
    p.finalize();
}
