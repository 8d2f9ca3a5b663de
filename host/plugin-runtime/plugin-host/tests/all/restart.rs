//! `on_failure = "restart"` on batches handed to `Chain::deliver` (the
//! replay path): the fresh instance takes every later batch, even when the
//! caller delivers faster than the restart backoff, and its summary says
//! what it did not see.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use rocwasm_plugin_host::failure::FailureAction;
use rocwasm_plugin_host::{Chain, FailureCause, FailurePolicy, StageSpec};

const BATCHES: usize = 5;
const PER_BATCH: usize = 10;

#[test]
fn a_restarted_plugin_takes_every_later_delivered_batch_and_its_summary_says_what_it_missed() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let backoff = Duration::from_millis(50);
    // Batch 1 holds correlation id 0: the first instance traps on it; the
    // restarted one never sees it again.
    let spec = StageSpec::new("rec", plugin("recorder"))
        .with_config("trap-on-correlation-id", "0")
        .with_output_dir(out.path())
        .with_failure(FailurePolicy::Restart { max: 3, backoff });
    let chain = Chain::new(rt, env_with_kernels(&[(1, "k")]), vec![spec]).unwrap();
    let started = Instant::now();
    for i in 0..BATCHES {
        chain
            .deliver(info(), dispatches(PER_BATCH, (i * PER_BATCH) as u64))
            .unwrap();
    }
    let delivered = started.elapsed();
    let outcome = chain.finish().unwrap();

    assert_eq!(outcome.failures.len(), 1, "{:#?}", outcome.failures);
    let r = &outcome.failures[0];
    assert!(matches!(r.cause, FailureCause::Trap(_)), "{r}");
    assert_eq!(r.action, FailureAction::Restarted { attempt: 1 });
    assert_eq!(r.records_missed, PER_BATCH as u64, "{r}");
    let text = r.to_string();
    assert!(
        text.contains("restarted (attempt 1 of 3); 10 record(s) missed"),
        "{text}"
    );
    assert!(!text.contains("Restarted {"), "{text}");

    // The restarted instance received batches 2 to 5.
    let rec = read_json(&out.path().join("recorder.json"));
    assert_eq!(
        rec["totals"]["kernel-dispatches"],
        ((BATCHES - 1) * PER_BATCH) as u64,
        "{rec}"
    );
    assert_eq!(rec["calls"]["deliver-batch"], (BATCHES - 1) as u64, "{rec}");

    // The second delivery waited out the backoff instead of losing its batch.
    assert!(delivered >= backoff, "{delivered:?}");

    // Its summary covers 40 of the 50 records and says so.
    let (stage, tables) = &outcome.summaries[0];
    assert_eq!(stage, "rec");
    assert!(!tables.is_empty());
    for t in tables {
        assert!(
            t.title
                .ends_with("(incomplete: 10 of 50 record(s) missed after plugin failures)"),
            "{}",
            t.title
        );
    }
}

#[test]
fn a_summary_without_failures_is_not_marked() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let spec = StageSpec::new("rec", plugin("recorder")).with_output_dir(out.path());
    let chain = Chain::new(rt, env_with_kernels(&[(1, "k")]), vec![spec]).unwrap();
    chain.deliver(info(), dispatches(PER_BATCH, 0)).unwrap();
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty());
    for t in &outcome.summaries[0].1 {
        assert!(!t.title.contains("incomplete"), "{}", t.title);
    }
}
