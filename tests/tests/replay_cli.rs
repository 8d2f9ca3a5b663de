//! `rocwasm replay` and `rocwasm demo` as a user meets them: the default
//! chain, `--stats`, exit statuses and the one-line errors of bad input.

use std::path::Path;

use rocwasm_tests::*;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn replay_without_a_chain_runs_the_stats_plugins_and_stats_adds_the_host_tables() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let sample = workspace().join("examples/traces/sample");

    let o = rocwasm(
        &["replay", sample.to_str().unwrap(), "-d", "plain"],
        tmp.path(),
    );
    assert_success(&o, "rocwasm replay (no chain)");
    let text = stdout(&o);
    assert!(text.starts_with("replayed 343 record(s)"), "{text}");
    for title in [
        "[kernel-stats] Kernel dispatch statistics (6 row(s))",
        "[api-stats] HIP API statistics",
        "[memcpy-bandwidth] Memory copies by direction",
    ] {
        assert!(text.contains(title), "missing {title:?} in\n{text}");
    }
    assert!(!text.contains("host statistics (--stats)"), "{text}");
    assert!(tmp.path().join("plain/kernel_stats.csv").is_file());

    let o = rocwasm(
        &[
            "replay",
            sample.to_str().unwrap(),
            "--stats",
            "-d",
            "stats",
            "-o",
            "s",
        ],
        tmp.path(),
    );
    assert_success(&o, "rocwasm replay --stats");
    let text = stdout(&o);
    assert!(text.contains("host statistics (--stats)"), "{text}");
    assert!(text.contains("KERNEL_DISPATCH (6 distinct)"), "{text}");
    // The host's stats file and the plugin's agree with the recorded one.
    let recorded = read_stats(&sample.join("sample_kernel_stats.csv"));
    let dir = tmp.path().join("stats");
    assert_same_stats(
        &read_stats(&dir.join("s_kernel_stats.csv")),
        &recorded,
        "host",
    );
    assert_same_stats(
        &read_stats(&dir.join("kernel_stats.csv")),
        &recorded,
        "plugin",
    );
}

#[test]
fn corrupt_input_is_one_line_naming_file_and_row_with_status_1() {
    let tmp = tempfile::tempdir().unwrap();
    let sample = workspace().join("examples/traces/sample/sample_kernel_trace.csv");
    // Line 5 of the file (the 4th record): its End_Timestamp becomes "12x".
    let mut r = csv::Reader::from_path(&sample).unwrap();
    let header = r.headers().unwrap().clone();
    let end = header.iter().position(|h| h == "End_Timestamp").unwrap();
    let mut w = csv::Writer::from_path(tmp.path().join("bad_kernel_trace.csv")).unwrap();
    w.write_record(&header).unwrap();
    for (i, rec) in r.records().enumerate() {
        let mut cells: Vec<String> = rec.unwrap().iter().map(str::to_string).collect();
        if i == 3 {
            cells[end] = "12x".into();
        }
        w.write_record(&cells).unwrap();
    }
    w.flush().unwrap();

    let o = rocwasm(
        &["replay", "bad_kernel_trace.csv", "--stats", "-d", "out"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: bad_kernel_trace.csv:5: column End_Timestamp: \"12x\" is not a number\n"
    );

    let o = rocwasm(&["replay", "no-such-trace", "--stats"], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: no-such-trace: no such file or directory\n"
    );
}

#[test]
fn demo_profiles_the_sample_live_and_lists_the_outputs() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let o = rocwasm(&["demo", "-d", "demo"], tmp.path());
    assert_success(&o, "rocwasm demo");
    let text = stdout(&o);
    assert!(text.contains("Outputs of the live run are in"), "{text}");
    let dir = tmp.path().join("demo");
    for f in ["kernel_trace.csv", "results.db", "results.pftrace"] {
        assert!(dir.join(f).is_file(), "{f} missing; stdout:\n{text}");
        assert!(text.contains(f), "{f} not listed:\n{text}");
    }
    assert!(!stderr(&o).contains("FALLING BACK"), "{}", stderr(&o));
    let kernels = kernel_durations(&dir.join("kernel_trace.csv"));
    assert_eq!(kernels.len(), 4, "{kernels:?}");
}

#[test]
fn demo_falls_back_loudly_to_the_recorded_sample_when_the_live_run_fails() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    // A tool library that does not exist: the application runs unprofiled.
    let o = std::process::Command::new(rocwasm_bin())
        .args(["demo", "-d", "demo"])
        .current_dir(tmp.path())
        .env("ROCWASM_INTERCEPT_LIB", tmp.path().join("missing.so"))
        .env("ROCWASM_PLUGIN_PATH", workspace().join("target/plugins"))
        .env("ROCWASM_SIM_LIB", workspace().join("target/sim/lib"))
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("FALLING BACK"), "{}", stderr(&o));
    assert!(stderr(&o).contains("NOT from a live run"), "{}", stderr(&o));
    let replayed = Path::new(tmp.path()).join("demo/replay-of-recorded-sample");
    let recorded = read_stats(&workspace().join("examples/traces/sample/sample_kernel_stats.csv"));
    assert_same_stats(
        &read_stats(&replayed.join("kernel_stats.csv")),
        &recorded,
        "fallback",
    );
}
