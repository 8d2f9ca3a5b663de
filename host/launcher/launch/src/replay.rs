//! A replay (`rocwasm replay PATH [-c CHAIN] [--stats -d -o
//! --output-format]`): drive a chain with a recorded rocprofv3 trace, as if
//! the run were live.
//!
//! The run itself (the chain, the sinks, which kinds they record, the
//! symbols copied from the reader before each batch) is the same pipeline a
//! live run executes (`rocwasm_pipeline::Replay`); this module makes its
//! plan from the chain and flags, and reports what it left.
//!
//! Nothing is skipped silently: what the reader could not map (records of
//! an unknown domain, unreadable fields, columns nobody reads, operation
//! names kept under new numbers) and where a file cut short stops are
//! printed on stderr, one line per reason and file
//! (`rocwasm: hip_api_trace.csv: 17 record(s) of domain HIP_FOO_API not
//! mapped (first at line 2)`), and counted in one line on stdout.
//!
//! Errors: usage (status 2) when a path does not exist or the chain is
//! invalid, and with [`ReplayRequest::strict`] when the output directory
//! already holds an earlier run's output files (otherwise a warning), a
//! record cannot be mapped or a file is cut short (one line: `FILE:LINE:
//! what`); run time
//! (status 1) when the trace cannot be read at all (one line: `FILE:LINE:
//! what is wrong`), a plugin cannot be loaded, or a stage with `on_failure
//! = "abort"` fails. A replay that ran to its end with a failed plugin or an
//! output that could not be written (a refused claim included) returns its
//! outcome: [`ReplayOutcome::verdict`] is then the run-time error.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use rocwasm_config::{Chain, Fetcher, PlanOptions, TraceFlags};
use rocwasm_core::{ApiFamily, BufferTracingKind, Domain};
use rocwasm_formats::replay::{
    discover, open_with, Input, ReadReport, ReplayError, ReplayOptions, TraceFormat,
};
use rocwasm_formats::stats_by_rank;
use rocwasm_pipeline::{render_table, ManyReplay, ProcessRecording, Replay, RunReport};
use rocwasm_plan::ProcessInfo;
use rocwasm_plugin_host::EngineConfig;

use crate::chain::{admit_plan, chain_for};
use crate::console::Console;
use crate::error::{LaunchError, Result};
use crate::install::Install;

/// Rows shown per native `--stats` table.
const STATS_TOP: usize = 20;

/// The stock stage `--stats` adds for API calls.
const API_STATS: &str = "api-stats";

/// Where a replay without an output directory writes, under the current
/// directory: `rocwasm-replay/<the recording's name>/`.
pub const REPLAY_DIR: &str = "rocwasm-replay";

/// Everything `rocwasm replay` is asked.
#[derive(Debug, Clone, Default)]
pub struct ReplayRequest {
    /// Recorded runs: a rocprofv3 output (a CSV file, a directory of them,
    /// a JSON file or a rocpd database), several of them, or directory
    /// trees of them (an MPI job's per-rank outputs).
    pub paths: Vec<PathBuf>,
    /// The chain file; [`ReplayRequest::flags`] amend it. Without one, the
    /// `--stats` chain (kernel, API and copy statistics plugins) over
    /// everything the recording holds.
    pub chain: Option<PathBuf>,
    /// rocprofv3's options (output directory, file name, formats,
    /// summaries, kernel filters); `stats` asks for the host's own
    /// statistics too. Without an output directory the files go to
    /// `rocwasm-replay/<NAME>/` under the current directory
    /// ([`REPLAY_DIR`]; NAME: the recording's file or directory name), not
    /// to the chain file's `[output] directory`, whose keys (`%pid%`, …)
    /// name a live run's processes.
    pub flags: TraceFlags,
    /// Refuse the recording at the first record that cannot be mapped or
    /// at a file cut short (a usage error), instead of replaying the rest;
    /// and refuse, before anything is written, an output directory that
    /// already holds an earlier run's output files, instead of warning
    /// that they stay beside this replay's.
    pub strict: bool,
    /// The statistics per process too (`--summary-by-rank`).
    pub summary_by_rank: bool,
    /// Where rocwasm's stock plugins are.
    pub install: Install,
    /// Pulls shipped plugins (`oci://…`) the chain names; `None` refuses
    /// them.
    pub fetcher: Option<Fetcher>,
}

/// What a replay that ran to its end left.
pub struct ReplayOutcome {
    /// The output directory.
    pub dir: PathBuf,
    /// Records read (all processes).
    pub records: u64,
    /// Batches delivered to the chain.
    pub batches: u64,
    /// Recordings replayed (one per process).
    pub processes: usize,
    /// The files written, each once: the sinks', then the plugins'
    /// (`report.html` among them), then any other file of the output
    /// directory written during the replay (the audit line, the
    /// statistics by rank).
    pub files: Vec<PathBuf>,
    /// The chain's tables and problems, the outputs' summary (statistics,
    /// errors, notes).
    pub report: RunReport,
}

impl std::fmt::Debug for ReplayOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayOutcome")
            .field("dir", &self.dir)
            .field("records", &self.records)
            .field("batches", &self.batches)
            .field("processes", &self.processes)
            .field("files", &self.files)
            .field("stages", &self.report.plugins.tables.len())
            .field("failed", &self.report.plugins.failed)
            .finish_non_exhaustive()
    }
}

impl ReplayOutcome {
    /// The command's verdict: a run-time error when a plugin failed or an
    /// output could not be written (each was printed on stderr), else
    /// success.
    pub fn verdict(&self) -> Result<()> {
        match (self.report.plugins.failed, self.report.outputs.errors.len()) {
            (0, 0) => Ok(()),
            (p, s) => Err(LaunchError::runtime(format!(
                "replay finished with {p} plugin failure(s) and {s} output error(s) (see above)"
            ))),
        }
    }
}

/// The usage error of a replay given nothing to read.
fn no_recording() -> LaunchError {
    LaunchError::usage(
        "no recording to replay: give a rocprofv3 CSV file or folder, a results.json or a rocpd .db",
    )
}

/// Replays `request`'s recordings through its chain, printing to `console`
/// what `rocwasm replay` prints (the reader's counts, the chain's tables,
/// the files written, problems), and returns what it left.
pub fn replay(request: &ReplayRequest, console: &mut dyn Console) -> Result<ReplayOutcome> {
    if request.paths.is_empty() {
        return Err(no_recording());
    }
    for path in &request.paths {
        if !path.exists() {
            return Err(LaunchError::usage(format!(
                "{}: no such file or directory",
                path.display()
            )));
        }
    }
    if request.flags.api_args {
        return Err(LaunchError::usage(
            "--api-args records a live run's API call arguments; a replay's calls carry none \
             (a batch has no place for them): drop it",
        ));
    }
    let mut flags = request.flags.clone();
    // Without -d: a directory beside the user named after the recording,
    // the same at every replay of it (the chain's `[output] directory`
    // names a live run's processes: `%pid%` here would be this process's).
    if flags.output_directory.is_none() {
        flags.output_directory = Some(default_output_directory(&request.paths));
    }
    // `--stats` asked for the host's own statistics (files and tables) too.
    let host_stats = flags.stats;
    // Replay has no --*-trace flags: without a chain, the useful default is
    // the `--stats` chain (kernel, API and copy statistics plugins).
    if request.chain.is_none() {
        flags.stats = true;
    }
    let options = request.install.load_options(request.fetcher.clone());
    let mut chain = chain_for(request.chain.as_deref(), &flags, None, &options)?;
    if request.chain.is_none() {
        // A recording holds whatever was traced: the API statistics cover
        // every runtime's calls (HSA too), not only a live run's defaults.
        for stage in chain.stages.iter_mut().filter(|s| s.name == API_STATS) {
            stage.domains = BufferTracingKind::ALL
                .iter()
                .copied()
                .filter(|&k| ApiFamily::of(k).is_some() && Domain::from_buffer_kind(k).is_some())
                .collect();
        }
        // And the trace files keep every record it holds, of every kind
        // (memory allocations and scratch too, which no statistics stage
        // reads): the sinks write a file for each kind that has records.
        chain.output.trace = BufferTracingKind::ALL
            .iter()
            .copied()
            .filter(|&k| rocwasm_config::domains::batch_table(k).is_some())
            .collect();
    }
    let started = Instant::now();
    let since = SystemTime::now();

    let strict = request.strict;
    let refused = refusal(strict);
    let inputs = discover(&request.paths).map_err(|e| LaunchError::Usage(e.into()))?;
    if inputs.len() > 1 || request.summary_by_rank {
        return replay_many(request, chain, inputs, host_stats, console);
    }
    let Some(first) = inputs.first() else {
        return Err(no_recording());
    };
    let path = &first.path;
    let mut source = open_with(path, &ReplayOptions::default()).map_err(&refused)?;
    source.set_strict(strict);
    tracing::info!(path = %path.display(), format = ?source.format, "replaying");
    let format = source.format;

    // The same plan a live run of this chain executes, expanded for this
    // process by the same templates.
    let plan = chain.to_plan(&PlanOptions {
        stats: host_stats,
        default_plugin_cache: EngineConfig::default().cache_dir,
        api_log: false,
        command: Vec::new(),
    });
    admit_plan(&plan)?;
    let process = ProcessInfo::current();
    crate::earlier::check(&plan, Some(&process), strict, console)?;
    let summary = plan.output.summary;
    let mut replay = Replay::start(plan, &process, &mut source)?;
    let run_dir = replay.pipeline().dir().to_path_buf();
    // A corrupt trace is one `FILE:LINE: …` line; an `abort` policy stops
    // here too (status 1).
    if let Err(e) = replay.run() {
        return Err(match e.downcast::<ReplayError>() {
            Ok(e) => refused(e),
            Err(e) => LaunchError::Runtime(e),
        });
    }
    let (records, batches) = (replay.records(), replay.batches());
    let report = replay.finish();
    let read = source.report();
    for line in read.lines() {
        errln!(console, "rocwasm: {line}");
    }

    outln!(
        console,
        "replayed {records} record(s) in {batches} batch(es) from {} ({}) through {} stage(s) in {:.2} s",
        path.display(),
        format_name(format),
        report.plugins.tables.len(),
        started.elapsed().as_secs_f64(),
    );
    print_read_report(read, console);
    if summary {
        print_stage_tables(&report, console);
    }
    // One table per domain: the statistics stages print theirs; the host's
    // (the same numbers) only when no stage printed one.
    if host_stats && !stage_tables(summary, &report) {
        outln!(console, "host statistics (--stats):");
        out!(
            console,
            "{}",
            report.outputs.stats.render_summary(STATS_TOP)
        );
    }
    let files = output_files(&run_dir, sink_and_stage_files(&report), since);
    print_files(&run_dir, &files, console);
    for note in &report.outputs.notes {
        outln!(console, "{note}");
    }
    print_problems(&report, console);
    Ok(ReplayOutcome {
        dir: run_dir,
        records,
        batches,
        processes: 1,
        files,
        report,
    })
}

/// Several processes' recordings through one chain
/// ([`rocwasm_pipeline::ManyReplay`]): read in parallel with the console's
/// progress, then the chain's tables, the host statistics over all of them
/// and, with `--summary-by-rank`, per process.
fn replay_many(
    request: &ReplayRequest,
    chain: Chain,
    inputs: Vec<Input>,
    host_stats: bool,
    console: &mut dyn Console,
) -> Result<ReplayOutcome> {
    let started = Instant::now();
    let since = SystemTime::now();
    let strict = request.strict;
    let refused = refusal(strict);
    let mut plan = chain.to_plan(&PlanOptions {
        stats: host_stats,
        default_plugin_cache: EngineConfig::default().cache_dir,
        api_log: false,
        command: Vec::new(),
    });
    // Trace files of several processes would mix them under one process
    // id: none by default, an error when asked for.
    if inputs.len() > 1 && request.flags.output_formats.is_none() && !plan.output.formats.is_empty()
    {
        let formats: Vec<String> = plan
            .output
            .formats
            .iter()
            .map(|f| format!("{f:?}").to_lowercase())
            .collect();
        errln!(
            console,
            "rocwasm: {} processes: no trace files ({}) are written, they would mix processes \
             under one process id; statistics and the plugins' outputs are",
            inputs.len(),
            formats.join(", ")
        );
        plan.output.formats.clear();
    }
    if inputs.len() > 1 && !plan.output.formats.is_empty() {
        return Err(LaunchError::usage(format!(
            "{} processes' recordings go through one chain, and their trace files would mix \
             processes under one process id: drop --output-format (the statistics and the \
             plugins' outputs are written); to combine rocpd databases use `rocwasm merge`",
            inputs.len()
        )));
    }
    admit_plan(&plan)?;
    let process = ProcessInfo::current();
    crate::earlier::check(&plan, Some(&process), strict, console)?;
    let summary = plan.output.summary;
    let names = ManyReplay::names();
    let options = ReplayOptions {
        progress: false,
        names: Some(names.clone()),
        ..ReplayOptions::default()
    };
    let mut recordings = Vec::new();
    let mut total = Some(0u64);
    for input in &inputs {
        let mut source = open_with(&input.path, &options).map_err(&refused)?;
        source.set_strict(strict);
        total = total.zip(source.estimated_records()).map(|(a, b)| a + b);
        recordings.push(ProcessRecording {
            label: input.label.clone(),
            source,
        });
    }
    console.progress_start(inputs.len(), total);
    let report = ManyReplay::run(
        plan,
        &process,
        names,
        recordings,
        request.summary_by_rank,
        |n| console.progress(n),
    );
    console.progress_end();
    let report = report.map_err(|e| match e.downcast::<ReplayError>() {
        Ok(e) => refused(e),
        Err(e) => LaunchError::Runtime(e),
    })?;
    let run_dir = report.dir.clone();
    let records: u64 = report.processes.iter().map(|p| p.records).sum();
    outln!(
        console,
        "replayed {records} record(s) in {} batch(es) from {} process(es) through {} stage(s) in {:.2} s",
        report.batches,
        report.processes.len(),
        report.run.plugins.tables.len(),
        started.elapsed().as_secs_f64(),
    );
    for p in &report.processes {
        for line in p.read.lines() {
            errln!(console, "rocwasm: {}: {line}", p.name);
        }
        outln!(
            console,
            "  {}: {} record(s); {}",
            p.name,
            p.records,
            p.read.counts()
        );
    }
    if summary {
        print_stage_tables(&report.run, console);
    }
    if host_stats && !stage_tables(summary, &report.run) {
        outln!(console, "host statistics (--stats), all processes:");
        out!(
            console,
            "{}",
            report.run.outputs.stats.render_summary(STATS_TOP)
        );
    }
    let mut files = sink_and_stage_files(&report.run);
    if request.summary_by_rank {
        let ranked: Vec<(&str, &rocwasm_formats::StatsReport)> = report
            .processes
            .iter()
            .filter_map(|p| p.stats.as_ref().map(|s| (p.name.as_str(), s)))
            .collect();
        outln!(console, "statistics by rank (--summary-by-rank):");
        out!(console, "{}", stats_by_rank::render(&ranked, STATS_TOP));
        if host_stats {
            match stats_by_rank::write_csv(&run_dir, request.flags.output_file.as_deref(), &ranked)
            {
                Ok(written) => files.extend(written),
                Err(e) => {
                    errln!(console, "rocwasm: {e:#}");
                    return Err(LaunchError::runtime(
                        "the statistics by rank could not be written",
                    ));
                }
            }
        }
    }
    let files = output_files(&run_dir, files, since);
    print_files(&run_dir, &files, console);
    for note in &report.run.outputs.notes {
        outln!(console, "{note}");
    }
    print_problems(&report.run, console);
    Ok(ReplayOutcome {
        dir: run_dir,
        records,
        batches: report.batches,
        processes: report.processes.len(),
        files,
        report: report.run,
    })
}

/// The output directory of a replay without one: [`REPLAY_DIR`]`/<NAME>`,
/// NAME the recording's file name without its extension or its directory's
/// name (`sample`, `4242_results`), several recordings' names joined by
/// `+` (each once); as a template (a `%` in a name is a literal one).
fn default_output_directory(paths: &[PathBuf]) -> String {
    let mut names: Vec<String> = Vec::new();
    for path in paths {
        // `.`, `..` and `out/` have their name in the absolute path.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        let resolved = std::fs::canonicalize(&absolute).unwrap_or(absolute);
        let name = if resolved.is_dir() {
            resolved.file_name()
        } else {
            resolved.file_stem()
        };
        let name = name
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "recording".to_string());
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut joined = names.join("+");
    if joined.len() > 100 {
        joined = format!("{}+{}-more", names[0], names.len() - 1);
    }
    format!("{REPLAY_DIR}/{}", joined.replace('%', "%%"))
}

/// How a recording's error ends the command: a usage error under
/// `strict` (the recording is refused), else a run-time one (it could not
/// be read).
fn refusal(strict: bool) -> impl Fn(ReplayError) -> LaunchError {
    move |e| {
        if strict {
            LaunchError::Usage(e.into())
        } else {
            LaunchError::Runtime(e.into())
        }
    }
}

/// The stages' tables, each as the summary shows it.
fn print_stage_tables(report: &RunReport, console: &mut dyn Console) {
    for (stage, tables) in &report.plugins.tables {
        for t in tables {
            outln!(console, "{}", render_table(stage, t));
        }
    }
}

/// The files written, relative to the output directory.
fn print_files(run_dir: &Path, files: &[PathBuf], console: &mut dyn Console) {
    if !files.is_empty() {
        outln!(console, "outputs in {}:", run_dir.display());
        for f in files {
            outln!(
                console,
                "  {}",
                f.strip_prefix(run_dir).unwrap_or(f).display()
            );
        }
    }
}

/// Plugin problems and sink errors go to stderr (a plugin failure or a
/// sink error makes [`ReplayOutcome::verdict`] an error).
fn print_problems(report: &RunReport, console: &mut dyn Console) {
    for p in &report.plugins.problems {
        errln!(console, "rocwasm: {p}");
    }
    // (Problems outside the chain, e.g. writing the audit line, were
    // printed when they happened.)
    for e in &report.outputs.errors {
        errln!(console, "rocwasm: {e:#}");
    }
}

/// The reader's counts, after the `replayed …` line: one line (the
/// reasons, per file, went to stderr: each is said once).
fn print_read_report(read: &ReadReport, console: &mut dyn Console) {
    outln!(console, "{}", read.counts());
}

/// True when the summary printed a stage's table.
fn stage_tables(summary: bool, report: &RunReport) -> bool {
    summary && report.plugins.tables.iter().any(|(_, t)| !t.is_empty())
}

fn format_name(f: TraceFormat) -> &'static str {
    match f {
        TraceFormat::Csv => "rocprofv3 CSV",
        TraceFormat::Json => "rocprofv3 JSON",
        TraceFormat::Rocpd => "rocpd",
    }
}

/// The files the sinks wrote, then those the stages wrote.
fn sink_and_stage_files(report: &RunReport) -> Vec<PathBuf> {
    let mut files = report.outputs.files.clone();
    files.extend(report.stage_files.iter().map(|(f, _)| f.clone()));
    files
}

/// `known` (the sinks' and the stages' files), then any other file written
/// into the output directory during this replay (modified since it
/// started), each once.
fn output_files(run_dir: &Path, known: Vec<PathBuf>, since: SystemTime) -> Vec<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut files: Vec<PathBuf> = known
        .into_iter()
        .filter(|f| seen.insert(f.clone()))
        .collect();
    let mut stack = vec![run_dir.to_path_buf()];
    let mut others = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.modified().is_ok_and(|m| m >= since) && seen.insert(path.clone()) {
                others.push(path);
            }
        }
    }
    others.sort();
    files.extend(others);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_the_sinks_then_the_plugins_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.txt");
        std::fs::write(&old, "before").unwrap();
        let since = SystemTime::now() + std::time::Duration::from_secs(3600);
        // Nothing modified after `since`: only the sinks' files.
        let sink = dir.path().join("kernel_trace.csv");
        assert_eq!(
            output_files(dir.path(), vec![sink.clone()], since),
            std::slice::from_ref(&sink)
        );
        // Everything modified since the epoch: the sinks' first, each once.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b.txt"), "new").unwrap();
        std::fs::write(&sink, "rows").unwrap();
        let files = output_files(dir.path(), vec![sink.clone()], SystemTime::UNIX_EPOCH);
        assert_eq!(files, [sink, old, dir.path().join("sub/b.txt")]);
    }

    #[test]
    fn a_replay_without_a_directory_writes_beside_the_user_under_the_recordings_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("node01/4242")).unwrap();
        std::fs::write(root.join("node01/4242/4242_kernel_trace.csv"), "").unwrap();
        std::fs::write(root.join("a_results.db"), "").unwrap();
        std::fs::write(root.join("100%.db"), "").unwrap();
        let name = |paths: &[&str]| {
            default_output_directory(&paths.iter().map(|p| root.join(p)).collect::<Vec<_>>())
        };
        assert_eq!(name(&["node01/4242"]), "rocwasm-replay/4242");
        assert_eq!(name(&["node01/4242/"]), "rocwasm-replay/4242");
        assert_eq!(name(&["node01/4242/."]), "rocwasm-replay/4242");
        assert_eq!(
            name(&["node01/4242/4242_kernel_trace.csv"]),
            "rocwasm-replay/4242_kernel_trace"
        );
        assert_eq!(
            name(&["a_results.db", "node01", "a_results.db"]),
            "rocwasm-replay/a_results+node01"
        );
        // A template: the `%` of a name stays one.
        assert_eq!(name(&["100%.db"]), "rocwasm-replay/100%%");
    }

    #[test]
    fn a_missing_path_is_a_usage_error() {
        let request = ReplayRequest {
            paths: vec![PathBuf::from("/nonexistent/trace")],
            ..ReplayRequest::default()
        };
        let e = replay(&request, &mut crate::Captured::new()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "/nonexistent/trace: no such file or directory"
        );
    }
}
