//! Column projection (`delivery.select-columns`): a plugin that selects
//! columns receives exactly those, with the right values; tables it did not
//! select arrive whole; a plugin that selects nothing gets everything; late
//! and unknown selections are refused.
//!
//! The `projection` test plugin reports, per column of three tables, how many
//! values it received and their wrapping sum; the expectations are computed
//! here from the batches sent.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use rocwasm_core::{ApiCall, Batch, BufferId, ContextId, DeliveryInfo, KernelDispatch, MemoryCopy};
use rocwasm_plugin_host::{Chain, StageSpec, SummaryTable};

fn info() -> DeliveryInfo {
    DeliveryInfo {
        context: ContextId(1),
        buffer: BufferId(1),
        drop_count: 0,
        process: 0,
    }
}

/// Every field distinct and non-zero, so a column can only sum right if it
/// is the column.
fn batches() -> Vec<Batch> {
    let mut rng = Lcg(11);
    let mut v = || 1 + rng.next() % 1_000_000;
    (0..3)
        .map(|b| {
            let mut batch = Batch::default();
            for _ in 0..(50 + 20 * b) {
                batch.kernel_dispatches.push(KernelDispatch {
                    correlation_id: v(),
                    external_correlation_id: v(),
                    thread_id: v(),
                    start: v(),
                    end: v(),
                    agent_id: v(),
                    queue_id: v(),
                    stream_id: v(),
                    kernel_id: v(),
                    dispatch_id: v(),
                    private_segment_size: v() as u32,
                    group_segment_size: v() as u32,
                    workgroup_x: v() as u32,
                    workgroup_y: v() as u32,
                    workgroup_z: v() as u32,
                    grid_x: v() as u32,
                    grid_y: v() as u32,
                    grid_z: v() as u32,
                });
            }
            for _ in 0..7 {
                batch.memory_copies.push(MemoryCopy {
                    operation: 2,
                    bytes: v(),
                    start: v(),
                    end: v(),
                    ..Default::default()
                });
                batch.api_calls.push(ApiCall {
                    kind: 5,
                    operation: v() as u32,
                    correlation_id: v(),
                    start: v(),
                    end: v(),
                    ..Default::default()
                });
            }
            batch
        })
        .collect()
}

/// (table, column) → (values, wrapping sum) over all batches, as sent.
fn sent(batches: &[Batch]) -> BTreeMap<(String, String), (u64, u64)> {
    let mut m = BTreeMap::new();
    let mut add = |table: &str, column: &str, values: Vec<u64>| {
        let e = m
            .entry((table.to_string(), column.to_string()))
            .or_insert((0u64, 0u64));
        e.0 += values.len() as u64;
        e.1 = values.iter().fold(e.1, |a, &x| a.wrapping_add(x));
    };
    for b in batches {
        let k = &b.kernel_dispatches;
        let u = |c: &Vec<u32>| c.iter().map(|&x| x as u64).collect::<Vec<_>>();
        for (c, vals) in [
            ("correlation-id", k.correlation_id.clone()),
            ("external-correlation-id", k.external_correlation_id.clone()),
            ("thread-id", k.thread_id.clone()),
            ("start", k.start.clone()),
            ("end", k.end.clone()),
            ("agent-id", k.agent_id.clone()),
            ("queue-id", k.queue_id.clone()),
            ("stream-id", k.stream_id.clone()),
            ("kernel-id", k.kernel_id.clone()),
            ("dispatch-id", k.dispatch_id.clone()),
            ("private-segment-size", u(&k.private_segment_size)),
            ("group-segment-size", u(&k.group_segment_size)),
            ("workgroup-x", u(&k.workgroup_x)),
            ("workgroup-y", u(&k.workgroup_y)),
            ("workgroup-z", u(&k.workgroup_z)),
            ("grid-x", u(&k.grid_x)),
            ("grid-y", u(&k.grid_y)),
            ("grid-z", u(&k.grid_z)),
        ] {
            add("kernel-dispatches", c, vals);
        }
        let m = &b.memory_copies;
        for (c, vals) in [
            ("operation", u(&m.operation)),
            ("correlation-id", m.correlation_id.clone()),
            ("external-correlation-id", m.external_correlation_id.clone()),
            ("thread-id", m.thread_id.clone()),
            ("start", m.start.clone()),
            ("end", m.end.clone()),
            ("dst-agent-id", m.dst_agent_id.clone()),
            ("src-agent-id", m.src_agent_id.clone()),
            ("stream-id", m.stream_id.clone()),
            ("bytes", m.bytes.clone()),
            ("dst-address", m.dst_address.clone()),
            ("src-address", m.src_address.clone()),
        ] {
            add("memory-copies", c, vals);
        }
        let a = &b.api_calls;
        for (c, vals) in [
            ("kind", u(&a.kind)),
            ("operation", u(&a.operation)),
            ("correlation-id", a.correlation_id.clone()),
            ("external-correlation-id", a.external_correlation_id.clone()),
            ("ancestor", a.ancestor.clone()),
            ("thread-id", a.thread_id.clone()),
            ("start", a.start.clone()),
            ("end", a.end.clone()),
        ] {
            add("api-calls", c, vals);
        }
    }
    m
}

/// Runs the `projection` plugin with `select` (None: no selection) over
/// `batches`; returns its two tables.
fn run(select: Option<&str>, batches: &[Batch]) -> (SummaryTable, SummaryTable) {
    let (rt, _cache) = runtime();
    let mut spec = StageSpec::new("projection", plugin("projection"));
    if let Some(s) = select {
        spec = spec.with_config("select", s);
    }
    let chain = Chain::new(rt, env_with_kernels(&[]), vec![spec]).unwrap();
    for b in batches {
        chain.deliver(info(), b.clone()).unwrap();
    }
    let outcome = chain.finish().unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    let mut tables = outcome.summaries.into_iter().next().unwrap().1.into_iter();
    (tables.next().unwrap(), tables.next().unwrap())
}

/// The plugin's "Columns" table as (table, column) → (values, sum).
fn received(t: &SummaryTable) -> BTreeMap<(String, String), (u64, u64)> {
    t.rows
        .iter()
        .map(|r| {
            (
                (r[0].clone(), r[1].clone()),
                (r[2].parse().unwrap(), r[3].parse().unwrap()),
            )
        })
        .collect()
}

fn calls(t: &SummaryTable) -> Vec<(String, String)> {
    t.rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect()
}

#[test]
fn a_projected_plugin_gets_exactly_the_selected_columns() {
    let batches = batches();
    let sent = sent(&batches);
    let (columns, status) = run(
        Some("kernel-dispatches:kernel-id,start,end;memory-copies:"),
        &batches,
    );
    let got = received(&columns);
    assert_eq!(got.len(), 18 + 12 + 8, "{got:?}");
    let selected = ["kernel-id", "start", "end"];
    for ((table, column), (values, sum)) in &got {
        let key = (table.clone(), column.clone());
        let keep = match table.as_str() {
            "kernel-dispatches" => selected.contains(&column.as_str()),
            "memory-copies" => false,
            // Not mentioned in `select`: the whole table.
            "api-calls" => true,
            t => panic!("unexpected table {t}"),
        };
        if keep {
            assert_eq!((*values, *sum), sent[&key], "{table}.{column}");
            assert!(*values > 0);
        } else {
            assert_eq!(*values, 0, "{table}.{column} was not selected but arrived");
        }
    }
    assert_eq!(
        calls(&status),
        [
            ("kernel-dispatches:kernel-id,start,end", "ok"),
            ("memory-copies:", "ok"),
            ("late", "configuration-locked"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
}

#[test]
fn without_a_selection_every_column_arrives() {
    let batches = batches();
    let (columns, status) = run(None, &batches);
    assert_eq!(received(&columns), sent(&batches));
    assert_eq!(
        calls(&status),
        [("late".to_string(), "configuration-locked".to_string())]
    );
}

#[test]
fn unknown_names_are_refused_and_change_nothing() {
    let batches = batches();
    let (columns, status) = run(
        Some("kernel-dispatches:kernel-id,kernel-name;no-such-table:start"),
        &batches,
    );
    assert_eq!(received(&columns), sent(&batches));
    let calls = calls(&status);
    assert_eq!(calls[0].1, "invalid-argument");
    assert_eq!(calls[1].1, "invalid-argument");
}
