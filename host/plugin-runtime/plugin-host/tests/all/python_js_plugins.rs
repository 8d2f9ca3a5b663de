//! The Python and JS plugins (`plugins/python/range-kernel-time`,
//! `plugins/js/copy-histogram`, built from source by `cargo xtask
//! build-plugins` with componentize-py and componentize-js) loaded as
//! components: each table checked against an oracle computed here, by a
//! different method, from the same records; both checked to import WASI
//! (and so to run in the deny-all WASI context); and the second load of the
//! Python component checked to come from the compiled-component cache.
//!
//! Compiling an 18 MB componentize-py component takes seconds, so the
//! module compiles each plugin once into one shared cache directory
//! ([`warm`]); every chain after that loads from the cache.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use common::*;
use rocwasm_core::{
    operation_by_name, ApiCall, Batch, BufferTracingKind as K, KernelDispatch, MemoryCopy,
};
use rocwasm_plugin_host::{Chain, EngineConfig, PluginEngine, StageSpec, World};

const PYTHON: &str = "range-kernel-time";
const JS: &str = "copy-histogram";

/// The shared cache directory, filled by one compile of each plugin, and
/// whether those first compiles came from the cache (they must not).
struct Warm {
    dir: tempfile::TempDir,
    first_from_cache: BTreeMap<&'static str, bool>,
}

fn warm() -> &'static Warm {
    static WARM: OnceLock<Warm> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    WARM.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let rt = engine(dir.path().join("cache"));
        let first_from_cache = [PYTHON, JS]
            .into_iter()
            .map(|name| (name, rt.compile(&plugin(name)).unwrap().from_cache))
            .collect();
        Warm {
            dir,
            first_from_cache,
        }
    })
}

fn engine(cache: PathBuf) -> Arc<PluginEngine> {
    Arc::new(
        PluginEngine::new(EngineConfig {
            cache_dir: Some(cache),
            ..Default::default()
        })
        .unwrap(),
    )
}

/// A fresh engine on the shared, warm cache.
fn warm_engine() -> Arc<PluginEngine> {
    engine(warm().dir.path().join("cache"))
}

/// Runs one stage over `batches`; (columns, rows) of its one table.
fn run(spec: StageSpec, title: &str, batches: Vec<Batch>) -> (Vec<String>, Vec<Vec<String>>) {
    let name = spec.name.clone();
    let chain = Chain::new(warm_engine(), env_with_kernels(&[(1, "k")]), vec![spec]).unwrap();
    for b in batches {
        chain.deliver(info(), b).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let (stage, tables) = &outcome.summaries[0];
    assert_eq!(stage, &name);
    assert_eq!(tables.len(), 1, "{tables:?}");
    assert!(tables[0].title.starts_with(title), "{}", tables[0].title);
    (tables[0].columns.clone(), tables[0].rows.clone())
}

#[test]
fn both_plugins_are_analysis_components_that_import_wasi() {
    let rt = warm_engine();
    for name in [PYTHON, JS] {
        let info = rt.inspect(&plugin(name)).unwrap();
        assert_eq!(info.world.as_ref().ok(), Some(&World::Analysis), "{name}");
        assert!(info.imports_wasi, "{name}: {:?}", info.imports);
        assert!(
            info.imports.iter().any(|i| i.starts_with("wasi:cli/")),
            "{name}: {:?}",
            info.imports
        );
        assert!(
            !info.imports.iter().any(|i| i.starts_with("wasi:http/")),
            "{name} imports wasi:http: {:?}",
            info.imports
        );
    }
}

#[test]
fn the_second_load_of_the_python_plugin_comes_from_the_compiled_cache() {
    let warm = warm();
    assert!(
        !warm.first_from_cache[PYTHON],
        "the first compile found a cache entry in a fresh directory"
    );
    // A new engine (as a second run is) on the same cache directory.
    let second = warm_engine().compile(&plugin(PYTHON)).unwrap();
    assert!(second.from_cache, "the second load compiled again");
    assert_eq!(second.world, World::Analysis);
    // And the cache holds exactly that artifact, keyed by the digest.
    let rt = warm_engine();
    let cache = rt.cache().expect("the cache is enabled");
    assert!(cache.path_for(&second.digest).is_file());
    // A different cache directory knows nothing of it.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = engine(elsewhere.path().join("cache"));
    assert!(other
        .cache()
        .unwrap()
        .load(other.engine(), &second.digest)
        .is_none());
}

// ------------------------------------------------------- range-kernel-time

/// One marker call or launch on a thread: (thread, correlation id, event).
#[derive(Debug, Clone, Copy)]
enum Ev {
    Push,
    Pop,
    /// A dispatch launched by this call, with its GPU (start, end).
    Launch(u64, u64),
}

/// The oracle: per dispatch, rebuild its thread's range stack from scratch
/// by scanning every marker call of that thread with a smaller correlation
/// id (quadratic, no sorting, no sharing with the plugin's sweep). Rows:
/// path → [instances, kernels, self ns, total ns].
fn range_oracle(events: &[(u64, u64, Ev)]) -> (BTreeMap<Vec<String>, [u64; 4]>, u64) {
    let name = |corr: u64| format!("range@{corr}");
    let stack_before = |thread: u64, corr: u64| -> (Vec<String>, u64) {
        let mut markers: Vec<(u64, bool)> = events
            .iter()
            .filter(|(t, c, e)| *t == thread && *c < corr && !matches!(e, Ev::Launch(..)))
            .map(|(_, c, e)| (*c, matches!(e, Ev::Push)))
            .collect();
        markers.sort();
        let (mut stack, mut unmatched) = (Vec::new(), 0);
        for (c, push) in markers {
            if push {
                stack.push(name(c));
            } else if stack.pop().is_none() {
                unmatched += 1;
            }
        }
        (stack, unmatched)
    };
    let mut rows: BTreeMap<Vec<String>, [u64; 4]> = BTreeMap::new();
    for &(thread, corr, ev) in events {
        match ev {
            Ev::Push => {
                let (mut stack, _) = stack_before(thread, corr);
                stack.push(name(corr));
                rows.entry(stack).or_default()[0] += 1;
            }
            Ev::Pop => {}
            Ev::Launch(start, end) => {
                let (stack, _) = stack_before(thread, corr);
                let ns = end.saturating_sub(start);
                let r = rows.entry(stack.clone()).or_default();
                r[1] += 1;
                r[2] += ns;
                for depth in 1..=stack.len() {
                    rows.entry(stack[..depth].to_vec()).or_default()[3] += ns;
                }
                if stack.is_empty() {
                    rows.entry(stack).or_default()[3] += ns;
                }
            }
        }
    }
    // Unmatched pops: those of each thread over the whole trace.
    let threads: std::collections::BTreeSet<u64> = events.iter().map(|e| e.0).collect();
    let unmatched = threads.iter().map(|&t| stack_before(t, u64::MAX).1).sum();
    (rows, unmatched)
}

/// The events as batches: marker calls in the API table, launches as
/// dispatches, split into `parts` batches in the order given.
fn range_batches(events: &[(u64, u64, Ev)], parts: usize) -> Vec<Batch> {
    let marker = K::MarkerCoreApi.raw();
    let op = |n| operation_by_name(K::MarkerCoreApi, n).unwrap();
    let (push, pop) = (op("roctxRangePushA"), op("roctxRangePop"));
    let hip = operation_by_name(K::HipRuntimeApi, "hipLaunchKernel").unwrap();
    let mut batches = vec![Batch::default(); parts];
    for (i, &(thread_id, correlation_id, ev)) in events.iter().enumerate() {
        let b = &mut batches[i % parts];
        let api = |kind, operation| ApiCall {
            kind,
            operation,
            correlation_id,
            thread_id,
            start: correlation_id * 10,
            end: correlation_id * 10 + 5,
            ..Default::default()
        };
        match ev {
            Ev::Push => b.api_calls.push(api(marker, push)),
            Ev::Pop => b.api_calls.push(api(marker, pop)),
            Ev::Launch(start, end) => {
                // The launching HIP call too: it must not count as a marker.
                b.api_calls.push(api(K::HipRuntimeApi.raw(), hip));
                b.kernel_dispatches.push(KernelDispatch {
                    correlation_id,
                    thread_id,
                    start,
                    end,
                    kernel_id: 1,
                    ..Default::default()
                });
            }
        }
    }
    batches
}

fn check_ranges(rows: &[Vec<String>], columns: &[String], events: &[(u64, u64, Ev)]) {
    assert_eq!(
        columns,
        [
            "Range",
            "Instances",
            "Kernels",
            "SelfNs",
            "TotalNs",
            "Percentage"
        ]
    );
    let (want, _) = range_oracle(events);
    let gpu: u64 = want.values().map(|r| r[2]).sum();
    let got: BTreeMap<Vec<String>, [u64; 4]> = rows
        .iter()
        .map(|r| {
            let path = if r[0] == "(no range)" {
                Vec::new()
            } else {
                r[0].split(" > ").map(str::to_string).collect()
            };
            let n = |i: usize| r[i].parse::<u64>().unwrap_or_else(|_| panic!("{r:?}"));
            let pct = if gpu == 0 {
                0.0
            } else {
                100.0 * n(4) as f64 / gpu as f64
            };
            assert_eq!(r[5], format!("{pct:.2}"), "{r:?}");
            (path, [n(1), n(2), n(3), n(4)])
        })
        .collect();
    assert_eq!(got.len(), rows.len(), "one row per path: {rows:?}");
    assert_eq!(got, want);
}

#[test]
fn range_kernel_time_attributes_dispatches_to_the_innermost_open_range() {
    // Thread 7: range@1 { k(2) range@3 { k(4) k(5) } k(7) } k(9); a pop on
    // thread 8 with nothing open (ignored), then range@11 { k(12) } still
    // open at the end. k(13) on thread 9 outside any range. The batches
    // arrive in an order unrelated to the program's (split round robin).
    let events = [
        (7, 1, Ev::Push),
        (7, 2, Ev::Launch(100, 150)),
        (7, 3, Ev::Push),
        (7, 4, Ev::Launch(200, 260)),
        (7, 5, Ev::Launch(300, 301)),
        (7, 6, Ev::Pop),
        (7, 7, Ev::Launch(400, 500)),
        (7, 8, Ev::Pop),
        (7, 9, Ev::Launch(600, 610)),
        (8, 10, Ev::Pop),
        (8, 11, Ev::Push),
        (8, 12, Ev::Launch(700, 1000)),
        (9, 13, Ev::Launch(50, 40)), // end before start: 0 ns
    ];
    let spec = StageSpec::new("ranges", plugin(PYTHON)).with_config("file", "");
    let (columns, rows) = run(
        spec,
        "Kernel time per roctx range",
        range_batches(&events, 3),
    );
    // Worked out by hand, in the plugin's order (paths sorted, no range last).
    assert_eq!(
        rows,
        [
            ["range@1", "1", "2", "150", "211", "40.50"],
            ["range@1 > range@3", "1", "2", "61", "61", "11.71"],
            ["range@11", "1", "1", "300", "300", "57.58"],
            ["(no range)", "0", "2", "10", "10", "1.92"],
        ]
        .map(|r| r.map(str::to_string).to_vec())
    );
    check_ranges(&rows, &columns, &events);
    let title_has_unmatched = {
        let chain = Chain::new(
            warm_engine(),
            env_with_kernels(&[]),
            vec![StageSpec::new("r", plugin(PYTHON)).with_config("file", "")],
        )
        .unwrap();
        for b in range_batches(&events, 1) {
            chain.deliver(info(), b).unwrap();
        }
        let outcome = chain.finish().unwrap();
        outcome.summaries[0].1[0].title.clone()
    };
    assert!(
        title_has_unmatched.contains("(1 roctxRangePop without an open range ignored)"),
        "{title_has_unmatched}"
    );
}

#[test]
fn range_kernel_time_matches_a_rescan_oracle_on_random_nested_ranges() {
    // Four threads, 1500 events: pushes, pops (some unmatched), launches
    // with random GPU times; correlation ids increase across the process as
    // the runtime hands them out, threads interleaved.
    let mut rng = Lcg(7);
    let mut events = Vec::new();
    for corr in 1..=1500u64 {
        let thread = 100 + rng.next() % 4;
        let ev = match rng.next() % 10 {
            0..=2 => Ev::Push,
            3..=4 => Ev::Pop,
            _ => {
                let start = rng.next() % 1_000_000;
                Ev::Launch(start, start + rng.next() % 50_000)
            }
        };
        events.push((thread, corr, ev));
    }
    // Delivery order: shuffled.
    let mut shuffled = events.clone();
    for i in (1..shuffled.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        shuffled.swap(i, j);
    }
    let spec = StageSpec::new("ranges", plugin(PYTHON)).with_config("file", "");
    let (columns, rows) = run(
        spec,
        "Kernel time per roctx range",
        range_batches(&shuffled, 5),
    );
    assert!(rows.len() > 20, "a deep enough tree: {}", rows.len());
    check_ranges(&rows, &columns, &events);
}

#[test]
fn range_kernel_time_writes_its_table_as_csv_when_granted_a_directory() {
    let out = tempfile::tempdir().unwrap();
    let events = [(1, 1, Ev::Push), (1, 2, Ev::Launch(0, 10)), (1, 3, Ev::Pop)];
    let spec = StageSpec::new("ranges", plugin(PYTHON)).with_output_dir(out.path());
    let (columns, rows) = run(
        spec,
        "Kernel time per roctx range",
        range_batches(&events, 1),
    );
    let (header, csv_rows) = read_csv(&out.path().join("range_kernel_time.csv"));
    assert_eq!(header, columns);
    assert_eq!(csv_rows, rows);
    assert_eq!(rows, [["range@1", "1", "1", "10", "10", "100.00"]]);
}

// ---------------------------------------------------------- copy-histogram

/// The oracle: bucket by comparing against powers of two one by one (the
/// plugin counts binary digits), bandwidth in f64 (the plugin divides
/// BigInts). Rows: bucket floor → [copies, bytes, ns].
fn copy_oracle(copies: &[(u64, u64, u64)]) -> BTreeMap<Option<u32>, [u128; 3]> {
    let mut rows: BTreeMap<Option<u32>, [u128; 3]> = BTreeMap::new();
    for &(bytes, start, end) in copies {
        let bucket = (0..64u32).rev().find(|&k| bytes >= 1u64 << k);
        let r = rows.entry(bucket).or_default();
        r[0] += 1;
        r[1] += bytes as u128;
        r[2] += end.saturating_sub(start) as u128;
    }
    rows
}

fn copy_batch(copies: &[(u64, u64, u64)]) -> Batch {
    let mut b = Batch::default();
    for (i, &(bytes, start, end)) in copies.iter().enumerate() {
        b.memory_copies.push(MemoryCopy {
            operation: 2,
            correlation_id: i as u64 + 1,
            bytes,
            start,
            end,
            ..Default::default()
        });
    }
    b
}

fn check_copies(columns: &[String], rows: &[Vec<String>], copies: &[(u64, u64, u64)]) {
    assert_eq!(
        columns,
        [
            "Bucket",
            "MinBytes",
            "MaxBytes",
            "Copies",
            "Bytes",
            "TimeNs",
            "GB/s",
            "Percentage"
        ]
    );
    let want = copy_oracle(copies);
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    let all: u128 = want.values().map(|r| r[1]).sum();
    for (row, (bucket, [n, bytes, ns])) in rows.iter().zip(&want) {
        let (min, max) = match bucket {
            None => (0u128, 0u128),
            Some(k) => (1u128 << k, (1u128 << (k + 1)) - 1),
        };
        let u = |i: usize| row[i].parse::<u128>().unwrap_or_else(|_| panic!("{row:?}"));
        assert_eq!(
            [u(1), u(2), u(3), u(4), u(5)],
            [min, max, *n, *bytes, *ns],
            "{row:?}"
        );
        let f = |i: usize| row[i].parse::<f64>().unwrap_or_else(|_| panic!("{row:?}"));
        if *ns == 0 {
            assert_eq!(row[6], "-", "{row:?}");
        } else {
            let gbs = *bytes as f64 / *ns as f64;
            assert!((f(6) - gbs).abs() <= 0.005 + gbs * 1e-12, "{row:?}: {gbs}");
        }
        let pct = 100.0 * *bytes as f64 / all as f64;
        assert!((f(7) - pct).abs() <= 0.005 + 1e-9, "{row:?}: {pct}");
    }
}

#[test]
fn copy_histogram_buckets_sizes_by_powers_of_two() {
    let copies = [
        (0, 10, 20),
        (1, 0, 1),
        (3, 0, 2),
        (2, 0, 2),
        (1023, 0, 100),
        (1024, 0, 100),
        (2047, 100, 50), // end before start: no time
        (1 << 20, 0, 1 << 10),
        (u64::MAX, 0, 1 << 30),
    ];
    let spec = StageSpec::new("copies", plugin(JS)).with_config("file", "");
    let (columns, rows) = run(spec, "Memory copies by size", vec![copy_batch(&copies)]);
    let labels: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        labels,
        ["0 B", "1 B", "2 B", "512 B", "1 KiB", "1 MiB", "8 EiB"]
    );
    // 1 KiB bucket: 1024 + 2047 bytes in 100 ns = 30.71 GB/s.
    assert_eq!(
        rows[4],
        ["1 KiB", "1024", "2047", "2", "3071", "100", "30.71", "0.00"]
    );
    // 0 B in 10 ns is 0 GB/s; 2047 B in no time (end before start) in the
    // 1 KiB bucket still has 100 ns from the 1024 B copy.
    assert_eq!(rows[0][6], "0.00", "{:?}", rows[0]);
    check_copies(&columns, &rows, &copies);
}

#[test]
fn copy_histogram_matches_the_oracle_over_random_copies_in_many_batches() {
    let mut rng = Lcg(99);
    let mut all = Vec::new();
    let mut batches = Vec::new();
    for _ in 0..8 {
        let part: Vec<(u64, u64, u64)> = (0..500)
            .map(|_| {
                let bytes = (rng.next() << 31 | rng.next()) >> (rng.next() % 62);
                let start = rng.next();
                (bytes, start, start + rng.next() % 1_000_000)
            })
            .collect();
        batches.push(copy_batch(&part));
        all.extend(part);
    }
    let out = tempfile::tempdir().unwrap();
    let spec = StageSpec::new("copies", plugin(JS)).with_output_dir(out.path());
    let (columns, rows) = run(spec, "Memory copies by size", batches);
    check_copies(&columns, &rows, &all);
    let (header, csv_rows) = read_csv(&out.path().join("copy_histogram.csv"));
    assert_eq!((header, csv_rows), (columns, rows));
}
