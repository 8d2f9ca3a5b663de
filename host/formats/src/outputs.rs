//! Building the sinks a run asked for, and driving them together.

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{Context, Result};
use rocwasm_core::Batch;

use crate::sink::{CallArgs, Sink, SinkContext};
use crate::spool::Spool;
use crate::stats::{StatsAccumulator, StatsReport};
use crate::stats_sink::StatsSink;
use rocwasm_plan::claims::{OutputClaims, Producer};

/// An output format of `--output-format`, and when a live run writes the
/// formats (both defined once in `rocwasm-plan`).
pub use rocwasm_plan::{OutputFormat, WriteTiming};

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
    /// When the sinks write: from a spool at [`Outputs::finish`] (what a
    /// live run does unless told otherwise) or in [`Outputs::write_batch`].
    pub timing: WriteTiming,
    /// Parquet files go to this Hive-partitioned dataset root instead of
    /// `dir` (`--parquet-layout hive`; `RunPlan::parquet_hive_root`).
    pub parquet_hive_root: Option<PathBuf>,
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
/// With [`WriteTiming::AtEnd`], [`Outputs::write_batch`] only appends the
/// batch to a spool (see `crate::spool`) and [`Outputs::finish`] hands
/// every spooled batch to the sinks and the statistics before finishing
/// them: the same batches, in the same order, with the run's final symbols
/// and metadata. The sinks still open their files in [`Outputs::begin`], so
/// an unwritable directory is reported when the run starts. A spool that
/// cannot be made or cannot grow (a full disk) is said in a note, its
/// batches are written at once, and the run goes on writing as batches come.
///
/// `Outputs` also owns the run's [`OutputClaims`]: its sinks claim their
/// files there, the plugin runtime gets [`Outputs::claims`] for the stages,
/// and [`Outputs::finish`] reports every refused claim among the errors.
pub struct Outputs {
    sinks: Vec<Box<dyn Sink>>,
    summary: StatsAccumulator,
    errors: Vec<anyhow::Error>,
    notes: Vec<String>,
    claims: OutputClaims,
    spool: SpoolState,
}

/// Where [`Outputs::write_batch`] puts a batch.
enum SpoolState {
    /// Straight to the sinks.
    Off,
    /// To a spool in this directory, made at the first batch.
    Pending(PathBuf),
    Open(Spool),
}

/// What [`Outputs::finish`] hands back.
#[derive(Default)]
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
    /// The files a host output left to the stage that had written them
    /// (`--stats`: `kernel_stats.csv`, by stage `kernel-stats`), with that
    /// stage: to be listed with the files written, not as news.
    pub left_to_stages: Vec<(PathBuf, Producer)>,
    /// Sentences about records an output format could not hold and a
    /// spool that could not be used.
    pub notes: Vec<String>,
}

impl Outputs {
    /// The sinks for `opts`.
    pub fn new(opts: &OutputOptions) -> Self {
        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        let place = crate::table::Place {
            dir: opts.dir.clone(),
            name: opts.name.clone(),
            parquet_hive_root: opts.parquet_hive_root.clone(),
        };
        for f in &opts.formats {
            sinks.push((crate::table::format(*f).sink)(&place));
        }
        if opts.stats {
            sinks.push(Box::new(StatsSink::new(
                opts.dir.clone(),
                opts.name.clone(),
            )));
        }
        let mut outputs = Self::from_sinks(sinks);
        if opts.timing == WriteTiming::AtEnd && !outputs.sinks.is_empty() {
            outputs.spool = SpoolState::Pending(opts.dir.clone());
        }
        outputs
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
            notes: Vec::new(),
            claims,
            spool: SpoolState::Off,
        }
    }

    /// Records waiting in the spool for [`Outputs::finish`] (0 when the
    /// sinks write as batches come).
    pub fn spooled_records(&self) -> u64 {
        match &self.spool {
            SpoolState::Open(s) => s.records(),
            _ => 0,
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

    /// Appends `batch` to the spool, or (writing as batches come) adds it to
    /// the summary statistics and hands it to every sink (at once when there
    /// are several, see the type's docs); a sink that fails is recorded and
    /// dropped.
    pub fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) {
        if let SpoolState::Pending(dir) = &self.spool {
            self.spool = match Spool::create_in(dir) {
                Ok(s) => SpoolState::Open(s),
                Err(e) => {
                    self.notes.push(format!(
                        "the outputs were written during the run: no spool could be made in {}: {e}",
                        dir.display()
                    ));
                    SpoolState::Off
                }
            };
        }
        if let SpoolState::Open(spool) = &mut self.spool {
            let Err(e) = spool.append(batch) else {
                // The files this batch will be written to are claimed now,
                // as they would be if it were written now.
                self.each(|s| s.claim_for(batch));
                return;
            };
            let records = spool.records();
            self.notes.push(format!(
                "the output spool could not grow after {records} records ({e}): they were written then, and every later batch as it came"
            ));
            self.drain_spool(ctx);
        }
        self.write_now(batch, ctx);
    }

    /// Hands the arguments of calls whose records come later to every sink
    /// (see [`Sink::call_args`]).
    pub fn call_args(&mut self, args: &[CallArgs]) {
        for s in &mut self.sinks {
            s.call_args(args);
        }
    }

    /// Hands every spooled batch to the sinks and stops spooling.
    fn drain_spool(&mut self, ctx: &SinkContext<'_>) {
        let SpoolState::Open(spool) = std::mem::replace(&mut self.spool, SpoolState::Off) else {
            return;
        };
        if let Err(e) = spool.drain(|batch| self.write_now(&batch, ctx)) {
            self.errors.push(anyhow::Error::new(e));
        }
    }

    /// Adds `batch` to the summary statistics and hands it to every sink.
    fn write_now(&mut self, batch: &Batch, ctx: &SinkContext<'_>) {
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
    /// the files left to stages. Call it after the last batch, with
    /// [`RunMetadata::end_ns`](crate::RunMetadata::end_ns) set.
    pub fn finish(mut self, ctx: &SinkContext<'_>) -> OutputSummary {
        self.drain_spool(ctx);
        let mut files = Vec::new();
        for mut s in std::mem::take(&mut self.sinks) {
            match s
                .finish(ctx)
                .with_context(|| format!("{} output", s.name()))
            {
                Ok(f) => files.extend(f),
                Err(e) => self.errors.push(e),
            }
            self.notes.extend(s.notes());
        }
        let claims = self.claims.take_report();
        self.errors
            .extend(claims.refusals.into_iter().map(anyhow::Error::new));
        OutputSummary {
            files,
            left_to_stages: claims.left_to_stages,
            stats: self.summary.report(ctx.symbols, ctx.names),
            errors: self.errors,
            notes: self.notes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::OperationNames;
    use crate::synthetic::sample_run;

    /// OpenMP calls have no CSV file, Parquet table or JSON category;
    /// retired correlation ids no CSV file, Parquet table, rocpd table or
    /// Perfetto track: each
    /// format says how many records it left out, and writes the rest.
    #[test]
    fn calls_a_format_has_no_file_for_are_counted_and_said() {
        use rocwasm_core::{ApiCall, Batch, BufferTracingKind, Retirement};
        let names = OperationNames::new();
        let run = sample_run(1, 10, 1 << 20, &names);
        let ctx = run.context(&names);
        let mut batch = Batch::default();
        for (kind, n) in [
            (BufferTracingKind::Ompt, 3),
            (BufferTracingKind::RcclApi, 2),
        ] {
            for i in 0..n {
                batch.api_calls.push(ApiCall {
                    kind: kind.raw(),
                    correlation_id: i + 1,
                    start: 10,
                    end: 20,
                    ..Default::default()
                });
            }
        }
        for i in 0..2 {
            batch.retirements.push(Retirement {
                timestamp: 30 + i,
                correlation_id: i + 1,
            });
        }
        let dir = tempfile::tempdir().unwrap();
        let mut outputs = Outputs::new(&OutputOptions {
            dir: dir.path().to_path_buf(),
            name: None,
            formats: vec![
                OutputFormat::Csv,
                OutputFormat::Parquet,
                OutputFormat::Json,
                OutputFormat::Rocpd,
                OutputFormat::Pftrace,
            ],
            stats: false,
            timing: WriteTiming::DuringRun,
            parquet_hive_root: None,
        });
        outputs.begin(&ctx);
        outputs.write_batch(&batch, &ctx);
        let summary = outputs.finish(&ctx);
        assert!(summary.errors.is_empty(), "{:?}", summary.errors);
        let left_out = [
            ("OMPT", 3, "CSV"),
            ("OMPT", 3, "Parquet"),
            ("OMPT", 3, "JSON"),
            ("CORRELATION_ID_RETIREMENT", 2, "CSV"),
            ("CORRELATION_ID_RETIREMENT", 2, "Parquet"),
            ("CORRELATION_ID_RETIREMENT", 2, "rocpd"),
            ("CORRELATION_ID_RETIREMENT", 2, "Perfetto"),
        ];
        assert_eq!(summary.notes.len(), left_out.len(), "{:?}", summary.notes);
        for (kind, n, format) in left_out {
            let note = format!("{n} {kind} record(s) are not in the {format} output");
            assert!(
                summary.notes.iter().any(|n| n.starts_with(&note)),
                "{note}: {:?}",
                summary.notes
            );
        }
        let rccl = std::fs::read_to_string(dir.path().join("rccl_api_trace.csv")).unwrap();
        assert_eq!(rccl.lines().count(), 3, "{rccl}");
        assert!(dir.path().join("rccl_api_trace.parquet").is_file());
    }

    #[test]
    fn a_spool_on_a_full_disk_is_said_and_every_batch_is_written_at_once() {
        let names = OperationNames::new();
        let run = sample_run(5, 200, 100, &names);
        let ctx = run.context(&names);
        let dir = tempfile::tempdir().unwrap();
        let mut outputs = Outputs::new(&OutputOptions {
            dir: dir.path().to_path_buf(),
            name: None,
            formats: vec![OutputFormat::Csv],
            stats: false,
            timing: WriteTiming::AtEnd,
            parquet_hive_root: None,
        });
        // Every write to /dev/full fails with ENOSPC, as on a full disk.
        let full = std::fs::File::options()
            .read(true)
            .write(true)
            .open("/dev/full")
            .unwrap();
        outputs.spool = SpoolState::Open(Spool::in_file(full));
        outputs.begin(&ctx);
        for b in &run.batches {
            outputs.write_batch(b, &ctx);
        }
        assert_eq!(outputs.spooled_records(), 0);
        let summary = outputs.finish(&ctx);
        assert!(summary.errors.is_empty(), "{:?}", summary.errors);
        assert_eq!(summary.notes.len(), 1, "{:?}", summary.notes);
        assert!(
            summary.notes[0].starts_with("the output spool could not grow after 0 records")
                && summary.notes[0].contains("every later batch as it came"),
            "{}",
            summary.notes[0]
        );
        let kernels: usize = run.batches.iter().map(|b| b.kernel_dispatches.len()).sum();
        let csv = std::fs::read_to_string(dir.path().join("kernel_trace.csv")).unwrap();
        assert_eq!(
            csv.lines().count(),
            kernels + 1,
            "every dispatch and the header"
        );
    }
}
