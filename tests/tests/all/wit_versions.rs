//! Plugins of two versions of the WIT package in one chain, end to end: the
//! committed `rocwasm:plugin@0.2.0` binary of kernel-stats
//! (`plugins/testing/fixtures/`) and `kernel-stats-0-3-0` (the same
//! aggregation on 0.3.0's packed batches) on a live run of the simulated
//! GPU and on a replay of that run's outputs: both see every dispatch and
//! print the same table.
//!
//! Needs `cargo xtask build-plugins` and the simulated runtime.

use rocwasm_tests::*;

/// The table printed under `[stage] Kernel dispatch statistics`: its
/// lines up to its bottom border.
fn table_of<'a>(stdout: &'a str, stage: &str) -> Vec<&'a str> {
    let head = format!("[{stage}] Kernel dispatch statistics");
    let mut lines = stdout.lines().skip_while(|l| !l.contains(&head));
    assert!(lines.next().is_some(), "no {head:?} in:\n{stdout}");
    let mut table = Vec::new();
    for line in lines {
        table.push(line);
        if line.starts_with('└') || line.trim().is_empty() {
            break;
        }
    }
    table
}

#[test]
fn a_0_2_0_binary_and_a_0_3_0_plugin_agree_on_a_live_run_and_its_replay() {
    plugins_dir(&["kernel-stats-0-3-0"]);
    let fixture = workspace().join("plugins/testing/fixtures/kernel-stats-wit-0-2-0.wasm");
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(
        &chain,
        format!(
            r#"
version = 1
[output]
trace = ["kernel"]
formats = ["csv"]

[[stage]]
name = "old"
plugin = "{}"
domains = ["kernel_dispatch"]
config = {{ file = "" }}

[[stage]]
name = "new"
plugin = "kernel-stats-0-3-0"
domains = ["kernel_dispatch"]
"#,
            fixture.display()
        ),
    )
    .unwrap();
    let chain = chain.to_str().unwrap();
    let live = run_sim_app(&["-c", chain], "live", "multi_kernel", &[], tmp.path(), &[]);
    assert_success(&live, "rocwasm run with a 0.2.0 and a 0.3.0 stage");
    let live_out = String::from_utf8_lossy(&live.stdout).to_string();
    let dispatches = std::fs::read_dir(tmp.path().join("live"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("kernel_trace.csv"))
        .map(|p| csv::Reader::from_path(p).unwrap().records().count())
        .expect("the live run's kernel_trace.csv");
    assert!(dispatches > 0);
    let (old, new) = (table_of(&live_out, "old"), table_of(&live_out, "new"));
    assert_eq!(old, new, "live:\n{live_out}");
    // Every dispatch: the Calls column (the second) adds up to the trace's
    // rows (a cell wrapped onto a second line leaves Calls empty there).
    let calls: usize = old
        .iter()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(['│', '┆']).map(str::trim).collect();
            cells.get(2)?.parse::<usize>().ok()
        })
        .sum();
    assert_eq!(calls, dispatches, "live:\n{live_out}");

    let replay = rocwasm(
        &["replay", "live", "-c", chain, "-d", "replayed"],
        tmp.path(),
    );
    assert_success(&replay, "rocwasm replay with a 0.2.0 and a 0.3.0 stage");
    let replay_out = String::from_utf8_lossy(&replay.stdout).to_string();
    assert_eq!(
        table_of(&replay_out, "old"),
        table_of(&replay_out, "new"),
        "replay:\n{replay_out}"
    );
    assert_eq!(table_of(&replay_out, "new"), new, "replay vs live");
}
