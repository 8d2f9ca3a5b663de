//! Output path templates expand every key the same way live and in replay.
//!
//! `rocwasm run` hands the directory template to the profiled process, which
//! expands it with its own identity; `rocwasm replay` expands the same
//! template itself. Both use `rocwasm_plan::PathTemplate`, so a batch job's
//! `-d 'out/%job%/%rank%/%env{USER}%'` lands in the same place either way.
//!
//! Needs `cargo xtask build-plugins` and `cargo xtask build-sim`.

use std::path::Path;

use rocwasm_tests::*;

/// The environment of rank 3 of Slurm job 777, run by user `ada`.
const JOB_ENV: &[(&str, &str)] = &[
    ("SLURM_JOB_ID", "777"),
    ("SLURM_PROCID", "3"),
    ("SLURM_NTASKS", "8"),
    ("USER", "ada"),
];
const TEMPLATE: &str = "out/%job%/%rank%of%size%/%env{USER}%";
const EXPANDED: &str = "out/777/3of8/ada";

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn run_expands_job_rank_size_and_env_keys_in_the_profiled_process() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let out = run_sim_app(
        &["--kernel-trace"],
        TEMPLATE,
        "vector_add",
        &["2"],
        tmp.path(),
        JOB_ENV,
    );
    assert_success(&out, "rocwasm run with a job/rank/env template");
    let dir = tmp.path().join(EXPANDED);
    let files = files_in(&dir);
    assert!(
        files.iter().any(|f| f == "kernel_trace.csv"),
        "{}: {files:?}",
        dir.display()
    );
    // No directory is named after an unexpanded key.
    for unexpanded in ["%job%", "%rank%", "%env{USER}%"] {
        assert!(
            !tmp.path().join("out").join(unexpanded).exists(),
            "{unexpanded} left unexpanded"
        );
    }
}

#[test]
fn replay_expands_the_same_template_to_the_same_directory() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let trace = workspace().join("examples/traces/sample");
    let out = rocwasm_with_env(
        &["replay", trace.to_str().unwrap(), "--stats", "-d", TEMPLATE],
        tmp.path(),
        JOB_ENV,
    );
    assert_success(&out, "rocwasm replay with a job/rank/env template");
    let dir = tmp.path().join(EXPANDED);
    let files = files_in(&dir);
    assert!(
        files.iter().any(|f| f.ends_with("kernel_stats.csv")),
        "{}: {files:?}",
        dir.display()
    );
}
