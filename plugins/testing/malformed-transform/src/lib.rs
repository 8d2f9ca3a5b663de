//! `malformed-transform` (test plugin): a transform whose reply is
//! malformed — one column of a table shorter than the others — on every
//! batch (or only from its `after`-th batch on, 1-based, config key `after`).
//!
//! The column cut is the last `external-correlation-id` of the first
//! non-empty table among kernel dispatches, API calls and memory copies; a
//! batch with none of those passes unchanged. The host must refuse the
//! reply (a `malformed reply` failure) and pass the stage's input on.

use rocwasm_plugin_sdk::prelude::*;

#[derive(Default)]
struct MalformedTransform {
    batches: u64,
    after: u64,
}

/// Cuts one column of the first non-empty table; false if none was cut.
fn cut(batch: &mut Batch) -> bool {
    if batch
        .kernel_dispatches
        .external_correlation_id
        .pop()
        .is_some()
    {
        return true;
    }
    if batch.api_calls.external_correlation_id.pop().is_some() {
        return true;
    }
    batch.memory_copies.external_correlation_id.pop().is_some()
}

impl TransformPlugin for MalformedTransform {
    fn init(&mut self) -> Result<(), String> {
        self.after = config::get_or("after", 1u64)?.max(1);
        Ok(())
    }

    fn transform_batch(&mut self, _info: &DeliveryInfo, mut batch: Batch) -> Batch {
        self.batches += 1;
        if self.batches >= self.after {
            cut(&mut batch);
        }
        batch
    }
}

rocwasm_plugin_sdk::export_transform!(MalformedTransform);
