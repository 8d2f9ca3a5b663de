//! Every stock plugin loaded as a real component, fed batches built here,
//! its results checked against values computed here independently.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use rocwasm_core::{Batch, BufferId, ContextId, DeliveryInfo, KernelDispatch};
use rocwasm_plugin_host::{Chain, StageSpec, World};

fn info() -> DeliveryInfo {
    DeliveryInfo {
        context: ContextId(1),
        buffer: BufferId(1),
        drop_count: 0,
        process: 0,
    }
}

#[test]
fn kernel_stats_matches_independent_statistics() {
    let kernels = [
        (1, "gemm_f32"),
        (2, "reduce"),
        (3, "gemm_f32"),
        (4, "copy_kernel"),
    ];
    let env = env_with_kernels(&kernels);
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let spec = StageSpec::new("kstats", plugin("kernel-stats")).with_output_dir(out.path());
    let chain = Chain::new(rt.clone(), env, vec![spec]).unwrap();
    assert_eq!(
        rt.compile(&plugin("kernel-stats")).unwrap().world,
        World::Analysis
    );

    let mut rng = Lcg(7);
    let mut durations: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut t = 1_000_000u64;
    for batch_no in 0..5 {
        let mut b = Batch::default();
        for i in 0..(100 + batch_no * 37) {
            let (id, name) = kernels[(rng.next() % 4) as usize];
            let d = 1 + rng.next() % 50_000;
            b.kernel_dispatches.push(KernelDispatch {
                kernel_id: id,
                start: t,
                end: t + d,
                correlation_id: i as u64,
                ..Default::default()
            });
            t += d + 10;
            durations.entry(name.to_string()).or_default().push(d);
        }
        chain.deliver(info(), b).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let want = oracle(&durations);

    let (stage, tables) = &outcome.summaries[0];
    assert_eq!(stage, "kstats");
    assert_eq!(tables.len(), 1);
    check_stats(&tables[0].columns, &tables[0].rows, &want);

    let (header, rows) = read_csv(&out.path().join("kernel_stats.csv"));
    check_stats(&header, &rows, &want);
}

#[test]
fn kernel_filter_keeps_matching_dispatches_and_passes_other_tables() {
    use rocwasm_core::{ApiCall, BufferTracingKind};
    let kernels = [(1, "Cijk_gemm_NN"), (2, "reduce_sum"), (3, "gemm_small")];
    let (rt, _cache) = runtime();
    let spec = StageSpec::new("filter", plugin("kernel-filter"))
        .with_config("pattern", "gemm")
        .with_config("min-duration-ns", "1000");
    let chain = Chain::new(rt, env_with_kernels(&kernels), vec![spec]).unwrap();
    let mut rng = Lcg(3);
    let mut b = Batch::default();
    let mut want = Vec::new();
    for i in 0..500u64 {
        let (id, name) = kernels[(rng.next() % 3) as usize];
        let d = rng.next() % 2000;
        b.kernel_dispatches.push(KernelDispatch {
            kernel_id: id,
            start: i * 10_000,
            end: i * 10_000 + d,
            correlation_id: i,
            ..Default::default()
        });
        if name.contains("gemm") && d >= 1000 {
            want.push(i);
        }
        b.api_calls.push(ApiCall {
            kind: BufferTracingKind::HipRuntimeApi as u32,
            correlation_id: i,
            ..Default::default()
        });
    }
    let out = chain.deliver(info(), b).unwrap();
    assert_eq!(out.kernel_dispatches.correlation_id, want);
    assert_eq!(
        out.api_calls.len(),
        500,
        "API calls must pass a kernel filter untouched"
    );
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
}

#[test]
fn memcpy_bandwidth_matches_independent_sums_per_direction() {
    use rocwasm_core::MemoryCopy;
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let spec = StageSpec::new("bw", plugin("memcpy-bandwidth")).with_output_dir(out.path());
    let chain = Chain::new(rt, env_with_kernels(&[]), vec![spec]).unwrap();
    let mut rng = Lcg(11);
    // direction → (copies, bytes, total duration)
    let mut want: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
    for _ in 0..4 {
        let mut b = Batch::default();
        for i in 0..64u64 {
            let dir = 2 + (rng.next() % 3) as u32; // H2D, D2H, D2D
            let bytes = 4096 * (1 + rng.next() % 1000);
            let d = 1 + rng.next() % 100_000;
            b.memory_copies.push(MemoryCopy {
                operation: dir,
                bytes,
                start: i * 1_000_000,
                end: i * 1_000_000 + d,
                src_agent_id: 1,
                dst_agent_id: 2,
                ..Default::default()
            });
            let e = want.entry(dir).or_default();
            *e = (e.0 + 1, e.1 + bytes, e.2 + d);
        }
        chain.deliver(info(), b).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let (header, rows) = read_csv(&out.path().join("memcpy_bandwidth_by_direction.csv"));
    let col = |n: &str| {
        header
            .iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("{n} not in {header:?}"))
    };
    let (copies, bytes, total) = (col("Copies"), col("Bytes"), col("TotalDurationNs"));
    let mut got: Vec<(u64, u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                r[copies].parse().unwrap(),
                r[bytes].parse().unwrap(),
                r[total].parse().unwrap(),
            )
        })
        .collect();
    let mut expected: Vec<(u64, u64, u64)> = want.values().copied().collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
    let bw = col("BandwidthGBps");
    for r in &rows {
        let (b, t): (f64, f64) = (r[bytes].parse().unwrap(), r[total].parse().unwrap());
        let g: f64 = r[bw].parse().unwrap();
        assert!((g - b / t).abs() <= 1e-3 * (b / t), "{r:?}");
    }
}

#[test]
fn api_stats_matches_independent_statistics_per_function() {
    use rocwasm_core::{operation_name, ApiCall, BufferTracingKind as K};
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let spec = StageSpec::new("api", plugin("api-stats")).with_output_dir(out.path());
    let chain = Chain::new(rt, env_with_kernels(&[]), vec![spec]).unwrap();
    let mut rng = Lcg(5);
    let mut hip: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let ops = [1u32, 2, 3, 10, 40];
    for _ in 0..3 {
        let mut b = Batch::default();
        for i in 0..200u64 {
            let op = ops[(rng.next() % ops.len() as u64) as usize];
            let d = 1 + rng.next() % 10_000;
            b.api_calls.push(ApiCall {
                kind: K::HipRuntimeApi as u32,
                operation: op,
                correlation_id: i,
                start: i * 20_000,
                end: i * 20_000 + d,
                ..Default::default()
            });
            let name = operation_name(K::HipRuntimeApi, op)
                .expect("a HIP operation name")
                .to_string();
            hip.entry(name).or_default().push(d);
        }
        chain.deliver(info(), b).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let (header, rows) = read_csv(&out.path().join("hip_api_stats.csv"));
    check_stats(&header, &rows, &oracle(&hip));
    assert!(
        !out.path().join("hsa_api_stats.csv").exists(),
        "no HSA calls were delivered"
    );
}
