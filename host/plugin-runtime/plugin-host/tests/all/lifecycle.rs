//! Life cycle: decliners are never initialised, configuration is locked
//! after init, fini runs once after the last delivery and the final flush.

use crate::common;

use common::*;
use rocwasm_plugin_host::{Chain, StageSpec};

#[test]
fn a_decliner_is_never_initialised_or_called() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let specs = vec![
        StageSpec::new("decliner", plugin("decliner")).with_output_dir(out.path()),
        StageSpec::new("recorder", plugin("recorder")).with_output_dir(out.path()),
    ];
    let chain = Chain::new(rt, env_with_kernels(&[]), specs).unwrap();
    assert_eq!(chain.stage_names(), ["recorder"]);
    chain.deliver(info(), dispatches(3, 0)).unwrap();
    let outcome = chain.finish().unwrap();
    assert_eq!(outcome.declined, ["decliner"]);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert!(
        !out.path().join("decliner-called.txt").exists(),
        "the decliner was called after declining"
    );
    // The recorder ran with priority 1: the decliner kept its place in configure order.
    let rec = read_json(&out.path().join("recorder.json"));
    assert_eq!(rec["tool_info"]["priority"], 1);
}

#[test]
fn configuration_after_init_is_locked() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    // No `trace` key: by default its init gives its context a service (a
    // context without one cannot start), so init succeeds.
    let spec = StageSpec::new("late", plugin("late-configure")).with_output_dir(out.path());
    let chain = Chain::new(rt, env_with_kernels(&[]), vec![spec]).unwrap();
    chain.deliver(info(), dispatches(1, 0)).unwrap();
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let v = read_json(&out.path().join("late-configure.json"));
    assert_eq!(v["phase"], "deliver-batch", "{v}");
    let attempts = v["attempts"].as_array().unwrap();
    assert!(attempts.len() >= 6, "{v}");
    assert!(
        attempts
            .iter()
            .any(|a| a["call"].as_str().unwrap().contains("chain-context")),
        "the chain's context is locked too: {v}"
    );
    for a in attempts {
        assert_eq!(a["result"], "configuration-locked", "{a}");
    }
    assert_eq!(v["all_locked"], true);
}

#[test]
fn fini_runs_once_after_the_last_delivery_and_the_final_flush() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let env = env_with_kernels(&[(1, "k")]);
    let profiler = env.profiler.clone();
    // The recorder traces kernel dispatches itself, into a buffer whose
    // watermark is never reached: only the final flush delivers them.
    let spec = StageSpec::new("recorder", plugin("recorder"))
        .with_output_dir(out.path())
        .with_config("trace", "KERNEL_DISPATCH")
        .with_config("buffer-size", "1048576")
        .with_config("watermark", "1048576");
    let chain = Chain::new(rt, env, vec![spec]).unwrap();
    for i in 0..3 {
        chain.deliver(info(), dispatches(4, i * 4)).unwrap();
    }
    trace_dispatches(&profiler, 7);
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let rec = read_json(&out.path().join("recorder.json"));
    let order: Vec<(String, u64)> = rec["lifecycle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["call"].as_str().unwrap().to_string(),
                e["count"].as_u64().unwrap(),
            )
        })
        .collect();
    // 3 chain deliveries + 1 final flush of its own buffer, then fini once.
    assert_eq!(
        order,
        [
            ("configure".into(), 1),
            ("init".into(), 1),
            ("deliver-batch".into(), 4),
            ("fini".into(), 1)
        ],
        "{rec}"
    );
    assert_eq!(rec["totals"]["kernel-dispatches"], 12 + 7, "{rec}");
}
