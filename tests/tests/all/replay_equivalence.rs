//! A run's outputs replayed through `rocwasm replay` give the same
//! `kernel-stats` results as the run itself, from each recorded format
//! (CSV, JSON, rocpd).
//!
//! - `live_run_*`: a real `rocwasm run --sim` of the hipcc-built sample on the
//!   simulated runtime; the run's own kernel statistics (its `--stats` file,
//!   `-o live`: `live_kernel_stats.csv`, the `kernel-stats` plugin's, which
//!   the host's statistics sink leaves to it) against the `kernel-stats`
//!   plugin replaying each output, and both against statistics computed
//!   here from the run's kernel trace.
//! - `sink_outputs_*`: the same on outputs written by the host sinks from the
//!   deterministic synthetic run (two GPUs, one kernel under two ids each),
//!   against statistics computed here from the batches themselves.

use std::collections::BTreeMap;
use std::path::Path;

use rocwasm_formats::synthetic::sample_run;
use rocwasm_formats::{CsvSink, JsonSink, OperationNames, RocpdSink, Sink, SinkContext};
use rocwasm_tests::*;

const KERNEL_STATS_CHAIN: &str = r#"
version = 1

[output]
formats = []

[[stage]]
name = "kernel-stats"
plugin = "kernel-stats"
domains = ["kernel_dispatch"]
output = true
"#;

/// Replays `input` through the kernel-stats chain; its `kernel_stats.csv`.
fn replayed_kernel_stats(input: &Path, cwd: &Path, out: &str) -> BTreeMap<String, Stat> {
    let chain = cwd.join("kernel-stats.toml");
    std::fs::write(&chain, KERNEL_STATS_CHAIN).unwrap();
    let o = rocwasm(
        &[
            "replay",
            input.to_str().unwrap(),
            "-c",
            chain.to_str().unwrap(),
            "-d",
            out,
        ],
        cwd,
    );
    assert_success(&o, &format!("rocwasm replay {}", input.display()));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Kernel dispatch statistics"), "{stdout}");
    read_stats(&cwd.join(out).join("kernel_stats.csv"))
}

#[test]
fn live_run_outputs_replay_to_the_live_kernel_statistics() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let sim = sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = sim.join("bin/multi_kernel");
    let o = rocwasm(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "--stats",
            "--output-format",
            "csv,json,rocpd",
            "-d",
            "live",
            "-o",
            "live",
            "--",
            app.to_str().unwrap(),
            "--threads",
            "4",
        ],
        tmp.path(),
    );
    assert_success(&o, "rocwasm run --sim");
    let live = tmp.path().join("live");

    // What the run itself computed: its --stats file (`-o live` names the
    // kernel-stats plugin's file too; the host's sink wrote no copy).
    let live_results = vec![(
        "the live run's --stats kernel_stats",
        read_stats(&live.join("live_kernel_stats.csv")),
    )];
    assert!(!live.join("kernel_stats.csv").exists());
    // And what they must be, from the run's raw kernel trace.
    let oracle = stats_of(&kernel_durations(&live.join("live_kernel_trace.csv")));
    assert!(
        oracle.len() >= 4,
        "the sample launches 4 kernels: {oracle:?}"
    );
    assert_eq!(
        oracle.values().map(|s| s.calls).sum::<u64>(),
        16,
        "4 threads × 4 kernels"
    );
    for (what, stats) in &live_results {
        assert_same_stats(stats, &oracle, what);
    }

    for (input, fmt) in [
        (live.clone(), "csv"),
        (live.join("live_results.json"), "json"),
        (live.join("live_results.db"), "rocpd"),
    ] {
        let replayed = replayed_kernel_stats(&input, tmp.path(), &format!("replay-{fmt}"));
        for (what, stats) in &live_results {
            assert_same_stats(&replayed, stats, &format!("{fmt} replay vs {what}"));
        }
    }
}

#[test]
fn sink_outputs_replay_to_the_kernel_statistics_of_their_batches() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let names = OperationNames::new();
    let run = sample_run(77, 150, 50, &names);
    let dir = tmp.path().join("written");
    std::fs::create_dir(&dir).unwrap();
    let mut sinks: Vec<Box<dyn Sink>> = vec![
        Box::new(CsvSink::new(&dir, Some("w".into()))),
        Box::new(JsonSink::new(&dir, Some("w".into()))),
        Box::new(RocpdSink::new(&dir, Some("w".into()))),
    ];
    let ctx = SinkContext {
        meta: &run.meta,
        symbols: &run.symbols,
        names: &names,
    };
    for s in &mut sinks {
        s.begin(&ctx).unwrap();
        for b in &run.batches {
            s.write_batch(b, &ctx).unwrap();
        }
        s.finish(&ctx).unwrap();
    }

    // Per demangled name (a kernel has one id per GPU), from the batches.
    let mut durations: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for b in &run.batches {
        for d in b.kernel_dispatches.rows() {
            let name = run
                .symbols
                .kernel(d.kernel_id)
                .expect("symbol")
                .demangled_name;
            durations.entry(name).or_default().push(d.end - d.start);
        }
    }
    let want = stats_of(&durations);
    assert!(want.len() >= 4);

    for (input, fmt) in [
        (dir.clone(), "csv"),
        (dir.join("w_results.json"), "json"),
        (dir.join("w_results.db"), "rocpd"),
    ] {
        let got = replayed_kernel_stats(&input, tmp.path(), &format!("replay-{fmt}"));
        assert_same_stats(&got, &want, &format!("{fmt} replay of the sink outputs"));
    }
}
