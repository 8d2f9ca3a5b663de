//! Every stock plugin loaded as a real component, fed batches built here,
//! its results checked against values computed here independently.

mod common;

use std::collections::BTreeMap;

use common::*;
use rocwasm_core::{Batch, BufferId, ContextId, DeliveryInfo, KernelDispatch};
use rocwasm_runtime::{Chain, StageSpec, World};

fn info() -> DeliveryInfo {
    DeliveryInfo {
        context: ContextId(1),
        buffer: BufferId(1),
        drop_count: 0,
    }
}

#[test]
fn kernel_stats_matches_independent_statistics() {
    let kernels = [
        (1, "gemm_f32"),
        (2, "reduce"),
        (3, "gemm_f32"),
        (4, "copy_kernel"),
    ];
    let env = env_with_kernels(&kernels);
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let spec = StageSpec::new("kstats", plugin("kernel-stats")).with_output_dir(out.path());
    let chain = Chain::new(rt.clone(), env, vec![spec]).unwrap();
    assert_eq!(
        rt.compile(&plugin("kernel-stats")).unwrap().world,
        World::Analysis
    );

    let mut rng = Lcg(7);
    let mut durations: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut t = 1_000_000u64;
    for batch_no in 0..5 {
        let mut b = Batch::default();
        for i in 0..(100 + batch_no * 37) {
            let (id, name) = kernels[(rng.next() % 4) as usize];
            let d = 1 + rng.next() % 50_000;
            b.kernel_dispatches.push(KernelDispatch {
                kernel_id: id,
                start: t,
                end: t + d,
                correlation_id: i as u64,
                ..Default::default()
            });
            t += d + 10;
            durations.entry(name.to_string()).or_default().push(d);
        }
        chain.deliver(info(), b).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let want = oracle(&durations);

    let (stage, tables) = &outcome.summaries[0];
    assert_eq!(stage, "kstats");
    assert_eq!(tables.len(), 1);
    check_stats(&tables[0].columns, &tables[0].rows, &want);

    let (header, rows) = read_csv(&out.path().join("kernel_stats.csv"));
    check_stats(&header, &rows, &want);
}
