//! External correlation across a chain (issue 3's acceptance): with the
//! tagger configured for kernel dispatches only, the dispatches the chain
//! buffers carry its values, HIP API records carry the pushed value, and
//! the tagger was asked exactly once per dispatch.
//!
//! The test plays the interception layer: it drives the sdk-core producer
//! API (`trace_api` for roctx and HIP calls, `begin_async` /
//! `complete_kernel_dispatch` for the kernels those calls launch) on the
//! engine the chain configured.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use rocwasm_core::{
    clock, operation_by_name, Argument, BufferTracingKind as K, CallbackTracingKind, Domain,
    KernelDispatch, Profiler,
};
use rocwasm_plugin_host::{Chain, StageSpec};

/// The pushed value the HIP calls (and any untagged dispatch) must carry.
const PUSHED: u64 = 555;

/// The test's stand-in for the interposers.
struct App<'a> {
    profiler: &'a Profiler,
    push: u32,
    pop: u32,
    launch: u32,
    dispatches: u64,
}

impl App<'_> {
    fn new(profiler: &Profiler) -> App<'_> {
        let marker = |n| operation_by_name(CallbackTracingKind::MarkerCoreApi, n).unwrap();
        App {
            profiler,
            push: marker("roctxRangePushA"),
            pop: marker("roctxRangePop"),
            launch: operation_by_name(K::HipRuntimeApi, "hipLaunchKernel").unwrap(),
            dispatches: 0,
        }
    }

    fn range_push(&self, name: &str) {
        let args = || {
            vec![Argument::new(
                "message",
                "const char*",
                format!("\"{name}\""),
            )]
        };
        self.profiler.trace_api(
            Domain::MarkerCoreApi,
            self.push,
            args,
            || 0,
            |r| r.to_string(),
        );
    }

    fn range_pop(&self) {
        self.profiler.trace_api(
            Domain::MarkerCoreApi,
            self.pop,
            Vec::new,
            || 0,
            |r| r.to_string(),
        );
    }

    /// `hipLaunchKernel`, whose dispatch completes right away.
    fn launch(&mut self) {
        let op = self.profiler.trace_api(
            Domain::HipRuntimeApi,
            self.launch,
            Vec::new,
            || self.profiler.begin_async(Domain::KernelDispatch, 1),
            |_| "hipSuccess".to_string(),
        );
        let op = op.expect("the chain traces kernel dispatches");
        let t = 1000 * (self.dispatches + 1);
        self.profiler.complete_kernel_dispatch(
            op,
            KernelDispatch {
                kernel_id: 1,
                start: t,
                end: t + 10,
                ..Default::default()
            },
        );
        self.dispatches += 1;
    }
}

#[test]
fn tagger_values_reach_the_chains_dispatches_and_only_them() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let env = env_with_kernels(&[(1, "k")]);
    let profiler = env.profiler.clone();
    let specs = vec![
        // Seeing the dispatches too lets it count how many carry its tags.
        StageSpec::new("tagger", plugin("correlation-tagger"))
            .with_domains([K::KernelDispatch])
            .with_config("ranges.solve", "77")
            .with_output_dir(out.path()),
        StageSpec::new("recorder", plugin("recorder"))
            .with_domains([K::KernelDispatch, K::HipRuntimeApi, K::MarkerCoreApi])
            .with_output_dir(out.path()),
    ];
    let chain = Chain::new(rt, env, specs).unwrap();
    let ctx = chain.context().expect("the chain has a context");
    profiler
        .push_external_correlation_id(ctx, clock::thread_id(), PUSHED)
        .unwrap();

    let mut app = App::new(&profiler);
    app.range_push("solve"); // configured: 77
    app.launch();
    app.launch();
    app.range_pop();
    app.range_push("outer"); // base 1000 + first unconfigured name = 1001
    app.launch();
    app.range_push("inner"); // 1002
    app.launch();
    app.launch();
    app.range_pop();
    app.launch(); // outer again
    app.range_pop();
    app.launch(); // no range, no default: the pushed value stands
    assert_eq!(app.dispatches, 7);

    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);

    let rec = read_json(&out.path().join("recorder.json"));
    let ids = |table: &str| -> BTreeMap<u64, u64> {
        rec["external_correlation_ids"][table]
            .as_object()
            .unwrap_or_else(|| panic!("no {table} in {rec}"))
            .iter()
            .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
            .collect()
    };
    // Dispatches: the tagger's value of the innermost open range.
    assert_eq!(
        ids("kernel-dispatches"),
        BTreeMap::from([(77, 2), (1001, 2), (1002, 2), (PUSHED, 1)]),
        "{rec}"
    );
    // HIP calls were never asked about: all carry the pushed value, though
    // they ran inside the same ranges.
    assert_eq!(
        ids("api-calls/HIP_RUNTIME_API"),
        BTreeMap::from([(PUSHED, 7)]),
        "{rec}"
    );
    assert_eq!(
        ids("api-calls/MARKER_CORE_API"),
        BTreeMap::from([(PUSHED, 6)]),
        "{rec}"
    );

    // Asked exactly once per dispatch: 6 answers + 1 left to the pushed value,
    // per range as many as that range's dispatches.
    let (_, tables) = outcome
        .summaries
        .iter()
        .find(|(s, _)| s == "tagger")
        .unwrap();
    let t = &tables[0];
    assert!(
        t.title.contains("(6 answered, 1 left to the pushed value)"),
        "{}",
        t.title
    );
    assert!(
        t.title
            .contains("6 of 7 delivered dispatches carried a tag"),
        "{}",
        t.title
    );
    let rows: BTreeMap<&str, (&str, &str)> = t
        .rows
        .iter()
        .map(|r| (r[0].as_str(), (r[1].as_str(), r[2].as_str())))
        .collect();
    assert_eq!(
        rows,
        BTreeMap::from([
            ("solve", ("77", "2")),
            ("outer", ("1001", "2")),
            ("inner", ("1002", "2")),
            ("(no range)", ("pushed", "1")),
        ])
    );
}

#[test]
fn without_a_chain_context_the_tagger_makes_its_own() {
    // Without a chain context (the engine is locked before the chain is
    // made, so none can be created) the tagger sets up its own; init must
    // still succeed, as for an SDK tool. Here: configuration is locked, so
    // its init fails cleanly and is reported, never a panic or a hang.
    let (rt, _cache) = runtime();
    let env = env_with_kernels(&[]);
    env.profiler.lock_configuration();
    let chain = Chain::new(
        rt,
        env,
        vec![StageSpec::new("tagger", plugin("correlation-tagger"))],
    )
    .unwrap();
    assert_eq!(chain.context(), None);
    let outcome = chain.finish().unwrap();
    assert_eq!(outcome.failures.len(), 1, "{:?}", outcome.failures);
    let report = outcome.failures[0].to_string();
    assert!(report.contains("create-context"), "{report}");
}
