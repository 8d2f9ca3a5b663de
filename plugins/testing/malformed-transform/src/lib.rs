//! `malformed-transform` (test plugin): a transform whose reply is
//! malformed — one column of a table shorter than the others — on every
//! batch (or only from its `after`-th batch on, 1-based, config key `after`).
//!
//! The reply rewrites `external-correlation-id` of the first non-empty
//! table among kernel dispatches, API calls and memory copies with one
//! value fewer than the table has rows; a batch with none of those passes
//! unchanged. The host must refuse the
//! reply (a `malformed reply` failure) and pass the stage's input on.

use rocwasm_plugin_sdk::prelude::*;

#[derive(Default)]
struct MalformedTransform {
    batches: u64,
    after: u64,
}

/// Replaces one column of the first non-empty table with one value too
/// few; false if no table has rows.
fn cut(batch: &Batch, edits: &mut Edits) -> bool {
    let cuts = [
        (
            kernel_dispatches::external_correlation_id,
            batch.kernel_dispatches().len(),
        ),
        (api_calls::external_correlation_id, batch.api_calls().len()),
        (
            memory_copies::external_correlation_id,
            batch.memory_copies().len(),
        ),
    ];
    match cuts.into_iter().find(|(_, rows)| *rows > 0) {
        Some((column, rows)) => {
            edits.set(column, vec![0u64; rows - 1]);
            true
        }
        None => false,
    }
}

impl TransformPlugin for MalformedTransform {
    fn init(&mut self) -> Result<(), String> {
        self.after = config::get_or("after", 1u64)?.max(1);
        Ok(())
    }

    fn transform_batch(&mut self, _info: &DeliveryInfo, batch: &Batch, edits: &mut Edits) {
        self.batches += 1;
        if self.batches >= self.after {
            cut(batch, edits);
        }
    }
}

rocwasm_plugin_sdk::export_transform!(MalformedTransform);
