//! rocpd SQLite output (schema version 3).
//!
//! Each run adds its own set of tables (`rocpd_region_<uuid>`, …) to the
//! database file and recreates the plain views (`rocpd_region`, …) as the
//! `UNION ALL` of every run, so ranks or repeated runs that write the same
//! file merge into one database (see [`schema`]).
//!
//! The tables, their columns and the values below are [`schema`]'s, which
//! the reader of `rocwasm-replay` uses too. Mapping from batches:
//! - API calls → `rocpd_region` (name = function name) with an event whose
//!   category is the kind name (`HIP_RUNTIME_API`, …) and which holds the
//!   correlation id;
//! - kernel dispatches → `rocpd_kernel_dispatch` (`kernel_id` = the run's
//!   kernel id, also the `rocpd_info_kernel_symbol` row id);
//! - memory copies → `rocpd_memory_copy` (name = direction);
//! - allocations and scratch events → `rocpd_memory_allocate` with
//!   `level` REAL/VIRTUAL or SCRATCH ([`schema::MemoryOperation`]).
//!
//! `tid` columns refer to `rocpd_info_thread.id`; the OS thread id is that
//! row's `tid`. A non-zero external correlation id (and scratch flags) go to
//! the event's `extdata` JSON ([`schema::EventExtdata`]).
//!
//! Speed: one transaction per batch, cached prepared statements, ids assigned
//! here rather than read back, `synchronous = OFF` while writing (a crashed
//! run's database is not worth an fsync per batch).

pub mod schema;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use anyhow::{Context, Result};
use rocwasm_core::{AgentType, Batch, BufferTracingKind, CodeObjectStorage};
use rusqlite::{params, Connection, OptionalExtension};

use schema::{
    event, info_agent, info_code_object, info_kernel_symbol, info_node, info_process, info_queue,
    info_stream, info_thread, insert_or_ignore_sql, insert_sql, kernel_dispatch, memory_allocate,
    memory_copy, metadata, region, string, EventExtdata, MemoryOperation,
};

use crate::claims::{OutputClaims, Producer};
use crate::names::kind_name;
use crate::paths::output_path;
use crate::sink::{hash_ids, Sink, SinkContext};

/// Node and process row ids: one node and one process per run.
const NID: i64 = 1;
const PID_ROW: i64 = 1;

/// Writes (or adds a run to) a rocpd database. See the module docs.
pub struct RocpdSink {
    path: PathBuf,
    run: Option<Run>,
    claims: OutputClaims,
    /// The claim of the file was refused: write nothing.
    refused: bool,
}

struct Run {
    conn: Connection,
    suffix: String,
    sql: Inserts,
    strings: HashMap<String, i64>,
    threads: HashMap<u64, i64>,
    next_event: i64,
    agents: HashSet<u64>,
    kernels: HashSet<u64>,
    queues: HashSet<u64>,
    streams: HashSet<u64>,
}

/// The `INSERT` statements of one run's record tables, built once from the
/// schema (each is a prepared-statement cache key, looked up per row).
struct Inserts {
    string: String,
    thread: String,
    event: String,
    region: String,
    kernel_dispatch: String,
    memory_copy: String,
    memory_allocate: String,
}

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
                    info_thread::PID,
                    info_thread::TID,
                ],
            ),
            event: insert_sql(
                event::TABLE,
                s,
                &[
                    event::ID,
                    event::CATEGORY_ID,
                    event::CORRELATION_ID,
                    event::EXTDATA,
                ],
            ),
            region: {
                use region as r;
                insert_sql(
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
                insert_sql(
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
                        k::EVENT_ID,
                    ],
                )
            },
            memory_copy: {
                use memory_copy as c;
                insert_sql(
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
                insert_sql(
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
                    ],
                )
            },
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
        }
    }

    /// A sink writing exactly `path` (which may already hold other runs).
    pub fn at_path(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            run: None,
            claims: OutputClaims::new(),
            refused: false,
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

    fn thread_row(&mut self, tid: u64, pid: u32) -> Result<i64> {
        if let Some(&id) = self.threads.get(&tid) {
            return Ok(id);
        }
        let id = self.threads.len() as i64 + 1;
        self.conn
            .prepare_cached(&self.sql.thread)?
            .execute(params![id, NID, i64::from(pid), tid as i64])?;
        self.threads.insert(tid, id);
        Ok(id)
    }

    fn event(&mut self, category: i64, correlation: u64, extdata: EventExtdata) -> Result<i64> {
        self.next_event += 1;
        let id = self.next_event;
        let extdata = extdata.to_json();
        self.conn.prepare_cached(&self.sql.event)?.execute(params![
            id,
            category,
            correlation as i64,
            extdata.as_deref().unwrap_or("{}")
        ])?;
        Ok(id)
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        let pid = ctx.meta.pid;

        let a = &batch.api_calls;
        for i in 0..a.len() {
            let category = self.string_id(&kind_name(a.kind[i]))?;
            let name = self.string_id(&ctx.names.name(a.kind[i], a.operation[i]))?;
            let tid = self.thread_row(a.thread_id[i], pid)?;
            let event = self.event(
                category,
                a.correlation_id[i],
                external(a.external_correlation_id[i]),
            )?;
            self.conn
                .prepare_cached(&self.sql.region)?
                .execute(params![
                    NID,
                    PID_ROW,
                    tid,
                    a.start[i] as i64,
                    a.end[i] as i64,
                    name,
                    event
                ])?;
        }

        let k = &batch.kernel_dispatches;
        if !k.is_empty() {
            let category = self.string_id(BufferTracingKind::KernelDispatch.name())?;
            for i in 0..k.len() {
                let tid = self.thread_row(k.thread_id[i], pid)?;
                let event = self.event(
                    category,
                    k.correlation_id[i],
                    external(k.external_correlation_id[i]),
                )?;
                self.agents.insert(k.agent_id[i]);
                self.kernels.insert(k.kernel_id[i]);
                self.queues.insert(k.queue_id[i]);
                self.streams.insert(k.stream_id[i]);
                self.conn
                    .prepare_cached(&self.sql.kernel_dispatch)?
                    .execute(params![
                        NID,
                        PID_ROW,
                        tid,
                        k.agent_id[i] as i64,
                        k.kernel_id[i] as i64,
                        k.dispatch_id[i] as i64,
                        k.queue_id[i] as i64,
                        k.stream_id[i] as i64,
                        k.start[i] as i64,
                        k.end[i] as i64,
                        k.private_segment_size[i],
                        k.group_segment_size[i],
                        k.workgroup_x[i],
                        k.workgroup_y[i],
                        k.workgroup_z[i],
                        k.grid_x[i],
                        k.grid_y[i],
                        k.grid_z[i],
                        event,
                    ])?;
            }
        }

        let c = &batch.memory_copies;
        if !c.is_empty() {
            let kind = BufferTracingKind::MemoryCopy;
            let category = self.string_id(kind.name())?;
            for i in 0..c.len() {
                let name = self.string_id(&ctx.names.name(kind.raw(), c.operation[i]))?;
                let tid = self.thread_row(c.thread_id[i], pid)?;
                let event = self.event(
                    category,
                    c.correlation_id[i],
                    external(c.external_correlation_id[i]),
                )?;
                self.agents.insert(c.src_agent_id[i]);
                self.agents.insert(c.dst_agent_id[i]);
                self.streams.insert(c.stream_id[i]);
                self.conn
                    .prepare_cached(&self.sql.memory_copy)?
                    .execute(params![
                        NID,
                        PID_ROW,
                        tid,
                        c.start[i] as i64,
                        c.end[i] as i64,
                        name,
                        c.dst_agent_id[i] as i64,
                        c.dst_address[i] as i64,
                        c.src_agent_id[i] as i64,
                        c.src_address[i] as i64,
                        c.bytes[i] as i64,
                        c.stream_id[i] as i64,
                        event,
                    ])?;
            }
        }

        let m = &batch.memory_allocations;
        if !m.is_empty() {
            let category = self.string_id(BufferTracingKind::MemoryAllocation.name())?;
            for i in 0..m.len() {
                let (ty, level) = MemoryOperation::Allocation(m.operation[i]).type_and_level();
                let tid = self.thread_row(m.thread_id[i], pid)?;
                let event = self.event(
                    category,
                    m.correlation_id[i],
                    external(m.external_correlation_id[i]),
                )?;
                self.agents.insert(m.agent_id[i]);
                self.insert_allocate(
                    tid,
                    m.agent_id[i],
                    ty,
                    level,
                    m.start[i],
                    m.end[i],
                    m.address[i],
                    m.allocation_size[i],
                    None,
                    event,
                )?;
            }
        }

        let s = &batch.scratch_memory;
        if !s.is_empty() {
            let category = self.string_id(BufferTracingKind::ScratchMemory.name())?;
            for i in 0..s.len() {
                let (ty, level) = MemoryOperation::Scratch(s.operation[i]).type_and_level();
                let tid = self.thread_row(s.thread_id[i], pid)?;
                let extdata = EventExtdata {
                    external: s.external_correlation_id[i],
                    flags: Some(u64::from(s.flags[i])),
                };
                let event = self.event(category, s.correlation_id[i], extdata)?;
                self.agents.insert(s.agent_id[i]);
                self.queues.insert(s.queue_id[i]);
                self.insert_allocate(
                    tid,
                    s.agent_id[i],
                    ty,
                    level,
                    s.start[i],
                    s.end[i],
                    0,
                    s.allocation_size[i],
                    Some(s.queue_id[i]),
                    event,
                )?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn insert_allocate(
        &mut self,
        tid: i64,
        agent: u64,
        ty: Option<&str>,
        level: &str,
        start: u64,
        end: u64,
        address: u64,
        size: u64,
        queue: Option<u64>,
        event: i64,
    ) -> Result<()> {
        self.conn
            .prepare_cached(&self.sql.memory_allocate)?
            .execute(params![
                NID,
                PID_ROW,
                tid,
                agent as i64,
                ty,
                level,
                start as i64,
                end as i64,
                address as i64,
                size as i64,
                queue.map(|q| q as i64),
                event
            ])?;
        Ok(())
    }

    /// Writes the info tables that need the complete symbol tables.
    fn write_info(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        let m = ctx.meta;
        let s = self.suffix.clone();
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
                    PID_ROW,
                    NID,
                    m.ppid,
                    m.pid,
                    start,
                    end,
                    start,
                    end,
                    m.command.join(" ")
                ],
            )?;
        }
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
                        PID_ROW,
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
                    .execute(&sql, params![id as i64, NID, PID_ROW, id as i64])?;
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
            for c in ctx.symbols.code_objects() {
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
                        PID_ROW,
                        c.agent_id as i64,
                        c.uri,
                        c.load_base as i64,
                        c.load_size as i64,
                        c.load_delta,
                        storage
                    ],
                )?;
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
            for k in ctx.symbols.kernels() {
                self.kernels.remove(&k.id);
                let display = if k.demangled_name.is_empty() {
                    &k.name
                } else {
                    &k.demangled_name
                };
                self.conn.execute(
                    &sql,
                    params![
                        k.id as i64,
                        NID,
                        PID_ROW,
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
            // Kernels dispatched but never described: a row named after the id.
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
            for id in std::mem::take(&mut self.kernels) {
                let name = format!("kernel_{id}");
                self.conn
                    .execute(&sql, params![id as i64, NID, PID_ROW, 0, name, name])?;
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
            self.conn
                .execute(&sql, params![q as i64, NID, PID_ROW, format!("queue {q}")])?;
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
            self.conn.execute(
                &sql,
                params![st as i64, NID, PID_ROW, format!("stream {st}")],
            )?;
        }
        Ok(())
    }
}

/// The `extdata` of a record with external correlation id `id`.
fn external(id: u64) -> EventExtdata {
    EventExtdata {
        external: id,
        flags: None,
    }
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
        conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY;")?;
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
        self.run = Some(Run {
            conn,
            sql: Inserts::new(&suffix),
            suffix,
            strings: HashMap::new(),
            threads: HashMap::new(),
            next_event: 0,
            agents: HashSet::new(),
            kernels: HashSet::new(),
            queues: HashSet::new(),
            streams: HashSet::new(),
        });
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        if self.refused {
            return Ok(());
        }
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
