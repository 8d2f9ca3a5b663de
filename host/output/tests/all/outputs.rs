//! `Outputs` with several sinks: each batch goes to every sink at once (a
//! thread per sink); the files are the same as one sink alone writes, and a
//! sink that fails or panics is reported once and dropped while the others
//! receive every batch.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{bail, Result};
use rocwasm_core::Batch;
use rocwasm_output::{
    CsvSink, OutputClaims, OutputFormat, OutputOptions, Outputs, PerfettoSink, Sink, SinkContext,
};

use crate::common::{context, sample, write_run};

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
    let ctx = context(&run, &names);
    let together = tempfile::tempdir().unwrap();
    let mut outputs = Outputs::new(&OutputOptions {
        dir: together.path().to_path_buf(),
        name: None,
        formats: vec![OutputFormat::Csv, OutputFormat::Pftrace, OutputFormat::Json],
        stats: true,
    });
    outputs.begin(&ctx);
    for b in &run.batches {
        outputs.write_batch(b, &ctx);
    }
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
    let ctx = context(&run, &names);
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
