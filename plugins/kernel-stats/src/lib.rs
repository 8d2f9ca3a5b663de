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

mod aggregate;

use rocwasm_plugin_sdk::prelude::*;

use aggregate::KernelAggregate;

#[derive(Default)]
struct KernelStats {
    self_configure: bool,
    file: String,
    names: KernelNames,
    by_kernel: KernelAggregate,
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
        self.names.resolve(self.by_kernel.ids());
        let table = self.by_kernel.by_name(|id| self.names.name(id).to_string());
        info!(
            "kernel-stats: {} dispatches of {} kernels",
            self.by_kernel.count(),
            table.len()
        );
        if !self.file.is_empty() {
            output::write_result("kernel-stats", &self.file, table.to_csv());
        }
        vec![table.to_summary("Kernel dispatch statistics")]
    }
}

rocwasm_plugin_sdk::export_analysis!(KernelStats);
