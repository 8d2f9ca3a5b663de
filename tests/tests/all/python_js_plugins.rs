//! The Python plugin (`plugins/python/range-kernel-time`, built from source
//! by `cargo xtask build-plugins` with componentize-py) end to end:
//! `rocwasm replay` of the committed sample trace through a chain naming
//! it, its `range_kernel_time.csv` compared with kernel time per roctx range
//! computed here from the trace's own `marker_api_trace.csv` and
//! `kernel_trace.csv`. (The JS plugin's copy sizes need a `bytes` column the
//! sample's CSV does not have; `host/plugin-runtime/plugin-host/tests/all/python_js_plugins.rs`
//! tests it on records built in the test.)
//!
//! Needs `cargo xtask build-plugins`.

use std::collections::BTreeMap;

use rocwasm_tests::*;

const CHAIN: &str = r#"
version = 1

[[stage]]
name = "ranges"
plugin = "range-kernel-time"
domains = ["kernel_dispatch", "marker_core_api"]
output = true
"#;

fn read_csv(path: &std::path::Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// Per range path (`outer > inner`, `(no range)`): [kernels, self ns,
/// total ns]. For each dispatch, its thread's open ranges are rebuilt by
/// replaying that thread's marker rows with a smaller correlation id.
fn oracle(
    markers: &[BTreeMap<String, String>],
    kernels: &[BTreeMap<String, String>],
) -> BTreeMap<String, [u64; 3]> {
    let n = |r: &BTreeMap<String, String>, c: &str| r[c].parse::<u64>().unwrap();
    let mut rows: BTreeMap<String, [u64; 3]> = BTreeMap::new();
    for k in kernels {
        let (thread, corr) = (n(k, "Thread_Id"), n(k, "Correlation_Id"));
        let mut mine: Vec<(u64, &str)> = markers
            .iter()
            .filter(|m| n(m, "Thread_Id") == thread && n(m, "Correlation_Id") < corr)
            .map(|m| (n(m, "Correlation_Id"), m["Function"].as_str()))
            .collect();
        mine.sort();
        let mut stack: Vec<String> = Vec::new();
        for (c, function) in mine {
            match function {
                "roctxRangePushA" => stack.push(format!("range@{c}")),
                "roctxRangePop" => {
                    stack.pop();
                }
                _ => {}
            }
        }
        let ns = n(k, "End_Timestamp").saturating_sub(n(k, "Start_Timestamp"));
        let path = if stack.is_empty() {
            "(no range)".to_string()
        } else {
            stack.join(" > ")
        };
        let r = rows.entry(path).or_default();
        r[0] += 1;
        r[1] += ns;
        for depth in 1..=stack.len() {
            rows.entry(stack[..depth].join(" > ")).or_default()[2] += ns;
        }
        if stack.is_empty() {
            rows.entry("(no range)".into()).or_default()[2] += ns;
        }
    }
    rows
}

#[test]
fn the_python_plugin_computes_kernel_time_per_roctx_range_of_a_replayed_trace() {
    plugins_dir(&["range-kernel-time"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(&chain, CHAIN).unwrap();
    let trace = workspace().join("examples/traces/sample");
    let out = rocwasm(
        &[
            "replay",
            trace.to_str().unwrap(),
            "-c",
            chain.to_str().unwrap(),
            "-d",
            "out",
        ],
        tmp.path(),
    );
    assert_success(&out, "rocwasm replay through the Python plugin");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Kernel time per roctx range"),
        "the summary table is printed: {stdout}"
    );

    let want = oracle(
        &read_csv(&trace.join("sample_marker_api_trace.csv")),
        &read_csv(&trace.join("sample_kernel_trace.csv")),
    );
    let got = read_csv(&tmp.path().join("out/range_kernel_time.csv"));
    let got: BTreeMap<String, [u64; 3]> = got
        .iter()
        .map(|r| {
            let n = |c: &str| r[c].parse::<u64>().unwrap_or_else(|_| panic!("{c}: {r:?}"));
            (
                r["Range"].clone(),
                [n("Kernels"), n("SelfNs"), n("TotalNs")],
            )
        })
        .collect();
    // The sample's ranges nest on one thread and stay open to the end on
    // another: both shapes must appear.
    assert!(got.keys().any(|k| k.contains(" > ")), "{got:?}");
    assert_eq!(got, want);
    let kernels: u64 = got.values().map(|r| r[0]).sum();
    assert_eq!(kernels, 80, "every dispatch of the sample counted once");
}
