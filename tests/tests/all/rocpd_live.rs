//! The rocpd database of a live run on the simulated runtime keeps every
//! record in rocpd's views: `rocwasm run --sim --kernel-trace --hip-trace
//! --output-format rocpd,csv` of `vector_add` (kernels loaded with
//! `hipModuleLoad`) and of `multi_kernel` (`<<<>>>` kernels registered by
//! HIP on the host side, loaded by the HSA loader), then, with the `sqlite3`
//! command-line tool:
//!
//! - `PRAGMA foreign_key_check` finds nothing, and every foreign key rocpd
//!   declares resolves (a `LEFT JOIN` finds no missing parent);
//! - a query joining as rocpd's `kernels` view joins returns one row per
//!   dispatch (as many as `kernel_trace.csv` has, and as the application
//!   says it launched), and one joining as its `threads` view one row per
//!   thread;
//! - every kernel symbol has a code object, and every dispatched one a
//!   kernel object.
//!
//! Needs `cargo xtask build-sim`; fails (never skips) with the command to
//! run when it is missing.

use std::path::{Path, PathBuf};

use rocwasm_tests::*;

/// rocpd's foreign keys of the tables a run fills: (table, column, parent).
const FOREIGN_KEYS: &[(&str, &str, &str)] = &[
    ("rocpd_info_process", "nid", "rocpd_info_node"),
    ("rocpd_info_thread", "nid", "rocpd_info_node"),
    ("rocpd_info_thread", "pid", "rocpd_info_process"),
    ("rocpd_info_agent", "pid", "rocpd_info_process"),
    ("rocpd_info_queue", "pid", "rocpd_info_process"),
    ("rocpd_info_stream", "pid", "rocpd_info_process"),
    ("rocpd_info_code_object", "pid", "rocpd_info_process"),
    ("rocpd_info_code_object", "agent_id", "rocpd_info_agent"),
    ("rocpd_info_kernel_symbol", "pid", "rocpd_info_process"),
    (
        "rocpd_info_kernel_symbol",
        "code_object_id",
        "rocpd_info_code_object",
    ),
    ("rocpd_event", "category_id", "rocpd_string"),
    ("rocpd_region", "pid", "rocpd_info_process"),
    ("rocpd_region", "tid", "rocpd_info_thread"),
    ("rocpd_region", "name_id", "rocpd_string"),
    ("rocpd_region", "event_id", "rocpd_event"),
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
];

/// Joins as rocpd's `kernels` view: agent, event, region name, symbol,
/// (left) stream and queue, the process through the queue, the thread.
const KERNELS: &str = "SELECT count(*) FROM rocpd_kernel_dispatch K \
     JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid \
     JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid \
     JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid \
     JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
     LEFT JOIN rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid \
     LEFT JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid \
     JOIN rocpd_info_process P ON P.id = Q.pid AND P.guid = Q.guid \
     JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid;";

/// Joins as rocpd's `threads` view: the thread's process and node.
const THREADS: &str = "SELECT count(*) FROM rocpd_info_thread T \
     JOIN rocpd_info_process P ON P.id = T.pid AND P.guid = T.guid \
     JOIN rocpd_info_node N ON N.id = T.nid AND N.guid = T.guid;";

/// Joins as rocpd's `regions` view.
const REGIONS: &str = "SELECT count(*) FROM rocpd_region R \
     JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid \
     JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid \
     JOIN rocpd_info_process P ON P.id = R.pid AND P.guid = R.guid \
     JOIN rocpd_info_thread T ON T.id = R.tid AND T.guid = R.guid;";

fn count(db: &Path, sql: &str) -> u64 {
    sqlite3(db, sql)
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {sql}"))
}

/// Runs `app args` under rocwasm with rocpd and CSV output; returns the
/// application's stdout and the output directory.
fn run(app: &str, args: &[&str], cwd: &Path) -> (String, PathBuf) {
    let sample = sim_dir().join("bin").join(app);
    let mut argv = vec![
        "run",
        "--sim",
        "--kernel-trace",
        "--hip-trace",
        "--memory-copy-trace",
        "-d",
        "out",
        "--output-format",
        "rocpd,csv",
        "--",
        sample.to_str().unwrap(),
    ];
    argv.extend(args);
    let out = rocwasm(&argv, cwd);
    assert_success(&out, app);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        cwd.join("out"),
    )
}

/// Rows of a CSV file (without the header).
fn csv_rows(path: &Path) -> u64 {
    csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .records()
        .count() as u64
}

/// Checks the database of a run that dispatched `kernels` kernels.
fn check(db: &Path, kernels: u64) {
    assert_eq!(sqlite3(db, "PRAGMA foreign_key_check;"), "");
    for (table, column, parent) in FOREIGN_KEYS {
        let dangling = count(
            db,
            &format!(
                "SELECT count(*) FROM {table} c LEFT JOIN {parent} p \
                 ON p.id = c.{column} AND p.guid = c.guid \
                 WHERE c.{column} IS NOT NULL AND p.id IS NULL;"
            ),
        );
        assert_eq!(dangling, 0, "{table}.{column} → {parent}");
    }
    assert!(kernels > 0);
    assert_eq!(
        count(db, "SELECT count(*) FROM rocpd_kernel_dispatch;"),
        kernels
    );
    assert_eq!(count(db, KERNELS), kernels, "the kernels view's joins");
    let threads = count(db, "SELECT count(*) FROM rocpd_info_thread;");
    assert!(threads > 0);
    assert_eq!(count(db, THREADS), threads, "the threads view's joins");
    assert_eq!(
        count(db, REGIONS),
        count(db, "SELECT count(*) FROM rocpd_region;"),
        "the regions view's joins"
    );
    // The process row is the OS process, thread rows are OS threads.
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM rocpd_info_process WHERE id = pid;"
        ),
        1
    );
    assert_eq!(
        count(db, "SELECT count(*) FROM rocpd_info_thread WHERE id = tid;"),
        threads
    );
    // Every symbol has a real code object (with a URI); every dispatched
    // kernel its kernel object.
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM rocpd_info_kernel_symbol S \
             JOIN rocpd_info_code_object C ON C.id = S.code_object_id AND C.guid = S.guid \
             WHERE C.uri IS NOT NULL AND C.agent_id IS NOT NULL;"
        ),
        count(db, "SELECT count(*) FROM rocpd_info_kernel_symbol;")
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM rocpd_kernel_dispatch K \
             JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
             WHERE S.kernel_object > 0 AND S.code_object_id > 0;"
        ),
        kernels
    );
}

/// The database answers rocprofv3's own views by itself (`kernels`,
/// `memory_copies`, `regions`, `threads`, `top_kernels`), with the rows of
/// the run's CSV files.
pub(crate) fn check_rocprofv3_views(db: &Path, out: &Path) {
    let kernels = csv_rows(&out.join("kernel_trace.csv"));
    assert!(kernels > 0);
    assert_eq!(
        count(db, "SELECT count(*) FROM kernels;"),
        kernels,
        "kernels view"
    );
    let copies = csv_rows(&out.join("memory_copy_trace.csv"));
    assert!(copies > 0, "the run made copies");
    assert_eq!(
        count(db, "SELECT count(*) FROM memory_copies;"),
        copies,
        "memory_copies view"
    );
    let hip = csv_rows(&out.join("hip_api_trace.csv"));
    assert_eq!(
        count(db, "SELECT count(*) FROM regions;"),
        hip,
        "regions view (HIP calls only traced)"
    );
    // Threads: every thread id of the traces.
    let mut threads = std::collections::BTreeSet::new();
    for (file, column) in [
        ("hip_api_trace.csv", "Thread_Id"),
        ("kernel_trace.csv", "Thread_Id"),
    ] {
        let mut r = csv::Reader::from_path(out.join(file)).unwrap();
        let idx = r
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == column)
            .unwrap();
        for rec in r.records() {
            threads.insert(rec.unwrap()[idx].to_string());
        }
    }
    assert_eq!(
        count(db, "SELECT count(DISTINCT tid) FROM threads;"),
        threads.len() as u64,
        "threads view"
    );
    // top_kernels: one row per kernel name, calls adding up to every dispatch.
    let mut names = std::collections::BTreeSet::new();
    let mut r = csv::Reader::from_path(out.join("kernel_trace.csv")).unwrap();
    let idx = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "Kernel_Name")
        .unwrap();
    for rec in r.records() {
        names.insert(rec.unwrap()[idx].to_string());
    }
    assert_eq!(
        count(db, "SELECT count(*) FROM top_kernels;"),
        names.len() as u64,
        "top_kernels rows"
    );
    assert_eq!(
        count(db, "SELECT sum(total_calls) FROM top_kernels;"),
        kernels,
        "top_kernels calls"
    );
}

#[test]
fn module_loaded_kernels_keep_every_dispatch_in_rocpds_views() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = run("vector_add", &["2"], dir.path());
    let kernels = csv_rows(&out.join("kernel_trace.csv"));
    check(&out.join("results.db"), kernels);
    check_rocprofv3_views(&out.join("results.db"), &out);
}

#[test]
fn hip_registered_kernels_keep_every_dispatch_in_rocpds_views() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, out) = run("multi_kernel", &["--threads", "3"], dir.path());
    // `COUNTS kernels=N …`: what the application launched.
    let launched: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("COUNTS "))
        .and_then(|l| {
            l.split_whitespace()
                .find_map(|kv| kv.strip_prefix("kernels="))
        })
        .unwrap_or_else(|| panic!("the sample prints COUNTS:\n{stdout}"))
        .parse()
        .unwrap();
    assert_eq!(csv_rows(&out.join("kernel_trace.csv")), launched);
    let db = out.join("results.db");
    check(&db, launched);
    // Three worker threads besides the main one launched.
    assert!(count(&db, THREADS) >= 4);
}
