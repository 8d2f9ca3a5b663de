//! rocprofv3 `results.json` (ours and the real tool's).
//!
//! The document is parsed into the types of `crate::json::schema`,
//! the ones the JSON sink writes (never a generic value tree); that schema's
//! docs say what is tolerated. Kinds are mapped through the file's own
//! `strings.buffer_records` name table when it has one (record kind numbers
//! are those of the SDK that wrote the file), then by name to this build's
//! numbers, as every release spells them ([`rocwasm_ids::recorded`]);
//! operations likewise. All processes of the file are replayed one after
//! another; the metadata is the first process's.
//!
//! Counted in the file's report ([`crate::report`]): every record read; API
//! records whose kind names no kind this build knows (skipped); operations
//! kept under a synthetic number. JSON records have no line of their own:
//! examples name the category and index (`hip_api[3]`).
//!
//! A document cut short (a run killed while writing it) is refused with the
//! line and column where it ends: it is parsed whole into the schema's
//! types, and salvaging the records before the cut would take a second,
//! streaming parser of the same schema, which is not worth it for a file
//! rocprofv3 writes in one go at the end of the run.

use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;

use crate::json::schema::{
    category, Correlation, DispatchInfo, Document, Process, Strings, STORAGE_FILE, STORAGE_MEMORY,
};
use rocwasm_core::{
    AgentInfo, AgentType, ApiCall, Batch, BufferTracingKind, CodeObject, CodeObjectStorage,
    CounterSample, KernelDispatch, KernelSymbol, MemoryAllocation, MemoryCopy, Retirement,
    RuntimeInitialization, ScratchMemory,
};
use rocwasm_ids::recorded::recorded_kind;

use crate::replay::error::{ReplayError, Result};
use crate::replay::reader::{names_are_functions, operation, BatchReader, State};
use crate::replay::report::{FileReport, Reason};

/// Maps the file's kind/operation numbers to this build's.
struct KindMap {
    /// Per file kind number: its name in the file's table and this build's
    /// kind for it (`None`: a name no release writes).
    kinds: Vec<(String, Option<BufferTracingKind>)>,
    /// `(file kind, file op)` → this build's op.
    ops: HashMap<(u32, u32), u32>,
    /// The names among those that this build does not know.
    unknown: HashMap<(u32, u32), String>,
}

impl KindMap {
    fn new(strings: &Strings, state: &State) -> Self {
        let mut kinds = Vec::new();
        let mut ops = HashMap::new();
        let mut unknown = HashMap::new();
        for (file_kind, entry) in strings.buffer_records.iter().enumerate() {
            let kind = recorded_kind(&entry.kind);
            kinds.push((entry.kind.clone(), kind));
            let Some(kind) = kind else { continue };
            let named = entry
                .operations
                .iter()
                .enumerate()
                .map(|(op, name)| (op as u32, name.as_str()))
                .chain(
                    entry
                        .synthetic_operations
                        .iter()
                        .map(|s| (s.operation, s.name.as_str())),
                );
            for (file_op, name) in named {
                if name.is_empty() || name == "NONE" {
                    continue;
                }
                let key = (file_kind as u32, file_op);
                let (op, known) = operation(&state.names, kind, name);
                ops.insert(key, op);
                if !known {
                    unknown.insert(key, name.to_string());
                }
            }
        }
        Self {
            kinds,
            ops,
            unknown,
        }
    }

    /// This build's kind for a record kind number (the SDK's numbering
    /// without a table), or the name (or number) that maps to none.
    fn kind(&self, file_kind: u32) -> std::result::Result<BufferTracingKind, String> {
        if self.kinds.is_empty() {
            return BufferTracingKind::from_raw(file_kind).ok_or_else(|| format!("#{file_kind}"));
        }
        match self.kinds.get(file_kind as usize) {
            Some((_, Some(k))) => Ok(*k),
            Some((name, None)) => Err(name.clone()),
            None => Err(format!("#{file_kind}")),
        }
    }

    /// This build's operation for a record's (an operation missing from the
    /// file's table is taken as numbered alike).
    fn op(&self, file_kind: u32, file_op: u32) -> u32 {
        self.ops
            .get(&(file_kind, file_op))
            .copied()
            .unwrap_or(file_op)
    }

    /// The recorded name of an operation this build does not know.
    fn unknown_name(&self, file_kind: u32, file_op: u32) -> Option<&str> {
        self.unknown.get(&(file_kind, file_op)).map(String::as_str)
    }

    /// For records whose `kind` is implied by their category.
    fn fixed_op(&self, kind: BufferTracingKind, file_op: u32) -> u32 {
        let file_kind = self
            .kinds
            .iter()
            .position(|(_, k)| *k == Some(kind))
            .map_or(kind.raw(), |i| i as u32);
        self.op(file_kind, file_op)
    }
}

pub(crate) struct JsonReader {
    batches: std::vec::IntoIter<Batch>,
}

impl JsonReader {
    pub(crate) fn open(path: &Path, state: &mut State) -> Result<Self> {
        let f = std::fs::File::open(path).map_err(|e| ReplayError::io(path, e))?;
        let doc: Document =
            serde_json::from_reader(BufReader::with_capacity(1 << 16, f)).map_err(|e| {
                let line = (e.line() > 0).then_some(e.line() as u64);
                let what = if e.is_eof() {
                    "the document ends before it is complete: the recording was cut short \
                     (a JSON recording is refused whole, nothing was replayed)"
                } else {
                    "invalid rocprofv3 JSON"
                };
                ReplayError::new(path, line, format!("column {}: {what}: {e}", e.column()))
            })?;
        if doc.tool.is_empty() {
            return Err(ReplayError::new(
                path,
                None,
                "no process in \"rocprofiler-sdk-tool\"",
            ));
        }
        let mut batches = Vec::new();
        for (i, p) in doc.tool.into_iter().enumerate() {
            if i == 0 {
                let m = &p.metadata;
                state.meta.pid = m.pid;
                state.meta.ppid = m.ppid;
                state.meta.hostname = m.hostname.clone();
                state.meta.command = m.command.clone();
                state.meta.start_ns = m.init_time;
                state.meta.end_ns = m.fini_time;
                state.meta.rank = m.rank;
            }
            load_symbols(&p, state);
            let all = records(p, state, path);
            batches.extend(all.split(state.chunk_rows));
        }
        state
            .progress
            .set_total(batches.iter().map(|b| b.len() as u64).sum());
        Ok(Self {
            batches: batches.into_iter(),
        })
    }
}

impl BatchReader for JsonReader {
    fn next_batch(&mut self, _state: &mut State) -> Result<Option<Batch>> {
        Ok(self.batches.next())
    }
}

fn load_symbols(p: &Process, state: &State) {
    for a in &p.agents {
        state.symbols.insert_agent(AgentInfo {
            id: a.id.handle,
            node_id: a.logical_node_id.unwrap_or(a.node_id),
            agent_type: if a.is_gpu() {
                AgentType::Gpu
            } else {
                AgentType::Cpu
            },
            name: a.name.clone(),
            product_name: a.product_name.clone(),
            properties: a.hardware.properties(),
        });
    }
    for c in &p.code_objects {
        state.symbols.insert_code_object(CodeObject {
            id: c.code_object_id,
            agent_id: c.agent(),
            uri: c.uri.clone(),
            load_base: c.load_base,
            load_size: c.load_size,
            load_delta: c.load_delta,
            storage: match c.storage_type {
                STORAGE_FILE => CodeObjectStorage::File { fd: c.storage_file },
                STORAGE_MEMORY => CodeObjectStorage::Memory {
                    base: c.memory_base,
                    size: c.memory_size,
                },
                _ => CodeObjectStorage::None,
            },
        });
    }
    for k in &p.kernel_symbols {
        let demangled = [
            &k.formatted_kernel_name,
            &k.demangled_kernel_name,
            &k.truncated_kernel_name,
            &k.kernel_name,
        ]
        .into_iter()
        .find(|s| !s.is_empty())
        .cloned()
        .unwrap_or_default();
        state.symbols.insert_kernel(KernelSymbol {
            id: k.kernel_id,
            code_object_id: k.code_object_id,
            name: if k.kernel_name.is_empty() {
                demangled.clone()
            } else {
                k.kernel_name.clone()
            },
            demangled_name: demangled,
            kernel_object: k.kernel_object,
            kernarg_segment_size: k.kernarg_segment_size,
            kernarg_segment_alignment: k.kernarg_segment_alignment,
            group_segment_size: k.group_segment_size,
            private_segment_size: k.private_segment_size,
            sgpr_count: k.sgpr_count,
            arch_vgpr_count: k.arch_vgpr_count,
            accum_vgpr_count: k.accum_vgpr_count,
            kernel_code_entry_byte_offset: k.kernel_code_entry_byte_offset,
            kernel_address: k.kernel_address.handle,
        });
    }
}

fn records(p: Process, state: &mut State, path: &Path) -> Batch {
    use BufferTracingKind as K;
    let map = KindMap::new(&p.strings, state);
    let mut b = Batch::default();
    counter_samples(&p, state, path, &mut b);
    let report = state.report.file(path);
    let r = p.buffer_records;
    for (name, n) in &r.unread {
        report.read += n;
        let at = format!("buffer_records.{name}");
        report.issue(
            Reason::UnknownCategory { name: name.clone() },
            None,
            Some(&at),
            *n,
        );
    }
    let api_lists = [
        (r.hip_api, category::HIP_API),
        (r.hsa_api, category::HSA_API),
        (r.marker_api, category::MARKER_API),
        (r.rccl_api, category::RCCL_API),
        (r.rocdecode_api, category::ROCDECODE_API),
        (r.rocjpeg_api, category::ROCJPEG_API),
    ];
    for (list, category) in api_lists {
        for (i, a) in list.into_iter().enumerate() {
            report.read += 1;
            let kind = match map.kind(a.kind) {
                Ok(k) => k,
                Err(name) => {
                    let at = format!("{category}[{i}]");
                    report.issue(Reason::UnknownKind { name }, None, Some(&at), 1);
                    continue;
                }
            };
            if let Some(name) = map.unknown_name(a.kind, a.operation) {
                if names_are_functions(kind) {
                    let reason = Reason::UnknownOperation {
                        kind: kind.name().to_string(),
                    };
                    report.issue(reason, None, Some(name), 1);
                }
            }
            report.mapped += 1;
            b.api_calls.push(ApiCall {
                kind: kind.raw(),
                operation: map.op(a.kind, a.operation),
                correlation_id: a.correlation_id.internal,
                external_correlation_id: a.correlation_id.external,
                ancestor: a.correlation_id.ancestor,
                thread_id: a.thread_id,
                start: a.start_timestamp,
                end: a.end_timestamp,
            });
        }
    }
    for k in r.kernel_dispatch {
        b.kernel_dispatches.push(dispatch_of(
            &k.correlation_id,
            k.thread_id,
            (k.start_timestamp, k.end_timestamp),
            k.stream_id.handle,
            &k.dispatch_info,
        ));
    }
    for c in r.memory_copy {
        b.memory_copies.push(MemoryCopy {
            operation: map.fixed_op(K::MemoryCopy, c.operation),
            correlation_id: c.correlation_id.internal,
            external_correlation_id: c.correlation_id.external,
            thread_id: c.thread_id,
            start: c.start_timestamp,
            end: c.end_timestamp,
            dst_agent_id: c.dst_agent_id.handle,
            src_agent_id: c.src_agent_id.handle,
            stream_id: c.stream_id.handle,
            bytes: c.bytes,
            dst_address: c.dst_address,
            src_address: c.src_address,
        });
    }
    for m in r.memory_allocation {
        b.memory_allocations.push(MemoryAllocation {
            operation: map.fixed_op(K::MemoryAllocation, m.operation),
            correlation_id: m.correlation_id.internal,
            external_correlation_id: m.correlation_id.external,
            thread_id: m.thread_id,
            start: m.start_timestamp,
            end: m.end_timestamp,
            agent_id: m.agent_id.handle,
            address: m.address,
            allocation_size: m.allocation_size,
        });
    }
    for s in r.scratch_memory {
        b.scratch_memory.push(ScratchMemory {
            operation: map.fixed_op(K::ScratchMemory, s.operation),
            flags: s.flags,
            correlation_id: s.correlation_id.internal,
            external_correlation_id: s.correlation_id.external,
            thread_id: s.thread_id,
            start: s.start_timestamp,
            end: s.end_timestamp,
            agent_id: s.agent_id.handle,
            queue_id: s.queue_id.handle,
            allocation_size: s.allocation_size,
        });
    }
    for t in r.correlation_id_retirement {
        b.retirements.push(Retirement {
            timestamp: t.timestamp,
            correlation_id: t.internal_correlation_id,
        });
    }
    for n in r.runtime_initialization {
        b.runtime_initializations.push(RuntimeInitialization {
            operation: map.fixed_op(K::RuntimeInitialization, n.operation),
            thread_id: n.thread_id,
            timestamp: n.timestamp,
            version: n.version,
            instance: n.instance,
        });
    }
    count_fixed(report, &b);
    b
}

/// A dispatch as a record (or counter-collection record) has it.
fn dispatch_of(
    c: &Correlation,
    thread_id: u64,
    (start, end): (u64, u64),
    stream_id: u64,
    d: &DispatchInfo,
) -> KernelDispatch {
    KernelDispatch {
        correlation_id: c.internal,
        external_correlation_id: c.external,
        thread_id,
        start,
        end,
        agent_id: d.agent_id.handle,
        queue_id: d.queue_id.handle,
        stream_id,
        kernel_id: d.kernel_id,
        dispatch_id: d.dispatch_id,
        private_segment_size: d.private_segment_size,
        group_segment_size: d.group_segment_size,
        workgroup_x: d.workgroup_size.x,
        workgroup_y: d.workgroup_size.y,
        workgroup_z: d.workgroup_size.z,
        grid_x: d.grid_size.x,
        grid_y: d.grid_size.y,
        grid_z: d.grid_size.z,
    }
}

/// `callback_records.counter_collection`: one counter sample per counter
/// of each dispatch (a counter's values summed, should a file list its
/// instances apart), named through `counters`. A value whose counter the
/// file does not list is counted, not replayed.
fn counter_samples(p: &Process, state: &mut State, path: &Path, b: &mut Batch) {
    let names: HashMap<u64, &str> = p
        .counters
        .iter()
        .map(|c| (c.id.handle, c.name.as_str()))
        .collect();
    let mut unnamed = 0u64;
    let mut read = 0u64;
    for rec in &p.callback_records.counter_collection {
        let d = &rec.dispatch_data;
        let dispatch = dispatch_of(
            &d.correlation_id,
            rec.thread_id,
            (d.start_timestamp, d.end_timestamp),
            rec.stream_id.handle,
            &d.dispatch_info,
        );
        let mut sums: Vec<(u32, f64)> = Vec::new();
        for v in &rec.records {
            read += 1;
            let Some(name) = names.get(&v.counter_id.handle).filter(|n| !n.is_empty()) else {
                unnamed += 1;
                continue;
            };
            let id = state.symbols.intern_counter(name);
            match sums.iter_mut().find(|(c, _)| *c == id) {
                Some((_, s)) => *s += v.value,
                None => sums.push((id, v.value)),
            }
        }
        for (id, value) in sums {
            b.counter_samples
                .push(CounterSample::of_dispatch(&dispatch, id, value));
        }
    }
    let report = state.report.file(path);
    report.read += read;
    report.mapped += read - unnamed;
    if unnamed > 0 {
        report.issue(
            Reason::UnparsableField {
                column: "counter_id".into(),
            },
            None,
            Some("callback_records.counter_collection: a counter id `counters` does not list"),
            unnamed,
        );
    }
}

/// Counts the records of the categories whose kind is fixed (every table
/// but the API calls and counter samples, counted as they are mapped):
/// each is read and mapped.
fn count_fixed(report: &mut FileReport, b: &Batch) {
    let n = (b.len() - b.api_calls.len() - b.counter_samples.len()) as u64;
    report.read += n;
    report.mapped += n;
}
