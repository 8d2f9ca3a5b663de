//! `--stats`: the statistics files as a sink.

use std::path::PathBuf;

use anyhow::Result;
use rocwasm_core::Batch;

use crate::sink::{Sink, SinkContext};
use crate::stats::{StatsAccumulator, StatsReport};

/// Accumulates statistics and writes the `*_stats.csv` files at finish.
pub struct StatsSink {
    dir: PathBuf,
    name: Option<String>,
    acc: StatsAccumulator,
    report: Option<StatsReport>,
}

impl StatsSink {
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self {
            dir: dir.into(),
            name,
            acc: StatsAccumulator::new(),
            report: None,
        }
    }

    /// The report computed by `finish` (None before).
    pub fn report(&self) -> Option<&StatsReport> {
        self.report.as_ref()
    }
}

impl Sink for StatsSink {
    fn name(&self) -> &'static str {
        "stats"
    }

    fn begin(&mut self, _ctx: &SinkContext<'_>) -> Result<()> {
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, _ctx: &SinkContext<'_>) -> Result<()> {
        self.acc.add_batch(batch);
        Ok(())
    }

    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        let report = self.acc.report(ctx.symbols, ctx.names);
        let files = report.write_csv(&self.dir, self.name.as_deref())?;
        self.report = Some(report);
        Ok(files)
    }
}
