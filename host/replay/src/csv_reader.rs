//! rocprofv3 CSV trace files, read by column name.
//!
//! The files, their columns and every spelling of a column a reader accepts
//! are `rocwasm_output::csv`'s schema (its module docs say what is tolerated);
//! this reader only maps the columns it finds onto records.
//!
//! A directory is read file by file in [`TraceFile::ALL`] order (kernels
//! first, so that kernel names exist before anything else refers to them); a
//! single file by itself. Which record family a file holds comes from its
//! name (`[<prefix>_]kernel_trace.csv`, …) or, failing that, from its header.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use rocwasm_core::{
    AgentInfo, AgentType, ApiCall, Batch, BufferTracingKind, KernelDispatch, KernelSymbol,
    MemoryAllocation, MemoryCopy, ScratchMemory,
};
use rocwasm_output::csv::{Column, TraceFile};

use crate::error::{ReplayError, Result};
use crate::reader::{BatchReader, State};

pub(crate) struct CsvReader {
    files: Vec<(PathBuf, TraceFile)>,
    current: Option<FileReader>,
    /// Kernel ids assigned per name when a file has no `Kernel_Id` column.
    kernel_ids: HashMap<String, u64>,
}

struct FileReader {
    path: PathBuf,
    kind: TraceFile,
    reader: csv::Reader<File>,
    cols: HashMap<String, usize>,
    record: csv::StringRecord,
}

impl CsvReader {
    pub(crate) fn open(path: &Path, state: &mut State) -> Result<Self> {
        let mut files = Vec::new();
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| ReplayError::io(path, e))?;
            for entry in entries {
                let p = entry.map_err(|e| ReplayError::io(path, e))?.path();
                if let Some(kind) = TraceFile::from_path(&p) {
                    files.push((p, kind));
                }
            }
            if files.is_empty() {
                return Err(ReplayError::new(
                    path,
                    None,
                    "no rocprofv3 trace files (*_trace.csv) in this directory",
                ));
            }
            files.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        } else {
            let kind = match TraceFile::from_path(path) {
                Some(k) => k,
                None => kind_from_header(path)?,
            };
            files.push((path.to_path_buf(), kind));
        }
        // The process id is on every API row; take it from the first one so
        // sinks know it before the first batch.
        for (p, kind) in &files {
            if matches!(
                kind,
                TraceFile::HipApi | TraceFile::HsaApi | TraceFile::MarkerApi
            ) {
                if let Some(pid) = first_pid(p) {
                    state.meta.pid = pid;
                    break;
                }
            }
        }
        Ok(Self {
            files,
            current: None,
            kernel_ids: HashMap::new(),
        })
    }
}

fn first_pid(path: &Path) -> Option<u32> {
    let mut r = csv::Reader::from_path(path).ok()?;
    let idx = r
        .headers()
        .ok()?
        .iter()
        .position(|h| h == Column::ProcessId.name())?;
    let rec = r.records().next()?.ok()?;
    rec.get(idx)?.trim().parse().ok()
}

fn kind_from_header(path: &Path) -> Result<TraceFile> {
    let mut r = csv::Reader::from_path(path).map_err(|e| csv_error(path, e))?;
    let h: Vec<String> = r
        .headers()
        .map_err(|e| csv_error(path, e))?
        .iter()
        .map(str::to_string)
        .collect();
    TraceFile::from_header(h.iter().map(String::as_str)).ok_or_else(|| {
        ReplayError::new(
            path,
            Some(1),
            "not a rocprofv3 trace file (unrecognised header)",
        )
    })
}

fn csv_error(path: &Path, e: csv::Error) -> ReplayError {
    let line = e.position().map(|p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("expected {expected_len} fields, found {len} (truncated or corrupt file?)")
        }
        csv::ErrorKind::Utf8 { err, .. } => format!("invalid UTF-8 in field {}", err.field() + 1),
        csv::ErrorKind::Io(io) => io.to_string(),
        _ => e.to_string(),
    };
    ReplayError::new(path, line, message)
}

impl FileReader {
    fn open(path: &Path, kind: TraceFile) -> Result<Self> {
        let mut reader = csv::ReaderBuilder::new()
            .from_path(path)
            .map_err(|e| csv_error(path, e))?;
        let cols = reader
            .headers()
            .map_err(|e| csv_error(path, e))?
            .iter()
            .enumerate()
            .map(|(i, h)| (h.trim().to_string(), i))
            .collect();
        let f = Self {
            path: path.to_path_buf(),
            kind,
            reader,
            cols,
            record: csv::StringRecord::new(),
        };
        for &c in kind.required_columns() {
            if f.opt(c).is_none() {
                return Err(ReplayError::new(
                    path,
                    Some(1),
                    format!("missing required column {}", c.spellings().join(" / ")),
                ));
            }
        }
        Ok(f)
    }

    /// Index of the column in this file's header, under any of its spellings
    /// (the current one first).
    fn opt(&self, column: Column) -> Option<usize> {
        column
            .spellings()
            .iter()
            .find_map(|n| self.cols.get(*n).copied())
    }
}

/// One data row with its line, for typed field access with good errors.
struct Row<'a> {
    path: &'a Path,
    line: u64,
    rec: &'a csv::StringRecord,
    /// The header: name → position.
    cols: &'a HashMap<String, usize>,
    /// The schema's columns → position.
    at: &'a Columns,
}

impl Row<'_> {
    /// Where column `c` is, if the file has it.
    fn at(&self, c: Column) -> Option<usize> {
        self.at.at(c)
    }

    /// A text column, `""` when the file does not have it.
    fn text(&self, c: Column) -> &str {
        self.at(c).map_or("", |i| self.str(i))
    }

    fn str(&self, idx: usize) -> &str {
        self.rec.get(idx).unwrap_or("").trim()
    }

    fn num_at(&self, idx: usize) -> Result<u64> {
        let s = self.str(idx);
        let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None if s.is_empty() => Some(0),
            None => s
                .parse::<u64>()
                .ok()
                .or_else(|| s.parse::<i64>().ok().map(|v| v as u64)),
        };
        parsed.ok_or_else(|| {
            let name = self
                .cols
                .iter()
                .find(|(_, &i)| i == idx)
                .map(|(n, _)| n.as_str())
                .unwrap_or("?");
            ReplayError::new(
                self.path,
                Some(self.line),
                format!("column {name}: {s:?} is not a number"),
            )
        })
    }

    /// A numeric column that may be absent (older column sets): 0 then.
    fn num(&self, c: Column) -> Result<u64> {
        self.at(c).map_or(Ok(0), |i| self.num_at(i))
    }

    fn u32(&self, c: Column) -> Result<u32> {
        let v = self.num(c)?;
        u32::try_from(v).map_err(|_| {
            ReplayError::new(
                self.path,
                Some(self.line),
                format!("value {v} does not fit 32 bits"),
            )
        })
    }

    /// Agents print as a node number, sometimes with a word before it
    /// (`GPU 1`, `Agent 4`): take the trailing number.
    fn agent(&self, c: Column) -> Result<u64> {
        let Some(i) = self.at(c) else { return Ok(0) };
        let s = self.str(i);
        let digits = s.trim_start_matches(|c: char| !c.is_ascii_digit());
        if digits.len() != s.len() && !digits.is_empty() {
            return digits.parse().map_err(|_| {
                ReplayError::new(
                    self.path,
                    Some(self.line),
                    format!("agent {s:?} is not an agent number"),
                )
            });
        }
        self.num_at(i)
    }
}

impl BatchReader for CsvReader {
    fn next_batch(&mut self, state: &mut State) -> Result<Option<Batch>> {
        loop {
            if self.current.is_none() {
                if self.files.is_empty() {
                    return Ok(None);
                }
                let (path, kind) = self.files.remove(0);
                self.current = Some(FileReader::open(&path, kind)?);
            }
            let file = self.current.as_mut().expect("set above");
            let batch = read_chunk(file, state, &mut self.kernel_ids)?;
            if batch.is_empty() {
                self.current = None;
                continue;
            }
            return Ok(Some(batch));
        }
    }
}

fn read_chunk(
    f: &mut FileReader,
    state: &mut State,
    kernel_ids: &mut HashMap<String, u64>,
) -> Result<Batch> {
    let mut batch = Batch::default();
    let c = Columns::new(f);
    let mut rows = 0;
    while rows < state.chunk_rows {
        match f.reader.read_record(&mut f.record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(&f.path, e)),
        }
        let line = f.record.position().map_or(0, |p| p.line());
        let row = Row {
            path: &f.path,
            line,
            rec: &f.record,
            cols: &f.cols,
            at: &c,
        };
        read_row(&row, f.kind, state, kernel_ids, &mut batch)?;
        rows += 1;
    }
    Ok(batch)
}

/// Column positions of one file, resolved once per chunk: indexed by
/// `Column as usize`, `None` for a column the file does not have.
struct Columns([Option<usize>; Column::ALL.len()]);

impl Columns {
    fn new(f: &FileReader) -> Self {
        Self(Column::ALL.map(|c| f.opt(c)))
    }

    /// Where `c` is in the row, if the file has it.
    fn at(&self, c: Column) -> Option<usize> {
        self.0[c as usize]
    }
}

/// Maps one row of a `file` onto its record (and the symbols and names it
/// brings).
fn read_row(
    r: &Row<'_>,
    file: TraceFile,
    state: &mut State,
    kernel_ids: &mut HashMap<String, u64>,
    batch: &mut Batch,
) -> Result<()> {
    use Column as C;
    let (start, end) = (r.num(C::StartTimestamp)?, r.num(C::EndTimestamp)?);
    if state.meta.start_ns == 0 || start < state.meta.start_ns {
        state.meta.start_ns = start;
    }
    state.meta.end_ns = state.meta.end_ns.max(end);
    match file {
        TraceFile::KernelTrace => {
            let name = r.text(C::KernelName).to_string();
            let id = match r.at(C::KernelId) {
                Some(i) => r.num_at(i)?,
                None => {
                    let next = kernel_ids.len() as u64 + 1;
                    *kernel_ids.entry(name.clone()).or_insert(next)
                }
            };
            let agent_id = r.agent(C::AgentId)?;
            ensure_agent(state, agent_id);
            let (lds, scratch) = (r.u32(C::LdsBlockSize)?, r.u32(C::ScratchSize)?);
            if state.symbols.kernel(id).is_none() {
                state.symbols.insert_kernel(KernelSymbol {
                    id,
                    code_object_id: 0,
                    name: name.clone(),
                    demangled_name: name,
                    kernel_object: 0,
                    kernarg_segment_size: 0,
                    kernarg_segment_alignment: 0,
                    group_segment_size: lds,
                    private_segment_size: scratch,
                    sgpr_count: r.u32(C::SgprCount)?,
                    arch_vgpr_count: r.u32(C::VgprCount)?,
                    accum_vgpr_count: r.u32(C::AccumVgprCount)?,
                    kernel_code_entry_byte_offset: 0,
                    kernel_address: 0,
                });
            }
            batch.kernel_dispatches.push(KernelDispatch {
                correlation_id: r.num(C::CorrelationId)?,
                external_correlation_id: 0,
                thread_id: r.num(C::ThreadId)?,
                start,
                end,
                agent_id,
                queue_id: r.num(C::QueueId)?,
                stream_id: r.num(C::StreamId)?,
                kernel_id: id,
                dispatch_id: r.num(C::DispatchId)?,
                private_segment_size: scratch,
                group_segment_size: lds,
                workgroup_x: r.u32(C::WorkgroupSizeX)?,
                workgroup_y: r.u32(C::WorkgroupSizeY)?,
                workgroup_z: r.u32(C::WorkgroupSizeZ)?,
                grid_x: r.u32(C::GridSizeX)?,
                grid_y: r.u32(C::GridSizeY)?,
                grid_z: r.u32(C::GridSizeZ)?,
            });
        }
        TraceFile::HipApi | TraceFile::HsaApi | TraceFile::MarkerApi => {
            let kind = api_kind(r.at(C::Domain).map(|i| r.str(i)), file);
            let function = r.text(C::Function);
            let operation = state.names.resolve_or_register(kind.raw(), function);
            if state.meta.pid == 0 {
                state.meta.pid = r.num(C::ProcessId)? as u32;
            }
            batch.api_calls.push(ApiCall {
                kind: kind.raw(),
                operation,
                correlation_id: r.num(C::CorrelationId)?,
                external_correlation_id: 0,
                ancestor: 0,
                thread_id: r.num(C::ThreadId)?,
                start,
                end,
            });
        }
        TraceFile::MemoryCopy => {
            let (src, dst) = (r.agent(C::SourceAgentId)?, r.agent(C::DestinationAgentId)?);
            ensure_agent(state, src);
            ensure_agent(state, dst);
            let operation = op_by_name(state, BufferTracingKind::MemoryCopy, r.text(C::Direction));
            batch.memory_copies.push(MemoryCopy {
                operation,
                correlation_id: r.num(C::CorrelationId)?,
                external_correlation_id: 0,
                thread_id: r.num(C::ThreadId)?,
                start,
                end,
                dst_agent_id: dst,
                src_agent_id: src,
                stream_id: r.num(C::StreamId)?,
                bytes: r.num(C::Bytes)?,
                dst_address: 0,
                src_address: 0,
            });
        }
        TraceFile::MemoryAllocation => {
            let agent_id = r.agent(C::AgentId)?;
            ensure_agent(state, agent_id);
            let operation = op_by_name(
                state,
                BufferTracingKind::MemoryAllocation,
                r.text(C::Operation),
            );
            batch.memory_allocations.push(MemoryAllocation {
                operation,
                correlation_id: r.num(C::CorrelationId)?,
                external_correlation_id: 0,
                thread_id: r.num(C::ThreadId)?,
                start,
                end,
                agent_id,
                address: r.num(C::Address)?,
                allocation_size: r.num(C::AllocationSize)?,
            });
        }
        TraceFile::ScratchMemory => {
            let agent_id = r.agent(C::AgentId)?;
            ensure_agent(state, agent_id);
            let operation = op_by_name(
                state,
                BufferTracingKind::ScratchMemory,
                r.text(C::Operation),
            );
            batch.scratch_memory.push(ScratchMemory {
                operation,
                flags: r.u32(C::AllocFlags)?,
                correlation_id: r.num(C::CorrelationId)?,
                external_correlation_id: 0,
                thread_id: r.num(C::ThreadId)?,
                start,
                end,
                agent_id,
                queue_id: r.num(C::QueueId)?,
                allocation_size: r.num(C::AllocationSize)?,
            });
        }
    }
    Ok(())
}

/// An operation of a fixed-enum kind by name, with or without the kind
/// prefix (`HOST_TO_DEVICE` and `MEMORY_COPY_HOST_TO_DEVICE` both work).
pub(crate) fn op_by_name(state: &State, kind: BufferTracingKind, name: &str) -> u32 {
    let k = kind.raw();
    if let Some(op) = state.names.lookup(k, name) {
        return op;
    }
    let prefixed = format!("{}_{name}", kind.name());
    state
        .names
        .lookup(k, &prefixed)
        .unwrap_or_else(|| state.names.resolve_or_register(k, name))
}

/// The API kind of a `Domain` value, by name; older spellings and unknown
/// domains fall back to the file's family.
pub(crate) fn api_kind(domain: Option<&str>, file: TraceFile) -> BufferTracingKind {
    use BufferTracingKind as K;
    if let Some(k) = domain.and_then(K::from_name) {
        return k;
    }
    match (domain.unwrap_or("").to_ascii_uppercase().as_str(), file) {
        ("HIP_API" | "HIP", _) | (_, TraceFile::HipApi) => K::HipRuntimeApi,
        ("HSA_API" | "HSA", _) | (_, TraceFile::HsaApi) => K::HsaCoreApi,
        _ => K::MarkerCoreApi,
    }
}

/// CSV files know agents only by number: register a placeholder agent.
fn ensure_agent(state: &State, id: u64) {
    if state.symbols.agent(id).is_none() {
        state.symbols.insert_agent(AgentInfo {
            id,
            node_id: id as u32,
            agent_type: if id == 0 {
                AgentType::Cpu
            } else {
                AgentType::Gpu
            },
            name: format!("agent {id}"),
            product_name: String::new(),
        });
    }
}
