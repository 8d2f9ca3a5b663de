//! `rocwasm replay PATH [-c CHAIN] [--stats -d -o --output-format]`: drive a
//! chain with a recorded rocprofv3 trace, as if the run were live.
//!
//! The run itself (the chain, the sinks, which kinds they record, the
//! symbols copied from the reader before each batch) is the same pipeline a
//! live run executes (`rocwasm_pipeline::Replay`); this command makes its
//! plan from the chain and flags, and prints what it left.
//!
//! Nothing is skipped silently: what the reader could not map (records of
//! an unknown domain, unreadable fields, columns nobody reads, operation
//! names kept under new numbers) and where a file cut short stops are
//! printed on stderr, one line per reason and file
//! (`rocwasm: hip_api_trace.csv: 17 record(s) of domain HIP_FOO_API not
//! mapped (first at line 2)`), and counted in one line on stdout.
//!
//! Exit status: 2 when PATH does not exist or the chain is invalid, and
//! with `--strict` when a record cannot be mapped or a file is cut short
//! (one line: `FILE:LINE: what`); 1 when the trace cannot be read at all
//! (one line: `FILE:LINE: what is wrong`), a plugin cannot be loaded, a
//! stage with `on_failure = "abort"` fails, or an output cannot be written
//! (a refused claim included).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rocwasm_config::PlanOptions;
use rocwasm_core::{ApiFamily, BufferTracingKind, Domain};
use rocwasm_formats::replay::{ReadReport, ReplayError, ReplayOptions};
use rocwasm_formats::stats_by_rank;
use rocwasm_pipeline::{render_table, ManyReplay, ProcessRecording, Replay, RunReport};
use rocwasm_plan::ProcessInfo;
use rocwasm_plugin_host::EngineConfig;

use crate::cli::ReplayArgs;
use crate::commands::chain::{admit_plan, chain_for};
use crate::failure::{Failure, Result};

/// Rows shown per native `--stats` table.
const STATS_TOP: usize = 20;

/// The stock stage `--stats` adds for API calls.
const API_STATS: &str = "api-stats";

pub fn replay(args: ReplayArgs) -> Result {
    for path in &args.paths {
        if !path.exists() {
            return Err(Failure::usage(format!(
                "{}: no such file or directory",
                path.display()
            )));
        }
    }
    let mut flags = args.flags();
    // `--stats` asked for the host's own statistics (files and tables) too.
    let host_stats = flags.stats;
    // Replay has no --*-trace flags: without a chain, the useful default is
    // the `--stats` chain (kernel, API and copy statistics plugins).
    if args.chain.is_none() {
        flags.stats = true;
    }
    let mut chain = chain_for(args.chain.as_deref(), &flags, None)?;
    if args.chain.is_none() {
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

    let strict = args.strict;
    let refused = refusal(strict);
    let inputs =
        rocwasm_formats::replay::discover(&args.paths).map_err(|e| Failure::Usage(e.into()))?;
    if inputs.len() > 1 || args.summary_by_rank {
        return replay_many(&args, chain, inputs, host_stats);
    }
    let path = &inputs[0].path;
    let mut source =
        rocwasm_formats::replay::open_with(path, &ReplayOptions::default()).map_err(&refused)?;
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
    let summary = plan.output.summary;
    let mut replay = Replay::start(plan, &ProcessInfo::current(), &mut source)?;
    let run_dir = replay.pipeline().dir().to_path_buf();
    // A corrupt trace is one `FILE:LINE: …` line; an `abort` policy stops
    // here too (status 1).
    if let Err(e) = replay.run() {
        return Err(match e.downcast::<ReplayError>() {
            Ok(e) => refused(e),
            Err(e) => Failure::Runtime(e),
        });
    }
    let (records, batches) = (replay.records(), replay.batches());
    let report = replay.finish();
    let read = source.report();
    for line in read.lines() {
        eprintln!("rocwasm: {line}");
    }

    println!(
        "replayed {records} record(s) in {batches} batch(es) from {} ({}) through {} stage(s) in {:.2} s",
        path.display(),
        format_name(format),
        report.plugins.tables.len(),
        started.elapsed().as_secs_f64(),
    );
    print_read_report(read);
    if summary {
        for (stage, tables) in &report.plugins.tables {
            for t in tables {
                println!("{}", render_table(stage, t));
            }
        }
    }
    // One table per domain: the statistics stages print theirs; the host's
    // (the same numbers) only when no stage printed one.
    if host_stats && !stage_tables(summary, &report) {
        println!("host statistics (--stats):");
        print!("{}", report.outputs.stats.render_summary(STATS_TOP));
    }
    let files = output_files(&run_dir, report.outputs.files.clone(), since);
    if !files.is_empty() {
        println!("outputs in {}:", run_dir.display());
        for f in &files {
            println!("  {}", f.strip_prefix(&run_dir).unwrap_or(f).display());
        }
    }
    for note in &report.outputs.notes {
        println!("{note}");
    }
    report_problems(&report)
}

/// Several processes' recordings through one chain
/// ([`rocwasm_pipeline::ManyReplay`]): read in parallel with a progress
/// bar, then the chain's tables, the host statistics over all of them and,
/// with `--summary-by-rank`, per process.
fn replay_many(
    args: &ReplayArgs,
    chain: rocwasm_config::Chain,
    inputs: Vec<rocwasm_formats::replay::Input>,
    host_stats: bool,
) -> Result {
    let started = Instant::now();
    let since = SystemTime::now();
    let strict = args.strict;
    let refused = refusal(strict);
    let mut plan = chain.to_plan(&PlanOptions {
        stats: host_stats,
        default_plugin_cache: EngineConfig::default().cache_dir,
        api_log: false,
        command: Vec::new(),
    });
    // Trace files of several processes would mix them under one process
    // id: none by default, an error when asked for.
    if inputs.len() > 1 && args.output.output_format.is_none() && !plan.output.formats.is_empty() {
        let formats: Vec<String> = plan
            .output
            .formats
            .iter()
            .map(|f| format!("{f:?}").to_lowercase())
            .collect();
        eprintln!(
            "rocwasm: {} processes: no trace files ({}) are written, they would mix processes \
             under one process id; statistics and the plugins' outputs are",
            inputs.len(),
            formats.join(", ")
        );
        plan.output.formats.clear();
    }
    if inputs.len() > 1 && !plan.output.formats.is_empty() {
        return Err(Failure::usage(format!(
            "{} processes' recordings go through one chain, and their trace files would mix \
             processes under one process id: drop --output-format (the statistics and the \
             plugins' outputs are written); to combine rocpd databases use `rocwasm merge`",
            inputs.len()
        )));
    }
    admit_plan(&plan)?;
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
        let mut source =
            rocwasm_formats::replay::open_with(&input.path, &options).map_err(&refused)?;
        source.set_strict(strict);
        total = total.zip(source.estimated_records()).map(|(a, b)| a + b);
        recordings.push(ProcessRecording {
            label: input.label.clone(),
            source,
        });
    }
    let bar = progress_bar(inputs.len(), total);
    let report = ManyReplay::run(
        plan,
        &ProcessInfo::current(),
        names,
        recordings,
        args.summary_by_rank,
        |n| bar.set_position(n),
    );
    bar.finish_and_clear();
    let report = report.map_err(|e| match e.downcast::<ReplayError>() {
        Ok(e) => refused(e),
        Err(e) => Failure::Runtime(e),
    })?;
    let run_dir = report.dir.clone();
    let records: u64 = report.processes.iter().map(|p| p.records).sum();
    println!(
        "replayed {records} record(s) in {} batch(es) from {} process(es) through {} stage(s) in {:.2} s",
        report.batches,
        report.processes.len(),
        report.run.plugins.tables.len(),
        started.elapsed().as_secs_f64(),
    );
    for p in &report.processes {
        for line in p.read.lines() {
            eprintln!("rocwasm: {}: {line}", p.name);
        }
        println!("  {}: {} record(s); {}", p.name, p.records, p.read.counts());
    }
    if summary {
        for (stage, tables) in &report.run.plugins.tables {
            for t in tables {
                println!("{}", render_table(stage, t));
            }
        }
    }
    if host_stats && !stage_tables(summary, &report.run) {
        println!("host statistics (--stats), all processes:");
        print!("{}", report.run.outputs.stats.render_summary(STATS_TOP));
    }
    let mut files = report.run.outputs.files.clone();
    if args.summary_by_rank {
        let ranked: Vec<(&str, &rocwasm_formats::StatsReport)> = report
            .processes
            .iter()
            .filter_map(|p| p.stats.as_ref().map(|s| (p.name.as_str(), s)))
            .collect();
        println!("statistics by rank (--summary-by-rank):");
        print!("{}", stats_by_rank::render(&ranked, STATS_TOP));
        if host_stats {
            match stats_by_rank::write_csv(&run_dir, args.output.output_file.as_deref(), &ranked) {
                Ok(written) => files.extend(written),
                Err(e) => {
                    eprintln!("rocwasm: {e:#}");
                    return Err(Failure::runtime(
                        "the statistics by rank could not be written",
                    ));
                }
            }
        }
    }
    let files = output_files(&run_dir, files, since);
    if !files.is_empty() {
        println!("outputs in {}:", run_dir.display());
        for f in &files {
            println!("  {}", f.strip_prefix(&run_dir).unwrap_or(f).display());
        }
    }
    for note in &report.run.outputs.notes {
        println!("{note}");
    }
    report_problems(&report.run)
}

/// A bar on stderr while several recordings are read (drawn only on a
/// terminal): records so far, of the total when every format tells it.
fn progress_bar(processes: usize, total: Option<u64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    let template = if total.is_some() {
        format!("replay {processes} processes [{{bar:40}}] {{pos}}/{{len}} records ({{per_sec}}, eta {{eta}})")
    } else {
        format!("replay {processes} processes {{spinner}} {{pos}} records ({{per_sec}})")
    };
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// How a recording's error ends the command: status 2 under `--strict`
/// (the recording is refused), else 1 (it could not be read).
fn refusal(strict: bool) -> impl Fn(ReplayError) -> Failure {
    move |e| {
        if strict {
            Failure::Usage(e.into())
        } else {
            Failure::Runtime(e.into())
        }
    }
}

/// Plugin problems and sink errors go to stderr; a plugin failure or a sink
/// error makes the replay fail (status 1) after everything that could be
/// written was written.
fn report_problems(report: &RunReport) -> Result {
    for p in &report.plugins.problems {
        eprintln!("rocwasm: {p}");
    }
    // (Problems outside the chain, e.g. writing the audit line, were
    // printed when they happened.)
    let errors = &report.outputs.errors;
    for e in errors {
        eprintln!("rocwasm: {e:#}");
    }
    match (report.plugins.failed, errors.len()) {
        (0, 0) => Ok(()),
        (p, s) => Err(Failure::runtime(format!(
            "replay finished with {p} plugin failure(s) and {s} output error(s) (see above)"
        ))),
    }
}

/// The reader's counts, after the `replayed …` line: one line (the
/// reasons, per file, went to stderr: each is said once).
fn print_read_report(read: &ReadReport) {
    println!("{}", read.counts());
}

/// True when the summary printed a stage's table.
fn stage_tables(summary: bool, report: &RunReport) -> bool {
    summary && report.plugins.tables.iter().any(|(_, t)| !t.is_empty())
}

fn format_name(f: rocwasm_formats::replay::TraceFormat) -> &'static str {
    match f {
        rocwasm_formats::replay::TraceFormat::Csv => "rocprofv3 CSV",
        rocwasm_formats::replay::TraceFormat::Json => "rocprofv3 JSON",
        rocwasm_formats::replay::TraceFormat::Rocpd => "rocpd",
    }
}

/// The files the sinks wrote, then the files the plugins wrote into the
/// output directory during this replay (modified since it started).
fn output_files(run_dir: &Path, sink_files: Vec<PathBuf>, since: SystemTime) -> Vec<PathBuf> {
    let mut seen: BTreeSet<PathBuf> = sink_files.iter().cloned().collect();
    let mut files = sink_files;
    let mut stack = vec![run_dir.to_path_buf()];
    let mut plugin_files = Vec::new();
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
                plugin_files.push(path);
            }
        }
    }
    plugin_files.sort();
    files.extend(plugin_files);
    files
}
