//! A deterministic, realistic-looking run: agents, kernel symbols and batches
//! of HIP/HSA/marker calls, kernel dispatches, copies, allocations and
//! scratch events, all from a seed.
//!
//! For tests, benchmarks and fixtures that need "a run" without a GPU or the
//! simulated runtime. Timestamps are consistent: nested HSA calls sit inside
//! their HIP call, a kernel starts after its launch call began, and every
//! async record carries its launch call's correlation id.

use rocwasm_core::{
    AgentInfo, AgentType, ApiCall, Batch, BufferTracingKind, CodeObject, CodeObjectStorage,
    CounterSample, KernelDispatch, KernelSymbol, MemoryAllocation, MemoryCopy, ScratchMemory,
    SymbolTable,
};

use crate::names::OperationNames;
use crate::sink::{RunMetadata, SinkContext};

/// A generated run.
pub struct SampleRun {
    /// The process: pid `4242 + seed % 1000`, host `node<seed % 7>`,
    /// `start_ns`/`end_ns` bracketing every record.
    pub meta: RunMetadata,
    /// What [`sample_symbols`] returns: the agents and kernels the records
    /// refer to.
    pub symbols: SymbolTable,
    /// The records, cut by [`Batch::split`](rocwasm_core::Batch::split) into batches of at most `batch_rows`
    /// records per family.
    pub batches: Vec<Batch>,
}

impl SampleRun {
    /// Adds the counter samples a `--pmc SQ_WAVES GPU_UTIL` run would have:
    /// for every fourth dispatch of each batch, two rows (SQ_WAVES from its
    /// geometry, GPU_UTIL 87.5) in that batch.
    pub fn with_counter_samples(mut self) -> SampleRun {
        for b in &mut self.batches {
            let dispatches: Vec<KernelDispatch> = b.kernel_dispatches.rows().collect();
            for k in dispatches.iter().filter(|k| k.dispatch_id % 4 == 1) {
                let waves = f64::from(k.grid_x.div_ceil(64) * k.grid_y);
                for (name, value) in [("SQ_WAVES", waves), ("GPU_UTIL", 87.5)] {
                    let id = self.symbols.intern_counter(name);
                    b.counter_samples
                        .push(CounterSample::of_dispatch(k, id, value));
                }
            }
        }
        self
    }

    /// The sink context its batches are written with.
    pub fn context<'a>(&'a self, names: &'a OperationNames) -> SinkContext<'a> {
        SinkContext {
            meta: &self.meta,
            symbols: &self.symbols,
            names,
        }
    }
}

/// SplitMix64: tiny, good enough, and the same everywhere.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// The sequence for `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next number of the sequence.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..hi` (`hi > lo`).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo)
    }
}

const KERNELS: &[(&str, &str)] = &[
    (
        "_Z9vectorAddPKfS0_Pfi",
        "vectorAdd(float const*, float const*, float*, int)",
    ),
    (
        "_Z6matmulPKfS0_Pfiii",
        "matmul(float const*, float const*, float*, int, int, int)",
    ),
    (
        "_Z9transposePfPKfii",
        "transpose(float*, float const*, int, int)",
    ),
    (
        "_Z6reducePKfPfj",
        "reduce(float const*, float*, unsigned int)",
    ),
    (
        "_Z7stencilPKfPfii",
        "stencil(float const*, float*, int, int)",
    ),
    (
        "__omp_offloading_fd00_1234_main_l42",
        "__omp_offloading_fd00_1234_main_l42",
    ),
];

/// Agent id (handle) of the sample runs' CPU, logical node 0.
pub(crate) const CPU_AGENT: u64 = 0x1000;
/// Agent ids of the sample runs' two GPUs, logical nodes 1 and 2.
pub(crate) const GPU_AGENTS: [u64; 2] = [0x2000, 0x2001];

/// Agents and kernel symbols of every sample run: one CPU and two GPUs, each
/// GPU with its own code object and its own ids for the same kernels.
pub fn sample_symbols() -> SymbolTable {
    let symbols = SymbolTable::new();
    symbols.insert_agent(AgentInfo {
        id: CPU_AGENT,
        node_id: 0,
        agent_type: AgentType::Cpu,
        name: "AMD EPYC 7763 64-Core Processor".into(),
        product_name: "AMD EPYC 7763 64-Core Processor".into(),
        properties: Default::default(),
    });
    for (g, &agent) in GPU_AGENTS.iter().enumerate() {
        symbols.insert_agent(AgentInfo {
            id: agent,
            node_id: g as u32 + 1,
            agent_type: AgentType::Gpu,
            name: "gfx90a".into(),
            product_name: "AMD Instinct MI210".into(),
            properties: Default::default(),
        });
        let co = g as u64 + 1;
        symbols.insert_code_object(CodeObject {
            id: co,
            agent_id: agent,
            uri: format!("file:///opt/app/bin/app#offset=8192&size={}", 40960 + g),
            load_base: 0x7f00_0000_0000 + (g as u64) * 0x10_0000,
            load_size: 40960,
            load_delta: 0x7f00_0000_0000 + (g as i64) * 0x10_0000,
            storage: CodeObjectStorage::Memory {
                base: 0x5555_0000_0000,
                size: 40960,
            },
        });
        for (i, (mangled, demangled)) in KERNELS.iter().enumerate() {
            let id = g as u64 * KERNELS.len() as u64 + i as u64 + 1;
            symbols.insert_kernel(KernelSymbol {
                id,
                code_object_id: co,
                name: (*mangled).into(),
                demangled_name: (*demangled).into(),
                kernel_object: 0x7f00_0000_1000 + id * 0x100,
                kernarg_segment_size: 32 + 8 * i as u32,
                kernarg_segment_alignment: 8,
                group_segment_size: 1024 * i as u32,
                private_segment_size: 16 * (i as u32 % 3),
                sgpr_count: 16 + 8 * i as u32,
                arch_vgpr_count: 32 + 4 * i as u32,
                accum_vgpr_count: if i % 2 == 0 { 0 } else { 8 },
                kernel_code_entry_byte_offset: 0x1000,
                kernel_address: 0x7f00_0000_1000 + id * 0x100,
            });
        }
    }
    symbols
}

/// A run of about `launches` kernel launches (plus copies, allocations,
/// markers and scratch events around them), split into batches of at most
/// `batch_rows` records of each family.
pub fn sample_run(
    seed: u64,
    launches: usize,
    batch_rows: usize,
    names: &OperationNames,
) -> SampleRun {
    let mut rng = Rng::new(seed);
    let symbols = sample_symbols();
    let hip = BufferTracingKind::HipRuntimeApi.raw();
    let hsa = BufferTracingKind::HsaCoreApi.raw();
    let amd = BufferTracingKind::HsaAmdExtApi.raw();
    let marker = BufferTracingKind::MarkerCoreApi.raw();
    let op = |kind: u32, name: &str| names.resolve_or_register(kind, name);
    let launch = op(hip, "hipLaunchKernel");
    let memcpy = op(hip, "hipMemcpy");
    let malloc = op(hip, "hipMalloc");
    let free = op(hip, "hipFree");
    let sync = op(hip, "hipDeviceSynchronize");
    let signal_store = op(hsa, "hsa_signal_store_screlease");
    let signal_wait = op(hsa, "hsa_signal_wait_scacquire");
    let async_copy = op(amd, "hsa_amd_memory_async_copy");
    let push = op(marker, "roctxRangePushA");
    let pop = op(marker, "roctxRangePop");

    let pid = 4242 + (seed % 1000) as u32;
    let threads = [pid as u64, pid as u64 + 1, pid as u64 + 2];
    let t0 = 1_000_000_000 + seed * 1000;
    let mut clock = t0;
    let mut corr = 0u64;
    let mut all = Batch::default();
    let mut next_corr = || {
        corr += 1;
        corr
    };
    let api = |kind, operation, correlation_id, ancestor, thread_id, start, end| ApiCall {
        kind,
        operation,
        correlation_id,
        external_correlation_id: 0,
        ancestor,
        thread_id,
        start,
        end,
    };

    for n in 0..launches {
        let tid = threads[rng.range(0, threads.len() as u64) as usize];
        let gpu = rng.range(0, 2) as usize;
        let agent = GPU_AGENTS[gpu];
        let queue = 0x9000 + gpu as u64 * 16 + rng.range(0, 2);
        let stream = 1 + rng.range(0, 3);

        if n % 16 == 0 {
            let c = next_corr();
            all.api_calls
                .push(api(marker, push, c, 0, tid, clock, clock + 300));
        }
        if n % 8 == 0 {
            // Allocate, copy in.
            let c = next_corr();
            let start = clock;
            let size = 1 << rng.range(12, 24);
            all.api_calls
                .push(api(hip, malloc, c, 0, tid, start, start + 2_000));
            all.memory_allocations.push(MemoryAllocation {
                operation: 1,
                correlation_id: c,
                external_correlation_id: 0,
                thread_id: tid,
                start: start + 100,
                end: start + 1_800,
                agent_id: agent,
                address: 0x7ff0_0000_0000 + n as u64 * 0x100_0000,
                allocation_size: size,
            });
            clock += 2_500;
            let c = next_corr();
            let start = clock;
            let dur = rng.range(3_000, 40_000);
            all.api_calls
                .push(api(hip, memcpy, c, 0, tid, start, start + dur + 2_000));
            let c2 = next_corr();
            all.api_calls
                .push(api(amd, async_copy, c2, c, tid, start + 200, start + 900));
            all.memory_copies.push(MemoryCopy {
                operation: 2,
                correlation_id: c,
                external_correlation_id: 0,
                thread_id: tid,
                start: start + 1_000,
                end: start + 1_000 + dur,
                dst_agent_id: agent,
                src_agent_id: CPU_AGENT,
                stream_id: stream,
                bytes: size,
                dst_address: 0x7ff0_0000_0000 + n as u64 * 0x100_0000,
                src_address: 0x5600_0000_0000 + n as u64 * 0x100_0000,
            });
            clock += dur + 3_000;
        }

        // The launch, its nested HSA doorbell, and the kernel.
        let kernel_idx = (rng.next_u64() % KERNELS.len() as u64) as usize;
        // Skewed durations: some kernels are much heavier than others.
        let kernel_dur =
            rng.range(1_000, 5_000) * (kernel_idx as u64 + 1) * (kernel_idx as u64 + 1);
        let c = next_corr();
        let start = clock;
        all.api_calls
            .push(api(hip, launch, c, 0, tid, start, start + 4_000));
        let inner = next_corr();
        all.api_calls.push(api(
            hsa,
            signal_store,
            inner,
            c,
            tid,
            start + 2_000,
            start + 2_300,
        ));
        all.kernel_dispatches.push(KernelDispatch {
            correlation_id: c,
            external_correlation_id: if n % 5 == 0 { 77 } else { 0 },
            thread_id: tid,
            start: start + 5_000,
            end: start + 5_000 + kernel_dur,
            agent_id: agent,
            queue_id: queue,
            stream_id: stream,
            kernel_id: gpu as u64 * KERNELS.len() as u64 + kernel_idx as u64 + 1,
            dispatch_id: n as u64 + 1,
            private_segment_size: 16 * (kernel_idx as u32 % 3),
            group_segment_size: 1024 * kernel_idx as u32,
            workgroup_x: 256,
            workgroup_y: 1,
            workgroup_z: 1,
            grid_x: 256 * (1 + rng.range(0, 4096) as u32),
            grid_y: 1 + (kernel_idx as u32 % 2),
            grid_z: 1,
        });
        clock += 5_000 + kernel_dur + rng.range(100, 2_000);

        if n % 8 == 7 {
            let c = next_corr();
            let start = clock;
            all.api_calls
                .push(api(hip, sync, c, 0, tid, start, start + 10_000));
            let inner = next_corr();
            all.api_calls.push(api(
                hsa,
                signal_wait,
                inner,
                c,
                tid,
                start + 100,
                start + 9_000,
            ));
            clock += 11_000;
            let c = next_corr();
            all.api_calls
                .push(api(hip, free, c, 0, tid, clock, clock + 1_500));
            all.memory_allocations.push(MemoryAllocation {
                operation: 3,
                correlation_id: c,
                external_correlation_id: 0,
                thread_id: tid,
                start: clock + 100,
                end: clock + 1_000,
                agent_id: agent,
                address: 0x7ff0_0000_0000 + (n as u64 - 7) * 0x100_0000,
                allocation_size: 0,
            });
            clock += 2_000;
        }
        if n % 16 == 15 {
            let c = next_corr();
            all.api_calls
                .push(api(marker, pop, c, 0, tid, clock, clock + 200));
            clock += 300;
        }
        if n % 32 == 3 {
            let c = next_corr();
            all.scratch_memory.push(ScratchMemory {
                operation: 1,
                flags: 1,
                correlation_id: c,
                external_correlation_id: 0,
                thread_id: tid,
                start: clock,
                end: clock + 20_000,
                agent_id: agent,
                queue_id: queue,
                allocation_size: 1 << 20,
            });
            clock += 21_000;
        }
    }

    let meta = RunMetadata {
        pid,
        ppid: 1,
        hostname: format!("node{:02}", seed % 7),
        command: vec![
            "/opt/app/bin/app".into(),
            "--size".into(),
            launches.to_string(),
        ],
        start_ns: t0,
        end_ns: clock + 1_000,
        rank: None,
        job: None,
        back_end: None,
        environment: Default::default(),
    };
    SampleRun {
        meta,
        symbols,
        batches: all.split(batch_rows),
    }
}
