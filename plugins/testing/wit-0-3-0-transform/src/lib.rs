//! `wit-0-3-0-transform` (test plugin): a transform built against
//! `rocwasm:plugin@0.3.0` (`wit/legacy/0.3.0/`). It selects the kernel dispatches'
//! `correlation-id` only and answers edits: keep the dispatches of even
//! correlation id, and rewrite every dispatch's `stream-id` to its
//! correlation id (a column it never received). The host applies them to
//! the whole batch: every other column and table passes through.
//!
//! With the stage config `malformed = "true"` its bitmap is one byte short,
//! which the host must refuse as a malformed reply.

use std::cell::Cell;

use rocwasm_schema::packed::{self, AlignedCopy, Packed};
use rocwasm_schema::{ColumnRef, TableSchema};

wit_bindgen::generate!({
    path: "../../../wit/legacy/0.3.0",
    world: "rocwasm:plugin/transform-plugin@0.3.0",
});

use exports::rocwasm::plugin::lifecycle::Guest as Lifecycle;
use exports::rocwasm::plugin::transform::Guest as Transform;
use rocwasm::plugin::types::{BatchEdits, DeliveryInfo, SummaryTable, TableRows, ToolInfo};
use rocwasm::plugin::{config, delivery};

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
        delivery::select_columns("kernel-dispatches", &["correlation-id".to_string()])
            .map(|_| ())
            .map_err(|s| format!("select-columns: {s:?}"))
    }

    fn fini() -> Vec<SummaryTable> {
        Vec::new()
    }
}

impl Transform for Plugin {
    fn transform_batch(_info: DeliveryInfo, batch: Vec<u8>) -> BatchEdits {
        let copy = AlignedCopy::new(&batch);
        let p = Packed::parse(copy.bytes()).expect("a packed batch");
        let table = TableSchema::by_wit_name("kernel-dispatches").expect("the table");
        let corr_id = table.column("correlation-id").expect("the column").id;
        let Some(ColumnRef::U64(corr)) = p.column(table.id, corr_id) else {
            return BatchEdits {
                keep: Vec::new(),
                columns: Vec::new(),
            };
        };
        let mut bitmap = vec![0u8; corr.len().div_ceil(8)];
        for (i, c) in corr.iter().enumerate() {
            if c % 2 == 0 {
                bitmap[i / 8] |= 1 << (i % 8);
            }
        }
        if MALFORMED.get() {
            bitmap.pop();
        }
        let mut columns = Vec::new();
        packed::pack(
            &[packed::Column {
                table: table.id,
                column: table.column("stream-id").expect("the column").id,
                values: ColumnRef::U64(corr),
            }],
            &mut columns,
        );
        BatchEdits {
            keep: vec![TableRows {
                table: table.id,
                bitmap,
            }],
            columns,
        }
    }
}

export!(Plugin);
