//! `rocwasm replay` and `rocwasm demo` as a user meets them: the default
//! chain, `--stats`, exit statuses and the one-line errors of bad input.

use std::collections::BTreeMap;
use std::path::Path;

use rocwasm_tests::*;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn replay_without_a_chain_runs_the_stats_plugins_and_stats_prints_each_table_once() {
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
    // One table per domain: the stages', not the host's copy of them.
    for title in [
        "[kernel-stats] Kernel dispatch statistics (6 row(s))",
        "[api-stats] HIP API statistics",
        "[memcpy-bandwidth] Memory copies by direction",
    ] {
        assert_eq!(text.matches(title).count(), 1, "{title:?} in\n{text}");
    }
    // Every table drawn is a stage's: as many tops as `[stage]` titles.
    assert_eq!(
        text.matches('┌').count(),
        text.matches(" row(s))\n").count(),
        "{text}"
    );
    assert!(!text.contains("host statistics (--stats)"), "{text}");
    assert!(!text.contains("KERNEL_DISPATCH ("), "{text}");
    assert!(!text.contains("did not write it too"), "{text}");
    // The recording's statistics files, not read (recomputed): said once,
    // on stderr; stdout keeps the counts line.
    let err = stderr(&o);
    let note = "sample_kernel_stats.csv: 6 row(s) of statistics (recomputed from the traces by --stats) not read";
    assert_eq!(err.matches(note).count(), 1, "{err}");
    assert!(!text.contains("row(s) of statistics"), "{text}");
    assert!(
        text.contains("read 343 record(s) from 13 file(s): 343 replayed, 0 not mapped\n"),
        "{text}"
    );
    // `-o s` names the plugin's file too: one s_kernel_stats.csv (the
    // kernel-stats stage's; the host's statistics sink wrote no copy), and
    // it agrees with the recorded one.
    let recorded = read_stats(&sample.join("sample_kernel_stats.csv"));
    let dir = tmp.path().join("stats");
    assert_same_stats(
        &read_stats(&dir.join("s_kernel_stats.csv")),
        &recorded,
        "plugin",
    );
    assert!(!dir.join("kernel_stats.csv").exists(), "{text}");
    assert_eq!(text.matches("  s_kernel_stats.csv\n").count(), 1, "{text}");
}

/// Without -d a replay writes into ./rocwasm-replay/<the recording's
/// name>/, the same at every replay, and says so; `replay --help` too.
#[test]
fn a_replay_without_an_output_directory_writes_beside_the_user_under_the_recordings_name() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let sample = workspace().join("examples/traces/sample");
    let o = rocwasm(&["replay", sample.to_str().unwrap()], tmp.path());
    assert_success(&o, "rocwasm replay (no -d)");
    let text = stdout(&o);
    let dir = tmp.path().join("rocwasm-replay/sample");
    assert!(
        text.contains(&format!("outputs in {}:\n", dir.display())),
        "{text}"
    );
    assert!(dir.join("kernel_trace.csv").is_file(), "{text}");
    assert!(dir.join("kernel_stats.csv").is_file(), "{text}");
    // Nothing else beside the user.
    let made: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(made, ["rocwasm-replay"]);
    // A database: named after the file.
    let o = rocwasm(
        &[
            "replay",
            sample.join("sample_results.db").to_str().unwrap(),
            "--stats",
        ],
        tmp.path(),
    );
    assert_success(&o, "rocwasm replay DB (no -d)");
    let db_dir = tmp.path().join("rocwasm-replay/sample_results");
    assert!(db_dir.join("kernel_stats.csv").is_file(), "{}", stdout(&o));

    let o = rocwasm(&["replay", "--help"], tmp.path());
    assert_success(&o, "rocwasm replay --help");
    assert!(
        stdout(&o).contains("Without -d the outputs go to ./rocwasm-replay/NAME/"),
        "{}",
        stdout(&o)
    );
}

/// A fixed `-d` used again: `replay` and `run` warn that the earlier run's
/// files stay beside the new ones; `--strict` refuses the directory with
/// one line and status 2, before anything runs.
#[test]
fn an_earlier_runs_directory_is_warned_about_and_strict_refuses_it() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let app = sim_dir().join("bin/multi_kernel");
    let tmp = tempfile::tempdir().unwrap();
    let sample = workspace().join("examples/traces/sample");
    let out = tmp.path().join("out");
    let o = rocwasm(
        &["replay", sample.to_str().unwrap(), "-d", "out"],
        tmp.path(),
    );
    assert_success(&o, "rocwasm replay -d out");
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));

    let o = rocwasm(
        &["replay", sample.to_str().unwrap(), "-d", "out"],
        tmp.path(),
    );
    assert_success(&o, "rocwasm replay -d out, again");
    let warning = format!("rocwasm: warning: {} already holds ", out.display());
    assert_eq!(stderr(&o).matches(&warning).count(), 1, "{}", stderr(&o));

    let o = rocwasm(
        &["replay", sample.to_str().unwrap(), "--strict", "-d", "out"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("error: {} already holds ", out.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(stdout(&o), "");

    let o = rocwasm(
        &[
            "run",
            "--strict",
            "--sim",
            "--kernel-trace",
            "-d",
            "out",
            "--",
            app.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("error: {} already holds ", out.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!stdout(&o).contains("DEVICES"), "the application ran");

    let help = stdout(&rocwasm(&["run", "--help"], tmp.path()));
    assert!(help.contains("--strict"), "{help}");
}

/// Logs on a pipe carry no ANSI colour codes (stderr is not a terminal
/// here), and NO_COLOR changes nothing there either.
#[test]
fn logs_on_a_pipe_are_not_coloured() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let sample = workspace().join("examples/traces/sample");
    for env in [&[][..], &[("NO_COLOR", "1")][..]] {
        let o = rocwasm_with_env(
            &["-v", "replay", sample.to_str().unwrap(), "-d", "out"],
            tmp.path(),
            env,
        );
        assert_success(&o, "rocwasm -v replay");
        let err = stderr(&o);
        assert!(err.contains("INFO"), "an info line is logged: {err}");
        assert!(!err.contains('\x1b'), "{err:?}");
    }
}

#[test]
fn a_bad_field_is_reported_and_strict_refuses_it_naming_file_and_row() {
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

    // The row is skipped, and said so on stderr and in the summary.
    let o = rocwasm(
        &["replay", "bad_kernel_trace.csv", "--stats", "-d", "out"],
        tmp.path(),
    );
    assert_success(&o, "rocwasm replay of a file with a bad field");
    assert_eq!(
        stderr(&o),
        "rocwasm: bad_kernel_trace.csv: 1 record(s) not mapped: field End_Timestamp could not be read (first at line 5: column End_Timestamp: \"12x\" is not a number)\n"
    );
    assert!(stdout(&o).contains(", 1 not mapped"), "{}", stdout(&o));

    // --strict refuses it: one line naming the file and row, status 2 (in
    // a directory of its own: --strict refuses `out`, where the replay
    // above wrote, before reading anything).
    let o = rocwasm(
        &["replay", "bad_kernel_trace.csv", "--strict", "-d", "strict"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: bad_kernel_trace.csv:5: column End_Timestamp: \"12x\" is not a number (--strict)\n"
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

/// The header rocprofv3 (ROCm 7.0) writes for the API trace files.
const API_HEADER: &str = "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"";

/// `hip_api_trace.csv` rows as ROCm 7 writes them: `_EXT` domains, the
/// ABI-versioned `hipGetDevicePropertiesR0600`.
const HIP_ROWS: &[(&str, &str, u64, u64)] = &[
    ("HIP_COMPILER_API_EXT", "__hipRegisterFatBinary", 1000, 1040),
    ("HIP_COMPILER_API_EXT", "__hipRegisterFunction", 1050, 1060),
    (
        "HIP_RUNTIME_API_EXT",
        "hipGetDevicePropertiesR0600",
        2000,
        2900,
    ),
    ("HIP_RUNTIME_API_EXT", "hipMalloc", 3000, 3075),
    ("HIP_RUNTIME_API_EXT", "hipMalloc", 3100, 3130),
    ("HIP_RUNTIME_API_EXT", "hipMemcpy", 3200, 4200),
    ("HIP_RUNTIME_API_EXT", "hipMemcpy", 4250, 4260),
    ("HIP_RUNTIME_API_EXT", "hipLaunchKernel", 4300, 4321),
    ("HIP_RUNTIME_API_EXT", "hipDeviceSynchronize", 4400, 5400),
    ("HIP_RUNTIME_API_EXT", "hipFree", 5500, 5560),
];

/// `hsa_api_trace.csv` rows: the core and AMD extension tables.
const HSA_ROWS: &[(&str, &str, u64, u64)] = &[
    ("HSA_CORE_API", "hsa_init", 100, 900),
    ("HSA_CORE_API", "hsa_agent_get_info", 910, 915),
    ("HSA_CORE_API", "hsa_agent_get_info", 916, 925),
    ("HSA_AMD_EXT_API", "hsa_amd_memory_pool_get_info", 920, 930),
    ("HSA_CORE_API", "hsa_queue_create", 940, 990),
    ("HSA_AMD_EXT_API", "hsa_amd_memory_async_copy", 1000, 1010),
];

fn api_file(rows: &[(&str, &str, u64, u64)]) -> String {
    let mut s = format!("{API_HEADER}\n");
    for (i, (domain, function, start, end)) in rows.iter().enumerate() {
        s += &format!(
            "\"{domain}\",\"{function}\",4242,4243,{},{start},{end}\n",
            i + 1
        );
    }
    s
}

/// Durations by function as the statistics should name them: computed
/// from the literal, without the reader (an ABI-versioned operation such as
/// `hipGetDevicePropertiesR0600` keeps its recorded name).
fn durations(rows: &[(&str, &str, u64, u64)]) -> BTreeMap<String, Vec<u64>> {
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (_, function, start, end) in rows {
        out.entry(function.to_string())
            .or_default()
            .push(end - start);
    }
    out
}

#[test]
fn rocm7_api_traces_replay_with_exact_statistics() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let rec = tmp.path().join("rocm7");
    std::fs::create_dir(&rec).unwrap();
    std::fs::write(rec.join("hip_api_trace.csv"), api_file(HIP_ROWS)).unwrap();
    std::fs::write(rec.join("hsa_api_trace.csv"), api_file(HSA_ROWS)).unwrap();

    let o = rocwasm(&["replay", "rocm7", "--stats", "-d", "out"], tmp.path());
    assert_success(&o, "rocwasm replay of a ROCm 7 recording");
    let text = stdout(&o);
    let n = HIP_ROWS.len() + HSA_ROWS.len();
    assert!(
        text.starts_with(&format!("replayed {n} record(s)")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "read {n} record(s) from 2 file(s): {n} replayed, 0 not mapped"
        )),
        "{text}"
    );
    assert!(text.contains("[api-stats] HIP API statistics"), "{text}");
    assert!(text.contains("[api-stats] HSA API statistics"), "{text}");
    assert_eq!(stderr(&o), "", "nothing to report");
    let out = tmp.path().join("out");
    assert_same_stats(
        &read_stats(&out.join("hip_api_stats.csv")),
        &stats_of(&durations(HIP_ROWS)),
        "HIP",
    );
    assert_same_stats(
        &read_stats(&out.join("hsa_api_stats.csv")),
        &stats_of(&durations(HSA_ROWS)),
        "HSA",
    );

    // The same recording with strict reading: nothing to refuse.
    let o = rocwasm(&["replay", "rocm7", "--strict", "-d", "strict"], tmp.path());
    assert_success(&o, "rocwasm replay --strict of a ROCm 7 recording");
}

#[test]
fn an_unknown_domain_is_reported_and_strict_exits_2() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = HIP_ROWS.to_vec();
    rows.insert(0, ("HIP_FOO_API", "hipMalloc", 10, 20));
    rows.push(("HIP_FOO_API", "hipFree", 30, 40));
    std::fs::write(tmp.path().join("hip_api_trace.csv"), api_file(&rows)).unwrap();

    let o = rocwasm(&["replay", "hip_api_trace.csv", "-d", "out"], tmp.path());
    assert_success(&o, "rocwasm replay with an unknown domain");
    assert_eq!(
        stderr(&o),
        "rocwasm: hip_api_trace.csv: 2 record(s) of domain HIP_FOO_API not mapped (first at line 2)\n"
    );
    let text = stdout(&o);
    let n = rows.len();
    assert!(
        text.contains(&format!(
            "read {n} record(s) from 1 file(s): {} replayed, 2 not mapped",
            n - 2
        )),
        "{text}"
    );
    assert_same_stats(
        &read_stats(&tmp.path().join("out/hip_api_stats.csv")),
        &stats_of(&durations(HIP_ROWS)),
        "HIP without the unknown domain",
    );

    let o = rocwasm(
        &["replay", "hip_api_trace.csv", "--strict", "-d", "strict"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: hip_api_trace.csv:2: a record of domain HIP_FOO_API, which names no kind this build knows (--strict)\n"
    );
}

#[test]
fn a_truncated_csv_is_read_up_to_the_cut_with_one_warning() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let full = api_file(HIP_ROWS);
    // A run killed mid-write: the last row stops inside its timestamps.
    let cut = &full[..full.len() - 7];
    std::fs::write(tmp.path().join("hip_api_trace.csv"), cut).unwrap();
    let last_line = HIP_ROWS.len() + 1;

    let o = rocwasm(&["replay", "hip_api_trace.csv", "-d", "out"], tmp.path());
    assert_success(&o, "rocwasm replay of a truncated file");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("rocwasm: hip_api_trace.csv:{last_line}: ")),
        "{err}"
    );
    assert!(
        err.trim_end()
            .ends_with(&format!("read up to line {}", last_line - 1)),
        "{err}"
    );
    let before = &HIP_ROWS[..HIP_ROWS.len() - 1];
    assert_same_stats(
        &read_stats(&tmp.path().join("out/hip_api_stats.csv")),
        &stats_of(&durations(before)),
        "the records before the cut",
    );
    assert!(stdout(&o).contains("1 file(s) cut short"), "{}", stdout(&o));

    let o = rocwasm(
        &["replay", "hip_api_trace.csv", "--strict", "-d", "strict"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(&format!("error: hip_api_trace.csv:{last_line}: ")),
        "{}",
        stderr(&o)
    );
}
