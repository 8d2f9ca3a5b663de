//! rocprofv3-style `results.json`.
//!
//! Layout (one object per process under the top key `rocprofiler-sdk-tool`):
//!
//! ```text
//! { "rocprofiler-sdk-tool": [ {
//!     "metadata": { pid, ppid, hostname, command, init_time, fini_time },
//!     "agents": [ { id: {handle}, type, node_id, logical_node_id, name, product_name } ],
//!     "strings": { "buffer_records": [ { kind: NAME, operations: [NAME…] } ] },   // index = kind number
//!     "code_objects": [ … ], "kernel_symbols": [ … ],
//!     "buffer_records": { kernel_dispatch, hip_api, hsa_api, marker_api, rccl_api,
//!                         memory_copy, memory_allocation, scratch_memory }
//! } ] }
//! ```
//!
//! Records carry the SDK's C field names (`correlation_id: {internal,
//! external}`, `start_timestamp`, `dispatch_info: {agent_id: {handle}, …}`) and
//! kinds and operations as numbers; the `strings` tables name them, which is
//! how a reader of another SDK version maps them (numbers shift between
//! releases). Operations registered under synthetic numbers (see
//! [`crate::names`]) are listed in a `synthetic_operations` array beside
//! `operations`.
//!
//! Streaming: records go to one temporary file per category as they arrive
//! (no value tree is ever built); `finish` writes the header objects, which
//! need the complete symbol tables, and then copies the record files in.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rocwasm_core::{AgentType, ApiFamily, Batch, BufferTracingKind, CodeObjectStorage};
use serde::Serialize;
use serde_json::json;

use crate::claims::{OutputClaims, Producer};
use crate::names::SYNTHETIC_BASE;
use crate::paths::output_path;
use crate::sink::{Sink, SinkContext};

/// `buffer_records` categories in file order.
pub const CATEGORIES: [&str; 8] = [
    "kernel_dispatch",
    "hip_api",
    "hsa_api",
    "marker_api",
    "rccl_api",
    "memory_copy",
    "memory_allocation",
    "scratch_memory",
];

/// The `buffer_records` category of an API kind.
pub fn api_category(kind: u32) -> Option<&'static str> {
    match ApiFamily::of_raw(kind)? {
        f @ (ApiFamily::Hip | ApiFamily::Hsa | ApiFamily::Marker | ApiFamily::Rccl) => {
            Some(f.category())
        }
        ApiFamily::Rocdecode | ApiFamily::Rocjpeg => None,
    }
}

#[derive(Serialize)]
struct Handle {
    handle: u64,
}

#[derive(Serialize)]
struct Corr {
    internal: u64,
    external: u64,
}

#[derive(Serialize)]
struct Dim3 {
    x: u32,
    y: u32,
    z: u32,
}

#[derive(Serialize)]
struct ApiRecord {
    size: u32,
    kind: u32,
    operation: u32,
    correlation_id: ApiCorr,
    start_timestamp: u64,
    end_timestamp: u64,
    thread_id: u64,
}

#[derive(Serialize)]
struct ApiCorr {
    internal: u64,
    external: u64,
    ancestor: u64,
}

#[derive(Serialize)]
struct DispatchInfo {
    size: u32,
    agent_id: Handle,
    queue_id: Handle,
    kernel_id: u64,
    dispatch_id: u64,
    private_segment_size: u32,
    group_segment_size: u32,
    workgroup_size: Dim3,
    grid_size: Dim3,
}

#[derive(Serialize)]
struct DispatchRecord {
    size: u32,
    kind: u32,
    operation: u32,
    correlation_id: Corr,
    thread_id: u64,
    start_timestamp: u64,
    end_timestamp: u64,
    stream_id: Handle,
    dispatch_info: DispatchInfo,
}

#[derive(Serialize)]
struct CopyRecord {
    size: u32,
    kind: u32,
    operation: u32,
    correlation_id: Corr,
    thread_id: u64,
    start_timestamp: u64,
    end_timestamp: u64,
    dst_agent_id: Handle,
    src_agent_id: Handle,
    bytes: u64,
    dst_address: u64,
    src_address: u64,
    stream_id: Handle,
}

#[derive(Serialize)]
struct AllocRecord {
    size: u32,
    kind: u32,
    operation: u32,
    correlation_id: Corr,
    thread_id: u64,
    start_timestamp: u64,
    end_timestamp: u64,
    agent_id: Handle,
    address: u64,
    allocation_size: u64,
}

#[derive(Serialize)]
struct ScratchRecord {
    size: u32,
    kind: u32,
    operation: u32,
    correlation_id: Corr,
    agent_id: Handle,
    queue_id: Handle,
    thread_id: u64,
    start_timestamp: u64,
    end_timestamp: u64,
    flags: u32,
    allocation_size: u64,
}

/// One category's spill file: records separated by commas.
struct Spill {
    path: PathBuf,
    out: BufWriter<File>,
    count: u64,
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
}

/// Writes `results.json`. See the module docs.
pub struct JsonSink {
    path: PathBuf,
    spills: BTreeMap<&'static str, Spill>,
    claims: OutputClaims,
    /// The claim of the file was refused: write nothing.
    refused: bool,
}

impl JsonSink {
    /// The file goes to `<dir>/[<name>_]results.json`.
    pub fn new(dir: impl AsRef<Path>, name: Option<String>) -> Self {
        Self {
            path: output_path(dir.as_ref(), name.as_deref(), "results.json"),
            spills: BTreeMap::new(),
            claims: OutputClaims::new(),
            refused: false,
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
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        // Claimed now although written at the end, so no stage takes the
        // name in between.
        self.refused = self
            .claims
            .claim(&self.path, &Producer::Sink("JSON"))
            .is_err();
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, _ctx: &SinkContext<'_>) -> Result<()> {
        if self.refused {
            return Ok(());
        }
        let a = &batch.api_calls;
        for i in 0..a.len() {
            let Some(cat) = api_category(a.kind[i]) else {
                continue;
            };
            self.spill(cat)?.push(&ApiRecord {
                size: 64,
                kind: a.kind[i],
                operation: a.operation[i],
                correlation_id: ApiCorr {
                    internal: a.correlation_id[i],
                    external: a.external_correlation_id[i],
                    ancestor: a.ancestor[i],
                },
                start_timestamp: a.start[i],
                end_timestamp: a.end[i],
                thread_id: a.thread_id[i],
            })?;
        }
        let k = &batch.kernel_dispatches;
        for i in 0..k.len() {
            self.spill("kernel_dispatch")?.push(&DispatchRecord {
                size: 184,
                kind: BufferTracingKind::KernelDispatch.raw(),
                operation: 2, // KERNEL_DISPATCH_COMPLETE: the only operation buffers carry
                correlation_id: Corr {
                    internal: k.correlation_id[i],
                    external: k.external_correlation_id[i],
                },
                thread_id: k.thread_id[i],
                start_timestamp: k.start[i],
                end_timestamp: k.end[i],
                stream_id: Handle {
                    handle: k.stream_id[i],
                },
                dispatch_info: DispatchInfo {
                    size: 128,
                    agent_id: Handle {
                        handle: k.agent_id[i],
                    },
                    queue_id: Handle {
                        handle: k.queue_id[i],
                    },
                    kernel_id: k.kernel_id[i],
                    dispatch_id: k.dispatch_id[i],
                    private_segment_size: k.private_segment_size[i],
                    group_segment_size: k.group_segment_size[i],
                    workgroup_size: Dim3 {
                        x: k.workgroup_x[i],
                        y: k.workgroup_y[i],
                        z: k.workgroup_z[i],
                    },
                    grid_size: Dim3 {
                        x: k.grid_x[i],
                        y: k.grid_y[i],
                        z: k.grid_z[i],
                    },
                },
            })?;
        }
        let c = &batch.memory_copies;
        for i in 0..c.len() {
            self.spill("memory_copy")?.push(&CopyRecord {
                size: 96,
                kind: BufferTracingKind::MemoryCopy.raw(),
                operation: c.operation[i],
                correlation_id: Corr {
                    internal: c.correlation_id[i],
                    external: c.external_correlation_id[i],
                },
                thread_id: c.thread_id[i],
                start_timestamp: c.start[i],
                end_timestamp: c.end[i],
                dst_agent_id: Handle {
                    handle: c.dst_agent_id[i],
                },
                src_agent_id: Handle {
                    handle: c.src_agent_id[i],
                },
                bytes: c.bytes[i],
                dst_address: c.dst_address[i],
                src_address: c.src_address[i],
                stream_id: Handle {
                    handle: c.stream_id[i],
                },
            })?;
        }
        let m = &batch.memory_allocations;
        for i in 0..m.len() {
            self.spill("memory_allocation")?.push(&AllocRecord {
                size: 88,
                kind: BufferTracingKind::MemoryAllocation.raw(),
                operation: m.operation[i],
                correlation_id: Corr {
                    internal: m.correlation_id[i],
                    external: m.external_correlation_id[i],
                },
                thread_id: m.thread_id[i],
                start_timestamp: m.start[i],
                end_timestamp: m.end[i],
                agent_id: Handle {
                    handle: m.agent_id[i],
                },
                address: m.address[i],
                allocation_size: m.allocation_size[i],
            })?;
        }
        let s = &batch.scratch_memory;
        for i in 0..s.len() {
            self.spill("scratch_memory")?.push(&ScratchRecord {
                size: 96,
                kind: BufferTracingKind::ScratchMemory.raw(),
                operation: s.operation[i],
                correlation_id: Corr {
                    internal: s.correlation_id[i],
                    external: s.external_correlation_id[i],
                },
                agent_id: Handle {
                    handle: s.agent_id[i],
                },
                queue_id: Handle {
                    handle: s.queue_id[i],
                },
                thread_id: s.thread_id[i],
                start_timestamp: s.start[i],
                end_timestamp: s.end[i],
                flags: s.flags[i],
                allocation_size: s.allocation_size[i],
            })?;
        }
        Ok(())
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
        for spill in self.spills.values_mut() {
            spill.out.flush()?;
        }
        let mut out = BufWriter::with_capacity(1 << 16, File::create(&self.path)?);
        out.write_all(b"{\"rocprofiler-sdk-tool\":[{\"metadata\":")?;
        let m = ctx.meta;
        serde_json::to_writer(
            &mut out,
            &json!({
                "pid": m.pid, "ppid": m.ppid, "hostname": m.hostname, "command": m.command,
                "init_time": m.start_ns, "fini_time": m.end_ns, "rank": m.rank, "tool": "rocwasm",
            }),
        )?;
        out.write_all(b",\"agents\":")?;
        let agents: Vec<_> = ctx
            .symbols
            .agents()
            .into_iter()
            .map(|a| {
                json!({
                    "size": 0, "id": {"handle": a.id},
                    "type": match a.agent_type { AgentType::Cpu => 1, AgentType::Gpu => 2 },
                    "node_id": a.node_id, "logical_node_id": a.node_id,
                    "name": a.name, "product_name": a.product_name,
                })
            })
            .collect();
        serde_json::to_writer(&mut out, &agents)?;
        out.write_all(b",\"strings\":")?;
        serde_json::to_writer(&mut out, &json!({ "buffer_records": string_tables(ctx) }))?;
        out.write_all(b",\"code_objects\":")?;
        let code_objects: Vec<_> = ctx
            .symbols
            .code_objects()
            .into_iter()
            .map(|c| {
                let (storage_type, fd, base, size) = match c.storage {
                    CodeObjectStorage::None => (0, -1, 0, 0),
                    CodeObjectStorage::File { fd } => (1, fd, 0, 0),
                    CodeObjectStorage::Memory { base, size } => (2, -1, base, size),
                };
                json!({
                    "size": 0, "code_object_id": c.id, "rocp_agent": {"handle": c.agent_id},
                    "uri": c.uri, "load_base": c.load_base, "load_size": c.load_size,
                    "load_delta": c.load_delta, "storage_type": storage_type, "storage_file": fd,
                    "memory_base": base, "memory_size": size,
                })
            })
            .collect();
        serde_json::to_writer(&mut out, &code_objects)?;
        out.write_all(b",\"kernel_symbols\":")?;
        let kernels: Vec<_> = ctx
            .symbols
            .kernels()
            .into_iter()
            .map(|k| {
                json!({
                    "size": 0, "kernel_id": k.id, "code_object_id": k.code_object_id,
                    "kernel_name": k.name, "formatted_kernel_name": k.demangled_name,
                    "demangled_kernel_name": k.demangled_name, "truncated_kernel_name": k.demangled_name,
                    "kernel_object": k.kernel_object, "kernarg_segment_size": k.kernarg_segment_size,
                    "kernarg_segment_alignment": k.kernarg_segment_alignment,
                    "group_segment_size": k.group_segment_size,
                    "private_segment_size": k.private_segment_size, "sgpr_count": k.sgpr_count,
                    "arch_vgpr_count": k.arch_vgpr_count, "accum_vgpr_count": k.accum_vgpr_count,
                    "kernel_code_entry_byte_offset": k.kernel_code_entry_byte_offset,
                    "kernel_address": {"handle": k.kernel_address},
                })
            })
            .collect();
        serde_json::to_writer(&mut out, &kernels)?;
        out.write_all(b",\"buffer_records\":{")?;
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
fn string_tables(ctx: &SinkContext<'_>) -> Vec<serde_json::Value> {
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
                .map(|op| ctx.names.name(kind, op).to_string())
                .collect();
            let synthetic: Vec<_> = ops
                .iter()
                .filter(|(op, _)| *op >= SYNTHETIC_BASE)
                .map(|(op, name)| json!({"operation": op, "name": &**name}))
                .collect();
            let name = BufferTracingKind::from_raw(kind)
                .map(|k| k.name())
                .unwrap_or("NONE");
            let mut v = json!({"kind": name, "operations": operations});
            if !synthetic.is_empty() {
                v["synthetic_operations"] = json!(synthetic);
            }
            v
        })
        .collect()
}
