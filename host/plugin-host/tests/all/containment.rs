//! Hostile plugins (trap, endless loop, memory bomb, deep recursion) are
//! stopped, reported once per failure, handled per their stage's policy, and
//! a recorder in the same chain still receives every record.

use crate::common;

use std::time::Duration;

use common::*;
use rocwasm_plugin_host::failure::FailureAction;
use rocwasm_plugin_host::{Chain, FailureCause, FailurePolicy, Limits, StageSpec};

const BATCHES: usize = 5;
const PER_BATCH: usize = 10;

fn recorder(out: &std::path::Path) -> StageSpec {
    StageSpec::new("recorder", plugin("recorder")).with_output_dir(out)
}

/// Runs `hostile` then a recorder over five 10-record batches; returns the
/// failure reports and checks the recorder saw all 50 records.
fn run_with_recorder(hostile: StageSpec) -> Vec<rocwasm_plugin_host::FailureReport> {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let chain = Chain::new(
        rt,
        env_with_kernels(&[(1, "k")]),
        vec![hostile, recorder(out.path())],
    )
    .unwrap();
    for i in 0..BATCHES {
        chain
            .deliver(info(), dispatches(PER_BATCH, (i * PER_BATCH) as u64))
            .unwrap();
    }
    let outcome = chain.finish().unwrap();
    let rec = read_json(&out.path().join("recorder.json"));
    assert_eq!(
        rec["totals"]["kernel-dispatches"],
        (BATCHES * PER_BATCH) as u64,
        "recorder: {rec}"
    );
    outcome.failures
}

#[test]
fn trap_with_skip_loses_only_the_failing_batches() {
    // Traps on the 2nd delivery of each instance: batches 2 and 4 fail.
    let spec = StageSpec::new("trap", plugin("trap"))
        .with_config("after", "2")
        .with_failure(FailurePolicy::Skip);
    let reports = run_with_recorder(spec);
    assert_eq!(reports.len(), 2, "{reports:#?}");
    for r in &reports {
        assert_eq!(r.plugin, "trap");
        assert!(matches!(r.cause, FailureCause::Trap(_)), "{r}");
        assert_eq!(r.action, FailureAction::Skipped);
        assert_eq!(r.records_missed, PER_BATCH as u64);
    }
}

#[test]
fn endless_loop_is_interrupted_at_its_deadline_and_disabled() {
    let limits = Limits {
        deadline: Duration::from_millis(100),
        ..Limits::default()
    };
    let spec = StageSpec::new("loop", plugin("endless-loop"))
        .with_limits(limits)
        .with_failure(FailurePolicy::Disable);
    let reports = run_with_recorder(spec);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(
        reports[0].cause,
        FailureCause::Deadline(Duration::from_millis(100))
    );
    assert_eq!(reports[0].action, FailureAction::Disabled);
    // The looping batch and the four after it.
    assert_eq!(reports[0].records_missed, (BATCHES * PER_BATCH) as u64);
}

#[test]
fn memory_bomb_hits_its_cap_is_restarted_then_disabled() {
    let limits = Limits {
        memory_bytes: 32 << 20,
        ..Limits::default()
    };
    let spec = StageSpec::new("bomb", plugin("memory-bomb"))
        .with_limits(limits)
        .with_failure(FailurePolicy::Restart {
            max: 1,
            backoff: Duration::ZERO,
        });
    let reports = run_with_recorder(spec);
    assert_eq!(reports.len(), 2, "{reports:#?}");
    for r in &reports {
        assert!(
            matches!(r.cause, FailureCause::MemoryCap { limit, .. } if limit == 32 << 20),
            "{r}"
        );
    }
    assert_eq!(reports[0].action, FailureAction::Restarted { attempt: 1 });
    assert_eq!(reports[0].records_missed, PER_BATCH as u64);
    // The restarted instance bombs on its first batch (2) and is disabled: 2..=5 missed.
    assert_eq!(reports[1].action, FailureAction::Disabled);
    assert_eq!(reports[1].records_missed, 4 * PER_BATCH as u64);
}

#[test]
fn deep_recursion_with_abort_stops_the_run() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let spec = StageSpec::new("deep", plugin("deep-recursion")).with_failure(FailurePolicy::Abort);
    let chain = Chain::new(
        rt,
        env_with_kernels(&[(1, "k")]),
        vec![recorder(out.path()), spec],
    )
    .unwrap();
    let err = chain
        .deliver(info(), dispatches(PER_BATCH, 0))
        .unwrap_err()
        .to_string();
    assert!(err.contains("run aborted") && err.contains("deep"), "{err}");
    let reports = chain.failures();
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert!(
        matches!(
            reports[0].cause,
            FailureCause::StackOverflow | FailureCause::Trap(_)
        ),
        "{}",
        reports[0]
    );
    assert_eq!(reports[0].action, FailureAction::Aborted);
    // Later deliveries are refused too.
    assert!(chain.deliver(info(), dispatches(1, 99)).is_err());
}

#[test]
fn a_trap_report_names_the_export_and_the_wasm_backtrace() {
    let spec = StageSpec::new("trap", plugin("trap"))
        .with_config("how", "unreachable")
        .with_failure(FailurePolicy::Disable);
    let reports = run_with_recorder(spec);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = &reports[0];
    assert_eq!(r.export, Some("deliver-batch"), "{r}");
    assert!(!r.backtrace.is_empty(), "no backtrace: {r}");
    let text = r.to_string();
    assert!(
        text.starts_with("plugin `trap` failed in `deliver-batch`: trap: "),
        "{text}"
    );
    assert!(text.contains("disabled for the rest of the run"), "{text}");
    assert!(text.contains("\n  wasm backtrace:\n    0: "), "{text}");
    // The guest's own frames, by (demangled) name: the misbehaving
    // function innermost, the export's entry point outermost.
    assert!(
        r.backtrace[0].contains("Misbehaviour>::misbehave"),
        "{text}"
    );
    assert!(
        r.backtrace
            .last()
            .unwrap()
            .contains("rocwasm:plugin/analysis@0.1.0#deliver-batch"),
        "{text}"
    );
}

#[test]
fn a_trap_in_init_is_reported_in_init() {
    let (rt, _cache) = runtime();
    let spec = StageSpec::new("trap", plugin("trap"))
        .with_config("at", "init")
        .with_failure(FailurePolicy::Disable);
    let chain = Chain::new(rt, env_with_kernels(&[(1, "k")]), vec![spec]).unwrap();
    let reports = chain.finish().unwrap().failures;
    assert_eq!(reports.len(), 1, "{reports:#?}");
    assert_eq!(reports[0].export, Some("init"));
    assert!(!reports[0].backtrace.is_empty(), "{}", reports[0]);
    assert!(
        reports[0].to_string().contains("failed in `init`"),
        "{}",
        reports[0]
    );
}
