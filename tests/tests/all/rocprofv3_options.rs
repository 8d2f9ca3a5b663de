//! rocprofv3's software options on the simulated runtime: each one's effect
//! on the outputs of a live `rocwasm run --sim … -- multi_kernel`.
//!
//! Needs `cargo xtask build-sim` (and the tool library, built with the
//! workspace).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rocwasm_tests::*;

/// `rocwasm run --sim FLAGS -d out -- APP…` in a fresh directory; returns
/// the directory (kept alive by the guard) and the output directory.
fn run(flags: &[&str], app: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let mut args = vec!["run", "--sim"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-d", "out", "--"]);
    args.extend_from_slice(app);
    let out = rocwasm(&args, tmp.path());
    assert_success(&out, &format!("rocwasm {}", args.join(" ")));
    let dir = tmp.path().join("out");
    (tmp, dir)
}

fn multi_kernel() -> String {
    sim_dir()
        .join("bin/multi_kernel")
        .to_str()
        .unwrap()
        .to_string()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .collect();
    names.sort();
    names
}

/// Rows per value of the first column (the `Domain` or `Kind`) of a CSV trace.
fn rows_per_domain(path: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut counts = BTreeMap::new();
    for line in text.lines().skip(1) {
        let first = line.split(',').next().unwrap().trim_matches('"');
        *counts.entry(first.to_string()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn runtime_trace_is_rocprofv3s_runtime_set_without_hsa_or_the_hip_compiler_api() {
    sim_dir();
    let app = multi_kernel();
    let (_tmp, dir) = run(&["-r"], &[&app]);
    assert_eq!(
        files_in(&dir),
        [
            "hip_api_trace.csv",
            "kernel_trace.csv",
            "marker_api_trace.csv",
            "memory_allocation_trace.csv",
            "memory_copy_trace.csv",
        ],
        "-r: HIP runtime, markers, kernels, copies, allocations (the simulated runtime has no scratch, RCCL, rocDecode or rocJPEG events)"
    );
    let hip = rows_per_domain(&dir.join("hip_api_trace.csv"));
    assert!(hip["HIP_RUNTIME_API"] > 0, "{hip:?}");
    assert!(
        !hip.contains_key("HIP_COMPILER_API"),
        "-r traces the HIP runtime API only: {hip:?}"
    );
    assert!(rows_per_domain(&dir.join("kernel_trace.csv"))["KERNEL_DISPATCH"] > 0);
}

#[test]
fn sys_trace_adds_the_hip_compiler_api_and_hsa() {
    sim_dir();
    let app = multi_kernel();
    let (_tmp, dir) = run(&["--sys-trace"], &[&app]);
    assert_eq!(
        files_in(&dir),
        [
            "hip_api_trace.csv",
            "hsa_api_trace.csv",
            "kernel_trace.csv",
            "marker_api_trace.csv",
            "memory_allocation_trace.csv",
            "memory_copy_trace.csv",
        ]
    );
    let hip = rows_per_domain(&dir.join("hip_api_trace.csv"));
    assert!(
        hip["HIP_RUNTIME_API"] > 0 && hip["HIP_COMPILER_API"] > 0,
        "{hip:?}"
    );
    let hsa = rows_per_domain(&dir.join("hsa_api_trace.csv"));
    assert!(hsa["HSA_CORE_API"] > 0, "{hsa:?}");

    // -s is exactly the union of the flags rocprofv3 expands it to.
    let (_tmp2, by_hand) = run(
        &[
            "--hip-trace",
            "--hsa-trace",
            "--marker-trace",
            "--kernel-trace",
            "--memory-copy-trace",
            "--memory-allocation-trace",
            "--scratch-memory-trace",
        ],
        &[&app],
    );
    assert_eq!(files_in(&by_hand), files_in(&dir));
    for f in files_in(&dir) {
        let (a, b) = (
            rows_per_domain(&by_hand.join(&f)),
            rows_per_domain(&dir.join(&f)),
        );
        if f == "hsa_api_trace.csv" {
            // The number of signal polls varies from run to run.
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                b.keys().collect::<Vec<_>>(),
                "{f}"
            );
        } else {
            assert_eq!(
                a, b,
                "{f}: -s and its flags record the same domains and counts"
            );
        }
    }
}

/// The profiled process receives the plan (`ROCWASM_RUN`); an application
/// that copies it shows which kinds the run traces for the sinks. The
/// simulated runtime raises no scratch-memory events, so this is where the
/// flag's effect is visible.
#[test]
fn scratch_memory_trace_asks_the_process_for_scratch_memory_records() {
    sim_dir();
    let plan_of = |flags: &[&str]| {
        let (tmp, _) = run(flags, &["sh", "-c", "cat \"$ROCWASM_RUN\" > plan.json"]);
        let text = std::fs::read_to_string(tmp.path().join("plan.json")).unwrap();
        let plan: serde_json::Value = serde_json::from_str(&text).unwrap();
        let kinds: Vec<String> = plan["output"]["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().to_string())
            .collect();
        kinds
    };
    let with = plan_of(&["--kernel-trace", "--scratch-memory-trace"]);
    assert!(
        with.iter().any(|k| k.contains("SCRATCH_MEMORY")),
        "{with:?}"
    );
    let without = plan_of(&["--kernel-trace"]);
    assert!(
        !without.iter().any(|k| k.contains("SCRATCH_MEMORY")),
        "{without:?}"
    );
    let runtime = plan_of(&["-r"]);
    assert!(
        runtime.iter().any(|k| k.contains("SCRATCH_MEMORY")),
        "{runtime:?}"
    );
    assert!(
        !runtime.iter().any(|k| k.contains("HSA_CORE_API")),
        "{runtime:?}"
    );
}

/// `-D`: a summary table per traced domain at the end, and no statistics
/// files (that is `--stats`).
#[test]
fn summary_per_domain_prints_a_table_per_domain_and_writes_no_stats_files() {
    sim_dir();
    plugins_dir(&["kernel-stats", "api-stats"]);
    let app = multi_kernel();
    let tmp = tempfile::tempdir().unwrap();
    let summary_run = |flags: &[&str], out: &str| {
        let mut args = vec!["run", "--sim", "--kernel-trace", "--hip-trace"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["-d", out, "--", &app]);
        let o = rocwasm(&args, tmp.path());
        assert_success(&o, &format!("rocwasm {}", args.join(" ")));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (text, files_in(&tmp.path().join(out)))
    };
    let (text, files) = summary_run(&["-D"], "with");
    for table in [
        "[kernel-stats] Kernel dispatch statistics (4 row(s))",
        "[api-stats] HIP API statistics",
    ] {
        assert!(text.contains(table), "-D prints `{table}`:\n{text}");
    }
    for kernel in ["vector_add(", "square(", "scale(", "block_sum("] {
        assert!(text.contains(kernel), "{kernel}:\n{text}");
    }
    assert!(
        !text.contains("HSA API statistics") && !text.contains("Memory copies"),
        "only the traced domains:\n{text}"
    );
    assert_eq!(files, ["hip_api_trace.csv", "kernel_trace.csv"]);

    let (text, _) = summary_run(&[], "without");
    assert!(!text.contains("Kernel dispatch statistics"), "{text}");
}
