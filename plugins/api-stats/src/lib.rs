//! `api-stats`: per-function duration statistics of API calls, as rocprofv3
//! `--stats` prints them, one table per API domain.
//!
//! Every API-call record (HIP, HSA, marker/roctx, and RCCL, rocDecode,
//! rocJPEG when delivered) is counted under its domain and its function name
//! (the operation name from the host's `names` interface). Per domain with at
//! least one call, it writes (when the stage has an output grant)
//! `<domain>_api_stats.csv` — `hip_api_stats.csv`,
//! `hsa_api_stats.csv`, `marker_api_stats.csv` — with the columns
//! `Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev`
//! (percentages of the domain's total, sorted by total descending) and returns
//! the same tables from `fini`.
//!
//! When the stage names no `domains`, `init` sets up tracing itself for the
//! APIs in config key `apis` (comma-separated among `hip`, `hsa`, `marker`,
//! `roctx`; default `hip,hsa,marker`): HIP runtime + compiler, the four HSA
//! tables, the application's marks and ranges by message as rocprofv3's
//! `--marker-trace` records them (plus the profiler-control calls), or with
//! `roctx` the raw roctx calls. A kind the host cannot trace is skipped with
//! a warning.
//!
//! Its results merge (world `mergeable-analysis-plugin`): a partial is the
//! tables by domain and function name (names, not operation numbers, which
//! a replay may assign per recording), merged by exact sums.

mod aggregate;

use std::collections::BTreeMap;

use rocwasm_plugin_sdk::prelude::*;
use rocwasm_plugin_sdk::services::BufferOptions;

use aggregate::ApiAggregate;

#[derive(Default)]
struct ApiStats {
    self_configure: bool,
    calls: ApiAggregate,
    names: OperationNames,
    /// What merged partials added: per domain, by function name.
    merged: BTreeMap<String, StatsTable>,
}

/// The partial result's format.
const PARTIAL: &str = "api-stats/1";

impl ApiStats {
    /// Every call this instance saw or merged: per domain, by name.
    fn tables(&mut self) -> BTreeMap<String, StatsTable> {
        let names = &mut self.names;
        let mut tables: BTreeMap<String, StatsTable> = self
            .calls
            .by_domain(|kind, op| names.buffer_operation(kind, op).to_string())
            .into_iter()
            .map(|(d, t)| (d.to_string(), t))
            .collect();
        for (domain, table) in &self.merged {
            let into = tables.entry(domain.clone()).or_default();
            for (name, series) in table.iter() {
                into.merge(name, series);
            }
        }
        tables
    }
}

impl AnalysisPlugin for ApiStats {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.self_configure = info.domains.is_empty();
        true
    }

    fn init(&mut self) -> Result<(), String> {
        // What `ApiAggregate::add` reads, and no other table.
        api_calls::select(&["kind", "operation", "start", "end"])
            .context("delivery.select-columns")?;
        delivery::receive_only(&[api_calls::NAME]).context("delivery.select-columns")?;
        if !self.self_configure {
            return Ok(());
        }
        let apis = config::get("apis").unwrap_or_else(|| "hip,hsa,marker".to_string());
        let kinds = aggregate::kinds_for_apis(&apis)?;
        trace_tolerantly(&kinds)
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        self.calls.add(batch.api_calls());
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let mut tables = Vec::new();
        let mut calls = 0;
        for (domain, table) in self.tables() {
            calls += table.iter().map(|(_, s)| s.count()).sum::<u64>();
            let file = format!("{domain}_api_stats.csv");
            output::write_result("api-stats", &file, table.to_csv());
            tables.push(table.to_summary(&format!("{} API statistics", domain.to_uppercase())));
        }
        info!("api-stats: {calls} API calls");
        tables
    }
}

impl MergeablePlugin for ApiStats {
    fn take_partial(&mut self) -> Result<Vec<u8>, String> {
        let tables = self.tables();
        let mut w = PartialWriter::new(PARTIAL);
        w.u64(tables.len() as u64);
        for (domain, table) in &tables {
            w.str(domain);
            w.table(table);
        }
        Ok(w.finish())
    }

    fn merge_partial(&mut self, partial: &[u8]) -> Result<(), String> {
        let mut r = PartialReader::new(partial, PARTIAL)?;
        let mut read: BTreeMap<String, StatsTable> = BTreeMap::new();
        for _ in 0..r.u64()? {
            let domain = r.str()?;
            r.table_into(read.entry(domain).or_default())?;
        }
        r.finish()?;
        for (domain, table) in read {
            let into = self.merged.entry(domain).or_default();
            for (name, series) in table.iter() {
                into.merge(name, series);
            }
        }
        Ok(())
    }
}

/// One context and buffer, buffer tracing for each kind the host supports.
fn trace_tolerantly(kinds: &[u32]) -> Result<(), String> {
    let options = BufferOptions::default();
    let context = profiler::create_context().context("create-context")?;
    let buffer = profiler::create_buffer(context, options.size, options.watermark, options.policy)
        .context("create-buffer")?;
    let mut traced = 0;
    for &kind in kinds {
        match profiler::configure_buffer_tracing(context, kind, &[], buffer) {
            Ok(()) => traced += 1,
            Err(status) => warn!(
                "api-stats: cannot trace {}: {}",
                buffer_kind_name(kind).unwrap_or("?"),
                status.name()
            ),
        }
    }
    if traced == 0 {
        return Err("api-stats: the host can trace none of the requested API kinds".to_string());
    }
    profiler::start_context(context).context("start-context")?;
    Ok(())
}

rocwasm_plugin_sdk::export_mergeable_analysis!(ApiStats);
