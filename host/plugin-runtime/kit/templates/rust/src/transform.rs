//! `{{name}}`: a transform that keeps kernel dispatches of at least
//! `min-ns` nanoseconds (config key, default 0: keep all) and passes every
//! other record through. Later stages and the host's outputs see only what
//! it keeps.
//!
//! Returns one summary table, "Kernel dispatches" (columns `Kept`,
//! `Dropped`).

use rocwasm_plugin_sdk::prelude::*;

#[derive(Default)]
struct Plugin {
    min_ns: u64,
    kept: u64,
    dropped: u64,
}

impl TransformPlugin for Plugin {
    fn init(&mut self) -> Result<(), String> {
        self.min_ns = config::get_or("min-ns", 0)?;
        Ok(())
    }

    fn transform_batch(&mut self, _info: &DeliveryInfo, mut batch: Batch) -> Batch {
        let before = batch.kernel_dispatches.len() as u64;
        let min_ns = self.min_ns;
        batch
            .kernel_dispatches
            .retain(|d| d.end.saturating_sub(d.start) >= min_ns);
        let after = batch.kernel_dispatches.len() as u64;
        self.kept += after;
        self.dropped += before - after;
        batch
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        vec![SummaryTable {
            title: "Kernel dispatches".into(),
            columns: vec!["Kept".into(), "Dropped".into()],
            rows: vec![vec![self.kept.to_string(), self.dropped.to_string()]],
        }]
    }
}

rocwasm_plugin_sdk::export_transform!(Plugin);
