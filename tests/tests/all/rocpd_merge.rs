//! `rocwasm merge`: four processes' rocpd databases as one.
//!
//! Four live runs on the simulated runtime (`vector_add 1` … `vector_add
//! 4`, different work each, `--kernel-trace --hip-trace --output-format
//! rocpd`) write four `results.db`; `rocwasm merge` combines them. With the
//! `sqlite3` command-line tool the test checks that the merged file holds
//! every process's rows as the inputs did (per process: dispatches,
//! regions, threads, events, strings), that `PRAGMA foreign_key_check`
//! finds nothing and every foreign key resolves within its run
//! (`(id, guid)`), that rocpd's views — queried as its `kernels` and
//! `regions` views join — return every row, that `rocwasm replay` reads the
//! merged file, and that bad merges are refused with status 2.
//!
//! Needs `cargo xtask build-sim`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rocwasm_tests::*;

const PROCESSES: u32 = 4;

fn count(db: &Path, sql: &str) -> u64 {
    sqlite3(db, sql)
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {sql}"))
}

/// Rows per process (`pid`) of `table`.
fn per_process(db: &Path, table: &str) -> BTreeMap<u64, u64> {
    sqlite3(
        db,
        &format!("SELECT pid, count(*) FROM {table} GROUP BY pid ORDER BY pid;"),
    )
    .lines()
    .map(|l| {
        let (p, n) = l.split_once('|').unwrap();
        (p.parse().unwrap(), n.parse().unwrap())
    })
    .collect()
}

/// Rows of `table` (a view) per run guid.
fn per_run(db: &Path, table: &str) -> BTreeMap<String, u64> {
    sqlite3(
        db,
        &format!("SELECT guid, count(*) FROM {table} GROUP BY guid ORDER BY guid;"),
    )
    .lines()
    .map(|l| {
        let (g, n) = l.split_once('|').unwrap();
        (g.to_string(), n.parse().unwrap())
    })
    .collect()
}

/// Joins as rocpd's `kernels` view joins.
const KERNELS: &str = "SELECT count(*) FROM rocpd_kernel_dispatch K \
     JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid \
     JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid \
     JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid \
     JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
     LEFT JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid \
     JOIN rocpd_info_process P ON P.id = Q.pid AND P.guid = Q.guid \
     JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid;";

/// Joins as rocpd's `regions` view joins.
const REGIONS: &str = "SELECT count(*) FROM rocpd_region R \
     JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid \
     JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid \
     JOIN rocpd_info_process P ON P.id = R.pid AND P.guid = R.guid \
     JOIN rocpd_info_thread T ON T.id = R.tid AND T.guid = R.guid;";

/// Four live runs, one database each.
fn four_processes(cwd: &Path) -> Vec<PathBuf> {
    (1..=PROCESSES)
        .map(|n| {
            let dir = format!("p{n}");
            let arg = n.to_string();
            let out = run_sim_app(
                &["--kernel-trace", "--hip-trace", "--output-format", "rocpd"],
                &dir,
                "vector_add",
                &[&arg],
                cwd,
                &[],
            );
            assert_success(&out, &format!("vector_add {n}"));
            cwd.join(dir).join("results.db")
        })
        .collect()
}

#[test]
fn merging_four_processes_keeps_each_ones_rows_and_the_views_working() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = four_processes(tmp.path());
    let merged = tmp.path().join("merged.db");
    let mut args = vec!["merge"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", merged.to_str().unwrap()]);
    let out = rocwasm(&args, tmp.path());
    assert_success(&out, "rocwasm merge");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("merged 4 run(s) from 4 database(s) into "),
        "{stdout}"
    );

    // Per process, every table the runs fill holds what its input held.
    for table in [
        "rocpd_kernel_dispatch",
        "rocpd_region",
        "rocpd_info_thread",
        "rocpd_info_agent",
        "rocpd_info_kernel_symbol",
        "rocpd_info_code_object",
    ] {
        let mut want = BTreeMap::new();
        for db in &inputs {
            let one = per_process(db, table);
            assert_eq!(one.len(), 1, "{table} of {}: one process", db.display());
            want.extend(one);
        }
        assert_eq!(want.len(), PROCESSES as usize, "four distinct pids");
        assert_eq!(per_process(&merged, table), want, "{table} per process");
    }
    // Tables without a pid column: per run.
    for table in ["rocpd_event", "rocpd_string", "rocpd_info_node"] {
        let mut want = BTreeMap::new();
        for db in &inputs {
            want.extend(per_run(db, table));
        }
        assert_eq!(per_run(&merged, table), want, "{table} per run");
    }
    let metadata: u64 = inputs
        .iter()
        .map(|db| count(db, "SELECT count(*) FROM rocpd_metadata;"))
        .sum();
    assert_eq!(
        count(&merged, "SELECT count(*) FROM rocpd_metadata;"),
        metadata
    );
    // The runs did different work: the counts tell them apart.
    let dispatches: Vec<u64> = per_process(&merged, "rocpd_kernel_dispatch")
        .into_values()
        .collect();
    assert!(dispatches.iter().all(|&n| n > 0), "{dispatches:?}");

    // Referential integrity, within each run.
    assert_eq!(sqlite3(&merged, "PRAGMA foreign_key_check;"), "");
    for (table, column, parent) in [
        ("rocpd_info_thread", "pid", "rocpd_info_process"),
        ("rocpd_region", "event_id", "rocpd_event"),
        ("rocpd_region", "name_id", "rocpd_string"),
        ("rocpd_region", "tid", "rocpd_info_thread"),
        (
            "rocpd_kernel_dispatch",
            "kernel_id",
            "rocpd_info_kernel_symbol",
        ),
        ("rocpd_kernel_dispatch", "agent_id", "rocpd_info_agent"),
        ("rocpd_kernel_dispatch", "event_id", "rocpd_event"),
        ("rocpd_kernel_dispatch", "queue_id", "rocpd_info_queue"),
        (
            "rocpd_info_kernel_symbol",
            "code_object_id",
            "rocpd_info_code_object",
        ),
    ] {
        let dangling = count(
            &merged,
            &format!(
                "SELECT count(*) FROM {table} c LEFT JOIN {parent} p \
                 ON p.id = c.{column} AND p.guid = c.guid \
                 WHERE c.{column} IS NOT NULL AND p.id IS NULL;"
            ),
        );
        assert_eq!(dangling, 0, "{table}.{column} → {parent}");
    }
    // rocpd's views return every row of every process.
    let total: u64 = dispatches.iter().sum();
    assert_eq!(count(&merged, KERNELS), total, "the kernels view's joins");
    // ... and so do rocprofv3's views, which the merged file carries itself.
    assert_eq!(
        count(&merged, "SELECT count(*) FROM kernels;"),
        total,
        "kernels view"
    );
    assert_eq!(
        count(&merged, "SELECT count(*) FROM regions;"),
        count(&merged, "SELECT count(*) FROM rocpd_region;"),
        "regions view"
    );
    let threads: u64 = inputs
        .iter()
        .map(|db| count(db, "SELECT count(*) FROM threads;"))
        .sum();
    assert!(threads > 0);
    assert_eq!(
        count(&merged, "SELECT count(*) FROM threads;"),
        threads,
        "threads view"
    );
    assert_eq!(
        count(&merged, "SELECT sum(total_calls) FROM top_kernels;"),
        total,
        "top_kernels"
    );
    assert_eq!(
        count(&merged, REGIONS),
        count(&merged, "SELECT count(*) FROM rocpd_region;"),
        "the regions view's joins"
    );

    // rocwasm's own reader takes the merged file as four runs.
    let out = rocwasm(
        &[
            "replay",
            merged.to_str().unwrap(),
            "--stats",
            "-d",
            "replayed",
        ],
        tmp.path(),
    );
    assert_success(&out, "rocwasm replay merged.db");
    let rows = std::fs::read_to_string(tmp.path().join("replayed/kernel_stats.csv")).unwrap();
    let calls: u64 = rows
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(1)
                .unwrap()
                .trim_matches('"')
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(calls, total, "{rows}");
}

#[test]
fn bad_merges_are_refused_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = four_processes(tmp.path());
    let a = inputs[0].to_str().unwrap();
    let b = inputs[1].to_str().unwrap();
    let not_db = tmp.path().join("p1/rocwasm-summary.txt");
    let existing = tmp.path().join("exists.db");
    std::fs::write(&existing, b"").unwrap();
    let out_path = tmp.path().join("out.db");
    let out = out_path.to_str().unwrap();
    for (args, want) in [
        (vec!["merge", a, a, "-o", out], "is in both"),
        (
            vec!["merge", a, not_db.to_str().unwrap(), "-o", out],
            "rocwasm-summary.txt is not",
        ),
        (
            vec!["merge", a, b, "-o", existing.to_str().unwrap()],
            "exists; merge writes a new database",
        ),
    ] {
        let o = rocwasm(&args, tmp.path());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(want),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!out_path.exists(), "no half-merged file is left behind");
    }
}
