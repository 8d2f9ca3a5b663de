//! `memcpy-bandwidth`: how much the application copied, how long it took,
//! and at what rate — per copy direction and per (source, destination) agent
//! pair.
//!
//! Columns: `Copies`, `Bytes`, `TotalDurationNs` (sum of copy durations),
//! `AverageDurationNs`, `BandwidthGBps` = bytes / total duration (decimal
//! GB/s, i.e. bytes per nanosecond), `PeakBandwidthGBps` = the fastest single
//! copy. Copies that overlap in time each count their own duration, so
//! `BandwidthGBps` is the mean per-copy rate, not the link's aggregate. A
//! copy with zero duration adds bytes but no rate. Rows are sorted by bytes,
//! largest first.
//!
//! Files (when the stage has an output grant):
//! `memcpy_bandwidth_by_direction.csv` (`Direction`, …) and
//! `memcpy_bandwidth_by_agents.csv` (`SrcAgent`, `DstAgent`, …); the same two
//! tables are returned from `fini`. Agents are labelled `GPU 1 (gfx90a)`,
//! `CPU 0` from the host's agent table.
//!
//! When the stage names no `domains`, `init` sets up `MEMORY_COPY` buffer
//! tracing itself. No config keys.
//!
//! Its results merge (world `mergeable-analysis-plugin`): a partial holds
//! the groups by direction and by agent *labels* (agent ids are per
//! process), merged by exact sums, byte counts and the peak's maximum.

mod bandwidth;

use std::collections::HashMap;

use rocwasm_plugin_sdk::prelude::*;
use rocwasm_plugin_sdk::symbols;

use bandwidth::Bandwidth;

#[derive(Default)]
struct MemcpyBandwidth {
    self_configure: bool,
    copies: Bandwidth,
}

impl AnalysisPlugin for MemcpyBandwidth {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.self_configure = info.domains.is_empty();
        true
    }

    fn init(&mut self) -> Result<(), String> {
        // What `Bandwidth::add` reads, and no other table.
        memory_copies::select(&[
            "operation",
            "start",
            "end",
            "bytes",
            "src_agent_id",
            "dst_agent_id",
        ])
        .context("delivery.select-columns")?;
        delivery::receive_only(&[memory_copies::NAME]).context("delivery.select-columns")?;
        if self.self_configure {
            services::trace_buffers(&[buffer::MEMORY_COPY])?;
        }
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        for copy in batch.memory_copies().iter() {
            self.copies.add(&copy);
        }
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let mut label = labeller();
        let tables = [
            (
                "memcpy_bandwidth_by_direction.csv",
                self.copies.by_direction_table(),
            ),
            (
                "memcpy_bandwidth_by_agents.csv",
                self.copies.by_agents_table(&mut label),
            ),
        ];
        for (file, table) in &tables {
            output::write_result("memcpy-bandwidth", file, table.to_csv());
        }
        tables.into_iter().map(|(_, t)| t).collect()
    }
}

/// Agent labels (`GPU 1 (gfx90a)`) from the host, one lookup per agent.
fn labeller() -> impl FnMut(u64) -> String {
    let mut labels = HashMap::new();
    move |id: u64| {
        labels
            .entry(id)
            .or_insert_with(|| symbols::agent_label(id))
            .clone()
    }
}

impl MergeablePlugin for MemcpyBandwidth {
    fn take_partial(&mut self) -> Result<Vec<u8>, String> {
        Ok(self.copies.take_partial(labeller()))
    }

    fn merge_partial(&mut self, partial: &[u8]) -> Result<(), String> {
        self.copies.merge_partial(partial)
    }
}

rocwasm_plugin_sdk::export_mergeable_analysis!(MemcpyBandwidth);
