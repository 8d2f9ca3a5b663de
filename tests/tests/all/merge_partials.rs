//! Partial results that merge (WIT 0.3.1's `merge`), through `rocwasm
//! plugin test`'s check: the stock analyses' partials, split at random
//! points and merged in random trees, give the tables of one pass, on the
//! sample recording and on a simulated run's; a wrong merge and a refused
//! partial are caught and named; a plugin without `merge` is said to be
//! per process.

use std::path::Path;

use rocwasm_tests::*;

/// `rocwasm plugin test PLUGIN --trace TRACE --merge-seed SEED [args]`.
fn plugin_test(plugin: &str, trace: &Path, seed: u64, more: &[&str]) -> std::process::Output {
    let wasm = plugins_dir(&[plugin]).join(format!("{plugin}.wasm"));
    let seed = seed.to_string();
    let mut args = vec![
        "plugin",
        "test",
        wasm.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--merge-seed",
        &seed,
    ];
    args.extend_from_slice(more);
    rocwasm(&args, &workspace())
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The stock analyses that merge, with the tables each returns.
const MERGING: [(&str, usize); 3] = [
    ("kernel-stats", 1),
    ("api-stats", 3),
    ("memcpy-bandwidth", 2),
];

#[test]
fn the_stock_analyses_merge_to_the_single_pass_under_random_splits_and_trees() {
    let sample = workspace().join("examples/traces/sample");
    for (plugin, tables) in MERGING {
        for seed in [1, 0xdead_beef] {
            let out = plugin_test(plugin, &sample, seed, &[]);
            assert_success(&out, &format!("plugin test {plugin} --merge-seed {seed}"));
            let text = stdout(&out);
            let said = format!(
                "merge:   4 parts at random cuts, merged in 3 random trees: the {tables} table(s) of one pass (seed {seed})"
            );
            assert!(text.contains(&said), "{plugin}, seed {seed}:\n{text}");
        }
    }
}

#[test]
fn a_simulated_runs_recording_merges_too() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let sample = sim_dir().join("bin/multi_kernel");
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "--sys-trace",
            "-d",
            "out",
            "--output-format",
            "csv",
            "--",
            sample.to_str().unwrap(),
            "--threads",
            "4",
        ],
        tmp.path(),
    );
    assert_success(&out, "rocwasm run --sim multi_kernel");
    for (plugin, _) in MERGING {
        let out = plugin_test(plugin, &tmp.path().join("out"), 7, &[]);
        assert_success(&out, &format!("plugin test {plugin} on a simulated run"));
        assert!(
            stdout(&out).contains("random trees: the"),
            "{plugin}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn a_wrong_merge_and_a_refused_partial_are_caught() {
    let sample = workspace().join("examples/traces/sample");
    // Right: it passes.
    let out = plugin_test("merge-counter", &sample, 5, &[]);
    assert_success(&out, "plugin test merge-counter");
    // A merge that folds nothing: the merged table differs.
    let out = plugin_test("merge-counter", &sample, 5, &["--config", "broken=drop"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("differs: merge tree 1 of 3: table `Records per table`"),
        "{text}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "merged partial results differ from one pass (seed 5, `--merge-seed 5` repeats it)"
        ),
        "{stderr}"
    );
    // A refusal: the plugin's own words, and a failure.
    let out = plugin_test("merge-counter", &sample, 5, &["--config", "broken=refuse"]);
    assert!(!out.status.success(), "{}", stdout(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("merge-counter refuses every partial (broken = refuse)"),
        "{stderr}"
    );
    assert!(stderr.contains("seed 5"), "{stderr}");
}

#[test]
fn a_plugin_without_merge_is_said_to_be_per_process() {
    let sample = workspace().join("examples/traces/sample");
    let out = plugin_test("report", &sample, 1, &[]);
    assert_success(&out, "plugin test report");
    assert!(
        stdout(&out).contains("merge:   not exported (its results are per process"),
        "{}",
        stdout(&out)
    );
}
