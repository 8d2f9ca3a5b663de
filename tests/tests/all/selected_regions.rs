//! rocprofv3's `--selected-regions` on the simulated runtime: the run starts
//! paused, `roctxProfilerResume(0)` opens collection and
//! `roctxProfilerPause(0)` closes it; what happens outside is not recorded,
//! only counted in the summary.
//!
//! The app is `multi_kernel --regions`: three workers one after the other
//! on the main thread (each: two copies in, `vector_add`, `square`, `scale`,
//! `block_sum`, a copy out and a 2D copy out), the second between resume
//! and pause; it prints `REGION kernels=K copies=C` for that worker.
//!
//! Needs `cargo xtask build-sim`.

use std::path::Path;

use rocwasm_tests::*;

fn multi_kernel() -> String {
    sim_dir().join("bin/multi_kernel").to_str().unwrap().into()
}

/// Data rows of a trace CSV (0 when it was not written).
fn rows(path: &Path) -> usize {
    if !path.exists() {
        return 0;
    }
    csv::Reader::from_path(path).unwrap().records().count()
}

/// The values of column `name` of a trace CSV.
fn column(path: &Path, name: &str) -> Vec<String> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let i = r.headers().unwrap().iter().position(|h| h == name).unwrap();
    r.records().map(|rec| rec.unwrap()[i].to_string()).collect()
}

/// `rocwasm run --sim FLAGS -d OUT -- APP…` in `cwd`; stdout + stderr.
fn run(cwd: &Path, out: &str, flags: &[&str], app: &[&str]) -> String {
    let mut args = vec!["run", "--sim"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-d", out, "--"]);
    args.extend_from_slice(app);
    let o = rocwasm(&args, cwd);
    assert_success(&o, &args.join(" "));
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `N` in the app's `REGION … key=N …` line.
fn region(text: &str, key: &str) -> usize {
    text.lines()
        .find_map(|l| l.strip_prefix("REGION "))
        .and_then(|l| {
            l.split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        })
        .unwrap_or_else(|| panic!("no REGION {key}= in:\n{text}"))
        .parse()
        .unwrap()
}

/// `D` in the summary's `--selected-regions recorded R region(s) …;
/// dropped D event(s) outside them` line, with `R`.
fn regions_line(text: &str) -> (u64, u64) {
    let line = text
        .lines()
        .find(|l| l.contains("--selected-regions recorded"))
        .unwrap_or_else(|| panic!("no --selected-regions line:\n{text}"));
    let number_after = |word: &str| -> u64 {
        line.split(word)
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (number_after("recorded "), number_after("dropped "))
}

#[test]
fn only_dispatches_and_copies_launched_between_resume_and_pause_are_recorded() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = multi_kernel();
    let traced = ["--kernel-trace", "--memory-copy-trace"];

    let mut flags = traced.to_vec();
    flags.push("--selected-regions");
    let text = run(tmp.path(), "regions", &flags, &[&app, "--regions"]);
    let dir = tmp.path().join("regions");
    let (kernels, copies) = (region(&text, "kernels"), region(&text, "copies"));
    assert_eq!((kernels, copies), (4, 4), "{text}");
    assert_eq!(rows(&dir.join("kernel_trace.csv")), kernels, "{text}");
    assert_eq!(rows(&dir.join("memory_copy_trace.csv")), copies, "{text}");
    let mut names: Vec<String> = column(&dir.join("kernel_trace.csv"), "Kernel_Name")
        .into_iter()
        .map(|n| n.split('(').next().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["block_sum", "scale", "square", "vector_add"]);

    // The same run without the option records all three workers; what the
    // option dropped is exactly the difference, and the summary says so.
    let all = run(tmp.path(), "all", &traced, &[&app, "--regions"]);
    let all_dir = tmp.path().join("all");
    let (all_k, all_c) = (
        rows(&all_dir.join("kernel_trace.csv")),
        rows(&all_dir.join("memory_copy_trace.csv")),
    );
    assert_eq!((all_k, all_c), (3 * kernels, 3 * copies), "{all}");
    assert_eq!(
        regions_line(&text),
        (1, (all_k + all_c - kernels - copies) as u64),
        "{text}"
    );
    assert!(!all.contains("--selected-regions"), "{all}");
}

/// The pause and resume calls themselves are recorded (MARKER_CONTROL_API,
/// as rocprofv3 writes them), with the markers of the region between them.
#[test]
fn the_pause_and_resume_calls_are_in_the_marker_trace() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = multi_kernel();
    run(
        tmp.path(),
        "out",
        &["--marker-trace", "--selected-regions"],
        &[&app, "--regions"],
    );
    let path = tmp.path().join("out/marker_api_trace.csv");
    let functions = column(&path, "Function");
    for f in ["roctxProfilerResume", "roctxProfilerPause"] {
        assert_eq!(
            functions.iter().filter(|n| *n == f).count(),
            1,
            "{f}: {functions:?}"
        );
    }
    let domains = column(&path, "Domain");
    assert!(
        domains.iter().any(|d| d == "MARKER_CONTROL_API"),
        "{domains:?}"
    );
    // "start" is marked before the region: not recorded.
    let messages = std::fs::read_to_string(&path).unwrap();
    assert!(!messages.contains("\"start\""), "{messages}");
}

/// An application that never resumes records nothing, and the summary
/// says why; `[collection] selected_regions` in a chain file is the flag.
#[test]
fn without_a_resume_nothing_is_recorded_and_a_chain_file_says_the_same() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = multi_kernel();
    let text = run(
        tmp.path(),
        "never",
        &["--kernel-trace", "--selected-regions"],
        &[&app, "--threads", "2"],
    );
    assert_eq!(
        rows(&tmp.path().join("never/kernel_trace.csv")),
        0,
        "{text}"
    );
    let (regions, dropped) = regions_line(&text);
    assert_eq!(regions, 0);
    assert_eq!(dropped, 8, "2 threads × 4 dispatches: {text}");
    assert!(text.contains("never called roctxProfilerResume"), "{text}");

    let chain = tmp.path().join("chain.toml");
    std::fs::write(
        &chain,
        "version = 1\n[output]\nformats = [\"csv\"]\ntrace = [\"kernel_dispatch\"]\n[collection]\nselected_regions = true\n",
    )
    .unwrap();
    let text = run(
        tmp.path(),
        "chain",
        &["-c", chain.to_str().unwrap()],
        &[&app, "--regions"],
    );
    assert_eq!(
        rows(&tmp.path().join("chain/kernel_trace.csv")),
        4,
        "{text}"
    );
}

/// With a collection period, or on a replay, the option is refused: one
/// error line, status 2.
#[test]
fn selected_regions_are_refused_where_they_cannot_mean_anything() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = multi_kernel();
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "--selected-regions",
            "-P",
            "0:1:0",
            "--",
            &app,
        ],
        tmp.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: bad --selected-regions `true`: it cannot be combined with --collection-period"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let sample = workspace().join("examples/traces/sample");
    let out = rocwasm(
        &["replay", sample.to_str().unwrap(), "--selected-regions"],
        tmp.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
