//! `Outputs` with several sinks: each batch goes to every sink at once (a
//! thread per sink); the files are the same as one sink alone writes, and a
//! sink that fails or panics is reported once and dropped while the others
//! receive every batch.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{bail, Result};
use rocwasm_core::Batch;
use rocwasm_formats::{
    CsvSink, OutputClaims, OutputFormat, OutputOptions, Outputs, PerfettoSink, Producer, Sink,
    SinkContext, WriteTiming,
};

use crate::common::{sample, write_run};

/// Counts the records it is given; fails or panics at batch `breaks_at`.
struct Counting {
    records: Arc<AtomicU64>,
    batches: u64,
    breaks_at: Option<(u64, bool)>,
}

impl Sink for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }
    fn set_claims(&mut self, _: &OutputClaims) {}
    fn begin(&mut self, _: &SinkContext<'_>) -> Result<()> {
        Ok(())
    }
    fn write_batch(&mut self, batch: &Batch, _: &SinkContext<'_>) -> Result<()> {
        self.batches += 1;
        if let Some((at, panics)) = self.breaks_at {
            if self.batches == at {
                if panics {
                    panic!("sink test panic at batch {at}");
                }
                bail!("sink test failure at batch {at}");
            }
        }
        self.records
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        Ok(())
    }
    fn finish(&mut self, _: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        Ok(Vec::new())
    }
}

#[test]
fn several_sinks_write_the_same_files_as_each_alone() {
    let (run, names) = sample(7, 400);
    let ctx = run.context(&names);
    let together = tempfile::tempdir().unwrap();
    let outputs = outputs_with(
        together.path().to_path_buf(),
        vec![OutputFormat::Csv, OutputFormat::Pftrace, OutputFormat::Json],
        true,
        WriteTiming::DuringRun,
        &run,
        &ctx,
    );
    let summary = outputs.finish(&ctx);
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    assert!(run.batches.len() > 3, "the sample has several batches");

    let alone = tempfile::tempdir().unwrap();
    let mut sinks: Vec<Box<dyn Sink>> = vec![
        Box::new(CsvSink::new(alone.path(), None)),
        Box::new(PerfettoSink::new(alone.path(), None)),
    ];
    let files = write_run(&run, &names, &mut sinks);
    assert!(files.len() > 3, "{files:?}");
    for file in files {
        let name = file.file_name().unwrap();
        let theirs = std::fs::read(together.path().join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", name.to_string_lossy()));
        assert!(
            theirs == std::fs::read(&file).unwrap(),
            "{} differs when written beside other sinks",
            name.to_string_lossy()
        );
    }
}

#[test]
fn a_sink_that_fails_or_panics_is_dropped_and_the_others_get_every_batch() {
    let (run, names) = sample(3, 300);
    let ctx = run.context(&names);
    let total: u64 = run.batches.iter().map(|b| b.len() as u64).sum();
    for panics in [false, true] {
        let (good, bad) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let mut outputs = Outputs::from_sinks(vec![
            Box::new(Counting {
                records: bad.clone(),
                batches: 0,
                breaks_at: Some((2, panics)),
            }),
            Box::new(Counting {
                records: good.clone(),
                batches: 0,
                breaks_at: None,
            }),
        ]);
        outputs.begin(&ctx);
        for b in &run.batches {
            outputs.write_batch(b, &ctx);
        }
        let summary = outputs.finish(&ctx);
        assert_eq!(good.load(Ordering::Relaxed), total, "panics: {panics}");
        assert_eq!(
            bad.load(Ordering::Relaxed),
            run.batches[0].len() as u64,
            "the broken sink got nothing after its failure"
        );
        let errors: Vec<String> = summary.errors.iter().map(|e| format!("{e:#}")).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let cause = if panics {
            "panicked: sink test panic at batch 2"
        } else {
            "sink test failure at batch 2"
        };
        assert!(
            errors[0].starts_with("counting output") && errors[0].contains(cause),
            "{errors:?}"
        );
    }
}

/// `Outputs` into `dir` with `formats` (and the stats files when `stats`),
/// begun and given every batch of `run`, not finished.
fn outputs_with(
    dir: PathBuf,
    formats: Vec<OutputFormat>,
    stats: bool,
    timing: WriteTiming,
    run: &rocwasm_formats::synthetic::SampleRun,
    ctx: &SinkContext<'_>,
) -> Outputs {
    let mut outputs = Outputs::new(&OutputOptions {
        dir,
        name: None,
        formats,
        stats,
        timing,
        parquet_hive_root: None,
    });
    outputs.begin(ctx);
    for b in &run.batches {
        outputs.write_batch(b, ctx);
    }
    outputs
}

/// Every file of `dir`, by name.
fn files_of(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Every row of every table of a SQLite file, as text, table by table, with
/// the run's uuid (new at each run: rocpd's table suffix and `guid`) as `UUID`.
fn sqlite_rows(db: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let hex: String = conn
        .query_row(
            "SELECT substr(name, 14) FROM sqlite_master WHERE name LIKE 'rocpd_string_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hex.len(), 32, "the uuid of rocpd_string_{hex}");
    let guid = format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    );
    let mut tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables.retain(|t| !t.starts_with("sqlite_"));
    let mut rows = Vec::new();
    for t in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let n = stmt.column_count();
        let mut q = stmt.query([]).unwrap();
        while let Some(r) = q.next().unwrap() {
            let values: Vec<String> = (0..n)
                .map(|i| match r.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    v => format!("{v:?}"),
                })
                .collect();
            let row = format!("{t}: {}", values.join("|"));
            rows.push(row.replace(&guid, "UUID").replace(&hex, "UUID"));
        }
    }
    rows
}

#[test]
fn outputs_written_at_the_end_from_the_spool_are_those_written_during_the_run() {
    let (run, names) = sample(11, 600);
    let ctx = run.context(&names);
    let total: u64 = run.batches.iter().map(|b| b.len() as u64).sum();
    let write = |timing: WriteTiming| {
        let dir = tempfile::tempdir().unwrap();
        let outputs = outputs_with(
            dir.path().to_path_buf(),
            OutputFormat::ALL.to_vec(),
            true,
            timing,
            &run,
            &ctx,
        );
        let spooled = outputs.spooled_records();
        let summary = outputs.finish(&ctx);
        assert!(summary.errors.is_empty(), "{:?}", summary.errors);
        assert!(summary.notes.is_empty(), "{:?}", summary.notes);
        (dir, spooled, summary)
    };
    let (during, spooled, during_summary) = write(WriteTiming::DuringRun);
    assert_eq!(spooled, 0, "nothing is spooled when writing during the run");
    let (at_end, spooled, at_end_summary) = write(WriteTiming::AtEnd);
    assert_eq!(
        spooled, total,
        "every record waits in the spool until finish"
    );
    assert!(run.batches.len() > 3, "the sample has several batches");

    // Same statistics, same files (the spool itself leaves no file).
    assert_eq!(
        format!("{:?}", during_summary.stats),
        format!("{:?}", at_end_summary.stats)
    );
    let (a, b) = (files_of(during.path()), files_of(at_end.path()));
    let names_of = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names_of(&a), names_of(&b));
    assert!(a.len() >= 10, "every format wrote: {a:?}");
    for (x, y) in a.iter().zip(&b) {
        let name = x.file_name().unwrap().to_string_lossy();
        if name.ends_with(".db") {
            let (rows, theirs) = (sqlite_rows(x), sqlite_rows(y));
            assert!(rows.len() as u64 > total, "{name}: {} rows", rows.len());
            let first_difference = rows.iter().zip(&theirs).find(|(a, b)| a != b);
            assert_eq!(first_difference, None, "{name}");
            assert_eq!(rows.len(), theirs.len(), "{name}");
        } else {
            assert!(
                std::fs::read(x).unwrap() == std::fs::read(y).unwrap(),
                "{name} differs when written from the spool"
            );
        }
    }
}

#[test]
fn spooled_sinks_claim_their_files_when_the_batch_comes_not_at_the_end() {
    let (run, names) = sample(13, 100);
    let ctx = run.context(&names);
    let dir = tempfile::tempdir().unwrap();
    let outputs = outputs_with(
        dir.path().to_path_buf(),
        vec![OutputFormat::Csv, OutputFormat::Parquet],
        false,
        WriteTiming::AtEnd,
        &run,
        &ctx,
    );
    assert!(outputs.spooled_records() > 0);
    // A stage writing under a host file's name before the run ends is
    // refused, as it would be had the batches been written at once.
    let stage = Producer::Stage("squatter".into());
    for name in [
        "kernel_trace.csv",
        "hip_api_trace.csv",
        "kernel_trace.parquet",
    ] {
        let refused = outputs.claims().claim(&dir.path().join(name), &stage);
        assert!(refused.is_err(), "{name} was not claimed by its sink");
    }
    let summary = outputs.finish(&ctx);
    let errors: Vec<String> = summary.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 3, "one report per refused claim: {errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.contains("stage `squatter` may not write it too")),
        "{errors:?}"
    );
    let kernels: usize = run.batches.iter().map(|b| b.kernel_dispatches.len()).sum();
    let csv = std::fs::read_to_string(dir.path().join("kernel_trace.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        kernels + 1,
        "the sink's file is complete"
    );
}
