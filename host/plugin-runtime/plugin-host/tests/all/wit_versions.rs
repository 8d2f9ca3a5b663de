//! Versions of the WIT package (issue 16, point 3): a component built
//! against `rocwasm:plugin@0.1.0` (`wit/legacy/0.1.0/`, the `wit-0-1-0`
//! test plugin) still loads and works next to current ones; a current
//! component sees which process each batch came from.

use crate::common;

use common::*;
use rocwasm_plugin_host::world::WitVersion;
use rocwasm_plugin_host::{Chain, Processes, StageSpec, TracedProcess, World};

/// The "WIT 0.1.0 plugin" table's count for `what`.
fn count(tables: &[rocwasm_plugin_host::SummaryTable], what: &str) -> u64 {
    let t = tables
        .iter()
        .find(|t| t.title == "WIT 0.1.0 plugin")
        .unwrap_or_else(|| panic!("no table from the 0.1.0 plugin: {tables:?}"));
    let row = t
        .rows
        .iter()
        .find(|r| r[0] == what)
        .unwrap_or_else(|| panic!("no `{what}` row: {t:?}"));
    row[1].parse().unwrap()
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
    assert_eq!(
        rt.compile(&plugin("kernel-stats")).unwrap().version,
        WitVersion::Current
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
    };
    let processes = Processes::new(own);
    let other = processes.add(TracedProcess {
        hostname: "node8".into(),
        pid: 77,
        rank: Some(1),
        job: None,
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
