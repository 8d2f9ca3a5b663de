//! A run's output files: named as asked (`-o` names the plugins' files
//! too), each written once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rocwasm_config::TraceFlags;
use rocwasm_launch::{
    replay, run, Captured, Install, ReplayRequest, RunRequest, Runtime, TOOL_LIB,
};
use rocwasm_plan::Backend;

use crate::{assert_written, workspace};

/// The stages `--stats` adds.
const STATS_STAGES: [&str; 3] = ["kernel-stats", "api-stats", "memcpy-bandwidth"];

/// The names of the files in `dir` (not below it).
fn names_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// rocwasm's own files of a run directory, which keep their names.
fn rocwasm_own(name: &str) -> bool {
    name.starts_with("rocwasm-")
}

/// `rocwasm replay examples/traces/sample` with `flags`, no chain file
/// (the `--stats` chain), into `out`.
fn replay_sample(flags: TraceFlags) -> (rocwasm_launch::ReplayOutcome, Captured) {
    let request = ReplayRequest {
        paths: vec![workspace().join("examples/traces/sample")],
        flags,
        install: Install::default().with_plugin_dir(rocwasm_tests::plugins_dir(&STATS_STAGES)),
        ..ReplayRequest::default()
    };
    let mut console = Captured::new();
    let outcome = replay(&request, &mut console)
        .unwrap_or_else(|e| panic!("replay failed: {e}\n{}", console.err_text()));
    outcome
        .verdict()
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", console.out_text(), console.err_text()));
    (outcome, console)
}

/// `rocwasm run --sim` of `multi_kernel` with `flags`, built-in back end.
fn run_sample(flags: TraceFlags) -> (rocwasm_launch::RunOutcome, Captured) {
    rocwasm_tests::plugins_dir(&STATS_STAGES);
    let sim = rocwasm_tests::sim_dir();
    let tool = rocwasm_tests::rocwasm_bin().with_file_name(TOOL_LIB);
    let request = RunRequest {
        program: sim.join("bin/multi_kernel").display().to_string(),
        flags,
        runtime: Runtime::Simulated,
        backend: Some(Backend::Builtin),
        install: Install::default()
            .with_tool_library(tool)
            .with_sim_libs(sim.join("lib"))
            .with_plugin_dir(workspace().join("target/plugins")),
        ..RunRequest::default()
    };
    let mut console = Captured::new();
    let outcome = run(&request, &mut console)
        .unwrap_or_else(|e| panic!("run failed: {e}\n{}", console.err_text()));
    assert!(
        outcome.status.success(),
        "{}\n{}\n{}",
        outcome.ended(),
        console.out_text(),
        console.err_text()
    );
    (outcome, console)
}

/// Every file of `dir` but rocwasm's own is `myrun_…`, the statistics
/// stages' files among them, and none has its plain name: `-o` named the
/// plugins' files too, and the host's statistics sink left theirs to them.
fn assert_all_named_myrun(dir: &Path, said: &str) {
    let names = names_in(dir);
    let plain: Vec<&String> = names
        .iter()
        .filter(|n| !rocwasm_own(n) && !n.starts_with("myrun_"))
        .collect();
    assert!(
        plain.is_empty(),
        "files without the -o prefix: {plain:?}\n{said}"
    );
    for stage_file in [
        "myrun_kernel_stats.csv",
        "myrun_hip_api_stats.csv",
        "myrun_memcpy_bandwidth_by_direction.csv",
    ] {
        assert!(
            names.contains(stage_file),
            "no {stage_file} in {names:?}\n{said}"
        );
    }
    assert_written(&names.iter().map(|n| dir.join(n)).collect::<Vec<PathBuf>>());
}

#[test]
fn an_output_name_names_the_plugins_files_in_a_replay_and_each_is_written_once() {
    let out = tempfile::tempdir().unwrap();
    let (outcome, console) = replay_sample(TraceFlags {
        output_directory: Some(out.path().display().to_string()),
        output_file: Some("myrun".into()),
        stats: true,
        ..TraceFlags::default()
    });
    let said = format!("{}\n{}", console.out_text(), console.err_text());
    assert_all_named_myrun(out.path(), &said);
    // The host's statistics sink saw the stage's file and wrote no copy.
    let left: Vec<(String, String)> = outcome
        .report
        .outputs
        .left_to_stages
        .iter()
        .map(|(f, by)| {
            (
                f.file_name().unwrap().to_string_lossy().into_owned(),
                by.to_string(),
            )
        })
        .collect();
    assert!(
        left.contains(&(
            "myrun_kernel_stats.csv".into(),
            "stage `kernel-stats`".into()
        )),
        "{left:?}\n{said}"
    );
    assert!(outcome.report.outputs.errors.is_empty(), "{said}");
}

#[test]
fn an_output_name_names_the_plugins_files_in_a_live_run_and_each_is_written_once() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    // `--stats` alone: statistics and traces of HIP, markers, kernels and
    // copies.
    let (outcome, console) = run_sample(TraceFlags {
        output_directory: Some(dir.display().to_string()),
        output_file: Some("myrun".into()),
        stats: true,
        ..TraceFlags::default()
    });
    let said = format!("{}\n{}", console.out_text(), console.err_text());
    assert_eq!(outcome.dir.as_deref(), Some(dir.as_path()), "{said}");
    assert_all_named_myrun(&dir, &said);
    assert!(!said.contains("output error"), "{said}");
    assert!(!said.contains("may not write it too"), "{said}");
}

/// Every file below `dir`, by its path, but rocwasm's own bookkeeping (the
/// summary, the audit line).
fn files_below(dir: &Path) -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap()) {
            let kind = e.file_type().unwrap();
            if kind.is_dir() {
                stack.push(e.path());
            } else if !rocwasm_own(&e.file_name().to_string_lossy()) {
                found.insert(e.path());
            }
        }
    }
    found
}

#[test]
fn a_live_run_lists_every_file_it_wrote_once_the_plugins_with_their_stage() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("chained");
    rocwasm_tests::plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]);
    let sim = rocwasm_tests::sim_dir();
    let request = RunRequest {
        program: sim.join("bin/multi_kernel").display().to_string(),
        chain: Some(workspace().join("examples/chains/default.toml")),
        flags: TraceFlags {
            output_directory: Some(dir.display().to_string()),
            ..TraceFlags::default()
        },
        runtime: Runtime::Simulated,
        backend: Some(Backend::Builtin),
        install: Install::default()
            .with_tool_library(rocwasm_tests::rocwasm_bin().with_file_name(TOOL_LIB))
            .with_sim_libs(sim.join("lib"))
            .with_plugin_dir(workspace().join("target/plugins")),
        ..RunRequest::default()
    };
    let mut console = Captured::new();
    let outcome = run(&request, &mut console)
        .unwrap_or_else(|e| panic!("run failed: {e}\n{}", console.err_text()));
    let said = format!("{}\n{}", console.out_text(), console.err_text());
    assert!(outcome.status.success(), "{said}");

    // The list, as printed: each file once, the plugins' with their stage.
    let printed = console.out_text();
    let wrote: Vec<&str> = printed
        .lines()
        .filter_map(|l| l.strip_prefix("rocwasm: wrote "))
        .collect();
    let listed: Vec<PathBuf> = wrote
        .iter()
        .map(|l| PathBuf::from(l.split(" (stage `").next().unwrap()))
        .collect();
    let unique: BTreeSet<PathBuf> = listed.iter().cloned().collect();
    assert_eq!(unique.len(), listed.len(), "a file listed twice:\n{said}");
    for (file, stage) in [
        ("report.html", "report"),
        ("kernel_stats.csv", "kernel-stats"),
        (
            "bandwidth/memcpy_bandwidth_by_direction.csv",
            "memcpy-bandwidth",
        ),
    ] {
        let line = format!("{} (stage `{stage}`)", dir.join(file).display());
        assert!(wrote.contains(&line.as_str()), "not listed: {line}\n{said}");
    }
    // Everything on disk is listed, and nothing else.
    assert_eq!(unique, files_below(&dir), "{said}");
    // The outcome says the same.
    let files = outcome.files();
    assert_eq!(files, listed, "{said}");
    assert_written(&files);
}
