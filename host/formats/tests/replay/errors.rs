//! Corrupt, truncated and malformed inputs give one clear error naming the
//! file and line — never a panic.

use std::path::Path;

use rocwasm_formats::replay::{open_with, ReadReport, Reason, ReplayError, ReplayOptions};

fn replay_err(path: &Path) -> String {
    replay_err_with(path, false)
}

/// The error of a replay of `path`, read with `--strict` when `strict`.
fn replay_err_with(path: &Path, strict: bool) -> String {
    let opts = ReplayOptions {
        chunk_rows: 4,
        progress: false,
        names: None,
    };
    let result: Result<(), ReplayError> = (|| {
        let mut src = open_with(path, &opts)?;
        src.set_strict(strict);
        while src.next_batch()?.is_some() {}
        Ok(())
    })();
    result.expect_err("replay should fail").to_string()
}

/// Reads `path` leniently: the dispatches' correlation ids and the report.
/// The table suffix of the one run in a rocpd database.
fn run_suffix(conn: &rusqlite::Connection) -> String {
    conn.query_row(
        "SELECT substr(name, length('rocpd_region') + 1) FROM sqlite_master \
         WHERE type = 'table' AND name LIKE 'rocpd_region_%'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

fn replay_lenient(path: &Path) -> (Vec<u64>, ReadReport) {
    let opts = ReplayOptions {
        chunk_rows: 4,
        progress: false,
        names: None,
    };
    let mut src = open_with(path, &opts).unwrap();
    let mut ids = Vec::new();
    while let Some(b) = src.next_batch().unwrap() {
        ids.extend(b.kernel_dispatches.correlation_id.iter().copied());
    }
    (ids, src.report().clone())
}

const KERNEL_HEADER: &str = "Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z";

fn kernel_row(i: u64, end: &str) -> String {
    format!(
        "KERNEL_DISPATCH,1,0,0,77,{i},3,\"k(int)\",{i},{},{end},0,0,8,0,16,64,1,1,1024,1,1",
        1000 * i
    )
}

#[test]
fn bad_number_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("kernel_trace.csv");
    let mut s = format!("{KERNEL_HEADER}\n");
    for i in 1..=9 {
        s += &kernel_row(i, &(1000 * i + 50).to_string());
        s += "\n";
    }
    s += &kernel_row(10, "12x");
    s += "\n";
    std::fs::write(&p, s).unwrap();
    let msg = replay_err_with(&p, true);
    assert!(
        msg.ends_with(
            "kernel_trace.csv:11: column End_Timestamp: \"12x\" is not a number (--strict)"
        ),
        "{msg}"
    );

    // Leniently, the row is skipped and counted with its line.
    let (ids, report) = replay_lenient(&p);
    assert_eq!(ids, (1..=9).collect::<Vec<_>>());
    let file = &report.files[0];
    assert_eq!((file.read, file.mapped, file.lost()), (10, 9, 1));
    let issue = &file.issues[0];
    assert_eq!(
        issue.reason,
        Reason::UnparsableField {
            column: "End_Timestamp".into()
        }
    );
    assert_eq!(issue.lines, [11]);
    assert_eq!(
        report.lines(),
        ["kernel_trace.csv: 1 record(s) not mapped: field End_Timestamp could not be read (first at line 11: column End_Timestamp: \"12x\" is not a number)"]
    );
}

#[test]
fn truncated_csv_names_the_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("kernel_trace.csv");
    let full = format!(
        "{KERNEL_HEADER}\n{}\n{}\n",
        kernel_row(1, "1100"),
        kernel_row(2, "2100")
    );
    // Cut the file in the middle of the last row.
    std::fs::write(&p, &full[..full.len() - 20]).unwrap();
    let msg = replay_err_with(&p, true);
    assert!(
        msg.contains("kernel_trace.csv:3: expected 22 fields, found"),
        "{msg}"
    );
    assert!(msg.contains("truncated"), "{msg}");
    assert!(msg.contains("--strict"), "{msg}");

    // Leniently: the records before the damage, and one warning naming the
    // file and the line.
    let (ids, report) = replay_lenient(&p);
    assert_eq!(ids, [1]);
    let lines = report.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("kernel_trace.csv:3: expected 22 fields, found"),
        "{lines:?}"
    );
    assert!(lines[0].ends_with("; read up to line 2"), "{lines:?}");
    assert_eq!(report.damaged().count(), 1);

    // Cut inside the last field: the row is complete but has no line end.
    std::fs::write(&p, &full[..full.len() - 2]).unwrap();
    let (ids, report) = replay_lenient(&p);
    assert_eq!(ids, [1]);
    let damage = report.files[0].damage.as_ref().unwrap();
    assert_eq!(damage.line, Some(3));
    assert!(damage.message.contains("no line end"), "{damage:?}");
    assert!(replay_err_with(&p, true).contains("kernel_trace.csv:3: the last line has no line end"));
}

#[test]
fn missing_required_column_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hip_api_trace.csv");
    std::fs::write(&p, "Domain,Function,Process_Id,Thread_Id,Correlation_Id,Start_Timestamp\nHIP_RUNTIME_API,hipMalloc,1,1,1,5\n").unwrap();
    let msg = replay_err(&p);
    assert!(
        msg.ends_with("hip_api_trace.csv:1: missing required column End_Timestamp"),
        "{msg}"
    );
}

#[test]
fn corrupt_sqlite_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("results.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0xA5u8, 4096));
    std::fs::write(&p, bytes).unwrap();
    let msg = replay_err(&p);
    assert!(
        msg.contains("results.db: not a readable rocpd database"),
        "{msg}"
    );

    // A valid SQLite file that is not rocpd.
    let q = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&q).unwrap();
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(conn);
    let msg = replay_err(&q);
    assert!(msg.contains("other.db: not a rocpd database"), "{msg}");
}

#[test]
fn bad_json_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("results.json");
    std::fs::write(&p, "{\"rocprofiler-sdk-tool\": [\n  {\"metadata\": {\"pid\": 12},\n   \"buffer_records\": {\"kernel_dispatch\": [ {\"start_timestamp\": 5,, } ]}}]}\n").unwrap();
    let msg = replay_err(&p);
    assert!(msg.contains("results.json:3: column"), "{msg}");
    assert!(msg.contains("invalid rocprofv3 JSON"), "{msg}");

    // Truncated JSON.
    std::fs::write(
        &p,
        "{\"rocprofiler-sdk-tool\": [ {\"metadata\": {\"pid\": 12}",
    )
    .unwrap();
    let msg = replay_err(&p);
    assert!(
        msg.contains("results.json:1: column 51: the document ends before it is complete: the recording was cut short")
            && msg.contains("EOF"),
        "{msg}"
    );
}

#[test]
fn empty_directory_and_missing_path() {
    let dir = tempfile::tempdir().unwrap();
    let msg = replay_err(dir.path());
    assert!(msg.contains("no rocprofv3 trace files"), "{msg}");
    let msg = replay_err(&dir.path().join("nope.csv"));
    assert!(msg.contains("nope.csv:"), "{msg}");
}

/// A rocpd database with a region of a category this build does not know
/// and a mark whose message is missing: neither is replayed under a guessed
/// name, both are counted and said, and `--strict` refuses the file.
#[test]
fn rocpd_regions_of_an_unknown_category_and_nameless_marks_are_counted_not_guessed() {
    use rocwasm_formats::synthetic::sample_run;
    use rocwasm_formats::{OperationNames, RocpdSink, Sink};
    let names = OperationNames::new();
    let run = sample_run(3, 40, 1 << 20, &names);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let mut sink = RocpdSink::at_path(&db);
    let ctx = run.context(&names);
    sink.begin(&ctx).unwrap();
    for b in &run.batches {
        sink.write_batch(b, &ctx).unwrap();
    }
    // Two marks (start = end), which rocpd keeps as samples.
    let mut marks = rocwasm_core::Batch::default();
    for (i, text) in ["first mark", "second mark"].into_iter().enumerate() {
        let at = run.meta.start_ns + 10 + i as u64;
        marks.api_calls.push(rocwasm_core::ApiCall {
            kind: rocwasm_core::BufferTracingKind::MarkerCoreRangeApi.raw(),
            operation: run.symbols.intern_marker(text),
            correlation_id: 800_000 + i as u64,
            thread_id: 1,
            start: at,
            end: at,
            ..Default::default()
        });
    }
    sink.write_batch(&marks, &ctx).unwrap();
    sink.finish(&ctx).unwrap();
    let (_, before) = replay_lenient(&db);
    assert!(before.is_clean(), "{:?}", before.lines());

    let conn = rusqlite::Connection::open(&db).unwrap();
    let suffix = run_suffix(&conn);
    let marks: i64 = conn
        .query_row(
            &format!("SELECT count(*) FROM rocpd_sample{suffix}"),
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(marks > 0, "the sample run has marks");
    conn.execute_batch(&format!(
        "INSERT INTO rocpd_string{suffix} (id, string) VALUES (999999, 'FUTURE_API');
         UPDATE rocpd_event{suffix} SET category_id = 999999 WHERE id =
           (SELECT event_id FROM rocpd_region{suffix} ORDER BY id LIMIT 1);
         UPDATE rocpd_event{suffix} SET extdata = '{{}}' WHERE id =
           (SELECT event_id FROM rocpd_sample{suffix} ORDER BY id LIMIT 1);"
    ))
    .unwrap();
    drop(conn);

    let (_, report) = replay_lenient(&db);
    let lines = report.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("1 record(s) of domain FUTURE_API not mapped")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("extdata of a MARKER_CORE_RANGE_API sample")),
        "{lines:?}"
    );
    let err = replay_err_with(&db, true);
    assert!(
        err.contains("FUTURE_API") || err.contains("names no message"),
        "{err}"
    );
}

/// Counter values whose event is no kernel dispatch of the run (a damaged
/// or hand-edited database) have no dispatch to go with: counted under
/// their column, never dropped without a word.
#[test]
fn rocpd_counter_values_without_their_dispatch_are_counted() {
    use rocwasm_formats::synthetic::sample_run;
    use rocwasm_formats::{OperationNames, RocpdSink, Sink};
    let names = OperationNames::new();
    let run = sample_run(3, 40, 1 << 20, &names).with_counter_samples();
    let samples: u64 = run
        .batches
        .iter()
        .map(|b| b.counter_samples.len() as u64)
        .sum();
    assert!(samples > 0);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let mut sink = RocpdSink::at_path(&db);
    let ctx = run.context(&names);
    sink.begin(&ctx).unwrap();
    for b in &run.batches {
        sink.write_batch(b, &ctx).unwrap();
    }
    sink.finish(&ctx).unwrap();
    assert!(replay_lenient(&db).1.is_clean());

    // One counted dispatch's row goes: its two counter values lose it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let suffix = run_suffix(&conn);
    let event: i64 = conn
        .query_row(
            &format!("SELECT event_id FROM rocpd_pmc_event{suffix} LIMIT 1"),
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        &format!("DELETE FROM rocpd_kernel_dispatch{suffix} WHERE event_id = ?1"),
        [event],
    )
    .unwrap();
    drop(conn);
    let (_, after) = replay_lenient(&db);
    let lines = after.lines();
    assert!(
        lines.iter().any(|l| l.contains("2 record(s)")
            && l.contains("event_id")
            && l.contains("no kernel dispatch")),
        "{lines:?}"
    );
}
