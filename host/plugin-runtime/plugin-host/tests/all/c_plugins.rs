//! The C plugin `queue-occupancy` (plugins/c/queue-occupancy, built from
//! source by `cargo xtask build-plugins` with clang-14 and wasi-libc) loaded
//! as a component: its table checked against an independent sweep-line
//! computation over the same dispatches, its imports checked to be the WIT
//! world's only (no WASI), its CSV and its memory discipline.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use rocwasm_core::{Batch, BufferTracingKind, KernelDispatch};
use rocwasm_plugin_host::{Chain, Limits, StageSpec, World};

/// One dispatch: (agent, queue, start, end, correlation id).
type D = (u64, u64, u64, u64, u64);

/// Expected row per (agent, queue), every cell as the plugin prints it.
type Rows = BTreeMap<(u64, u64), BTreeMap<&'static str, String>>;

/// The plugin's columns, in order.
const COLUMNS: [&str; 11] = [
    "Agent",
    "Queue",
    "Dispatches",
    "BusyNs",
    "SpanNs",
    "Occupancy",
    "IdleGaps",
    "IdleTotalNs",
    "MaxGapNs",
    "MaxGapStartNs",
    "MaxGapBeforeCorrelationId",
];

/// Per queue, a sweep over start (+1) and end (−1) events in time order, a
/// start before an end at the same instant, starts at one instant by
/// correlation id: busy time is where the count is positive, a gap runs
/// from the count falling to 0 to the next start, when that is later.
fn oracle(dispatches: &[D]) -> Rows {
    // (agent, queue) → [(start, end, correlation id)]
    type Intervals = Vec<(u64, u64, u64)>;
    let mut by_queue: BTreeMap<(u64, u64), Intervals> = BTreeMap::new();
    for &(agent, queue, start, end, corr) in dispatches {
        by_queue
            .entry((agent, queue))
            .or_default()
            .push((start, end.max(start), corr));
    }
    by_queue
        .into_iter()
        .map(|(key, ds)| {
            // (time, 0 = start / 1 = end, correlation id)
            let mut events: Vec<(u64, u8, u64)> = ds
                .iter()
                .flat_map(|&(s, e, c)| [(s, 0, c), (e, 1, c)])
                .collect();
            events.sort();
            let (first, last) = (events[0].0, events[events.len() - 1].0);
            let (mut active, mut busy, mut prev) = (0u64, 0u64, first);
            let mut idle_since: Option<u64> = None;
            let mut gaps: Vec<(u64, u64, u64)> = Vec::new(); // (length, start, next corr)
            for &(t, kind, corr) in &events {
                if active > 0 {
                    busy += t - prev;
                }
                prev = t;
                if kind == 0 {
                    if let Some(since) = idle_since.take() {
                        if t > since {
                            gaps.push((t - since, since, corr));
                        }
                    }
                    active += 1;
                } else {
                    active -= 1;
                    if active == 0 {
                        idle_since = Some(t);
                    }
                }
            }
            let span = last - first;
            // The longest gap, the earliest among equals.
            let max = gaps
                .iter()
                .fold(None::<(u64, u64, u64)>, |best, g| match best {
                    Some(b) if b.0 >= g.0 => Some(b),
                    _ => Some(*g),
                })
                .unwrap_or((0, 0, 0));
            let occupancy = if span == 0 {
                0.0
            } else {
                100.0 * busy as f64 / span as f64
            };
            let cells = [
                ("Agent", key.0.to_string()),
                ("Queue", key.1.to_string()),
                ("Dispatches", ds.len().to_string()),
                ("BusyNs", busy.to_string()),
                ("SpanNs", span.to_string()),
                ("Occupancy", format!("{occupancy:.2}")),
                ("IdleGaps", gaps.len().to_string()),
                (
                    "IdleTotalNs",
                    gaps.iter().map(|g| g.0).sum::<u64>().to_string(),
                ),
                ("MaxGapNs", max.0.to_string()),
                ("MaxGapStartNs", max.1.to_string()),
                ("MaxGapBeforeCorrelationId", max.2.to_string()),
            ];
            (key, cells.into_iter().collect())
        })
        .collect()
}

fn batch(dispatches: &[D]) -> Batch {
    let mut b = Batch::default();
    for &(agent_id, queue_id, start, end, correlation_id) in dispatches {
        b.kernel_dispatches.push(KernelDispatch {
            agent_id,
            queue_id,
            start,
            end,
            correlation_id,
            kernel_id: 1,
            ..Default::default()
        });
    }
    b
}

/// Runs the plugin over `batches` and returns (columns, rows) of its table.
fn run(spec: StageSpec, batches: &[Vec<D>]) -> (Vec<String>, Vec<Vec<String>>) {
    let (rt, _cache) = runtime();
    let chain = Chain::new(rt, env_with_kernels(&[(1, "k")]), vec![spec]).unwrap();
    for b in batches {
        chain.deliver(info(), batch(b)).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let (stage, tables) = &outcome.summaries[0];
    assert_eq!(stage, "occupancy");
    assert_eq!(tables.len(), 1, "{tables:?}");
    assert_eq!(tables[0].title, "Queue occupancy");
    (tables[0].columns.clone(), tables[0].rows.clone())
}

fn check(columns: &[String], rows: &[Vec<String>], want: &Rows) {
    assert_eq!(columns, COLUMNS, "columns");
    let got: Rows = rows
        .iter()
        .map(|r| {
            let key = (r[0].parse().unwrap(), r[1].parse().unwrap());
            (
                key,
                COLUMNS.iter().copied().zip(r.iter().cloned()).collect(),
            )
        })
        .collect();
    assert_eq!(got.len(), rows.len(), "one row per queue: {rows:?}");
    assert_eq!(&got, want);
    // Sorted by agent, then queue.
    let keys: Vec<(u64, u64)> = rows
        .iter()
        .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
}

fn stage() -> StageSpec {
    StageSpec::new("occupancy", plugin("queue-occupancy"))
}

#[test]
fn queue_occupancy_is_a_component_importing_no_wasi() {
    let (rt, _cache) = runtime();
    let info = rt.inspect(&plugin("queue-occupancy")).unwrap();
    assert_eq!(info.world.as_ref().ok(), Some(&World::Analysis));
    assert!(!info.imports_wasi, "{:?}", info.imports);
    assert!(!info.imports.is_empty());
    for import in &info.imports {
        assert!(
            import.starts_with("rocwasm:plugin/"),
            "{import} is not an interface of the rocwasm:plugin world"
        );
    }
    assert_eq!(
        rt.compile(&plugin("queue-occupancy")).unwrap().world,
        World::Analysis
    );
}

#[test]
fn queue_occupancy_of_two_queues_overlapping_touching_and_gapped() {
    // Agent 1, queue 10: [100,200) and [150,300) overlap, [300,350) touches,
    // then gaps of 150 (350..500) and 300 (600..900).
    // Agent 2, queue 10 (same queue id, another agent): back to back, no gap.
    let first = vec![
        (1, 10, 100, 200, 1),
        (2, 10, 1000, 1100, 10),
        (1, 10, 150, 300, 2),
        (1, 10, 300, 350, 3),
    ];
    // Out of order within the queue: 900 arrives before 500.
    let second = vec![
        (1, 10, 900, 950, 5),
        (2, 10, 1100, 1200, 11),
        (1, 10, 500, 600, 4),
    ];
    let (columns, rows) = run(stage(), &[first.clone(), second.clone()]);
    let row = |agent: &str| rows.iter().find(|r| r[0] == agent).unwrap().clone();
    // Literal values, worked out by hand:
    // busy 250 + 100 + 50 = 400 over 100..950 = 850 → 47.06 %.
    assert_eq!(
        row("1"),
        ["1", "10", "5", "400", "850", "47.06", "2", "450", "300", "600", "5"]
    );
    assert_eq!(
        row("2"),
        ["2", "10", "2", "200", "200", "100.00", "0", "0", "0", "0", "0"]
    );
    let all: Vec<D> = first.into_iter().chain(second).collect();
    check(&columns, &rows, &oracle(&all));
}

#[test]
fn queue_occupancy_matches_a_sweep_line_over_random_dispatches() {
    // Three queues on two agents, 6 batches of 700 dispatches: durations and
    // gaps from 0 (zero-length dispatches, touching ones) up, overlaps of
    // concurrent kernels, and each batch shuffled, so the plugin's in-order
    // fast path, its out-of-order appends and its sort-and-merge all run.
    let queues = [(1u64, 100u64), (1, 101), (2, 100)];
    let mut rng = Lcg(42);
    let mut clocks = [1_000_000u64; 3];
    let mut corr = 0u64;
    let mut batches = Vec::new();
    let mut all = Vec::new();
    for _ in 0..6 {
        let mut b: Vec<D> = Vec::new();
        for _ in 0..700 {
            let q = (rng.next() % 3) as usize;
            let duration = match rng.next() % 10 {
                0 => 0,
                _ => 1 + rng.next() % 5_000,
            };
            let start = clocks[q];
            corr += 1;
            b.push((queues[q].0, queues[q].1, start, start + duration, corr));
            // Next start: overlapping, touching or after a gap.
            clocks[q] = match rng.next() % 4 {
                0 => start + duration / 2,
                1 => start + duration,
                _ => start + duration + rng.next() % 20_000,
            };
        }
        // Shuffle (Fisher–Yates with the deterministic generator).
        for i in (1..b.len()).rev() {
            let j = (rng.next() % (i as u64 + 1)) as usize;
            b.swap(i, j);
        }
        all.extend(b.iter().copied());
        batches.push(b);
    }
    let (columns, rows) = run(stage(), &batches);
    assert_eq!(rows.len(), 3);
    check(&columns, &rows, &oracle(&all));
}

#[test]
fn queue_occupancy_writes_its_table_as_csv_when_granted_a_directory() {
    let out = tempfile::tempdir().unwrap();
    let ds = vec![(3, 7, 10, 20, 1), (3, 7, 40, 45, 2)];
    let spec = stage()
        .with_output_dir(out.path())
        .with_domains([BufferTracingKind::KernelDispatch]);
    let (columns, rows) = run(spec, std::slice::from_ref(&ds));
    let (header, csv_rows) = read_csv(&out.path().join("queue_occupancy.csv"));
    assert_eq!(header, columns);
    assert_eq!(csv_rows, rows);
    check(&columns, &rows, &oracle(&ds));
}

#[test]
fn queue_occupancy_frees_every_batch_under_a_small_memory_cap() {
    // 400 batches of 2000 dispatches (40 bytes per dispatch arrive with the
    // five selected columns: 32 MB in all) under an 8 MiB cap: a plugin that
    // kept its batches would trap. Back-to-back
    // dispatches on one queue merge into one span, so its own state stays
    // a few bytes.
    let limits = Limits {
        memory_bytes: 8 << 20,
        ..Limits::default()
    };
    let mut batches = Vec::new();
    let mut t = 0;
    let mut corr = 0;
    for _ in 0..400 {
        let mut b = Vec::with_capacity(2000);
        for _ in 0..2000 {
            corr += 1;
            b.push((1, 1, t, t + 10, corr));
            t += 10;
        }
        batches.push(b);
    }
    let (_, rows) = run(stage().with_limits(limits), &batches);
    assert_eq!(
        rows,
        [["1", "1", "800000", "8000000", "8000000", "100.00", "0", "0", "0", "0", "0"]]
    );
}
