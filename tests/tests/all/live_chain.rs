//! The chain runs **inside** the profiled application: `rocwasm run --sim -c
//! CHAIN -- multi_kernel` on the simulated runtime, then the plugins'
//! results are checked against the run's own trace files.
//!
//! - the default chain's kernel-stats, api-stats and memcpy-bandwidth
//!   results equal statistics computed here from `kernel_trace.csv`,
//!   `hip_api_trace.csv` and `results.json` of the same run, and `run`
//!   prints their tables;
//! - with `correlation-tagger` in the chain, every kernel dispatch in
//!   `results.json` carries the tagger's value for the roctx range the
//!   launch happened in;
//! - a plugin that traps changes neither the application's exit status nor
//!   its output, and the other plugins' results stay complete;
//! - every file of the output directory has one producer: `--stats` without
//!   `-o` writes each statistics file once, in one number format, and a
//!   plugin may not overwrite a file a host sink writes.
//!
//! Needs `cargo xtask build-plugins` and `cargo xtask build-sim`; fails
//! (never skips) with the command to run when they are missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use rocwasm_core::ops::copy;
use rocwasm_tests::*;

const THREADS: &str = "4";

/// `rocwasm run --sim -c CHAIN -d out --output-format csv,json -- multi_kernel
/// --threads 4` in `cwd`; returns the output and the run directory.
fn run_sample(chain: &Path, cwd: &Path) -> (Output, PathBuf) {
    run_sample_on(chain, cwd, "builtin")
}

/// [`run_sample`] with `--backend backend`.
fn run_sample_on(chain: &Path, cwd: &Path, backend: &str) -> (Output, PathBuf) {
    let sample = sim_dir().join("bin/multi_kernel");
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "--backend",
            backend,
            "-c",
            chain.to_str().unwrap(),
            "-d",
            "out",
            "--output-format",
            "csv,json",
            "--",
            sample.to_str().unwrap(),
            "--threads",
            THREADS,
        ],
        cwd,
    );
    (out, cwd.join("out"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `COUNTS kernels=N …` of the sample's stdout.
fn counts(stdout: &str) -> BTreeMap<String, u64> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("COUNTS "))
        .unwrap_or_else(|| panic!("the sample prints COUNTS:\n{stdout}"));
    line.split_whitespace()
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect()
}

/// The lines the sample itself prints (not rocwasm's summary).
fn sample_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| {
            ["DEVICES ", "COUNTS ", "RESULT "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect()
}

/// Durations per `name_col` value of a rocprofv3 trace CSV.
fn durations_by(path: &Path, name_col: &str) -> BTreeMap<String, Vec<u64>> {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let header = r.headers().unwrap().clone();
    let col = |n: &str| {
        header
            .iter()
            .position(|h| h == n)
            .unwrap_or_else(|| panic!("{}: no column {n}", path.display()))
    };
    let (name, start, end) = (col(name_col), col("Start_Timestamp"), col("End_Timestamp"));
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        let s: u64 = rec[start].parse().unwrap();
        let e: u64 = rec[end].parse().unwrap();
        out.entry(rec[name].to_string()).or_default().push(e - s);
    }
    out
}

/// The process object of `results.json`.
fn results_json(dir: &Path) -> serde_json::Value {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    v["rocprofiler-sdk-tool"][0].clone()
}

fn records<'a>(process: &'a serde_json::Value, category: &str) -> &'a Vec<serde_json::Value> {
    process["buffer_records"][category]
        .as_array()
        .unwrap_or_else(|| panic!("results.json has no buffer_records.{category}"))
}

/// A plugin's CSV table as rows of (header → cell).
fn table(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let header = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn write_chain(dir: &Path, toml: &str) -> PathBuf {
    let path = dir.join("chain.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

#[test]
fn the_default_chain_runs_in_the_process_and_agrees_with_the_runs_traces() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = workspace().join("examples/chains/default.toml");
    let (out, dir) = run_sample(&chain, tmp.path());
    assert_success(&out, "rocwasm run -c default.toml");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    let counts = counts(&stdout);

    // The plugins' tables, printed by `run` from the in-process summary.
    for head in [
        "[kernel-stats] ",
        "[api-stats] HIP API statistics",
        "[memcpy-bandwidth] Memory copies by direction",
    ] {
        assert!(stdout.contains(head), "no {head:?} table in:\n{stdout}");
    }
    assert!(
        !stdout.contains("plugin `") && !stderr.contains("plugin `"),
        "no plugin failed:\n{stdout}\n{stderr}"
    );

    // The report stage's page (its content: tests/tests/all/report.rs):
    // it names the program and the simulated runtime, and its 4 µs kernels
    // are visible in a run of tens of milliseconds.
    assert!(
        dir.join("report.html").is_file(),
        "the default chain wrote no report.html"
    );
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        super::report::meta_row(&page, "Runtime").starts_with("simulated AMD runtime"),
        "{}",
        super::report::meta_row(&page, "Runtime")
    );
    // The program and its arguments, from the run's command line
    // (`run.describe-process`), and the back end.
    let sample = sim_dir().join("bin/multi_kernel");
    assert_eq!(
        super::report::meta_row(&page, "Program"),
        sample.to_str().unwrap()
    );
    assert_eq!(
        super::report::meta_row(&page, "Arguments"),
        format!("--threads {THREADS}")
    );
    let back_end = super::report::meta_row(&page, "Back end");
    assert!(back_end.starts_with("builtin (rocwasm"), "{back_end}");
    let widths = super::report::slice_widths(&page);
    assert!(
        !widths.is_empty() && widths.iter().all(|w| *w >= super::report::VISIBLE_PX),
        "timeline slices too thin to see: {widths:?}"
    );

    // kernel-stats == the statistics of kernel_trace.csv.
    let kernels = kernel_durations(&dir.join("kernel_trace.csv"));
    let dispatched: usize = kernels.values().map(Vec::len).sum();
    assert_eq!(
        dispatched as u64, counts["kernels"],
        "every dispatch traced"
    );
    assert_eq!(kernels.len(), 4, "four kernels: {:?}", kernels.keys());
    assert_same_stats(
        &read_stats(&dir.join("kernel_stats.csv")),
        &stats_of(&kernels),
        "kernel-stats in the process vs kernel_trace.csv",
    );

    // api-stats == the statistics of hip_api_trace.csv.
    let hip = durations_by(&dir.join("hip_api_trace.csv"), "Function");
    assert!(hip.contains_key("hipLaunchKernel"), "{:?}", hip.keys());
    assert_eq!(
        hip["hipLaunchKernel"].len() as u64,
        counts["kernels"],
        "one hipLaunchKernel per <<<>>>"
    );
    assert_same_stats(
        &read_stats(&dir.join("hip_api_stats.csv")),
        &stats_of(&hip),
        "api-stats in the process vs hip_api_trace.csv",
    );

    // memcpy-bandwidth (host↔device only, by the chain's operation filter)
    // == the copies of results.json, per direction.
    let process = results_json(&dir);
    let mut want: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    for c in records(&process, "memory_copy") {
        // The SDK's copy directions, host→device and device→host only.
        let dir = match u32::try_from(c["operation"].as_u64().unwrap()).unwrap() {
            op @ (copy::HOST_TO_DEVICE | copy::DEVICE_TO_HOST) => copy::short_name(op).unwrap(),
            _ => continue,
        };
        let e = want.entry(dir).or_default();
        e.0 += 1;
        e.1 += c["bytes"].as_u64().unwrap();
        e.2 += c["end_timestamp"].as_u64().unwrap() - c["start_timestamp"].as_u64().unwrap();
    }
    let copies: u64 = want.values().map(|w| w.0).sum();
    assert_eq!(copies, counts["copies"], "every copy traced");
    let got = table(&dir.join("bandwidth/memcpy_bandwidth_by_direction.csv"));
    assert_eq!(got.len(), want.len(), "{got:?}");
    for row in &got {
        let (n, bytes, total) = want[row["Direction"].as_str()];
        assert_eq!(row["Copies"], n.to_string(), "{row:?}");
        assert_eq!(row["Bytes"], bytes.to_string(), "{row:?}");
        assert_eq!(row["TotalDurationNs"], total.to_string(), "{row:?}");
        let gbps: f64 = row["BandwidthGBps"].parse().unwrap();
        assert!((gbps - bytes as f64 / total as f64).abs() < 1e-6, "{row:?}");
    }
}

const TAGGED: &str = r#"
version = 1

[output]
formats = ["json"]
trace = ["kernel_dispatch"]

[[stage]]
name = "tagger"
plugin = "correlation-tagger"
output = true
# Every range has its own pinned value, so the expected tag of a dispatch
# is known whatever order the threads pushed their ranges in.
config = { default = "7", ranges = { kernels = "4242", "worker 0" = "5000", "worker 1" = "5001", "worker 2" = "5002", "worker 3" = "5003" } }

[[stage]]
name = "kernel-stats"
plugin = "kernel-stats"
domains = ["kernel_dispatch"]
output = true

[[stage]]
name = "report"
plugin = "report"
domains = ["kernel_dispatch"]
output = true
"#;

#[test]
fn dispatches_carry_the_correlation_taggers_values_end_to_end() {
    tagged_dispatches_on("builtin");
}

/// The same chain on rocprofiler-sdk (rocwasm's): the tagger's ranges come
/// from the SDK's marker callbacks, its answers go to the SDK's requests,
/// and the dispatch records the SDK delivers carry them into the outputs.
#[test]
fn the_sdk_back_end_carries_the_taggers_answers_in_its_records() {
    tagged_dispatches_on("rocprofiler-sdk");
}

fn tagged_dispatches_on(backend: &str) {
    plugins_dir(&["correlation-tagger", "kernel-stats", "report"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = write_chain(tmp.path(), TAGGED);
    let (out, dir) = run_sample_on(&chain, tmp.path(), backend);
    assert_success(&out, "rocwasm run with correlation-tagger");
    // The report page names the back end that measured the run
    // (`run.describe-process`).
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let back_end = super::report::meta_row(&page, "Back end");
    assert!(back_end.starts_with(&format!("{backend} (")), "{back_end}");
    let stdout = text(&out.stdout);
    let counts = counts(&stdout);

    // multi_kernel launches its kernels inside `roctxRangePushA("kernels")`
    // (nested in "worker N"): the innermost range names them.
    let process = results_json(&dir);
    let dispatches = records(&process, "kernel_dispatch");
    assert_eq!(dispatches.len() as u64, counts["kernels"]);
    let tags: Vec<u64> = dispatches
        .iter()
        .map(|d| d["correlation_id"]["external"].as_u64().unwrap())
        .collect();
    assert!(
        tags.iter().all(|&t| t == 4242),
        "every dispatch carries the tag of range `kernels`: {tags:?}"
    );

    // The tagger's own account: every request came from inside `kernels`.
    // (It is asked when a launching thread reserves a queue slot, before
    // the packet exists, so a barrier packet reserved inside the range is
    // asked about too: at least one request per dispatch.)
    let report = table(&dir.join("correlation_tags.csv"));
    for row in &report {
        let requests: u64 = row["Requests"].parse().unwrap();
        if row["Range"] == "kernels" {
            assert_eq!(row["Value"], "4242");
            assert!(requests >= counts["kernels"], "{row:?}");
        } else {
            assert_eq!(requests, 0, "no launch outside `kernels`: {row:?}");
        }
    }
    assert!(report.iter().any(|r| r["Range"] == "kernels"), "{report:?}");
    assert!(
        stdout.contains("[tagger] External correlation tags"),
        "{stdout}"
    );
}

const HOSTILE: &str = r#"
version = 1

[output]
formats = ["csv"]
trace = ["kernel_dispatch", "hip"]

[[stage]]
name = "trap"
plugin = "trap"
domains = ["kernel_dispatch", "hip"]
# Trap on its second batch: it has already seen records by then.
config = { at = "deliver-batch", after = "2", how = "unreachable" }

[[stage]]
name = "kernel-stats"
plugin = "kernel-stats"
domains = ["kernel_dispatch"]
output = true

[[stage]]
name = "api-stats"
plugin = "api-stats"
domains = ["hip"]
output = true
"#;

#[test]
fn a_trapping_plugin_changes_nothing_for_the_application_or_the_other_plugins() {
    trapping_plugin_on("builtin");
}

/// The same containment when rocprofiler-sdk measures (rocwasm's library as
/// the SDK, the chain in rocwasm's SDK tool).
#[test]
fn a_trapping_plugin_is_contained_under_the_sdk_back_end() {
    trapping_plugin_on("rocprofiler-sdk");
}

fn trapping_plugin_on(backend: &str) {
    plugins_dir(&["trap", "kernel-stats", "api-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    // Small batches, so that the trap fires mid-run.
    let chain = write_chain(
        tmp.path(),
        &HOSTILE.replace(
            "[output]",
            "[settings.buffer]\nsize = \"64KiB\"\nwatermark = \"8KiB\"\n\n[output]",
        ),
    );
    let (hostile, dir) = run_sample_on(&chain, tmp.path(), backend);

    // The same application without any tool.
    let sim = sim_dir();
    let plain = std::process::Command::new(sim.join("bin/multi_kernel"))
        .args(["--threads", THREADS])
        .env("LD_LIBRARY_PATH", sim.join("lib"))
        .env_remove("LD_PRELOAD")
        .env_remove("HSA_TOOLS_LIB")
        .output()
        .unwrap();
    assert!(plain.status.success(), "the sample alone: {plain:?}");
    assert_eq!(
        hostile.status.code(),
        plain.status.code(),
        "exit status unchanged"
    );
    let stdout = text(&hostile.stdout);
    let plain_stdout = text(&plain.stdout);
    assert_eq!(
        sample_lines(&stdout),
        sample_lines(&plain_stdout),
        "the application's output unchanged"
    );

    // The failure is reported, in the summary and on stderr.
    let stderr = text(&hostile.stderr);
    assert!(
        stdout.contains("rocwasm: plugin `trap`") && stderr.contains("rocwasm: plugin `trap`"),
        "the trap is reported:\n{stdout}\n{stderr}"
    );

    // The others saw every record.
    let counts = counts(&stdout);
    let kernels = kernel_durations(&dir.join("kernel_trace.csv"));
    let dispatched: usize = kernels.values().map(Vec::len).sum();
    assert_eq!(dispatched as u64, counts["kernels"]);
    assert_same_stats(
        &read_stats(&dir.join("kernel_stats.csv")),
        &stats_of(&kernels),
        "kernel-stats after a trapping stage",
    );
    assert_same_stats(
        &read_stats(&dir.join("hip_api_stats.csv")),
        &stats_of(&durations_by(&dir.join("hip_api_trace.csv"), "Function")),
        "api-stats after a trapping stage",
    );
}

#[test]
fn the_demo_shows_the_plugins_tables_from_the_live_run() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]);
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let out = rocwasm(&["demo", "-d", "demo"], tmp.path());
    assert_success(&out, "rocwasm demo");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("FALLING BACK"), "{stderr}");
    for head in [
        "[kernel-stats] Kernel dispatch statistics",
        "[api-stats] HIP API statistics",
        "[memcpy-bandwidth] Memory copies by direction",
        "4 plugin stage(s) ran in the process",
        "computed inside the profiled application",
        "Outputs of the live run are in",
    ] {
        assert!(stdout.contains(head), "no {head:?} in:\n{stdout}");
    }
    // The tables are the live run's: kernel-stats counted the sample's kernels.
    let dir = tmp.path().join("demo");
    let kernels: u64 = read_stats(&dir.join("kernel_stats.csv"))
        .values()
        .map(|s| s.calls)
        .sum();
    assert_eq!(kernels, counts(&stdout)["kernels"]);
}

/// `[output] summary = false` keeps the stages' tables off the terminal
/// (they stay in the summary file) but still says what was written; a
/// chain's `file_prefix` names the run's files, expanded in the process.
#[test]
fn a_runs_output_settings_come_from_the_chain() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = write_chain(
        tmp.path(),
        r#"
version = 1
[output]
trace = ["kernel"]
summary = false
file_prefix = "p%pid%"

[[stage]]
name = "kernel-stats"
plugin = "kernel-stats"
"#,
    );
    let (out, dir) = run_sample(&chain, tmp.path());
    assert_success(&out, "rocwasm run with summary = false");
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains("[kernel-stats]"),
        "no table printed:\n{stdout}"
    );
    let summary = std::fs::read_to_string(dir.join("rocwasm-summary.txt")).unwrap();
    assert!(
        summary.contains("[kernel-stats]"),
        "the table is in the file"
    );
    let trace = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with("_kernel_trace.csv"))
        .unwrap_or_else(|| panic!("no prefixed kernel trace in {}", dir.display()));
    let pid = trace
        .strip_prefix('p')
        .and_then(|r| r.strip_suffix("_kernel_trace.csv"))
        .unwrap();
    assert!(
        pid.parse::<u32>().is_ok(),
        "{trace}: prefix p%pid% expanded"
    );
    assert!(
        stdout.contains(&format!("rocwasm: wrote {}", dir.join(&trace).display())),
        "{stdout}"
    );
}

/// `rocwasm run` tells a ROCm ≥ 6.2 rocprofiler-register that a tool is
/// present, so the runtime's HIP dispatch tables reach the tool: on the
/// simulated runtime imitating it (`ROCWASM_SIM_HIP_TABLES=1`), both tables
/// are wrapped and the HIP trace is the same as through `LD_PRELOAD`.
#[test]
fn run_hands_rocm6_dispatch_tables_to_the_tool() {
    let sample = sim_dir().join("bin/multi_kernel");
    let trace = |tables: &str| {
        let tmp = tempfile::tempdir().unwrap();
        let out = rocwasm_with_env(
            &[
                "run",
                "--sim",
                "--hip-trace",
                "-d",
                "out",
                "--",
                sample.to_str().unwrap(),
                "--threads",
                THREADS,
            ],
            tmp.path(),
            &[("ROCWASM_SIM_HIP_TABLES", tables), ("ROCWASM_DEBUG", "1")],
        );
        assert_success(&out, "rocwasm run --hip-trace");
        let mut functions: Vec<String> =
            csv::Reader::from_path(tmp.path().join("out/hip_api_trace.csv"))
                .unwrap()
                .deserialize::<BTreeMap<String, String>>()
                .map(|row| row.unwrap()["Function"].clone())
                .collect();
        functions.sort();
        (text(&out.stderr), functions)
    };
    let (stderr, through_tables) = trace("1");
    for wrapped in [
        "HIP table `hip_compiler`: 9 slots, 9 traced",
        "HIP table `hip`: 452 slots, 370 traced",
    ] {
        assert!(stderr.contains(wrapped), "{wrapped:?} not in:\n{stderr}");
    }
    let (stderr, by_preload) = trace("0");
    assert!(!stderr.contains("HIP table"), "{stderr}");
    assert!(!by_preload.is_empty());
    assert_eq!(through_tables, by_preload);
}

/// rocprofv3's number format for a statistics cell of `column` (see
/// `rocwasm_stats::render`): integers plain; averages and deviations with
/// six decimals, or scientific with eight below 0.01; percentages with two
/// decimals from 1, four above 0.01, else scientific with three.
fn in_stats_format(column: &str, cell: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let fixed = |s: &str, decimals: usize| {
        s.split_once('.')
            .is_some_and(|(i, d)| digits(i) && digits(d) && d.len() == decimals)
    };
    let scientific = |s: &str, decimals: usize| {
        s.split_once('e').is_some_and(|(m, e)| {
            let exponent = e.strip_prefix(['+', '-']).unwrap_or("");
            fixed(m, decimals) && m.len() == decimals + 2 && digits(exponent) && exponent.len() >= 2
        })
    };
    match column {
        "Calls" | "TotalDurationNs" | "MinNs" | "MaxNs" => digits(cell),
        "AverageNs" | "StdDev" => fixed(cell, 6) || scientific(cell, 8),
        "Percentage" => fixed(cell, 2) || fixed(cell, 4) || scientific(cell, 3),
        _ => true,
    }
}

/// rocprofv3 prints a summary only with -S/-D: a trace flag alone prints
/// no table, and -D (the stages without files) prints the stage's, once.
#[test]
fn a_trace_flag_alone_prints_no_summary_table() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let out = run_sim_app(
        &["--kernel-trace"],
        "out",
        "vector_add",
        &["2"],
        tmp.path(),
        &[],
    );
    assert_success(&out, "rocwasm run --kernel-trace");
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches('┌').count(), 0, "{stdout}");
    assert!(!stdout.contains("KERNEL_DISPATCH ("), "{stdout}");
    assert!(stdout.contains("rocwasm: wrote "), "{stdout}");
    // vector_add loads its two kernels with hipModuleLoad (no
    // __hipRegisterFunction): both are counted.
    assert!(stdout.contains("; 2 kernel(s) loaded; "), "{stdout}");
    // multi_kernel's four `<<<>>>` kernels are registered by HIP and
    // loaded from its fat binary: each counts once.
    let out = run_sim_app(
        &["--kernel-trace"],
        "registered",
        "multi_kernel",
        &[],
        tmp.path(),
        &[],
    );
    assert_success(&out, "rocwasm run --kernel-trace multi_kernel");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("; 4 kernel(s) loaded; "), "{stdout}");

    let out = run_sim_app(
        &["--kernel-trace", "-D"],
        "per-domain",
        "vector_add",
        &["2"],
        tmp.path(),
        &[],
    );
    assert_success(&out, "rocwasm run --kernel-trace -D");
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches('┌').count(), 1, "{stdout}");
    assert_eq!(
        stdout
            .matches("[kernel-stats] Kernel dispatch statistics")
            .count(),
        1,
        "{stdout}"
    );
}

#[test]
fn stats_without_an_output_name_writes_each_statistics_file_once_in_one_format() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let out = run_sim_app(
        &["--kernel-trace", "--stats"],
        "out",
        "vector_add",
        &["2"],
        tmp.path(),
        &[],
    );
    assert_success(&out, "rocwasm run --kernel-trace --stats");
    let stdout = text(&out.stdout);
    let dir = tmp.path().join("out");

    // Each statistics file once: the kernel-stats stage's kernel_stats.csv,
    // the host's domain_stats.csv, and no second copy under another name.
    let mut stats_files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("_stats.csv"))
        .collect();
    stats_files.sort();
    assert_eq!(stats_files, ["domain_stats.csv", "kernel_stats.csv"]);
    // Who wrote kernel_stats.csv is said once, in the list of files.
    assert!(
        stdout.contains(&format!(
            "rocwasm: wrote {} (stage `kernel-stats`)\n",
            dir.join("kernel_stats.csv").display()
        )),
        "who wrote kernel_stats.csv is said:\n{stdout}"
    );
    assert!(!stdout.contains("did not write it too"), "{stdout}");
    assert!(!stdout.contains("output error"), "{stdout}");
    // One table per --stats: the stage's, not the host's copy of it.
    assert_eq!(
        stdout
            .matches("[kernel-stats] Kernel dispatch statistics")
            .count(),
        1,
        "{stdout}"
    );
    assert!(!stdout.contains("KERNEL_DISPATCH ("), "{stdout}");

    // One number format in both files, whoever wrote them.
    for file in &stats_files {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(
                "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\""
            ),
            "{file}"
        );
        for row in table(&path) {
            assert!(!row["Name"].is_empty(), "{file}: {row:?}");
            for (column, cell) in &row {
                assert!(
                    in_stats_format(column, cell),
                    "{file}: {column} = {cell:?} is not in rocprofv3's format"
                );
            }
        }
    }

    // The expected kernels: every dispatch of the run, in both files.
    let launched = counts(&stdout)["kernels"];
    let kernels = kernel_durations(&dir.join("kernel_trace.csv"));
    assert_eq!(
        kernels.values().map(Vec::len).sum::<usize>() as u64,
        launched
    );
    let per_kernel = read_stats(&dir.join("kernel_stats.csv"));
    assert_eq!(per_kernel.values().map(|s| s.calls).sum::<u64>(), launched);
    assert_same_stats(
        &per_kernel,
        &stats_of(&kernels),
        "kernel_stats.csv vs kernel_trace.csv",
    );
    let domains = read_stats(&dir.join("domain_stats.csv"));
    assert_eq!(domains["KERNEL_DISPATCH"].calls, launched, "{domains:?}");
}

const SQUATTER: &str = r#"
version = 1

[output]
formats = ["csv"]
trace = ["kernel_dispatch"]

# A plugin writing its JSON under the name of the host's kernel trace.
[[stage]]
name = "recorder"
plugin = "recorder"
domains = ["kernel_dispatch"]
output = true
config = { file = "kernel_trace.csv" }
"#;

#[test]
fn a_plugin_may_not_overwrite_a_file_a_host_sink_wrote() {
    plugins_dir(&["recorder"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = write_chain(tmp.path(), SQUATTER);
    let (out, dir) = run_sample(&chain, tmp.path());
    assert_success(&out, "rocwasm run with a plugin writing kernel_trace.csv");
    let stdout = text(&out.stdout);

    // Refused, and said so in the summary, naming the file and both producers.
    assert!(
        stdout.contains(
            "rocwasm: output error: kernel_trace.csv: already written by the host's CSV sink; \
             stage `recorder` may not write it too"
        ),
        "the refusal is reported:\n{stdout}"
    );
    // The file is the CSV sink's, complete.
    let kernels = kernel_durations(&dir.join("kernel_trace.csv"));
    assert_eq!(
        kernels.values().map(Vec::len).sum::<usize>() as u64,
        counts(&stdout)["kernels"]
    );
}

/// `rocwasm run` writes its files at the end from a spool by default and as
/// batches come with `--write-during-run`: the same files, the same records
/// (the sample is deterministic but for times and ids), and no spool left.
#[test]
fn the_outputs_are_the_same_written_at_the_end_or_during_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let sample = sim_dir().join("bin/multi_kernel");
    let run = |dir: &str, extra: &[&str]| {
        let mut args = vec!["run", "--sim", "--kernel-trace", "--hip-trace", "-d", dir];
        args.extend_from_slice(extra);
        args.extend(["--output-format", "csv,json,rocpd", "--"]);
        args.extend([sample.to_str().unwrap(), "--threads", THREADS]);
        let out = rocwasm(&args, tmp.path());
        assert_success(&out, &format!("rocwasm run {extra:?}"));
        let mut files: Vec<String> = std::fs::read_dir(tmp.path().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let kernels = counts(&text(&out.stdout))["kernels"];
        (files, kernels, tmp.path().join(dir))
    };
    let (at_end, kernels_a, a) = run("at-end", &[]);
    let (during, kernels_b, b) = run("during", &["--write-during-run"]);
    assert_eq!(at_end, during, "the same files");
    assert!(
        at_end.iter().all(|f| !f.starts_with('.')),
        "no spool or other hidden file is left: {at_end:?}"
    );
    assert_eq!(kernels_a, kernels_b);
    for (dir, launched) in [(&a, kernels_a), (&b, kernels_b)] {
        let kernels = kernel_durations(&dir.join("kernel_trace.csv"));
        assert_eq!(
            kernels.values().map(Vec::len).sum::<usize>() as u64,
            launched
        );
    }
    // The same HIP calls, function by function.
    let calls = |dir: &Path| {
        let mut n: BTreeMap<String, usize> = BTreeMap::new();
        for row in table(&dir.join("hip_api_trace.csv")) {
            *n.entry(row["Function"].clone()).or_default() += 1;
        }
        n
    };
    let (calls_a, calls_b) = (calls(&a), calls(&b));
    assert!(calls_a.values().sum::<usize>() > 50, "{calls_a:?}");
    assert_eq!(calls_a, calls_b);
}

/// An application killed by a signal never reaches its own end of run, but
/// it only recorded: the launcher still writes its outputs from the record
/// journal, names the signal in the summary, and exits with 128 + the
/// signal as a shell would. (`crash.rs` checks the records themselves.)
#[test]
fn an_application_killed_by_a_signal_is_named_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "-d",
            "out",
            "--",
            "/bin/sh",
            "-c",
            "kill -SEGV $$",
        ],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(128 + 11), "{out:?}");
    let said = text(&out.stdout) + &text(&out.stderr);
    assert!(said.contains("was ended by signal 11 (SIGSEGV)"), "{said}");
}
