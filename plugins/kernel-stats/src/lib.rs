//! `kernel-stats`: per-kernel duration statistics, as rocprofv3 `--stats`
//! prints them.
//!
//! For every kernel name: `Calls`, `TotalDurationNs`, `AverageNs`,
//! `Percentage` (of all kernels' total), `MinNs`, `MaxNs`, `StdDev` (sample),
//! sorted by total duration, largest first. Returned from `fini` as the
//! summary table "Kernel dispatch statistics", and written as
//! `kernel_stats.csv` through the host's `output` interface when the stage
//! has an output grant (`output::write_result`: without one, no file and no
//! warning).
//!
//! Records: kernel dispatches. When the stage names `domains` in the chain
//! file the host delivers those; when it names none, the plugin sets up its
//! own context, buffer and `KERNEL_DISPATCH` buffer tracing in `init`.
//!
//! Only `kernel_id`, `start` and `end` are read, so `init` selects just those
//! columns of kernel dispatches and no other table (`delivery.select-columns`):
//! the host packs 24 bytes per dispatch into the plugin's batch instead of
//! ~128, and the SDK reads them in place. Kernel names are asked from the host once,
//! in `fini`, for the kernels seen.
//!
//! Config keys: `file` (default `kernel_stats.csv`; empty string = no file);
//! `project` (default `true`; `false` receives every column, which only the
//! delivery benchmark wants, for comparison).
//!
//! The same kernel on two agents (or reloaded) has two kernel ids and one
//! name: rows are per *name*, as in rocprofv3.
//!
//! Its results merge (world `mergeable-analysis-plugin`): a partial is the
//! table by kernel name (names, not ids: ids are per process), and merging
//! adds the exact sums of each name's series, so any split of a trace and
//! any order of merges gives the single pass's table.

mod aggregate;

use rocwasm_plugin_sdk::prelude::*;

use aggregate::KernelAggregate;

#[derive(Default)]
struct KernelStats {
    self_configure: bool,
    file: String,
    names: KernelNames,
    by_kernel: KernelAggregate,
    /// What merged partials added, by kernel name.
    merged: StatsTable,
}

/// The partial result's format.
const PARTIAL: &str = "kernel-stats/1";

impl KernelStats {
    /// Every dispatch this instance saw or merged, by kernel name.
    fn table(&mut self) -> StatsTable {
        self.names.resolve(self.by_kernel.ids());
        let mut table = self.by_kernel.by_name(|id| self.names.name(id).to_string());
        for (name, series) in self.merged.iter() {
            table.merge(name, series);
        }
        table
    }
}

impl AnalysisPlugin for KernelStats {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.self_configure = info.domains.is_empty();
        if !self.self_configure && !info.domains.contains(&buffer::KERNEL_DISPATCH) {
            warn!("kernel-stats: the stage's domains do not include KERNEL_DISPATCH; it will see no kernels");
        }
        true
    }

    fn init(&mut self) -> Result<(), String> {
        self.file = config::get_or("file", "kernel_stats.csv".to_string())?;
        if config::get_bool("project", true)? {
            kernel_dispatches::select(&aggregate::COLUMNS).context("delivery.select-columns")?;
            delivery::receive_only(&[kernel_dispatches::NAME])
                .context("delivery.select-columns")?;
        }
        if self.self_configure {
            services::trace_buffers(&[buffer::KERNEL_DISPATCH])?;
        }
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        self.by_kernel.add(batch.kernel_dispatches());
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let table = self.table();
        info!(
            "kernel-stats: {} dispatches of {} kernels",
            table.iter().map(|(_, s)| s.count()).sum::<u64>(),
            table.len()
        );
        if !self.file.is_empty() {
            output::write_result("kernel-stats", &self.file, table.to_csv());
        }
        vec![table.to_summary("Kernel dispatch statistics")]
    }
}

impl MergeablePlugin for KernelStats {
    fn take_partial(&mut self) -> Result<Vec<u8>, String> {
        let mut w = PartialWriter::new(PARTIAL);
        w.table(&self.table());
        Ok(w.finish())
    }

    fn merge_partial(&mut self, partial: &[u8]) -> Result<(), String> {
        let mut r = PartialReader::new(partial, PARTIAL)?;
        let mut table = StatsTable::new();
        r.table_into(&mut table)?;
        r.finish()?;
        for (name, series) in table.iter() {
            self.merged.merge(name, series);
        }
        Ok(())
    }
}

rocwasm_plugin_sdk::export_mergeable_analysis!(KernelStats);
