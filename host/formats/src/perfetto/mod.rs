//! Perfetto trace output (`.pftrace`): a stream of `TracePacket`s with track
//! events, openable in ui.perfetto.dev and by `trace_processor`.
//!
//! Tracks (each described once, before its first event):
//! - the process track (pid, command line);
//! - a thread track per OS thread, child of the process: HIP, HSA and marker
//!   calls are slices there (nested calls nest);
//! - an agent track per agent, child of the process, with a queue track per
//!   queue (kernels) and a track per copy direction and stream (copies);
//! - counter tracks per agent for memory allocated and scratch memory held,
//!   as rocprofv3 draws them ([`memory`]), written when the trace ends.
//!
//! Flows: a kernel or copy carries flow id `f(correlation id)`; so does the
//! API call with that correlation id (the launch), and Perfetto draws an
//! arrow from the call to the kernel. Because a call may be delivered before
//! or after its kernel, calls whose correlation id has no kernel yet wait in a
//! bounded queue ([`PENDING_API_LIMIT`]); calls that age out are written
//! without a flow. A kernel or copy delivered before its call leaves its
//! correlation id behind for the call; one whose call was waiting does not
//! (the usual order in a live run, where a call's record completes before
//! its kernel's), so memory grows only with the calls still to come.
//!
//! Names, categories and argument names are interned (Perfetto's
//! `InternedData`, scoped to the file's packet sequence): each is written
//! once, in the first packet that uses it, and slices carry its iid. Slices
//! are encoded by `wire`; the rarer track descriptors through the
//! `proto` messages.
//!
//! Merging: every track uuid, flow id and the `trusted_packet_sequence_id`
//! derive from [`RunMetadata::process_hash`] (host + pid + start), so the
//! files of several processes can simply be concatenated (`cat a b > c`):
//! a trace file is a bare sequence of packets.

mod memory;
pub(crate) mod proto;
mod wire;

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use prost::Message;
use rocwasm_core::{ApiCall, Batch, BufferTracingKind};
use rustc_hash::FxHashMap as HashMap;

use crate::names::kind_name;
use crate::paths::output_path;
use crate::sink::claim_file;
use crate::sink::{hash_ids, RunMetadata, Sink, SinkContext};
use crate::stats::kernel_display_name;
use crate::unfiled::Unfiled;
use memory::MemoryCounters;
use proto::*;
use rocwasm_plan::claims::OutputClaims;
use wire::{Arg, SliceEncoder};

/// Bytes gathered before one `write(2)` to the file.
const WRITE_CHUNK: usize = 256 << 10;

/// Hashing of correlation ids for the maps of calls and kernels waiting for
/// each other.
///
/// Why not the usual hash: one counter per process issues the ids, so the
/// keys in these maps at any time are a window of nearly consecutive
/// integers that slides forward; with a mixing hash every lookup in the
/// 65 536-call map was a cache miss (a quarter of the writer's profile).
/// Here the low bits of the id pick the bucket (neighbours stay neighbours,
/// and the oldest calls age out in a sequential sweep), with the upper half
/// folded in (ids that carry a process or rank in their upper bits would
/// otherwise share buckets; folding lower bits too cost a seventh of the
/// writer's speed, as neighbours stopped being neighbours); the id's low 7
/// bits are repeated in the top 7, which `hashbrown` uses as the tag that
/// tells the entries of one group apart. Ids with another pattern still
/// hash correctly, only with more probing.
#[derive(Default, Clone, Copy)]
struct CorrelationIdHasher(u64);

impl std::hash::Hasher for CorrelationIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed here; fold anything else in regardless.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, id: u64) {
        let bucket = id ^ (id >> 32);
        self.0 = bucket ^ (id << 57);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type CorrelationIds = std::hash::BuildHasherDefault<CorrelationIdHasher>;

/// API calls waiting for their kernel before being written without a flow.
pub const PENDING_API_LIMIT: usize = 1 << 16;

// Track classes, hashed into uuids.
const T_PROCESS: u64 = 1;
const T_THREAD: u64 = 2;
const T_AGENT: u64 = 3;
const T_QUEUE: u64 = 4;
const T_COPY: u64 = 5;
const FLOW: u64 = 6;
const T_MEMORY: u64 = 7;
const T_COUNTER: u64 = 8;

/// Writes a `.pftrace` file. See the module docs.
pub struct PerfettoSink {
    path: PathBuf,
    out: Option<File>,
    /// Encoded packets not yet written to `out`.
    buf: Vec<u8>,
    claims: OutputClaims,
    /// The claim of the file was refused: write nothing.
    refused: bool,
    seed: u64,
    sequence_id: u32,
    first_packet: bool,
    pid: u32,
    /// The uuid of every track described so far, by class and ids.
    tracks: HashMap<[u64; 4], u64>,
    /// The base flow ids derive from (see [`Self::flow_id`]).
    flow_seed: u64,
    /// Correlation ids of kernels and copies written before their call.
    async_ids: std::collections::HashSet<u64, CorrelationIds>,
    pending: std::collections::HashMap<u64, ApiCall, CorrelationIds>,
    pending_order: VecDeque<u64>,
    /// Interned name ids of operations, by kind and operation.
    op_names: HashMap<(u32, u32), u64>,
    /// Interned category ids (kind names), by kind.
    categories: HashMap<u32, u64>,
    /// Interned name ids of kernels whose symbol is known.
    kernel_names: HashMap<u64, u64>,
    slices: SliceEncoder,
    /// Records with no place in the trace: see [`Sink::notes`].
    unfiled: Unfiled,
    /// Memory allocation and scratch memory steps, drawn at the end.
    memory: MemoryCounters,
}

impl PerfettoSink {
    /// The file is `<dir>/[<name>_]results.pftrace`.
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self::at_path(output_path(&dir.into(), name.as_deref(), "results.pftrace"))
    }

    /// A sink writing exactly `path`, replacing any file there (to merge
    /// processes, concatenate their files; see the module docs).
    pub fn at_path(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            out: None,
            buf: Vec::new(),
            claims: OutputClaims::new(),
            refused: false,
            seed: 0,
            sequence_id: 1,
            first_packet: true,
            pid: 0,
            tracks: HashMap::default(),
            flow_seed: 0,
            async_ids: Default::default(),
            pending: Default::default(),
            pending_order: VecDeque::new(),
            op_names: HashMap::default(),
            categories: HashMap::default(),
            kernel_names: HashMap::default(),
            slices: SliceEncoder::default(),
            unfiled: Unfiled::default(),
            memory: MemoryCounters::default(),
        }
    }

    fn uuid(&self, class: u64, ids: &[u64]) -> u64 {
        // Tracks have at most three ids: no allocation per record.
        let mut all = [0u64; 4];
        all[0] = class;
        all[1..=ids.len()].copy_from_slice(ids);
        hash_ids(self.seed, &all[..=ids.len()])
    }

    /// A track's uuid, and whether this is its first use (it needs its
    /// descriptor written). Remembered: the uuid's hash runs once a track.
    fn track_uuid(&mut self, class: u64, ids: &[u64]) -> (u64, bool) {
        let mut key = [0u64; 4];
        key[0] = class;
        key[1..=ids.len()].copy_from_slice(ids);
        if let Some(&uuid) = self.tracks.get(&key) {
            return (uuid, false);
        }
        let uuid = self.uuid(class, ids);
        self.tracks.insert(key, uuid);
        (uuid, true)
    }

    /// The flow id of a correlation id: the process's flow seed mixed with
    /// the id by SplitMix64's finaliser, a bijection, so two correlation ids
    /// of one process never share a flow, and the seed (from the process
    /// hash) keeps concatenated processes apart.
    fn flow_id(&self, correlation_id: u64) -> u64 {
        let mut z = self.flow_seed ^ correlation_id;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn emit(&mut self, mut packet: TracePacket) -> Result<()> {
        packet.trusted_packet_sequence_id = Some(self.sequence_id);
        if self.first_packet {
            packet.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED);
            packet.first_packet_on_sequence = Some(true);
            self.first_packet = false;
        }
        // Field 1 (Trace.packet), wire type 2 (length-delimited).
        self.buf.push(0x0a);
        packet.encode_length_delimited(&mut self.buf)?;
        self.write_out(WRITE_CHUNK)
    }

    /// Writes the buffered packets once there are at least `min` bytes.
    fn write_out(&mut self, min: usize) -> Result<()> {
        if self.buf.len() < min {
            return Ok(());
        }
        let out = self
            .out
            .as_mut()
            .context("perfetto sink used before begin()")?;
        out.write_all(&self.buf)
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.buf.clear();
        Ok(())
    }

    /// Writes the slice the encoder holds (begun, with its arguments) from
    /// `start` to `end` on `track`.
    fn close_slice(&mut self, track: u64, start: u64, end: u64) -> Result<()> {
        self.slices.write(&mut self.buf, self.sequence_id, start);
        self.slices.end(track);
        self.slices
            .write(&mut self.buf, self.sequence_id, end.max(start));
        self.write_out(WRITE_CHUNK)
    }

    /// The interned id of an operation's name (an API function, a copy
    /// direction).
    fn operation_name(&mut self, ctx: &SinkContext<'_>, kind: u32, operation: u32) -> u64 {
        if let Some(&iid) = self.op_names.get(&(kind, operation)) {
            return iid;
        }
        let iid = self.slices.name(&ctx.op_name(kind, operation));
        self.op_names.insert((kind, operation), iid);
        iid
    }

    /// The interned id of a kind's name as a category.
    fn category(&mut self, kind: u32) -> u64 {
        if let Some(&iid) = self.categories.get(&kind) {
            return iid;
        }
        let iid = self.slices.category(&kind_name(kind));
        self.categories.insert(kind, iid);
        iid
    }

    fn describe(&mut self, desc: TrackDescriptor) -> Result<()> {
        self.emit(TracePacket {
            track_descriptor: Some(desc),
            ..Default::default()
        })
    }

    fn process_uuid(&self) -> u64 {
        self.uuid(T_PROCESS, &[])
    }

    fn thread_track(&mut self, tid: u64) -> Result<u64> {
        let (uuid, new) = self.track_uuid(T_THREAD, &[tid]);
        if new {
            let desc = TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(self.process_uuid()),
                thread: Some(ThreadDescriptor {
                    pid: Some(self.pid as i32),
                    tid: Some(tid as i64),
                    thread_name: Some(format!("thread {tid}")),
                }),
                ..Default::default()
            };
            self.describe(desc)?;
        }
        Ok(uuid)
    }

    fn agent_track(&mut self, ctx: &SinkContext<'_>, agent: u64) -> Result<u64> {
        let (uuid, new) = self.track_uuid(T_AGENT, &[agent]);
        if new {
            let name = match ctx.symbols.agent(agent) {
                Some(a) => format!("Agent {} ({})", a.node_id, a.name),
                None => format!("Agent {agent}"),
            };
            let desc = TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(self.process_uuid()),
                name: Some(name),
                ..Default::default()
            };
            self.describe(desc)?;
        }
        Ok(uuid)
    }

    fn child_track(
        &mut self,
        parent: u64,
        class: u64,
        ids: &[u64],
        name: impl FnOnce() -> String,
    ) -> Result<u64> {
        let (uuid, new) = self.track_uuid(class, ids);
        if new {
            let desc = TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(parent),
                name: Some(name()),
                ..Default::default()
            };
            self.describe(desc)?;
        }
        Ok(uuid)
    }

    /// The track of hardware counter `counter` (a counter-name id) on
    /// `agent`: a child of the agent's track, `NAME on Agent [N] (GPU)`.
    fn counter_track(&mut self, ctx: &SinkContext<'_>, agent: u64, counter: u32) -> Result<u64> {
        let parent = self.agent_track(ctx, agent)?;
        let (uuid, new) = self.track_uuid(T_COUNTER, &[agent, u64::from(counter)]);
        if new {
            let name = ctx
                .symbols
                .counter_name(counter)
                .map_or_else(|| format!("counter_{counter}"), |n| n.to_string());
            let on = match ctx.symbols.agent(agent) {
                Some(a) => format!("Agent [{}] (GPU)", a.node_id),
                None => format!("agent {agent}"),
            };
            self.describe(TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(parent),
                name: Some(format!("{name} on {on}")),
                counter: Some(CounterDescriptor {
                    unit: None,
                    is_incremental: Some(false),
                }),
                ..Default::default()
            })?;
        }
        Ok(uuid)
    }

    /// The memory counter tracks ([`memory`]): one per agent and counter,
    /// a child of the agent's track, one value per record.
    fn write_memory(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        for ((agent, counter), values) in self.memory.tracks() {
            let parent = self.agent_track(ctx, agent)?;
            let (uuid, new) = self.track_uuid(T_MEMORY, &[agent, counter as u64]);
            if new {
                let on = match ctx.symbols.agent(agent) {
                    Some(a) => format!(
                        "Agent [{}] ({})",
                        a.node_id,
                        match a.agent_type {
                            rocwasm_core::AgentType::Cpu => "CPU",
                            rocwasm_core::AgentType::Gpu => "GPU",
                        }
                    ),
                    None => format!("agent {agent}"),
                };
                self.describe(TrackDescriptor {
                    uuid: Some(uuid),
                    parent_uuid: Some(parent),
                    name: Some(format!("{} on {on}", counter.title())),
                    counter: Some(CounterDescriptor {
                        unit: Some(UNIT_SIZE_BYTES),
                        is_incremental: Some(false),
                    }),
                    ..Default::default()
                })?;
            }
            for (at, value) in values {
                self.slices.counter(uuid, value);
                self.slices.write(&mut self.buf, self.sequence_id, at);
                self.write_out(WRITE_CHUNK)?;
            }
        }
        Ok(())
    }

    fn write_api(&mut self, ctx: &SinkContext<'_>, call: ApiCall, with_flow: bool) -> Result<()> {
        let track = self.thread_track(call.thread_id)?;
        let name = self.operation_name(ctx, call.kind, call.operation);
        let category = self.category(call.kind);
        let flow = with_flow.then(|| self.flow_id(call.correlation_id));
        self.slices.begin(track, category, name, flow);
        self.slices
            .uint_arg(Arg::CorrelationId, call.correlation_id);
        self.close_slice(track, call.start, call.end)
    }

    fn flush_pending(&mut self, ctx: &SinkContext<'_>, keep: usize) -> Result<()> {
        while self.pending.len() > keep {
            let Some(corr) = self.pending_order.pop_front() else {
                break;
            };
            if let Some(call) = self.pending.remove(&corr) {
                self.write_api(ctx, call, false)?;
            }
        }
        Ok(())
    }

    fn async_seen(&mut self, ctx: &SinkContext<'_>, corr: u64) -> Result<()> {
        if let Some(call) = self.pending.remove(&corr) {
            // Its call is written now: nothing to remember.
            return self.write_api(ctx, call, true);
        }
        self.async_ids.insert(corr);
        Ok(())
    }
}

fn process_name(meta: &RunMetadata) -> String {
    meta.command
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
        .unwrap_or_else(|| format!("pid {}", meta.pid))
}

impl Sink for PerfettoSink {
    fn name(&self) -> &'static str {
        "perfetto"
    }

    fn set_claims(&mut self, claims: &OutputClaims) {
        self.claims = claims.clone();
    }

    fn begin(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        let opened = claim_file(&self.claims, &self.path, "Perfetto", |p| {
            File::create(p).with_context(|| format!("creating {}", p.display()))
        })?;
        let Some(f) = opened else {
            self.refused = true;
            return Ok(());
        };
        self.out = Some(f);
        self.buf = Vec::with_capacity(WRITE_CHUNK + (64 << 10));
        self.seed = ctx.meta.process_hash();
        self.pid = ctx.meta.pid;
        // Sequence id 0 is reserved by Perfetto; keep it well clear of the
        // small ids a tracing service hands out.
        self.sequence_id = ((self.seed >> 32) as u32 ^ self.seed as u32) | 0x8000_0000;
        self.flow_seed = self.uuid(FLOW, &[]);
        let (uuid, _) = self.track_uuid(T_PROCESS, &[]);
        let desc = TrackDescriptor {
            uuid: Some(uuid),
            process: Some(ProcessDescriptor {
                pid: Some(ctx.meta.pid as i32),
                cmdline: ctx.meta.command.clone(),
                process_name: Some(process_name(ctx.meta)),
            }),
            ..Default::default()
        };
        self.describe(desc)
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        if self.refused {
            return Ok(());
        }
        // Every table by name: one the schema gains fails to compile here
        // until Perfetto draws it or counts it as left out.
        let Batch {
            api_calls: a,
            kernel_dispatches: k,
            memory_copies: c,
            memory_allocations,
            scratch_memory,
            retirements,
            runtime_initializations,
            counter_samples: p,
        } = batch;
        self.unfiled
            .count_unplaced(retirements, runtime_initializations);
        self.memory.add(memory_allocations, scratch_memory);
        // Hardware counters: a counter track per agent and counter, its
        // value set at each dispatch's start.
        for i in 0..p.len() {
            let track = self.counter_track(ctx, p.agent_id[i], p.counter_id[i])?;
            self.slices
                .double_counter(track, f64::from_bits(p.value[i]));
            self.slices
                .write(&mut self.buf, self.sequence_id, p.start[i]);
            self.write_out(WRITE_CHUNK)?;
        }
        let dispatch_kind = BufferTracingKind::KernelDispatch.raw();
        let copy_kind = BufferTracingKind::MemoryCopy.raw();
        for i in 0..k.len() {
            let agent = self.agent_track(ctx, k.agent_id[i])?;
            let queue =
                self.child_track(agent, T_QUEUE, &[k.agent_id[i], k.queue_id[i]], || {
                    format!("Queue {}", k.queue_id[i])
                })?;
            let kid = k.kernel_id[i];
            let name = match self.kernel_names.get(&kid) {
                Some(&iid) => iid,
                None => {
                    let iid = self.slices.name(&kernel_display_name(ctx.symbols, kid));
                    // A kernel without its symbol yet may get one later.
                    if ctx.symbols.kernel(kid).is_some() {
                        self.kernel_names.insert(kid, iid);
                    }
                    iid
                }
            };
            let corr = k.correlation_id[i];
            let flow = Some(self.flow_id(corr));
            let category = self.category(dispatch_kind);
            self.slices.begin(queue, category, name, flow);
            self.slices.uint_arg(Arg::CorrelationId, corr);
            self.slices.uint_arg(Arg::KernelId, kid);
            self.slices.uint_arg(Arg::DispatchId, k.dispatch_id[i]);
            self.slices
                .dims_arg(Arg::Grid, k.grid_x[i], k.grid_y[i], k.grid_z[i]);
            self.slices.dims_arg(
                Arg::Workgroup,
                k.workgroup_x[i],
                k.workgroup_y[i],
                k.workgroup_z[i],
            );
            self.close_slice(queue, k.start[i], k.end[i])?;
            self.async_seen(ctx, corr)?;
        }

        for i in 0..c.len() {
            // Host-to-device copies sit on the destination agent, others on the source.
            let agent_id = if c.operation[i] == 2 {
                c.dst_agent_id[i]
            } else {
                c.src_agent_id[i]
            };
            let agent = self.agent_track(ctx, agent_id)?;
            let direction = ctx.op_name(copy_kind, c.operation[i]);
            let track = self.child_track(
                agent,
                T_COPY,
                &[agent_id, u64::from(c.operation[i]), c.stream_id[i]],
                || format!("{direction} (stream {})", c.stream_id[i]),
            )?;
            let name = self.operation_name(ctx, copy_kind, c.operation[i]);
            let corr = c.correlation_id[i];
            let flow = Some(self.flow_id(corr));
            let category = self.category(copy_kind);
            self.slices.begin(track, category, name, flow);
            self.slices.uint_arg(Arg::CorrelationId, corr);
            self.slices.uint_arg(Arg::Bytes, c.bytes[i]);
            self.close_slice(track, c.start[i], c.end[i])?;
            self.async_seen(ctx, corr)?;
        }

        for call in a.rows() {
            if self.async_ids.remove(&call.correlation_id) {
                self.write_api(ctx, call, true)?;
            } else if call.correlation_id == 0 || self.pending.contains_key(&call.correlation_id) {
                self.write_api(ctx, call, false)?;
            } else {
                self.pending.insert(call.correlation_id, call);
                self.pending_order.push_back(call.correlation_id);
            }
        }
        self.flush_pending(ctx, PENDING_API_LIMIT)
    }

    fn notes(&mut self) -> Vec<String> {
        let mut notes = self.unfiled.take_notes("Perfetto");
        notes.extend(self.memory.notes());
        notes
    }

    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        if self.refused {
            return Ok(Vec::new());
        }
        self.flush_pending(ctx, 0)?;
        self.write_memory(ctx)?;
        self.write_out(0)?;
        self.out
            .take()
            .context("perfetto sink finished before begin()")?;
        Ok(vec![self.path.clone()])
    }
}
