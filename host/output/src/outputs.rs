//! Building the sinks a run asked for, and driving them together.

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Context, Result};
use rocwasm_core::Batch;

use crate::claims::OutputClaims;
use crate::csv::CsvSink;
use crate::json::JsonSink;
use crate::parquet::ParquetSink;
use crate::perfetto::PerfettoSink;
use crate::rocpd::RocpdSink;
use crate::sink::{Sink, SinkContext};
use crate::stats::{StatsAccumulator, StatsReport};
use crate::stats_sink::StatsSink;

/// An output format of `--output-format` (defined once in `rocwasm-plan`).
pub use rocwasm_plan::OutputFormat;

/// What a run writes: `-d`, `-o`, `--output-format`, `--stats`.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// The output directory (`-d`), used as is: callers expand the plan's
    /// `%pid%`-style template first (`RunPlan::run_dir`). Sinks create it
    /// when it is missing.
    pub dir: PathBuf,
    /// Output name: files become `<dir>/<name>_<stem>`.
    pub name: Option<String>,
    /// One sink per entry, in this order (`--output-format`); empty writes
    /// no trace files.
    pub formats: Vec<OutputFormat>,
    /// Write the `*_stats.csv` files.
    pub stats: bool,
}

/// Every sink of a run plus an always-on statistics accumulator for the
/// terminal summary. A failing sink is reported once and dropped; the others
/// keep going (an output problem must not lose the other outputs).
///
/// With two sinks or more, each batch is written by all of them at once,
/// one scoped thread per sink, while the calling thread adds it to the
/// statistics: a batch takes as long as its slowest writer, not the sum of
/// them (rocpd's SQLite inserts alone are most of it). Starting a thread
/// costs tens of microseconds against the milliseconds a sink spends on a
/// batch of thousands of records; a sink that panics is reported and
/// dropped like one that fails.
///
/// `Outputs` also owns the run's [`OutputClaims`]: its sinks claim their
/// files there, the plugin runtime gets [`Outputs::claims`] for the stages,
/// and [`Outputs::finish`] reports every refused claim among the errors.
pub struct Outputs {
    sinks: Vec<Box<dyn Sink>>,
    summary: StatsAccumulator,
    errors: Vec<anyhow::Error>,
    claims: OutputClaims,
}

/// What [`Outputs::finish`] hands back.
pub struct OutputSummary {
    /// Every file the sinks wrote, sink by sink (a file whose claim was
    /// refused, or of a sink that failed, is not listed).
    pub files: Vec<PathBuf>,
    /// Statistics over every batch written, whatever the formats: the
    /// terminal summary's tables.
    pub stats: StatsReport,
    /// Sink failures, each with the sink's name in its context, then every
    /// refused claim of an output file (a sentence naming the file and both
    /// producers).
    pub errors: Vec<anyhow::Error>,
    /// Sentences about who wrote what when a host output left a file to a
    /// stage (`kernel_stats.csv was written by stage `kernel-stats`, …`).
    pub notes: Vec<String>,
}

impl Outputs {
    /// The sinks for `opts`.
    pub fn new(opts: &OutputOptions) -> Self {
        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        for f in &opts.formats {
            let (dir, name) = (opts.dir.clone(), opts.name.clone());
            sinks.push(match f {
                OutputFormat::Csv => Box::new(CsvSink::new(dir, name)),
                OutputFormat::Json => Box::new(JsonSink::new(dir, name)),
                OutputFormat::Rocpd => Box::new(RocpdSink::new(dir, name)),
                OutputFormat::Pftrace => Box::new(PerfettoSink::new(dir, name)),
                OutputFormat::Parquet => Box::new(ParquetSink::new(dir, name)),
            });
        }
        if opts.stats {
            sinks.push(Box::new(StatsSink::new(
                opts.dir.clone(),
                opts.name.clone(),
            )));
        }
        Self::from_sinks(sinks)
    }

    /// Drives caller-built sinks, which from now on claim their files in
    /// this run's registry.
    pub fn from_sinks(mut sinks: Vec<Box<dyn Sink>>) -> Self {
        let claims = OutputClaims::new();
        for s in &mut sinks {
            s.set_claims(&claims);
        }
        Self {
            sinks,
            summary: StatsAccumulator::new(),
            errors: Vec::new(),
            claims,
        }
    }

    /// The run's registry of output files, for every other writer of the
    /// output directory (the plugin runtime: [`OutputClaims::for_stages`]).
    pub fn claims(&self) -> OutputClaims {
        self.claims.clone()
    }

    /// [`Sink::begin`] on every sink; a sink that fails is recorded and dropped.
    pub fn begin(&mut self, ctx: &SinkContext<'_>) {
        self.each(|s| s.begin(ctx));
    }

    /// Adds `batch` to the summary statistics and hands it to every sink
    /// (at once when there are several, see the type's docs); a sink that
    /// fails is recorded and dropped.
    pub fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) {
        if self.sinks.len() < 2 {
            self.summary.add_batch(batch);
            self.each(|s| s.write_batch(batch, ctx));
            return;
        }
        let summary = &mut self.summary;
        // Each sink behind its own (uncontended) lock, so that a sink whose
        // thread cannot start (resources exhausted) is still reachable here
        // and writes on the calling thread instead.
        let slots: Vec<Mutex<&mut Box<dyn Sink>>> = self.sinks.iter_mut().map(Mutex::new).collect();
        let results: Vec<Result<()>> = std::thread::scope(|scope| {
            let running: Vec<_> = slots
                .iter()
                .map(|slot| {
                    let name = lock(slot).name();
                    std::thread::Builder::new()
                        .name(format!("rocwasm-sink-{name}"))
                        .spawn_scoped(scope, || lock(slot).write_batch(batch, ctx))
                        .ok()
                })
                .collect();
            summary.add_batch(batch);
            running
                .into_iter()
                .zip(&slots)
                .map(|(thread, slot)| match thread {
                    Some(thread) => thread.join().unwrap_or_else(|panic| {
                        Err(anyhow::anyhow!("panicked: {}", panic_text(&*panic)))
                    }),
                    None => lock(slot).write_batch(batch, ctx),
                })
                .collect()
        });
        drop(slots);
        self.drop_failed(results);
    }

    /// Finishes every sink (flush, close, write the files that need the whole
    /// run) and collects the files, the summary statistics, every error and
    /// the claims' notes. Call it after the last batch, with
    /// [`RunMetadata::end_ns`](crate::RunMetadata::end_ns) set.
    pub fn finish(mut self, ctx: &SinkContext<'_>) -> OutputSummary {
        let mut files = Vec::new();
        for mut s in std::mem::take(&mut self.sinks) {
            match s
                .finish(ctx)
                .with_context(|| format!("{} output", s.name()))
            {
                Ok(f) => files.extend(f),
                Err(e) => self.errors.push(e),
            }
        }
        let claims = self.claims.take_report();
        self.errors
            .extend(claims.refusals.into_iter().map(anyhow::Error::new));
        OutputSummary {
            files,
            stats: self.summary.report(ctx.symbols, ctx.names),
            errors: self.errors,
            notes: claims.notes,
        }
    }

    fn each(&mut self, mut f: impl FnMut(&mut dyn Sink) -> Result<()>) {
        let results = self.sinks.iter_mut().map(|s| f(s.as_mut())).collect();
        self.drop_failed(results);
    }

    /// Records the error of each sink whose result (in sink order) failed,
    /// and drops those sinks.
    fn drop_failed(&mut self, results: Vec<Result<()>>) {
        let mut results = results.into_iter();
        self.sinks.retain(|s| match results.next() {
            Some(Err(e)) => {
                let name = s.name();
                self.errors.push(e.context(format!("{name} output")));
                false
            }
            _ => true,
        });
    }
}

/// A sink's slot, even after a panic in its writer (the panic is reported
/// from the join; the sink is dropped then).
fn lock<'a, T>(slot: &'a Mutex<T>) -> std::sync::MutexGuard<'a, T> {
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

/// The message of a panic payload (a `&str` or `String`, as `panic!` makes).
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}
