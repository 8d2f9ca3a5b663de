//! Shared helpers for the integration tests: where the real plugin
//! components are, a runtime, an engine with known kernel symbols, and an
//! independent statistics oracle.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rocwasm_core::{KernelSymbol, Profiler};
use rocwasm_plugin_host::{EngineConfig, HostEnv, PluginEngine};

/// `<workspace>/target/plugins/<name>.wasm`. Fails (never skips) when the
/// plugins have not been built.
pub fn plugin(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../target/plugins");
    assert!(
        dir.is_dir(),
        "{} does not exist: run `cargo xtask build-plugins` first (the README's test command does)",
        dir.display()
    );
    let p = dir.join(format!("{name}.wasm"));
    assert!(
        p.is_file(),
        "{} is missing: run `cargo xtask build-plugins`",
        p.display()
    );
    p
}

/// A runtime with a private cache directory (kept for the test's life).
pub fn runtime() -> (Arc<PluginEngine>, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    let rt = PluginEngine::new(EngineConfig {
        cache_dir: Some(cache.path().join("cache")),
        ..Default::default()
    })
    .unwrap();
    (Arc::new(rt), cache)
}

/// An engine whose symbol table knows `kernels` (id → name).
pub fn env_with_kernels(kernels: &[(u64, &str)]) -> HostEnv {
    let profiler = Arc::new(Profiler::new());
    for (id, name) in kernels {
        profiler.symbols().insert_kernel(KernelSymbol {
            id: *id,
            code_object_id: 1,
            name: name.to_string(),
            demangled_name: name.to_string(),
            kernel_object: 0,
            kernarg_segment_size: 0,
            kernarg_segment_alignment: 0,
            group_segment_size: 0,
            private_segment_size: 0,
            sgpr_count: 0,
            arch_vgpr_count: 0,
            accum_vgpr_count: 0,
            kernel_code_entry_byte_offset: 0,
            kernel_address: 0,
        });
    }
    HostEnv::new(profiler)
}

/// Expected `--stats` values of one name, computed here from raw durations.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub calls: u64,
    pub total: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
}

pub fn oracle(durations: &BTreeMap<String, Vec<u64>>) -> BTreeMap<String, Expected> {
    durations
        .iter()
        .map(|(name, d)| {
            let n = d.len() as f64;
            let total: u64 = d.iter().sum();
            let mean = total as f64 / n;
            let var = if d.len() > 1 {
                d.iter().map(|x| (*x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0)
            } else {
                0.0
            };
            let e = Expected {
                calls: d.len() as u64,
                total,
                min: *d.iter().min().unwrap(),
                max: *d.iter().max().unwrap(),
                mean,
                stddev: var.sqrt(),
            };
            (name.clone(), e)
        })
        .collect()
}

/// Checks a stats table (summary rows or CSV rows, with a header) against the oracle.
pub fn check_stats(columns: &[String], rows: &[Vec<String>], want: &BTreeMap<String, Expected>) {
    let col = |needle: &str| {
        columns
            .iter()
            .position(|c| c.to_ascii_lowercase().contains(needle))
            .unwrap_or_else(|| panic!("no column like {needle:?} in {columns:?}"))
    };
    let (name, calls, total, avg, pct, min, max, sd) = (
        col("name"),
        col("calls"),
        col("total"),
        col("average"),
        col("percent"),
        col("min"),
        col("max"),
        col("std"),
    );
    assert_eq!(rows.len(), want.len(), "rows: {rows:?}");
    let grand: u64 = want.values().map(|e| e.total).sum();
    let f = |s: &str| {
        s.parse::<f64>()
            .unwrap_or_else(|_| panic!("not a number: {s:?}"))
    };
    // Equal up to 1e-6 (relative above 1), or up to the cell's own rounding
    // when it is coarser: rocprofv3's format prints percentages with two
    // decimals from 1 % up.
    let close =
        |cell: &str, b: f64| (f(cell) - b).abs() <= (1e-6 * b.abs().max(1.0)).max(half_unit(cell));
    for r in rows {
        let e = want
            .get(&r[name])
            .unwrap_or_else(|| panic!("unexpected row {r:?}"));
        assert_eq!(r[calls].parse::<u64>().unwrap(), e.calls, "{r:?}");
        assert_eq!(r[total].parse::<u64>().unwrap(), e.total, "{r:?}");
        assert_eq!(r[min].parse::<u64>().unwrap(), e.min, "{r:?}");
        assert_eq!(r[max].parse::<u64>().unwrap(), e.max, "{r:?}");
        assert!(close(&r[avg], e.mean), "{r:?} mean {}", e.mean);
        assert!(close(&r[sd], e.stddev), "{r:?} sd {}", e.stddev);
        assert!(
            close(&r[pct], e.total as f64 * 100.0 / grand as f64),
            "{r:?}"
        );
    }
}

/// Half a unit in the last printed digit of a number: the rounding error of
/// `"42.56"` is at most 0.005, of `"5.000e-03"` at most 5e-7.
pub fn half_unit(cell: &str) -> f64 {
    let (mantissa, exponent) = match cell.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (cell, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    0.5 * 10f64.powi(exponent - decimals)
}

/// Parses a simple CSV (no quoted commas) into header and rows.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.is_empty());
    let split = |l: &str| {
        l.split(',')
            .map(|c| c.trim_matches('"').to_string())
            .collect::<Vec<_>>()
    };
    let header = split(lines.next().expect("empty CSV"));
    (header, lines.map(split).collect())
}

/// A tiny deterministic generator (no rand dependency, same numbers every run).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// `n` kernel dispatches with kernel id 1 (a batch for plumbing tests).
pub fn dispatches(n: usize, first: u64) -> rocwasm_core::Batch {
    let mut b = rocwasm_core::Batch::default();
    for i in 0..n as u64 {
        b.kernel_dispatches.push(rocwasm_core::KernelDispatch {
            kernel_id: 1,
            correlation_id: first + i,
            start: 100 * (first + i),
            end: 100 * (first + i) + 50,
            ..Default::default()
        });
    }
    b
}

/// `n` kernel dispatches (kernel 1, 5 ns each) traced live through
/// `profiler`, into whatever buffer a plugin configured for them; fails
/// when none did.
pub fn trace_dispatches(profiler: &Profiler, n: u64) {
    for i in 0..n {
        let op = profiler
            .begin_async(rocwasm_core::Domain::KernelDispatch, 1)
            .expect("a plugin traces kernel dispatches");
        profiler.complete_kernel_dispatch(
            op,
            rocwasm_core::KernelDispatch {
                kernel_id: 1,
                start: i,
                end: i + 5,
                ..Default::default()
            },
        );
    }
}

pub fn info() -> rocwasm_core::DeliveryInfo {
    rocwasm_core::DeliveryInfo {
        context: rocwasm_core::ContextId(1),
        buffer: rocwasm_core::BufferId(1),
        drop_count: 0,
        process: 0,
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}
