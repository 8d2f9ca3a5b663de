//! Write a run with the sinks, replay it, and get the same statistics (the
//! numbers the kernel-stats plugin and `--stats` compute) from every format.

use std::path::Path;

use rocwasm_formats::replay::{open_with, ReplayOptions, TraceFormat};
use rocwasm_formats::synthetic::{sample_run, SampleRun};
use rocwasm_formats::{
    CsvSink, JsonSink, OperationNames, RocpdSink, Sink, StatsAccumulator, StatsDomain, StatsReport,
};

fn write(run: &SampleRun, names: &OperationNames, sink: &mut dyn Sink) {
    let ctx = run.context(names);
    sink.begin(&ctx).unwrap();
    for b in &run.batches {
        sink.write_batch(b, &ctx).unwrap();
    }
    sink.finish(&ctx).unwrap();
}

fn live_stats(run: &SampleRun, names: &OperationNames) -> StatsReport {
    let mut acc = StatsAccumulator::new();
    run.batches.iter().for_each(|b| acc.add_batch(b));
    acc.report(&run.symbols, names)
}

fn replay_stats(path: &Path, format: TraceFormat) -> (StatsReport, u64, u32) {
    let opts = ReplayOptions {
        chunk_rows: 1000,
        progress: false,
        names: None,
    };
    let mut src = open_with(path, &opts).unwrap();
    assert_eq!(src.format, format);
    let mut acc = StatsAccumulator::new();
    let mut batches = 0;
    while let Some(b) = src.next_batch().unwrap() {
        assert!(b.is_consistent());
        assert!(b.api_calls.len() <= 1000 && b.kernel_dispatches.len() <= 1000);
        acc.add_batch(&b);
        batches += 1;
    }
    assert!(
        batches > 1 || src.records() <= 1000,
        "chunking: expected several batches"
    );
    (
        acc.report(src.symbols(), src.names()),
        src.records(),
        src.meta().pid,
    )
}

fn sample() -> (SampleRun, OperationNames) {
    let names = OperationNames::new();
    let run = sample_run(42, 2000, 512, &names);
    (run, names)
}

fn records(run: &SampleRun) -> u64 {
    run.batches.iter().map(|b| b.len() as u64).sum()
}

#[test]
fn csv_replay_gives_the_live_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = sample();
    write(
        &run,
        &names,
        &mut CsvSink::new(dir.path(), Some("app".into())),
    );
    let (got, n, pid) = replay_stats(dir.path(), TraceFormat::Csv);
    let want = live_stats(&run, &names);
    assert_eq!(got, want);
    assert!(
        !want.table(StatsDomain::Kernel).is_empty() && !want.table(StatsDomain::HipApi).is_empty()
    );
    assert_eq!(n, records(&run));
    assert_eq!(pid, run.meta.pid);

    // A single file replays by itself.
    let (k, n, _) = replay_stats(&dir.path().join("app_kernel_trace.csv"), TraceFormat::Csv);
    assert_eq!(
        k.table(StatsDomain::Kernel),
        want.table(StatsDomain::Kernel)
    );
    assert_eq!(
        n as usize,
        run.batches
            .iter()
            .map(|b| b.kernel_dispatches.len())
            .sum::<usize>()
    );
}

#[test]
fn json_replay_gives_the_live_statistics_and_records() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = sample();
    let path = dir.path().join("results.json");
    write(&run, &names, &mut JsonSink::new(dir.path(), None));
    let (got, n, pid) = replay_stats(&path, TraceFormat::Json);
    assert_eq!(got, live_stats(&run, &names));
    assert_eq!((n, pid), (records(&run), run.meta.pid));

    // JSON keeps every field: the records come back identical.
    let mut src = open_with(
        &path,
        &ReplayOptions {
            chunk_rows: 1 << 20,
            progress: false,
            names: None,
        },
    )
    .unwrap();
    let b = src.next_batch().unwrap().unwrap();
    let orig: Vec<_> = run
        .batches
        .iter()
        .flat_map(|b| b.kernel_dispatches.rows())
        .collect();
    assert_eq!(b.kernel_dispatches.rows().collect::<Vec<_>>(), orig);
    let orig: Vec<_> = run
        .batches
        .iter()
        .flat_map(|b| b.memory_copies.rows())
        .collect();
    assert_eq!(b.memory_copies.rows().collect::<Vec<_>>(), orig);
    assert_eq!(src.symbols().kernels(), run.symbols.kernels());
    assert_eq!(src.symbols().agents(), run.symbols.agents());
}

/// Every table of the batches survives a JSON round trip, row for row:
/// the tables the sample run lacks are added (retired correlation ids and
/// runtime initialisations, which rocwasm writes under categories of its
/// own; rocDecode and rocJPEG calls), and the replay is cut into many
/// small batches, so that splitting must keep every table too.
#[test]
fn json_replay_keeps_every_tables_rows() {
    use rocwasm_core::{ApiCall, BufferTracingKind, Retirement, RuntimeInitialization};
    let dir = tempfile::tempdir().unwrap();
    let (mut run, names) = sample();
    let last = run.batches.last_mut().unwrap();
    for i in 0..700 {
        last.retirements.push(Retirement {
            timestamp: 5_000 + i,
            correlation_id: 1 + i,
        });
    }
    for (i, library) in [
        rocwasm_core::RuntimeLibrary::Hsa,
        rocwasm_core::RuntimeLibrary::Hip,
    ]
    .into_iter()
    .enumerate()
    {
        last.runtime_initializations.push(RuntimeInitialization {
            operation: library as u32,
            thread_id: 77,
            timestamp: 1_000 + i as u64,
            version: 60_400 + i as u64,
            instance: i as u64,
        });
    }
    for kind in [
        BufferTracingKind::RocdecodeApi,
        BufferTracingKind::RocjpegApi,
    ] {
        last.api_calls.push(ApiCall {
            kind: kind.raw(),
            operation: 1,
            correlation_id: 9_000 + u64::from(kind.raw()),
            thread_id: 77,
            start: 10,
            end: 20,
            ..Default::default()
        });
    }
    let path = dir.path().join("results.json");
    write(&run, &names, &mut JsonSink::new(dir.path(), None));

    let mut src = open_with(
        &path,
        &ReplayOptions {
            chunk_rows: 300,
            progress: false,
            names: None,
        },
    )
    .unwrap();
    let mut got = rocwasm_core::Batch::default();
    let mut batches = 0;
    while let Some(mut b) = src.next_batch().unwrap() {
        got.append(&mut b);
        batches += 1;
    }
    assert!(batches > 3, "cut into {batches} batch(es)");
    let mut want = rocwasm_core::Batch::default();
    for b in &run.batches {
        want.append(&mut b.clone());
    }
    // The JSON groups API calls by category: compare each table's rows
    // as sets (each row once, in some order).
    fn sorted<T: std::fmt::Debug>(rows: impl Iterator<Item = T>) -> Vec<String> {
        let mut v: Vec<String> = rows.map(|r| format!("{r:?}")).collect();
        v.sort();
        v
    }
    macro_rules! every_table {
        ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {
            $(
                // results.json has no counter samples yet (the JSON sink
                // says how many it leaves out; every_table.rs checks that).
                if stringify!($field) != "counter_samples" {
                    assert!(!want.$field.is_empty(), "the run has {}", stringify!($field));
                    assert_eq!(
                        sorted(got.$field.rows()),
                        sorted(want.$field.rows()),
                        "{}",
                        stringify!($field)
                    );
                }
            )*
        };
    }
    rocwasm_core::batch_tables!(every_table);
    let report = src.report();
    assert_eq!(report.read(), want.len() as u64, "{report:?}");
    assert_eq!(report.mapped(), want.len() as u64, "{report:?}");
}

#[test]
fn rocpd_replay_gives_the_live_statistics_and_records() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = sample();
    let path = dir.path().join("results.db");
    write(&run, &names, &mut RocpdSink::at_path(&path));
    let (got, n, pid) = replay_stats(&path, TraceFormat::Rocpd);
    assert_eq!(got, live_stats(&run, &names));
    assert_eq!((n, pid), (records(&run), run.meta.pid));

    let mut src = open_with(
        &path,
        &ReplayOptions {
            chunk_rows: 1 << 20,
            progress: false,
            names: None,
        },
    )
    .unwrap();
    let mut all = rocwasm_core::Batch::default();
    while let Some(mut b) = src.next_batch().unwrap() {
        all.append(&mut b);
    }
    let orig: Vec<_> = run
        .batches
        .iter()
        .flat_map(|b| b.kernel_dispatches.rows())
        .collect();
    assert_eq!(all.kernel_dispatches.rows().collect::<Vec<_>>(), orig);
    let orig: Vec<_> = run
        .batches
        .iter()
        .flat_map(|b| b.scratch_memory.rows())
        .collect();
    assert_eq!(all.scratch_memory.rows().collect::<Vec<_>>(), orig);
    let orig: Vec<_> = run
        .batches
        .iter()
        .flat_map(|b| b.memory_allocations.rows())
        .collect();
    assert_eq!(all.memory_allocations.rows().collect::<Vec<_>>(), orig);
}

#[test]
fn unknown_function_names_survive_replay() {
    let dir = tempfile::tempdir().unwrap();
    let names = OperationNames::new();
    let run = sample_run(5, 64, 512, &names);
    let hip = rocwasm_core::BufferTracingKind::HipRuntimeApi.raw();
    // A function this build has never heard of.
    let op = names.resolve_or_register(hip, "hipFutureApiFromRocm99");
    let mut run = run;
    let mut extra = rocwasm_core::Batch::default();
    extra.api_calls.push(rocwasm_core::ApiCall {
        kind: hip,
        operation: op,
        thread_id: 1,
        start: 10,
        end: 30,
        ..Default::default()
    });
    run.batches.push(extra);
    for (format, path) in [
        (TraceFormat::Csv, dir.path().to_path_buf()),
        (TraceFormat::Json, dir.path().join("results.json")),
        (TraceFormat::Rocpd, dir.path().join("results.db")),
    ] {
        let mut sink: Box<dyn Sink> = match format {
            TraceFormat::Csv => Box::new(CsvSink::new(dir.path(), None)),
            TraceFormat::Json => Box::new(JsonSink::new(dir.path(), None)),
            TraceFormat::Rocpd => Box::new(RocpdSink::at_path(&path)),
        };
        write(&run, &names, sink.as_mut());
        let (got, _, _) = replay_stats(&path, format);
        assert!(
            got.table(StatsDomain::HipApi)
                .iter()
                .any(|r| r.name == "hipFutureApiFromRocm99" && r.total_ns == 20),
            "{format:?}"
        );
    }
}

#[test]
fn a_json_category_this_build_does_not_read_is_counted_and_strict_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = sample();
    let path = dir.path().join("results.json");
    write(&run, &names, &mut JsonSink::new(dir.path(), None));
    // A newer rocprofv3 adds a category: three records we cannot replay.
    let text = std::fs::read_to_string(&path).unwrap();
    // The records object (the `strings` table has a `buffer_records` list too).
    let brace = text
        .match_indices("\"buffer_records\"")
        .map(|(at, key)| at + key.len())
        .find_map(|after| {
            let rest = text[after..].trim_start_matches([':', ' ', '\n', '\t']);
            rest.starts_with('{').then(|| text.len() - rest.len() + 1)
        })
        .expect("a buffer_records object");
    let extra = r#""counter_collection": [{"a": 1}, {"b": [2]}, 3], "#;
    std::fs::write(
        &path,
        format!("{}{extra}{}", &text[..brace], &text[brace..]),
    )
    .unwrap();
    let opts = ReplayOptions {
        chunk_rows: 1 << 20,
        progress: false,
        names: None,
    };

    let mut src = open_with(&path, &opts).unwrap();
    let mut replayed = 0;
    while let Some(b) = src.next_batch().unwrap() {
        replayed += b.kernel_dispatches.len() + b.api_calls.len() + b.memory_copies.len();
    }
    assert!(replayed > 0);
    let report = src.report();
    assert_eq!(report.read() - report.mapped(), 3, "{report:?}");
    let issue = &report.files[0].issues[0];
    assert_eq!(
        issue.reason,
        rocwasm_formats::replay::Reason::UnknownCategory {
            name: "counter_collection".into()
        }
    );
    assert_eq!(issue.count, 3);

    let mut strict = open_with(&path, &opts).unwrap();
    strict.set_strict(true);
    let mut result = Ok(None);
    for _ in 0..64 {
        result = strict.next_batch();
        if !matches!(result, Ok(Some(_))) {
            break;
        }
    }
    let e = result
        .expect_err("--strict refuses an unread category")
        .to_string();
    assert!(e.contains("counter_collection"), "{e}");
}

/// Markers as rocprofv3 records them (`MARKER_CORE_RANGE_API`, named by
/// their message, which the live run's symbol table interned) are written
/// by every format under their message and replay to the same records; in
/// rocpd the message is the event's `{"message": …}` and a mark is a sample.
#[test]
fn marker_messages_are_written_and_replayed_by_every_format() {
    use rocwasm_core::{ApiCall, Batch, BufferTracingKind};
    let dir = tempfile::tempdir().unwrap();
    let names = OperationNames::new();
    let mut run = sample_run(6, 16, 512, &names);
    let kind = BufferTracingKind::MarkerCoreRangeApi.raw();
    let marker = |text: &str, id: u64, start: u64, end: u64| ApiCall {
        kind,
        operation: run.symbols.intern_marker(text),
        correlation_id: id,
        thread_id: 7,
        start,
        end,
        ..Default::default()
    };
    let want = [
        marker("outer range", 900_001, 100, 400),
        marker("inner range", 900_002, 150, 250),
        marker("a mark", 900_003, 300, 300),
    ];
    let mut extra = Batch::default();
    want.iter().for_each(|m| extra.api_calls.push(*m));
    run.batches.push(extra);

    for (format, path) in [
        (TraceFormat::Csv, dir.path().to_path_buf()),
        (TraceFormat::Json, dir.path().join("results.json")),
        (TraceFormat::Rocpd, dir.path().join("results.db")),
    ] {
        let mut sink: Box<dyn Sink> = match format {
            TraceFormat::Csv => Box::new(CsvSink::new(dir.path(), None)),
            TraceFormat::Json => Box::new(JsonSink::new(dir.path(), None)),
            TraceFormat::Rocpd => Box::new(RocpdSink::at_path(&path)),
        };
        write(&run, &names, sink.as_mut());
        let opts = ReplayOptions {
            chunk_rows: 1000,
            progress: false,
            names: None,
        };
        let mut src = open_with(&path, &opts).unwrap();
        let mut got = Vec::new();
        while let Some(b) = src.next_batch().unwrap() {
            for r in b.api_calls.rows().filter(|r| r.kind == kind) {
                got.push((
                    src.names().name(kind, r.operation).to_string(),
                    r.start,
                    r.end,
                ));
            }
        }
        got.sort_by_key(|g| (g.1, g.2));
        assert_eq!(
            got,
            [
                ("outer range".to_string(), 100, 400),
                ("inner range".to_string(), 150, 250),
                ("a mark".to_string(), 300, 300),
            ],
            "{format:?}"
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("marker_api_trace.csv")).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.contains("\"MARKER_CORE_RANGE_API\"") && l.contains("\"inner range\"")),
        "{csv}"
    );

    // AMD's markers summary: the message from the event's extdata, over
    // regions and samples of a MARKER_ category.
    let db = rusqlite::Connection::open(dir.path().join("results.db")).unwrap();
    let query = |table: &str| -> Vec<String> {
        let sql = format!(
            "SELECT JSON_EXTRACT(e.extdata, '$.message') FROM {table} x \
             JOIN rocpd_event e ON e.id = x.event_id \
             JOIN rocpd_string c ON c.id = e.category_id \
             WHERE c.string LIKE 'MARKER_%' ORDER BY 1"
        );
        let mut stmt = db.prepare(&sql).unwrap();
        // The sample run's roctx calls (MARKER_CORE_API) carry no message.
        let rows = stmt
            .query_map([], |r| r.get::<_, Option<String>>(0))
            .unwrap();
        rows.filter_map(Result::unwrap).collect()
    };
    assert_eq!(query("rocpd_region"), ["inner range", "outer range"]);
    assert_eq!(query("rocpd_sample"), ["a mark"]);
}

/// rocprofv3's own files: a `marker_api_trace.csv` of MARKER_CORE_RANGE_API
/// rows (the message as Function) replays to those ranges, and a rocpd
/// database whose marker regions are named by the roctx operation
/// (`roctxThreadRangeA`, as rocprofv3 names them) takes the name from the
/// event's `{"message": …}`.
#[test]
fn rocprofv3s_marker_ranges_replay_under_their_message() {
    use rocwasm_core::BufferTracingKind;
    let dir = tempfile::tempdir().unwrap();
    let kind = BufferTracingKind::MarkerCoreRangeApi.raw();
    let read = |path: &Path| -> Vec<(String, u64, u64, u64)> {
        let opts = ReplayOptions {
            chunk_rows: 1000,
            progress: false,
            names: None,
        };
        let mut src = open_with(path, &opts).unwrap();
        let mut got = Vec::new();
        while let Some(b) = src.next_batch().unwrap() {
            for r in b.api_calls.rows() {
                assert_eq!(r.kind, kind, "{r:?}");
                let name = src.names().name(kind, r.operation).to_string();
                got.push((name, r.thread_id, r.start, r.end));
            }
        }
        got.sort_by_key(|g| (g.2, g.3));
        got
    };
    let csv = dir.path().join("marker_api_trace.csv");
    std::fs::write(
        &csv,
        "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
         \"MARKER_CORE_RANGE_API\",\"outer\",717,717,1,1000,5000\n\
         \"MARKER_CORE_RANGE_API\",\"inner\",717,717,2,2000,3000\n\
         \"MARKER_CORE_RANGE_API\",\"a mark\",717,718,3,4000,4000\n",
    )
    .unwrap();
    let want = vec![
        ("outer".to_string(), 717, 1000, 5000),
        ("inner".to_string(), 717, 2000, 3000),
        ("a mark".to_string(), 718, 4000, 4000),
    ];
    assert_eq!(read(&csv), want);

    // Our database of the same records, its regions renamed as rocprofv3
    // names them (by the roctx operation): the message still names them.
    let names = OperationNames::new();
    let mut run = sample_run(7, 1, 512, &names);
    let mut batch = rocwasm_core::Batch::default();
    for (i, (m, tid, start, end)) in want.iter().enumerate() {
        batch.api_calls.push(rocwasm_core::ApiCall {
            kind,
            operation: run.symbols.intern_marker(m),
            correlation_id: i as u64 + 1,
            thread_id: *tid,
            start: *start,
            end: *end,
            ..Default::default()
        });
    }
    run.batches = vec![batch];
    let db = dir.path().join("results.db");
    write(&run, &names, &mut RocpdSink::at_path(&db));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let table: String = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_string_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let renamed = conn
        .execute(
            &format!(
                "UPDATE \"{table}\" SET string = CASE string \
                 WHEN 'outer' THEN 'roctxThreadRangeA' ELSE 'roctxProcessRangeA' END \
                 WHERE string IN ('outer', 'inner')"
            ),
            [],
        )
        .unwrap();
    assert_eq!(renamed, 2);
    drop(conn);
    assert_eq!(read(&db), want);
}
