//! `wit-0-2-0-transform` (test plugin): a transform built against
//! `rocwasm:plugin@0.2.0` (`wit/legacy/0.2.0/`), the version the SDK built
//! before 0.3.0, with raw
//! wit-bindgen: what a 0.2.0 transform binary in a registry does. It does
//! what `wit-0-3-0-transform` does, the 0.2.0 way (the whole batch in, the
//! whole batch out): keeps the kernel dispatches of even correlation id and
//! sets each kept dispatch's `stream-id` to its correlation id; every other
//! table passes through.
//!
//! With the stage config `malformed = "true"` its reply's dispatch table has
//! one `stream-id` fewer than it has rows, which the host must refuse as a
//! malformed reply.

use std::cell::Cell;

wit_bindgen::generate!({
    path: "../../../wit/legacy/0.2.0",
    world: "rocwasm:plugin/transform-plugin@0.2.0",
});

use exports::rocwasm::plugin::lifecycle::Guest as Lifecycle;
use exports::rocwasm::plugin::transform::Guest as Transform;
use rocwasm::plugin::config;
use rocwasm::plugin::types::{Batch, DeliveryInfo, SummaryTable, ToolInfo};

thread_local! {
    static MALFORMED: Cell<bool> = const { Cell::new(false) };
}

struct Plugin;

impl Lifecycle for Plugin {
    fn configure(_info: ToolInfo) -> bool {
        true
    }

    fn init() -> Result<(), String> {
        MALFORMED.set(config::get("malformed").as_deref() == Some("true"));
        Ok(())
    }

    fn fini() -> Vec<SummaryTable> {
        Vec::new()
    }
}

/// Keeps `v[i]` where `keep[i]`.
fn retain<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().unwrap_or(&false));
}

impl Transform for Plugin {
    fn transform_batch(_info: DeliveryInfo, mut batch: Batch) -> Batch {
        let d = &mut batch.kernel_dispatches;
        let keep: Vec<bool> = d.correlation_id.iter().map(|c| c % 2 == 0).collect();
        retain(&mut d.correlation_id, &keep);
        retain(&mut d.external_correlation_id, &keep);
        retain(&mut d.thread_id, &keep);
        retain(&mut d.start, &keep);
        retain(&mut d.end, &keep);
        retain(&mut d.agent_id, &keep);
        retain(&mut d.queue_id, &keep);
        retain(&mut d.kernel_id, &keep);
        retain(&mut d.dispatch_id, &keep);
        retain(&mut d.private_segment_size, &keep);
        retain(&mut d.group_segment_size, &keep);
        retain(&mut d.workgroup_x, &keep);
        retain(&mut d.workgroup_y, &keep);
        retain(&mut d.workgroup_z, &keep);
        retain(&mut d.grid_x, &keep);
        retain(&mut d.grid_y, &keep);
        retain(&mut d.grid_z, &keep);
        d.stream_id = d.correlation_id.clone();
        if MALFORMED.get() {
            d.stream_id.pop();
        }
        batch
    }
}

export!(Plugin);
