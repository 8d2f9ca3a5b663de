//! Producer cost per 64-byte record (an API-call record) for one and eight
//! producer threads, LOSSLESS and DISCARD, and the cost of an untraced and a
//! buffered `Profiler::trace_api` call.
//!
//! ```text
//! cargo bench -p rocwasm-core --bench producer [CASE ...]
//! ```
//!
//! Each `CASE` is part of a case's name (`"push LOSSLESS"`, `clock`); the
//! cases whose names contain one of them run, all of them when none is given.
//!
//! Prints one table. Per case:
//!
//! - **cpu ns**: the producer threads' own CPU time (`CLOCK_THREAD_CPUTIME_ID`)
//!   divided by the records they wrote — the cost an application thread pays.
//!   It leaves out time a thread spent descheduled, so it stays meaningful on a
//!   machine shared with other work. Best of several runs.
//! - **wall ns**: wall time divided by all records of all threads (best run);
//!   with more threads than cores it includes their time-sharing.
//! - **consumer ns**: where deliveries run, the rest of the process's CPU time
//!   (the callback thread: waiting for settled records, decoding into columns,
//!   calling the sink) per record. A LOSSLESS producer waits when this side
//!   falls behind.
//! - **dropped**: the largest share of records a DISCARD run dropped (its
//!   drop count, as the sink received it): a dropped record is cheaper than
//!   a stored one, so read the DISCARD rows with it.
//! - **instr**: instructions per record counted by callgrind (only inside the
//!   measured loop, all producer threads, delivery threads excluded), when
//!   `valgrind` is installed. Independent of machine load: the figure to compare
//!   across changes. Set `ROCWASM_BENCH_CALLGRIND=0` to skip it. Valgrind has
//!   no vDSO, so the clock becomes a system call whose kernel part is not
//!   counted: the `trace_api buffered` count leaves out its two clock reads.
//!
//! Buffers are 1 MiB per half with a 512 KiB watermark, so deliveries run while
//! producers write (the realistic case). The `no delivery` rows fill one 1 MiB
//! half at a time and wait for its delivery before timing the next (pages
//! touched beforehand): the producer path alone.
//!
//! The binary re-runs itself under callgrind as `producer --count <case> <n>`.

use std::hint::black_box;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rocwasm_core::*;

const HALF: u64 = 1 << 20;
const WATERMARK: u64 = 1 << 19;
/// Records per timed run (all threads together).
const RECORDS: u64 = 2_000_000;
const RUNS: usize = 7;
/// Records per callgrind run (all threads together).
const COUNTED: u64 = 200_000;

#[derive(Clone, Copy)]
enum Case {
    /// Producers write, deliveries run concurrently.
    Push { policy: BufferPolicy, threads: u64 },
    /// One producer, no delivery while timed.
    PushAlone { policy: BufferPolicy },
    /// `trace_api` with nothing tracing the domain.
    Untraced,
    /// `trace_api` with one context buffering the domain.
    Buffered { policy: BufferPolicy },
    /// One `clock::now()`, for reference: a traced call reads it twice.
    Clock,
}

const CASES: &[(&str, Case)] = &[
    (
        "push LOSSLESS, 1 thread, no delivery",
        Case::PushAlone {
            policy: BufferPolicy::Lossless,
        },
    ),
    (
        "push DISCARD, 1 thread, no delivery",
        Case::PushAlone {
            policy: BufferPolicy::Discard,
        },
    ),
    (
        "push LOSSLESS, 1 thread",
        Case::Push {
            policy: BufferPolicy::Lossless,
            threads: 1,
        },
    ),
    (
        "push DISCARD, 1 thread",
        Case::Push {
            policy: BufferPolicy::Discard,
            threads: 1,
        },
    ),
    (
        "push LOSSLESS, 8 threads",
        Case::Push {
            policy: BufferPolicy::Lossless,
            threads: 8,
        },
    ),
    (
        "push DISCARD, 8 threads",
        Case::Push {
            policy: BufferPolicy::Discard,
            threads: 8,
        },
    ),
    ("trace_api untraced", Case::Untraced),
    (
        "trace_api buffered LOSSLESS",
        Case::Buffered {
            policy: BufferPolicy::Lossless,
        },
    ),
    (
        "trace_api buffered DISCARD",
        Case::Buffered {
            policy: BufferPolicy::Discard,
        },
    ),
    ("clock::now (reference; 2 per traced call)", Case::Clock),
];

/// CPU time of the calling thread.
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// CPU time of the whole process (producers, callback thread, main thread).
fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// What one timed run measured.
struct Run {
    /// CPU time of the producer threads, summed.
    producers: Duration,
    /// Wall time of the run.
    wall: Duration,
    /// CPU time of everything else (the callback thread decoding and
    /// delivering), when the case has deliveries running.
    consumer: Option<Duration>,
    /// Records dropped (DISCARD), as reported to the sink.
    dropped: u64,
}

/// A sink that only adds up the drop counts it is handed.
fn counting_sink(dropped: &Arc<AtomicU64>) -> Arc<dyn BufferSink> {
    let dropped = Arc::clone(dropped);
    Arc::new(move |info: DeliveryInfo, b: Batch| {
        dropped.fetch_add(info.drop_count, Relaxed);
        black_box(b.len());
    })
}

fn record(thread: u64, seq: u64) -> Record {
    Record::Api(ApiCall {
        kind: 5,
        operation: 1,
        correlation_id: seq,
        external_correlation_id: 0,
        ancestor: 0,
        thread_id: thread,
        start: seq,
        end: seq + 1,
    })
}

/// The measured producer loop. Not inlined: callgrind collects exactly here.
#[inline(never)]
fn measured_push_loop(b: &Arc<Buffer>, thread: u64, n: u64) {
    for i in 0..n {
        // The record is built here, as a tracer builds it: part of the cost.
        black_box(b.push(&record(thread, i)));
    }
}

/// The measured `trace_api` loop. Not inlined: callgrind collects exactly here.
#[inline(never)]
fn measured_trace_api_loop(p: &Profiler, n: u64) {
    for _ in 0..n {
        black_box(p.trace_api(
            Domain::HipRuntimeApi,
            black_box(1),
            Vec::new,
            || black_box(1u32),
            |_| String::new(),
        ));
    }
}

/// The measured clock loop. Not inlined: callgrind collects exactly here.
#[inline(never)]
fn measured_clock_loop(n: u64) {
    for _ in 0..n {
        black_box(clock::now());
    }
}

/// One timed run of `total` records.
fn run(case: Case, total: u64) -> Run {
    let dropped = Arc::new(AtomicU64::new(0));
    let mut run = run_case(case, total, &dropped);
    run.dropped = dropped.load(Relaxed);
    run
}

fn run_case(case: Case, total: u64, dropped: &Arc<AtomicU64>) -> Run {
    match case {
        Case::Push { policy, threads } => {
            let p = Profiler::new();
            let ctx = p.create_context().unwrap();
            let id = p
                .create_buffer(ctx, HALF, WATERMARK, policy, counting_sink(dropped))
                .unwrap();
            p.lock_configuration();
            let b = p.buffer(id).unwrap();
            let per = total.div_ceil(threads);
            let process = process_cpu_time();
            let start = Instant::now();
            let cpu: Duration = std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let b = &b;
                        s.spawn(move || {
                            let c = thread_cpu_time();
                            measured_push_loop(b, t, per);
                            thread_cpu_time() - c
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            // Everything produced is delivered before the clocks stop.
            p.flush_buffer(id).unwrap();
            let wall = start.elapsed();
            let consumer = (process_cpu_time() - process).saturating_sub(cpu);
            p.finalize();
            Run {
                producers: cpu,
                wall,
                consumer: Some(consumer),
                dropped: 0,
            }
        }
        Case::PushAlone { policy } => {
            let p = Profiler::new();
            let ctx = p.create_context().unwrap();
            // A half holds one chunk; the delivery of a chunk is awaited
            // before the next is timed. Cache-sized, like the real buffers.
            let chunk = HALF / 64;
            let id = p
                .create_buffer(ctx, HALF, HALF, policy, counting_sink(dropped))
                .unwrap();
            let b = p.buffer(id).unwrap();
            // Touch both halves so the timed loops take no page faults.
            for _ in 0..2 {
                for i in 0..chunk {
                    b.push(&record(1, i));
                }
                p.flush_buffer(id).unwrap();
            }
            let (mut cpu, mut wall) = (Duration::ZERO, Duration::ZERO);
            let mut done = 0;
            while done < total {
                let n = chunk.min(total - done);
                p.flush_buffer(id).unwrap();
                let c = thread_cpu_time();
                let start = Instant::now();
                measured_push_loop(&b, 1, n);
                wall += start.elapsed();
                cpu += thread_cpu_time() - c;
                done += n;
            }
            p.finalize();
            Run {
                producers: cpu,
                wall,
                consumer: None,
                dropped: 0,
            }
        }
        Case::Untraced => {
            let p = Profiler::new();
            let c = thread_cpu_time();
            let start = Instant::now();
            measured_trace_api_loop(&p, total);
            let wall = start.elapsed();
            Run {
                producers: thread_cpu_time() - c,
                wall,
                consumer: None,
                dropped: 0,
            }
        }
        Case::Buffered { policy } => {
            let p = Profiler::new();
            let ctx = p.create_context().unwrap();
            let buf = p
                .create_buffer(ctx, HALF, WATERMARK, policy, counting_sink(dropped))
                .unwrap();
            p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
                .unwrap();
            p.start_context(ctx).unwrap();
            p.lock_configuration();
            let c = thread_cpu_time();
            let start = Instant::now();
            measured_trace_api_loop(&p, total);
            let wall = start.elapsed();
            let cpu = thread_cpu_time() - c;
            p.finalize();
            Run {
                producers: cpu,
                wall,
                consumer: None,
                dropped: 0,
            }
        }
        Case::Clock => {
            let c = thread_cpu_time();
            let start = Instant::now();
            measured_clock_loop(total);
            let wall = start.elapsed();
            Run {
                producers: thread_cpu_time() - c,
                wall,
                consumer: None,
                dropped: 0,
            }
        }
    }
}

/// Instructions per record inside the measured loops, by callgrind.
fn callgrind_instructions(case_index: usize) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let out = std::env::temp_dir().join(format!(
        "rocwasm-producer-callgrind.{}.{case_index}",
        std::process::id()
    ));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--toggle-collect=*measured_*_loop*")
        .arg("--fair-sched=yes")
        .arg(&exe)
        .args(["--count", &case_index.to_string(), &COUNTED.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    let text = std::fs::read_to_string(&out).ok();
    let _ = std::fs::remove_file(&out);
    if !status.success() {
        return None;
    }
    let total: u64 = text?
        .lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(total as f64 / COUNTED as f64)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Child mode under callgrind: run one case once, untimed.
    if let Some(i) = args.iter().position(|a| a == "--count") {
        let case: usize = args[i + 1].parse().expect("case index");
        let n: u64 = args[i + 2].parse().expect("record count");
        run(CASES[case].1, n);
        return;
    }
    // `cargo test --benches` runs bench binaries with no `--bench`: stay quick.
    let quick = !args.iter().any(|a| a == "--bench");
    // Every other argument names cases: a case runs when its name contains
    // one of them (none given: every case).
    let filters: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    let callgrind = !quick
        && std::env::var("ROCWASM_BENCH_CALLGRIND").as_deref() != Ok("0")
        && Command::new("valgrind")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());

    let (records, runs) = if quick { (10_000, 1) } else { (RECORDS, RUNS) };
    println!(
        "producer cost per 64-byte record ({records} records per run, best of {runs} runs{})",
        if callgrind {
            ", instructions by callgrind"
        } else {
            ""
        }
    );
    println!(
        "{:<42} {:>8} {:>8} {:>8} {:>12} {:>8}",
        "case", "cpu ns", "wall ns", "instr", "consumer ns", "dropped"
    );
    for (index, (name, case)) in CASES.iter().enumerate() {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f)) {
            continue;
        }
        run(*case, records / 10); // warm up
        let per_record = |d: Duration| d.as_nanos() as f64 / records as f64;
        let mut cpu = f64::INFINITY;
        let mut wall = f64::INFINITY;
        let mut consumer = f64::INFINITY;
        let mut dropped = 0;
        for _ in 0..runs {
            let r = run(*case, records);
            dropped = dropped.max(r.dropped);
            cpu = cpu.min(per_record(r.producers));
            wall = wall.min(per_record(r.wall));
            if let Some(c) = r.consumer {
                consumer = consumer.min(per_record(c));
            }
        }
        let consumer = if consumer.is_finite() {
            format!("{consumer:.1}")
        } else {
            "-".into()
        };
        let instr = if callgrind {
            callgrind_instructions(index).map_or("-".into(), |i| format!("{i:.1}"))
        } else {
            "-".into()
        };
        let dropped = format!("{:.0}%", 100.0 * dropped as f64 / records as f64);
        println!("{name:<42} {cpu:>8.1} {wall:>8.1} {instr:>8} {consumer:>12} {dropped:>8}");
    }
}
