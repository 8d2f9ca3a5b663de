//! Output writers: records per second through [`Outputs`] for each trace
//! format (CSV, JSON, rocpd, Perfetto, Parquet), one format per run, and for
//! `rocwasm run`'s default outputs together (`default`: CSV, rocpd and
//! Perfetto), beside the same run with no format at all (the summary
//! statistics [`Outputs`] always keeps), all measured in one process; and
//! the bytes each format writes per million records. `spool` is the default
//! outputs as a live run writes them ([`WriteTiming::AtEnd`]): timed up to
//! the last `write_batch`, i.e. how fast the run's records are taken while
//! the application runs (the formats are written after, at `finish`).
//! `journal` is what a profiled process writes instead under `rocwasm run`:
//! every batch appended to its record journal (`rocwasm_journal`), the
//! formats written by the launcher. `sqlite` is the floor under `rocpd`: the
//! very rows the rocpd writer made of the run (read back from its database,
//! untimed), inserted raw into a fresh database of the same schema with the
//! writer's pragmas, one prepared statement per table, in one transaction —
//! what SQLite itself costs for them, without our mapping of records to rows.
//!
//! ```text
//! cargo bench -p rocwasm-formats --bench writers
//! cargo bench -p rocwasm-formats --bench writers -- --records 200000 --runs 1 --json
//! cargo bench -p rocwasm-formats --bench writers -- --only rocpd   # one format (and `none`), e.g. under perf
//! ```
//!
//! The records are a deterministic synthetic run
//! ([`rocwasm_formats::synthetic::sample_run`]: HIP/HSA/marker calls, kernel
//! dispatches, copies, allocations, scratch events) cut into batches of at
//! most 16384 records per family (about a 1 MiB buffer half). Timed per
//! format: `begin`, every `write_batch`, `finish` (files flushed and
//! closed, the formats that write at the end included), into a fresh
//! directory under the system's temporary directory; generating the records
//! is not timed. Best of `--runs` runs. `--json` prints one JSON object
//! instead of the table (what `cargo xtask bench` reads: `records_per_s` and
//! `bytes_per_million_records` by format). Timing lives here,
//! never in tests.

use std::time::Instant;

use rocwasm_formats::synthetic::sample_run;
use rocwasm_formats::{
    OperationNames, OutputFormat, OutputOptions, Outputs, SinkContext, WriteTiming,
};

const COMMAND: &str = "cargo bench -p rocwasm-formats --bench writers";
/// Average records per launch of the sample run; used only to size it.
const RECORDS_PER_LAUNCH: f64 = 4.28;
const BATCH_ROWS: usize = 16384;

struct Options {
    records: u64,
    runs: usize,
    json: bool,
    /// Measure only this format (and `none`).
    only: Option<String>,
}

fn options() -> Options {
    let mut o = Options {
        records: 2_000_000,
        runs: 3,
        json: false,
        only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(|| usage(&format!("{name} needs a positive number")))
        };
        match a.as_str() {
            "--records" => o.records = value("--records"),
            "--runs" => o.runs = value("--runs") as usize,
            "--json" => o.json = true,
            "--only" => {
                o.only = Some(args.next().unwrap_or_else(|| {
                    usage("--only needs a format: csv, json, rocpd, pftrace or parquet")
                }))
            }
            // `cargo bench` passes `--bench` to every harness.
            "--bench" => {}
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    o
}

/// The `sqlite` case: the best time of `runs` raw insertions of the rows
/// the rocpd writer makes of `batches`, and the database's size.
fn raw_sqlite(
    ctx: &SinkContext<'_>,
    batches: &[rocwasm_core::Batch],
    work: &std::path::Path,
    runs: usize,
) -> (f64, u64) {
    use rusqlite::types::Value;
    use rusqlite::Connection;
    // The rows, as the rocpd writer made them (untimed).
    let dir = work.join("sqlite-source");
    let mut outputs = Outputs::new(&OutputOptions {
        dir: dir.clone(),
        name: None,
        formats: vec![OutputFormat::Rocpd],
        stats: false,
        timing: WriteTiming::DuringRun,
        parquet_hive_root: None,
    });
    outputs.begin(ctx);
    for b in batches {
        outputs.write_batch(b, ctx);
    }
    let summary = outputs.finish(ctx);
    assert!(summary.errors.is_empty(), "rocpd: {:?}", summary.errors);
    let source = Connection::open(dir.join("results.db")).expect("the rocpd database");
    let ddl = |kind: &str| -> Vec<(String, String)> {
        let mut q = source
            .prepare(
                "SELECT name, sql FROM sqlite_master WHERE type = ?1 AND sql IS NOT NULL \
                 AND name NOT LIKE 'sqlite_%'",
            )
            .unwrap();
        q.query_map([kind], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let (tables, indexes) = (ddl("table"), ddl("index"));
    let rows: Vec<(String, usize, Vec<Vec<Value>>)> = tables
        .iter()
        .map(|(name, _)| {
            let mut q = source
                .prepare(&format!("SELECT * FROM \"{name}\""))
                .unwrap();
            let columns = q.column_count();
            let rows = q
                .query_map([], |r| (0..columns).map(|i| r.get::<_, Value>(i)).collect())
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (name.clone(), columns, rows)
        })
        .collect();
    drop(source);
    let mut best = f64::INFINITY;
    let mut bytes = 0;
    for r in 0..runs {
        let path = work.join(format!("sqlite-{r}.db"));
        let t = Instant::now();
        let mut conn = Connection::open(&path).expect("a fresh database");
        conn.execute_batch(
            "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; PRAGMA foreign_keys = OFF;",
        )
        .unwrap();
        for (_, sql) in tables.iter().chain(&indexes) {
            conn.execute_batch(sql).unwrap();
        }
        let tx = conn.transaction().unwrap();
        // As the writer inserts: up to `ROWS_PER_INSERT` rows a statement,
        // each statement prepared once.
        for (name, columns, rows) in &rows {
            let statement = |n: usize| {
                let row = format!("({})", vec!["?"; *columns].join(","));
                format!("INSERT INTO \"{name}\" VALUES {}", vec![row; n].join(","))
            };
            let mut full = tx.prepare(&statement(ROWS_PER_INSERT)).unwrap();
            for chunk in rows.chunks(ROWS_PER_INSERT) {
                let values = rusqlite::params_from_iter(chunk.iter().flatten());
                if chunk.len() == ROWS_PER_INSERT {
                    full.execute(values).unwrap();
                } else {
                    tx.prepare(&statement(chunk.len()))
                        .unwrap()
                        .execute(values)
                        .unwrap();
                }
            }
        }
        tx.commit().unwrap();
        drop(conn);
        best = best.min(t.elapsed().as_secs_f64());
        bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
    (best, bytes)
}

/// Rows per `INSERT` statement of the raw insertion (the rocpd writer's
/// batching: a statement of many rows amortises SQLite's per-statement work).
const ROWS_PER_INSERT: usize = 64;

fn usage(msg: &str) -> ! {
    eprintln!("{msg}\nusage: {COMMAND} -- [--records N] [--runs N] [--only FORMAT] [--json]");
    std::process::exit(2)
}

fn main() {
    let o = options();
    let names = OperationNames::new();
    let run = sample_run(
        1,
        (o.records as f64 / RECORDS_PER_LAUNCH).ceil() as usize,
        BATCH_ROWS,
        &names,
    );
    let records: u64 = run.batches.iter().map(|b| b.len() as u64).sum();
    let ctx = run.context(&names);
    let work = tempfile::tempdir().expect("temp dir");
    use OutputFormat::*;
    let cases: [(&str, &[OutputFormat]); 10] = [
        ("none", &[]),
        ("csv", &[Csv]),
        ("json", &[Json]),
        ("rocpd", &[Rocpd]),
        ("pftrace", &[Pftrace]),
        ("parquet", &[Parquet]),
        // `rocwasm run`'s default outputs, written together (a thread per
        // sink and batch: the slowest sets the pace).
        ("default", &[Csv, Rocpd, Pftrace]),
        // The same outputs as a live run writes them by default: each batch
        // into the spool, the formats at `finish`. Timed without `finish`:
        // the rate at which the run's records are taken while the
        // application runs.
        ("spool", &[Csv, Rocpd, Pftrace]),
        // What the profiled process writes under `rocwasm run`: the record
        // journal (no format; the launcher writes them).
        ("journal", &[]),
        // The rocpd rows inserted raw (see the module docs).
        ("sqlite", &[]),
    ];
    if let Some(only) = &o.only {
        if !cases.iter().any(|(label, _)| label == only) {
            usage(&format!("unknown format `{only}` for --only"));
        }
    }
    let mut rates = Vec::new();
    for (i, (label, format)) in cases.iter().enumerate() {
        if (!format.is_empty() || *label == "journal" || *label == "sqlite")
            && o.only.as_deref().is_some_and(|only| only != *label)
        {
            continue;
        }
        if *label == "sqlite" {
            let (best, bytes) = raw_sqlite(&ctx, &run.batches, work.path(), o.runs);
            rates.push((*label, records as f64 / best, bytes));
            continue;
        }
        if *label == "journal" {
            let mut best = f64::INFINITY;
            let mut bytes = 0;
            for r in 0..o.runs {
                let path = work.path().join(format!("journal-{r}.journal"));
                let t = Instant::now();
                let mut journal = rocwasm_journal::JournalWriter::create(&path).expect("journal");
                for b in &run.batches {
                    journal.batch(b).expect("journal batch");
                }
                drop(journal);
                best = best.min(t.elapsed().as_secs_f64());
                bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
                let _ = std::fs::remove_file(&path);
            }
            rates.push((*label, records as f64 / best, bytes));
            continue;
        }
        let mut best = f64::INFINITY;
        let mut bytes = 0u64;
        for r in 0..o.runs {
            let dir = work.path().join(format!("{label}-{i}-{r}"));
            let opts = OutputOptions {
                dir: dir.clone(),
                name: None,
                formats: format.to_vec(),
                stats: false,
                timing: if *label == "spool" {
                    WriteTiming::AtEnd
                } else {
                    WriteTiming::DuringRun
                },
                parquet_hive_root: None,
            };
            let t = Instant::now();
            let mut outputs = Outputs::new(&opts);
            outputs.begin(&ctx);
            for b in &run.batches {
                outputs.write_batch(b, &ctx);
            }
            let during_run = t.elapsed();
            let summary = outputs.finish(&ctx);
            let timed = if *label == "spool" {
                during_run
            } else {
                t.elapsed()
            };
            best = best.min(timed.as_secs_f64());
            assert!(summary.errors.is_empty(), "{label}: {:?}", summary.errors);
            bytes = summary
                .files
                .iter()
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum();
            let _ = std::fs::remove_dir_all(&dir);
        }
        rates.push((*label, records as f64 / best, bytes));
    }
    if o.json {
        let sizes: serde_json::Map<String, serde_json::Value> = rates
            .iter()
            .filter(|(label, _, _)| *label != "none")
            .map(|(label, _, bytes)| {
                let per_million = *bytes as f64 * 1e6 / records as f64;
                (label.to_string(), per_million.into())
            })
            .collect();
        let rates: serde_json::Map<String, serde_json::Value> = rates
            .iter()
            .map(|(label, rate, _)| (label.to_string(), (*rate).into()))
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "records": records,
                "runs": o.runs,
                "records_per_s": rates,
                "bytes_per_million_records": sizes,
            })
        );
        return;
    }
    println!("{COMMAND}");
    println!(
        "{records} synthetic records in batches of ≤ {BATCH_ROWS} per family, best of {} runs",
        o.runs
    );
    println!("| format | M records/s | bytes written | MiB per million records |");
    println!("|---|---|---|---|");
    for (label, rate, bytes) in rates {
        let label = if label == "none" {
            "none (summary statistics only)"
        } else {
            label
        };
        let per_million = bytes as f64 * 1e6 / records as f64 / f64::from(1 << 20);
        println!(
            "| {label} | {:.2} | {bytes} | {per_million:.1} |",
            rate / 1e6
        );
    }
}
