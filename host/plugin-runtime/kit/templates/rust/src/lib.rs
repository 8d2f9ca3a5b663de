//! `{{name}}`: how many kernel dispatches, and their total GPU time.
//!
//! Returns one summary table, "Kernel dispatches" (columns `Dispatches`,
//! `TotalNs`: the sum of `end - start`, 0 for a reversed record). Only
//! `start` and `end` are read, so `init` asks the host for just those
//! columns of kernel dispatches, and no other table: the batch then holds
//! those two columns, read in place. When the chain stage names no `domains`, the plugin traces
//! kernel dispatches on a context of its own.
//!
//! Its results merge (`MergeablePlugin`): a replay spread over many
//! processes runs one instance per part of the trace and adds their
//! counts. `rocwasm plugin test` checks that any split and any order of
//! merges gives the table of one pass.

use rocwasm_plugin_sdk::prelude::*;

#[derive(Default)]
struct Plugin {
    self_configure: bool,
    dispatches: u64,
    total_ns: u64,
}

impl AnalysisPlugin for Plugin {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.self_configure = info.domains.is_empty();
        true
    }

    fn init(&mut self) -> Result<(), String> {
        kernel_dispatches::select(&["start", "end"]).context("delivery.select-columns")?;
        delivery::receive_only(&[kernel_dispatches::NAME]).context("delivery.select-columns")?;
        if self.self_configure {
            services::trace_buffers(&[buffer::KERNEL_DISPATCH])?;
        }
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        let d = batch.kernel_dispatches();
        for (start, end) in d.start.iter().zip(d.end) {
            self.dispatches += 1;
            self.total_ns += end.saturating_sub(*start);
        }
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        vec![SummaryTable {
            title: "Kernel dispatches".into(),
            columns: vec!["Dispatches".into(), "TotalNs".into()],
            rows: vec![vec![self.dispatches.to_string(), self.total_ns.to_string()]],
        }]
    }
}

/// The format of this plugin's partial results (bump it when they change).
const PARTIAL: &str = "{{name}}/1";

impl MergeablePlugin for Plugin {
    fn take_partial(&mut self) -> Result<Vec<u8>, String> {
        let mut w = PartialWriter::new(PARTIAL);
        w.u64(self.dispatches);
        w.u64(self.total_ns);
        Ok(w.finish())
    }

    fn merge_partial(&mut self, partial: &[u8]) -> Result<(), String> {
        let mut r = PartialReader::new(partial, PARTIAL)?;
        let (dispatches, total_ns) = (r.u64()?, r.u64()?);
        r.finish()?;
        self.dispatches += dispatches;
        self.total_ns += total_ns;
        Ok(())
    }
}

rocwasm_plugin_sdk::export_mergeable_analysis!(Plugin);
