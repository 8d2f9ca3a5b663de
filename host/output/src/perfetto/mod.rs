//! Perfetto trace output (`.pftrace`): a stream of `TracePacket`s with track
//! events, openable in ui.perfetto.dev and by `trace_processor`.
//!
//! Tracks (each described once, before its first event):
//! - the process track (pid, command line);
//! - a thread track per OS thread, child of the process: HIP, HSA and marker
//!   calls are slices there (nested calls nest);
//! - an agent track per agent, child of the process, with a queue track per
//!   queue (kernels) and a track per copy direction and stream (copies).
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
//! Merging: every track uuid, flow id and the `trusted_packet_sequence_id`
//! derive from [`RunMetadata::process_hash`] (host + pid + start), so the
//! files of several processes can simply be concatenated (`cat a b > c`):
//! a trace file is a bare sequence of packets.

pub(crate) mod proto;

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use prost::Message;
use rocwasm_core::{ApiCall, Batch, BufferTracingKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::claims::{OutputClaims, Producer};
use crate::names::kind_name;
use crate::paths::output_path;
use crate::sink::{hash_ids, RunMetadata, Sink, SinkContext};
use crate::stats::kernel_display_name;
use crate::unfiled::Unfiled;
use proto::*;

/// API calls waiting for their kernel before being written without a flow.
pub const PENDING_API_LIMIT: usize = 1 << 16;

// Track classes, hashed into uuids.
const T_PROCESS: u64 = 1;
const T_THREAD: u64 = 2;
const T_AGENT: u64 = 3;
const T_QUEUE: u64 = 4;
const T_COPY: u64 = 5;
const FLOW: u64 = 6;

/// Writes a `.pftrace` file. See the module docs.
pub struct PerfettoSink {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    claims: OutputClaims,
    /// The claim of the file was refused: write nothing.
    refused: bool,
    seed: u64,
    sequence_id: u32,
    first_packet: bool,
    pid: u32,
    described: HashSet<u64>,
    /// Correlation ids of kernels and copies written before their call.
    async_ids: HashSet<u64>,
    pending: HashMap<u64, ApiCall>,
    pending_order: VecDeque<u64>,
    names: HashMap<(u32, u32), String>,
    /// Kind names by kind (slice categories).
    categories: HashMap<u32, String>,
    kernel_names: HashMap<u64, String>,
    /// One packet's encoding, reused.
    scratch: Vec<u8>,
    /// Records with no place in the trace: see [`Sink::notes`].
    unfiled: Unfiled,
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
            claims: OutputClaims::new(),
            refused: false,
            seed: 0,
            sequence_id: 1,
            first_packet: true,
            pid: 0,
            described: HashSet::default(),
            async_ids: HashSet::default(),
            pending: HashMap::default(),
            pending_order: VecDeque::new(),
            names: HashMap::default(),
            categories: HashMap::default(),
            kernel_names: HashMap::default(),
            scratch: Vec::new(),
            unfiled: Unfiled::default(),
        }
    }

    fn uuid(&self, class: u64, ids: &[u64]) -> u64 {
        // Tracks have at most three ids: no allocation per record.
        let mut all = [0u64; 4];
        all[0] = class;
        all[1..=ids.len()].copy_from_slice(ids);
        hash_ids(self.seed, &all[..=ids.len()])
    }

    fn flow_id(&self, correlation_id: u64) -> u64 {
        self.uuid(FLOW, &[correlation_id])
    }

    fn emit(&mut self, mut packet: TracePacket) -> Result<()> {
        packet.trusted_packet_sequence_id = Some(self.sequence_id);
        if self.first_packet {
            packet.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED);
            packet.first_packet_on_sequence = Some(true);
            self.first_packet = false;
        }
        let out = self
            .out
            .as_mut()
            .context("perfetto sink used before begin()")?;
        // Field 1 (Trace.packet), wire type 2 (length-delimited).
        self.scratch.clear();
        self.scratch.push(0x0a);
        packet.encode_length_delimited(&mut self.scratch)?;
        out.write_all(&self.scratch)?;
        Ok(())
    }

    fn describe(&mut self, uuid: u64, desc: TrackDescriptor) -> Result<()> {
        if self.described.insert(uuid) {
            self.emit(TracePacket {
                track_descriptor: Some(desc),
                ..Default::default()
            })?;
        }
        Ok(())
    }

    fn process_uuid(&self) -> u64 {
        self.uuid(T_PROCESS, &[])
    }

    fn thread_track(&mut self, tid: u64) -> Result<u64> {
        let uuid = self.uuid(T_THREAD, &[tid]);
        if !self.described.contains(&uuid) {
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
            self.describe(uuid, desc)?;
        }
        Ok(uuid)
    }

    fn agent_track(&mut self, ctx: &SinkContext<'_>, agent: u64) -> Result<u64> {
        let uuid = self.uuid(T_AGENT, &[agent]);
        if !self.described.contains(&uuid) {
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
            self.describe(uuid, desc)?;
        }
        Ok(uuid)
    }

    fn child_track(&mut self, parent: u64, class: u64, ids: &[u64], name: String) -> Result<u64> {
        let uuid = self.uuid(class, ids);
        if !self.described.contains(&uuid) {
            let desc = TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(parent),
                name: Some(name),
                ..Default::default()
            };
            self.describe(uuid, desc)?;
        }
        Ok(uuid)
    }

    #[allow(clippy::too_many_arguments)]
    fn slice(
        &mut self,
        track: u64,
        start: u64,
        end: u64,
        name: String,
        category: String,
        flow: Option<u64>,
        args: Vec<DebugAnnotation>,
    ) -> Result<()> {
        let begin = TrackEvent {
            r#type: Some(TrackEventType::SliceBegin as i32),
            track_uuid: Some(track),
            name: Some(name),
            categories: vec![category],
            flow_ids: flow.into_iter().collect(),
            debug_annotations: args,
            ..Default::default()
        };
        self.emit(TracePacket {
            timestamp: Some(start),
            track_event: Some(begin),
            ..Default::default()
        })?;
        let end_event = TrackEvent {
            r#type: Some(TrackEventType::SliceEnd as i32),
            track_uuid: Some(track),
            ..Default::default()
        };
        self.emit(TracePacket {
            timestamp: Some(end.max(start)),
            track_event: Some(end_event),
            ..Default::default()
        })
    }

    fn write_api(&mut self, ctx: &SinkContext<'_>, call: ApiCall, with_flow: bool) -> Result<()> {
        let track = self.thread_track(call.thread_id)?;
        let name = self
            .names
            .entry((call.kind, call.operation))
            .or_insert_with(|| ctx.names.name(call.kind, call.operation).to_string())
            .clone();
        let category = self
            .categories
            .entry(call.kind)
            .or_insert_with(|| kind_name(call.kind).into_owned())
            .clone();
        let flow = with_flow.then(|| self.flow_id(call.correlation_id));
        self.slice(
            track,
            call.start,
            call.end,
            name,
            category,
            flow,
            vec![uint_arg("correlation_id", call.correlation_id)],
        )
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

fn uint_arg(name: &str, v: u64) -> DebugAnnotation {
    DebugAnnotation {
        name: Some(name.to_string()),
        uint_value: Some(v),
        ..Default::default()
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
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        if self
            .claims
            .claim(&self.path, &Producer::Sink("Perfetto"))
            .is_err()
        {
            self.refused = true;
            return Ok(());
        }
        let f = File::create(&self.path)
            .with_context(|| format!("creating {}", self.path.display()))?;
        self.out = Some(BufWriter::with_capacity(1 << 16, f));
        self.seed = ctx.meta.process_hash();
        self.pid = ctx.meta.pid;
        // Sequence id 0 is reserved by Perfetto; keep it well clear of the
        // small ids a tracing service hands out.
        self.sequence_id = ((self.seed >> 32) as u32 ^ self.seed as u32) | 0x8000_0000;
        let uuid = self.process_uuid();
        let desc = TrackDescriptor {
            uuid: Some(uuid),
            process: Some(ProcessDescriptor {
                pid: Some(ctx.meta.pid as i32),
                cmdline: ctx.meta.command.clone(),
                process_name: Some(process_name(ctx.meta)),
            }),
            ..Default::default()
        };
        self.describe(uuid, desc)
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        if self.refused {
            return Ok(());
        }
        self.unfiled.count_unplaced_tables(batch);
        let k = &batch.kernel_dispatches;
        for i in 0..k.len() {
            let agent = self.agent_track(ctx, k.agent_id[i])?;
            let queue = self.child_track(
                agent,
                T_QUEUE,
                &[k.agent_id[i], k.queue_id[i]],
                format!("Queue {}", k.queue_id[i]),
            )?;
            let kid = k.kernel_id[i];
            let name = match self.kernel_names.get(&kid) {
                Some(n) => n.clone(),
                None => {
                    let n = kernel_display_name(ctx.symbols, kid);
                    if ctx.symbols.kernel(kid).is_some() {
                        self.kernel_names.insert(kid, n.clone());
                    }
                    n
                }
            };
            let corr = k.correlation_id[i];
            let args = vec![
                uint_arg("correlation_id", corr),
                uint_arg("kernel_id", kid),
                uint_arg("dispatch_id", k.dispatch_id[i]),
                DebugAnnotation {
                    name: Some("grid".into()),
                    string_value: Some(format!("{}x{}x{}", k.grid_x[i], k.grid_y[i], k.grid_z[i])),
                    ..Default::default()
                },
                DebugAnnotation {
                    name: Some("workgroup".into()),
                    string_value: Some(format!(
                        "{}x{}x{}",
                        k.workgroup_x[i], k.workgroup_y[i], k.workgroup_z[i]
                    )),
                    ..Default::default()
                },
            ];
            let flow = Some(self.flow_id(corr));
            self.slice(
                queue,
                k.start[i],
                k.end[i],
                name,
                "KERNEL_DISPATCH".into(),
                flow,
                args,
            )?;
            self.async_seen(ctx, corr)?;
        }

        let c = &batch.memory_copies;
        let copy_kind = BufferTracingKind::MemoryCopy.raw();
        for i in 0..c.len() {
            // Host-to-device copies sit on the destination agent, others on the source.
            let agent_id = if c.operation[i] == 2 {
                c.dst_agent_id[i]
            } else {
                c.src_agent_id[i]
            };
            let agent = self.agent_track(ctx, agent_id)?;
            let dir = ctx.names.name(copy_kind, c.operation[i]).to_string();
            let track = self.child_track(
                agent,
                T_COPY,
                &[agent_id, u64::from(c.operation[i]), c.stream_id[i]],
                format!("{dir} (stream {})", c.stream_id[i]),
            )?;
            let corr = c.correlation_id[i];
            let args = vec![
                uint_arg("correlation_id", corr),
                uint_arg("bytes", c.bytes[i]),
            ];
            let flow = Some(self.flow_id(corr));
            self.slice(
                track,
                c.start[i],
                c.end[i],
                dir,
                "MEMORY_COPY".into(),
                flow,
                args,
            )?;
            self.async_seen(ctx, corr)?;
        }

        let a = &batch.api_calls;
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
        self.unfiled.take_notes("Perfetto")
    }

    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        if self.refused {
            return Ok(Vec::new());
        }
        self.flush_pending(ctx, 0)?;
        let mut out = self
            .out
            .take()
            .context("perfetto sink finished before begin()")?;
        out.flush()
            .with_context(|| format!("writing {}", self.path.display()))?;
        Ok(vec![self.path.clone()])
    }
}
