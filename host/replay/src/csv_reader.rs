//! rocprofv3 CSV trace files, read by column name.
//!
//! A directory is read file by file in a fixed order (kernels first, so that
//! kernel names exist before anything else refers to them); a single file by
//! itself. Which record family a file holds comes from its name
//! (`[<prefix>_]kernel_trace.csv`, …) or, failing that, from its header.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use rocwasm_core::{
    AgentInfo, AgentType, ApiCall, Batch, BufferTracingKind, KernelDispatch, KernelSymbol,
    MemoryAllocation, MemoryCopy, ScratchMemory,
};
use rocwasm_output::TraceFile;

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
    let idx = r.headers().ok()?.iter().position(|h| h == "Process_Id")?;
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
    let has = |c: &str| h.iter().any(|x| x == c);
    Ok(if has("Kernel_Name") {
        TraceFile::KernelTrace
    } else if has("Direction") {
        TraceFile::MemoryCopy
    } else if has("Alloc_Flags") {
        TraceFile::ScratchMemory
    } else if has("Allocation_Size") {
        TraceFile::MemoryAllocation
    } else if has("Function") {
        TraceFile::HipApi
    } else {
        return Err(ReplayError::new(
            path,
            Some(1),
            "not a rocprofv3 trace file (unrecognised header)",
        ));
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
        for c in required(kind) {
            f.col(&[c])?;
        }
        Ok(f)
    }

    /// Index of the first present column among `names` (old/new spellings).
    fn col(&self, names: &[&str]) -> Result<usize> {
        names
            .iter()
            .find_map(|n| self.cols.get(*n).copied())
            .ok_or_else(|| {
                ReplayError::new(
                    &self.path,
                    Some(1),
                    format!("missing required column {}", names.join(" / ")),
                )
            })
    }

    fn opt(&self, names: &[&str]) -> Option<usize> {
        names.iter().find_map(|n| self.cols.get(*n).copied())
    }
}

fn required(kind: TraceFile) -> &'static [&'static str] {
    match kind {
        TraceFile::KernelTrace => &["Kernel_Name", "Start_Timestamp", "End_Timestamp"],
        TraceFile::HipApi | TraceFile::HsaApi | TraceFile::MarkerApi => {
            &["Function", "Start_Timestamp", "End_Timestamp"]
        }
        TraceFile::MemoryCopy => &["Direction", "Start_Timestamp", "End_Timestamp"],
        TraceFile::MemoryAllocation | TraceFile::ScratchMemory => {
            &["Operation", "Start_Timestamp", "End_Timestamp"]
        }
    }
}

/// One data row with its line, for typed field access with good errors.
struct Row<'a> {
    path: &'a Path,
    line: u64,
    rec: &'a csv::StringRecord,
    cols: &'a HashMap<String, usize>,
}

impl Row<'_> {
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
    fn num(&self, idx: Option<usize>) -> Result<u64> {
        idx.map_or(Ok(0), |i| self.num_at(i))
    }

    fn u32(&self, idx: Option<usize>) -> Result<u32> {
        let v = self.num(idx)?;
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
    fn agent(&self, idx: Option<usize>) -> Result<u64> {
        let Some(i) = idx else { return Ok(0) };
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
    let c = Columns::new(f)?;
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
        };
        c.read(&row, f.kind, state, kernel_ids, &mut batch)?;
        rows += 1;
    }
    Ok(batch)
}

/// Column positions of one file, resolved once per chunk.
struct Columns {
    agent: Option<usize>,
    queue: Option<usize>,
    stream: Option<usize>,
    thread: Option<usize>,
    dispatch: Option<usize>,
    kernel_id: Option<usize>,
    kernel_name: Option<usize>,
    corr: Option<usize>,
    start: Option<usize>,
    end: Option<usize>,
    lds: Option<usize>,
    scratch: Option<usize>,
    vgpr: Option<usize>,
    accum_vgpr: Option<usize>,
    sgpr: Option<usize>,
    wg: [Option<usize>; 3],
    grid: [Option<usize>; 3],
    domain: Option<usize>,
    function: Option<usize>,
    pid: Option<usize>,
    direction: Option<usize>,
    src: Option<usize>,
    dst: Option<usize>,
    bytes: Option<usize>,
    operation: Option<usize>,
    size: Option<usize>,
    address: Option<usize>,
    flags: Option<usize>,
}

impl Columns {
    fn new(f: &FileReader) -> Result<Self> {
        let o = |n: &[&str]| f.opt(n);
        Ok(Self {
            agent: o(&["Agent_Id"]),
            queue: o(&["Queue_Id"]),
            stream: o(&["Stream_Id"]),
            thread: o(&["Thread_Id"]),
            dispatch: o(&["Dispatch_Id"]),
            kernel_id: o(&["Kernel_Id"]),
            kernel_name: o(&["Kernel_Name"]),
            corr: o(&["Correlation_Id"]),
            start: Some(f.col(&["Start_Timestamp"])?),
            end: Some(f.col(&["End_Timestamp"])?),
            lds: o(&["LDS_Block_Size", "Group_Segment_Size"]),
            scratch: o(&["Scratch_Size", "Private_Segment_Size"]),
            vgpr: o(&["VGPR_Count", "Arch_VGPR_Count"]),
            accum_vgpr: o(&["Accum_VGPR_Count"]),
            sgpr: o(&["SGPR_Count"]),
            wg: [
                o(&["Workgroup_Size_X"]),
                o(&["Workgroup_Size_Y"]),
                o(&["Workgroup_Size_Z"]),
            ],
            grid: [
                o(&["Grid_Size_X"]),
                o(&["Grid_Size_Y"]),
                o(&["Grid_Size_Z"]),
            ],
            domain: o(&["Domain"]),
            function: o(&["Function"]),
            pid: o(&["Process_Id"]),
            direction: o(&["Direction"]),
            src: o(&["Source_Agent_Id"]),
            dst: o(&["Destination_Agent_Id"]),
            bytes: o(&["Bytes", "Size"]),
            operation: o(&["Operation"]),
            size: o(&["Allocation_Size"]),
            address: o(&["Address"]),
            flags: o(&["Alloc_Flags"]),
        })
    }

    fn read(
        &self,
        r: &Row<'_>,
        file: TraceFile,
        state: &mut State,
        kernel_ids: &mut HashMap<String, u64>,
        batch: &mut Batch,
    ) -> Result<()> {
        let (start, end) = (r.num(self.start)?, r.num(self.end)?);
        if state.meta.start_ns == 0 || start < state.meta.start_ns {
            state.meta.start_ns = start;
        }
        state.meta.end_ns = state.meta.end_ns.max(end);
        match file {
            TraceFile::KernelTrace => {
                let name = self.kernel_name.map_or("", |i| r.str(i)).to_string();
                let id = match self.kernel_id {
                    Some(i) => r.num_at(i)?,
                    None => {
                        let next = kernel_ids.len() as u64 + 1;
                        *kernel_ids.entry(name.clone()).or_insert(next)
                    }
                };
                let agent_id = r.agent(self.agent)?;
                ensure_agent(state, agent_id);
                let (lds, scratch) = (r.u32(self.lds)?, r.u32(self.scratch)?);
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
                        sgpr_count: r.u32(self.sgpr)?,
                        arch_vgpr_count: r.u32(self.vgpr)?,
                        accum_vgpr_count: r.u32(self.accum_vgpr)?,
                        kernel_code_entry_byte_offset: 0,
                        kernel_address: 0,
                    });
                }
                batch.kernel_dispatches.push(KernelDispatch {
                    correlation_id: r.num(self.corr)?,
                    external_correlation_id: 0,
                    thread_id: r.num(self.thread)?,
                    start,
                    end,
                    agent_id,
                    queue_id: r.num(self.queue)?,
                    stream_id: r.num(self.stream)?,
                    kernel_id: id,
                    dispatch_id: r.num(self.dispatch)?,
                    private_segment_size: scratch,
                    group_segment_size: lds,
                    workgroup_x: r.u32(self.wg[0])?,
                    workgroup_y: r.u32(self.wg[1])?,
                    workgroup_z: r.u32(self.wg[2])?,
                    grid_x: r.u32(self.grid[0])?,
                    grid_y: r.u32(self.grid[1])?,
                    grid_z: r.u32(self.grid[2])?,
                });
            }
            TraceFile::HipApi | TraceFile::HsaApi | TraceFile::MarkerApi => {
                let kind = api_kind(self.domain.map(|i| r.str(i)), file);
                let function = self.function.map_or("", |i| r.str(i));
                let operation = state.names.resolve_or_register(kind.raw(), function);
                if state.meta.pid == 0 {
                    state.meta.pid = r.num(self.pid)? as u32;
                }
                batch.api_calls.push(ApiCall {
                    kind: kind.raw(),
                    operation,
                    correlation_id: r.num(self.corr)?,
                    external_correlation_id: 0,
                    ancestor: 0,
                    thread_id: r.num(self.thread)?,
                    start,
                    end,
                });
            }
            TraceFile::MemoryCopy => {
                let (src, dst) = (r.agent(self.src)?, r.agent(self.dst)?);
                ensure_agent(state, src);
                ensure_agent(state, dst);
                let operation = op_by_name(
                    state,
                    BufferTracingKind::MemoryCopy,
                    self.direction.map_or("", |i| r.str(i)),
                );
                batch.memory_copies.push(MemoryCopy {
                    operation,
                    correlation_id: r.num(self.corr)?,
                    external_correlation_id: 0,
                    thread_id: r.num(self.thread)?,
                    start,
                    end,
                    dst_agent_id: dst,
                    src_agent_id: src,
                    stream_id: r.num(self.stream)?,
                    bytes: r.num(self.bytes)?,
                    dst_address: 0,
                    src_address: 0,
                });
            }
            TraceFile::MemoryAllocation => {
                let agent_id = r.agent(self.agent)?;
                ensure_agent(state, agent_id);
                let operation = op_by_name(
                    state,
                    BufferTracingKind::MemoryAllocation,
                    self.operation.map_or("", |i| r.str(i)),
                );
                batch.memory_allocations.push(MemoryAllocation {
                    operation,
                    correlation_id: r.num(self.corr)?,
                    external_correlation_id: 0,
                    thread_id: r.num(self.thread)?,
                    start,
                    end,
                    agent_id,
                    address: r.num(self.address)?,
                    allocation_size: r.num(self.size)?,
                });
            }
            TraceFile::ScratchMemory => {
                let agent_id = r.agent(self.agent)?;
                ensure_agent(state, agent_id);
                let operation = op_by_name(
                    state,
                    BufferTracingKind::ScratchMemory,
                    self.operation.map_or("", |i| r.str(i)),
                );
                batch.scratch_memory.push(ScratchMemory {
                    operation,
                    flags: r.u32(self.flags)?,
                    correlation_id: r.num(self.corr)?,
                    external_correlation_id: 0,
                    thread_id: r.num(self.thread)?,
                    start,
                    end,
                    agent_id,
                    queue_id: r.num(self.queue)?,
                    allocation_size: r.num(self.size)?,
                });
            }
        }
        Ok(())
    }
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
