//! Property and behaviour tests of the buffers: what goes in comes out
//! (LOSSLESS), or is counted (DISCARD), in per-thread order, with many
//! producer threads and a million records per run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use rocwasm_core::*;

/// Collects what a buffer delivered and checks per-thread order as it goes.
#[derive(Default)]
struct Collector {
    state: Mutex<Collected>,
}

#[derive(Default)]
struct Collected {
    batches: u64,
    dropped: u64,
    per_thread: HashMap<u64, u64>,
    /// Last sequence number per (thread, table).
    last: HashMap<(u64, u8), u64>,
    out_of_order: u64,
    sizes: Vec<usize>,
}

impl Collected {
    fn see(&mut self, table: u8, thread: u64, seq: u64) {
        *self.per_thread.entry(thread).or_default() += 1;
        let last = self.last.entry((thread, table)).or_insert(0);
        if seq <= *last {
            self.out_of_order += 1;
        }
        *last = seq;
    }

    fn delivered(&self) -> u64 {
        self.per_thread.values().sum()
    }
}

impl BufferSink for Collector {
    fn deliver(&self, info: DeliveryInfo, batch: Batch) {
        assert!(batch.is_consistent());
        let mut s = self.state.lock().unwrap();
        s.batches += 1;
        s.dropped += info.drop_count;
        s.sizes.push(batch.len());
        for r in batch.api_calls.rows() {
            s.see(0, r.thread_id, r.correlation_id);
        }
        for r in batch.kernel_dispatches.rows() {
            s.see(1, r.thread_id, r.correlation_id);
        }
        for r in batch.memory_copies.rows() {
            s.see(2, r.thread_id, r.correlation_id);
        }
    }
}

/// A record of one of three sizes (64, 184, 96 bytes), chosen by `pick`.
fn record(pick: u8, thread: u64, seq: u64) -> Record {
    match pick % 3 {
        0 => Record::Api(ApiCall {
            kind: 5,
            operation: 1,
            correlation_id: seq,
            thread_id: thread,
            ..Default::default()
        }),
        1 => Record::KernelDispatch(KernelDispatch {
            correlation_id: seq,
            thread_id: thread,
            grid_x: 7,
            ..Default::default()
        }),
        _ => Record::MemoryCopy(MemoryCopy {
            operation: 2,
            correlation_id: seq,
            thread_id: thread,
            ..Default::default()
        }),
    }
}

struct Run {
    produced: u64,
    stored: u64,
    collected: Arc<Collector>,
}

fn run(
    policy: BufferPolicy,
    threads: u64,
    total: u64,
    size: u64,
    watermark_pct: u64,
    pattern: Vec<u8>,
    slow_sink: bool,
) -> Run {
    let profiler = Arc::new(Profiler::new());
    let ctx = profiler.create_context().unwrap();
    let collected = Arc::new(Collector::default());
    let sink: Arc<dyn BufferSink> = if slow_sink {
        let inner = Arc::clone(&collected);
        Arc::new(move |info: DeliveryInfo, batch: Batch| {
            std::thread::sleep(Duration::from_micros(200));
            inner.deliver(info, batch)
        })
    } else {
        collected.clone()
    };
    let rounded = buffer::round_size(size);
    let id = profiler
        .create_buffer(ctx, size, rounded * watermark_pct / 100, policy, sink)
        .unwrap();
    let buffer = profiler.buffer(id).unwrap();
    let per_thread = total.div_ceil(threads);
    let pattern = Arc::new(pattern);
    let handles: Vec<_> = (1..=threads)
        .map(|t| {
            let buffer = Arc::clone(&buffer);
            let pattern = Arc::clone(&pattern);
            std::thread::spawn(move || {
                let mut stored = 0;
                for seq in 1..=per_thread {
                    let pick = pattern[(seq as usize + t as usize) % pattern.len()];
                    if buffer.push(&record(pick, t, seq)) == Pushed::Stored {
                        stored += 1;
                    }
                }
                stored
            })
        })
        .collect();
    let stored = handles.into_iter().map(|h| h.join().unwrap()).sum();
    profiler.flush_buffer(id).unwrap();
    profiler.finalize();
    Run {
        produced: per_thread * threads,
        stored,
        collected,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3))]

    #[test]
    fn lossless_delivers_everything_in_order(
        threads in 4u64..=6,
        size in prop::sample::select(vec![4096u64, 10_000, 65_536, 1 << 20]),
        watermark_pct in 0u64..=100,
        pattern in prop::collection::vec(any::<u8>(), 1..8),
    ) {
        let r = run(BufferPolicy::Lossless, threads, 1_000_000, size, watermark_pct, pattern, false);
        let s = r.collected.state.lock().unwrap();
        prop_assert!(r.produced >= 1_000_000);
        prop_assert_eq!(r.stored, r.produced);
        prop_assert_eq!(s.delivered(), r.produced);
        prop_assert_eq!(s.dropped, 0);
        prop_assert_eq!(s.out_of_order, 0);
        for t in 1..=threads {
            prop_assert_eq!(s.per_thread[&t], r.produced / threads);
        }
    }

    #[test]
    fn discard_counts_every_drop(
        threads in 4u64..=6,
        size in prop::sample::select(vec![4096u64, 16_384, 65_536, 131_072]),
        watermark_pct in 0u64..=100,
        pattern in prop::collection::vec(any::<u8>(), 1..8),
        slow in any::<bool>(),
    ) {
        let r = run(BufferPolicy::Discard, threads, 1_000_000, size, watermark_pct, pattern, slow);
        let s = r.collected.state.lock().unwrap();
        prop_assert!(r.produced >= 1_000_000);
        prop_assert_eq!(s.delivered() + s.dropped, r.produced);
        prop_assert_eq!(s.delivered(), r.stored);
        prop_assert_eq!(s.out_of_order, 0);
    }
}

#[test]
fn lossless_with_a_slow_sink_loses_nothing() {
    let r = run(
        BufferPolicy::Lossless,
        4,
        100_000,
        4096,
        50,
        vec![0, 1, 2],
        true,
    );
    let s = r.collected.state.lock().unwrap();
    assert_eq!(s.delivered(), r.produced);
    assert_eq!(s.out_of_order, 0);
}

fn api(seq: u64) -> Record {
    record(0, 1, seq)
}

#[test]
fn watermark_equal_to_size_delivers_only_when_full() {
    let profiler = Profiler::new();
    let ctx = profiler.create_context().unwrap();
    let c = Arc::new(Collector::default());
    let id = profiler
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, c.clone())
        .unwrap();
    let b = profiler.buffer(id).unwrap();
    for seq in 1..=63 {
        b.push(&api(seq));
    }
    // 63 × 64 B < 4096 B: no delivery was even started.
    assert_eq!(b.epoch(), 0);
    assert_eq!(b.pending_bytes(), 63 * 64);
    b.push(&api(64));
    assert_eq!(
        b.epoch(),
        1,
        "the 64th record fills the half and starts a delivery"
    );
    profiler.flush_buffer(id).unwrap();
    let s = c.state.lock().unwrap();
    assert_eq!(s.sizes, vec![64]);
}

#[test]
fn watermark_zero_delivers_each_record() {
    let profiler = Profiler::new();
    let ctx = profiler.create_context().unwrap();
    let c = Arc::new(Collector::default());
    let id = profiler
        .create_buffer(ctx, 4096, 0, BufferPolicy::Lossless, c.clone())
        .unwrap();
    let b = profiler.buffer(id).unwrap();
    for seq in 1..=50u64 {
        b.push(&api(seq));
        // No flush: the watermark alone must deliver this record.
        let deadline = Instant::now() + Duration::from_secs(20);
        while c.state.lock().unwrap().batches < seq {
            assert!(Instant::now() < deadline, "record {seq} was not delivered");
            std::thread::yield_now();
        }
    }
    let s = c.state.lock().unwrap();
    assert!(s.sizes.iter().all(|&n| n == 1), "{:?}", s.sizes);
    assert_eq!(s.delivered(), 50);
}

#[test]
fn flush_returns_after_everything_earlier_was_delivered() {
    let profiler = Profiler::new();
    let ctx = profiler.create_context().unwrap();
    let c = Arc::new(Collector::default());
    let id = profiler
        .create_buffer(ctx, 1 << 20, 1 << 20, BufferPolicy::Lossless, c.clone())
        .unwrap();
    let b = profiler.buffer(id).unwrap();
    for round in 0..20u64 {
        for seq in 1..=10 {
            b.push(&api(round * 10 + seq));
        }
        profiler.flush_buffer(id).unwrap();
        assert_eq!(c.state.lock().unwrap().delivered(), (round + 1) * 10);
    }
    // Flushing an empty buffer returns at once and delivers nothing.
    profiler.flush_buffer(id).unwrap();
    assert_eq!(c.state.lock().unwrap().batches, 20);
}

#[test]
fn discard_drop_count_reaches_the_sink_even_without_records() {
    let profiler = Profiler::new();
    let ctx = profiler.create_context().unwrap();
    let c = Arc::new(Collector::default());
    // A sink that blocks until released, so both halves fill up.
    let gate = Arc::new(Mutex::new(()));
    let held = gate.lock().unwrap();
    let inner = c.clone();
    let g = gate.clone();
    let in_sink = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let entered = in_sink.clone();
    let sink = Arc::new(move |info: DeliveryInfo, batch: Batch| {
        entered.store(true, std::sync::atomic::Ordering::Release);
        drop(g.lock().unwrap());
        inner.deliver(info, batch)
    });
    let id = profiler
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Discard, sink)
        .unwrap();
    let b = profiler.buffer(id).unwrap();
    let mut stored = 0;
    for seq in 1..=1000 {
        if b.push(&api(seq)) == Pushed::Stored {
            stored += 1;
        }
        if seq == 64 {
            // The first half is full and on its way: wait until its records
            // are copied out and the sink holds the callback thread (without
            // the wait, how many halves fill depends on when that thread
            // gets to run).
            while !in_sink.load(std::sync::atomic::Ordering::Acquire) {
                std::thread::yield_now();
            }
        }
    }
    // The first half's records are in the blocked sink's batch (its half is
    // free again), then both halves filled: exactly 3 × 64 stored.
    assert_eq!(stored, 192);
    drop(held);
    profiler.flush_buffer(id).unwrap();
    let s = c.state.lock().unwrap();
    assert_eq!(s.delivered(), 192);
    assert_eq!(s.dropped, 1000 - 192);
}

#[test]
fn lossless_producer_on_a_callback_thread_never_deadlocks() {
    // A sink that produces into its own full LOSSLESS buffer: those records
    // are dropped rather than waiting for the thread that is running the sink.
    let profiler = Arc::new(Profiler::new());
    let ctx = profiler.create_context().unwrap();
    let slot: Arc<Mutex<Option<Arc<Buffer>>>> = Arc::default();
    let s2 = slot.clone();
    let sink = Arc::new(move |_: DeliveryInfo, _: Batch| {
        if let Some(b) = s2.lock().unwrap().clone() {
            for seq in 1..=200 {
                b.push(&api(seq));
            }
        }
    });
    let id = profiler
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, sink)
        .unwrap();
    let b = profiler.buffer(id).unwrap();
    *slot.lock().unwrap() = Some(b.clone());
    for seq in 1..=64 {
        b.push(&api(seq));
    }
    profiler.flush_buffer(id).unwrap();
    *slot.lock().unwrap() = None;
    profiler.finalize();
}

/// More producer threads alive at once than there are chunk slots (256), and
/// then as many again after the first ones ended (their slots are reused):
/// the threads without a slot use the shared protocol; nothing is lost,
/// duplicated or reordered either way.
#[test]
fn more_threads_than_chunk_slots_lose_nothing() {
    const THREADS: u64 = 300;
    const PER_THREAD: u64 = 500;
    let profiler = Arc::new(Profiler::new());
    let ctx = profiler.create_context().unwrap();
    let c = Arc::new(Collector::default());
    let id = profiler
        .create_buffer(ctx, 1 << 20, 1 << 19, BufferPolicy::Lossless, c.clone())
        .unwrap();
    let b = profiler.buffer(id).unwrap();
    assert_eq!(b.uses_thread_chunks(), cfg!(target_os = "linux"));
    for wave in 0..2u64 {
        let all_started = Arc::new(std::sync::Barrier::new(THREADS as usize));
        let handles: Vec<_> = (1..=THREADS)
            .map(|t| {
                let b = Arc::clone(&b);
                let all_started = Arc::clone(&all_started);
                std::thread::spawn(move || {
                    let thread = wave * THREADS + t;
                    b.push(&record(t as u8, thread, 1));
                    // Every thread holds its slot (or has none) from here on.
                    all_started.wait();
                    for seq in 2..=PER_THREAD {
                        assert_eq!(
                            b.push(&record((t + seq) as u8, thread, seq)),
                            Pushed::Stored
                        );
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    profiler.flush_buffer(id).unwrap();
    let s = c.state.lock().unwrap();
    assert_eq!(s.delivered(), 2 * THREADS * PER_THREAD);
    assert_eq!(s.out_of_order, 0);
    assert!(s.per_thread.values().all(|&n| n == PER_THREAD));
}

/// A sink that panics on its first delivery and takes the others.
#[derive(Default)]
struct PanicsOnce {
    calls: Mutex<u64>,
    taken: Mutex<u64>,
}

impl BufferSink for PanicsOnce {
    fn deliver(&self, _info: DeliveryInfo, batch: Batch) {
        let mut calls = self.calls.lock().unwrap();
        *calls += 1;
        if *calls == 1 {
            drop(calls);
            panic!("the sink fails on purpose");
        }
        *self.taken.lock().unwrap() += batch.len() as u64;
    }
}

#[test]
fn records_a_panicking_sink_dropped_are_counted_and_delivery_goes_on() {
    let profiler = Profiler::new();
    let ctx = profiler.create_context().unwrap();
    let sink = Arc::new(PanicsOnce::default());
    let id = profiler
        .create_buffer(ctx, 4096, 4096, BufferPolicy::Lossless, sink.clone())
        .unwrap();
    let b = profiler.buffer(id).unwrap();
    // 64 records fill the first half: its delivery panics.
    for seq in 1..=64 {
        b.push(&api(seq));
    }
    profiler.flush_buffer(id).unwrap();
    for seq in 65..=74 {
        b.push(&api(seq));
    }
    profiler.flush_buffer(id).unwrap();
    assert_eq!(b.lost_to_sink(), 64, "the panicked delivery's records");
    assert_eq!(profiler.lost_to_sinks(), 64);
    assert_eq!(*sink.taken.lock().unwrap(), 10, "later deliveries go on");
}
