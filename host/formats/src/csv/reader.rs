//! rocprofv3 CSV trace files, read by column name.
//!
//! The files, their columns and every spelling of a column a reader accepts
//! are `crate::csv`'s schema (its module docs say what is tolerated);
//! this reader only maps the columns it finds onto records.
//!
//! A directory is read file by file in [`TraceFile::ALL`] order (kernels
//! first, so that kernel names exist before anything else refers to them); a
//! single file by itself. Which record family a file holds comes from its
//! name (`[<prefix>_]kernel_trace.csv`, …) or, failing that, from its header.
//! The directory's other CSV files are not read, but each is named with its
//! rows: counter values and PC samples as data the replay loses (`--strict`
//! refuses them), statistics and agent lists as what replay recomputes or
//! does without.
//!
//! Nothing is skipped silently (see [`crate::report`]): a column no record
//! uses, a row whose `Domain` names no kind, a field that does not parse are
//! each counted against the file with their first lines, and the row is
//! skipped. A file cut short — a row with too few fields, bytes that are not
//! UTF-8, or a last line with no line end (rocprofv3 ends every row with
//! one, so a run killed mid-write leaves the last row without) — is read up
//! to that line, which is reported as the file's damage; the next file is
//! read as usual.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::csv::{Column, TraceFile};
use rocwasm_core::MemoryAllocationOperation as Op;
use rocwasm_core::{
    AgentInfo, AgentType, ApiCall, Batch, BufferTracingKind, CounterSample, KernelDispatch,
    KernelSymbol, MemoryAllocation, MemoryCopy, ScratchMemory,
};
use rocwasm_ids::recorded::{hsa_kind_of_function, recorded_kind};
use rocwasm_ids::{operation_by_name, ApiFamily};

use crate::replay::error::{ReplayError, Result};
use crate::replay::reader::{names_are_functions, operation, BatchReader, State};
use crate::replay::report::{Damage, Reason};

pub(crate) struct CsvReader {
    files: Vec<(PathBuf, TraceFile)>,
    current: Option<FileReader>,
    /// What earlier rows told about later ones.
    seen: Seen,
}

/// What the reader remembers across rows (and files) of one recording.
#[derive(Default)]
struct Seen {
    /// Kernel ids assigned per name when a file has no `Kernel_Id` column.
    kernel_ids: HashMap<String, u64>,
    /// The agent of each allocation not freed yet, by address: rocprofv3
    /// prints no agent for a free (`""`), and a live run gives a free the
    /// agent of the memory it frees, so the replay does too.
    allocation_agents: HashMap<u64, u64>,
}

struct FileReader {
    path: PathBuf,
    kind: TraceFile,
    reader: csv::Reader<File>,
    cols: HashMap<String, usize>,
    record: csv::StringRecord,
    /// The file's size, and whether its last byte is not a line end (its
    /// last line was cut short).
    len: u64,
    unterminated: bool,
    /// No more rows: the end of the file, or its damage.
    done: bool,
}

impl CsvReader {
    pub(crate) fn open(path: &Path, state: &mut State) -> Result<Self> {
        let mut files = Vec::new();
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| ReplayError::io(path, e))?;
            let mut others = Vec::new();
            for entry in entries {
                let p = entry.map_err(|e| ReplayError::io(path, e))?.path();
                if let Some(kind) = TraceFile::from_path(&p) {
                    files.push((p, kind));
                } else if p.extension().is_some_and(|x| x == "csv") {
                    others.push(p);
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
            // rocprofv3's other files beside the traces: counted and said,
            // never passed over without a word.
            others.sort();
            for p in others {
                let (what, loses) = unread_file(&p);
                let rows = data_rows(&p);
                let report = state.report.file(&p);
                if loses {
                    // Records the replay does not map; statistics and agent
                    // lists are not records.
                    report.read += rows;
                }
                report.issue(Reason::UnreadFile { what, loses }, None, None, rows);
            }
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
            if kind.is_api() {
                if let Some(pid) = first_pid(p) {
                    state.meta.pid = pid;
                    break;
                }
            }
        }
        Ok(Self {
            files,
            current: None,
            seen: Seen::default(),
        })
    }
}

/// What a CSV file of a recording's directory that is not a trace holds,
/// by rocprofv3's file names, and whether its rows are data the replay
/// loses (rather than statistics it recomputes or an agent list).
fn unread_file(path: &Path) -> (String, bool) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (what, loses) = if name.ends_with("counter_collection.csv") {
        ("counter collection (hardware counter values)", true)
    } else if name.contains("pc_sampling") {
        ("PC samples", true)
    } else if name.ends_with("_stats.csv") || name == "stats.csv" {
        ("statistics (recomputed from the traces by --stats)", false)
    } else if name.ends_with("agent_info.csv") {
        (
            "agent properties (agents are known by number in CSV traces)",
            false,
        )
    } else {
        ("a file that is not a rocprofv3 trace", true)
    };
    (what.to_string(), loses)
}

/// Data rows of a CSV file (its lines after the header), 0 if unreadable.
fn data_rows(path: &Path) -> u64 {
    std::fs::read(path).map_or(0, |bytes| {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64
            + u64::from(bytes.last().is_some_and(|&b| b != b'\n'));
        lines.saturating_sub(1)
    })
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
    let (line, message) = csv_problem(&e);
    ReplayError::new(path, line, message)
}

/// The line and description of a CSV error.
fn csv_problem(e: &csv::Error) -> (Option<u64>, String) {
    let line = e.position().map(|p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("expected {expected_len} fields, found {len}: the line is cut short or damaged (truncated or corrupt file)")
        }
        csv::ErrorKind::Utf8 { err, .. } => format!("invalid UTF-8 in field {}", err.field() + 1),
        csv::ErrorKind::Io(io) => io.to_string(),
        _ => e.to_string(),
    };
    (line, message)
}

/// The size of `path` and whether it ends without a line end.
fn tail(path: &Path) -> std::io::Result<(u64, bool)> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok((0, false));
    }
    f.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok((len, last[0] != b'\n'))
}

/// The columns the reader maps for a file: its schema's, and the extra ones
/// a record of that family has (`Thread_Id`, `Bytes`, …) when a file has
/// them.
fn mapped_columns(kind: TraceFile) -> Vec<Column> {
    let extra: &[Column] = match kind {
        TraceFile::MemoryCopy => &[Column::ThreadId, Column::Bytes],
        TraceFile::MemoryAllocation => &[Column::ThreadId],
        TraceFile::ScratchMemory => &[Column::CorrelationId],
        _ => &[],
    };
    kind.columns().iter().chain(extra).copied().collect()
}

impl FileReader {
    fn open(path: &Path, kind: TraceFile, state: &mut State) -> Result<Self> {
        let (len, unterminated) = tail(path).map_err(|e| ReplayError::io(path, e))?;
        let mut reader = csv::ReaderBuilder::new()
            .from_path(path)
            .map_err(|e| csv_error(path, e))?;
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| csv_error(path, e))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let cols = header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.clone(), i))
            .collect();
        let report = state.report.file(path);
        let mapped = mapped_columns(kind);
        for h in &header {
            if !mapped.iter().any(|c| c.spellings().contains(&h.as_str())) {
                report.issue(Reason::UnknownColumn { name: h.clone() }, Some(1), None, 1);
            }
        }
        let f = Self {
            path: path.to_path_buf(),
            kind,
            reader,
            cols,
            record: csv::StringRecord::new(),
            len,
            unterminated,
            done: false,
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

/// A field of a row that could not be read: its column and what is wrong.
struct FieldError {
    column: String,
    message: String,
}

type Field<T> = std::result::Result<T, FieldError>;

/// One data row, for typed field access with good errors.
struct Row<'a> {
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

    /// The header name of column `idx`.
    fn column_name(&self, idx: usize) -> String {
        self.cols
            .iter()
            .find(|(_, &i)| i == idx)
            .map_or_else(|| format!("#{}", idx + 1), |(n, _)| n.clone())
    }

    fn field_error(&self, idx: usize, what: impl FnOnce(&str) -> String) -> FieldError {
        let column = self.column_name(idx);
        FieldError {
            message: format!("column {column}: {}", what(self.str(idx))),
            column,
        }
    }

    fn num_at(&self, idx: usize) -> Field<u64> {
        let s = self.str(idx);
        let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None if s.is_empty() => Some(0),
            None => s
                .parse::<u64>()
                .ok()
                .or_else(|| s.parse::<i64>().ok().map(|v| v as u64)),
        };
        parsed.ok_or_else(|| self.field_error(idx, |s| format!("{s:?} is not a number")))
    }

    /// A numeric column that may be absent (older column sets): 0 then.
    fn num(&self, c: Column) -> Field<u64> {
        self.at(c).map_or(Ok(0), |i| self.num_at(i))
    }

    fn u32(&self, c: Column) -> Field<u32> {
        let Some(i) = self.at(c) else { return Ok(0) };
        let v = self.num_at(i)?;
        u32::try_from(v)
            .map_err(|_| self.field_error(i, |_| format!("value {v} does not fit 32 bits")))
    }

    /// Agents print as a node number, sometimes with a word before it
    /// (`GPU 1`, `Agent 4`, as rocprofv3 writes them since ROCm 6.4): take
    /// the trailing number.
    fn agent(&self, c: Column) -> Field<u64> {
        // (An empty field reads as 0, as every empty number does.)
        let Some(i) = self.at(c) else { return Ok(0) };
        let s = self.str(i);
        let digits = s.trim_start_matches(|c: char| !c.is_ascii_digit());
        if digits.len() != s.len() && !digits.is_empty() {
            return digits.parse().map_err(|_| {
                self.field_error(i, |s| format!("agent {s:?} is not an agent number"))
            });
        }
        self.num_at(i)
    }

    /// Whether the row names no agent in column `c` (absent or empty).
    fn agent_missing(&self, c: Column) -> bool {
        self.at(c).is_none_or(|i| self.str(i).is_empty())
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
                self.current = Some(FileReader::open(&path, kind, state)?);
            }
            let file = self.current.as_mut().expect("set above");
            let batch = read_chunk(file, state, &mut self.seen);
            if file.done {
                self.current = None;
            }
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
    }
}

/// Reads up to a chunk of rows of `f` into a batch, counting every row in
/// the file's report. Sets `f.done` at the end of the file or at damage.
fn read_chunk(f: &mut FileReader, state: &mut State, seen: &mut Seen) -> Batch {
    let mut batch = Batch::default();
    let c = Columns::new(f);
    let mut rows = 0;
    while rows < state.chunk_rows && !f.done {
        match f.reader.read_record(&mut f.record) {
            Ok(true) => {}
            Ok(false) => {
                f.done = true;
                break;
            }
            Err(e) => {
                let (line, message) = csv_problem(&e);
                state.report.file(&f.path).damage = Some(Damage {
                    line,
                    column: None,
                    message,
                });
                f.done = true;
                break;
            }
        }
        let line = f.record.position().map_or(0, |p| p.line());
        if f.unterminated && f.reader.position().byte() >= f.len {
            state.report.file(&f.path).damage = Some(Damage {
                line: Some(line),
                column: None,
                message: "the last line has no line end: the recording was cut short (the line is not read)".into(),
            });
            f.done = true;
            break;
        }
        let row = Row {
            rec: &f.record,
            cols: &f.cols,
            at: &c,
        };
        let outcome = read_row(&row, f.kind, state, seen, &mut batch);
        let report = state.report.file(&f.path);
        report.read += 1;
        match outcome {
            Ok(None) => report.mapped += 1,
            Ok(Some((reason, example))) => {
                if !reason.loses_records() {
                    report.mapped += 1;
                }
                report.issue(reason, Some(line), example.as_deref(), 1);
            }
            Err(e) => report.issue(
                Reason::UnparsableField { column: e.column },
                Some(line),
                Some(&e.message),
                1,
            ),
        }
        rows += 1;
    }
    batch
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

/// What a row brought besides its record: a reason it was not mapped (or
/// was mapped with a note, e.g. an unknown operation name) and an example.
type Note = Option<(Reason, Option<String>)>;

/// Maps one row of a `file` onto its record (and the symbols and names it
/// brings). A row that cannot be mapped adds nothing to `batch` and says
/// why; so does an unparsable field.
fn read_row(
    r: &Row<'_>,
    file: TraceFile,
    state: &mut State,
    seen: &mut Seen,
    batch: &mut Batch,
) -> Field<Note> {
    use Column as C;
    let (start, end) = (r.num(C::StartTimestamp)?, r.num(C::EndTimestamp)?);
    let mut note = None;
    match file {
        TraceFile::KernelTrace => {
            let (id, agent_id, lds, scratch) = dispatch_kernel(r, state, seen)?;
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
        TraceFile::HipApi
        | TraceFile::HsaApi
        | TraceFile::MarkerApi
        | TraceFile::RcclApi
        | TraceFile::RocdecodeApi
        | TraceFile::RocjpegApi => {
            let function = r.text(C::Function);
            let domain = r.at(C::Domain).map(|i| r.str(i));
            let Some(kind) = api_kind(domain, function, file) else {
                let name = domain.unwrap_or_default().to_string();
                return Ok(Some((Reason::UnknownKind { name }, None)));
            };
            let (operation, known) = operation(&state.names, kind, function);
            let (pid, correlation_id, thread_id) = (
                r.num(C::ProcessId)?,
                r.num(C::CorrelationId)?,
                r.num(C::ThreadId)?,
            );
            if state.meta.pid == 0 {
                state.meta.pid = pid as u32;
            }
            if names_are_functions(kind) {
                note = unknown_operation(kind, known, function);
            }
            batch.api_calls.push(ApiCall {
                kind: kind.raw(),
                operation,
                correlation_id,
                external_correlation_id: 0,
                ancestor: 0,
                thread_id,
                start,
                end,
            });
        }
        TraceFile::MemoryCopy => {
            let (src, dst) = (r.agent(C::SourceAgentId)?, r.agent(C::DestinationAgentId)?);
            ensure_agent(state, src);
            ensure_agent(state, dst);
            let kind = BufferTracingKind::MemoryCopy;
            let (operation, known) = operation(&state.names, kind, r.text(C::Direction));
            note = unknown_operation(kind, known, r.text(C::Direction));
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
            let kind = BufferTracingKind::MemoryAllocation;
            let (operation, known) = operation(&state.names, kind, r.text(C::Operation));
            note = unknown_operation(kind, known, r.text(C::Operation));
            let address = r.num(C::Address)?;
            let freed = [Op::Free as u32, Op::VmemFree as u32].contains(&operation);
            let agent_id = if freed {
                let allocated = seen.allocation_agents.remove(&address);
                match allocated {
                    Some(agent) if r.agent_missing(C::AgentId) => agent,
                    _ => r.agent(C::AgentId)?,
                }
            } else {
                let agent = r.agent(C::AgentId)?;
                seen.allocation_agents.insert(address, agent);
                agent
            };
            ensure_agent(state, agent_id);
            batch.memory_allocations.push(MemoryAllocation {
                operation,
                correlation_id: r.num(C::CorrelationId)?,
                external_correlation_id: 0,
                thread_id: r.num(C::ThreadId)?,
                start,
                end,
                agent_id,
                address,
                allocation_size: r.num(C::AllocationSize)?,
            });
        }
        TraceFile::ScratchMemory => {
            let agent_id = r.agent(C::AgentId)?;
            ensure_agent(state, agent_id);
            let kind = BufferTracingKind::ScratchMemory;
            let (operation, known) = operation(&state.names, kind, r.text(C::Operation));
            note = unknown_operation(kind, known, r.text(C::Operation));
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
        TraceFile::CounterCollection => {
            // The kernel as kernel_trace.csv names it (read first), else
            // by its name here.
            let (kernel_id, agent_id, lds, scratch) = dispatch_kernel(r, state, seen)?;
            let value_at = r.at(C::CounterValue).unwrap_or(0);
            let value: f64 = r.text(C::CounterValue).parse().map_err(|_| {
                r.field_error(value_at, |v| format!("{v:?} is not a counter value"))
            })?;
            let pid = r.num(C::ProcessId)?;
            if state.meta.pid == 0 {
                state.meta.pid = pid as u32;
            }
            // The file has the sizes' products only: x holds it.
            batch.counter_samples.push(CounterSample {
                correlation_id: r.num(C::CorrelationId)?,
                external_correlation_id: 0,
                thread_id: r.num(C::ThreadId)?,
                start,
                end,
                agent_id,
                queue_id: r.num(C::QueueId)?,
                kernel_id,
                dispatch_id: r.num(C::DispatchId)?,
                private_segment_size: scratch,
                group_segment_size: lds,
                workgroup_x: r.u32(C::WorkgroupSize)?,
                workgroup_y: 1,
                workgroup_z: 1,
                grid_x: r.u32(C::GridSize)?,
                grid_y: 1,
                grid_z: 1,
                counter_id: state.symbols.intern_counter(r.text(C::CounterName)),
                value: value.to_bits(),
            });
        }
    }
    if state.meta.start_ns == 0 || start < state.meta.start_ns {
        state.meta.start_ns = start;
    }
    state.meta.end_ns = state.meta.end_ns.max(end);
    Ok(note)
}

/// What a dispatch's row (kernel trace or counter collection) says of its
/// kernel: the kernel id, the agent, LDS and scratch sizes; the agent and
/// the kernel's symbol are registered the first time.
fn dispatch_kernel(r: &Row<'_>, state: &mut State, seen: &mut Seen) -> Field<(u64, u64, u32, u32)> {
    use Column as C;
    let name = r.text(C::KernelName).to_string();
    let id = kernel_id(r, seen, &name)?;
    let agent_id = r.agent(C::AgentId)?;
    ensure_agent(state, agent_id);
    let (lds, scratch) = (r.u32(C::LdsBlockSize)?, r.u32(C::ScratchSize)?);
    ensure_kernel(state, r, id, name, lds, scratch)?;
    Ok((id, agent_id, lds, scratch))
}

/// A row's kernel id: its `Kernel_Id`, else one per distinct name (older
/// column sets have none).
fn kernel_id(r: &Row<'_>, seen: &mut Seen, name: &str) -> Field<u64> {
    match r.at(Column::KernelId) {
        Some(i) => r.num_at(i),
        None => {
            let next = seen.kernel_ids.len() as u64 + 1;
            Ok(*seen.kernel_ids.entry(name.to_string()).or_insert(next))
        }
    }
}

/// Registers kernel `id` named `name` from a row's register counts, unless
/// an earlier row (or file) already did.
fn ensure_kernel(
    state: &mut State,
    r: &Row<'_>,
    id: u64,
    name: String,
    lds: u32,
    scratch: u32,
) -> Field<()> {
    use Column as C;
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
    Ok(())
}

/// The note for a record whose operation `name` of `kind` this build does
/// not know (it is kept under a synthetic number).
fn unknown_operation(kind: BufferTracingKind, known: bool, name: &str) -> Note {
    (!known).then(|| {
        let reason = Reason::UnknownOperation {
            kind: kind.name().to_string(),
        };
        (reason, Some(name.to_string()))
    })
}

/// The API kind of a row: its `Domain` by any name rocprofv3 has written
/// ([`recorded_kind`]: `HIP_RUNTIME_API_EXT` is `HIP_RUNTIME_API`), the
/// file's family when there is no domain; `None` for a domain no release
/// writes. A domain that names only a runtime (`HIP_API`, `HSA_API`) is
/// narrowed to the table that has `function`.
fn api_kind(domain: Option<&str>, function: &str, file: TraceFile) -> Option<BufferTracingKind> {
    use BufferTracingKind as K;
    let kind = match domain.filter(|d| !d.is_empty()) {
        Some(d) => {
            let kind = recorded_kind(d)?;
            let generic = K::from_name(d).is_none();
            if !generic {
                return Some(kind);
            }
            kind
        }
        None => match file {
            TraceFile::HipApi => K::HipRuntimeApi,
            TraceFile::HsaApi => K::HsaCoreApi,
            TraceFile::RcclApi => K::RcclApi,
            TraceFile::RocdecodeApi => K::RocdecodeApi,
            TraceFile::RocjpegApi => K::RocjpegApi,
            _ => K::MarkerCoreApi,
        },
    };
    Some(match ApiFamily::of(kind) {
        Some(ApiFamily::Hsa) => hsa_kind_of_function(function).unwrap_or(kind),
        Some(ApiFamily::Hip) if operation_by_name(K::HipCompilerApi, function).is_some() => {
            K::HipCompilerApi
        }
        _ => kind,
    })
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
            properties: Default::default(),
        });
    }
}
