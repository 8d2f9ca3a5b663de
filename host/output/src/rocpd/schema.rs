//! The rocpd schema (version 3): per-run tables `<base>_<uuid>` and plain
//! views `<base>` over every run in the file.
//!
//! Column names follow rocprofv3's rocpd databases so that queries written for
//! them work here, e.g.
//!
//! ```sql
//! SELECT s.display_name, k.end - k.start
//! FROM rocpd_kernel_dispatch k
//! JOIN rocpd_info_kernel_symbol s ON s.id = k.kernel_id AND s.guid = k.guid;
//! ```
//!
//! Ids are per run; every row carries its run's `guid`, so joins across a
//! merged file match on `(id, guid)`. Foreign keys are not declared: sqlite
//! does not enforce them by default and rows are written in an order (symbols
//! last, when they are complete) that a declared constraint would reject.

use rusqlite::Connection;

/// Base names of the per-run tables, in creation order.
pub const TABLES: &[&str] = &[
    "rocpd_metadata",
    "rocpd_string",
    "rocpd_info_node",
    "rocpd_info_process",
    "rocpd_info_thread",
    "rocpd_info_agent",
    "rocpd_info_queue",
    "rocpd_info_stream",
    "rocpd_info_code_object",
    "rocpd_info_kernel_symbol",
    "rocpd_track",
    "rocpd_event",
    "rocpd_arg",
    "rocpd_region",
    "rocpd_kernel_dispatch",
    "rocpd_memory_copy",
    "rocpd_memory_allocate",
];

/// `CREATE TABLE` for one run; `{s}` is replaced by the run suffix and
/// `{guid}` by the run guid.
const DDL: &str = r#"
CREATE TABLE "rocpd_metadata{s}" (
    id INTEGER PRIMARY KEY, tag TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE "rocpd_string{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', string TEXT NOT NULL UNIQUE);
CREATE TABLE "rocpd_info_node{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', hash BIGINT NOT NULL,
    machine_id TEXT NOT NULL, system_name TEXT, hostname TEXT, release TEXT, version TEXT,
    hardware_name TEXT, domain_name TEXT);
CREATE TABLE "rocpd_info_process{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    ppid INTEGER, pid INTEGER NOT NULL, init BIGINT, fini BIGINT, start BIGINT, "end" BIGINT,
    command TEXT, environment JSONB NOT NULL DEFAULT '{}', extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_info_thread{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    ppid INTEGER, pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT, start BIGINT,
    "end" BIGINT, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_info_agent{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, type TEXT CHECK (type IN ('CPU', 'GPU')), absolute_index INTEGER,
    logical_index INTEGER, type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT,
    vendor_name TEXT, product_name TEXT, user_name TEXT, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_info_queue{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, name TEXT, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_info_stream{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, name TEXT, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_info_code_object{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, agent_id INTEGER, uri TEXT, load_base BIGINT, load_size BIGINT,
    load_delta BIGINT, storage_type TEXT CHECK (storage_type IN ('FILE', 'MEMORY')),
    extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_info_kernel_symbol{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, code_object_id INTEGER NOT NULL, kernel_name TEXT, display_name TEXT,
    kernel_object INTEGER, kernarg_segment_size INTEGER, kernarg_segment_alignment INTEGER,
    group_segment_size INTEGER, private_segment_size INTEGER, sgpr_count INTEGER,
    arch_vgpr_count INTEGER, accum_vgpr_count INTEGER, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_track{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER, tid INTEGER, name_id INTEGER, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_event{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', category_id INTEGER,
    stack_id INTEGER, parent_stack_id INTEGER, correlation_id INTEGER,
    call_stack JSONB NOT NULL DEFAULT '{}', line_info JSONB NOT NULL DEFAULT '{}',
    extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_arg{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', event_id INTEGER NOT NULL,
    position INTEGER NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL, value TEXT,
    extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_region{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, tid INTEGER NOT NULL, start BIGINT NOT NULL, "end" BIGINT NOT NULL,
    name_id INTEGER NOT NULL, event_id INTEGER, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_kernel_dispatch{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, tid INTEGER, agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,
    dispatch_id INTEGER NOT NULL, queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL,
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, private_segment_size INTEGER,
    group_segment_size INTEGER, workgroup_size_x INTEGER NOT NULL,
    workgroup_size_y INTEGER NOT NULL, workgroup_size_z INTEGER NOT NULL,
    grid_size_x INTEGER NOT NULL, grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL,
    region_name_id INTEGER, event_id INTEGER, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_memory_copy{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, tid INTEGER, start BIGINT NOT NULL, "end" BIGINT NOT NULL,
    name_id INTEGER NOT NULL, dst_agent_id INTEGER, dst_address INTEGER, src_agent_id INTEGER,
    src_address INTEGER, size INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER,
    region_name_id INTEGER, event_id INTEGER, extdata JSONB NOT NULL DEFAULT '{}');
CREATE TABLE "rocpd_memory_allocate{s}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{guid}', nid INTEGER NOT NULL,
    pid INTEGER NOT NULL, tid INTEGER, agent_id INTEGER,
    type TEXT CHECK (type IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM')),
    level TEXT CHECK (level IN ('REAL', 'VIRTUAL', 'SCRATCH')), start BIGINT NOT NULL,
    "end" BIGINT NOT NULL, address INTEGER, size INTEGER NOT NULL, queue_id INTEGER,
    stream_id INTEGER, event_id INTEGER, extdata JSONB NOT NULL DEFAULT '{}');
"#;

/// Creates the tables of the run with `suffix` (e.g. `_0a1b…`).
pub fn create_run_tables(conn: &Connection, suffix: &str, guid: &str) -> rusqlite::Result<()> {
    conn.execute_batch(&DDL.replace("{s}", suffix).replace("{guid}", guid))
}

/// Every run suffix present in the file, oldest first.
pub fn run_suffixes(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd\\_metadata\\_%' ESCAPE '\\' ORDER BY rowid")?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for n in names {
        out.push(n?["rocpd_metadata".len()..].to_string());
    }
    Ok(out)
}

/// (Re)creates the plain views so that each unions every run's table.
pub fn create_views(conn: &Connection) -> rusqlite::Result<()> {
    let suffixes = run_suffixes(conn)?;
    let mut sql = String::new();
    for base in TABLES {
        sql.push_str(&format!("DROP VIEW IF EXISTS \"{base}\";\n"));
        if suffixes.is_empty() {
            continue;
        }
        let selects: Vec<String> = suffixes
            .iter()
            .map(|s| format!("SELECT * FROM \"{base}{s}\""))
            .collect();
        sql.push_str(&format!(
            "CREATE VIEW \"{base}\" AS {};\n",
            selects.join(" UNION ALL ")
        ));
    }
    conn.execute_batch(&sql)
}
