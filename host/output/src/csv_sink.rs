//! rocprofv3-compatible CSV trace files.
//!
//! One file per record family, created on its first record, with exactly the
//! header rocprofv3 writes ([`TraceFile::header`]). Kinds and operations are
//! written by name; agents by their logical node index (the number rocprofv3
//! prints in `Agent_Id`), or the raw id when the agent is unknown.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use rocwasm_core::{Batch, BufferTracingKind, SymbolTable};

use crate::names::kind_name;
use crate::paths::output_path;
use crate::sink::{Sink, SinkContext};

/// The trace files rocprofv3 writes, by record family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TraceFile {
    KernelTrace,
    HipApi,
    HsaApi,
    MarkerApi,
    MemoryCopy,
    MemoryAllocation,
    ScratchMemory,
}

impl TraceFile {
    pub const ALL: [TraceFile; 7] = [
        TraceFile::KernelTrace,
        TraceFile::HipApi,
        TraceFile::HsaApi,
        TraceFile::MarkerApi,
        TraceFile::MemoryCopy,
        TraceFile::MemoryAllocation,
        TraceFile::ScratchMemory,
    ];

    /// File name without the output-name prefix.
    pub fn file_name(self) -> &'static str {
        match self {
            TraceFile::KernelTrace => "kernel_trace.csv",
            TraceFile::HipApi => "hip_api_trace.csv",
            TraceFile::HsaApi => "hsa_api_trace.csv",
            TraceFile::MarkerApi => "marker_api_trace.csv",
            TraceFile::MemoryCopy => "memory_copy_trace.csv",
            TraceFile::MemoryAllocation => "memory_allocation_trace.csv",
            TraceFile::ScratchMemory => "scratch_memory_trace.csv",
        }
    }

    /// The exact column set rocprofv3 (ROCm 7.0) writes.
    pub fn header(self) -> &'static [&'static str] {
        match self {
            TraceFile::KernelTrace => KERNEL_TRACE_HEADER,
            TraceFile::HipApi | TraceFile::HsaApi | TraceFile::MarkerApi => API_TRACE_HEADER,
            TraceFile::MemoryCopy => MEMORY_COPY_HEADER,
            TraceFile::MemoryAllocation => MEMORY_ALLOCATION_HEADER,
            TraceFile::ScratchMemory => SCRATCH_MEMORY_HEADER,
        }
    }

    /// The file for an API kind (`None` for kinds rocprofv3 has no CSV for).
    pub fn of_api_kind(kind: u32) -> Option<TraceFile> {
        use crate::stats::StatsDomain;
        match StatsDomain::of_api_kind(kind)? {
            StatsDomain::HipApi => Some(TraceFile::HipApi),
            StatsDomain::HsaApi => Some(TraceFile::HsaApi),
            StatsDomain::MarkerApi => Some(TraceFile::MarkerApi),
            _ => None,
        }
    }

    /// Which file a path names, from its file name (with or without a prefix).
    pub fn from_path(path: &Path) -> Option<TraceFile> {
        let name = path.file_name()?.to_str()?;
        TraceFile::ALL
            .into_iter()
            .find(|f| name == f.file_name() || name.ends_with(&format!("_{}", f.file_name())))
    }
}

pub const KERNEL_TRACE_HEADER: &[&str] = &[
    "Kind",
    "Agent_Id",
    "Queue_Id",
    "Stream_Id",
    "Thread_Id",
    "Dispatch_Id",
    "Kernel_Id",
    "Kernel_Name",
    "Correlation_Id",
    "Start_Timestamp",
    "End_Timestamp",
    "LDS_Block_Size",
    "Scratch_Size",
    "VGPR_Count",
    "Accum_VGPR_Count",
    "SGPR_Count",
    "Workgroup_Size_X",
    "Workgroup_Size_Y",
    "Workgroup_Size_Z",
    "Grid_Size_X",
    "Grid_Size_Y",
    "Grid_Size_Z",
];

pub const API_TRACE_HEADER: &[&str] = &[
    "Domain",
    "Function",
    "Process_Id",
    "Thread_Id",
    "Correlation_Id",
    "Start_Timestamp",
    "End_Timestamp",
];

pub const MEMORY_COPY_HEADER: &[&str] = &[
    "Kind",
    "Direction",
    "Stream_Id",
    "Source_Agent_Id",
    "Destination_Agent_Id",
    "Correlation_Id",
    "Start_Timestamp",
    "End_Timestamp",
];

pub const MEMORY_ALLOCATION_HEADER: &[&str] = &[
    "Kind",
    "Operation",
    "Agent_Id",
    "Allocation_Size",
    "Address",
    "Correlation_Id",
    "Start_Timestamp",
    "End_Timestamp",
];

pub const SCRATCH_MEMORY_HEADER: &[&str] = &[
    "Kind",
    "Operation",
    "Agent_Id",
    "Queue_Id",
    "Thread_Id",
    "Alloc_Flags",
    "Start_Timestamp",
    "End_Timestamp",
    "Allocation_Size",
];

type Writer = csv::Writer<BufWriter<File>>;

/// Opens a CSV writer on a new file, with a path in the error.
pub(crate) fn csv_writer(path: &Path) -> Result<Writer> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    // rocprofv3 quotes headers and text fields and leaves numbers bare.
    Ok(csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::NonNumeric)
        .from_writer(BufWriter::with_capacity(1 << 16, f)))
}

/// Kernel facts the kernel trace repeats on every row, cached per kernel id.
#[derive(Clone)]
struct KernelFacts {
    name: Arc<str>,
    vgpr: u32,
    accum_vgpr: u32,
    sgpr: u32,
}

/// Writes the rocprofv3 CSV trace files. See the module docs.
pub struct CsvSink {
    dir: PathBuf,
    name: Option<String>,
    writers: HashMap<TraceFile, (PathBuf, Writer)>,
    kernels: HashMap<u64, KernelFacts>,
    agents: HashMap<u64, u64>,
    ops: HashMap<(u32, u32), Arc<str>>,
}

impl CsvSink {
    /// Files go to `<dir>/[<name>_]<stem>.csv`.
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self {
            dir: dir.into(),
            name,
            writers: HashMap::new(),
            kernels: HashMap::new(),
            agents: HashMap::new(),
            ops: HashMap::new(),
        }
    }

    fn writer(&mut self, file: TraceFile) -> Result<&mut Writer> {
        if !self.writers.contains_key(&file) {
            let path = output_path(&self.dir, self.name.as_deref(), file.file_name());
            let mut w = csv_writer(&path)?;
            w.write_record(file.header())?;
            self.writers.insert(file, (path, w));
        }
        Ok(&mut self.writers.get_mut(&file).expect("inserted above").1)
    }

    fn op_name(&mut self, ctx: &SinkContext<'_>, kind: u32, op: u32) -> Arc<str> {
        self.ops
            .entry((kind, op))
            .or_insert_with(|| ctx.names.name(kind, op))
            .clone()
    }

    fn kernel(&mut self, symbols: &SymbolTable, id: u64) -> KernelFacts {
        if let Some(k) = self.kernels.get(&id) {
            return k.clone();
        }
        match symbols.kernel(id) {
            Some(s) => {
                let facts = KernelFacts {
                    name: Arc::from(if s.demangled_name.is_empty() {
                        s.name
                    } else {
                        s.demangled_name
                    }),
                    vgpr: s.arch_vgpr_count,
                    accum_vgpr: s.accum_vgpr_count,
                    sgpr: s.sgpr_count,
                };
                // Cache hits only: a symbol registered later must still be found.
                self.kernels.insert(id, facts.clone());
                facts
            }
            None => KernelFacts {
                name: Arc::from(format!("kernel_{id}")),
                vgpr: 0,
                accum_vgpr: 0,
                sgpr: 0,
            },
        }
    }
}

/// The number rocprofv3 prints for an agent: its logical node index.
fn agent_label(cache: &mut HashMap<u64, u64>, symbols: &SymbolTable, id: u64) -> u64 {
    if let Some(&n) = cache.get(&id) {
        return n;
    }
    match symbols.agent(id) {
        Some(a) => {
            cache.insert(id, u64::from(a.node_id));
            u64::from(a.node_id)
        }
        None => id,
    }
}

impl Sink for CsvSink {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn begin(&mut self, _ctx: &SinkContext<'_>) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        let symbols = ctx.symbols;
        let pid = ctx.meta.pid.to_string();

        let k = &batch.kernel_dispatches;
        for i in 0..k.len() {
            let facts = self.kernel(symbols, k.kernel_id[i]);
            let agent = agent_label(&mut self.agents, symbols, k.agent_id[i]);
            let w = self.writer(TraceFile::KernelTrace)?;
            w.write_record([
                "KERNEL_DISPATCH",
                &agent.to_string(),
                &k.queue_id[i].to_string(),
                &k.stream_id[i].to_string(),
                &k.thread_id[i].to_string(),
                &k.dispatch_id[i].to_string(),
                &k.kernel_id[i].to_string(),
                &facts.name,
                &k.correlation_id[i].to_string(),
                &k.start[i].to_string(),
                &k.end[i].to_string(),
                &k.group_segment_size[i].to_string(),
                &k.private_segment_size[i].to_string(),
                &facts.vgpr.to_string(),
                &facts.accum_vgpr.to_string(),
                &facts.sgpr.to_string(),
                &k.workgroup_x[i].to_string(),
                &k.workgroup_y[i].to_string(),
                &k.workgroup_z[i].to_string(),
                &k.grid_x[i].to_string(),
                &k.grid_y[i].to_string(),
                &k.grid_z[i].to_string(),
            ])?;
        }

        let a = &batch.api_calls;
        for i in 0..a.len() {
            let Some(file) = TraceFile::of_api_kind(a.kind[i]) else {
                continue;
            };
            let domain = kind_name(a.kind[i]);
            let function = self.op_name(ctx, a.kind[i], a.operation[i]);
            self.writer(file)?.write_record([
                domain.as_str(),
                &function,
                &pid,
                &a.thread_id[i].to_string(),
                &a.correlation_id[i].to_string(),
                &a.start[i].to_string(),
                &a.end[i].to_string(),
            ])?;
        }

        let c = &batch.memory_copies;
        let copy_kind = BufferTracingKind::MemoryCopy.raw();
        for i in 0..c.len() {
            let dir = self.op_name(ctx, copy_kind, c.operation[i]);
            let src = agent_label(&mut self.agents, symbols, c.src_agent_id[i]);
            let dst = agent_label(&mut self.agents, symbols, c.dst_agent_id[i]);
            self.writer(TraceFile::MemoryCopy)?.write_record([
                "MEMORY_COPY",
                &dir,
                &c.stream_id[i].to_string(),
                &src.to_string(),
                &dst.to_string(),
                &c.correlation_id[i].to_string(),
                &c.start[i].to_string(),
                &c.end[i].to_string(),
            ])?;
        }

        let m = &batch.memory_allocations;
        let alloc_kind = BufferTracingKind::MemoryAllocation.raw();
        for i in 0..m.len() {
            let op = self.op_name(ctx, alloc_kind, m.operation[i]);
            let agent = agent_label(&mut self.agents, symbols, m.agent_id[i]);
            self.writer(TraceFile::MemoryAllocation)?.write_record([
                "MEMORY_ALLOCATION",
                &op,
                &agent.to_string(),
                &m.allocation_size[i].to_string(),
                &format!("{:#x}", m.address[i]),
                &m.correlation_id[i].to_string(),
                &m.start[i].to_string(),
                &m.end[i].to_string(),
            ])?;
        }

        let s = &batch.scratch_memory;
        let scratch_kind = BufferTracingKind::ScratchMemory.raw();
        for i in 0..s.len() {
            let op = self.op_name(ctx, scratch_kind, s.operation[i]);
            let agent = agent_label(&mut self.agents, symbols, s.agent_id[i]);
            self.writer(TraceFile::ScratchMemory)?.write_record([
                "SCRATCH_MEMORY",
                &op,
                &agent.to_string(),
                &s.queue_id[i].to_string(),
                &s.thread_id[i].to_string(),
                &s.flags[i].to_string(),
                &s.start[i].to_string(),
                &s.end[i].to_string(),
                &s.allocation_size[i].to_string(),
            ])?;
        }
        Ok(())
    }

    fn finish(&mut self, _ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        let mut files: Vec<_> = self.writers.drain().collect();
        files.sort_by_key(|(f, _)| *f);
        for (_, (path, mut w)) in files {
            w.flush()
                .with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
        Ok(written)
    }
}
