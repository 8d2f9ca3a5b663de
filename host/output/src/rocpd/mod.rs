//! rocpd SQLite output (schema version 3).
//!
//! Each run adds its own set of tables (`rocpd_region_<uuid>`, …) to the
//! database file and recreates the plain views (`rocpd_region`, …) as the
//! `UNION ALL` of every run, so ranks or repeated runs that write the same
//! file merge into one database (see [`schema`]); [`merge`] combines
//! separate files the same way (`rocwasm merge`).
//!
//! The tables, their columns and the values below are [`schema`]'s, which
//! the reader of `rocwasm-replay` uses too. Mapping from batches:
//! - API calls → `rocpd_region` (name = function name) with an event whose
//!   category is the kind name (`HIP_RUNTIME_API`, …) and which holds the
//!   correlation id;
//! - kernel dispatches → `rocpd_kernel_dispatch` (`kernel_id` = the run's
//!   kernel id, also the `rocpd_info_kernel_symbol` row id; `region_name_id`
//!   = the empty string: rocwasm has no kernel-rename regions yet);
//! - memory copies → `rocpd_memory_copy` (name = direction);
//! - allocations and scratch events → `rocpd_memory_allocate` with
//!   `level` REAL/VIRTUAL or SCRATCH ([`schema::MemoryOperation`]).
//!
//! Every id references the row rocpd's views join on (the table in
//! [`schema`]'s docs): the process row's `id` is the OS pid and a thread
//! row's `id` the OS thread id, as rocprofv3 writes them; every agent,
//! queue, stream, kernel and code object a record refers to gets a row
//! (described ones from the symbol table, the others a placeholder), so
//! the finished file passes `PRAGMA foreign_key_check`. Events hold the
//! internal correlation id in `stack_id` and the external one in
//! `correlation_id`; scratch flags go to the row's `extdata`
//! ([`schema::EventExtdata`]).
//!
//! Kernel symbols: a symbol known only from HIP's host-side registration
//! (`code_object_id` 0) takes the code object and kernel object of the HSA
//! loader's symbol of the same name, which is the one dispatches refer to;
//! it is written only when a dispatch refers to it or the loader reported
//! no such kernel (then under a placeholder code object row).
//!
//! Speed: one transaction per batch, rows written 64 to a statement
//! (`rows`), string ids cached by kind and operation, ids assigned
//! here rather than read back, `synchronous = OFF` while writing (a crashed
//! run's database is not worth an fsync per batch).

pub mod merge;
mod rows;
pub mod schema;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use anyhow::{Context, Result};
use rocwasm_core::{AgentType, Batch, BufferTracingKind, CodeObjectStorage, KernelSymbol};
use rusqlite::types::Value;
use rusqlite::{params, Connection, OptionalExtension};

use rows::TableRows;

use schema::{
    event, info_agent, info_code_object, info_kernel_symbol, info_node, info_process, info_queue,
    info_stream, info_thread, insert_or_ignore_sql, insert_sql, kernel_dispatch, memory_allocate,
    memory_copy, metadata, region, string, EventExtdata, MemoryOperation,
};

use crate::claims::{OutputClaims, Producer};
use crate::names::kind_name;
use crate::paths::output_path;
use crate::sink::{hash_ids, Sink, SinkContext};
use crate::unfiled::Unfiled;

/// The node row id: one node per run.
const NID: i64 = 1;

/// Writes (or adds a run to) a rocpd database. See the module docs.
pub struct RocpdSink {
    path: PathBuf,
    run: Option<Run>,
    claims: OutputClaims,
    /// The claim of the file was refused: write nothing.
    refused: bool,
    /// Records rocpd has no table for: see [`Sink::notes`].
    unfiled: Unfiled,
}

struct Run {
    conn: Connection,
    suffix: String,
    sql: Inserts,
    strings: HashMap<String, i64>,
    /// `rocpd_string` ids of operation names by (kind, operation), and of
    /// kind names by kind: looked up per record without building the name.
    operation_names: HashMap<(u32, u32), i64>,
    kind_names: HashMap<u32, i64>,
    threads: HashSet<u64>,
    /// The process row's id: the OS pid.
    pid: i64,
    ppid: i64,
    /// The `rocpd_string` id of `""` (dispatches' `region_name_id`).
    no_region: i64,
    next_event: i64,
    agents: HashSet<u64>,
    kernels: HashSet<u64>,
    queues: HashSet<u64>,
    streams: HashSet<u64>,
}

/// The single-row `INSERT`s of the rows written when first seen, and the
/// record tables, whose rows are written many per statement ([`rows`]).
struct Inserts {
    string: String,
    thread: String,
    event: TableRows,
    region: TableRows,
    kernel_dispatch: TableRows,
    memory_copy: TableRows,
    memory_allocate: TableRows,
}

/// The record tables of [`Inserts`].
const RECORD_TABLES: usize = 5;

impl Inserts {
    fn new(s: &str) -> Self {
        Self {
            string: insert_sql(string::TABLE, s, &[string::ID, string::STRING]),
            thread: insert_sql(
                info_thread::TABLE,
                s,
                &[
                    info_thread::ID,
                    info_thread::NID,
                    info_thread::PPID,
                    info_thread::PID,
                    info_thread::TID,
                ],
            ),
            event: TableRows::new(
                event::TABLE,
                s,
                &[
                    event::ID,
                    event::CATEGORY_ID,
                    event::STACK_ID,
                    event::PARENT_STACK_ID,
                    event::CORRELATION_ID,
                ],
            ),
            region: {
                use region as r;
                TableRows::new(
                    r::TABLE,
                    s,
                    &[
                        r::NID,
                        r::PID,
                        r::TID,
                        r::START,
                        r::END,
                        r::NAME_ID,
                        r::EVENT_ID,
                    ],
                )
            },
            kernel_dispatch: {
                use kernel_dispatch as k;
                TableRows::new(
                    k::TABLE,
                    s,
                    &[
                        k::NID,
                        k::PID,
                        k::TID,
                        k::AGENT_ID,
                        k::KERNEL_ID,
                        k::DISPATCH_ID,
                        k::QUEUE_ID,
                        k::STREAM_ID,
                        k::START,
                        k::END,
                        k::PRIVATE_SEGMENT_SIZE,
                        k::GROUP_SEGMENT_SIZE,
                        k::WORKGROUP_SIZE_X,
                        k::WORKGROUP_SIZE_Y,
                        k::WORKGROUP_SIZE_Z,
                        k::GRID_SIZE_X,
                        k::GRID_SIZE_Y,
                        k::GRID_SIZE_Z,
                        k::REGION_NAME_ID,
                        k::EVENT_ID,
                    ],
                )
            },
            memory_copy: {
                use memory_copy as c;
                TableRows::new(
                    c::TABLE,
                    s,
                    &[
                        c::NID,
                        c::PID,
                        c::TID,
                        c::START,
                        c::END,
                        c::NAME_ID,
                        c::DST_AGENT_ID,
                        c::DST_ADDRESS,
                        c::SRC_AGENT_ID,
                        c::SRC_ADDRESS,
                        c::SIZE,
                        c::STREAM_ID,
                        c::EVENT_ID,
                    ],
                )
            },
            memory_allocate: {
                use memory_allocate as m;
                TableRows::new(
                    m::TABLE,
                    s,
                    &[
                        m::NID,
                        m::PID,
                        m::TID,
                        m::AGENT_ID,
                        m::TYPE,
                        m::LEVEL,
                        m::START,
                        m::END,
                        m::ADDRESS,
                        m::SIZE,
                        m::QUEUE_ID,
                        m::EVENT_ID,
                        m::EXTDATA,
                    ],
                )
            },
        }
    }

    /// Writes the batch's pending rows, events first.
    fn flush(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        self.event.flush(conn)?;
        self.region.flush(conn)?;
        self.kernel_dispatch.flush(conn)?;
        self.memory_copy.flush(conn)?;
        self.memory_allocate.flush(conn)
    }

    /// Writes the tables whose pending rows reached [`rows::FLUSH_AT`]
    /// (called after each record: bounds a batch's memory).
    fn flush_full(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        for t in [
            &mut self.event,
            &mut self.region,
            &mut self.kernel_dispatch,
            &mut self.memory_copy,
            &mut self.memory_allocate,
        ] {
            t.flush_if_full(conn)?;
        }
        Ok(())
    }

    /// Forgets the pending rows of a batch that failed.
    fn discard(&mut self) {
        for t in [
            &mut self.event,
            &mut self.region,
            &mut self.kernel_dispatch,
            &mut self.memory_copy,
            &mut self.memory_allocate,
        ] {
            t.discard();
        }
    }
}

impl RocpdSink {
    /// The database is `<dir>/[<name>_]results.db`.
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self {
            path: output_path(&dir.into(), name.as_deref(), "results.db"),
            run: None,
            claims: OutputClaims::new(),
            refused: false,
            unfiled: Unfiled::default(),
        }
    }

    /// A sink writing exactly `path` (which may already hold other runs).
    pub fn at_path(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            run: None,
            claims: OutputClaims::new(),
            refused: false,
            unfiled: Unfiled::default(),
        }
    }

    fn run(&mut self) -> Result<&mut Run> {
        self.run.as_mut().context("rocpd sink used before begin()")
    }
}

/// A run's uuid: 128 bits from the process identity and the current time, so
/// two runs of the same pid (or two hosts) never collide.
fn new_uuid(seed: u64) -> [u8; 16] {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let hi = hash_ids(seed, &[now, 1]);
    let lo = hash_ids(seed, &[now, 2, std::process::id() as u64]);
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hi.to_be_bytes());
    b[8..].copy_from_slice(&lo.to_be_bytes());
    b
}

/// A 64-bit id or timestamp as SQLite's integer (the same bits).
fn int(v: u64) -> Value {
    Value::Integer(v as i64)
}

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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Run {
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
    fn thread_row(&mut self, tid: u64) -> Result<i64> {
        let id = tid as i64;
        if self.threads.insert(tid) {
            self.conn
                .prepare_cached(&self.sql.thread)?
                .execute(params![id, NID, self.ppid, self.pid, id])?;
        }
        Ok(id)
    }

    /// The string id of `kind`'s name.
    fn kind_id(&mut self, kind: u32) -> Result<i64> {
        if let Some(&id) = self.kind_names.get(&kind) {
            return Ok(id);
        }
        let id = self.string_id(&kind_name(kind))?;
        self.kind_names.insert(kind, id);
        Ok(id)
    }

    /// The string id of operation `op`'s name in `kind`.
    fn operation_id(&mut self, kind: u32, op: u32, ctx: &SinkContext<'_>) -> Result<i64> {
        if let Some(&id) = self.operation_names.get(&(kind, op)) {
            return Ok(id);
        }
        let id = self.string_id(&ctx.names.name(kind, op))?;
        self.operation_names.insert((kind, op), id);
        Ok(id)
    }

    /// A record's event row (written with the batch): `internal` →
    /// `stack_id`, `ancestor` → `parent_stack_id`, `external` →
    /// `correlation_id`. Returns its id.
    fn event(&mut self, category: i64, internal: u64, ancestor: u64, external: u64) -> i64 {
        self.next_event += 1;
        let id = self.next_event;
        self.sql.event.push([
            Value::Integer(id),
            Value::Integer(category),
            int(internal),
            int(ancestor),
            int(external),
        ]);
        id
    }

    /// The thread row and the event of an asynchronous record (a dispatch,
    /// copy, allocation or scratch event), whose own correlation id is both
    /// its stack and parent-stack id. Returns `(tid, event id)`.
    fn async_event(
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

    /// Maps a batch to rows and writes them (inside the caller's
    /// transaction); on an error nothing of the batch stays pending.
    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
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
        for i in 0..a.len() {
            let category = self.kind_id(a.kind[i])?;
            let name = self.operation_id(a.kind[i], a.operation[i], ctx)?;
            let tid = self.thread_row(a.thread_id[i])?;
            let event = self.event(
                category,
                a.correlation_id[i],
                a.ancestor[i],
                a.external_correlation_id[i],
            );
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
                let (tid, event) = self.async_event(
                    category,
                    k.thread_id[i],
                    k.correlation_id[i],
                    k.external_correlation_id[i],
                )?;
                self.agents.insert(k.agent_id[i]);
                self.kernels.insert(k.kernel_id[i]);
                self.queues.insert(k.queue_id[i]);
                self.streams.insert(k.stream_id[i]);
                self.sql.kernel_dispatch.push([
                    nid.clone(),
                    pid.clone(),
                    Value::Integer(tid),
                    int(k.agent_id[i]),
                    int(k.kernel_id[i]),
                    int(k.dispatch_id[i]),
                    int(k.queue_id[i]),
                    int(k.stream_id[i]),
                    int(k.start[i]),
                    int(k.end[i]),
                    Value::from(k.private_segment_size[i]),
                    Value::from(k.group_segment_size[i]),
                    Value::from(k.workgroup_x[i]),
                    Value::from(k.workgroup_y[i]),
                    Value::from(k.workgroup_z[i]),
                    Value::from(k.grid_x[i]),
                    Value::from(k.grid_y[i]),
                    Value::from(k.grid_z[i]),
                    Value::Integer(self.no_region),
                    Value::Integer(event),
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

    /// Writes the info tables that need the complete symbol tables: the
    /// process, then every agent, code object, kernel symbol, queue and
    /// stream the run's records (or other info rows) refer to.
    fn write_info(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        let m = ctx.meta;
        let s = self.suffix.clone();
        let pid = self.pid;
        {
            use info_process as p;
            let sql = insert_sql(
                p::TABLE,
                &s,
                &[
                    p::ID,
                    p::NID,
                    p::PPID,
                    p::PID,
                    p::INIT,
                    p::FINI,
                    p::START,
                    p::END,
                    p::COMMAND,
                ],
            );
            let (start, end) = (m.start_ns as i64, m.end_ns as i64);
            self.conn.execute(
                &sql,
                params![
                    pid,
                    NID,
                    self.ppid,
                    pid,
                    start,
                    end,
                    start,
                    end,
                    m.command.join(" ")
                ],
            )?;
        }

        let code_objects = ctx.symbols.code_objects();
        let kernels = symbols_to_write(ctx.symbols.kernels(), &code_objects, &self.kernels);
        // Code objects referred to but not described (a host-registered
        // kernel the loader never reported): a placeholder row each.
        let known: HashSet<u64> = code_objects.iter().map(|c| c.id).collect();
        let missing_code_objects: BTreeSet<u64> = kernels
            .iter()
            .map(|k| k.code_object_id)
            .filter(|id| !known.contains(id))
            .collect();
        self.agents.extend(code_objects.iter().map(|c| c.agent_id));

        {
            use info_agent as a;
            let sql = insert_sql(
                a::TABLE,
                &s,
                &[
                    a::ID,
                    a::NID,
                    a::PID,
                    a::TYPE,
                    a::ABSOLUTE_INDEX,
                    a::LOGICAL_INDEX,
                    a::TYPE_INDEX,
                    a::NAME,
                    a::MODEL_NAME,
                    a::PRODUCT_NAME,
                ],
            );
            for a in ctx.symbols.agents() {
                self.agents.remove(&a.id);
                let ty = match a.agent_type {
                    AgentType::Cpu => schema::AGENT_CPU,
                    AgentType::Gpu => schema::AGENT_GPU,
                };
                let index = a.node_id;
                self.conn.execute(
                    &sql,
                    params![
                        a.id as i64,
                        NID,
                        pid,
                        ty,
                        index,
                        index,
                        index,
                        a.name,
                        a.name,
                        a.product_name
                    ],
                )?;
            }
            // Agents referenced by records but never described still get a
            // row, so joins do not silently drop records.
            let sql =
                insert_or_ignore_sql(a::TABLE, &s, &[a::ID, a::NID, a::PID, a::LOGICAL_INDEX]);
            for id in std::mem::take(&mut self.agents) {
                self.conn
                    .execute(&sql, params![id as i64, NID, pid, id as i64])?;
            }
        }
        {
            use info_code_object as c;
            let sql = insert_sql(
                c::TABLE,
                &s,
                &[
                    c::ID,
                    c::NID,
                    c::PID,
                    c::AGENT_ID,
                    c::URI,
                    c::LOAD_BASE,
                    c::LOAD_SIZE,
                    c::LOAD_DELTA,
                    c::STORAGE_TYPE,
                ],
            );
            for c in &code_objects {
                let storage = match c.storage {
                    CodeObjectStorage::File { .. } => Some(schema::STORAGE_FILE),
                    CodeObjectStorage::Memory { .. } => Some(schema::STORAGE_MEMORY),
                    CodeObjectStorage::None => None,
                };
                self.conn.execute(
                    &sql,
                    params![
                        c.id as i64,
                        NID,
                        pid,
                        c.agent_id as i64,
                        c.uri,
                        c.load_base as i64,
                        c.load_size as i64,
                        c.load_delta,
                        storage
                    ],
                )?;
            }
            let sql = insert_sql(c::TABLE, &s, &[c::ID, c::NID, c::PID]);
            for id in missing_code_objects {
                self.conn.execute(&sql, params![id as i64, NID, pid])?;
            }
        }
        {
            use info_kernel_symbol as k;
            let sql = insert_sql(
                k::TABLE,
                &s,
                &[
                    k::ID,
                    k::NID,
                    k::PID,
                    k::CODE_OBJECT_ID,
                    k::KERNEL_NAME,
                    k::DISPLAY_NAME,
                    k::KERNEL_OBJECT,
                    k::KERNARG_SEGMENT_SIZE,
                    k::KERNARG_SEGMENT_ALIGNMENT,
                    k::GROUP_SEGMENT_SIZE,
                    k::PRIVATE_SEGMENT_SIZE,
                    k::SGPR_COUNT,
                    k::ARCH_VGPR_COUNT,
                    k::ACCUM_VGPR_COUNT,
                ],
            );
            for k in &kernels {
                self.kernels.remove(&k.id);
                let display = k.display_name();
                self.conn.execute(
                    &sql,
                    params![
                        k.id as i64,
                        NID,
                        pid,
                        k.code_object_id as i64,
                        k.name,
                        display,
                        k.kernel_object as i64,
                        k.kernarg_segment_size,
                        k.kernarg_segment_alignment,
                        k.group_segment_size,
                        k.private_segment_size,
                        k.sgpr_count,
                        k.arch_vgpr_count,
                        k.accum_vgpr_count
                    ],
                )?;
            }
            // Kernels dispatched but never described: a row named after the
            // id, under a placeholder code object.
            let undescribed = std::mem::take(&mut self.kernels);
            if !undescribed.is_empty() {
                use info_code_object as c;
                let placeholder = (0..)
                    .find(|id| {
                        !known.contains(id) && !kernels.iter().any(|k| k.code_object_id == *id)
                    })
                    .expect("ids left") as i64;
                self.conn.execute(
                    &insert_or_ignore_sql(c::TABLE, &s, &[c::ID, c::NID, c::PID]),
                    params![placeholder, NID, pid],
                )?;
                let sql = insert_sql(
                    k::TABLE,
                    &s,
                    &[
                        k::ID,
                        k::NID,
                        k::PID,
                        k::CODE_OBJECT_ID,
                        k::KERNEL_NAME,
                        k::DISPLAY_NAME,
                    ],
                );
                for id in undescribed {
                    let name = rocwasm_core::symbols::unknown_kernel_name(id);
                    self.conn
                        .execute(&sql, params![id as i64, NID, pid, placeholder, name, name])?;
                }
            }
        }
        let sql = insert_sql(
            info_queue::TABLE,
            &s,
            &[
                info_queue::ID,
                info_queue::NID,
                info_queue::PID,
                info_queue::NAME,
            ],
        );
        for q in std::mem::take(&mut self.queues) {
            let name = match q {
                0 => "Default Queue".to_string(),
                q => format!("Queue {q}"),
            };
            self.conn.execute(&sql, params![q as i64, NID, pid, name])?;
        }
        let sql = insert_sql(
            info_stream::TABLE,
            &s,
            &[
                info_stream::ID,
                info_stream::NID,
                info_stream::PID,
                info_stream::NAME,
            ],
        );
        for st in std::mem::take(&mut self.streams) {
            let name = match st {
                0 => "Default Stream".to_string(),
                st => format!("Stream {st}"),
            };
            self.conn
                .execute(&sql, params![st as i64, NID, pid, name])?;
        }
        Ok(())
    }
}

/// The kernel symbols to write, given the ids dispatches refer to.
///
/// A symbol whose code object is known is written as it is. One without
/// (HIP's host-side registration, `code_object_id` 0) is completed from
/// the HSA loader's symbol of the same name (its code object, kernel object
/// and descriptor fields) and written only if a dispatch refers to it;
/// with no such loader symbol it is written as it is (its code object then
/// gets a placeholder row).
fn symbols_to_write(
    kernels: Vec<KernelSymbol>,
    code_objects: &[rocwasm_core::CodeObject],
    dispatched: &HashSet<u64>,
) -> Vec<KernelSymbol> {
    let known: HashSet<u64> = code_objects.iter().map(|c| c.id).collect();
    let mut loaded: HashMap<String, KernelSymbol> = HashMap::new();
    for k in kernels.iter().filter(|k| known.contains(&k.code_object_id)) {
        loaded.entry(k.name.clone()).or_insert_with(|| k.clone());
    }
    kernels
        .into_iter()
        .filter_map(|k| {
            if known.contains(&k.code_object_id) {
                return Some(k);
            }
            match loaded.get(&k.name) {
                None => Some(k),
                Some(_) if !dispatched.contains(&k.id) => None,
                Some(l) => Some(KernelSymbol {
                    id: k.id,
                    name: k.name,
                    demangled_name: k.demangled_name,
                    kernel_address: k.kernel_address,
                    ..l.clone()
                }),
            }
        })
        .collect()
}

impl Sink for RocpdSink {
    fn name(&self) -> &'static str {
        "rocpd"
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
            .claim(&self.path, &Producer::Sink("rocpd"))
            .is_err()
        {
            self.refused = true;
            return Ok(());
        }
        let conn = Connection::open(&self.path)
            .with_context(|| format!("opening {}", self.path.display()))?;
        conn.set_prepared_statement_cache_capacity(rows::statement_cache_capacity(RECORD_TABLES));
        // Records come before the symbols they refer to (those are complete
        // only at the end): foreign keys are declared, and checked by the
        // tests on the finished file, but not enforced while writing.
        conn.execute_batch(
            "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; PRAGMA foreign_keys = OFF;",
        )?;
        let uuid = new_uuid(ctx.meta.process_hash());
        let h = hex(&uuid);
        let suffix = format!("_{h}");
        let guid = format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        );
        conn.execute_batch("BEGIN")?;
        schema::create_run_tables(&conn, &suffix, &guid)?;
        let sql = insert_sql(metadata::TABLE, &suffix, &[metadata::TAG, metadata::VALUE]);
        for (tag, value) in [
            ("schema_version", "3"),
            ("uuid", suffix.as_str()),
            ("guid", guid.as_str()),
        ] {
            conn.execute(&sql, params![tag, value])?;
        }
        let machine_id = std::fs::read_to_string("/etc/machine-id")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| format!("{:016x}", ctx.meta.process_hash()));
        {
            use info_node as n;
            conn.execute(
                &insert_sql(
                    n::TABLE,
                    &suffix,
                    &[n::ID, n::HASH, n::MACHINE_ID, n::HOSTNAME, n::SYSTEM_NAME],
                ),
                params![
                    NID,
                    ctx.meta.process_hash() as i64,
                    machine_id,
                    ctx.meta.hostname,
                    "Linux"
                ],
            )?;
        }
        schema::create_views(&conn)?;
        conn.execute_batch("COMMIT")?;
        let mut run = Run {
            conn,
            sql: Inserts::new(&suffix),
            suffix,
            strings: HashMap::new(),
            operation_names: HashMap::new(),
            kind_names: HashMap::new(),
            threads: HashSet::new(),
            pid: i64::from(ctx.meta.pid),
            ppid: i64::from(ctx.meta.ppid),
            no_region: 0,
            next_event: 0,
            agents: HashSet::new(),
            kernels: HashSet::new(),
            queues: HashSet::new(),
            streams: HashSet::new(),
        };
        run.no_region = run.string_id("")?;
        self.run = Some(run);
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        if self.refused {
            return Ok(());
        }
        self.unfiled.count_unplaced_tables(batch);
        let path = self.path.clone();
        let run = self.run()?;
        run.conn.execute_batch("BEGIN")?;
        match run.write_batch(batch, ctx) {
            Ok(()) => run
                .conn
                .execute_batch("COMMIT")
                .with_context(|| format!("writing {}", path.display())),
            Err(e) => {
                let _ = run.conn.execute_batch("ROLLBACK");
                Err(e.context(format!("writing {}", path.display())))
            }
        }
    }

    fn notes(&mut self) -> Vec<String> {
        self.unfiled.take_notes("rocpd")
    }

    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        if self.refused {
            return Ok(Vec::new());
        }
        let path = self.path.clone();
        let mut run = self
            .run
            .take()
            .context("rocpd sink finished before begin()")?;
        run.conn.execute_batch("BEGIN")?;
        run.write_info(ctx)
            .with_context(|| format!("writing {}", path.display()))?;
        run.conn.execute_batch("COMMIT")?;
        // Leave a self-contained file behind (no journal, default durability).
        run.conn
            .execute_batch("PRAGMA synchronous = FULL; PRAGMA journal_mode = DELETE;")?;
        let _: Option<i64> = run
            .conn
            .query_row("PRAGMA schema_version", [], |r| r.get(0))
            .optional()?;
        Ok(vec![path])
    }
}
