//! The C plugin (`plugins/c/queue-occupancy`, built from source by `cargo
//! xtask build-plugins`) end to end: `rocwasm replay` of the committed
//! sample trace through a chain naming it, its `queue_occupancy.csv`
//! compared with occupancy and idle gaps computed here from the trace's own
//! `kernel_trace.csv`.
//!
//! Needs `cargo xtask build-plugins`.

use std::collections::BTreeMap;

use rocwasm_tests::*;

const CHAIN: &str = r#"
version = 1

[[stage]]
name = "queue-occupancy"
plugin = "queue-occupancy"
domains = ["kernel_dispatch"]
output = true
config = { file = "queue_occupancy.csv" }
"#;

/// Per queue: dispatches, busy (union of intervals), span, gaps, idle total,
/// longest gap: the oracle, by a merge of sorted intervals.
fn oracle(rows: &[BTreeMap<String, String>]) -> BTreeMap<u64, [u64; 6]> {
    let mut by_queue: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
    for r in rows {
        let n = |c: &str| r[c].parse::<u64>().unwrap();
        by_queue
            .entry(n("Queue_Id"))
            .or_default()
            .push((n("Start_Timestamp"), n("End_Timestamp")));
    }
    by_queue
        .into_iter()
        .map(|(q, mut iv)| {
            iv.sort();
            let (first, last) = (iv[0].0, iv.iter().map(|i| i.1).max().unwrap());
            let (mut busy, mut gaps, mut idle, mut max_gap) = (0, 0, 0, 0);
            let (mut s, mut e) = iv[0];
            for &(a, b) in &iv[1..] {
                if a <= e {
                    e = e.max(b);
                } else {
                    busy += e - s;
                    gaps += 1;
                    idle += a - e;
                    max_gap = max_gap.max(a - e);
                    (s, e) = (a, b);
                }
            }
            busy += e - s;
            (
                q,
                [iv.len() as u64, busy, last - first, gaps, idle, max_gap],
            )
        })
        .collect()
}

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

#[test]
fn the_c_plugin_computes_queue_occupancy_of_a_replayed_trace() {
    plugins_dir(&["queue-occupancy"]);
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
    assert_success(&out, "rocwasm replay through the C plugin");

    let want = oracle(&read_csv(&trace.join("sample_kernel_trace.csv")));
    let got = read_csv(&tmp.path().join("out/queue_occupancy.csv"));
    assert_eq!(got.len(), want.len(), "one row per queue: {got:?}");
    for row in &got {
        let n = |c: &str| {
            row[c]
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{c}: {row:?}"))
        };
        let expected = want[&n("Queue")];
        let have = [
            n("Dispatches"),
            n("BusyNs"),
            n("SpanNs"),
            n("IdleGaps"),
            n("IdleTotalNs"),
            n("MaxGapNs"),
        ];
        assert_eq!(have, expected, "queue {}: {row:?}", n("Queue"));
    }
}

/// A chain that wants the C plugin's table only (no `output = true`): the
/// table is in the summary, no file is written, and the missing grant is
/// not a warning (the C helper tells it from a refusal, as the Rust SDK
/// does; it warned before).
#[test]
fn without_an_output_grant_the_c_plugin_writes_no_file_and_warns_about_nothing() {
    plugins_dir(&["queue-occupancy"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(&chain, CHAIN.replace("output = true\n", "")).unwrap();
    let trace = workspace().join("examples/traces/sample");
    let args = [
        "replay",
        trace.to_str().unwrap(),
        "-c",
        chain.to_str().unwrap(),
        "-d",
        "out",
    ];
    let out = rocwasm(&args, tmp.path());
    assert_success(&out, &args.join(" "));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(stdout.contains("Queue occupancy"), "the table: {stdout}");
    assert!(
        !stderr.contains("WARN") && !stderr.contains("cannot write"),
        "no warning:\n{stderr}"
    );
    assert!(!tmp.path().join("out/queue_occupancy.csv").exists());
}
