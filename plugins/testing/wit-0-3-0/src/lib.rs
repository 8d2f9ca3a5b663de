//! `wit-0-3-0` (test plugin): an analysis built against
//! `rocwasm:plugin@0.3.0` (`wit/legacy/0.3.0/`), with wit-bindgen and the schema
//! crate's packed reader rather than the SDK (which still follows 0.2.0).
//!
//! In `init` it selects four kernel-dispatch columns (`correlation-id`,
//! `start`, `end`, `stream-id`) and checks the ids the host answers
//! against the schema's; a table the host does not have must be refused.
//! When the chain gives it no domains it traces `KERNEL_DISPATCH` into a
//! buffer of its own. Each delivery is read in place; `fini` returns one
//! table, "WIT 0.3.0 plugin", with the rows `batches`, `kernel-dispatches`,
//! `total-ns` (summed durations), `columns` (the most columns one batch
//! carried), `stream-is-correlation` (rows whose stream id equals their
//! correlation id: what `wit-0-3-0-transform` writes), `unaligned`
//! (deliveries copied before reading) and `unknown-table-refused`.

use std::cell::RefCell;

use rocwasm_schema::packed::{AlignedCopy, Packed, PackedError};
use rocwasm_schema::{ColumnRef, TableSchema};

wit_bindgen::generate!({
    path: "../../../wit/legacy/0.3.0",
    world: "rocwasm:plugin/analysis-plugin@0.3.0",
});

use exports::rocwasm::plugin::analysis::Guest as Analysis;
use exports::rocwasm::plugin::lifecycle::Guest as Lifecycle;
use rocwasm::plugin::types::{
    BufferPolicy, CallbackRecord, DeliveryInfo, ExternalCorrelationRequest, Status, SummaryTable,
    ToolInfo,
};
use rocwasm::plugin::{delivery, names, profiler};

/// The columns read, by WIT name.
const COLUMNS: [&str; 4] = ["correlation-id", "start", "end", "stream-id"];

#[derive(Default)]
struct Counts {
    batches: u64,
    dispatches: u64,
    total_ns: u64,
    columns: u64,
    stream_is_correlation: u64,
    unaligned: u64,
    unknown_table_refused: u64,
    /// The ids the host answered for [`COLUMNS`].
    ids: Vec<(u16, u16)>,
    own_buffer: bool,
}

thread_local! {
    static COUNTS: RefCell<Counts> = RefCell::new(Counts::default());
}

struct Plugin;

impl Lifecycle for Plugin {
    fn configure(info: ToolInfo) -> bool {
        COUNTS.with_borrow_mut(|c| c.own_buffer = info.domains.is_empty());
        true
    }

    fn init() -> Result<(), String> {
        let names: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
        let ids = delivery::select_columns("kernel-dispatches", &names)
            .map_err(|s| format!("select-columns: {s:?}"))?;
        let schema = TableSchema::by_wit_name("kernel-dispatches").ok_or("no schema table")?;
        for (id, name) in ids.iter().zip(COLUMNS) {
            let want = schema.column(name).ok_or("no schema column")?;
            if (id.table, id.column) != (schema.id, want.id) {
                return Err(format!("the host answered {id:?} for {name}"));
            }
        }
        let refused = matches!(
            delivery::select_columns("no-such-table", &[]),
            Err(Status::InvalidArgument)
        );
        COUNTS.with_borrow_mut(|c| {
            c.ids = ids.iter().map(|i| (i.table, i.column)).collect();
            c.unknown_table_refused = u64::from(refused);
        });
        if !COUNTS.with_borrow(|c| c.own_buffer) {
            return Ok(());
        }
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
        COUNTS.with_borrow(|c| {
            vec![SummaryTable {
                title: "WIT 0.3.0 plugin".into(),
                columns: vec!["What".into(), "Count".into()],
                rows: vec![
                    row("batches", c.batches),
                    row("kernel-dispatches", c.dispatches),
                    row("total-ns", c.total_ns),
                    row("columns", c.columns),
                    row("stream-is-correlation", c.stream_is_correlation),
                    row("unaligned", c.unaligned),
                    row("unknown-table-refused", c.unknown_table_refused),
                ],
            }]
        })
    }
}

fn u64s<'a>(p: &Packed<'a>, (table, column): (u16, u16)) -> &'a [u64] {
    match p.column(table, column) {
        Some(ColumnRef::U64(v)) => v,
        _ => &[],
    }
}

fn read(bytes: &[u8], c: &mut Counts) {
    let copy;
    let p = match Packed::parse(bytes) {
        Ok(p) => p,
        Err(PackedError::Unaligned) => {
            c.unaligned += 1;
            copy = AlignedCopy::new(bytes);
            Packed::parse(copy.bytes()).expect("a packed batch")
        }
        Err(e) => panic!("wit-0-3-0: {e}"),
    };
    c.columns = c.columns.max(p.len() as u64);
    let [corr, start, end, stream] = [0, 1, 2, 3].map(|i| u64s(&p, c.ids[i]));
    c.dispatches += corr.len() as u64;
    c.total_ns += start
        .iter()
        .zip(end)
        .map(|(s, e)| e.saturating_sub(*s))
        .sum::<u64>();
    c.stream_is_correlation += corr.iter().zip(stream).filter(|(a, b)| a == b).count() as u64;
}

impl Analysis for Plugin {
    fn deliver_batch(_info: DeliveryInfo, batch: Vec<u8>) {
        COUNTS.with_borrow_mut(|c| {
            c.batches += 1;
            read(&batch, c);
        });
    }

    fn on_callback(_record: CallbackRecord, user_data: u64) -> u64 {
        user_data
    }

    fn on_external_correlation_request(_request: ExternalCorrelationRequest) -> Option<u64> {
        None
    }
}

export!(Plugin);
