//! `wit-0-1-0` (test plugin): an analysis built against the frozen WIT
//! package `rocwasm:plugin@0.1.0` (`wit/legacy/0.1.0/`), as a plugin
//! written before 0.2.0 and never rebuilt would be. The host must keep
//! loading it: its imports are linked under their 0.1.0 names and its
//! exports called with 0.1.0's `delivery-info` (no process).
//!
//! It uses wit-bindgen directly, not the SDK (which follows the current
//! package). In `init` it finds `KERNEL_DISPATCH` through the `names`
//! import and traces it into one buffer (through `profiler`); `fini`
//! returns one table, "WIT 0.1.0 plugin", with the rows `batches`,
//! `kernel-dispatches` (rows delivered) and `drop-count` (summed).

use std::cell::Cell;

wit_bindgen::generate!({
    path: "../../../wit/legacy/0.1.0",
    world: "rocwasm:plugin/analysis-plugin@0.1.0",
});

use exports::rocwasm::plugin::analysis::Guest as Analysis;
use exports::rocwasm::plugin::lifecycle::Guest as Lifecycle;
use rocwasm::plugin::types::{
    Batch, BufferPolicy, CallbackRecord, DeliveryInfo, ExternalCorrelationRequest, SummaryTable,
    ToolInfo,
};
use rocwasm::plugin::{names, profiler};

thread_local! {
    static BATCHES: Cell<u64> = const { Cell::new(0) };
    static DISPATCHES: Cell<u64> = const { Cell::new(0) };
    static DROPPED: Cell<u64> = const { Cell::new(0) };
}

struct Plugin;

impl Lifecycle for Plugin {
    fn configure(_info: ToolInfo) -> bool {
        true
    }

    fn init() -> Result<(), String> {
        let kind = names::buffer_kinds()
            .into_iter()
            .find(|&k| names::buffer_kind_name(k).as_deref() == Some("KERNEL_DISPATCH"))
            .ok_or("the host names no KERNEL_DISPATCH buffer kind")?;
        let context = profiler::create_context().map_err(|s| format!("create-context: {s:?}"))?;
        let buffer = profiler::create_buffer(context, 1 << 20, 1 << 19, BufferPolicy::Lossless)
            .map_err(|s| format!("create-buffer: {s:?}"))?;
        profiler::configure_buffer_tracing(context, kind, &[], buffer)
            .map_err(|s| format!("configure-buffer-tracing: {s:?}"))?;
        profiler::start_context(context).map_err(|s| format!("start-context: {s:?}"))
    }

    fn fini() -> Vec<SummaryTable> {
        let row = |name: &str, n: u64| vec![name.to_string(), n.to_string()];
        vec![SummaryTable {
            title: "WIT 0.1.0 plugin".into(),
            columns: vec!["What".into(), "Count".into()],
            rows: vec![
                row("batches", BATCHES.get()),
                row("kernel-dispatches", DISPATCHES.get()),
                row("drop-count", DROPPED.get()),
            ],
        }]
    }
}

impl Analysis for Plugin {
    fn deliver_batch(info: DeliveryInfo, batch: Batch) {
        BATCHES.set(BATCHES.get() + 1);
        DISPATCHES.set(DISPATCHES.get() + batch.kernel_dispatches.start.len() as u64);
        DROPPED.set(DROPPED.get() + info.drop_count);
    }

    fn on_callback(_record: CallbackRecord, user_data: u64) -> u64 {
        user_data
    }

    fn on_external_correlation_request(_request: ExternalCorrelationRequest) -> Option<u64> {
        None
    }
}

export!(Plugin);
