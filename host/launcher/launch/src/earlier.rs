//! An output directory that already holds an earlier run's files.
//!
//! A fixed `-d out` used twice leaves the first run's files beside the
//! second's: a file of the same name is replaced, the others stay (the
//! first run's `hip_api_trace.csv` beside the second's kernels, two
//! processes' `<pid>_kernel_trace.csv` under `-o %pid%`), and a later
//! `rocwasm replay out` reads them all as one run. Before anything runs,
//! [`check`] looks at the run's output directory (and the stages'
//! subdirectories of it) for files a run writes: one warning names the
//! directory, how many there are and one of them; with `--strict` the run
//! is refused (status 2).
//!
//! The directory is the one the run will write, as far as it is known
//! before the start: a replay's is known exactly; a live run's is known
//! unless its template names the application's process (`%pid%`), which
//! makes it a new directory per process, not checked.

use std::path::{Path, PathBuf};

use rocwasm_plan::{OutputGrant, ProcessInfo, RunPlan};
use rocwasm_policy::audit::AUDIT_FILE;

use crate::console::Console;
use crate::error::{LaunchError, Result};

/// What an earlier run left in an output directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Earlier {
    /// The output directory.
    pub dir: PathBuf,
    /// How many of its files (and its stages' subdirectories') a run
    /// writes.
    pub count: usize,
    /// One of them, relative to `dir` (the first in name order).
    pub example: PathBuf,
}

/// True for a file name a run's sinks, stages or rocwasm itself write:
/// trace and statistics CSVs (and any plugin's CSV), rocpd databases,
/// `results.json`, Perfetto and Parquet traces, HTML pages (the report),
/// the summary, the audit line, the API call log.
pub(crate) fn is_output_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let ext = Path::new(&lower)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    matches!(ext, "csv" | "db" | "rpd" | "pftrace" | "parquet" | "html")
        || lower == "results.json"
        || lower.ends_with("_results.json")
        || name == RunPlan::SUMMARY_FILE
        || name == AUDIT_FILE
        || name == RunPlan::API_LOG_FILE
}

/// The output files already in `dir` and in its subdirectories `subdirs`
/// (the stages' grants), if any. Only files: a journal directory of a run
/// going on beside is not one.
pub(crate) fn earlier_outputs(dir: &Path, subdirs: &[&str]) -> Option<Earlier> {
    let mut found: Vec<PathBuf> = Vec::new();
    for sub in std::iter::once("").chain(subdirs.iter().copied()) {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_file()) && is_output_file(&name) {
                found.push(Path::new(sub).join(name));
            }
        }
    }
    found.sort();
    let example = found.first()?.clone();
    Some(Earlier {
        dir: dir.to_path_buf(),
        count: found.len(),
        example,
    })
}

/// The run's output directory as far as it is known before the start:
/// for `process` (a replay: the replaying process), or, without one (a
/// live run: the application is not started yet), unless the template
/// names the application's pid.
fn known_dir(plan: &RunPlan, process: Option<&ProcessInfo>) -> Option<PathBuf> {
    match process {
        Some(p) => Some(plan.run_dir(p)),
        None if plan.output.directory.names_pid() => None,
        // Everything else expands alike in the launcher and in the
        // application it starts (host, environment; `%ppid%`: this process).
        None => Some(plan.run_dir(&ProcessInfo::of_pid(0))),
    }
}

/// Warns about (or, `strict`, refuses) a run whose output directory holds
/// an earlier run's files; see the module docs. `process`: see
/// [`known_dir`].
pub(crate) fn check(
    plan: &RunPlan,
    process: Option<&ProcessInfo>,
    strict: bool,
    console: &mut dyn Console,
) -> Result<()> {
    if plan.writes_nothing() {
        return Ok(());
    }
    let Some(dir) = known_dir(plan, process) else {
        return Ok(());
    };
    let subdirs: Vec<&str> = plan
        .stages
        .iter()
        .filter_map(|s| match &s.output {
            OutputGrant::Subdirectory(sub) => Some(sub.as_str()),
            _ => None,
        })
        .collect();
    let Some(earlier) = earlier_outputs(&dir, &subdirs) else {
        return Ok(());
    };
    let holds = format!(
        "{} already holds {} output file(s) of an earlier run (e.g. {})",
        earlier.dir.display(),
        earlier.count,
        earlier.example.display()
    );
    if strict {
        return Err(LaunchError::usage(format!(
            "{holds}: they would stay beside this run's, and a replay of the directory would \
             read both runs as one (--strict); choose another directory (-d) or remove them"
        )));
    }
    errln!(
        console,
        "rocwasm: warning: {holds}: a file of the same name is replaced, the others stay \
         beside this run's, and a replay of the directory reads both runs as one \
         (--strict refuses such a directory)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_are_told_from_others() {
        for name in [
            "kernel_trace.csv",
            "4242_kernel_trace.csv",
            "myrun_kernel_stats.csv",
            "results.db",
            "4242_results.db",
            "results.json",
            "run_results.json",
            "results.pftrace",
            "kernel_trace.parquet",
            "report.html",
            "rocwasm-summary.txt",
            "rocwasm-audit.jsonl",
            "api_calls.txt",
        ] {
            assert!(is_output_file(name), "{name}");
        }
        for name in ["package.json", "notes.txt", "app", "Makefile", "a.csv.bak"] {
            assert!(!is_output_file(name), "{name}");
        }
    }

    #[test]
    fn files_of_the_directory_and_the_stages_subdirectories_count() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(earlier_outputs(&d.join("missing"), &[]), None);
        std::fs::write(d.join("notes.txt"), "").unwrap();
        std::fs::create_dir_all(d.join(".rocwasm-journal-7")).unwrap();
        std::fs::write(d.join(".rocwasm-journal-7/7.journal"), "").unwrap();
        assert_eq!(earlier_outputs(d, &["bw"]), None, "nothing a run writes");
        std::fs::write(d.join("2_kernel_trace.csv"), "").unwrap();
        std::fs::write(d.join("1_kernel_trace.csv"), "").unwrap();
        std::fs::create_dir_all(d.join("bw")).unwrap();
        std::fs::write(d.join("bw/by_agents.csv"), "").unwrap();
        let found = earlier_outputs(d, &["bw"]).unwrap();
        assert_eq!(found.count, 3);
        assert_eq!(found.example, Path::new("1_kernel_trace.csv"));
        assert_eq!(earlier_outputs(d, &[]).unwrap().count, 2);
    }
}
