//! `--stats`: the statistics files as a sink.
//!
//! At finish the sink writes `[<name>_]<domain>_stats.csv` for every domain
//! it saw records of, and `domain_stats.csv`. It claims each file in the
//! run's registry first, deferring to a stage ([`OutputClaims::claim_or_defer`]):
//! when a stage — typically the stock `kernel-stats` or `api-stats` that
//! `--stats` adds — has already written the same file, that file stands and
//! this sink does not write a second copy. Both compute with `rocwasm-stats`,
//! so nothing is lost; the run's list of files names the stage that wrote it. Stages write in
//! `fini`, which runs before the sinks finish, so the order is always the
//! same. The report (and with it the terminal summary) is computed either
//! way.

use std::path::PathBuf;

use anyhow::{Context, Result};
use rocwasm_core::Batch;

use crate::sink::{Sink, SinkContext};
use crate::stats::{write_stats_file, StatsAccumulator, StatsReport};
use rocwasm_plan::claims::{Claim, OutputClaims, Producer};

/// This sink in claims and messages.
const PRODUCER: Producer = Producer::Sink("statistics");

/// Accumulates statistics and writes the `*_stats.csv` files at finish.
pub struct StatsSink {
    dir: PathBuf,
    name: Option<String>,
    acc: StatsAccumulator,
    report: Option<StatsReport>,
    claims: OutputClaims,
}

impl StatsSink {
    /// Files go to `<dir>/[<name>_]<domain>_stats.csv`.
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self {
            dir: dir.into(),
            name,
            acc: StatsAccumulator::new(),
            report: None,
            claims: OutputClaims::new(),
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

    fn set_claims(&mut self, claims: &OutputClaims) {
        self.claims = claims.clone();
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
        let files = report.files(&self.dir, self.name.as_deref());
        if !files.is_empty() {
            // Before claiming: a claim compares existing directories.
            std::fs::create_dir_all(&self.dir)
                .with_context(|| format!("creating {}", self.dir.display()))?;
        }
        let mut written = Vec::new();
        for (path, rows) in files {
            // A stage's file stands; a refusal is reported by the registry.
            if let Ok(Claim::Granted) = self.claims.claim_or_defer(&path, &PRODUCER) {
                write_stats_file(&path, rows)?;
                written.push(path);
            }
        }
        self.report = Some(report);
        Ok(written)
    }
}
