//! rocpd SQLite databases (schema version 3).
//!
//! Every table, column and value is `crate::rocpd::schema`'s, the
//! schema the rocpd sink writes; its docs say what is tolerated.
//!
//! Symbols, agents, threads and strings are loaded when the file is opened.
//! Records are read by a background thread that owns its own connection and
//! sends ready batches through a bounded channel, so SQLite's row stepping
//! overlaps with whatever consumes the batches.
//!
//! Each run's tables (`rocpd_kernel_dispatch_<uuid>`, …, the members of the
//! plain views) are read one run after another: joining through the
//! `UNION ALL` views would defeat the primary-key lookups on `rocpd_event`.
//! A database with plain tables and no per-run suffix is read as one run.
//! With several runs, kernel ids of the second and later runs are offset by
//! `run << 40` so that they stay distinct.

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

use crate::rocpd::schema::{
    self, column_list, event, info_agent, info_kernel_symbol, info_node, info_pmc, info_process,
    info_thread, kernel_dispatch, memory_allocate, memory_copy, pmc_event, region, sample, string,
    track, EventExtdata, MemoryOperation,
};
use crate::OperationNames;
use rocwasm_core::{
    AgentInfo, AgentType, ApiCall, Batch, BufferTracingKind, CounterSample, KernelDispatch,
    KernelSymbol, MemoryAllocation, MemoryCopy, ScratchMemory,
};
use rusqlite::{Connection, OpenFlags, Row};

use crate::replay::error::{ReplayError, Result};
use crate::replay::reader::{BatchReader, State};
use crate::replay::report::Reason;

pub(crate) struct RocpdReader {
    rx: Receiver<Result<Read>>,
    path: std::path::PathBuf,
}

/// What the reading thread sends: batches, and at the end of each run what
/// it could not map.
enum Read {
    Batch(Box<Batch>),
    Unmapped(Unmapped),
}

/// Rows of a run the reader could not map, by reason: how many, and the
/// first example.
#[derive(Default)]
struct Unmapped(HashMap<Reason, (u64, Option<String>)>);

impl Unmapped {
    fn note(&mut self, reason: Reason, example: &str) {
        self.note_many(reason, 1, example);
    }

    fn note_many(&mut self, reason: Reason, rows: u64, example: &str) {
        let entry = self.0.entry(reason).or_insert((0, None));
        entry.0 += rows;
        entry.1.get_or_insert_with(|| example.to_string());
    }
}

/// One run's view of the file: its table suffix and its strings/threads.
#[derive(Clone)]
struct Run {
    suffix: String,
    id_offset: u64,
    strings: Arc<HashMap<i64, String>>,
    threads: Arc<HashMap<i64, u64>>,
    /// `rocpd_info_pmc` ids → the replay's counter-name ids.
    counters: Arc<HashMap<i64, u32>>,
}

fn open_conn(path: &Path) -> Result<Connection> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| ReplayError::sqlite(path, e))
}

fn sql_err(path: &Path) -> impl Fn(rusqlite::Error) -> ReplayError + '_ {
    move |e| ReplayError::new(path, None, format!("rocpd query failed: {e}"))
}

impl RocpdReader {
    pub(crate) fn open(path: &Path, state: &mut State) -> Result<Self> {
        let conn = open_conn(path)?;
        let suffixes = run_suffixes(&conn).map_err(|e| ReplayError::sqlite(path, e))?;
        if suffixes.is_empty() {
            return Err(ReplayError::new(
                path,
                None,
                "not a rocpd database (no rocpd_metadata table)",
            ));
        }
        let mut runs = Vec::new();
        let mut total = 0u64;
        for (i, suffix) in suffixes.into_iter().enumerate() {
            let run = load_run(&conn, path, &suffix, (i as u64) << 40, state, i == 0)?;
            for t in [
                region::TABLE,
                kernel_dispatch::TABLE,
                memory_copy::TABLE,
                memory_allocate::TABLE,
            ] {
                let n: i64 = conn
                    .query_row(&format!("SELECT count(*) FROM \"{t}{suffix}\""), [], |r| {
                        r.get(0)
                    })
                    .map_err(sql_err(path))?;
                total += n as u64;
            }
            // Counter values, when the file has the table (older files do not).
            total += conn
                .query_row(
                    &format!("SELECT count(*) FROM \"{}{suffix}\"", pmc_event::TABLE),
                    [],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap_or(0) as u64;
            runs.push(run);
            say_unread(&conn, path, &suffix, state);
        }
        state.progress.set_total(total);

        let (tx, rx) = sync_channel(2);
        let path = path.to_path_buf();
        let path_for_report = path.clone();
        let names = state.names.clone();
        let chunk = state.chunk_rows;
        std::thread::Builder::new()
            .name("rocpd-replay".into())
            .spawn(move || {
                let result = (|| -> Result<()> {
                    let conn = open_conn(&path)?;
                    for run in &runs {
                        let mut emit = |b: Batch| {
                            tx.send(Ok(Read::Batch(Box::new(b))))
                                .map_err(|_| ReplayError::new(&path, None, "consumer gone"))
                        };
                        let mut unmapped = Unmapped::default();
                        read_records(&conn, &path, run, &names, chunk, &mut emit, &mut unmapped)?;
                        if !unmapped.0.is_empty() {
                            tx.send(Ok(Read::Unmapped(unmapped)))
                                .map_err(|_| ReplayError::new(&path, None, "consumer gone"))?;
                        }
                    }
                    Ok(())
                })();
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                }
            })
            .map_err(|e| ReplayError::io(Path::new("rocpd-replay thread"), e))?;
        Ok(Self {
            rx,
            path: path_for_report,
        })
    }
}

impl BatchReader for RocpdReader {
    fn next_batch(&mut self, state: &mut State) -> Result<Option<Batch>> {
        loop {
            match self.rx.recv() {
                Ok(Ok(Read::Batch(b))) => return Ok(Some(*b)),
                Ok(Ok(Read::Unmapped(u))) => {
                    let file = state.report.file(&self.path);
                    for (reason, (count, example)) in u.0 {
                        file.issue(reason, None, example.as_deref(), count);
                    }
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(None), // the reader thread is done
            }
        }
    }
}

/// Says what of a run's tables no batch has a place for: the API calls'
/// arguments (`rocpd_arg`: replayed calls have none). A file without the
/// table counts nothing.
fn say_unread(conn: &Connection, path: &Path, suffix: &str, state: &mut State) {
    let table = schema::arg::TABLE;
    let rows: i64 = conn
        .query_row(
            &format!("SELECT count(*) FROM \"{table}{suffix}\""),
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    if rows > 0 {
        let what = "rocpd_arg (the API calls' arguments)".to_string();
        state
            .report
            .file(path)
            .issue(Reason::NotCarried { what }, None, None, rows as u64);
    }
}

/// Table suffixes of every run, oldest first; `""` for plain tables.
fn run_suffixes(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut out = schema::run_suffixes(conn)?;
    if out.is_empty() && schema::has_plain_tables(conn)? {
        out.push(String::new());
    }
    Ok(out)
}

/// `coalesce("<column>", 0)`.
fn or_zero(column: &str) -> String {
    format!("coalesce(\"{column}\", 0)")
}

/// `coalesce("<column>", '')`.
fn or_empty(column: &str) -> String {
    format!("coalesce(\"{column}\", '')")
}

fn load_run(
    conn: &Connection,
    path: &Path,
    s: &str,
    off: u64,
    state: &mut State,
    first: bool,
) -> Result<Run> {
    let e = sql_err(path);
    let mut strings = HashMap::new();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT \"{}\", \"{}\" FROM \"{}{s}\"",
            string::ID,
            string::STRING,
            string::TABLE
        ))
        .map_err(&e)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .map_err(&e)?;
    for row in rows {
        let (id, text) = row.map_err(&e)?;
        strings.insert(id, text);
    }
    let mut threads = HashMap::new();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT \"{}\", \"{}\" FROM \"{}{s}\"",
            info_thread::ID,
            info_thread::TID,
            info_thread::TABLE
        ))
        .map_err(&e)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .map_err(&e)?;
    for row in rows {
        let (id, tid) = row.map_err(&e)?;
        threads.insert(id, tid as u64);
    }
    if first {
        let mut stmt = conn
            .prepare(&{
                use info_process as p;
                format!(
                    "SELECT \"{}\", {}, {}, {}, {}, {} FROM \"{}{s}\" ORDER BY \"{}\" LIMIT 1",
                    p::PID,
                    or_zero(p::PPID),
                    or_empty(p::COMMAND),
                    or_zero(p::START),
                    or_zero(p::END),
                    or_empty(p::ENVIRONMENT),
                    p::TABLE,
                    p::ID
                )
            })
            .map_err(&e)?;
        let mut rows = stmt.query([]).map_err(&e)?;
        if let Some(r) = rows.next().map_err(&e)? {
            state.meta.pid = r.get::<_, i64>(0).map_err(&e)? as u32;
            state.meta.ppid = r.get::<_, i64>(1).map_err(&e)? as u32;
            let cmd: String = r.get(2).map_err(&e)?;
            state.meta.command = cmd.split_whitespace().map(str::to_string).collect();
            state.meta.start_ns = r.get::<_, i64>(3).map_err(&e)? as u64;
            state.meta.end_ns = r.get::<_, i64>(4).map_err(&e)? as u64;
            // rocprofv3's and rocwasm's: a JSON object of strings; anything
            // else reads as no environment.
            if let rusqlite::types::Value::Text(env) = r.get(5).map_err(&e)? {
                state.meta.environment = serde_json::from_str(&env).unwrap_or_default();
                state.meta.rank_and_job_from_environment();
            }
        }
        let host: Option<String> = conn
            .query_row(
                &format!(
                    "SELECT \"{}\" FROM \"{}{s}\" ORDER BY \"{}\" LIMIT 1",
                    info_node::HOSTNAME,
                    info_node::TABLE,
                    info_node::ID
                ),
                [],
                |r| r.get(0),
            )
            .unwrap_or(None);
        state.meta.hostname = host.unwrap_or_default();
    }
    let mut stmt = conn
        .prepare(&{
            use info_agent as a;
            format!(
                "SELECT \"{}\", \"{}\", {}, {}, {} FROM \"{}{s}\"",
                a::ID,
                a::TYPE,
                or_zero(a::LOGICAL_INDEX),
                or_empty(a::NAME),
                or_empty(a::PRODUCT_NAME),
                a::TABLE
            )
        })
        .map_err(&e)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(AgentInfo {
                id: r.get::<_, i64>(0)? as u64,
                agent_type: if r.get::<_, Option<String>>(1)?.as_deref() == Some(schema::AGENT_CPU)
                {
                    AgentType::Cpu
                } else {
                    AgentType::Gpu
                },
                node_id: r.get::<_, i64>(2)? as u32,
                name: r.get(3)?,
                product_name: r.get(4)?,
                properties: Default::default(),
            })
        })
        .map_err(&e)?;
    for a in rows {
        state.symbols.insert_agent(a.map_err(&e)?);
    }
    let mut stmt = conn
        .prepare(&{
            use info_kernel_symbol as k;
            let numbers: Vec<String> = [
                k::KERNEL_OBJECT,
                k::KERNARG_SEGMENT_SIZE,
                k::KERNARG_SEGMENT_ALIGNMENT,
                k::GROUP_SEGMENT_SIZE,
                k::PRIVATE_SEGMENT_SIZE,
                k::SGPR_COUNT,
                k::ARCH_VGPR_COUNT,
                k::ACCUM_VGPR_COUNT,
            ]
            .map(or_zero)
            .into();
            format!(
                "SELECT \"{}\", \"{}\", {}, {}, {} FROM \"{}{s}\"",
                k::ID,
                k::CODE_OBJECT_ID,
                or_empty(k::KERNEL_NAME),
                or_empty(k::DISPLAY_NAME),
                numbers.join(", "),
                k::TABLE
            )
        })
        .map_err(&e)?;
    let rows = stmt
        .query_map([], |r| {
            let name: String = r.get(2)?;
            let display: String = r.get(3)?;
            Ok(KernelSymbol {
                id: r.get::<_, i64>(0)? as u64 + off,
                code_object_id: r.get::<_, i64>(1)? as u64,
                demangled_name: if display.is_empty() {
                    name.clone()
                } else {
                    display
                },
                name,
                kernel_object: r.get::<_, i64>(4)? as u64,
                kernarg_segment_size: r.get(5)?,
                kernarg_segment_alignment: r.get(6)?,
                group_segment_size: r.get(7)?,
                private_segment_size: r.get(8)?,
                sgpr_count: r.get(9)?,
                arch_vgpr_count: r.get(10)?,
                accum_vgpr_count: r.get(11)?,
                kernel_code_entry_byte_offset: 0,
                kernel_address: 0,
            })
        })
        .map_err(&e)?;
    for k in rows {
        state.symbols.insert_kernel(k.map_err(&e)?);
    }
    // Hardware counters by their `rocpd_info_pmc` id, named in the replay's
    // symbol table (a file without the table has none).
    let mut counters = HashMap::new();
    if let Ok(mut stmt) = conn.prepare(&format!(
        "SELECT \"{}\", \"{}\" FROM \"{}{s}\"",
        info_pmc::ID,
        info_pmc::NAME,
        info_pmc::TABLE
    )) {
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(&e)?;
        for row in rows {
            let (id, name) = row.map_err(&e)?;
            counters.insert(id, state.symbols.intern_counter(&name));
        }
    }
    Ok(Run {
        suffix: s.to_string(),
        id_offset: off,
        strings: Arc::new(strings),
        threads: Arc::new(threads),
        counters: Arc::new(counters),
    })
}

/// The dispatch columns the dispatch and counter-sample queries read, in
/// the order `read_records` takes them.
const DISPATCH_COLUMNS: [&str; 16] = {
    use kernel_dispatch as k;
    [
        k::TID,
        k::START,
        k::END,
        k::AGENT_ID,
        k::QUEUE_ID,
        k::STREAM_ID,
        k::KERNEL_ID,
        k::DISPATCH_ID,
        k::PRIVATE_SEGMENT_SIZE,
        k::GROUP_SEGMENT_SIZE,
        k::WORKGROUP_SIZE_X,
        k::WORKGROUP_SIZE_Y,
        k::WORKGROUP_SIZE_Z,
        k::GRID_SIZE_X,
        k::GRID_SIZE_Y,
        k::GRID_SIZE_Z,
    ]
};

/// Counter samples of one run: each `rocpd_pmc_event` row with its
/// dispatch (the dispatch columns of [`record_queries`]' second query, its
/// event's correlation, then the `pmc_id` and the value).
fn pmc_query(s: &str) -> String {
    use kernel_dispatch as k;
    let correlation = event_correlation();
    format!(
        "SELECT {}, {correlation}, pe.\"{}\", pe.\"{}\" FROM \"{}{s}\" pe \
         JOIN \"{}{s}\" k ON k.\"{}\" = pe.\"{}\" \
         LEFT JOIN \"{}{s}\" e ON e.\"{}\" = k.\"{}\" ORDER BY pe.\"{}\"",
        column_list("k", &DISPATCH_COLUMNS),
        pmc_event::PMC_ID,
        pmc_event::VALUE,
        pmc_event::TABLE,
        k::TABLE,
        k::EVENT_ID,
        pmc_event::EVENT_ID,
        event::TABLE,
        event::ID,
        k::EVENT_ID,
        pmc_event::ID,
    )
}

/// The event's correlation columns every query ends its select list with,
/// in the order `read_records` reads them (see `Correlation`).
fn event_correlation() -> String {
    column_list(
        "e",
        &[
            event::CORRELATION_ID,
            event::EXTDATA,
            event::STACK_ID,
            event::PARENT_STACK_ID,
        ],
    )
}

/// The samples a run's markers left (rocprofv3's marks): thread, time and
/// category, then the event's correlation columns (as [`record_queries`]).
fn sample_query(s: &str) -> String {
    let correlation = event_correlation();
    format!(
        "SELECT t.\"{}\", x.\"{}\", e.\"{}\", {correlation} FROM \"{}{s}\" x \
         JOIN \"{}{s}\" t ON t.\"{}\" = x.\"{}\" \
         LEFT JOIN \"{}{s}\" e ON e.\"{}\" = x.\"{}\" ORDER BY x.\"{}\"",
        track::TID,
        sample::TIMESTAMP,
        event::CATEGORY_ID,
        sample::TABLE,
        track::TABLE,
        track::ID,
        sample::TRACK_ID,
        event::TABLE,
        event::ID,
        sample::EVENT_ID,
        sample::ID,
    )
}

/// The message of a marker event's `extdata` (`{"message": …}`).
fn marker_message(extdata: Option<&str>) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(extdata?).ok()?;
    Some(v.get("message")?.as_str()?.to_string())
}

/// The four record queries of one run (regions, dispatches, copies,
/// allocations), each joined to its event by primary key. Public for the
/// ingest benchmark, which times SQLite alone on exactly these queries.
///
/// `read_records` reads the columns by position: the select lists below
/// are in the order it expects.
pub fn record_queries(s: &str) -> [String; 4] {
    // `FROM "<table>_s" x LEFT JOIN "rocpd_event_s" e ON e.id = x.event_id ORDER BY x.id`
    let from = |table: &str, x: &str, event_id: &str, id: &str| {
        format!(
            "FROM \"{table}{s}\" {x} LEFT JOIN \"{}{s}\" e ON e.\"{}\" = {x}.\"{event_id}\" ORDER BY {x}.\"{id}\"",
            event::TABLE,
            event::ID
        )
    };
    // Each select list ends with the event's correlation columns, in this
    // order (see `Correlation`).
    let correlation = event_correlation();
    let regions = {
        use region as r;
        format!(
            "SELECT {}, {}, {correlation} {}",
            column_list("r", &[r::TID, r::START, r::END, r::NAME_ID]),
            column_list("e", &[event::CATEGORY_ID]),
            from(r::TABLE, "r", r::EVENT_ID, r::ID)
        )
    };
    let dispatches = {
        use kernel_dispatch as k;
        format!(
            "SELECT {}, {correlation} {}",
            column_list("k", &DISPATCH_COLUMNS),
            from(k::TABLE, "k", k::EVENT_ID, k::ID)
        )
    };
    let copies = {
        use memory_copy as c;
        let columns = [
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
        ];
        format!(
            "SELECT {}, {correlation} {}",
            column_list("c", &columns),
            from(c::TABLE, "c", c::EVENT_ID, c::ID)
        )
    };
    let allocations = {
        use memory_allocate as m;
        let columns = [
            m::TID,
            m::START,
            m::END,
            m::AGENT_ID,
            m::TYPE,
            m::LEVEL,
            m::ADDRESS,
            m::SIZE,
            m::QUEUE_ID,
            m::EXTDATA,
        ];
        format!(
            "SELECT {}, {correlation} {}",
            column_list("m", &columns),
            from(m::TABLE, "m", m::EVENT_ID, m::ID)
        )
    };
    [regions, dispatches, copies, allocations]
}

/// A region's (name, category) string ids.
type RegionKey = (Option<i64>, Option<i64>);

/// Reads a run's records in chunks and hands each full batch to `emit`.
fn read_records(
    conn: &Connection,
    path: &Path,
    run: &Run,
    names: &OperationNames,
    chunk: usize,
    emit: &mut dyn FnMut(Batch) -> Result<()>,
    unmapped: &mut Unmapped,
) -> Result<()> {
    let s = &run.suffix;
    let e = sql_err(path);
    let string = |id: Option<i64>| {
        id.and_then(|i| run.strings.get(&i))
            .map(String::as_str)
            .unwrap_or("")
    };
    let tid = |id: Option<i64>| id.and_then(|i| run.threads.get(&i).copied()).unwrap_or(0);
    let u = |r: &Row<'_>, i: usize| -> rusqlite::Result<u64> {
        Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0) as u64)
    };
    // The four correlation columns starting at `i`: (correlation_id,
    // extdata, stack_id, parent_stack_id) → (internal, external, ancestor,
    // flags of an old database's event).
    let correlation = |r: &Row<'_>, i: usize| -> rusqlite::Result<Correlation> {
        let ext = EventExtdata::parse(r.get::<_, Option<String>>(i + 1)?.as_deref());
        Ok(match r.get::<_, Option<i64>>(i + 2)? {
            // rocprofv3, and rocwasm since it writes what rocprofv3 does.
            Some(stack) => Correlation {
                internal: stack as u64,
                external: u(r, i)?,
                ancestor: u(r, i + 3)?,
                flags: ext.flags,
            },
            // Older rocwasm databases.
            None => Correlation {
                internal: u(r, i)?,
                external: ext.external,
                ancestor: 0,
                flags: ext.flags,
            },
        })
    };
    let mut batch = Batch::default();
    let mut rows_in_batch = 0usize;
    let push_done = |batch: &mut Batch,
                     rows: &mut usize,
                     emit: &mut dyn FnMut(Batch) -> Result<()>|
     -> Result<()> {
        *rows += 1;
        if *rows >= chunk {
            *rows = 0;
            emit(std::mem::take(batch))?;
        }
        Ok(())
    };

    // API calls and markers. (name, category) → (kind, op), resolved once;
    // `None`: a category this build does not know (not replayed, counted).
    let mut ops: HashMap<RegionKey, Option<(u32, u32)>> = HashMap::new();
    let marker = BufferTracingKind::MarkerCoreRangeApi;
    let mut stmt = conn.prepare(&record_queries(s)[0]).map_err(&e)?;
    let mut rows = stmt.query([]).map_err(&e)?;
    while let Some(r) = rows.next().map_err(&e)? {
        let key: RegionKey = (r.get(3).map_err(&e)?, r.get(4).map_err(&e)?);
        let resolved = *ops.entry(key).or_insert_with(|| {
            let (name, category) = (string(key.0), string(key.1));
            let kind = region_kind(category, name)?;
            Some((
                kind.raw(),
                crate::replay::reader::operation(names, kind, name).0,
            ))
        });
        let Some((mut kind, mut operation)) = resolved else {
            let name = string(key.0);
            let category = string(key.1).to_string();
            unmapped.note(Reason::UnknownKind { name: category }, name);
            continue;
        };
        // rocprofv3 names a marker range by its roctx operation and keeps
        // the message in the event's extdata: the message names it here.
        if kind == marker.raw() {
            let extdata: Option<String> = r.get(6).map_err(&e)?;
            if let Some(m) = marker_message(extdata.as_deref()) {
                (kind, operation) = (kind, names.resolve_or_register(kind, &m));
            }
        }
        let c = correlation(r, 5).map_err(&e)?;
        batch.api_calls.push(ApiCall {
            kind,
            operation,
            correlation_id: c.internal,
            external_correlation_id: c.external,
            ancestor: c.ancestor,
            thread_id: tid(r.get(0).map_err(&e)?),
            start: u(r, 1).map_err(&e)?,
            end: u(r, 2).map_err(&e)?,
        });
        push_done(&mut batch, &mut rows_in_batch, emit)?;
    }
    drop(rows);

    // Markers' marks (start = end): samples, named by their message.
    if let Ok(mut stmt) = conn.prepare(&sample_query(s)) {
        let mut rows = stmt.query([]).map_err(&e)?;
        while let Some(r) = rows.next().map_err(&e)? {
            let category = string(r.get(2).map_err(&e)?);
            let Some(kind) = rocwasm_ids::recorded::recorded_kind(category) else {
                let name = category.to_string();
                unmapped.note(Reason::UnknownKind { name }, "a sample");
                continue;
            };
            let extdata: Option<String> = r.get(4).map_err(&e)?;
            let Some(message) = marker_message(extdata.as_deref()) else {
                let column = format!("{} of a {category} sample", event::EXTDATA);
                let why = format!(
                    "a {category} sample's {} names no message: {}",
                    event::EXTDATA,
                    extdata.as_deref().unwrap_or("NULL")
                );
                unmapped.note(Reason::UnparsableField { column }, &why);
                continue;
            };
            let c = correlation(r, 3).map_err(&e)?;
            let at = u(r, 1).map_err(&e)?;
            batch.api_calls.push(ApiCall {
                kind: kind.raw(),
                operation: names.resolve_or_register(kind.raw(), &message),
                correlation_id: c.internal,
                external_correlation_id: c.external,
                ancestor: c.ancestor,
                thread_id: tid(r.get(0).map_err(&e)?),
                start: at,
                end: at,
            });
            push_done(&mut batch, &mut rows_in_batch, emit)?;
        }
    }

    // A dispatch from the dispatch columns and correlation of
    // `record_queries`' second query (and of `pmc_query`).
    let dispatch = |r: &Row<'_>| -> rusqlite::Result<KernelDispatch> {
        let c = correlation(r, 16)?;
        let g = |i| u(r, i).map(|v| v as u32);
        Ok(KernelDispatch {
            correlation_id: c.internal,
            external_correlation_id: c.external,
            thread_id: tid(r.get(0)?),
            start: u(r, 1)?,
            end: u(r, 2)?,
            agent_id: u(r, 3)?,
            queue_id: u(r, 4)?,
            stream_id: u(r, 5)?,
            kernel_id: u(r, 6)? + run.id_offset,
            dispatch_id: u(r, 7)?,
            private_segment_size: g(8)?,
            group_segment_size: g(9)?,
            workgroup_x: g(10)?,
            workgroup_y: g(11)?,
            workgroup_z: g(12)?,
            grid_x: g(13)?,
            grid_y: g(14)?,
            grid_z: g(15)?,
        })
    };
    let mut stmt = conn.prepare(&record_queries(s)[1]).map_err(&e)?;
    let mut rows = stmt.query([]).map_err(&e)?;
    while let Some(r) = rows.next().map_err(&e)? {
        batch.kernel_dispatches.push(dispatch(r).map_err(&e)?);
        push_done(&mut batch, &mut rows_in_batch, emit)?;
    }
    drop(rows);

    // Counter samples (a file without the counter tables has none).
    if let Ok(mut stmt) = conn.prepare(&pmc_query(s)) {
        let mut rows = stmt.query([]).map_err(&e)?;
        while let Some(r) = rows.next().map_err(&e)? {
            let pmc: i64 = r.get(20).map_err(&e)?;
            let Some(&counter_id) = run.counters.get(&pmc) else {
                let why = format!("rocpd_pmc_event names pmc_id {pmc}, which rocpd_info_pmc lacks");
                unmapped.note(
                    Reason::UnparsableField {
                        column: pmc_event::PMC_ID.into(),
                    },
                    &why,
                );
                continue;
            };
            let value: f64 = r.get::<_, Option<f64>>(21).map_err(&e)?.unwrap_or(0.0);
            let k = dispatch(r).map_err(&e)?;
            batch
                .counter_samples
                .push(CounterSample::of_dispatch(&k, counter_id, value));
            push_done(&mut batch, &mut rows_in_batch, emit)?;
        }
    }
    // Counter values whose event is no kernel dispatch of the run have no
    // dispatch to go with: counted, never dropped without a word.
    let orphans: i64 = conn
        .query_row(
            &format!(
                "SELECT count(*) FROM \"{pe}{s}\" pe LEFT JOIN \"{k}{s}\" k \
                 ON k.\"{ke}\" = pe.\"{pee}\" WHERE k.\"{ke}\" IS NULL",
                pe = pmc_event::TABLE,
                k = kernel_dispatch::TABLE,
                ke = kernel_dispatch::EVENT_ID,
                pee = pmc_event::EVENT_ID,
            ),
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    if orphans > 0 {
        unmapped.note_many(
            Reason::UnparsableField {
                column: pmc_event::EVENT_ID.into(),
            },
            orphans as u64,
            "a counter value whose event is no kernel dispatch",
        );
    }

    let copy = BufferTracingKind::MemoryCopy.raw();
    let mut stmt = conn.prepare(&record_queries(s)[2]).map_err(&e)?;
    let mut rows = stmt.query([]).map_err(&e)?;
    while let Some(r) = rows.next().map_err(&e)? {
        let c = correlation(r, 10).map_err(&e)?;
        let name = string(r.get(3).map_err(&e)?);
        let operation = names
            .lookup(copy, name)
            .or_else(|| names.lookup(copy, &format!("MEMORY_COPY_{name}")))
            .unwrap_or_else(|| names.resolve_or_register(copy, name));
        batch.memory_copies.push(MemoryCopy {
            operation,
            correlation_id: c.internal,
            external_correlation_id: c.external,
            thread_id: tid(r.get(0).map_err(&e)?),
            start: u(r, 1).map_err(&e)?,
            end: u(r, 2).map_err(&e)?,
            dst_agent_id: u(r, 4).map_err(&e)?,
            dst_address: u(r, 5).map_err(&e)?,
            src_agent_id: u(r, 6).map_err(&e)?,
            src_address: u(r, 7).map_err(&e)?,
            bytes: u(r, 8).map_err(&e)?,
            stream_id: u(r, 9).map_err(&e)?,
        });
        push_done(&mut batch, &mut rows_in_batch, emit)?;
    }
    drop(rows);

    let mut stmt = conn.prepare(&record_queries(s)[3]).map_err(&e)?;
    let mut rows = stmt.query([]).map_err(&e)?;
    while let Some(r) = rows.next().map_err(&e)? {
        let ty: Option<String> = r.get(4).map_err(&e)?;
        let level: Option<String> = r.get(5).map_err(&e)?;
        let c = correlation(r, 10).map_err(&e)?;
        let ext = c.external;
        // Scratch flags: the row's extdata (rocprofv3), else an older
        // rocwasm database's event extdata.
        let row_ext = EventExtdata::parse(r.get::<_, Option<String>>(9).map_err(&e)?.as_deref());
        let flags = row_ext.flags.or(c.flags).unwrap_or(0) as u32;
        let (thread_id, start, end) = (
            tid(r.get(0).map_err(&e)?),
            u(r, 1).map_err(&e)?,
            u(r, 2).map_err(&e)?,
        );
        let agent_id = u(r, 3).map_err(&e)?;
        let correlation_id = c.internal;
        match MemoryOperation::from_type_and_level(ty.as_deref(), level.as_deref()) {
            MemoryOperation::Scratch(operation) => batch.scratch_memory.push(ScratchMemory {
                operation,
                flags,
                correlation_id,
                external_correlation_id: ext,
                thread_id,
                start,
                end,
                agent_id,
                queue_id: u(r, 8).map_err(&e)?,
                allocation_size: u(r, 7).map_err(&e)?,
            }),
            MemoryOperation::Allocation(operation) => {
                batch.memory_allocations.push(MemoryAllocation {
                    operation,
                    correlation_id,
                    external_correlation_id: ext,
                    thread_id,
                    start,
                    end,
                    agent_id,
                    address: u(r, 6).map_err(&e)?,
                    allocation_size: u(r, 7).map_err(&e)?,
                })
            }
        }
        push_done(&mut batch, &mut rows_in_batch, emit)?;
    }
    drop(rows);
    if !batch.is_empty() {
        emit(batch)?;
    }
    Ok(())
}

/// A record's correlation ids, from its event.
struct Correlation {
    internal: u64,
    external: u64,
    ancestor: u64,
    flags: Option<u64>,
}

/// The API kind of a region: its event category when that names a kind (as
/// any release spells it: `HIP_RUNTIME_API_EXT` is `HIP_RUNTIME_API`); with
/// no category, guessed from the function name; `None` for a category this
/// build does not know (the region is counted, not replayed).
fn region_kind(category: &str, name: &str) -> Option<BufferTracingKind> {
    use BufferTracingKind as K;
    if let Some(k) = rocwasm_ids::recorded::recorded_kind(category) {
        return Some(k);
    }
    // A category this build does not know: not guessed.
    if !category.is_empty() {
        return None;
    }
    // No category at all (early rocwasm databases): the API by the name.
    Some(if name.starts_with("hsa_amd") {
        K::HsaAmdExtApi
    } else if name.starts_with("hsa_") {
        K::HsaCoreApi
    } else if name.starts_with("roctx") {
        K::MarkerCoreApi
    } else {
        K::HipRuntimeApi
    })
}
