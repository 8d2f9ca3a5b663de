//! One shared delivery per chain (issue 6, item 1): one context and one
//! buffer trace the union of the stages' domains; each batch flows through
//! the stages in order, each seeing only its kinds, then into the chain
//! output; a plugin's own buffers deliver to it alone.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::*;
use rocwasm_core::{
    operation_by_name, Batch, BufferTracingKind as K, Domain, KernelDispatch, MemoryCopy,
    MemoryCopyDirection, Profiler,
};
use rocwasm_plugin_host::{Chain, StageSpec};

/// `n` hipLaunchKernel calls, alternating kernels 1 and 2, each dispatch
/// completing at once.
fn launch(profiler: &Profiler, n: u64) {
    let op = operation_by_name(K::HipRuntimeApi, "hipLaunchKernel").unwrap();
    for i in 0..n {
        let dispatch = profiler.trace_api(
            Domain::HipRuntimeApi,
            op,
            Vec::new,
            || profiler.begin_async(Domain::KernelDispatch, 1),
            |_| "hipSuccess".into(),
        );
        profiler.complete_kernel_dispatch(
            dispatch.expect("dispatches are traced"),
            KernelDispatch {
                kernel_id: 1 + i % 2,
                start: 100 * i,
                end: 100 * i + 40,
                ..Default::default()
            },
        );
    }
}

/// One completed async copy per direction in `dirs`.
fn copy(profiler: &Profiler, dirs: &[MemoryCopyDirection]) {
    for (i, d) in dirs.iter().enumerate() {
        let op = profiler
            .begin_async(Domain::MemoryCopy, *d as u32)
            .expect("copies are traced");
        profiler.complete_memory_copy(
            op,
            MemoryCopy {
                operation: *d as u32,
                bytes: 1 << i,
                start: 10,
                end: 20,
                ..Default::default()
            },
        );
    }
}

fn total(rec: &serde_json::Value, table: &str) -> u64 {
    rec["totals"][table].as_u64().unwrap_or(0)
}

/// The (context, buffer) pairs a recorder's batches came from.
fn sources(rec: &serde_json::Value) -> BTreeSet<(u64, u64)> {
    rec["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["context"].as_u64().unwrap(),
                b["buffer"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn recorder(name: &str, out: &Path) -> StageSpec {
    StageSpec::new(name, plugin("recorder"))
        .with_config("file", format!("{name}.json"))
        .with_output_dir(out)
}

#[test]
fn one_buffer_feeds_each_stage_its_kinds_in_order_then_the_output() {
    use MemoryCopyDirection::*;
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let env = env_with_kernels(&[(1, "gemm_big"), (2, "copy_small")]);
    let profiler = env.profiler.clone();
    let specs = vec![
        // A transform first: what it drops, nobody after it sees.
        StageSpec::new("filter", plugin("kernel-filter"))
            .with_kinds(rocwasm_plugin_host::KindFilter::only([K::KernelDispatch]))
            .with_config("pattern", "gemm"),
        recorder("dispatches", out.path()).with_domains([K::KernelDispatch]),
        recorder("api", out.path()).with_domains([K::HipRuntimeApi]),
        // Its own context and buffer, as an SDK tool: copies reach it alone.
        recorder("own", out.path())
            .with_config("trace", "MEMORY_COPY")
            .with_config("buffer-size", "1048576")
            .with_config("watermark", "1048576"),
    ];
    let seen: Arc<Mutex<Vec<(rocwasm_core::DeliveryInfo, Batch)>>> = Arc::default();
    let sink = seen.clone();
    let chain = Chain::with_output(
        rt,
        env,
        specs,
        Box::new(move |info, batch| sink.lock().unwrap().push((*info, batch.clone()))),
    )
    .unwrap();
    let ctx = chain.context().unwrap();
    let buffer = chain.buffer().expect("stages name domains");

    launch(&profiler, 6);
    copy(&profiler, &[HostToDevice, DeviceToHost, HostToDevice]);
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);

    let dispatches = read_json(&out.path().join("dispatches.json"));
    let api = read_json(&out.path().join("api.json"));
    let own = read_json(&out.path().join("own.json"));
    let chain_source = BTreeSet::from([(ctx.0, buffer.0)]);

    // Each stage: only its kinds, all from the one chain buffer.
    assert_eq!(total(&dispatches, "kernel-dispatches"), 3, "{dispatches}");
    assert_eq!(total(&dispatches, "api-calls"), 0, "{dispatches}");
    assert_eq!(sources(&dispatches), chain_source);
    assert_eq!(dispatches["tool_info"]["domains"][0], "KERNEL_DISPATCH");
    assert_eq!(total(&api, "api-calls"), 6, "{api}");
    assert_eq!(total(&api, "kernel-dispatches"), 0, "{api}");
    assert_eq!(sources(&api), chain_source);

    // The plugin's own buffer: its copies, and nothing of the chain's.
    assert_eq!(total(&own, "memory-copies"), 3, "{own}");
    assert_eq!(
        total(&own, "kernel-dispatches") + total(&own, "api-calls"),
        0
    );
    assert!(sources(&own).iter().all(|(c, _)| *c != ctx.0), "{own}");

    // The output: every batch of the chain buffer after the last stage.
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    assert!(seen
        .iter()
        .all(|(i, _)| i.context == ctx && i.buffer == buffer));
    let sum = |f: fn(&Batch) -> usize| seen.iter().map(|(_, b)| f(b)).sum::<usize>();
    assert_eq!(sum(|b| b.api_calls.len()), 6);
    assert_eq!(
        sum(|b| b.memory_copies.len()),
        0,
        "copies are not the chain's"
    );
    let kernels: BTreeSet<u64> = seen
        .iter()
        .flat_map(|(_, b)| b.kernel_dispatches.kernel_id.clone())
        .collect();
    assert_eq!(sum(|b| b.kernel_dispatches.len()), 3);
    assert_eq!(
        kernels,
        BTreeSet::from([1]),
        "the filter ran before the output"
    );
}

#[test]
fn stages_without_domains_get_nothing_from_the_chain_buffer() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let env = env_with_kernels(&[(1, "k")]);
    let profiler = env.profiler.clone();
    let specs = vec![
        recorder("traced", out.path()).with_domains([K::KernelDispatch]),
        recorder("idle", out.path()),
    ];
    let chain = Chain::new(rt, env, specs).unwrap();
    launch(&profiler, 4);
    // Batches handed in by the host still reach both.
    chain.deliver(info(), dispatches(2, 100)).unwrap();
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let traced = read_json(&out.path().join("traced.json"));
    let idle = read_json(&out.path().join("idle.json"));
    assert_eq!(total(&traced, "kernel-dispatches"), 4 + 2, "{traced}");
    assert_eq!(total(&idle, "kernel-dispatches"), 2, "{idle}");
}
