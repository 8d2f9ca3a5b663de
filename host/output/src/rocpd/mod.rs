//! rocpd SQLite output (schema version 3).
//!
//! Each run adds its own set of tables (`rocpd_region_<uuid>`, …) to the
//! database file and recreates the plain views (`rocpd_region`, …) as the
//! `UNION ALL` of every run, so ranks or repeated runs that write the same
//! file merge into one database (see [`schema`]).
//!
//! Mapping from batches:
//! - API calls → `rocpd_region` (name = function name) with an event whose
//!   category is the kind name (`HIP_RUNTIME_API`, …) and which holds the
//!   correlation id;
//! - kernel dispatches → `rocpd_kernel_dispatch` (`kernel_id` = the run's
//!   kernel id, also the `rocpd_info_kernel_symbol` row id);
//! - memory copies → `rocpd_memory_copy` (name = direction);
//! - allocations and scratch events → `rocpd_memory_allocate` with
//!   `level` REAL/VIRTUAL or SCRATCH.
//!
//! `tid` columns refer to `rocpd_info_thread.id`; the OS thread id is that
//! row's `tid`. A non-zero external correlation id (and scratch flags) go to
//! the event's `extdata` JSON.
//!
//! Speed: one transaction per batch, cached prepared statements, ids assigned
//! here rather than read back, `synchronous = OFF` while writing (a crashed
//! run's database is not worth an fsync per batch).

pub mod schema;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use anyhow::{Context, Result};
use rocwasm_core::registry::{allocation, scratch};
use rocwasm_core::{AgentType, Batch, BufferTracingKind, CodeObjectStorage};
use rusqlite::{params, Connection, OptionalExtension};

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
    strings: HashMap<String, i64>,
    threads: HashMap<u64, i64>,
    next_event: i64,
    agents: HashSet<u64>,
    kernels: HashSet<u64>,
    queues: HashSet<u64>,
    streams: HashSet<u64>,
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
            .prepare_cached(&format!(
                "INSERT INTO \"rocpd_string{}\" (id, string) VALUES (?1, ?2)",
                self.suffix
            ))?
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
            .prepare_cached(&format!(
                "INSERT INTO \"rocpd_info_thread{}\" (id, nid, pid, tid) VALUES (?1, ?2, ?3, ?4)",
                self.suffix
            ))?
            .execute(params![id, NID, i64::from(pid), tid as i64])?;
        self.threads.insert(tid, id);
        Ok(id)
    }

    fn event(&mut self, category: i64, correlation: u64, extdata: Option<String>) -> Result<i64> {
        self.next_event += 1;
        let id = self.next_event;
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO \"rocpd_event{}\" (id, category_id, correlation_id, extdata) VALUES (?1, ?2, ?3, coalesce(?4, '{{}}'))",
                self.suffix
            ))?
            .execute(params![id, category, correlation as i64, extdata])?;
        Ok(id)
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        let pid = ctx.meta.pid;
        let sfx = self.suffix.clone();

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
                .prepare_cached(&format!(
                    "INSERT INTO \"rocpd_region{sfx}\" (nid, pid, tid, start, \"end\", name_id, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                ))?
                .execute(params![NID, PID_ROW, tid, a.start[i] as i64, a.end[i] as i64, name, event])?;
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
                    .prepare_cached(&format!(
                        "INSERT INTO \"rocpd_kernel_dispatch{sfx}\" (nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\", private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
                    ))?
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
                    .prepare_cached(&format!(
                        "INSERT INTO \"rocpd_memory_copy{sfx}\" (nid, pid, tid, start, \"end\", name_id, dst_agent_id, dst_address, src_agent_id, src_address, size, stream_id, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
                    ))?
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
                let (ty, level) = match m.operation[i] {
                    allocation::ALLOCATE => (Some("ALLOC"), "REAL"),
                    allocation::VMEM_ALLOCATE => (Some("ALLOC"), "VIRTUAL"),
                    allocation::FREE => (Some("FREE"), "REAL"),
                    allocation::VMEM_FREE => (Some("FREE"), "VIRTUAL"),
                    _ => (None, "REAL"),
                };
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
                let ty = match s.operation[i] {
                    scratch::ALLOC => Some("ALLOC"),
                    scratch::FREE => Some("FREE"),
                    scratch::ASYNC_RECLAIM => Some("RECLAIM"),
                    _ => None,
                };
                let tid = self.thread_row(s.thread_id[i], pid)?;
                let mut extdata = serde_json::json!({ "flags": s.flags[i] });
                if s.external_correlation_id[i] != 0 {
                    extdata["external"] = s.external_correlation_id[i].into();
                }
                let event = self.event(category, s.correlation_id[i], Some(extdata.to_string()))?;
                self.agents.insert(s.agent_id[i]);
                self.queues.insert(s.queue_id[i]);
                self.insert_allocate(
                    tid,
                    s.agent_id[i],
                    ty,
                    "SCRATCH",
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
            .prepare_cached(&format!(
                "INSERT INTO \"rocpd_memory_allocate{}\" (nid, pid, tid, agent_id, type, level, start, \"end\", address, size, queue_id, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                self.suffix
            ))?
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
        self.conn.execute(
            &format!("INSERT INTO \"rocpd_info_process{s}\" (id, nid, ppid, pid, init, fini, start, \"end\", command) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5, ?6, ?7)"),
            params![PID_ROW, NID, m.ppid, m.pid, m.start_ns as i64, m.end_ns as i64, m.command.join(" ")],
        )?;
        for a in ctx.symbols.agents() {
            self.agents.remove(&a.id);
            self.conn.execute(
                &format!("INSERT INTO \"rocpd_info_agent{s}\" (id, nid, pid, type, absolute_index, logical_index, type_index, name, model_name, product_name) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?5, ?6, ?6, ?7)"),
                params![
                    a.id as i64,
                    NID,
                    PID_ROW,
                    match a.agent_type { AgentType::Cpu => "CPU", AgentType::Gpu => "GPU" },
                    a.node_id,
                    a.name,
                    a.product_name
                ],
            )?;
        }
        // Agents referenced by records but never described still get a row, so
        // joins do not silently drop records.
        for id in std::mem::take(&mut self.agents) {
            self.conn.execute(
                &format!("INSERT OR IGNORE INTO \"rocpd_info_agent{s}\" (id, nid, pid, logical_index) VALUES (?1, ?2, ?3, ?1)"),
                params![id as i64, NID, PID_ROW],
            )?;
        }
        for c in ctx.symbols.code_objects() {
            let storage = match c.storage {
                CodeObjectStorage::File { .. } => Some("FILE"),
                CodeObjectStorage::Memory { .. } => Some("MEMORY"),
                CodeObjectStorage::None => None,
            };
            self.conn.execute(
                &format!("INSERT INTO \"rocpd_info_code_object{s}\" (id, nid, pid, agent_id, uri, load_base, load_size, load_delta, storage_type) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
                params![c.id as i64, NID, PID_ROW, c.agent_id as i64, c.uri, c.load_base as i64, c.load_size as i64, c.load_delta, storage],
            )?;
        }
        for k in ctx.symbols.kernels() {
            self.kernels.remove(&k.id);
            self.conn.execute(
                &format!("INSERT INTO \"rocpd_info_kernel_symbol{s}\" (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
                params![
                    k.id as i64, NID, PID_ROW, k.code_object_id as i64, k.name,
                    if k.demangled_name.is_empty() { &k.name } else { &k.demangled_name },
                    k.kernel_object as i64, k.kernarg_segment_size, k.kernarg_segment_alignment,
                    k.group_segment_size, k.private_segment_size, k.sgpr_count, k.arch_vgpr_count,
                    k.accum_vgpr_count
                ],
            )?;
        }
        for id in std::mem::take(&mut self.kernels) {
            let name = format!("kernel_{id}");
            self.conn.execute(
                &format!("INSERT INTO \"rocpd_info_kernel_symbol{s}\" (id, nid, pid, code_object_id, kernel_name, display_name) VALUES (?1, ?2, ?3, 0, ?4, ?4)"),
                params![id as i64, NID, PID_ROW, name],
            )?;
        }
        for q in std::mem::take(&mut self.queues) {
            self.conn.execute(
                &format!("INSERT INTO \"rocpd_info_queue{s}\" (id, nid, pid, name) VALUES (?1, ?2, ?3, ?4)"),
                params![q as i64, NID, PID_ROW, format!("queue {q}")],
            )?;
        }
        for st in std::mem::take(&mut self.streams) {
            self.conn.execute(
                &format!("INSERT INTO \"rocpd_info_stream{s}\" (id, nid, pid, name) VALUES (?1, ?2, ?3, ?4)"),
                params![st as i64, NID, PID_ROW, format!("stream {st}")],
            )?;
        }
        Ok(())
    }
}

fn external(id: u64) -> Option<String> {
    (id != 0).then(|| format!("{{\"external\":{id}}}"))
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
        conn.execute(
            &format!("INSERT INTO \"rocpd_metadata{suffix}\" (tag, value) VALUES ('schema_version', '3'), ('uuid', ?1), ('guid', ?2)"),
            params![suffix, guid],
        )?;
        let machine_id = std::fs::read_to_string("/etc/machine-id")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| format!("{:016x}", ctx.meta.process_hash()));
        conn.execute(
            &format!("INSERT INTO \"rocpd_info_node{suffix}\" (id, hash, machine_id, hostname, system_name) VALUES (?1, ?2, ?3, ?4, 'Linux')"),
            params![NID, ctx.meta.process_hash() as i64, machine_id, ctx.meta.hostname],
        )?;
        schema::create_views(&conn)?;
        conn.execute_batch("COMMIT")?;
        self.run = Some(Run {
            conn,
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
