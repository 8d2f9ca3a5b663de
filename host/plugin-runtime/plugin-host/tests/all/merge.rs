//! Partial results that merge (WIT 0.3.1's `merge`) through the chain's
//! API: a part ends with `take-partial` instead of `fini`, a reducer
//! folds partials in, and the tables equal one pass's, with partials
//! from processes whose kernel ids differ.

use crate::common;

use common::*;
use rocwasm_plugin_host::{Chain, FailureCause, PartEnd, Partial, StageSpec};

/// Dispatches of `(kernel id, duration)`.
fn batch(rows: &[(u64, u64)], first: u64) -> rocwasm_core::Batch {
    let mut b = rocwasm_core::Batch::default();
    for (i, &(kernel_id, d)) in rows.iter().enumerate() {
        let n = first + i as u64;
        b.kernel_dispatches.push(rocwasm_core::KernelDispatch {
            kernel_id,
            correlation_id: n,
            start: 1_000 * n,
            end: 1_000 * n + d,
            ..Default::default()
        });
    }
    b
}

fn kernel_stats() -> StageSpec {
    StageSpec::new("kernel-stats", plugin("kernel-stats")).with_config("file", "")
}

fn partial_of(ends: Vec<(String, PartEnd)>, stage: &str) -> Partial {
    match ends.into_iter().find(|(n, _)| n == stage).map(|(_, e)| e) {
        Some(PartEnd::Partial(p)) => p,
        other => panic!("no partial of {stage}: {other:?}"),
    }
}

#[test]
fn partials_of_two_processes_merged_give_the_single_pass_and_count_their_records() {
    let (rt, _cache) = runtime();
    // The whole trace in one process: gemm is kernel 1, axpy kernel 2.
    let first = [(1, 100), (2, 40), (1, 300)];
    let second = [(1, 250), (2, 60), (2, 80), (1, 5)];
    let whole = Chain::new(
        rt.clone(),
        env_with_kernels(&[(1, "gemm"), (2, "axpy")]),
        vec![kernel_stats()],
    )
    .unwrap();
    whole.deliver(info(), batch(&first, 0)).unwrap();
    whole.deliver(info(), batch(&second, 10)).unwrap();
    let one_pass = whole.finish().unwrap();
    let want = one_pass.summaries[0].1[0].clone();
    assert_eq!(want.rows.len(), 2, "{want:?}");

    // Part A as above; part B in another process, where the same kernels
    // have the other ids: a partial carries names.
    let a = Chain::new(
        rt.clone(),
        env_with_kernels(&[(1, "gemm"), (2, "axpy")]),
        vec![kernel_stats()],
    )
    .unwrap();
    a.deliver(info(), batch(&first, 0)).unwrap();
    let a = partial_of(a.finish_partial().unwrap().ends, "kernel-stats");
    assert_eq!((a.offered, a.taken), (3, 3));
    let b = Chain::new(
        rt.clone(),
        env_with_kernels(&[(7, "axpy"), (9, "gemm")]),
        vec![kernel_stats()],
    )
    .unwrap();
    let swapped: Vec<(u64, u64)> = second
        .iter()
        .map(|&(k, d)| (if k == 1 { 9 } else { 7 }, d))
        .collect();
    b.deliver(info(), batch(&swapped, 10)).unwrap();
    let b = partial_of(b.finish_partial().unwrap().ends, "kernel-stats");
    assert_eq!((b.offered, b.taken), (4, 4));

    // The reducer knows no kernel at all: the names come with the partials.
    let reducer = Chain::new(rt, env_with_kernels(&[]), vec![kernel_stats()]).unwrap();
    reducer.merge_partial("kernel-stats", &b).unwrap();
    reducer.merge_partial("kernel-stats", &a).unwrap();
    let merged = reducer.finish().unwrap();
    assert!(merged.failures.is_empty(), "{:?}", merged.failures);
    let got = &merged.summaries[0].1[0];
    assert_eq!(
        (&got.title, &got.columns, &got.rows),
        (&want.title, &want.columns, &want.rows)
    );
}

#[test]
fn a_stage_without_merge_ends_with_its_tables_and_bad_partials_are_refused() {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let specs = vec![
        StageSpec::new("recorder", plugin("recorder")).with_output_dir(out.path()),
        kernel_stats(),
    ];
    let chain = Chain::new(rt.clone(), env_with_kernels(&[(1, "k")]), specs.clone()).unwrap();
    assert!(chain.stage_merges("kernel-stats") && !chain.stage_merges("recorder"));
    chain.deliver(info(), dispatches(5, 0)).unwrap();
    let part = chain.finish_partial().unwrap();
    assert!(
        matches!(&part.ends[0], (n, PartEnd::Tables(t)) if n == "recorder" && !t.is_empty()),
        "{:?}",
        part.ends
    );
    assert_eq!(
        part.outcome.summaries.len(),
        1,
        "only the recorder's tables"
    );
    let partial = partial_of(part.ends, "kernel-stats");

    let reducer = Chain::new(rt, env_with_kernels(&[(1, "k")]), specs).unwrap();
    let no_merge = reducer.merge_partial("recorder", &partial).unwrap_err();
    assert!(
        no_merge.to_string().contains("does not export `merge`"),
        "{no_merge}"
    );
    let no_stage = reducer.merge_partial("nope", &partial).unwrap_err();
    assert!(
        no_stage.to_string().contains("no stage `nope`"),
        "{no_stage}"
    );
    let garbage = Partial {
        bytes: b"not a partial".to_vec(),
        offered: 9,
        taken: 9,
    };
    let refused = reducer.merge_partial("kernel-stats", &garbage).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("not a partial result written by the rocwasm plugin SDK"),
        "{refused}"
    );
    // The good one still folds in; the refused one's records are counted
    // as missed in the final table's title.
    reducer.merge_partial("kernel-stats", &partial).unwrap();
    let outcome = reducer.finish().unwrap();
    assert!(outcome
        .failures
        .iter()
        .any(|f| matches!(&f.cause, FailureCause::PartialRefused(_))));
    let table = &outcome
        .summaries
        .iter()
        .find(|(n, _)| n == "kernel-stats")
        .unwrap()
        .1[0];
    assert!(
        table.title.contains("incomplete: 9 of 14 record(s) missed"),
        "{}",
        table.title
    );
    assert_eq!(table.rows[0][1], "5");
}
