//! Replay names: operations a recorded trace named but this build's
//! registry does not know reach plugins under the synthetic numbers the
//! replay reader gave them, and the `names` imports resolve those numbers
//! through the host's operation-name table.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::*;
use rocwasm_core::{operation_by_name, ApiCall, Batch, BufferTracingKind as K};
use rocwasm_plugin_host::{Chain, OperationNameTable, StageSpec};

/// What a replay reader registers for names it does not know.
const SYNTHETIC: u32 = 0x4000_0000;

/// A trace's name table: one HIP function this build lacks.
struct TraceNames;

impl OperationNameTable for TraceNames {
    fn operation_name(&self, kind: u32, op: u32) -> Option<String> {
        (kind == K::HipRuntimeApi.raw() && op == SYNTHETIC).then(|| "hipFutureCall".into())
    }

    fn operations(&self, kind: u32) -> Vec<u32> {
        if kind == K::HipRuntimeApi.raw() {
            vec![SYNTHETIC]
        } else {
            Vec::new()
        }
    }
}

fn calls() -> Batch {
    let launch = operation_by_name(K::HipRuntimeApi, "hipLaunchKernel").unwrap();
    let mut b = Batch::default();
    for (i, op) in [SYNTHETIC, launch, SYNTHETIC].into_iter().enumerate() {
        b.api_calls.push(ApiCall {
            kind: K::HipRuntimeApi.raw(),
            operation: op,
            correlation_id: i as u64 + 1,
            start: 100 * i as u64,
            end: 100 * i as u64 + 7,
            ..Default::default()
        });
    }
    b
}

/// api-stats' rows: function name → calls.
fn api_stats_calls(with_table: bool) -> BTreeMap<String, u64> {
    let (rt, _cache) = runtime();
    let out = tempfile::tempdir().unwrap();
    let mut env = env_with_kernels(&[]).with_replay(true);
    if with_table {
        env = env.with_operation_names(Arc::new(TraceNames));
    }
    let spec = StageSpec::new("api", plugin("api-stats")).with_output_dir(out.path());
    let chain = Chain::new(rt, env, vec![spec]).unwrap();
    chain.deliver(info(), calls()).unwrap();
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let (header, rows) = read_csv(&out.path().join("hip_api_stats.csv"));
    let name = header.iter().position(|c| c == "Name").unwrap();
    let calls = header.iter().position(|c| c == "Calls").unwrap();
    rows.iter()
        .map(|r| (r[name].clone(), r[calls].parse().unwrap()))
        .collect()
}

#[test]
fn plugins_name_operations_the_replayed_trace_registered() {
    let named = api_stats_calls(true);
    assert_eq!(
        named,
        BTreeMap::from([
            ("hipFutureCall".to_string(), 2),
            ("hipLaunchKernel".to_string(), 1)
        ])
    );
    // Without the table the registry cannot name it: the test can fail.
    let unnamed = api_stats_calls(false);
    assert!(!unnamed.contains_key("hipFutureCall"), "{unnamed:?}");
    assert_eq!(unnamed.get("hipLaunchKernel"), Some(&1));
}
