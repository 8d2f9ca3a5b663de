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
//! mapped (first at line 2)`), and counted in the summary on stdout.
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

use rocwasm_config::PlanOptions;
use rocwasm_core::{ApiFamily, BufferTracingKind, Domain};
use rocwasm_pipeline::{render_table, Replay, RunReport};
use rocwasm_plan::ProcessInfo;
use rocwasm_plugin_host::EngineConfig;
use rocwasm_replay::{ReadReport, ReplayError, ReplayOptions};

use crate::cli::ReplayArgs;
use crate::commands::chain::{admit_plan, chain_for};
use crate::failure::{Failure, Result};

/// Rows shown per native `--stats` table.
const STATS_TOP: usize = 20;

/// The stock stage `--stats` adds for API calls.
const API_STATS: &str = "api-stats";

pub fn replay(args: ReplayArgs) -> Result {
    if !args.path.exists() {
        return Err(Failure::usage(format!(
            "{}: no such file or directory",
            args.path.display()
        )));
    }
    let mut flags = args.flags();
    // `--stats` asked for the host's own statistics (files and tables) too.
    let host_stats = flags.stats;
    // Replay has no --*-trace flags: without a chain, the useful default is
    // the `--stats` chain (kernel, API and copy statistics plugins).
    if args.chain.is_none() {
        flags.stats = true;
    }
    let mut chain = chain_for(args.chain.as_deref(), &flags)?;
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
    }
    let started = Instant::now();
    let since = SystemTime::now();

    let strict = args.strict;
    let refused = |e: ReplayError| {
        if strict {
            Failure::Usage(e.into())
        } else {
            Failure::Runtime(e.into())
        }
    };
    let mut source =
        rocwasm_replay::open_with(&args.path, &ReplayOptions::default()).map_err(refused)?;
    source.set_strict(strict);
    tracing::info!(path = %args.path.display(), format = ?source.format, "replaying");
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
        args.path.display(),
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
    if host_stats {
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

/// The reader's counts, after the `replayed …` line: one line when every
/// record was replayed as recorded, else the counts per file and reason.
fn print_read_report(read: &ReadReport) {
    println!("{read}");
}

fn format_name(f: rocwasm_replay::TraceFormat) -> &'static str {
    match f {
        rocwasm_replay::TraceFormat::Csv => "rocprofv3 CSV",
        rocwasm_replay::TraceFormat::Json => "rocprofv3 JSON",
        rocwasm_replay::TraceFormat::Rocpd => "rocpd",
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
