//! The JSON writer: [`JsonSink`].
//!
//! Streaming: records go to one temporary file per category as they arrive
//! (no value tree is ever built); `finish` writes the header objects, which
//! need the complete symbol tables, and then copies the record files in.
//! Because of that the document's framing (its keys down to
//! `buffer_records.<category>`) is written here by hand, from the key names
//! [`super::schema`] exports next to the types it derives; every value is
//! one of the schema's types, serialized by serde.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rocwasm_core::ops::kernel_dispatch;
use rocwasm_core::{Batch, BufferTracingKind};
use serde::Serialize;

use super::fast::FastJson;
use super::schema::{
    api_category, category, Agent, AllocationRecord, ApiCorrelation, ApiRecord, CallbackRecords,
    CodeObject, CopyRecord, Correlation, CounterCollectionRecord, CounterInfo, CounterValue,
    DispatchData, DispatchInfo, DispatchRecord, Document, Handle, KernelSymbol, KindNames,
    Metadata, Process, RetirementRecord, RuntimeInitRecord, ScratchRecord, Strings,
    SyntheticOperation, CATEGORIES,
};
use crate::names::SYNTHETIC_BASE;
use crate::paths::output_path;
use crate::sink::claim_file;
use crate::sink::{Sink, SinkContext};
use crate::unfiled::Unfiled;
use rocwasm_plan::claims::OutputClaims;

/// One category's spill file: records separated by commas.
struct Spill {
    path: PathBuf,
    out: BufWriter<File>,
    count: u64,
    /// One hand-formatted record ([`FastJson`]), reused.
    scratch: Vec<u8>,
}

impl Spill {
    fn push(&mut self, rec: &impl Serialize) -> Result<()> {
        if self.count > 0 {
            self.out.write_all(b",")?;
        }
        serde_json::to_writer(&mut self.out, rec)?;
        self.count += 1;
        Ok(())
    }

    /// [`Self::push`] for the records formatted by hand.
    fn push_fast(&mut self, rec: &impl FastJson) -> Result<()> {
        self.scratch.clear();
        if self.count > 0 {
            self.scratch.push(b',');
        }
        rec.write_json(&mut self.scratch);
        self.out.write_all(&self.scratch)?;
        self.count += 1;
        Ok(())
    }
}

/// Writes `results.json`. See the module docs.
pub struct JsonSink {
    path: PathBuf,
    spills: BTreeMap<&'static str, Spill>,
    claims: OutputClaims,
    /// The claim of the file was refused: write nothing.
    refused: bool,
    /// API calls of kinds with no category (OpenMP): see [`Sink::notes`].
    unfiled: Unfiled,
    /// The dispatch whose counter samples are being gathered (a
    /// dispatch's samples are consecutive; a batch may end among them).
    counting: Option<CounterCollectionRecord>,
    /// Every (agent, counter id) a sample named, for `counters`.
    counters: BTreeSet<(u64, u32)>,
}

impl JsonSink {
    /// The file goes to `<dir>/[<name>_]results.json`.
    pub fn new(dir: impl AsRef<Path>, name: Option<String>) -> Self {
        Self {
            path: output_path(dir.as_ref(), name.as_deref(), "results.json"),
            spills: BTreeMap::new(),
            claims: OutputClaims::new(),
            refused: false,
            unfiled: Unfiled::default(),
            counting: None,
            counters: BTreeSet::new(),
        }
    }

    /// Writes the dispatch whose samples were being gathered.
    fn close_counting(&mut self) -> Result<()> {
        match self.counting.take() {
            Some(rec) => self.spill(CallbackRecords::COUNTER_COLLECTION)?.push(&rec),
            None => Ok(()),
        }
    }

    fn spill(&mut self, cat: &'static str) -> Result<&mut Spill> {
        if !self.spills.contains_key(cat) {
            let file_name = self
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("results.json");
            let path = self.path.with_file_name(format!(".{file_name}.{cat}.part"));
            let f = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
            self.spills.insert(
                cat,
                Spill {
                    path,
                    out: BufWriter::with_capacity(1 << 16, f),
                    count: 0,
                    scratch: Vec::with_capacity(512),
                },
            );
        }
        Ok(self.spills.get_mut(cat).expect("inserted above"))
    }
}

impl Sink for JsonSink {
    fn name(&self) -> &'static str {
        "json"
    }

    fn set_claims(&mut self, claims: &OutputClaims) {
        self.claims = claims.clone();
    }

    fn begin(&mut self, _ctx: &SinkContext<'_>) -> Result<()> {
        // Claimed now although written at the end, so no stage takes the
        // name in between.
        self.refused = claim_file(&self.claims, &self.path, "JSON", |_| Ok(()))?.is_none();
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, _ctx: &SinkContext<'_>) -> Result<()> {
        if self.refused {
            return Ok(());
        }
        // Every table by name: one the schema gains fails to compile here
        // until JSON writes it or counts it as left out.
        let Batch {
            api_calls: a,
            kernel_dispatches: k,
            memory_copies: c,
            memory_allocations: m,
            scratch_memory: s,
            retirements: r,
            runtime_initializations: n,
            counter_samples,
        } = batch;
        for sample in counter_samples.rows() {
            let d = sample.dispatch();
            let same = self.counting.as_ref().is_some_and(|open| {
                let o = &open.dispatch_data;
                o.dispatch_info.dispatch_id == d.dispatch_id
                    && o.correlation_id.internal == d.correlation_id
                    && o.dispatch_info.agent_id.handle == d.agent_id
            });
            if !same {
                self.close_counting()?;
                self.counting = Some(CounterCollectionRecord {
                    thread_id: d.thread_id,
                    dispatch_data: DispatchData {
                        size: DispatchData::SIZE,
                        correlation_id: Correlation {
                            internal: d.correlation_id,
                            external: d.external_correlation_id,
                        },
                        start_timestamp: d.start,
                        end_timestamp: d.end,
                        dispatch_info: DispatchInfo::of(&d),
                    },
                    records: Vec::new(),
                    stream_id: Handle::default(),
                });
            }
            self.counters.insert((d.agent_id, sample.counter_id));
            if let Some(open) = &mut self.counting {
                open.records.push(CounterValue {
                    counter_id: Handle::from(u64::from(sample.counter_id)),
                    value: sample.value(),
                });
            }
        }
        for i in 0..a.len() {
            let Some(cat) = api_category(a.kind[i]) else {
                self.unfiled.count(a.kind[i]);
                continue;
            };
            self.spill(cat)?.push_fast(&ApiRecord {
                size: ApiRecord::SIZE,
                kind: a.kind[i],
                operation: a.operation[i],
                correlation_id: ApiCorrelation {
                    internal: a.correlation_id[i],
                    external: a.external_correlation_id[i],
                    ancestor: a.ancestor[i],
                },
                start_timestamp: a.start[i],
                end_timestamp: a.end[i],
                thread_id: a.thread_id[i],
            })?;
        }
        for d in k.rows() {
            self.spill(category::KERNEL_DISPATCH)?
                .push_fast(&DispatchRecord {
                    size: DispatchRecord::SIZE,
                    kind: BufferTracingKind::KernelDispatch.raw(),
                    // The only operation buffers carry.
                    operation: kernel_dispatch::COMPLETE,
                    correlation_id: Correlation {
                        internal: d.correlation_id,
                        external: d.external_correlation_id,
                    },
                    thread_id: d.thread_id,
                    start_timestamp: d.start,
                    end_timestamp: d.end,
                    stream_id: Handle::from(d.stream_id),
                    dispatch_info: DispatchInfo::of(&d),
                })?;
        }
        for i in 0..c.len() {
            self.spill(category::MEMORY_COPY)?.push(&CopyRecord {
                size: CopyRecord::SIZE,
                kind: BufferTracingKind::MemoryCopy.raw(),
                operation: c.operation[i],
                correlation_id: Correlation {
                    internal: c.correlation_id[i],
                    external: c.external_correlation_id[i],
                },
                thread_id: c.thread_id[i],
                start_timestamp: c.start[i],
                end_timestamp: c.end[i],
                dst_agent_id: Handle::from(c.dst_agent_id[i]),
                src_agent_id: Handle::from(c.src_agent_id[i]),
                bytes: c.bytes[i],
                dst_address: c.dst_address[i],
                src_address: c.src_address[i],
                stream_id: Handle::from(c.stream_id[i]),
            })?;
        }
        for i in 0..m.len() {
            self.spill(category::MEMORY_ALLOCATION)?
                .push(&AllocationRecord {
                    size: AllocationRecord::SIZE,
                    kind: BufferTracingKind::MemoryAllocation.raw(),
                    operation: m.operation[i],
                    correlation_id: Correlation {
                        internal: m.correlation_id[i],
                        external: m.external_correlation_id[i],
                    },
                    thread_id: m.thread_id[i],
                    start_timestamp: m.start[i],
                    end_timestamp: m.end[i],
                    agent_id: Handle::from(m.agent_id[i]),
                    address: m.address[i],
                    allocation_size: m.allocation_size[i],
                })?;
        }
        for i in 0..s.len() {
            self.spill(category::SCRATCH_MEMORY)?.push(&ScratchRecord {
                size: ScratchRecord::SIZE,
                kind: BufferTracingKind::ScratchMemory.raw(),
                operation: s.operation[i],
                correlation_id: Correlation {
                    internal: s.correlation_id[i],
                    external: s.external_correlation_id[i],
                },
                agent_id: Handle::from(s.agent_id[i]),
                queue_id: Handle::from(s.queue_id[i]),
                thread_id: s.thread_id[i],
                start_timestamp: s.start[i],
                end_timestamp: s.end[i],
                flags: s.flags[i],
                allocation_size: s.allocation_size[i],
            })?;
        }
        for i in 0..r.len() {
            self.spill(category::CORRELATION_ID_RETIREMENT)?
                .push(&RetirementRecord {
                    size: RetirementRecord::SIZE,
                    kind: BufferTracingKind::CorrelationIdRetirement.raw(),
                    timestamp: r.timestamp[i],
                    internal_correlation_id: r.correlation_id[i],
                })?;
        }
        for i in 0..n.len() {
            self.spill(category::RUNTIME_INITIALIZATION)?
                .push(&RuntimeInitRecord {
                    size: RuntimeInitRecord::SIZE,
                    kind: BufferTracingKind::RuntimeInitialization.raw(),
                    operation: n.operation[i],
                    correlation_id: Correlation::default(),
                    thread_id: n.thread_id[i],
                    timestamp: n.timestamp[i],
                    version: n.version[i],
                    instance: n.instance[i],
                })?;
        }
        Ok(())
    }

    fn notes(&mut self) -> Vec<String> {
        self.unfiled.take_notes("JSON")
    }

    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        if self.refused {
            return Ok(Vec::new());
        }
        let path = self.path.clone();
        let result = self.assemble(ctx);
        for (_, spill) in std::mem::take(&mut self.spills) {
            drop(spill.out);
            let _ = std::fs::remove_file(&spill.path);
        }
        result.with_context(|| format!("writing {}", path.display()))?;
        Ok(vec![path])
    }
}

impl JsonSink {
    fn assemble(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        self.close_counting()?;
        for spill in self.spills.values_mut() {
            spill.out.flush()?;
        }
        let mut out = BufWriter::with_capacity(1 << 16, File::create(&self.path)?);
        let [metadata, agents, counters, strings, code_objects, kernel_symbols] =
            Process::HEADER_FIELDS;
        write!(out, "{{\"{}\":[{{\"{metadata}\":", Document::TOOL_FIELD)?;
        let m = ctx.meta;
        serde_json::to_writer(
            &mut out,
            &Metadata {
                command: m.command.clone(),
                fini_time: m.end_ns,
                hostname: m.hostname.clone(),
                init_time: m.start_ns,
                pid: m.pid,
                ppid: m.ppid,
                rank: m.rank,
                tool: "rocwasm".into(),
            },
        )?;
        write!(out, ",\"{agents}\":")?;
        let agents: Vec<Agent> = ctx
            .symbols
            .agents()
            .into_iter()
            .map(|a| Agent::of(&a))
            .collect();
        serde_json::to_writer(&mut out, &agents)?;
        write!(out, ",\"{counters}\":")?;
        let counters: Vec<CounterInfo> = self
            .counters
            .iter()
            .map(|&(agent, id)| CounterInfo {
                agent_id: Handle::from(agent),
                id: Handle::from(u64::from(id)),
                name: ctx
                    .symbols
                    .counter_name(id)
                    .map_or_else(String::new, |n| n.to_string()),
                ..CounterInfo::default()
            })
            .collect();
        serde_json::to_writer(&mut out, &counters)?;
        write!(out, ",\"{strings}\":")?;
        serde_json::to_writer(
            &mut out,
            &Strings {
                buffer_records: string_tables(ctx),
            },
        )?;
        write!(out, ",\"{code_objects}\":")?;
        let code_objects: Vec<CodeObject> = ctx
            .symbols
            .code_objects()
            .into_iter()
            .map(|c| CodeObject::of(&c))
            .collect();
        serde_json::to_writer(&mut out, &code_objects)?;
        write!(out, ",\"{kernel_symbols}\":")?;
        let kernels: Vec<KernelSymbol> = ctx
            .symbols
            .kernels()
            .into_iter()
            .map(|k| KernelSymbol::of(&k))
            .collect();
        serde_json::to_writer(&mut out, &kernels)?;
        write!(
            out,
            ",\"{}\":{{\"{}\":[",
            Process::CALLBACK_FIELD,
            CallbackRecords::COUNTER_COLLECTION
        )?;
        if let Some(spill) = self.spills.get(CallbackRecords::COUNTER_COLLECTION) {
            std::io::copy(&mut File::open(&spill.path)?, &mut out)?;
        }
        out.write_all(b"]}")?;
        write!(out, ",\"{}\":{{", Process::RECORDS_FIELD)?;
        for (i, cat) in CATEGORIES.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write!(out, "\"{cat}\":[")?;
            if let Some(spill) = self.spills.get(cat) {
                let mut f = File::open(&spill.path)?;
                std::io::copy(&mut f, &mut out)?;
            }
            out.write_all(b"]")?;
        }
        out.write_all(b"}}]}\n")?;
        out.flush()?;
        Ok(())
    }
}

/// `strings.buffer_records`: index = kind number, operations indexed by number.
fn string_tables(ctx: &SinkContext<'_>) -> Vec<KindNames> {
    let max_kind = BufferTracingKind::ALL
        .iter()
        .map(|k| k.raw())
        .max()
        .unwrap_or(0);
    (0..=max_kind)
        .map(|kind| {
            let ops = ctx.names.operations(kind);
            let dense_len = ops
                .iter()
                .filter(|(op, _)| *op < SYNTHETIC_BASE)
                .map(|(op, _)| op + 1)
                .max()
                .unwrap_or(0);
            let operations: Vec<String> = (0..dense_len)
                .map(|op| ctx.op_name(kind, op).to_string())
                .collect();
            let mut synthetic_operations: Vec<SyntheticOperation> = ops
                .iter()
                .filter(|(op, _)| *op >= SYNTHETIC_BASE)
                .map(|(op, name)| SyntheticOperation {
                    name: name.to_string(),
                    operation: *op,
                })
                .collect();
            // Markers' messages, interned by the live run's symbol table.
            if kind == BufferTracingKind::MarkerCoreRangeApi.raw() {
                synthetic_operations.extend(ctx.symbols.markers().into_iter().map(
                    |(op, message)| SyntheticOperation {
                        name: message.to_string(),
                        operation: op,
                    },
                ));
            }
            let name = BufferTracingKind::from_raw(kind)
                .map(|k| k.name())
                .unwrap_or("NONE");
            KindNames {
                kind: name.to_string(),
                operations,
                synthetic_operations,
            }
        })
        .collect()
}
