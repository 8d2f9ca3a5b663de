//! Operation filters: the chain traces, per kind, the union of its stages'
//! operations (all of them as soon as one stage wants all), and each stage
//! sees only its own operations.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use common::*;
use rocwasm_core::{
    operation_by_name, Batch, BufferTracingKind as K, Domain, MemoryCopy, MemoryCopyDirection,
    Profiler,
};
use rocwasm_plugin_host::{Chain, StageSpec};

fn hip(name: &str) -> u32 {
    operation_by_name(K::HipRuntimeApi, name).unwrap()
}

/// Traced HIP calls, by name.
fn call(profiler: &Profiler, names: &[&str]) {
    for n in names {
        profiler.trace_api(
            Domain::HipRuntimeApi,
            hip(n),
            Vec::new,
            || 0,
            |r| r.to_string(),
        );
    }
}

fn copy(profiler: &Profiler, dirs: &[MemoryCopyDirection]) {
    for d in dirs {
        let op = profiler
            .begin_async(Domain::MemoryCopy, *d as u32)
            .expect("copies are traced");
        profiler.complete_memory_copy(
            op,
            MemoryCopy {
                operation: *d as u32,
                bytes: 64,
                ..Default::default()
            },
        );
    }
}

fn recorder(name: &str, out: &Path) -> StageSpec {
    StageSpec::new(name, plugin("recorder"))
        .with_config("file", format!("{name}.json"))
        .with_output_dir(out)
}

fn total(out: &Path, stage: &str, table: &str) -> u64 {
    let rec = read_json(&out.join(format!("{stage}.json")));
    rec["totals"][table].as_u64().unwrap_or(0)
}

type Seen = Arc<Mutex<Vec<Batch>>>;

fn collect(seen: &Seen) -> rocwasm_plugin_host::ChainOutput {
    let seen = seen.clone();
    Box::new(move |_, b| seen.lock().unwrap().push(b.clone()))
}

#[test]
fn each_stage_sees_its_operations_and_all_wins_the_union() {
    use MemoryCopyDirection::*;
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let env = env_with_kernels(&[]);
    let profiler = env.profiler.clone();
    let specs = vec![
        recorder("every-hip", out.path()).with_domains([K::HipRuntimeApi]),
        recorder("launches", out.path())
            .with_domains([K::HipRuntimeApi, K::MemoryCopy])
            .with_operations(K::HipRuntimeApi, [hip("hipLaunchKernel")])
            .with_operations(K::MemoryCopy, [HostToDevice as u32]),
    ];
    let seen = Seen::default();
    let chain = Chain::with_output(rt, env, specs, collect(&seen)).unwrap();
    call(
        &profiler,
        &["hipLaunchKernel", "hipMalloc", "hipLaunchKernel", "hipFree"],
    );
    call(&profiler, &["hipLaunchKernel"]);
    copy(&profiler, &[HostToDevice, DeviceToHost, HostToDevice]);
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);

    let out = out.path();
    assert_eq!(total(out, "every-hip", "api-calls"), 5);
    assert_eq!(total(out, "every-hip", "memory-copies"), 0);
    assert_eq!(total(out, "launches", "api-calls"), 3);
    assert_eq!(total(out, "launches", "memory-copies"), 2);

    // The chain traced every HIP call (one stage wants all) but only the
    // copy direction its one copy stage named.
    let seen = seen.lock().unwrap();
    let api: usize = seen.iter().map(|b| b.api_calls.len()).sum();
    assert_eq!(api, 5);
    let dirs: Vec<u32> = seen
        .iter()
        .flat_map(|b| b.memory_copies.operation.clone())
        .collect();
    assert_eq!(dirs, [HostToDevice as u32, HostToDevice as u32]);
}

#[test]
fn lists_unite_and_nothing_else_is_traced() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let env = env_with_kernels(&[]);
    let profiler = env.profiler.clone();
    let specs = vec![
        recorder("launch", out.path())
            .with_domains([K::HipRuntimeApi])
            .with_operations(K::HipRuntimeApi, [hip("hipLaunchKernel")]),
        recorder("malloc", out.path())
            .with_domains([K::HipRuntimeApi])
            .with_operations(K::HipRuntimeApi, [hip("hipMalloc")]),
    ];
    let seen = Seen::default();
    let chain = Chain::with_output(rt, env, specs, collect(&seen)).unwrap();
    call(
        &profiler,
        &[
            "hipMalloc",
            "hipLaunchKernel",
            "hipFree",
            "hipLaunchKernel",
            "hipMemcpy",
        ],
    );
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(total(out.path(), "launch", "api-calls"), 2);
    assert_eq!(total(out.path(), "malloc", "api-calls"), 1);
    let mut ops: Vec<u32> = seen
        .lock()
        .unwrap()
        .iter()
        .flat_map(|b| b.api_calls.operation.clone())
        .collect();
    ops.sort_unstable();
    let mut want = vec![
        hip("hipMalloc"),
        hip("hipLaunchKernel"),
        hip("hipLaunchKernel"),
    ];
    want.sort_unstable();
    assert_eq!(ops, want, "hipFree and hipMemcpy were not traced");
}

#[test]
fn host_delivered_batches_are_filtered_by_operation_too() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let specs = vec![recorder("launch", out.path())
        .with_domains([K::HipRuntimeApi])
        .with_operations(K::HipRuntimeApi, [hip("hipLaunchKernel")])];
    let chain = Chain::new(rt, env_with_kernels(&[]), specs).unwrap();
    let mut b = Batch::default();
    for (i, n) in ["hipLaunchKernel", "hipMalloc", "hipLaunchKernel"]
        .iter()
        .enumerate()
    {
        b.api_calls.push(rocwasm_core::ApiCall {
            kind: K::HipRuntimeApi.raw(),
            operation: hip(n),
            correlation_id: i as u64,
            ..Default::default()
        });
    }
    let back = chain.deliver(info(), b).unwrap();
    assert_eq!(
        back.api_calls.len(),
        3,
        "an analysis does not change the batch"
    );
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(total(out.path(), "launch", "api-calls"), 2);
}
