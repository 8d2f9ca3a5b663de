//! Columnar batches: what a buffer delivers and what crosses into a plugin.
//!
//! Why columns: lowering a `list<record>` into a Wasm component costs 35–50 ns
//! per record with wasmtime 48 (every field is stored separately), a record of
//! `list<u64>` columns about 1 ns. So a [`Batch`] is a struct of column tables,
//! one table per record family, each table a struct of `Vec`s of equal length.
//! The WIT `batch` record (`wit/types.wit`) has exactly the same shape, so the
//! host hands these vectors to the component without per-record work.
//!
//! Each table also has a row type (`ApiCall`, `KernelDispatch`, …) for code
//! that thinks in records: producers, tests, replay readers and output sinks.
//! Rows within one table keep the order in which they were produced.

use rocwasm_ids::ops::{allocation, copy, runtime_init, scratch};
use rocwasm_schema::{ColumnMut, ColumnRef, Element};
use serde::{Deserialize, Serialize};

/// Declares a row struct and its column table with push/row/len/retain.
macro_rules! columns {
    (
        $(#[$meta:meta])*
        $row:ident / $table:ident {
            $($(#[$fmeta:meta])* $field:ident : $ty:ty,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
        pub struct $row {
            $($(#[$fmeta])* pub $field: $ty,)+
        }

        #[doc = concat!("Columns of [`", stringify!($row), "`] rows; every column has the same length.")]
        #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct $table {
            $($(#[$fmeta])* pub $field: Vec<$ty>,)+
        }

        impl $table {
            /// Column names, in declaration order (as in the WIT record).
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($field),)+];

            /// An empty table with room for `n` rows in every column.
            pub fn with_capacity(n: usize) -> Self {
                Self { $($field: Vec::with_capacity(n),)+ }
            }

            /// Number of rows (the length of the first column; see
            /// [`Self::is_consistent`]).
            pub fn len(&self) -> usize {
                first_len!($(self.$field),+)
            }

            /// True when the table has no rows.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// True when every column has the same length (always, unless a
            /// caller built the table by hand, e.g. from a plugin's reply).
            pub fn is_consistent(&self) -> bool {
                let n = self.len();
                true $(&& self.$field.len() == n)+
            }

            /// Appends one row, one value to each column.
            pub fn push(&mut self, row: $row) {
                $(self.$field.push(row.$field);)+
            }

            /// The row at `i`. Panics when `i >= len()`, like slice indexing.
            pub fn row(&self, i: usize) -> $row {
                $row { $($field: self.$field[i],)+ }
            }

            /// Every row, in production order.
            pub fn rows(&self) -> impl ExactSizeIterator<Item = $row> + '_ {
                (0..self.len()).map(move |i| self.row(i))
            }

            /// Keeps the rows for which `keep` returns true, preserving order.
            pub fn retain(&mut self, mut keep: impl FnMut(&$row) -> bool) {
                let mask: Vec<bool> = self.rows().map(|r| keep(&r)).collect();
                $(
                    let mut it = mask.iter();
                    self.$field.retain(|_| *it.next().unwrap());
                )+
            }

            /// Appends all rows of `other`.
            pub fn append(&mut self, other: &mut Self) {
                $(self.$field.append(&mut other.$field);)+
            }

            /// Removes every row, keeping the columns' capacity.
            pub fn clear(&mut self) {
                $(self.$field.clear();)+
            }

            /// Appends every column to `out`, in declaration order, each as
            /// its length (a `u64`) and its values, native byte order (see
            /// [`crate::batch_bytes`]).
            pub(crate) fn encode_columns(&self, out: &mut Vec<u8>) {
                $(crate::column_bytes::put(&self.$field, out);)+
            }

            /// Reads back what [`Self::encode_columns`] wrote at the front
            /// of `bytes`, leaving `bytes` after it.
            pub(crate) fn decode_columns(bytes: &mut &[u8]) -> std::io::Result<Self> {
                Ok(Self { $($field: crate::column_bytes::take(bytes)?,)+ })
            }
        }

        impl FromIterator<$row> for $table {
            fn from_iter<I: IntoIterator<Item = $row>>(iter: I) -> Self {
                let mut t = Self::default();
                for r in iter {
                    t.push(r);
                }
                t
            }
        }
    };
}

macro_rules! first_len {
    ($first:expr $(, $rest:expr)*) => {
        $first.len()
    };
}

/// The row and column types of every table, from the one schema
/// (`rocwasm_schema::record_tables!`), and [`Batch::column`] /
/// [`Batch::column_mut`] by the schema's ids.
macro_rules! core_tables {
    ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {
        $(
            columns! {
                $(#[$rdoc])*
                $row / $cols {
                    $($(#[$cdoc])* $field: $ty,)+
                }
            }
        )+

        impl Batch {
            /// The column with the schema's ids `table` and `column`
            /// (`rocwasm_schema::TABLES`); `None` for ids this build does
            /// not know.
            pub fn column(&self, table: u16, column: u16) -> Option<ColumnRef<'_>> {
                match (table, column) {
                    $($(($tid, $cid) => Some(<$ty as Element>::column(&self.$table.$field)),)+)+
                    _ => None,
                }
            }

            /// Rows of the table with the schema's id `table`; `None` for
            /// an id this build does not know.
            pub fn rows_of(&self, table: u16) -> Option<usize> {
                match table {
                    $($tid => Some(self.$table.len()),)+
                    _ => None,
                }
            }

            /// Keeps row `i` of the table with id `table` exactly when
            /// `keep[i]` is true (rows past `keep`'s end are kept), in
            /// order; false for an id this build does not know.
            pub fn retain_rows_of(&mut self, table: u16, keep: &[bool]) -> bool {
                match table {
                    $($tid => {
                        $({
                            let mut k = keep.iter();
                            self.$table.$field.retain(|_| *k.next().unwrap_or(&true));
                        })+
                        true
                    })+
                    _ => false,
                }
            }

            /// [`Batch::column`], mutably.
            pub fn column_mut(&mut self, table: u16, column: u16) -> Option<ColumnMut<'_>> {
                match (table, column) {
                    $($(($tid, $cid) => Some(<$ty as Element>::column_mut(&mut self.$table.$field)),)+)+
                    _ => None,
                }
            }
        }
    };
}

rocwasm_schema::record_tables!(core_tables);

/// What generic code needs to know of a table's rows, stated once per row
/// type beside it: which kind and operation a row has and when it happened.
/// [`Batch::retain_kinds`], [`Batch::retain_spans`], [`Batch::earliest`]
/// and the plugin host's per-stage filters are written once over every
/// table with it (and [`crate::batch_tables!`]).
pub trait TableRow {
    /// The one kind every row of the table has; `None` for the API calls,
    /// whose rows each name their kind, and for the counter samples, which
    /// no kind's routing decides.
    const KIND: Option<rocwasm_ids::BufferTracingKind>;
    /// The row's kind number.
    fn kind(&self) -> u32;
    /// The row's operation within its kind.
    fn operation(&self) -> u32;
    /// The row's time span `(start, end)`; a record with one timestamp
    /// gives it twice.
    fn span(&self) -> (u64, u64);
}

/// `TableRow` for a table of one kind: the row's operation and span.
macro_rules! table_row {
    ($row:ident, $kind:ident, |$r:ident| $op:expr, $span:expr) => {
        impl TableRow for $row {
            const KIND: Option<rocwasm_ids::BufferTracingKind> =
                Some(rocwasm_ids::BufferTracingKind::$kind);
            fn kind(&self) -> u32 {
                rocwasm_ids::BufferTracingKind::$kind.raw()
            }
            fn operation(&self) -> u32 {
                let $r = self;
                $op
            }
            fn span(&self) -> (u64, u64) {
                let $r = self;
                $span
            }
        }
    };
}

impl TableRow for ApiCall {
    const KIND: Option<rocwasm_ids::BufferTracingKind> = None;
    fn kind(&self) -> u32 {
        self.kind
    }
    fn operation(&self) -> u32 {
        self.operation
    }
    fn span(&self) -> (u64, u64) {
        (self.start, self.end)
    }
}
// Buffered dispatches are always complete; a retirement has no operation.
table_row!(
    KernelDispatch,
    KernelDispatch,
    |r| {
        let _ = r;
        crate::ops::kernel_dispatch::COMPLETE
    },
    (r.start, r.end)
);
table_row!(MemoryCopy, MemoryCopy, |r| r.operation, (r.start, r.end));
table_row!(
    MemoryAllocation,
    MemoryAllocation,
    |r| r.operation,
    (r.start, r.end)
);
table_row!(
    ScratchMemory,
    ScratchMemory,
    |r| r.operation,
    (r.start, r.end)
);
table_row!(
    Retirement,
    CorrelationIdRetirement,
    |r| {
        let _ = r;
        0
    },
    (r.timestamp, r.timestamp)
);
impl CounterSample {
    /// Counter `counter_id`'s `value` for dispatch `k` (its ids, thread,
    /// times, agent, queue, kernel and sizes).
    pub fn of_dispatch(k: &KernelDispatch, counter_id: u32, value: f64) -> CounterSample {
        CounterSample {
            correlation_id: k.correlation_id,
            external_correlation_id: k.external_correlation_id,
            thread_id: k.thread_id,
            start: k.start,
            end: k.end,
            agent_id: k.agent_id,
            queue_id: k.queue_id,
            kernel_id: k.kernel_id,
            dispatch_id: k.dispatch_id,
            private_segment_size: k.private_segment_size,
            group_segment_size: k.group_segment_size,
            workgroup_x: k.workgroup_x,
            workgroup_y: k.workgroup_y,
            workgroup_z: k.workgroup_z,
            grid_x: k.grid_x,
            grid_y: k.grid_y,
            grid_z: k.grid_z,
            counter_id,
            value: value.to_bits(),
        }
    }

    /// The dispatch the sample was counted for (its stream unknown: 0).
    pub fn dispatch(&self) -> KernelDispatch {
        KernelDispatch {
            correlation_id: self.correlation_id,
            external_correlation_id: self.external_correlation_id,
            thread_id: self.thread_id,
            start: self.start,
            end: self.end,
            agent_id: self.agent_id,
            queue_id: self.queue_id,
            stream_id: 0,
            kernel_id: self.kernel_id,
            dispatch_id: self.dispatch_id,
            private_segment_size: self.private_segment_size,
            group_segment_size: self.group_segment_size,
            workgroup_x: self.workgroup_x,
            workgroup_y: self.workgroup_y,
            workgroup_z: self.workgroup_z,
            grid_x: self.grid_x,
            grid_y: self.grid_y,
            grid_z: self.grid_z,
        }
    }

    /// The value.
    pub fn value(&self) -> f64 {
        f64::from_bits(self.value)
    }
}

// A counter sample belongs to its dispatch (its row's kind and operation
// are the dispatch's, for filters that go row by row), but it is its own
// output (`--pmc`), asked for apart from kernel tracing: no one kind holds
// the table, so routing by kind (`retain_kinds`) never drops it.
impl TableRow for CounterSample {
    const KIND: Option<rocwasm_ids::BufferTracingKind> = None;
    fn kind(&self) -> u32 {
        rocwasm_ids::BufferTracingKind::KernelDispatch.raw()
    }
    fn operation(&self) -> u32 {
        crate::ops::kernel_dispatch::COMPLETE
    }
    fn span(&self) -> (u64, u64) {
        (self.start, self.end)
    }
}
table_row!(
    RuntimeInitialization,
    RuntimeInitialization,
    |r| r.operation,
    (r.timestamp, r.timestamp)
);

/// The one list of a [`Batch`]'s record tables, in the batch's order:
/// calls `$callback!` with each table's docs, field, row type and column
/// type, read from the schema (`rocwasm_schema::record_tables!`). What is
/// per table — the struct, [`Batch::len`], [`Batch::is_consistent`],
/// [`Batch::append`], [`Batch::split`], the journal's byte frames — is
/// derived from it; another crate derives its own with
/// `rocwasm_core::batch_tables!(its_macro)` (the row and column types must
/// then be in scope), or from the schema's full list (ids, columns, WIT
/// names) with `rocwasm_schema::record_tables!`.
#[macro_export]
macro_rules! batch_tables {
    ($callback:ident) => {
        $crate::__schema::record_tables! { [$crate::__batch_tables_from_schema] $callback }
    };
}

/// [`batch_tables!`]'s reshaping of the schema's list.
#[doc(hidden)]
#[macro_export]
macro_rules! __batch_tables_from_schema {
    ($callback:ident $($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {
        $callback! {
            $($(#[$tdoc])* $table: $row / $cols,)+
        }
    };
}

macro_rules! define_batch {
    ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {
        /// One delivery: every record family as columns.
        #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct Batch {
            $($(#[$doc])* pub $field: $cols,)*
        }

        impl Batch {
            /// Total number of records across all tables.
            pub fn len(&self) -> usize {
                0 $(+ self.$field.len())*
            }

            /// True when every table is consistent (equal column lengths);
            /// only a hand-built batch, e.g. a transform plugin's reply, can
            /// fail it.
            pub fn is_consistent(&self) -> bool {
                true $(&& self.$field.is_consistent())*
            }

            /// Appends every table of `other` to this batch.
            pub fn append(&mut self, other: &mut Batch) {
                $(self.$field.append(&mut other.$field);)*
            }

            /// Keeps only the records of the kinds `keep` accepts: API calls
            /// by their row's kind (a kind number this build does not know
            /// is kept: nothing is dropped without a name), every other
            /// table by the one kind it holds ([`TableRow::KIND`]).
            pub fn retain_kinds(&mut self, keep: impl Fn(rocwasm_ids::BufferTracingKind) -> bool) {
                self.api_calls
                    .retain(|r| rocwasm_ids::BufferTracingKind::from_raw(r.kind).is_none_or(&keep));
                $(
                    if let Some(kind) = <$row as TableRow>::KIND {
                        if !keep(kind) {
                            self.$field.clear();
                        }
                    }
                )*
            }

            /// Keeps only the records whose time span `keep(start, end)`
            /// accepts ([`TableRow::span`]); returns how many were dropped.
            pub fn retain_spans(&mut self, keep: impl Fn(u64, u64) -> bool) -> u64 {
                let before = self.len();
                $(
                    self.$field.retain(|r| {
                        let (start, end) = r.span();
                        keep(start, end)
                    });
                )*
                (before - self.len()) as u64
            }

            /// The table that holds every record of `kind` by itself (its
            /// field name: `kernel_dispatches`, …); `None` for the API kinds,
            /// whose records share `api_calls`, and for kinds no table holds.
            pub fn table_of(kind: rocwasm_ids::BufferTracingKind) -> Option<&'static str> {
                $(
                    if <$row as TableRow>::KIND == Some(kind) {
                        return Some(stringify!($field));
                    }
                )*
                None
            }

            /// The earliest start of any record (`None` for an empty batch).
            pub fn earliest(&self) -> Option<u64> {
                [$(self.$field.rows().map(|r| r.span().0).min()),*]
                    .into_iter()
                    .flatten()
                    .min()
            }

            /// The batch cut into batches of at most `rows` rows per table
            /// (at least one), every table's rows kept in order; no batch
            /// for an empty one.
            pub fn split(self, rows: usize) -> Vec<Batch> {
                let rows = rows.max(1);
                let chunks = [$(self.$field.len()),*]
                    .into_iter()
                    .max()
                    .unwrap_or(0)
                    .div_ceil(rows);
                let mut out = vec![Batch::default(); chunks];
                $(
                    for (i, row) in self.$field.rows().enumerate() {
                        out[i / rows].$field.push(row);
                    }
                )*
                out
            }
        }
    };
}

batch_tables!(define_batch);

impl Batch {
    /// True when no table has a row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Operations of [`crate::BufferTracingKind::MemoryCopy`] records: the copy direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum MemoryCopyDirection {
    /// `MEMORY_COPY_NONE` (0): no direction; never produced for a real copy.
    None = copy::NONE,
    /// Host memory to host memory (1).
    HostToHost = copy::HOST_TO_HOST,
    /// Host memory to device memory (2), e.g. `hipMemcpyHostToDevice`.
    HostToDevice = copy::HOST_TO_DEVICE,
    /// Device memory to host memory (3).
    DeviceToHost = copy::DEVICE_TO_HOST,
    /// Device memory to device memory (4), on one GPU or between two.
    DeviceToDevice = copy::DEVICE_TO_DEVICE,
}

/// Operations of [`crate::BufferTracingKind::MemoryAllocation`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum MemoryAllocationOperation {
    /// `MEMORY_ALLOCATION_NONE` (0): never produced for a real event.
    None = allocation::NONE,
    /// Memory was allocated (1), e.g. `hsa_amd_memory_pool_allocate`.
    Allocate = allocation::ALLOCATE,
    /// An allocation through HSA's virtual-memory API (`hsa_amd_vmem_*`) (2).
    VmemAllocate = allocation::VMEM_ALLOCATE,
    /// Memory from [`Self::Allocate`] was freed (3).
    Free = allocation::FREE,
    /// Virtual memory from [`Self::VmemAllocate`] was released (4).
    VmemFree = allocation::VMEM_FREE,
}

/// Operations of [`crate::BufferTracingKind::ScratchMemory`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum ScratchMemoryOperation {
    /// `SCRATCH_MEMORY_NONE` (0): never produced for a real event.
    None = scratch::NONE,
    /// The runtime allocated scratch for a queue (1).
    Alloc = scratch::ALLOC,
    /// The runtime freed a queue's scratch (2).
    Free = scratch::FREE,
    /// The runtime reclaimed scratch asynchronously (3).
    AsyncReclaim = scratch::ASYNC_RECLAIM,
}

/// Operations of [`crate::BufferTracingKind::RuntimeInitialization`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum RuntimeLibrary {
    /// `RUNTIME_INITIALIZATION_NONE` (0): never produced for a real event.
    None = runtime_init::NONE,
    /// The HSA runtime, `libhsa-runtime64` (1).
    Hsa = runtime_init::HSA,
    /// The HIP runtime, `libamdhip64` (2).
    Hip = runtime_init::HIP,
    /// The roctx marker library, `libroctx64` (3).
    Marker = runtime_init::MARKER,
    /// RCCL, the collective-communication library (4).
    Rccl = runtime_init::RCCL,
    /// rocDecode, the video-decode library (5).
    Rocdecode = runtime_init::ROCDECODE,
    /// rocJPEG, the JPEG-decode library (6).
    Rocjpeg = runtime_init::ROCJPEG,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table's rows, in order, across the pieces — retirements and
    /// runtime initialisations included (a hand-written split once dropped
    /// them on JSON replay).
    /// Each table of one kind is found by its kind, the API kinds by none;
    /// retaining kinds and spans and the earliest start see every table.
    #[test]
    fn tables_are_found_by_kind_and_filtered_by_kind_and_span() {
        use rocwasm_ids::BufferTracingKind as K;
        assert_eq!(
            Batch::table_of(K::KernelDispatch),
            Some("kernel_dispatches")
        );
        assert_eq!(
            Batch::table_of(K::CorrelationIdRetirement),
            Some("retirements")
        );
        assert_eq!(
            Batch::table_of(K::RuntimeInitialization),
            Some("runtime_initializations")
        );
        assert_eq!(Batch::table_of(K::HipRuntimeApi), None);
        let all = sample_of_every_table();
        assert_eq!(all.earliest(), Some(1));
        let mut b = all.clone();
        b.retain_kinds(|k| k == K::CorrelationIdRetirement);
        // Counter samples belong to no one kind: routing by kind keeps them.
        assert_eq!(
            (b.len(), b.retirements.len(), b.counter_samples.len()),
            (2, 1, 1)
        );
        let mut b = all.clone();
        // Every row but the one at time 1 (the API call).
        let dropped = b.retain_spans(|start, _| start > 1);
        assert_eq!((dropped, b.api_calls.len()), (1, 0));
        assert_eq!(b.len(), all.len() - 1);
    }

    /// Every column the schema lists is reachable by its ids, with its
    /// table's rows and the schema's width; unknown ids are `None`.
    #[test]
    fn every_schema_column_is_reachable_by_its_ids() {
        use rocwasm_schema::{Width, TABLES};
        let mut b = sample_of_every_table();
        let mut columns = 0;
        for t in TABLES {
            for c in t.columns {
                let col = b.column(t.id, c.id).expect(c.field);
                assert_eq!(col.len(), 1, "{}.{}", t.field, c.field);
                assert_eq!(col.width(), c.width, "{}.{}", t.field, c.field);
                columns += 1;
            }
        }
        assert_eq!(columns, 83);
        let k = rocwasm_schema::TableSchema::by_wit_name("kernel-dispatches").unwrap();
        let start = k.column("start").unwrap();
        assert_eq!(b.column(k.id, start.id), Some(ColumnRef::U64(&[2])));
        if let Some(ColumnMut::U64(v)) = b.column_mut(k.id, start.id) {
            v[0] = 40;
        }
        assert_eq!(b.kernel_dispatches.start, [40]);
        assert_eq!(k.column("grid-x").unwrap().width, Width::U32);
        assert!(b.column(k.id, 999).is_none() && b.column(999, 1).is_none());
    }

    /// One row in each table, the API call at time 1, the others at 2..=7.
    fn sample_of_every_table() -> Batch {
        let mut b = Batch::default();
        b.api_calls.push(ApiCall {
            kind: rocwasm_ids::BufferTracingKind::HipRuntimeApi.raw(),
            start: 1,
            end: 1,
            ..Default::default()
        });
        let span = |t: u64| (t, t + 1);
        let (start, end) = span(2);
        b.kernel_dispatches.push(KernelDispatch {
            start,
            end,
            ..Default::default()
        });
        let (start, end) = span(3);
        b.memory_copies.push(MemoryCopy {
            start,
            end,
            ..Default::default()
        });
        let (start, end) = span(4);
        b.memory_allocations.push(MemoryAllocation {
            start,
            end,
            ..Default::default()
        });
        let (start, end) = span(5);
        b.scratch_memory.push(ScratchMemory {
            start,
            end,
            ..Default::default()
        });
        b.retirements.push(Retirement {
            timestamp: 6,
            correlation_id: 1,
        });
        b.runtime_initializations.push(RuntimeInitialization {
            timestamp: 7,
            ..Default::default()
        });
        let (start, end) = span(8);
        b.counter_samples.push(CounterSample {
            start,
            end,
            ..Default::default()
        });
        b
    }

    #[test]
    fn split_keeps_every_tables_rows_in_order() {
        let mut b = Batch::default();
        for i in 0..5u64 {
            b.api_calls.push(ApiCall {
                correlation_id: i,
                ..Default::default()
            });
            b.retirements.push(Retirement {
                timestamp: i,
                correlation_id: i,
            });
        }
        for i in 0..3u64 {
            b.runtime_initializations.push(RuntimeInitialization {
                timestamp: i,
                ..Default::default()
            });
            b.kernel_dispatches.push(KernelDispatch {
                dispatch_id: i,
                ..Default::default()
            });
            b.memory_copies.push(MemoryCopy {
                bytes: i,
                ..Default::default()
            });
            b.memory_allocations.push(MemoryAllocation {
                address: i,
                ..Default::default()
            });
            b.scratch_memory.push(ScratchMemory {
                queue_id: i,
                ..Default::default()
            });
        }
        // Only retirements and initialisations: a batch of its own each.
        let mut tail = Batch::default();
        tail.retirements.push(Retirement {
            timestamp: 9,
            correlation_id: 9,
        });
        let whole = b.clone();
        let pieces = b.split(2);
        assert_eq!(pieces.len(), 3);
        assert!(pieces.iter().all(|p| p.api_calls.len() <= 2));
        let mut joined = Batch::default();
        for mut p in pieces {
            joined.append(&mut p);
        }
        assert_eq!(joined, whole);
        assert_eq!(tail.clone().split(100), vec![tail]);
        assert!(Batch::default().split(4).is_empty());
    }
}
