//! A `kernel-filter` transform before `kernel-stats`, driven by `rocwasm
//! replay` on the committed sample trace: the plugin's `kernel_stats.csv`
//! has rows for the kernels that pass the filter only, with the values
//! computed here from the trace's raw kernel durations — and the host sinks
//! after the chain see the filtered kernels too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rocwasm_tests::*;

fn sample() -> PathBuf {
    workspace().join("examples/traces/sample")
}

/// The kernels of `durations` whose name passes `keep`.
fn only(
    durations: &BTreeMap<String, Vec<u64>>,
    keep: impl Fn(&str) -> bool,
) -> BTreeMap<String, Vec<u64>> {
    durations
        .iter()
        .filter(|(name, _)| keep(name))
        .map(|(n, d)| (n.clone(), d.clone()))
        .collect()
}

/// `rocwasm replay INPUT -c CHAIN -d OUT -o sink` in `cwd`; returns OUT
/// (the sinks' and the plugins' files are `sink_…`).
fn replay(input: &Path, chain: &Path, cwd: &Path, out: &str) -> PathBuf {
    let o = rocwasm(
        &[
            "replay",
            input.to_str().unwrap(),
            "-c",
            chain.to_str().unwrap(),
            "-d",
            out,
            "-o",
            "sink",
        ],
        cwd,
    );
    assert_success(&o, &format!("rocwasm replay {}", input.display()));
    cwd.join(out)
}

const GLOB_CHAIN: &str = r#"
version = 1

[output]
formats = ["csv"]
trace = ["kernel_dispatch"]

[[stage]]
name = "only-const-float-args"
plugin = "kernel-filter"
kind = "transform"
domains = ["kernel_dispatch"]
# A glob over the whole demangled name: kernels whose parameter list starts
# with `float const*` (4 of the sample's 6 kernels).
config = { pattern = "*(float const*" }
on_failure = "abort"

[[stage]]
name = "kernel-stats"
plugin = "kernel-stats"
domains = ["kernel_dispatch"]
output = true
"#;

#[test]
fn kernel_filter_before_kernel_stats_gives_statistics_of_the_filtered_kernels_only() {
    plugins_dir(&["kernel-filter", "kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(&chain, GLOB_CHAIN).unwrap();

    let all = kernel_durations(&sample().join("sample_kernel_trace.csv"));
    let kept = only(&all, |n| n.contains("(float const*"));
    assert_eq!(all.len(), 6, "the sample has 6 kernels: {:?}", all.keys());
    assert_eq!(
        kept.len(),
        4,
        "the pattern keeps 4 of them: {:?}",
        kept.keys()
    );
    let want = stats_of(&kept);

    // The same trace in each recorded format.
    for (input, out) in [
        (sample(), "csv"),
        (sample().join("sample_results.db"), "rocpd"),
        (sample().join("sample_results.json"), "json"),
    ] {
        let dir = replay(&input, &chain, tmp.path(), out);
        let got = read_stats(&dir.join("sink_kernel_stats.csv"));
        for name in got.keys() {
            assert!(
                name.contains("(float const*"),
                "{out}: unfiltered kernel {name}"
            );
        }
        assert_same_stats(&got, &want, &format!("kernel_stats.csv from {out}"));
        // The sinks write the chain's final batches: filtered too.
        let sunk = kernel_durations(&dir.join("sink_kernel_trace.csv"));
        assert_eq!(sunk, kept, "{out}: kernel_trace.csv after the filter");
    }
}

#[test]
fn the_filtered_example_chain_filters_with_the_plugins_real_keys() {
    plugins_dir(&["kernel-filter", "kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    // The sample has no GEMM; rename one kernel, in upper case, since the
    // example matches `gemm` case-insensitively.
    let trace = std::fs::read_to_string(sample().join("sample_kernel_trace.csv")).unwrap();
    assert!(trace.contains("\"matmul("));
    let traces = tmp.path().join("trace");
    std::fs::create_dir(&traces).unwrap();
    std::fs::write(
        traces.join("run_kernel_trace.csv"),
        trace.replace("\"matmul(", "\"Cijk_GEMM_matmul("),
    )
    .unwrap();

    let example = workspace().join("examples/chains/filtered.toml");
    let dir = replay(&traces, &example, tmp.path(), "out");
    let all = kernel_durations(&traces.join("run_kernel_trace.csv"));
    let kept = only(&all, |n| n.starts_with("Cijk_GEMM_matmul("));
    assert_eq!(kept.len(), 1);
    let got = read_stats(&dir.join("sink_kernel_stats.csv"));
    assert_same_stats(&got, &stats_of(&kept), "filtered.toml");
}

/// A live run whose only consumer of kernel dispatches is the host's
/// `kernel_trace.csv`: the filter must still stand in front of it (the
/// chain's buffer traces the kind for the output, through the transform).
const LIVE_FILTER_ONLY: &str = r#"
version = 1

[output]
formats = ["csv"]
trace = ["kernel_dispatch"]

[[stage]]
name = "scale-only"
plugin = "kernel-filter"
kind = "transform"
domains = ["kernel_dispatch"]
config = { pattern = "*scale*" }
on_failure = "abort"
"#;

#[test]
fn a_transform_filters_the_live_trace_files_when_no_analysis_traces_the_kind() {
    plugins_dir(&["kernel-filter"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(&chain, LIVE_FILTER_ONLY).unwrap();
    let app = sim_dir().join("bin/multi_kernel");
    let o = rocwasm(
        &[
            "run",
            "--sim",
            "-c",
            chain.to_str().unwrap(),
            "-d",
            "live",
            "--",
            app.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_success(&o, "rocwasm run with a kernel filter only");
    let kept = kernel_durations(&tmp.path().join("live/kernel_trace.csv"));
    assert!(!kept.is_empty(), "no dispatch passed the filter");
    for name in kept.keys() {
        assert!(name.contains("scale"), "{name} passed a *scale* filter");
    }
    // Without the filter the same run has other kernels too.
    let o = rocwasm(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "-d",
            "all",
            "--",
            app.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_success(&o, "rocwasm run --kernel-trace");
    let all = kernel_durations(&tmp.path().join("all/kernel_trace.csv"));
    assert!(all.keys().any(|n| !n.contains("scale")), "{:?}", all.keys());
}
