//! Each traced API call's arguments in rocpd's `rocpd_arg` with
//! `--api-args`, as rocprofv3 writes them (one row per argument: the call's
//! event, the position from 0, the C type, the name, the value as text),
//! read through the view AMD's rocpd tool reads them from (`region_args`),
//! and said when a replay cannot carry them; none without `--api-args`
//! (rendering them costs a traced call several times its tracing); and the
//! process row's `environment`, which a replay keeps.
//!
//! The reference is the run's own API log (`ROCWASM_API_LOG`:
//! `api_calls.txt`, one line per call with its correlation id and its
//! arguments as the interception rendered them), so every call of the run
//! is compared, not a sample.
//!
//! Needs `cargo xtask build-sim` and the sqlite3 CLI.

use std::collections::BTreeMap;
use std::path::Path;

use rocwasm_tests::*;

/// `name(arg: type = value, …)` of each HIP runtime call in the API log,
/// by internal correlation id.
fn logged_calls(log: &Path) -> BTreeMap<u64, String> {
    let text = std::fs::read_to_string(log).expect("the API log");
    text.lines()
        .filter_map(|line| {
            // `<tid> <correlation> <kind> <call> -> <retval>`
            let mut parts = line.splitn(4, ' ');
            let (_tid, id, kind, rest) =
                (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            if kind != "HIP_RUNTIME_API" {
                return None;
            }
            let (call, _retval) = rest.rsplit_once(" -> ")?;
            Some((id.parse().expect("a correlation id"), call.to_string()))
        })
        .collect()
}

/// The same text built from the database: each HIP region's name and its
/// `rocpd_arg` rows in position order, by the event's `stack_id` (the
/// internal correlation id).
fn database_calls(db: &Path) -> BTreeMap<u64, String> {
    // Fields joined by U+001F: values may hold any printable text.
    let rows = sqlite3(
        db,
        "SELECT e.stack_id || char(31) || s.string || char(31) || \
                coalesce(a.position, '') || char(31) || coalesce(a.name, '') || char(31) || \
                coalesce(a.type, '') || char(31) || coalesce(a.value, '') \
         FROM rocpd_region r \
         JOIN rocpd_event e ON e.id = r.event_id AND e.guid = r.guid \
         JOIN rocpd_string s ON s.id = r.name_id AND s.guid = r.guid \
         JOIN rocpd_string c ON c.id = e.category_id AND c.guid = e.guid \
         LEFT JOIN rocpd_arg a ON a.event_id = e.id AND a.guid = e.guid \
         WHERE c.string = 'HIP_RUNTIME_API' \
         ORDER BY e.stack_id, a.position",
    );
    let mut calls: BTreeMap<u64, (String, Vec<String>)> = BTreeMap::new();
    for row in rows.lines() {
        let f: Vec<&str> = row.split('\u{1f}').collect();
        assert_eq!(f.len(), 6, "row {row:?}");
        let id: u64 = f[0].parse().expect("a stack id");
        let call = calls
            .entry(id)
            .or_insert_with(|| (f[1].to_string(), Vec::new()));
        if !f[2].is_empty() {
            let position: usize = f[2].parse().expect("a position");
            assert_eq!(
                position,
                call.1.len(),
                "call {id}: positions from 0, no gaps"
            );
            call.1.push(format!("{}: {} = {}", f[3], f[4], f[5]));
        }
    }
    calls
        .into_iter()
        .map(|(id, (name, args))| (id, format!("{name}({})", args.join(", "))))
        .collect()
}

#[test]
fn a_live_runs_database_has_every_calls_arguments_as_the_call_was_made() {
    let tmp = tempfile::tempdir().unwrap();
    let app = sim_dir().join("bin").join("multi_kernel");
    let args = [
        "run",
        "--sim",
        "--hip-runtime-trace",
        "--memory-copy-trace",
        "--output-format",
        "rocpd",
        "--api-args",
        "-d",
        "out",
        "--",
        app.to_str().unwrap(),
    ];
    let mark = "a value; with = and spaces";
    let out = rocwasm_with_env(
        &args,
        tmp.path(),
        &[("ROCWASM_API_LOG", "1"), ("ROCWASM_TEST_MARK", mark)],
    );
    assert_success(&out, &args.join(" "));
    let dir = tmp.path().join("out");
    let db = dir.join("results.db");

    let logged = logged_calls(&dir.join("api_calls.txt"));
    let written = database_calls(&db);
    assert!(logged.len() > 20, "{} calls logged", logged.len());
    assert_eq!(written, logged, "rocpd_arg vs the API log, call by call");

    // AMD's view of them: every argument row belongs to a region.
    let count = |sql: &str| sqlite3(&db, sql).trim().parse::<u64>().unwrap();
    let rows = count("SELECT count(*) FROM rocpd_arg");
    assert!(rows > logged.len() as u64, "{rows} argument rows");
    assert_eq!(count("SELECT count(*) FROM region_args"), rows);
    // Each asynchronous copy call's size is the size of a copy it made,
    // and each such call has one.
    let list =
        |sql: &str| -> Vec<String> { sqlite3(&db, sql).lines().map(str::to_string).collect() };
    let sizes = list(
        "SELECT ra.value FROM region_args ra JOIN regions r ON r.id = ra.id AND r.guid = ra.guid \
         WHERE r.name = 'hipMemcpyAsync' AND ra.name = 'sizeBytes'",
    );
    let calls = count("SELECT count(*) FROM regions WHERE name = 'hipMemcpyAsync'");
    assert_eq!(
        sizes.len() as u64,
        calls,
        "one sizeBytes per hipMemcpyAsync"
    );
    let copied = list("SELECT DISTINCT size FROM memory_copies");
    assert!(calls > 0);
    for s in &sizes {
        assert!(
            copied.contains(s),
            "sizeBytes {s} is no copy's size {copied:?}"
        );
    }

    // A replay of the database cannot carry them, and says how many.
    let args = [
        "replay",
        db.to_str().unwrap(),
        "-d",
        "replayed",
        "--output-format",
        "rocpd",
    ];
    let out = rocwasm(&args, tmp.path());
    assert_success(&out, &args.join(" "));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{rows} row(s) of rocpd_arg")),
        "the replay says what it did not read:\n{stderr}"
    );
    let replayed = tmp.path().join("replayed").join("results.db");
    assert_eq!(
        sqlite3(&replayed, "SELECT count(*) FROM rocpd_arg").trim(),
        "0"
    );

    // The application's environment, as rocprofv3 records it (a JSON object
    // of the variables), in the live run's process row and in the replay's.
    for db in [&db, &replayed] {
        let got = sqlite3(
            db,
            "SELECT JSON_EXTRACT(environment, '$.ROCWASM_TEST_MARK') FROM rocpd_info_process",
        );
        assert_eq!(got.trim(), mark, "{}", db.display());
    }
}

#[test]
fn without_api_args_no_argument_is_recorded_and_api_args_alone_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let app = sim_dir().join("bin").join("vector_add");
    let app = app.to_str().unwrap();
    let run = |extra: &[&str], dir: &str| {
        let mut args = vec!["run", "--sim", "--hip-runtime-trace", "-d", dir];
        args.extend_from_slice(extra);
        args.extend(["--", app]);
        rocwasm(&args, tmp.path())
    };
    let out = run(&["--output-format", "rocpd"], "plain");
    assert_success(&out, "a rocpd run without --api-args");
    let db = tmp.path().join("plain/results.db");
    assert!(sqlite3(&db, "SELECT count(*) FROM regions").trim() != "0");
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM rocpd_arg").trim(), "0");

    let out = run(&["--output-format", "csv", "--api-args"], "refused");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--api-args") && stderr.contains("rocpd"),
        "{stderr}"
    );
    assert!(!tmp.path().join("refused").exists(), "nothing ran");

    // A replay has no arguments to record.
    let args = ["replay", db.to_str().unwrap(), "--api-args", "-d", "re"];
    let out = rocwasm(&args, tmp.path());
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--api-args"));
}
