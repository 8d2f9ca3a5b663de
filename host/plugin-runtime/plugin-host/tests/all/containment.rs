//! Hostile plugins (trap, panic, endless loop, memory bomb, deep recursion,
//! a trapping `fini`, output past the quota, a huge summary, huge log
//! messages, a slow plugin, host calls in a tight loop, a malformed
//! transform reply) are stopped or capped, reported once per failure,
//! handled per their stage's policy, and a recorder in the same chain still
//! receives every record.

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
    outcome_with_recorder(hostile).failures
}

/// As [`run_with_recorder`], returning the whole outcome.
fn outcome_with_recorder(hostile: StageSpec) -> rocwasm_plugin_host::ChainOutcome {
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
    outcome
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
            .contains("rocwasm:plugin/analysis@0.3.2#deliver-batch"),
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

/// One report, of `plugin`, whose cause satisfies `cause`.
fn one_report(
    reports: &[rocwasm_plugin_host::FailureReport],
    plugin: &str,
    cause: impl Fn(&FailureCause) -> bool,
) -> rocwasm_plugin_host::FailureReport {
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = reports[0].clone();
    assert_eq!(r.plugin, plugin, "{r}");
    assert!(cause(&r.cause), "{r}");
    r
}

#[test]
fn a_rust_panic_is_a_trap_reported_once() {
    let spec = StageSpec::new("panic", plugin("trap")).with_config("how", "panic");
    let r = one_report(&run_with_recorder(spec), "panic", |c| {
        matches!(c, FailureCause::Trap(_))
    });
    assert_eq!(r.export, Some("deliver-batch"));
    assert_eq!(r.action, FailureAction::Disabled);
}

#[test]
fn a_trap_in_fini_is_reported_in_fini_and_loses_nothing_else() {
    let spec = StageSpec::new("fini-trap", plugin("trap")).with_config("at", "fini");
    let outcome = outcome_with_recorder(spec);
    let r = one_report(&outcome.failures, "fini-trap", |c| {
        matches!(c, FailureCause::Trap(_))
    });
    assert_eq!(r.export, Some("fini"));
    assert_eq!(r.records_missed, 0);
    // The recorder's summary is there.
    let (_, tables) = outcome
        .summaries
        .iter()
        .find(|(n, _)| n == "recorder")
        .unwrap();
    assert!(!tables.is_empty());
}

#[test]
fn output_past_the_quota_is_refused_and_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        output_bytes: 1000,
        ..Limits::default()
    };
    let spec = StageSpec::new("flood", plugin("abuser"))
        .with_config("do", "flood-output")
        .with_config("bytes", "400")
        .with_output_dir(dir.path())
        .with_limits(limits);
    let outcome = outcome_with_recorder(spec);
    let r = one_report(
        &outcome.failures,
        "flood",
        |c| matches!(c, FailureCause::Oversized(m) if m.contains("output cap of 1000 bytes")),
    );
    assert_eq!(r.action, FailureAction::Refused);
    assert_eq!(r.records_missed, 0);
    let written = std::fs::metadata(dir.path().join("flood.bin"))
        .unwrap()
        .len();
    assert_eq!(written, 800, "two of five 400-byte appends fit");
    // The plugin ran on: it saw every batch and counted three refusals.
    let (_, tables) = outcome
        .summaries
        .iter()
        .find(|(n, _)| n == "flood")
        .unwrap();
    assert_eq!(tables[0].rows[0][..3], ["5", "50", "3"], "{tables:?}");
}

#[test]
fn a_huge_summary_is_cut_to_the_hosts_caps_and_reported_once() {
    use rocwasm_plugin_host::summary_caps::{MAX_COLUMNS, MAX_ROWS, MAX_TEXT_BYTES};
    // More than one call may copy out of the guest: refused whole.
    let spec = StageSpec::new("huge", plugin("abuser"))
        .with_config("do", "huge-summary")
        .with_config("rows", "1000000");
    let outcome = outcome_with_recorder(spec);
    let r = one_report(
        &outcome.failures,
        "huge",
        |c| matches!(c, FailureCause::Oversized(m) if m.contains("bytes out of the guest")),
    );
    assert_eq!(r.export, Some("fini"));
    // Many rows; then few rows, too wide, with too long cells: cut.
    for (rows, cols, cell, cut) in [
        ("100000", "4", "8", "100000 rows, kept 10000"),
        ("10", "100", "2000", "100 columns, kept 64"),
    ] {
        let spec = StageSpec::new("huge", plugin("abuser"))
            .with_config("do", "huge-summary")
            .with_config("rows", rows)
            .with_config("cols", cols)
            .with_config("cell", cell);
        let outcome = outcome_with_recorder(spec);
        let r = one_report(
            &outcome.failures,
            "huge",
            |c| matches!(c, FailureCause::Oversized(m) if m.contains(cut)),
        );
        assert_eq!(r.export, Some("fini"));
        assert_eq!(r.action, FailureAction::Refused);
        let (_, tables) = outcome.summaries.iter().find(|(n, _)| n == "huge").unwrap();
        let t = &tables[0];
        assert!(t.title.contains("cut by the host"), "{}", t.title);
        assert!(t.columns.len() <= MAX_COLUMNS);
        assert!(!t.rows.is_empty() && t.rows.len() <= MAX_ROWS);
        assert!(t.rows.iter().flatten().all(|c| c.len() <= MAX_TEXT_BYTES));
    }
}

#[test]
fn huge_log_messages_are_cut_and_change_nothing_else() {
    let spec = StageSpec::new("loud", plugin("abuser"))
        .with_config("do", "huge-log")
        .with_config("bytes", (16 << 20).to_string());
    let reports = run_with_recorder(spec);
    assert!(reports.is_empty(), "{reports:#?}");
}

#[test]
fn a_plugin_slow_on_every_batch_under_its_deadline_loses_nothing() {
    let limits = Limits {
        deadline: Duration::from_millis(400),
        ..Limits::default()
    };
    let spec = StageSpec::new("slow", plugin("abuser"))
        .with_config("do", "slow")
        .with_config("ms", "150")
        .with_limits(limits);
    let outcome = outcome_with_recorder(spec);
    assert!(outcome.failures.is_empty(), "{:#?}", outcome.failures);
    let (_, tables) = outcome.summaries.iter().find(|(n, _)| n == "slow").unwrap();
    assert_eq!(tables[0].rows[0][..2], ["5", "50"], "{tables:?}");
}

#[test]
fn host_calls_in_a_tight_loop_are_interrupted_at_the_deadline() {
    for api in ["clock", "names"] {
        let limits = Limits {
            deadline: Duration::from_millis(100),
            ..Limits::default()
        };
        let spec = StageSpec::new("spin", plugin("abuser"))
            .with_config("do", "host-loop")
            .with_config("api", api)
            .with_limits(limits);
        let r = one_report(&run_with_recorder(spec), "spin", |c| {
            *c == FailureCause::Deadline(Duration::from_millis(100))
        });
        assert_eq!(r.action, FailureAction::Disabled, "{api}");
        assert_eq!(r.records_missed, (BATCHES * PER_BATCH) as u64, "{api}");
    }
}

#[test]
fn a_transform_reply_with_unequal_columns_is_refused_and_its_input_passed_on() {
    let spec = StageSpec::new("bad", plugin("malformed-transform"));
    let r = one_report(&run_with_recorder(spec), "bad", |c| {
        matches!(c, FailureCause::MalformedReply(_))
    });
    assert_eq!(r.export, Some("transform-batch"));
    assert_eq!(r.action, FailureAction::Disabled);
}
