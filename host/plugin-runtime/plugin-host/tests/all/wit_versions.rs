//! Versions of the WIT package (issue 16, point 3): a component built
//! against `rocwasm:plugin@0.1.0` (`wit/legacy/0.1.0/`, the `wit-0-1-0`
//! test plugin) still loads and works next to current ones; a current
//! component sees which process each batch came from.

use crate::common;

use common::*;
use rocwasm_plugin_host::world::WitVersion;
use rocwasm_plugin_host::{Chain, Processes, StageSpec, TracedProcess, World};

/// The count for `what` in the table titled `title`.
fn count_in(tables: &[rocwasm_plugin_host::SummaryTable], title: &str, what: &str) -> u64 {
    let t = tables
        .iter()
        .find(|t| t.title == title)
        .unwrap_or_else(|| panic!("no table {title:?}: {tables:?}"));
    let row = t
        .rows
        .iter()
        .find(|r| r[0] == what)
        .unwrap_or_else(|| panic!("no `{what}` row: {t:?}"));
    row[1].parse().unwrap()
}

/// The "WIT 0.1.0 plugin" table's count for `what`.
fn count(tables: &[rocwasm_plugin_host::SummaryTable], what: &str) -> u64 {
    count_in(tables, "WIT 0.1.0 plugin", what)
}

#[test]
fn a_component_built_against_0_1_0_loads_and_takes_every_call() {
    let (rt, _cache) = runtime();
    let compiled = rt.compile(&plugin("wit-0-1-0")).unwrap();
    assert_eq!(compiled.version, WitVersion::V0_1_0);
    assert_eq!(compiled.world, World::Analysis);
    assert!(
        compiled
            .surface
            .imports
            .iter()
            .any(|i| i == "rocwasm:plugin/profiler@0.1.0"),
        "{:?}",
        compiled.surface.imports
    );
    // The stock plugins are built with the SDK, on 0.3.2; the raw 0.3.0
    // and 0.3.1 test plugins on the frozen packages.
    assert_eq!(
        rt.compile(&plugin("kernel-stats")).unwrap().version,
        WitVersion::V0_3_2
    );
    assert_eq!(
        rt.compile(&plugin("wit-0-3-1")).unwrap().version,
        WitVersion::V0_3_1
    );
    assert_eq!(
        rt.compile(&plugin("wit-0-3-0")).unwrap().version,
        WitVersion::V0_3_0
    );

    // The old plugin next to a current one, both taking the chain's
    // batches; the old one also traces kernel dispatches into its own
    // buffer (set up through its 0.1.0 `names` and `profiler` imports).
    let out = tempfile::tempdir().unwrap();
    let env = env_with_kernels(&[(1, "k")]);
    let profiler = env.profiler.clone();
    let specs = vec![
        StageSpec::new("old", plugin("wit-0-1-0")).with_output_dir(out.path()),
        StageSpec::new("recorder", plugin("recorder")).with_output_dir(out.path()),
    ];
    let chain = Chain::new(rt, env, specs).unwrap();
    for i in 0..3 {
        chain.deliver(info(), dispatches(4, i * 4)).unwrap();
    }
    trace_dispatches(&profiler, 7);
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let (name, tables) = &outcome.summaries[0];
    assert_eq!(name, "old");
    // 12 through the chain, 7 through its own buffer's final flush.
    assert_eq!(count(tables, "kernel-dispatches"), 19);
    assert!(count(tables, "batches") >= 4);
    assert_eq!(count(tables, "drop-count"), 0);
    let rec = read_json(&out.path().join("recorder.json"));
    assert_eq!(rec["totals"]["kernel-dispatches"], 12, "{rec}");
}

#[test]
fn each_batch_names_the_process_it_came_from() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let own = TracedProcess {
        hostname: "node7".into(),
        pid: 4242,
        rank: Some(0),
        job: Some("81234".into()),
        ..Default::default()
    };
    let processes = Processes::new(own);
    let other = processes.add(TracedProcess {
        hostname: "node8".into(),
        pid: 77,
        rank: Some(1),
        job: None,
        ..Default::default()
    });
    assert_eq!(other, 1);
    let env = env_with_kernels(&[(1, "k")]).with_processes(processes.clone());
    let spec = StageSpec::new("recorder", plugin("recorder")).with_output_dir(out.path());
    let chain = Chain::new(rt, env, vec![spec]).unwrap();
    chain.deliver(info(), dispatches(2, 0)).unwrap();
    let mut from_other = info();
    from_other.process = other;
    chain.deliver(from_other, dispatches(3, 2)).unwrap();
    // An index nobody added: an unknown process, not a failure.
    let mut unknown = info();
    unknown.process = 9;
    chain.deliver(unknown, dispatches(1, 5)).unwrap();
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let rec = read_json(&out.path().join("recorder.json"));
    let seen: Vec<(serde_json::Value, u64)> = rec["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["process"].clone(),
                b["kernel-dispatches"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                serde_json::json!({"hostname": "node7", "pid": 4242, "rank": 0, "job": "81234"}),
                2
            ),
            (
                serde_json::json!({"hostname": "node8", "pid": 77, "rank": 1, "job": null}),
                3
            ),
            (
                serde_json::json!({"hostname": "", "pid": 0, "rank": null, "job": null}),
                1
            ),
        ]
    );
}

/// The summary tables stage `stage` returned from `fini`.
fn summary<'a>(
    outcome: &'a rocwasm_plugin_host::ChainOutcome,
    stage: &str,
) -> &'a [rocwasm_plugin_host::SummaryTable] {
    &outcome
        .summaries
        .iter()
        .find(|(n, _)| n == stage)
        .unwrap_or_else(|| panic!("no summary of {stage}: {:?}", outcome.summaries))
        .1
}

/// The "WIT 0.3.0 plugin" table's count for `what`.
fn count_v3(tables: &[rocwasm_plugin_host::SummaryTable], what: &str) -> u64 {
    count_in(tables, "WIT 0.3.0 plugin", what)
}

/// Three batches of four dispatches, correlation ids 1..=12, 50 ns each,
/// through `specs`; the chain's output batches and its outcome.
fn twelve_dispatches_through(
    specs: Vec<StageSpec>,
) -> (Vec<rocwasm_core::Batch>, rocwasm_plugin_host::ChainOutcome) {
    let (rt, _cache) = runtime();
    let chain = Chain::new(rt, env_with_kernels(&[(1, "k")]), specs).unwrap();
    let out = (0..3)
        .map(|i| chain.deliver(info(), dispatches(4, 1 + i * 4)).unwrap())
        .collect();
    (out, chain.finish().unwrap())
}

#[test]
fn a_component_built_against_0_3_0_reads_only_the_columns_it_selected() {
    let (rt, _cache) = runtime();
    let compiled = rt.compile(&plugin("wit-0-3-0")).unwrap();
    assert_eq!(compiled.version, WitVersion::V0_3_0);
    assert_eq!(compiled.world, World::Analysis);
    assert!(
        compiled
            .surface
            .imports
            .iter()
            .any(|i| i == "rocwasm:plugin/delivery@0.3.0"),
        "{:?}",
        compiled.surface.imports
    );
    let t = rt.compile(&plugin("wit-0-3-0-transform")).unwrap();
    assert_eq!((t.version, t.world), (WitVersion::V0_3_0, World::Transform));

    // A 0.3.0 analysis next to a 0.2.0 one: both see every record.
    let dir = tempfile::tempdir().unwrap();
    let (_, outcome) = twelve_dispatches_through(vec![
        StageSpec::new("new", plugin("wit-0-3-0")),
        StageSpec::new("recorder", plugin("recorder")).with_output_dir(dir.path()),
    ]);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let (name, tables) = &outcome.summaries[0];
    assert_eq!(name, "new");
    assert_eq!(count_v3(tables, "kernel-dispatches"), 12);
    assert_eq!(count_v3(tables, "total-ns"), 12 * 50);
    // The four columns it selected, no other.
    assert_eq!(count_v3(tables, "columns"), 4);
    assert_eq!(count_v3(tables, "stream-is-correlation"), 0);
    assert_eq!(count_v3(tables, "unknown-table-refused"), 1);
    let rec = read_json(&dir.path().join("recorder.json"));
    assert_eq!(rec["totals"]["kernel-dispatches"], 12, "{rec}");
}

#[test]
fn a_0_3_0_transforms_edits_reach_the_stages_after_it_whatever_their_version() {
    let dir = tempfile::tempdir().unwrap();
    let (out, outcome) = twelve_dispatches_through(vec![
        StageSpec::new("evens", plugin("wit-0-3-0-transform")),
        StageSpec::new("new", plugin("wit-0-3-0")),
        StageSpec::new("recorder", plugin("recorder")).with_output_dir(dir.path()),
    ]);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    // Kept: the even correlation ids, with every column the transform
    // never saw (start, end) and the stream id it rewrote.
    let kept: Vec<(u64, u64, u64, u64)> = out
        .iter()
        .flat_map(|b| b.kernel_dispatches.rows())
        .map(|d| (d.correlation_id, d.stream_id, d.start, d.end))
        .collect();
    let want: Vec<(u64, u64, u64, u64)> = (1..=12u64)
        .filter(|c| c % 2 == 0)
        .map(|c| (c, c, 100 * c, 100 * c + 50))
        .collect();
    assert_eq!(kept, want);
    let tables = summary(&outcome, "new");
    assert_eq!(count_v3(tables, "kernel-dispatches"), 6);
    assert_eq!(count_v3(tables, "stream-is-correlation"), 6);
    let rec = read_json(&dir.path().join("recorder.json"));
    assert_eq!(rec["totals"]["kernel-dispatches"], 6, "{rec}");
}

#[test]
fn a_0_3_0_transforms_edits_that_do_not_fit_are_refused_and_its_input_passed_on() {
    use rocwasm_plugin_host::FailureCause;
    let (out, outcome) = twelve_dispatches_through(vec![
        StageSpec::new("evens", plugin("wit-0-3-0-transform")).with_config("malformed", "true"),
        StageSpec::new("new", plugin("wit-0-3-0")),
    ]);
    let report = outcome
        .failures
        .iter()
        .find(|r| r.plugin == "evens")
        .unwrap_or_else(|| panic!("{:?}", outcome.failures));
    assert!(
        matches!(&report.cause, FailureCause::MalformedReply(why) if why.contains("kernel-dispatches")),
        "{report:?}"
    );
    assert_eq!(out.iter().map(|b| b.len()).sum::<usize>(), 12);
    let tables = summary(&outcome, "new");
    assert_eq!(count_v3(tables, "kernel-dispatches"), 12);
}

#[test]
fn kernel_stats_on_0_3_0_gives_the_table_kernel_stats_gave_on_0_2_0() {
    let (rt, _cache) = runtime();
    let env = env_with_kernels(&[(1, "gemm"), (2, "axpy"), (3, "reduce")]);
    // The 0.2.0 binary built before the SDK moved, the SDK's build of the
    // same source on 0.3.0, and its loop on raw 0.3.0 bindings.
    let specs = vec![
        StageSpec::new("v2", fixture("kernel-stats-wit-0-2-0.wasm")).with_config("file", ""),
        StageSpec::new("sdk", plugin("kernel-stats")).with_config("file", ""),
        StageSpec::new("v3", plugin("kernel-stats-0-3-0")),
    ];
    let chain = Chain::new(rt, env, specs).unwrap();
    for b in 0..5u64 {
        let mut batch = rocwasm_core::Batch::default();
        for i in 0..300u64 {
            let n = b * 300 + i;
            batch.kernel_dispatches.push(rocwasm_core::KernelDispatch {
                kernel_id: 1 + n % 3,
                correlation_id: n,
                start: 1_000 * n,
                end: 1_000 * n + 10 + (n * 7919) % 500,
                ..Default::default()
            });
        }
        chain.deliver(info(), batch).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let table = |stage: &str| {
        let t = summary(&outcome, stage)[0].clone();
        (t.title, t.columns, t.rows)
    };
    let (v2, sdk, v3) = (table("v2"), table("sdk"), table("v3"));
    assert_eq!(v2.2.len(), 3, "{v2:?}");
    assert_eq!(sdk, v2);
    assert_eq!(v3, v2);
}

#[test]
fn a_0_2_0_transform_binary_still_transforms_and_a_malformed_reply_is_refused() {
    use rocwasm_plugin_host::FailureCause;
    let (rt, _cache) = runtime();
    let t = rt.compile(&plugin("wit-0-2-0-transform")).unwrap();
    assert_eq!(t.version.as_str(), "0.2.0");
    assert_eq!(t.world, World::Transform);
    // The same edits as the 0.3.0 transform, the 0.2.0 way: the stages
    // after it see the same records from either.
    let kept = |stage: &str| {
        let (out, outcome) = twelve_dispatches_through(vec![
            StageSpec::new("evens", plugin(stage)),
            StageSpec::new("new", plugin("wit-0-3-0")),
        ]);
        assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
        let rows: Vec<(u64, u64, u64, u64)> = out
            .iter()
            .flat_map(|b| b.kernel_dispatches.rows())
            .map(|d| (d.correlation_id, d.stream_id, d.start, d.end))
            .collect();
        (
            rows,
            count_v3(summary(&outcome, "new"), "stream-is-correlation"),
        )
    };
    let old = kept("wit-0-2-0-transform");
    assert_eq!(old.0.len(), 6, "{old:?}");
    assert_eq!(old.1, 6);
    assert_eq!(old, kept("wit-0-3-0-transform"));

    let (out, outcome) = twelve_dispatches_through(vec![
        StageSpec::new("evens", plugin("wit-0-2-0-transform")).with_config("malformed", "true"),
        StageSpec::new("new", plugin("wit-0-3-0")),
    ]);
    let report = outcome
        .failures
        .iter()
        .find(|r| r.plugin == "evens")
        .unwrap_or_else(|| panic!("{:?}", outcome.failures));
    assert!(
        matches!(&report.cause, FailureCause::MalformedReply(why) if why.contains("unequal length")),
        "{report:?}"
    );
    assert_eq!(
        out.iter().map(|b| b.len()).sum::<usize>(),
        12,
        "its input passed on"
    );
}

/// The committed 0.2.0 binary (`plugins/testing/fixtures/`).
fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../plugins/testing/fixtures")
        .join(name)
}

#[test]
fn a_committed_0_2_0_binary_and_a_0_3_0_plugin_see_every_record_in_one_chain() {
    let (rt, _cache) = runtime();
    let old = rt.compile(&fixture("kernel-stats-wit-0-2-0.wasm")).unwrap();
    assert_eq!(old.version.as_str(), "0.2.0");
    let env = env_with_kernels(&[(1, "gemm"), (2, "axpy")]);
    let specs = vec![
        StageSpec::new("old", fixture("kernel-stats-wit-0-2-0.wasm")).with_config("file", ""),
        StageSpec::new("new", plugin("kernel-stats-0-3-0")),
    ];
    let chain = Chain::new(rt, env, specs).unwrap();
    for b in 0..4u64 {
        let mut batch = rocwasm_core::Batch::default();
        for i in 0..100u64 {
            let n = b * 100 + i;
            batch.kernel_dispatches.push(rocwasm_core::KernelDispatch {
                kernel_id: 1 + n % 2,
                start: 10 * n,
                end: 10 * n + 1 + n % 9,
                ..Default::default()
            });
        }
        chain.deliver(info(), batch).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let rows = |stage: &str| summary(&outcome, stage)[0].rows.clone();
    let calls: u64 = rows("old")
        .iter()
        .map(|r| r[1].parse::<u64>().unwrap())
        .sum();
    assert_eq!(calls, 400);
    assert_eq!(rows("new"), rows("old"));
}

#[test]
fn a_0_3_0_plugin_on_a_host_with_a_newer_schema_reads_its_columns_and_skips_the_rest() {
    // The same batches through a host of this build and through one whose
    // schema has a table and a kernel-dispatch column more (a later 0.3.x,
    // `HostEnv::newer_schema`): the SDK's kernel-stats, its loop on raw
    // bindings, a transform and the raw test analysis load and answer the
    // same on both.
    let run = |newer: bool| {
        let (rt, _cache) = runtime();
        let mut env = env_with_kernels(&[(1, "gemm"), (2, "axpy")]);
        env.newer_schema = newer;
        let specs = vec![
            StageSpec::new("evens", plugin("kernel-filter")).with_config("min-duration-ns", "5"),
            StageSpec::new("sdk", plugin("kernel-stats")).with_config("file", ""),
            StageSpec::new("raw", plugin("kernel-stats-0-3-0")),
            StageSpec::new("new", plugin("wit-0-3-0")),
        ];
        let chain = Chain::new(rt, env, specs).unwrap();
        let mut kept = 0;
        for b in 0..3u64 {
            let mut batch = rocwasm_core::Batch::default();
            for i in 0..50u64 {
                let n = b * 50 + i;
                batch.kernel_dispatches.push(rocwasm_core::KernelDispatch {
                    kernel_id: 1 + n % 2,
                    correlation_id: n,
                    start: 100 * n,
                    end: 100 * n + n % 9,
                    ..Default::default()
                });
            }
            kept += chain
                .deliver(info(), batch)
                .unwrap()
                .kernel_dispatches
                .len();
        }
        let outcome = chain.finish().unwrap();
        assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
        let table = |stage: &str| summary(&outcome, stage)[0].rows.clone();
        (kept, table("sdk"), table("raw"), table("new"))
    };
    let (this, newer) = (run(false), run(true));
    // kernel-filter kept the dispatches of at least 5 ns: 4 of every 9.
    assert!(this.0 > 0 && this.0 < 150, "{}", this.0);
    assert_eq!(this.0, newer.0);
    assert_eq!(this.1, newer.1, "kernel-stats (SDK)");
    assert_eq!(this.2, newer.2, "kernel-stats-0-3-0");
    assert_eq!(this.1, this.2);
    // The raw analysis saw the two columns more in its buffer, and read
    // its own the same.
    let columns = |t: &Vec<Vec<String>>| {
        t.iter().find(|r| r[0] == "columns").unwrap()[1]
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(columns(&newer.3), columns(&this.3) + 2);
    let without_columns = |t: &Vec<Vec<String>>| {
        t.iter()
            .filter(|r| r[0] != "columns")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(without_columns(&newer.3), without_columns(&this.3));
}

/// A component built against 0.3.1 (`wit-0-3-1`: `run` and `merge` under
/// their 0.3.1 names) loads next to current ones, takes batches, and its
/// partials merge.
#[test]
fn a_component_built_against_0_3_1_takes_batches_and_merges() {
    use rocwasm_plugin_host::PartEnd;
    let (rt, _cache) = runtime();
    let spec = || StageSpec::new("v31", plugin("wit-0-3-1"));
    let part = |n: usize| {
        let chain = Chain::new(rt.clone(), env_with_kernels(&[(1, "k")]), vec![spec()]).unwrap();
        assert!(chain.stage_merges("v31"));
        chain.deliver(info(), dispatches(n, 0)).unwrap();
        match chain.finish_partial().unwrap().ends.remove(0).1 {
            PartEnd::Partial(p) => p,
            other => panic!("no partial: {other:?}"),
        }
    };
    let (a, b) = (part(3), part(4));
    let reducer = Chain::new(rt.clone(), env_with_kernels(&[]), vec![spec()]).unwrap();
    reducer.merge_partial("v31", &a).unwrap();
    reducer.merge_partial("v31", &b).unwrap();
    let outcome = reducer.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let tables = &outcome.summaries[0].1;
    assert_eq!(count_in(tables, "WIT 0.3.1 plugin", "kernel-dispatches"), 7);
    assert_eq!(count_in(tables, "WIT 0.3.1 plugin", "partials-merged"), 2);
}
