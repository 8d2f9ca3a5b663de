//! The record of everything received, and its JSON form; no host calls.

use std::collections::{BTreeMap, HashMap};

use rocwasm_plugin_sdk::kind::{
    buffer_kind_name, callback_kind_name, external_correlation_kind_name,
};
use rocwasm_plugin_sdk::types::{
    CallbackRecord, DeliveryInfo, ExternalCorrelationRequest, Phase, Status, SummaryTable, ToolInfo,
};
use rocwasm_plugin_sdk::Batch;
use serde_json::{json, Map, Value};

/// Lists are capped so a long run cannot exhaust the plugin's memory.
const MAX_ITEMS: usize = 10_000;

/// A configured reply: nothing, the record's internal id, or a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Answer {
    #[default]
    None,
    Internal,
    Value(u64),
}

impl Answer {
    /// `none`, `internal` or a number; anything else is `none`.
    pub fn parse(text: &str) -> Answer {
        match text.trim().trim_matches('"') {
            "internal" => Answer::Internal,
            t => t.parse().map(Answer::Value).unwrap_or(Answer::None),
        }
    }

    fn apply(self, internal: u64) -> Option<u64> {
        match self {
            Answer::None => None,
            Answer::Internal => Some(internal),
            Answer::Value(v) => Some(v),
        }
    }
}

#[derive(Debug, Default)]
pub struct Recording {
    pub answer: Answer,
    pub user_data: Answer,
    tool_info: Option<Value>,
    replay: Option<bool>,
    lifecycle: Vec<(String, u64)>,
    calls: BTreeMap<String, u64>,
    setup: Vec<Value>,
    batches: Vec<Value>,
    totals: BTreeMap<&'static str, u64>,
    drop_count: u64,
    api_calls_by_kind: BTreeMap<String, u64>,
    external_ids: BTreeMap<String, BTreeMap<u64, u64>>,
    callbacks: CallbackTally,
    /// (thread, internal id) → what ENTER returned.
    open_callbacks: HashMap<(u64, u64), u64>,
    requests: Vec<Value>,
    requests_by_kind: BTreeMap<String, u64>,
    requests_answered: u64,
}

#[derive(Debug, Default)]
struct CallbackTally {
    total: u64,
    enter: u64,
    exit: u64,
    none: u64,
    by_kind: BTreeMap<String, u64>,
    user_data_ok: u64,
    user_data_mismatch: u64,
    exit_without_enter: u64,
}

fn kind_label(name: Option<&str>, kind: u32) -> String {
    name.map(str::to_string)
        .unwrap_or_else(|| format!("KIND_{kind}"))
}

impl Recording {
    /// Counts one call of `export` and extends the life-cycle sequence.
    pub fn call(&mut self, export: &str) {
        *self.calls.entry(export.to_string()).or_default() += 1;
        match self.lifecycle.last_mut() {
            Some((last, n)) if last == export => *n += 1,
            _ => self.lifecycle.push((export.to_string(), 1)),
        }
    }

    pub fn configure(&mut self, info: &ToolInfo) {
        self.call("configure");
        self.replay = Some(info.replay);
        self.tool_info = Some(json!({
            "version": info.version,
            "runtime_version": info.runtime_version,
            "priority": info.priority,
            "name": info.name,
            "replay": info.replay,
            "domains": info.domains.iter().map(|k| kind_label(buffer_kind_name(*k), *k)).collect::<Vec<_>>(),
        }));
    }

    /// Notes the outcome of one service-setup call.
    pub fn setup<T>(&mut self, call: &str, result: &Result<T, Status>) {
        let result = match result {
            Ok(_) => "ok".to_string(),
            Err(status) => status.name().to_string(),
        };
        self.setup.push(json!({"call": call, "result": result}));
    }

    pub fn batch(&mut self, info: &DeliveryInfo, batch: &Batch) {
        self.call("deliver-batch");
        let mut entry = Map::new();
        entry.insert("context".into(), info.context.into());
        entry.insert("buffer".into(), info.buffer.into());
        entry.insert("drop_count".into(), info.drop_count.into());
        let p = &info.process;
        entry.insert(
            "process".into(),
            json!({"hostname": p.hostname, "pid": p.pid, "rank": p.rank, "job": p.job}),
        );
        for (table, rows) in batch.table_lengths() {
            entry.insert(table.into(), rows.into());
            *self.totals.entry(table).or_default() += rows as u64;
        }
        if self.batches.len() < MAX_ITEMS {
            self.batches.push(Value::Object(entry));
        }
        self.drop_count += info.drop_count;

        let calls = batch.api_calls();
        for (kind, ext) in calls.kind.iter().zip(calls.external_correlation_id) {
            let name = kind_label(buffer_kind_name(*kind), *kind);
            *self
                .external_ids
                .entry(format!("api-calls/{name}"))
                .or_default()
                .entry(*ext)
                .or_default() += 1;
            *self.api_calls_by_kind.entry(name).or_default() += 1;
        }
        for (table, ids) in [
            (
                "kernel-dispatches",
                batch.kernel_dispatches().external_correlation_id,
            ),
            (
                "memory-copies",
                batch.memory_copies().external_correlation_id,
            ),
            (
                "memory-allocations",
                batch.memory_allocations().external_correlation_id,
            ),
        ] {
            for ext in ids {
                *self
                    .external_ids
                    .entry(table.to_string())
                    .or_default()
                    .entry(*ext)
                    .or_default() += 1;
            }
        }
    }

    /// Records a callback; returns what the plugin hands back.
    pub fn callback(&mut self, record: &CallbackRecord, user_data: u64) -> u64 {
        self.call("on-callback");
        let t = &mut self.callbacks;
        t.total += 1;
        *t.by_kind
            .entry(kind_label(callback_kind_name(record.kind), record.kind))
            .or_default() += 1;
        let key = (record.thread_id, record.correlation.internal);
        match record.phase {
            Phase::Enter => {
                t.enter += 1;
                let out = self
                    .user_data
                    .apply(record.correlation.internal)
                    .unwrap_or(user_data);
                self.open_callbacks.insert(key, out);
                out
            }
            Phase::Exit => {
                t.exit += 1;
                match self.open_callbacks.remove(&key) {
                    Some(expected) if expected == user_data => t.user_data_ok += 1,
                    Some(_) => t.user_data_mismatch += 1,
                    None => t.exit_without_enter += 1,
                }
                user_data
            }
            Phase::None => {
                t.none += 1;
                user_data
            }
        }
    }

    /// Records a request; returns the configured answer.
    pub fn request(&mut self, r: &ExternalCorrelationRequest) -> Option<u64> {
        self.call("on-external-correlation-request");
        *self
            .requests_by_kind
            .entry(kind_label(external_correlation_kind_name(r.kind), r.kind))
            .or_default() += 1;
        if self.requests.len() < MAX_ITEMS {
            self.requests.push(json!({
                "thread_id": r.thread_id,
                "context": r.context,
                "kind": r.kind,
                "operation": r.operation,
                "internal": r.internal_correlation_id,
            }));
        }
        let answer = self.answer.apply(r.internal_correlation_id);
        if answer.is_some() {
            self.requests_answered += 1;
        }
        answer
    }

    pub fn to_json(&self) -> Value {
        let mut totals: Map<String, Value> = self
            .totals
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect();
        totals.insert("drop_count".into(), self.drop_count.into());
        let external: Map<String, Value> = self
            .external_ids
            .iter()
            .map(|(table, ids)| {
                let ids: Map<String, Value> = ids
                    .iter()
                    .map(|(id, n)| (id.to_string(), (*n).into()))
                    .collect();
                (table.clone(), Value::Object(ids))
            })
            .collect();
        let c = &self.callbacks;
        json!({
            "tool_info": self.tool_info,
            "replay": self.replay,
            "lifecycle": self.lifecycle.iter().map(|(call, n)| json!({"call": call, "count": n})).collect::<Vec<_>>(),
            "calls": self.calls,
            "setup": self.setup,
            "batches": self.batches,
            "totals": totals,
            "api_calls_by_kind": self.api_calls_by_kind,
            "external_correlation_ids": external,
            "callbacks": {
                "total": c.total, "enter": c.enter, "exit": c.exit, "none": c.none,
                "by_kind": c.by_kind,
                "user_data_ok": c.user_data_ok,
                "user_data_mismatch": c.user_data_mismatch,
                "exit_without_enter": c.exit_without_enter,
            },
            "requests": {
                "total": self.requests_by_kind.values().sum::<u64>(),
                "by_kind": self.requests_by_kind,
                "answered": self.requests_answered,
                "list": self.requests,
            },
        })
    }

    /// Calls per export, by export name.
    pub fn summary(&self) -> SummaryTable {
        let mut t = SummaryTable::new("recorder", &["Call", "Count"]);
        for (call, n) in &self.calls {
            t.push_row([call.clone(), n.to_string()]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_plugin_sdk::kind::*;
    use rocwasm_plugin_sdk::rows::{ApiCall, KernelDispatch};
    use rocwasm_plugin_sdk::types::{CallbackPayload, Correlation};

    fn info(replay: bool) -> ToolInfo {
        ToolInfo {
            version: 100,
            runtime_version: 0,
            priority: 2,
            name: "rec".into(),
            replay,
            domains: vec![11],
            chain_context: None,
        }
    }

    fn cb(phase: Phase, thread_id: u64, internal: u64) -> CallbackRecord {
        CallbackRecord {
            context: 1,
            kind: callback::HIP_RUNTIME_API,
            operation: 3,
            phase,
            correlation: Correlation {
                internal,
                external: 0,
                ancestor: 0,
            },
            thread_id,
            timestamp: 0,
            payload: CallbackPayload::None,
        }
    }

    #[test]
    fn records_lifecycle_batches_and_external_ids() {
        let mut r = Recording::default();
        r.configure(&info(true));
        r.call("init");
        let mut tables = rocwasm_plugin_sdk::Tables::default();
        tables.api_calls.extend([
            ApiCall {
                kind: buffer::HIP_RUNTIME_API,
                external_correlation_id: 7,
                ..Default::default()
            },
            ApiCall {
                kind: buffer::HIP_RUNTIME_API,
                external_correlation_id: 7,
                ..Default::default()
            },
        ]);
        tables.kernel_dispatches.push(KernelDispatch {
            external_correlation_id: 1001,
            ..Default::default()
        });
        let batch = tables.pack();
        let delivery = DeliveryInfo {
            context: 3,
            buffer: 4,
            drop_count: 2,
            process: rocwasm_plugin_sdk::types::ProcessInfo {
                hostname: "node7".into(),
                pid: 42,
                rank: Some(3),
                job: None,
            },
        };
        r.batch(&delivery, &batch);
        r.batch(&delivery, &Batch::default());
        r.call("fini");
        let j = r.to_json();
        assert_eq!(j["replay"], true);
        assert_eq!(j["tool_info"]["domains"][0], "KERNEL_DISPATCH");
        let order: Vec<(&str, u64)> = j["lifecycle"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["call"].as_str().unwrap(), e["count"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            order,
            [
                ("configure", 1),
                ("init", 1),
                ("deliver-batch", 2),
                ("fini", 1)
            ]
        );
        assert_eq!(j["totals"]["api-calls"], 2);
        assert_eq!(j["totals"]["drop_count"], 4);
        assert_eq!(
            j["batches"][0]["process"],
            json!({"hostname": "node7", "pid": 42, "rank": 3, "job": null})
        );
        assert_eq!(j["batches"][0]["kernel-dispatches"], 1);
        assert_eq!(j["batches"][0]["buffer"], 4);
        assert_eq!(
            j["external_correlation_ids"]["api-calls/HIP_RUNTIME_API"]["7"],
            2
        );
        assert_eq!(
            j["external_correlation_ids"]["kernel-dispatches"]["1001"],
            1
        );
        assert_eq!(j["api_calls_by_kind"]["HIP_RUNTIME_API"], 2);
    }

    #[test]
    fn user_data_round_trips_are_checked() {
        let mut r = Recording {
            user_data: Answer::Internal,
            ..Default::default()
        };
        assert_eq!(r.callback(&cb(Phase::Enter, 1, 50), 0), 50);
        assert_eq!(r.callback(&cb(Phase::Enter, 2, 51), 0), 51);
        r.callback(&cb(Phase::Exit, 1, 50), 50);
        r.callback(&cb(Phase::Exit, 2, 51), 999);
        r.callback(&cb(Phase::Exit, 3, 52), 0);
        let c = &r.to_json()["callbacks"];
        assert_eq!(
            (c["enter"].as_u64(), c["exit"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(c["user_data_ok"], 1);
        assert_eq!(c["user_data_mismatch"], 1);
        assert_eq!(c["exit_without_enter"], 1);
        assert_eq!(c["by_kind"]["HIP_RUNTIME_API"], 5);
    }

    #[test]
    fn requests_are_answered_as_configured() {
        let req = ExternalCorrelationRequest {
            thread_id: 9,
            context: 1,
            kind: external_correlation::KERNEL_DISPATCH,
            operation: 0,
            internal_correlation_id: 77,
        };
        let mut r = Recording {
            answer: Answer::parse("internal"),
            ..Default::default()
        };
        assert_eq!(r.request(&req), Some(77));
        r.answer = Answer::parse("5");
        assert_eq!(r.request(&req), Some(5));
        r.answer = Answer::parse("none");
        assert_eq!(r.request(&req), None);
        let j = r.to_json();
        assert_eq!(j["requests"]["total"], 3);
        assert_eq!(j["requests"]["answered"], 2);
        assert_eq!(j["requests"]["by_kind"]["KERNEL_DISPATCH"], 3);
        assert_eq!(j["requests"]["list"][0]["internal"], 77);
    }
}
