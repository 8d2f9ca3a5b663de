//! Referential integrity of the rocpd database, as rocpd's own views need
//! it: every foreign key rocpd's schema (version 3) declares is declared
//! here too and every value resolves, and queries joining exactly as rocpd's
//! `kernels`, `threads`, `regions`, `memory_copies`, `memory_allocations`,
//! `code_objects`, `kernel_symbols` and `processes` views join return one
//! row per record.
//!
//! The foreign keys below are written out by hand from rocprofiler-sdk's
//! `rocpd_tables.sql`, independently of `rocwasm_formats::rocpd::schema`.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use rocwasm_core::{AgentInfo, AgentType, CodeObject, CodeObjectStorage, KernelSymbol};
use rocwasm_formats::rocpd::schema;
use rocwasm_formats::RocpdSink;
use rusqlite::Connection;

/// rocpd's foreign keys: (table, column, referenced table), base names.
const FOREIGN_KEYS: &[(&str, &str, &str)] = &[
    ("rocpd_info_process", "nid", "rocpd_info_node"),
    ("rocpd_info_thread", "nid", "rocpd_info_node"),
    ("rocpd_info_thread", "pid", "rocpd_info_process"),
    ("rocpd_info_agent", "nid", "rocpd_info_node"),
    ("rocpd_info_agent", "pid", "rocpd_info_process"),
    ("rocpd_info_queue", "nid", "rocpd_info_node"),
    ("rocpd_info_queue", "pid", "rocpd_info_process"),
    ("rocpd_info_stream", "nid", "rocpd_info_node"),
    ("rocpd_info_stream", "pid", "rocpd_info_process"),
    ("rocpd_info_pmc", "nid", "rocpd_info_node"),
    ("rocpd_info_pmc", "pid", "rocpd_info_process"),
    ("rocpd_info_pmc", "agent_id", "rocpd_info_agent"),
    ("rocpd_info_code_object", "nid", "rocpd_info_node"),
    ("rocpd_info_code_object", "pid", "rocpd_info_process"),
    ("rocpd_info_code_object", "agent_id", "rocpd_info_agent"),
    ("rocpd_info_kernel_symbol", "nid", "rocpd_info_node"),
    ("rocpd_info_kernel_symbol", "pid", "rocpd_info_process"),
    (
        "rocpd_info_kernel_symbol",
        "code_object_id",
        "rocpd_info_code_object",
    ),
    ("rocpd_track", "nid", "rocpd_info_node"),
    ("rocpd_track", "pid", "rocpd_info_process"),
    ("rocpd_track", "tid", "rocpd_info_thread"),
    ("rocpd_track", "name_id", "rocpd_string"),
    ("rocpd_event", "category_id", "rocpd_string"),
    ("rocpd_arg", "event_id", "rocpd_event"),
    ("rocpd_pmc_event", "pmc_id", "rocpd_info_pmc"),
    ("rocpd_pmc_event", "event_id", "rocpd_event"),
    ("rocpd_region", "nid", "rocpd_info_node"),
    ("rocpd_region", "pid", "rocpd_info_process"),
    ("rocpd_region", "tid", "rocpd_info_thread"),
    ("rocpd_region", "name_id", "rocpd_string"),
    ("rocpd_region", "event_id", "rocpd_event"),
    ("rocpd_sample", "track_id", "rocpd_track"),
    ("rocpd_sample", "event_id", "rocpd_event"),
    ("rocpd_kernel_dispatch", "nid", "rocpd_info_node"),
    ("rocpd_kernel_dispatch", "pid", "rocpd_info_process"),
    ("rocpd_kernel_dispatch", "tid", "rocpd_info_thread"),
    ("rocpd_kernel_dispatch", "agent_id", "rocpd_info_agent"),
    (
        "rocpd_kernel_dispatch",
        "kernel_id",
        "rocpd_info_kernel_symbol",
    ),
    ("rocpd_kernel_dispatch", "queue_id", "rocpd_info_queue"),
    ("rocpd_kernel_dispatch", "stream_id", "rocpd_info_stream"),
    ("rocpd_kernel_dispatch", "region_name_id", "rocpd_string"),
    ("rocpd_kernel_dispatch", "event_id", "rocpd_event"),
    ("rocpd_memory_copy", "nid", "rocpd_info_node"),
    ("rocpd_memory_copy", "pid", "rocpd_info_process"),
    ("rocpd_memory_copy", "tid", "rocpd_info_thread"),
    ("rocpd_memory_copy", "name_id", "rocpd_string"),
    ("rocpd_memory_copy", "dst_agent_id", "rocpd_info_agent"),
    ("rocpd_memory_copy", "src_agent_id", "rocpd_info_agent"),
    ("rocpd_memory_copy", "stream_id", "rocpd_info_stream"),
    ("rocpd_memory_copy", "queue_id", "rocpd_info_queue"),
    ("rocpd_memory_copy", "region_name_id", "rocpd_string"),
    ("rocpd_memory_copy", "event_id", "rocpd_event"),
    ("rocpd_memory_allocate", "nid", "rocpd_info_node"),
    ("rocpd_memory_allocate", "pid", "rocpd_info_process"),
    ("rocpd_memory_allocate", "tid", "rocpd_info_thread"),
    ("rocpd_memory_allocate", "agent_id", "rocpd_info_agent"),
    ("rocpd_memory_allocate", "stream_id", "rocpd_info_stream"),
    ("rocpd_memory_allocate", "queue_id", "rocpd_info_queue"),
    ("rocpd_memory_allocate", "event_id", "rocpd_event"),
];

/// Queries joining as rocpd's views do (same tables, same keys, same inner
/// and left joins), each paired with the table whose row count it must
/// equal.
const VIEW_JOINS: &[(&str, &str, &str)] = &[
    (
        "kernels",
        "rocpd_kernel_dispatch",
        "SELECT count(*) FROM rocpd_kernel_dispatch K \
         JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid \
         JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid \
         JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid \
         JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
         LEFT JOIN rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid \
         LEFT JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid \
         JOIN rocpd_info_process P ON P.id = Q.pid AND P.guid = Q.guid \
         JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid",
    ),
    (
        "threads",
        "rocpd_info_thread",
        "SELECT count(*) FROM rocpd_info_thread T \
         JOIN rocpd_info_node N ON N.id = T.nid AND N.guid = T.guid \
         JOIN rocpd_info_process P ON P.id = T.pid AND P.guid = T.guid",
    ),
    (
        // Older rocpd views join the process on its OS pid.
        "threads (by OS pid)",
        "rocpd_info_thread",
        "SELECT count(*) FROM rocpd_info_thread T \
         JOIN rocpd_info_process P ON P.pid = T.pid AND P.guid = T.guid",
    ),
    (
        "processes",
        "rocpd_info_process",
        "SELECT count(*) FROM rocpd_info_process P \
         JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid",
    ),
    (
        "regions",
        "rocpd_region",
        "SELECT count(*) FROM rocpd_region R \
         JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid \
         JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid \
         JOIN rocpd_string C ON C.id = E.category_id AND C.guid = E.guid \
         JOIN rocpd_info_process P ON P.id = R.pid AND P.guid = R.guid \
         JOIN rocpd_info_thread T ON T.id = R.tid AND T.guid = R.guid",
    ),
    (
        "memory_copies",
        "rocpd_memory_copy",
        "SELECT count(*) FROM rocpd_memory_copy M \
         JOIN rocpd_string S ON S.id = M.name_id AND S.guid = M.guid \
         LEFT JOIN rocpd_string R ON R.id = M.region_name_id AND R.guid = M.guid \
         JOIN rocpd_info_agent D ON D.id = M.dst_agent_id AND D.guid = M.guid \
         JOIN rocpd_info_agent SA ON SA.id = M.src_agent_id AND SA.guid = M.guid \
         LEFT JOIN rocpd_info_queue Q ON Q.id = M.queue_id AND Q.guid = M.guid \
         LEFT JOIN rocpd_info_stream ST ON ST.id = M.stream_id AND ST.guid = M.guid \
         JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid \
         JOIN rocpd_info_process P ON P.id = M.pid AND P.guid = M.guid \
         JOIN rocpd_info_thread T ON T.id = M.tid AND T.guid = M.guid",
    ),
    (
        "memory_allocations",
        "rocpd_memory_allocate",
        "SELECT count(*) FROM rocpd_memory_allocate M \
         LEFT JOIN rocpd_info_agent A ON A.id = M.agent_id AND A.guid = M.guid \
         LEFT JOIN rocpd_info_queue Q ON Q.id = M.queue_id AND Q.guid = M.guid \
         LEFT JOIN rocpd_info_stream ST ON ST.id = M.stream_id AND ST.guid = M.guid \
         JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid \
         JOIN rocpd_info_process P ON P.id = M.pid AND P.guid = M.guid \
         JOIN rocpd_info_thread T ON T.id = M.tid AND T.guid = M.guid",
    ),
    (
        "kernel_symbols",
        "rocpd_info_kernel_symbol",
        "SELECT count(*) FROM rocpd_info_kernel_symbol KS \
         JOIN rocpd_info_process P ON P.id = KS.pid AND P.guid = KS.guid",
    ),
];

/// Code objects with an agent (rocpd's `code_objects` view joins the agent
/// with an inner join; a placeholder code object has none).
const CODE_OBJECTS: &str = "SELECT count(*) FROM rocpd_info_code_object CO \
     JOIN rocpd_info_agent A ON A.id = CO.agent_id AND A.guid = CO.guid \
     JOIN rocpd_info_process P ON P.id = CO.pid AND P.guid = CO.guid";

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{e}: {sql}"))
}

/// Per-run table suffixes of the file.
fn suffixes(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT substr(name, 15) FROM sqlite_master \
             WHERE type = 'table' AND name LIKE 'rocpd_metadata_%'",
        )
        .unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

/// Checks every foreign key of every run of `db` (declared as rocpd
/// declares them, and resolving) and the view joins; panics with what is
/// wrong.
pub fn check_integrity(db: &Path) {
    let conn = Connection::open(db).unwrap();
    let runs = suffixes(&conn);
    assert!(!runs.is_empty(), "no run in {}", db.display());
    // SQLite's own check of the declared keys: nothing.
    let mut stmt = conn.prepare("PRAGMA foreign_key_check").unwrap();
    let violations: Vec<(String, i64, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(violations.is_empty(), "foreign_key_check: {violations:?}");

    for s in &runs {
        // Declared exactly as rocpd declares them.
        let tables: BTreeSet<&str> = FOREIGN_KEYS.iter().map(|(t, _, _)| *t).collect();
        for t in schema::TABLES {
            let mut stmt = conn
                .prepare(&format!("PRAGMA foreign_key_list(\"{t}{s}\")"))
                .unwrap();
            let declared: BTreeSet<(String, String, String)> = stmt
                .query_map([], |r| Ok((r.get(3)?, r.get(2)?, r.get(4)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let want: BTreeSet<(String, String, String)> = FOREIGN_KEYS
                .iter()
                .filter(|(table, _, _)| table == t)
                .map(|(_, c, p)| (c.to_string(), format!("{p}{s}"), "id".to_string()))
                .collect();
            assert_eq!(declared, want, "foreign keys of {t}");
            assert!(
                want.is_empty() || tables.contains(t),
                "{t} has keys but is not listed"
            );
        }
        // Every value resolves, table by table.
        for (table, column, parent) in FOREIGN_KEYS {
            let dangling = count(
                &conn,
                &format!(
                    "SELECT count(*) FROM \"{table}{s}\" c LEFT JOIN \"{parent}{s}\" p \
                     ON p.id = c.\"{column}\" WHERE c.\"{column}\" IS NOT NULL AND p.id IS NULL"
                ),
            );
            assert_eq!(dangling, 0, "{table}.{column} → {parent}");
        }
    }
    // Through the views over every run, matching on (id, guid).
    for (view, table, sql) in VIEW_JOINS {
        assert_eq!(
            count(&conn, sql),
            count(&conn, &format!("SELECT count(*) FROM {table}")),
            "a query joining as rocpd's `{view}` view loses rows"
        );
    }
}

fn open(db: &Path) -> Connection {
    Connection::open(db).unwrap()
}

#[test]
fn every_foreign_key_resolves_and_the_views_keep_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let (run, names) = common::sample(5, 200);
    common::write_run(&run, &names, &mut [Box::new(RocpdSink::at_path(&db))]);
    check_integrity(&db);

    let conn = open(&db);
    let n = |f: fn(&rocwasm_core::Batch) -> usize| run.batches.iter().map(f).sum::<usize>() as i64;
    assert_eq!(
        count(&conn, VIEW_JOINS[0].2),
        n(|b| b.kernel_dispatches.len())
    );
    assert!(n(|b| b.kernel_dispatches.len()) > 0);
    for (table, records) in [
        ("rocpd_region", n(|b| b.api_calls.len())),
        ("rocpd_memory_copy", n(|b| b.memory_copies.len())),
        (
            "rocpd_memory_allocate",
            n(|b| b.memory_allocations.len() + b.scratch_memory.len()),
        ),
    ] {
        assert_eq!(
            count(&conn, &format!("SELECT count(*) FROM {table}")),
            records
        );
    }
    // One thread row per OS thread, whose id is that thread's id; one
    // process row, whose id is the OS pid.
    let threads: BTreeSet<u64> = run
        .batches
        .iter()
        .flat_map(|b| {
            b.api_calls
                .thread_id
                .iter()
                .chain(&b.kernel_dispatches.thread_id)
                .chain(&b.memory_copies.thread_id)
                .chain(&b.memory_allocations.thread_id)
                .chain(&b.scratch_memory.thread_id)
                .copied()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(count(&conn, VIEW_JOINS[1].2), threads.len() as i64);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM rocpd_info_thread WHERE id = tid"
        ),
        threads.len() as i64
    );
    assert_eq!(
        count(
            &conn,
            &format!(
                "SELECT count(*) FROM rocpd_info_process WHERE id = pid AND pid = {}",
                run.meta.pid
            )
        ),
        1
    );
    assert_eq!(
        count(&conn, CODE_OBJECTS),
        run.symbols.code_objects().len() as i64
    );
    // Dispatches carry the empty region name (no kernel-rename region).
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM rocpd_kernel_dispatch K JOIN rocpd_string R \
             ON R.id = K.region_name_id AND R.guid = K.guid WHERE R.string = ''"
        ),
        n(|b| b.kernel_dispatches.len())
    );
    // Events hold the ids where rocprofv3 puts them: the internal
    // correlation id in stack_id, the external one in correlation_id.
    let (internal, external): (BTreeSet<u64>, BTreeSet<u64>) = (
        run.batches
            .iter()
            .flat_map(|b| b.kernel_dispatches.correlation_id.clone())
            .collect(),
        run.batches
            .iter()
            .flat_map(|b| b.kernel_dispatches.external_correlation_id.clone())
            .collect(),
    );
    let mut stmt = conn
        .prepare(
            "SELECT E.stack_id, E.correlation_id FROM rocpd_kernel_dispatch K \
             JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid",
        )
        .unwrap();
    let rows: Vec<(i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows.iter().map(|r| r.0 as u64).collect::<BTreeSet<_>>(),
        internal
    );
    assert_eq!(
        rows.iter().map(|r| r.1 as u64).collect::<BTreeSet<_>>(),
        external
    );
}

#[test]
fn merged_runs_keep_their_keys_apart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("merged.db");
    let (a, names_a) = common::sample(21, 30);
    let (b, names_b) = common::sample(22, 50);
    common::write_run(&a, &names_a, &mut [Box::new(RocpdSink::at_path(&db))]);
    common::write_run(&b, &names_b, &mut [Box::new(RocpdSink::at_path(&db))]);
    check_integrity(&db);
    assert_eq!(count(&open(&db), VIEW_JOINS[0].2), 80);
}

/// A run whose symbol table has what a live HIP program gives: kernels
/// from HIP's host-side registration (no code object), the HSA loader's
/// symbols of the same kernels (with one), a kernel known only from HIP,
/// and a dispatch of a kernel nobody described.
#[test]
fn host_registered_kernels_get_the_loaders_code_object() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let (run, names) = common::sample(9, 40);
    let loaded = run.symbols.kernels();
    let dispatched: BTreeSet<u64> = run
        .batches
        .iter()
        .flat_map(|b| b.kernel_dispatches.kernel_id.clone())
        .collect();
    // Host-side twins of every loader symbol, under new ids (not
    // dispatched), one of them dispatched instead of its loader twin.
    let twin = |k: &KernelSymbol, id: u64| KernelSymbol {
        id,
        code_object_id: 0,
        kernel_object: 0,
        kernarg_segment_size: 0,
        sgpr_count: 0,
        arch_vgpr_count: 0,
        kernel_address: 0x40_0000 + id,
        ..k.clone()
    };
    for (i, k) in loaded.iter().enumerate() {
        run.symbols.insert_kernel(twin(k, 1000 + i as u64));
    }
    let host_only = KernelSymbol {
        name: "_Z9host_onlyv".into(),
        demangled_name: "host_only()".into(),
        ..twin(&loaded[0], 2000)
    };
    run.symbols.insert_kernel(host_only);
    let mut batches = run.batches.clone();
    let first = *dispatched.iter().next().unwrap();
    let first_twin = 1000 + loaded.iter().position(|k| k.id == first).unwrap() as u64;
    let b = &mut batches[0].kernel_dispatches;
    b.kernel_id[0] = first_twin;
    if b.len() > 1 {
        b.kernel_id[1] = 2000;
    }
    if b.len() > 2 {
        b.kernel_id[2] = 777_777; // never described
    }
    let run = rocwasm_formats::synthetic::SampleRun {
        meta: run.meta.clone(),
        symbols: run.symbols,
        batches,
    };
    // An agent and code object the records never mention.
    run.symbols.insert_agent(AgentInfo {
        id: 99,
        agent_type: AgentType::Gpu,
        node_id: 9,
        name: "gfx942".into(),
        product_name: "other".into(),
        properties: Default::default(),
    });
    run.symbols.insert_code_object(CodeObject {
        id: 500,
        agent_id: 98, // not described
        uri: "file:///x#offset=0&size=1".into(),
        load_base: 1,
        load_size: 1,
        load_delta: 0,
        storage: CodeObjectStorage::File { fd: 3 },
    });
    common::write_run(&run, &names, &mut [Box::new(RocpdSink::at_path(&db))]);
    check_integrity(&db);

    let conn = open(&db);
    // The dispatched host twin is written with its loader twin's code
    // object and kernel object; undispatched twins are not written.
    let (co, object): (i64, i64) = conn
        .query_row(
            &format!(
                "SELECT code_object_id, kernel_object FROM rocpd_info_kernel_symbol WHERE id = {first_twin}"
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let original = loaded.iter().find(|k| k.id == first).unwrap();
    assert_eq!(
        (co as u64, object as u64),
        (original.code_object_id, original.kernel_object)
    );
    assert_ne!(co, 0);
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM rocpd_info_kernel_symbol WHERE id >= 1000 AND id < 2000"
        ),
        1
    );
    // Every symbol has a kernel object but those without a loader symbol.
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM rocpd_info_kernel_symbol WHERE kernel_object IS NULL OR kernel_object = 0"
        ),
        count(
            &conn,
            "SELECT count(*) FROM rocpd_info_kernel_symbol WHERE id IN (2000, 777777)"
        )
    );
    assert_eq!(
        count(&conn, VIEW_JOINS[0].2),
        count(&conn, "SELECT count(*) FROM rocpd_kernel_dispatch")
    );
}
