//! Mapping a batch's records to rows: API calls to regions, kernel
//! dispatches, memory copies, allocations and scratch events to their
//! tables, each with its event row; the agents, kernels, queues and streams
//! they refer to are noted for [`super::info`].

use anyhow::Result;
use rocwasm_core::{Batch, BufferTracingKind, KernelDispatch};
use rusqlite::types::Value;

use super::run::{int, Run, NID};
use super::schema::{EventExtdata, MemoryOperation};

use crate::sink::SinkContext;

/// One `rocpd_memory_allocate` row's values.
struct Allocate<'a> {
    tid: i64,
    agent: u64,
    ty: Option<&'a str>,
    level: &'a str,
    start: u64,
    end: u64,
    address: u64,
    size: u64,
    queue: Option<u64>,
    event: i64,
    extdata: EventExtdata,
}

impl Run {
    /// Maps a batch to rows and writes them (inside the caller's
    /// transaction); on an error nothing of the batch stays pending.
    pub(super) fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        let mapped = self.map_batch(batch, ctx);
        let written = mapped.and_then(|()| Ok(self.sql.flush(&self.conn)?));
        if written.is_err() {
            self.sql.discard();
        }
        written
    }

    fn map_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        let (nid, pid) = (Value::Integer(NID), Value::Integer(self.pid));

        let a = &batch.api_calls;
        let marker = BufferTracingKind::MarkerCoreRangeApi.raw();
        for i in 0..a.len() {
            let category = self.kind_id(a.kind[i])?;
            let name = self.operation_id(a.kind[i], a.operation[i], ctx)?;
            let tid = self.thread_row(a.thread_id[i])?;
            // rocprofv3: a marker's message in its event's extdata, and a
            // mark (start = end) a sample on its thread's track.
            let is_marker = a.kind[i] == marker;
            let extdata =
                is_marker.then(|| marker_extdata(&ctx.op_name(a.kind[i], a.operation[i])));
            let event = self.event_with(
                category,
                a.correlation_id[i],
                a.ancestor[i],
                a.external_correlation_id[i],
                extdata,
            );
            // rocprofv3: each argument of the call a row of `rocpd_arg`
            // (a marker's range has the message instead).
            if !is_marker {
                self.args_of(a.correlation_id[i], event);
            }
            if is_marker && a.start[i] == a.end[i] {
                let track = self.track_row(tid, category)?;
                self.sql.sample.push([
                    Value::Integer(track),
                    int(a.start[i]),
                    Value::Integer(event),
                ]);
                self.sql.flush_full(&self.conn)?;
                continue;
            }
            self.sql.region.push([
                nid.clone(),
                pid.clone(),
                Value::Integer(tid),
                int(a.start[i]),
                int(a.end[i]),
                Value::Integer(name),
                Value::Integer(event),
            ]);
            self.sql.flush_full(&self.conn)?;
        }

        let k = &batch.kernel_dispatches;
        if !k.is_empty() {
            let category = self.kind_id(BufferTracingKind::KernelDispatch.raw())?;
            for i in 0..k.len() {
                if self.dispatch_events.contains_key(&k.dispatch_id[i]) {
                    // Written already, from its counter samples.
                    continue;
                }
                let (tid, event) = self.async_event(
                    category,
                    k.thread_id[i],
                    k.correlation_id[i],
                    k.external_correlation_id[i],
                )?;
                self.dispatch_row(&k.row(i), tid, event);
                self.sql.flush_full(&self.conn)?;
            }
        }

        // Counter samples (rocprofv3's `rocpd_pmc_event`): one row per
        // sample, pointing at its dispatch's event; a dispatch no kernel
        // record described (`--pmc` without `--kernel-trace`) gets its
        // `rocpd_kernel_dispatch` row from the sample, as rocprofv3's
        // counter collection writes one.
        let p = &batch.counter_samples;
        if !p.is_empty() {
            let category = self.kind_id(BufferTracingKind::KernelDispatch.raw())?;
            for i in 0..p.len() {
                let event = match self.dispatch_events.get(&p.dispatch_id[i]) {
                    Some(&event) => event,
                    None => {
                        let (tid, event) = self.async_event(
                            category,
                            p.thread_id[i],
                            p.correlation_id[i],
                            p.external_correlation_id[i],
                        )?;
                        self.dispatch_row(&p.row(i).dispatch(), tid, event);
                        event
                    }
                };
                let name = ctx
                    .symbols
                    .counter_name(p.counter_id[i])
                    .map_or_else(|| format!("counter_{}", p.counter_id[i]), |n| n.to_string());
                let pmc = self.pmc_row(p.agent_id[i], &name)?;
                self.sql.pmc_event.push([
                    Value::Integer(event),
                    Value::Integer(pmc),
                    Value::Real(f64::from_bits(p.value[i])),
                ]);
                self.sql.flush_full(&self.conn)?;
            }
        }

        let c = &batch.memory_copies;
        if !c.is_empty() {
            let kind = BufferTracingKind::MemoryCopy.raw();
            let category = self.kind_id(kind)?;
            for i in 0..c.len() {
                let name = self.operation_id(kind, c.operation[i], ctx)?;
                let (tid, event) = self.async_event(
                    category,
                    c.thread_id[i],
                    c.correlation_id[i],
                    c.external_correlation_id[i],
                )?;
                self.agents.insert(c.src_agent_id[i]);
                self.agents.insert(c.dst_agent_id[i]);
                self.streams.insert(c.stream_id[i]);
                self.sql.memory_copy.push([
                    nid.clone(),
                    pid.clone(),
                    Value::Integer(tid),
                    int(c.start[i]),
                    int(c.end[i]),
                    Value::Integer(name),
                    int(c.dst_agent_id[i]),
                    int(c.dst_address[i]),
                    int(c.src_agent_id[i]),
                    int(c.src_address[i]),
                    int(c.bytes[i]),
                    int(c.stream_id[i]),
                    Value::Integer(event),
                ]);
                self.sql.flush_full(&self.conn)?;
            }
        }

        let m = &batch.memory_allocations;
        if !m.is_empty() {
            let category = self.kind_id(BufferTracingKind::MemoryAllocation.raw())?;
            for i in 0..m.len() {
                let (ty, level) = MemoryOperation::Allocation(m.operation[i]).type_and_level();
                let (tid, event) = self.async_event(
                    category,
                    m.thread_id[i],
                    m.correlation_id[i],
                    m.external_correlation_id[i],
                )?;
                self.agents.insert(m.agent_id[i]);
                self.allocate_row(Allocate {
                    tid,
                    agent: m.agent_id[i],
                    ty,
                    level,
                    start: m.start[i],
                    end: m.end[i],
                    address: m.address[i],
                    size: m.allocation_size[i],
                    queue: None,
                    event,
                    extdata: EventExtdata::default(),
                });
                self.sql.flush_full(&self.conn)?;
            }
        }

        let s = &batch.scratch_memory;
        if !s.is_empty() {
            let category = self.kind_id(BufferTracingKind::ScratchMemory.raw())?;
            for i in 0..s.len() {
                let (ty, level) = MemoryOperation::Scratch(s.operation[i]).type_and_level();
                let (tid, event) = self.async_event(
                    category,
                    s.thread_id[i],
                    s.correlation_id[i],
                    s.external_correlation_id[i],
                )?;
                self.agents.insert(s.agent_id[i]);
                self.queues.insert(s.queue_id[i]);
                self.allocate_row(Allocate {
                    tid,
                    agent: s.agent_id[i],
                    ty,
                    level,
                    start: s.start[i],
                    end: s.end[i],
                    address: 0,
                    size: s.allocation_size[i],
                    queue: Some(s.queue_id[i]),
                    event,
                    extdata: EventExtdata {
                        external: 0,
                        flags: Some(u64::from(s.flags[i])),
                    },
                });
                self.sql.flush_full(&self.conn)?;
            }
        }
        Ok(())
    }

    /// The `rocpd_arg` rows of the call `correlation`, for its event
    /// `event`, if its arguments were journaled.
    /// Dispatch `k`'s `rocpd_kernel_dispatch` row (thread row `tid`, event
    /// `event`), noting what it refers to.
    fn dispatch_row(&mut self, k: &KernelDispatch, tid: i64, event: i64) {
        self.dispatch_events.insert(k.dispatch_id, event);
        self.agents.insert(k.agent_id);
        self.kernels.insert(k.kernel_id);
        self.queues.insert(k.queue_id);
        self.streams.insert(k.stream_id);
        self.sql.kernel_dispatch.push([
            Value::Integer(NID),
            Value::Integer(self.pid),
            Value::Integer(tid),
            int(k.agent_id),
            int(k.kernel_id),
            int(k.dispatch_id),
            int(k.queue_id),
            int(k.stream_id),
            int(k.start),
            int(k.end),
            Value::from(k.private_segment_size),
            Value::from(k.group_segment_size),
            Value::from(k.workgroup_x),
            Value::from(k.workgroup_y),
            Value::from(k.workgroup_z),
            Value::from(k.grid_x),
            Value::from(k.grid_y),
            Value::from(k.grid_z),
            Value::Integer(self.no_region),
            Value::Integer(event),
        ]);
    }

    /// The `rocpd_info_pmc` row of counter `name` on `agent`, written the
    /// first time (its id is this run's next).
    fn pmc_row(&mut self, agent: u64, name: &str) -> Result<i64> {
        if let Some(&id) = self.pmc_ids.get(&(agent, name.to_string())) {
            return Ok(id);
        }
        let id = self.pmc_ids.len() as i64 + 1;
        self.agents.insert(agent);
        self.conn.execute(
            &self.sql.info_pmc,
            rusqlite::params![
                id,
                NID,
                self.pid,
                agent as i64,
                "GPU",
                name,
                name,
                "",
                "rocm",
                "ABS",
                0,
                0
            ],
        )?;
        self.pmc_ids.insert((agent, name.to_string()), id);
        Ok(id)
    }

    fn args_of(&mut self, correlation: u64, event: i64) {
        let Some(args) = self.call_args.remove(&correlation) else {
            return;
        };
        for (position, a) in args.into_iter().enumerate() {
            self.sql.arg.push([
                Value::Integer(event),
                Value::Integer(position as i64),
                Value::Text(a.type_name),
                Value::Text(a.name),
                Value::Text(a.value),
            ]);
        }
    }

    fn allocate_row(&mut self, a: Allocate<'_>) {
        let extdata = a.extdata.to_json();
        self.sql.memory_allocate.push([
            Value::Integer(NID),
            Value::Integer(self.pid),
            Value::Integer(a.tid),
            int(a.agent),
            a.ty.map_or(Value::Null, |t| Value::Text(t.to_string())),
            Value::Text(a.level.to_string()),
            int(a.start),
            int(a.end),
            int(a.address),
            int(a.size),
            a.queue.map_or(Value::Null, int),
            Value::Integer(a.event),
            Value::Text(extdata.unwrap_or_else(|| "{}".to_string())),
        ]);
    }
}

/// A marker event's `extdata`, as rocprofv3 writes it: `{"message": …}`.
pub(super) fn marker_extdata(message: &str) -> String {
    serde_json::json!({ "message": message }).to_string()
}
