//! An output directory that already holds an earlier run's files: a
//! warning, or with `strict` a refusal before anything runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rocwasm_config::TraceFlags;
use rocwasm_launch::{
    replay, run, Captured, Install, ReplayRequest, RunRequest, Runtime, TOOL_LIB,
};
use rocwasm_plan::Backend;

use crate::workspace;

const STATS_STAGES: [&str; 3] = ["kernel-stats", "api-stats", "memcpy-bandwidth"];

/// The files of `dir` with their modification times.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, SystemTime> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap())
                .map(|e| (e.path(), e.metadata().unwrap().modified().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

fn replay_request(out: &Path, strict: bool) -> ReplayRequest {
    ReplayRequest {
        paths: vec![workspace().join("examples/traces/sample")],
        flags: TraceFlags {
            output_directory: Some(out.display().to_string()),
            ..TraceFlags::default()
        },
        strict,
        install: Install::default().with_plugin_dir(rocwasm_tests::plugins_dir(&STATS_STAGES)),
        ..ReplayRequest::default()
    }
}

fn run_request(out: &str, strict: bool) -> RunRequest {
    let sim = rocwasm_tests::sim_dir();
    RunRequest {
        program: sim.join("bin/multi_kernel").display().to_string(),
        flags: TraceFlags {
            kernel_trace: true,
            output_directory: Some(out.to_string()),
            ..TraceFlags::default()
        },
        runtime: Runtime::Simulated,
        backend: Some(Backend::Builtin),
        strict,
        install: Install::default()
            .with_tool_library(rocwasm_tests::rocwasm_bin().with_file_name(TOOL_LIB))
            .with_sim_libs(sim.join("lib")),
        ..RunRequest::default()
    }
}

/// The warning about `dir` in `err`: how many there are of it.
fn warnings_about(err: &str, dir: &Path) -> usize {
    err.matches(&format!(
        "rocwasm: warning: {} already holds ",
        dir.display()
    ))
    .count()
}

#[test]
fn a_replay_into_an_earlier_runs_directory_warns_once_and_strict_refuses_it_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");

    // A fresh directory: not a word.
    let mut console = Captured::new();
    let first = replay(&replay_request(&out, false), &mut console)
        .unwrap_or_else(|e| panic!("{e}\n{}", console.err_text()));
    first.verdict().unwrap();
    assert_eq!(
        warnings_about(&console.err_text(), &out),
        0,
        "{}",
        console.err_text()
    );
    let written = first.files.len();
    assert!(written > 3, "{first:?}");

    // Again: one warning, naming the directory, how many and one of them,
    // and what happens.
    let mut console = Captured::new();
    replay(&replay_request(&out, false), &mut console)
        .unwrap_or_else(|e| panic!("{e}\n{}", console.err_text()))
        .verdict()
        .unwrap();
    let err = console.err_text();
    assert_eq!(warnings_about(&err, &out), 1, "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("rocwasm: warning: "))
        .unwrap();
    assert!(
        line.contains(&format!(
            "already holds {written} output file(s) of an earlier run (e.g. "
        )),
        "{line}"
    );
    assert!(
        line.contains("a replay of the directory reads both runs as one"),
        "{line}"
    );
    assert!(line.contains("--strict"), "{line}");

    // --strict: a usage error before anything is written.
    let before = snapshot(&out);
    let mut console = Captured::new();
    let e = replay(&replay_request(&out, true), &mut console).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    let said = e.to_string();
    assert!(
        said.starts_with(&format!(
            "{} already holds {written} output file(s)",
            out.display()
        )),
        "{said}"
    );
    assert!(said.contains("(--strict)"), "{said}");
    assert!(console.out.is_empty(), "{}", console.out_text());
    assert_eq!(snapshot(&out), before, "the directory was written");
}

#[test]
fn a_live_run_into_a_directory_with_an_earlier_process_s_trace_warns_and_strict_starts_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // An earlier process's trace under `-o %pid%`.
    std::fs::write(out.join("4242_kernel_trace.csv"), "\"Kind\"\n").unwrap();
    let before = snapshot(&out);

    let mut console = Captured::new();
    let e = run(&run_request(&out.display().to_string(), true), &mut console).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{} already holds 1 output file(s) of an earlier run (e.g. 4242_kernel_trace.csv): \
             they would stay beside this run's, and a replay of the directory would read both \
             runs as one (--strict); choose another directory (-d) or remove them",
            out.display()
        )
    );
    assert!(
        !console.err_text().contains("back end:"),
        "the application started: {}",
        console.err_text()
    );
    assert_eq!(
        snapshot(&out),
        before,
        "nothing is written, no journal directory"
    );

    let mut console = Captured::new();
    let outcome = run(
        &run_request(&out.display().to_string(), false),
        &mut console,
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", console.err_text()));
    assert!(outcome.status.success(), "{}", console.err_text());
    assert_eq!(
        warnings_about(&console.err_text(), &out),
        1,
        "{}",
        console.err_text()
    );
    assert!(out.join("kernel_trace.csv").is_file());
}

#[test]
fn a_directory_made_per_process_is_not_checked() {
    let tmp = tempfile::tempdir().unwrap();
    // Earlier runs' files beside the per-process directories: not this
    // run's directory.
    std::fs::write(tmp.path().join("kernel_trace.csv"), "\"Kind\"\n").unwrap();
    let template = format!("{}/%pid%", tmp.path().display());
    let mut console = Captured::new();
    let outcome = run(&run_request(&template, true), &mut console)
        .unwrap_or_else(|e| panic!("{e}\n{}", console.err_text()));
    assert!(outcome.status.success(), "{}", console.err_text());
    assert!(
        !console.err_text().contains("warning"),
        "{}",
        console.err_text()
    );
    let dir = outcome.dir.expect("the run's directory");
    assert_eq!(dir, tmp.path().join(outcome.pid.to_string()));
}
