//! Delivery throughput into the real `kernel-stats` component.
//!
//! For batches of 1, 256, 4096 and 65536 kernel-dispatch records: the time
//! of one `Chain::deliver` call and the records per second that makes. One
//! call moves the core batch into WIT columns (pointer moves), lowers the
//! columns the plugin selected into its memory (one `memcpy` each; the other
//! columns go as empty lists), runs the guest's aggregation, and moves the
//! batch back out. The batch is reused, so no cloning is timed.
//!
//! Rows per size: `kernel-stats` as it was built on `rocwasm:plugin@0.2.0`
//! (the checked-in fixture `plugins/testing/fixtures/kernel-stats-wit-0-2-0.wasm`;
//! it selects `kernel_id`, `start`, `end`: 24 of the 128 bytes of a
//! dispatch, as 3 of 64 lists), `kernel-stats` as shipped (0.3.1, the Rust
//! SDK: the three columns in one packed buffer, read in place), the same
//! aggregation on raw 0.3.0 bindings (`kernel-stats-0-3-0`: what the SDK
//! adds) and, for comparison, the 0.2.0 kernel-stats with `project = false`
//! (every column copied).
//!
//! ```text
//! cargo xtask build-plugins
//! cargo bench -p rocwasm-plugin-host --bench deliver                 # the table
//! cargo bench -p rocwasm-plugin-host --bench deliver -- --calls 1000 --records 4096
//! ```
//!
//! Timing: after a warm-up, 7 rounds of ≥ 0.15 s (and ≥ 10 calls) each; the
//! table shows the median round and the best one (the machine is shared, so
//! the best round is the one least disturbed by other processes).
//!
//! `--calls N` makes one round of exactly N calls per size instead (for
//! instruction counting under valgrind/callgrind: the difference of two runs
//! with different N is the cost of the extra calls);
//! `--records R` (repeatable) picks the sizes; `--only-projected` skips the
//! `project = false` rows; `--run K` sends each kernel id K times in a row
//! (default 1: the 8 kernel ids interleave, the harder case for the
//! aggregation); `--dump-cwasm FILE` writes the plugin's machine code as
//! this engine compiles it (an ELF file: `objdump -d` shows the guest's hot
//! loop) and exits.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rocwasm_core::{
    Batch, BufferId, ContextId, DeliveryInfo, KernelDispatch, KernelSymbol, Profiler,
};
use rocwasm_plugin_host::{Chain, EngineConfig, HostEnv, PluginEngine, StageSpec};

const COMMAND: &str = "cargo bench -p rocwasm-plugin-host --bench deliver";
const ROUNDS: usize = 7;

struct Options {
    sizes: Vec<usize>,
    calls: Option<u64>,
    compare: bool,
    dump: Option<std::path::PathBuf>,
    /// Rows per run of one kernel id (1: the 8 kernels interleave).
    run: u64,
}

fn options() -> Options {
    let mut o = Options {
        sizes: Vec::new(),
        calls: None,
        compare: true,
        dump: None,
        run: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage(&format!("{name} needs a number")))
        };
        match a.as_str() {
            "--calls" => o.calls = Some(value("--calls")),
            "--records" => o.sizes.push(value("--records") as usize),
            "--only-projected" => o.compare = false,
            "--run" => o.run = value("--run").max(1),
            "--dump-cwasm" => {
                o.dump = Some(
                    args.next()
                        .unwrap_or_else(|| usage("--dump-cwasm needs a file"))
                        .into(),
                )
            }
            // `cargo bench` passes `--bench` to every harness.
            "--bench" => {}
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    if o.sizes.is_empty() {
        o.sizes = vec![1, 256, 4096, 65536];
    }
    o
}

fn usage(msg: &str) -> ! {
    eprintln!("{msg}\nusage: {COMMAND} -- [--records R]... [--calls N] [--only-projected] [--run K] [--dump-cwasm FILE]");
    std::process::exit(2)
}

fn main() {
    let opts = options();
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../target/plugins");
    let (wasm, sdk, raw) = (
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../plugins/testing/fixtures/kernel-stats-wit-0-2-0.wasm"),
        plugins.join("kernel-stats.wasm"),
        plugins.join("kernel-stats-0-3-0.wasm"),
    );
    for file in [&wasm, &sdk, &raw] {
        if !file.is_file() {
            eprintln!(
                "{} is missing: run `cargo xtask build-plugins` first",
                file.display()
            );
            std::process::exit(1);
        }
    }
    let rt = Arc::new(
        PluginEngine::new(EngineConfig {
            cache_dir: None,
            ..Default::default()
        })
        .expect("runtime"),
    );
    if let Some(out) = &opts.dump {
        let bytes = std::fs::read(&sdk).expect("reading the plugin");
        let code = rt.engine().precompile_component(&bytes).expect("compiling");
        std::fs::write(out, code).expect("writing the compiled plugin");
        println!("wrote {}", out.display());
        return;
    }
    // One engine per chain: each kernel-stats configures its own services
    // in `init`, and an engine locks its configuration when its chain is up.
    let chain = |wasm: &Path, project: bool| {
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
        let spec = StageSpec::new("kernel-stats", wasm)
            .with_config("file", "")
            .with_config("project", if project { "true" } else { "false" });
        Chain::new(rt.clone(), HostEnv::new(profiler), vec![spec]).expect("chain")
    };
    let mut chains = vec![
        ("0.2.0: kernel_id,start,end", chain(&wasm, true)),
        ("0.3.1: packed, 3 columns", chain(&sdk, true)),
        ("0.3.0: same, raw bindings", chain(&raw, true)),
    ];
    if opts.compare {
        chains.push(("0.2.0: all 18", chain(&wasm, false)));
    }

    println!("{COMMAND}");
    println!(
        "kernel-stats, one stage, 8 kernels {}; {}",
        match opts.run {
            1 => "interleaved".to_string(),
            k => format!("in runs of {k}"),
        },
        match opts.calls {
            Some(n) => format!("one round of {n} calls per row"),
            None => format!("median and best of {ROUNDS} rounds of ≥ 0.15 s per row"),
        }
    );
    println!();
    println!(
        "| {:>8} | {:<26} | {:>8} | {:>12} | {:>12} | {:>10} | {:>9} | {:>9} |",
        "records",
        "columns sent",
        "calls",
        "ns/call med",
        "ns/call best",
        "ns/record",
        "M rec/s",
        "best"
    );
    println!(
        "|{:-<10}|{:-<28}|{:-<10}|{:-<14}|{:-<14}|{:-<12}|{:-<11}|{:-<11}|",
        "", "", "", "", "", "", "", ""
    );
    for &n in &opts.sizes {
        let mut batch = Batch::default();
        for i in 0..n as u64 {
            // Every column filled, so the unprojected rows copy real data.
            batch.kernel_dispatches.push(KernelDispatch {
                kernel_id: (i / opts.run) % 8,
                start: i * 100,
                end: i * 100 + 50 + i % 7,
                correlation_id: i,
                external_correlation_id: i,
                thread_id: 7,
                agent_id: 1,
                queue_id: 1,
                stream_id: 0,
                dispatch_id: i,
                workgroup_x: 256,
                grid_x: 65536,
                ..Default::default()
            });
        }
        let info = DeliveryInfo {
            context: ContextId(1),
            buffer: BufferId(1),
            drop_count: 0,
            process: 0,
        };
        for (label, chain) in &chains {
            // Warm up (memory grown, code paged in), then measure.
            for _ in 0..20 {
                batch = chain.deliver(info, batch).expect("deliver");
            }
            let rounds = if opts.calls.is_some() { 1 } else { ROUNDS };
            let mut per_call = Vec::new();
            let mut total_calls = 0u64;
            for _ in 0..rounds {
                let mut calls = 0u64;
                let start = Instant::now();
                loop {
                    let done = match opts.calls {
                        Some(n) => calls >= n,
                        None => calls >= 10 && start.elapsed() >= Duration::from_millis(150),
                    };
                    if done {
                        break;
                    }
                    batch = chain.deliver(info, batch).expect("deliver");
                    calls += 1;
                }
                per_call.push(start.elapsed().as_nanos() as f64 / calls.max(1) as f64);
                total_calls += calls;
            }
            per_call.sort_by(f64::total_cmp);
            let (median, best) = (per_call[per_call.len() / 2], per_call[0]);
            // records per ns × 1e3 = M records/s
            let (rate, best_rate) = (n as f64 / median * 1e3, n as f64 / best * 1e3);
            println!(
                "| {n:>8} | {label:<26} | {total_calls:>8} | {median:>12.0} | {best:>12.0} | {:>10.2} | {rate:>9.1} | {best_rate:>9.1} |",
                median / n as f64
            );
        }
    }
    for (_, chain) in chains {
        let outcome = chain.finish().expect("finish");
        assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    }
}
