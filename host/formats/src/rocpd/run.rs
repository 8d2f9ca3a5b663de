//! A run's state while its rows are written: the connection, the
//! statements ([`Inserts`]), the string ids, the thread rows and the event
//! ids handed out so far, and the ids records refer to whose info rows are
//! written at the end ([`super::info`]).

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use rusqlite::types::Value;
use rusqlite::{params, Connection};

use super::inserts::Inserts;

use crate::names::kind_name;
use crate::sink::{CallArg, SinkContext};

/// The node row id: one node per run.
pub(super) const NID: i64 = 1;

/// One run being written: see the module docs.
pub(super) struct Run {
    pub(super) conn: Connection,
    pub(super) suffix: String,
    pub(super) sql: Inserts,
    strings: HashMap<String, i64>,
    /// `rocpd_string` ids of operation names by (kind, operation), and of
    /// kind names by kind: looked up per record without building the name.
    operation_names: HashMap<(u32, u32), i64>,
    kind_names: HashMap<u32, i64>,
    threads: HashSet<u64>,
    /// `rocpd_track` ids by (thread row, category string id).
    tracks: HashMap<(i64, i64), i64>,
    /// The process row's id: the OS pid.
    pub(super) pid: i64,
    pub(super) ppid: i64,
    /// The `rocpd_string` id of `""` (dispatches' `region_name_id`).
    pub(super) no_region: i64,
    next_event: i64,
    /// Agents, kernels, queues and streams records referred to (agents and
    /// kernels: less those already described), given info rows at the end.
    pub(super) agents: HashSet<u64>,
    pub(super) kernels: HashSet<u64>,
    pub(super) queues: HashSet<u64>,
    pub(super) streams: HashSet<u64>,
    /// Arguments of API calls whose records have not come yet, by internal
    /// correlation id (a live run journals them before the batch that
    /// holds the record; see [`crate::Sink::call_args`]).
    pub(super) call_args: HashMap<u64, Vec<CallArg>>,
    /// The event of each kernel dispatch written, by dispatch id: a counter
    /// sample's `rocpd_pmc_event` row points at it.
    pub(super) dispatch_events: HashMap<u64, i64>,
    /// `rocpd_info_pmc` ids by (agent, counter name).
    pub(super) pmc_ids: HashMap<(u64, String), i64>,
}

/// A 64-bit id or timestamp as SQLite's integer (the same bits).
pub(super) fn int(v: u64) -> Value {
    Value::Integer(v as i64)
}

impl Run {
    /// The run whose tables `suffix` names, written through `conn` (the
    /// tables exist): its `""` string row is written here.
    pub(super) fn new(conn: Connection, suffix: String, ctx: &SinkContext<'_>) -> Result<Self> {
        let mut run = Run {
            conn,
            sql: Inserts::new(&suffix),
            suffix,
            strings: HashMap::new(),
            operation_names: HashMap::new(),
            kind_names: HashMap::new(),
            threads: HashSet::new(),
            tracks: HashMap::new(),
            pid: i64::from(ctx.meta.pid),
            ppid: i64::from(ctx.meta.ppid),
            no_region: 0,
            next_event: 0,
            agents: HashSet::new(),
            kernels: HashSet::new(),
            queues: HashSet::new(),
            streams: HashSet::new(),
            call_args: HashMap::new(),
            dispatch_events: HashMap::new(),
            pmc_ids: HashMap::new(),
        };
        run.no_region = run.string_id("")?;
        Ok(run)
    }

    fn string_id(&mut self, s: &str) -> Result<i64> {
        if let Some(&id) = self.strings.get(s) {
            return Ok(id);
        }
        let id = self.strings.len() as i64 + 1;
        self.conn
            .prepare_cached(&self.sql.string)?
            .execute(params![id, s])?;
        self.strings.insert(s.to_string(), id);
        Ok(id)
    }

    /// The `rocpd_info_thread` row of OS thread `tid` (its id is `tid`),
    /// written the first time a record names it.
    pub(super) fn thread_row(&mut self, tid: u64) -> Result<i64> {
        let id = tid as i64;
        if self.threads.insert(tid) {
            self.conn
                .prepare_cached(&self.sql.thread)?
                .execute(params![id, NID, self.ppid, self.pid, id])?;
        }
        Ok(id)
    }

    /// The `rocpd_track` of thread row `tid` and category `category` (a
    /// string id), written the first time a sample needs it (as rocprofv3:
    /// a mark's track is its thread's, named by its category).
    pub(super) fn track_row(&mut self, tid: i64, category: i64) -> Result<i64> {
        if let Some(&id) = self.tracks.get(&(tid, category)) {
            return Ok(id);
        }
        let id = self.tracks.len() as i64 + 1;
        self.conn
            .prepare_cached(&self.sql.track)?
            .execute(params![id, NID, self.pid, tid, category])?;
        self.tracks.insert((tid, category), id);
        Ok(id)
    }

    /// The string id of `kind`'s name.
    pub(super) fn kind_id(&mut self, kind: u32) -> Result<i64> {
        if let Some(&id) = self.kind_names.get(&kind) {
            return Ok(id);
        }
        let id = self.string_id(&kind_name(kind))?;
        self.kind_names.insert(kind, id);
        Ok(id)
    }

    /// The string id of operation `op`'s name in `kind`.
    pub(super) fn operation_id(
        &mut self,
        kind: u32,
        op: u32,
        ctx: &SinkContext<'_>,
    ) -> Result<i64> {
        if let Some(&id) = self.operation_names.get(&(kind, op)) {
            return Ok(id);
        }
        let id = self.string_id(&ctx.op_name(kind, op))?;
        self.operation_names.insert((kind, op), id);
        Ok(id)
    }

    /// A record's event row (written with the batch): `internal` →
    /// `stack_id`, `ancestor` → `parent_stack_id`, `external` →
    /// `correlation_id`. Returns its id.
    pub(super) fn event(
        &mut self,
        category: i64,
        internal: u64,
        ancestor: u64,
        external: u64,
    ) -> i64 {
        self.event_with(category, internal, ancestor, external, None)
    }

    /// [`Self::event`] with its `extdata` (`{}` when `None`).
    pub(super) fn event_with(
        &mut self,
        category: i64,
        internal: u64,
        ancestor: u64,
        external: u64,
        extdata: Option<String>,
    ) -> i64 {
        self.next_event += 1;
        let id = self.next_event;
        self.sql.event.push([
            Value::Integer(id),
            Value::Integer(category),
            int(internal),
            int(ancestor),
            int(external),
            Value::Text(extdata.unwrap_or_else(|| "{}".into())),
        ]);
        id
    }

    /// The thread row and the event of an asynchronous record (a dispatch,
    /// copy, allocation or scratch event), whose own correlation id is both
    /// its stack and parent-stack id. Returns `(tid, event id)`.
    pub(super) fn async_event(
        &mut self,
        category: i64,
        thread: u64,
        correlation: u64,
        external: u64,
    ) -> Result<(i64, i64)> {
        let tid = self.thread_row(thread)?;
        Ok((
            tid,
            self.event(category, correlation, correlation, external),
        ))
    }
}
