//! Delivery throughput into the real `kernel-stats` component.
//!
//! For batches of 1, 256, 4096 and 65536 kernel-dispatch records: the time
//! of one `Chain::deliver` call (the batch moves into WIT columns, is lowered
//! into the guest — one copy per column — and the guest aggregates it) and
//! the records per second that makes. The batch comes back from `deliver`
//! and is reused, so no cloning is timed.
//!
//! Run: `cargo xtask build-plugins && cargo bench -p rocwasm-runtime --bench deliver`

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rocwasm_core::{
    Batch, BufferId, ContextId, DeliveryInfo, KernelDispatch, KernelSymbol, Profiler,
};
use rocwasm_runtime::{Chain, HostEnv, Runtime, RuntimeConfig, StageSpec};

fn main() {
    let wasm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/plugins/kernel-stats.wasm");
    if !wasm.is_file() {
        eprintln!(
            "{} is missing: run `cargo xtask build-plugins` first",
            wasm.display()
        );
        std::process::exit(1);
    }
    let rt = Arc::new(
        Runtime::new(RuntimeConfig {
            cache_dir: None,
            ..Default::default()
        })
        .expect("runtime"),
    );
    let profiler = Arc::new(Profiler::new());
    for id in 0..8u64 {
        profiler.symbols().insert_kernel(KernelSymbol {
            id,
            code_object_id: 1,
            name: format!("kernel_{id}"),
            demangled_name: format!("kernel_{id}"),
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
    let spec = StageSpec::new("kernel-stats", &wasm).with_config("file", "");
    let chain = Chain::new(rt, HostEnv::new(profiler), vec![spec]).expect("chain");
    let info = DeliveryInfo {
        context: ContextId(1),
        buffer: BufferId(1),
        drop_count: 0,
    };

    println!(
        "{:>8} | {:>10} | {:>14} | {:>10}",
        "records", "calls", "ns per call", "M rec/s"
    );
    println!("{:-<8}-+-{:-<10}-+-{:-<14}-+-{:-<10}", "", "", "", "");
    for n in [1usize, 256, 4096, 65536] {
        let mut batch = Batch::default();
        for i in 0..n as u64 {
            batch.kernel_dispatches.push(KernelDispatch {
                kernel_id: i % 8,
                start: i * 100,
                end: i * 100 + 50 + i % 7,
                correlation_id: i,
                ..Default::default()
            });
        }
        // Warm up, then time at least ~1 s (and 50 calls).
        for _ in 0..20 {
            batch = chain.deliver(info, batch).expect("deliver");
        }
        let mut calls = 0u64;
        let start = Instant::now();
        while calls < 50 || start.elapsed() < Duration::from_secs(1) {
            batch = chain.deliver(info, batch).expect("deliver");
            calls += 1;
        }
        let ns = start.elapsed().as_nanos() as f64 / calls as f64;
        let rate = n as f64 / ns * 1e3; // records per ns × 1e3 = M records/s
        println!("{n:>8} | {calls:>10} | {ns:>14.0} | {rate:>10.1}");
    }
    let outcome = chain.finish().expect("finish");
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
}
