//! `wit-0-3-1` (test plugin): a mergeable analysis built against
//! `rocwasm:plugin@0.3.1` (`wit/legacy/0.3.1/`) with raw wit-bindgen, so
//! that the host keeps loading 0.3.1 components once the current package
//! has moved on: its `run` import and `merge` export are 0.3.1's.
//!
//! It selects the kernel dispatches' `correlation-id` and counts the rows
//! of each delivery; it asks `run.describe-process` for each delivery's
//! process and counts the answers naming a command. `take-partial` gives
//! its two counts (16 bytes, little-endian), `merge-partial` adds another
//! instance's. `fini` returns one table, "WIT 0.3.1 plugin", with the rows
//! `kernel-dispatches`, `described` and `partials-merged`.

use std::cell::RefCell;

use rocwasm_schema::packed::{AlignedCopy, Packed, PackedError};

wit_bindgen::generate!({
    path: "../../../wit/legacy/0.3.1",
    world: "rocwasm:plugin/mergeable-analysis-plugin@0.3.1",
});

use exports::rocwasm::plugin::analysis::Guest as Analysis;
use exports::rocwasm::plugin::lifecycle::Guest as Lifecycle;
use exports::rocwasm::plugin::merge::Guest as Merge;
use rocwasm::plugin::types::{
    CallbackRecord, DeliveryInfo, ExternalCorrelationRequest, SummaryTable, ToolInfo,
};
use rocwasm::plugin::{delivery, run};

#[derive(Default)]
struct Counts {
    dispatches: u64,
    described: u64,
    merged: u64,
    id: (u16, u16),
}

thread_local! {
    static COUNTS: RefCell<Counts> = RefCell::new(Counts::default());
}

struct Plugin;

impl Lifecycle for Plugin {
    fn configure(_info: ToolInfo) -> bool {
        true
    }

    fn init() -> Result<(), String> {
        let ids = delivery::select_columns("kernel-dispatches", &["correlation-id".to_string()])
            .map_err(|s| format!("select-columns: {s:?}"))?;
        let id = ids.first().ok_or("no column id")?;
        COUNTS.with_borrow_mut(|c| c.id = (id.table, id.column));
        Ok(())
    }

    fn fini() -> Vec<SummaryTable> {
        let row = |name: &str, n: u64| vec![name.to_string(), n.to_string()];
        COUNTS.with_borrow(|c| {
            vec![SummaryTable {
                title: "WIT 0.3.1 plugin".into(),
                columns: vec!["What".into(), "Count".into()],
                rows: vec![
                    row("kernel-dispatches", c.dispatches),
                    row("described", c.described),
                    row("partials-merged", c.merged),
                ],
            }]
        })
    }
}

impl Analysis for Plugin {
    fn deliver_batch(info: DeliveryInfo, batch: Vec<u8>) {
        let described = run::describe_process(&info.process).is_some_and(|d| !d.command.is_empty());
        COUNTS.with_borrow_mut(|c| {
            let copy;
            let p = match Packed::parse(&batch) {
                Ok(p) => p,
                Err(PackedError::Unaligned) => {
                    copy = AlignedCopy::new(&batch);
                    Packed::parse(copy.bytes()).expect("a packed batch")
                }
                Err(e) => panic!("wit-0-3-1: {e}"),
            };
            c.dispatches += p.column(c.id.0, c.id.1).map_or(0, |v| v.len()) as u64;
            c.described += u64::from(described);
        });
    }

    fn on_callback(_record: CallbackRecord, user_data: u64) -> u64 {
        user_data
    }

    fn on_external_correlation_request(_request: ExternalCorrelationRequest) -> Option<u64> {
        None
    }
}

impl Merge for Plugin {
    fn take_partial() -> Result<Vec<u8>, String> {
        COUNTS.with_borrow(|c| {
            let mut out = c.dispatches.to_le_bytes().to_vec();
            out.extend_from_slice(&c.described.to_le_bytes());
            Ok(out)
        })
    }

    fn merge_partial(partial: Vec<u8>) -> Result<(), String> {
        let (a, b) = partial
            .split_at_checked(8)
            .filter(|(_, b)| b.len() == 8)
            .ok_or("a partial is 16 bytes")?;
        let n = |x: &[u8]| u64::from_le_bytes(x.try_into().unwrap_or_default());
        COUNTS.with_borrow_mut(|c| {
            c.dispatches += n(a);
            c.described += n(b);
            c.merged += 1;
        });
        Ok(())
    }
}

export!(Plugin);
