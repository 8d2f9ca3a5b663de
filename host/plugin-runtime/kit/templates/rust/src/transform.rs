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
        // Only what the test reads; the host applies the edits to every
        // column and passes the other tables on unchanged.
        kernel_dispatches::select(&["start", "end"]).context("delivery.select-columns")?;
        delivery::receive_only(&[kernel_dispatches::NAME]).context("delivery.select-columns")?;
        Ok(())
    }

    fn transform_batch(&mut self, _info: &DeliveryInfo, batch: &Batch, edits: &mut Edits) {
        let d = batch.kernel_dispatches();
        let keep: Vec<bool> = d
            .start
            .iter()
            .zip(d.end)
            .map(|(start, end)| end.saturating_sub(*start) >= self.min_ns)
            .collect();
        let kept = keep.iter().filter(|k| **k).count() as u64;
        self.kept += kept;
        self.dropped += keep.len() as u64 - kept;
        edits.keep(kernel_dispatches::TABLE, &keep);
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
