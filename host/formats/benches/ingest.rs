//! Replay ingest benchmark: records/s from a 1 M-record rocpd file through
//! the replay reader into the native kernel-stats accumulator, beside the raw
//! row rate of SQLite itself on the same queries (rusqlite stepping every
//! row, and the `sqlite3` command-line tool writing them to /dev/null), all
//! measured in one run so the ratios are meaningful.
//!
//! `cargo bench -p rocwasm-formats --bench ingest` (set `INGEST_RECORDS` to
//! change the size). Timing lives here, never in tests.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rocwasm_formats::replay::bench_support::record_queries;
use rocwasm_formats::replay::{open_with, ReplayOptions};
use rocwasm_formats::synthetic::sample_run;
use rocwasm_formats::{OperationNames, RocpdSink, Sink, StatsAccumulator, StatsDomain};
use rusqlite::types::ValueRef;

/// Average records per launch of the sample run (API calls, dispatch,
/// copies, allocations, markers, scratch); used only to size the run.
const RECORDS_PER_LAUNCH: f64 = 4.28;

fn best_of<T>(n: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = None;
    let mut out = None;
    for _ in 0..n {
        let t = Instant::now();
        let v = f();
        let d = t.elapsed();
        if best.is_none_or(|b| d < b) {
            best = Some(d);
        }
        out = Some(v);
    }
    (best.unwrap(), out.unwrap())
}

fn rate(n: u64, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

fn main() {
    let target: f64 = std::env::var("INGEST_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000.0);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("ingest.db");

    // 1. Build the file with the rocpd sink (timed too: it is the write path).
    let names = OperationNames::new();
    let run = sample_run(1, (target / RECORDS_PER_LAUNCH) as usize, 65536, &names);
    let records: u64 = run.batches.iter().map(|b| b.len() as u64).sum();
    let ctx = run.context(&names);
    let t = Instant::now();
    let mut sink = RocpdSink::at_path(&db);
    sink.begin(&ctx).unwrap();
    for b in &run.batches {
        sink.write_batch(b, &ctx).unwrap();
    }
    sink.finish(&ctx).unwrap();
    let write = t.elapsed();
    let size = std::fs::metadata(&db).unwrap().len();
    println!(
        "rocpd file: {records} records, {:.1} MB, written in {:.2} s ({:.0} records/s via RocpdSink)",
        size as f64 / 1e6,
        write.as_secs_f64(),
        rate(records, write)
    );

    // 2. Replay into the kernel-stats accumulator.
    let opts = ReplayOptions {
        chunk_rows: 65536,
        progress: false,
        names: None,
    };
    let (replay, (n, kernels)) = best_of(3, || {
        let mut src = open_with(&db, &opts).unwrap();
        let mut acc = StatsAccumulator::new();
        while let Some(b) = src.next_batch().unwrap() {
            acc.add_batch(&b);
        }
        let report = acc.report(src.symbols(), src.names());
        (src.records(), report.table(StatsDomain::Kernel).len())
    });
    assert_eq!(n, records, "replay lost records");
    assert!(kernels > 0);

    // 3. SQLite alone: the same queries, every column of every row read.
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let suffix = rocwasm_formats::rocpd::schema::run_suffixes(&conn)
        .unwrap()
        .remove(0);
    let queries = record_queries(&suffix);
    let (raw, rows) = best_of(3, || {
        let mut rows = 0u64;
        let mut checksum = 0i64;
        for q in &queries {
            let mut stmt = conn.prepare(q).unwrap();
            let ncol = stmt.column_count();
            let mut it = stmt.query([]).unwrap();
            while let Some(r) = it.next().unwrap() {
                for i in 0..ncol {
                    match r.get_ref(i).unwrap() {
                        ValueRef::Integer(v) => checksum = checksum.wrapping_add(v),
                        ValueRef::Text(t) => checksum = checksum.wrapping_add(t.len() as i64),
                        _ => {}
                    }
                }
                rows += 1;
            }
        }
        std::hint::black_box(checksum);
        rows
    });
    assert_eq!(rows, records);

    // 4. The sqlite3 CLI on the same queries, output discarded.
    let script = queries
        .iter()
        .map(|q| format!("{q};"))
        .collect::<Vec<_>>()
        .join("\n");
    let cli = Command::new("sqlite3")
        .arg("-version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| {
            best_of(1, || {
                let st = Command::new("sqlite3")
                    .arg("-readonly")
                    .arg(&db)
                    .arg(&script)
                    .stdout(Stdio::null())
                    .status()
                    .expect("sqlite3");
                assert!(st.success());
            })
            .0
        });

    let r_replay = rate(records, replay);
    let r_raw = rate(records, raw);
    println!(
        "replay -> kernel-stats:  {:>12.0} records/s  ({:.3} s)",
        r_replay,
        replay.as_secs_f64()
    );
    println!(
        "rusqlite raw row rate:   {:>12.0} rows/s     ({:.3} s)",
        r_raw,
        raw.as_secs_f64()
    );
    if let Some(cli) = cli {
        let r_cli = rate(records, cli);
        println!(
            "sqlite3 CLI (> null):    {:>12.0} rows/s     ({:.3} s)",
            r_cli,
            cli.as_secs_f64()
        );
        println!("ratio replay / sqlite3 CLI: {:.2}", r_replay / r_cli);
    } else {
        println!("sqlite3 CLI not installed: skipped");
    }
    println!("ratio replay / rusqlite raw: {:.2}", r_replay / r_raw);
}
