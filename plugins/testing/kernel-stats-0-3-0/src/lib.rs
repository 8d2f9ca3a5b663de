//! `kernel-stats-0-3-0` (test and bench plugin): what `kernel-stats` does,
//! built against `rocwasm:plugin@0.3.0` (`wit/legacy/0.3.0/`) with raw wit-bindgen and
//! the schema crate's packed reader, without the Rust SDK: what the SDK's
//! layer costs is the difference between the two.
//!
//! It selects the kernel dispatches' `kernel-id`, `start` and `end`, adds
//! each batch's durations per kernel id with `rocwasm-stats`' `IdSums`
//! (kernel-stats' own loop) over the three columns read in place (no copy
//! when the buffer is 8-aligned, which the guest's allocator makes it),
//! and returns kernel-stats' table, "Kernel dispatch statistics", from
//! `fini`, kernels named through `symbols.kernel-names`. With no chain
//! domains it traces `KERNEL_DISPATCH` into a buffer of its own.
//!
//! The deliver bench times it against `kernel-stats` (the SDK's build, and
//! the 0.2.0 build in `plugins/testing/fixtures/`) and the native loop; a
//! test checks that its table equals kernel-stats'.

use std::cell::RefCell;

use rocwasm_schema::packed::{AlignedCopy, Packed, PackedError};
use rocwasm_schema::ColumnRef;
use rocwasm_stats::{IdSums, COLUMNS};

wit_bindgen::generate!({
    path: "../../../wit/legacy/0.3.0",
    world: "rocwasm:plugin/analysis-plugin@0.3.0",
});

use exports::rocwasm::plugin::analysis::Guest as Analysis;
use exports::rocwasm::plugin::lifecycle::Guest as Lifecycle;
use rocwasm::plugin::types::{
    BufferPolicy, CallbackRecord, DeliveryInfo, ExternalCorrelationRequest, SummaryTable, ToolInfo,
};
use rocwasm::plugin::{delivery, names, profiler, symbols};

#[derive(Default)]
struct State {
    own_buffer: bool,
    /// The ids of `kernel-id`, `start` and `end`, as the host answered.
    ids: [(u16, u16); 3],
    by_kernel: IdSums,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

struct Plugin;

impl Lifecycle for Plugin {
    fn configure(info: ToolInfo) -> bool {
        STATE.with_borrow_mut(|s| s.own_buffer = info.domains.is_empty());
        true
    }

    fn init() -> Result<(), String> {
        let wanted = ["kernel-id", "start", "end"].map(String::from);
        let ids = delivery::select_columns("kernel-dispatches", &wanted)
            .map_err(|s| format!("select-columns: {s:?}"))?;
        let [k, s, e] = <[_; 3]>::try_from(ids).map_err(|_| "select-columns: not 3 ids")?;
        STATE.with_borrow_mut(|st| {
            st.ids = [
                (k.table, k.column),
                (s.table, s.column),
                (e.table, e.column),
            ];
        });
        if !STATE.with_borrow(|s| s.own_buffer) {
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
        STATE.with_borrow(|s| {
            let ids = s.by_kernel.ids().to_vec();
            let names = symbols::kernel_names(&ids);
            let name_of = |id: u64| {
                ids.iter()
                    .position(|&i| i == id)
                    .map(|p| names[p].clone())
                    .unwrap_or_default()
            };
            let table = s.by_kernel.to_table(name_of);
            vec![SummaryTable {
                title: "Kernel dispatch statistics".into(),
                columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
                rows: table.rows().iter().map(|r| r.cells().to_vec()).collect(),
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

fn add(bytes: &[u8], s: &mut State) {
    let copy;
    let p = match Packed::parse(bytes) {
        Ok(p) => p,
        Err(PackedError::Unaligned) => {
            copy = AlignedCopy::new(bytes);
            Packed::parse(copy.bytes()).expect("a packed batch")
        }
        Err(e) => panic!("kernel-stats-0-3-0: {e}"),
    };
    let [k, start, end] = s.ids.map(|id| u64s(&p, id));
    s.by_kernel.add_durations(k, start, end);
}

impl Analysis for Plugin {
    fn deliver_batch(_info: DeliveryInfo, batch: Vec<u8>) {
        STATE.with_borrow_mut(|s| add(&batch, s));
    }

    fn on_callback(_record: CallbackRecord, user_data: u64) -> u64 {
        user_data
    }

    fn on_external_correlation_request(_request: ExternalCorrelationRequest) -> Option<u64> {
        None
    }
}

export!(Plugin);
