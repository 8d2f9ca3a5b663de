//! The batch a plugin receives, and the edits a transform returns.
//!
//! Under `rocwasm:plugin@0.3.2` a batch crosses into the plugin as one
//! buffer: a header naming each column by its schema ids, then the columns'
//! values, 8-byte aligned (`rocwasm_schema::packed`). [`Batch`] checks the
//! header once and hands out each table as a view of slices into the buffer
//! (`batch.kernel_dispatches().start` is a `&[u64]`): reading a column
//! copies nothing, and a column the plugin did not select is not in the
//! buffer at all (its slice is empty).
//!
//! A transform stage reads the same batch and says what to change in
//! [`Edits`]: which rows of a table to keep, which columns to replace. The
//! host applies them to the whole batch (every column, selected or not)
//! before the stages after it see it.

use rocwasm_schema::packed::{self, AlignedCopy, Packed, PackedError};
use rocwasm_schema::{ColumnRef, Element, TableSchema, Width, TABLES};

use crate::rows::Tables;
use crate::types::{BatchEdits, ColumnId, TableRows};

/// Where one column of the schema sits in the buffer.
#[derive(Debug, Clone, Copy, Default)]
struct Loc {
    offset: u32,
    rows: u32,
    width: u8,
}

/// The highest table and column ids this SDK knows, + 1: the index's shape.
const TABLE_SLOTS: usize = max_table_id() + 1;
const COLUMN_SLOTS: usize = max_column_id() + 1;

const fn max_table_id() -> usize {
    let mut max = 0;
    let mut t = 0;
    while t < TABLES.len() {
        if TABLES[t].id as usize > max {
            max = TABLES[t].id as usize;
        }
        t += 1;
    }
    max
}

const fn max_column_id() -> usize {
    let mut max = 0;
    let mut t = 0;
    while t < TABLES.len() {
        let mut c = 0;
        while c < TABLES[t].columns.len() {
            if TABLES[t].columns[c].id as usize > max {
                max = TABLES[t].columns[c].id as usize;
            }
            c += 1;
        }
        t += 1;
    }
    max
}

/// The buffer: as the host wrote it when it is 8-aligned (it is, from the
/// guest allocator), else an aligned copy.
#[derive(Debug, Clone)]
enum Storage {
    Bytes(Vec<u8>),
    Copied(AlignedCopy),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Bytes(b) => b,
            Storage::Copied(c) => c.bytes(),
        }
    }
}

/// Why a buffer is not a batch: the packed reader's error.
pub type BatchError = PackedError;

/// A batch of records, as delivered: every table the plugin receives, each
/// read through its view (`batch.api_calls()`, `batch.kernel_dispatches()`,
/// … one method per table of the schema).
#[derive(Debug, Clone)]
pub struct Batch {
    storage: Storage,
    /// Per table id and column id, where the column is (rows 0 when absent).
    index: Box<[[Loc; COLUMN_SLOTS]; TABLE_SLOTS]>,
    /// Columns of tables or ids this SDK does not know (a newer host's).
    unknown: usize,
}

impl Default for Batch {
    fn default() -> Self {
        Tables::default().pack()
    }
}

impl Batch {
    /// Reads a packed batch (what `deliver-batch` receives), checking its
    /// header once. Columns of tables or ids this SDK does not know are
    /// skipped (a newer host may send them); [`Batch::unknown_columns`]
    /// counts them.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Batch, BatchError> {
        // The host's buffer is 8-aligned (the guest allocator's blocks are);
        // anything else is read from an aligned copy.
        let storage = if (bytes.as_ptr() as usize).is_multiple_of(8) {
            Storage::Bytes(bytes)
        } else {
            Storage::Copied(AlignedCopy::new(&bytes))
        };
        let mut index = Box::new([[Loc::default(); COLUMN_SLOTS]; TABLE_SLOTS]);
        let mut unknown = 0;
        {
            // Offsets from the buffer's start: they hold wherever `storage`
            // moves. The header is checked here, once.
            let bytes = storage.bytes();
            let packed = Packed::parse(bytes)?;
            let base = bytes.as_ptr() as usize;
            for c in packed.columns() {
                let width = c.values.width();
                let slot = index
                    .get_mut(usize::from(c.table))
                    .and_then(|t| t.get_mut(usize::from(c.column)))
                    .filter(|_| {
                        TableSchema::by_id(c.table)
                            .and_then(|t| t.column_by_id(c.column))
                            .is_some_and(|col| col.width == width)
                    });
                let Some(slot) = slot else {
                    unknown += 1;
                    continue;
                };
                let ptr = match c.values {
                    ColumnRef::U32(v) => v.as_ptr() as usize,
                    ColumnRef::U64(v) => v.as_ptr() as usize,
                };
                *slot = Loc {
                    offset: (ptr - base) as u32,
                    rows: c.values.len() as u32,
                    width: width.bytes() as u8,
                };
            }
        }
        Ok(Batch {
            storage,
            index,
            unknown,
        })
    }

    /// The buffer as received.
    pub fn as_bytes(&self) -> &[u8] {
        self.storage.bytes()
    }

    /// Columns in the buffer this SDK does not know (a newer host's tables
    /// or columns): skipped.
    pub fn unknown_columns(&self) -> usize {
        self.unknown
    }

    /// Column `column` of table `table` as `T` (empty when the buffer does
    /// not hold it).
    pub(crate) fn column<T: Element>(&self, table: u16, column: u16) -> &[T] {
        let loc = self
            .index
            .get(usize::from(table))
            .and_then(|t| t.get(usize::from(column)))
            .copied()
            .unwrap_or_default();
        if loc.rows == 0 || usize::from(loc.width) != T::WIDTH.bytes() {
            return &[];
        }
        let start = loc.offset as usize;
        let end = start + loc.rows as usize * T::WIDTH.bytes();
        T::slice_from(&self.storage.bytes()[start..end])
    }

    /// Rows of table `table`: its longest column (0 when absent).
    pub fn rows_of(&self, table: u16) -> usize {
        self.index
            .get(usize::from(table))
            .map(|t| t.iter().map(|l| l.rows as usize).max().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Records across all tables.
    pub fn len(&self) -> usize {
        TABLES.iter().map(|t| self.rows_of(t.id)).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a transform changes in the batch it was given: per table, the rows
/// to keep; per column, new values. Tables and columns not named pass
/// through unchanged.
///
/// ```
/// # use rocwasm_plugin_sdk::prelude::*;
/// # let mut tables = Tables::default();
/// # for i in 0..4 { tables.kernel_dispatches.push(KernelDispatch { correlation_id: i, stream_id: 1, ..Default::default() }); }
/// # let batch = tables.pack();
/// let mut edits = Edits::default();
/// let dispatches = batch.kernel_dispatches();
/// // Keep the dispatches with an even correlation id …
/// let keep: Vec<bool> = dispatches.correlation_id.iter().map(|c| c % 2 == 0).collect();
/// edits.keep(kernel_dispatches::TABLE, &keep);
/// // … and give every dispatch stream 7 (values for every row *before* `keep`).
/// edits.set(kernel_dispatches::stream_id, vec![7u64; dispatches.len()]);
/// let after = edits.apply_to(&batch).unwrap();
/// assert_eq!(after.kernel_dispatches().correlation_id, [0, 2]);
/// assert_eq!(after.kernel_dispatches().stream_id, [7, 7]);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edits {
    keep: Vec<(u16, Vec<bool>)>,
    columns: Vec<((u16, u16), Values)>,
}

/// New values of one column (what [`EditValues`] wraps).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    U32(Vec<u32>),
    U64(Vec<u64>),
}

/// The element types [`Edits::set`] takes (`u32` and `u64`).
pub trait EditValues: Element {
    #[doc(hidden)]
    fn wrap(values: Vec<Self>) -> Values;
}

impl EditValues for u32 {
    fn wrap(values: Vec<u32>) -> Values {
        Values::U32(values)
    }
}

impl EditValues for u64 {
    fn wrap(values: Vec<u64>) -> Values {
        Values::U64(values)
    }
}

impl Edits {
    /// Keeps row `i` of table `table` (a table module's `TABLE`) exactly
    /// when `mask[i]`; a second call for the table replaces the first.
    /// The mask must have one entry per row of the batch's table, or the
    /// host refuses the reply.
    pub fn keep(&mut self, table: u16, mask: &[bool]) {
        self.keep.retain(|(t, _)| *t != table);
        self.keep.push((table, mask.to_vec()));
    }

    /// Replaces column `column` (a table module's column id, e.g.
    /// `kernel_dispatches::stream_id`) with `values`: one per row of the
    /// batch's table *before* [`keep`](Self::keep) applies. A second call
    /// for the column replaces the first.
    ///
    /// # Panics
    /// When `T` is not the column's type in the schema (a bug).
    pub fn set<T: EditValues>(&mut self, column: ColumnId, values: Vec<T>) {
        let width = TableSchema::by_id(column.table)
            .and_then(|t| t.column_by_id(column.column))
            .map(|c| c.width);
        assert!(
            width.is_none() || width == Some(T::WIDTH),
            "Edits::set: column {}.{} is not of this element type",
            column.table,
            column.column
        );
        let id = (column.table, column.column);
        self.columns.retain(|(c, _)| *c != id);
        self.columns.push((id, T::wrap(values)));
    }

    /// True when nothing is changed.
    pub fn is_empty(&self) -> bool {
        self.keep.is_empty() && self.columns.is_empty()
    }

    /// The WIT form the host applies.
    pub fn to_wit(&self) -> BatchEdits {
        let keep = self
            .keep
            .iter()
            .map(|(table, mask)| {
                let mut bitmap = vec![0u8; mask.len().div_ceil(8)];
                for (i, _) in mask.iter().enumerate().filter(|(_, k)| **k) {
                    bitmap[i / 8] |= 1 << (i % 8);
                }
                TableRows {
                    table: *table,
                    bitmap,
                }
            })
            .collect();
        let columns: Vec<packed::Column<'_>> = self
            .columns
            .iter()
            .map(|((table, column), values)| packed::Column {
                table: *table,
                column: *column,
                values: match values {
                    Values::U32(v) => ColumnRef::U32(v),
                    Values::U64(v) => ColumnRef::U64(v),
                },
            })
            .collect();
        let mut bytes = Vec::new();
        if !columns.is_empty() {
            packed::pack(&columns, &mut bytes);
        }
        BatchEdits {
            keep,
            columns: bytes,
        }
    }

    /// The batch the host would make of `batch` with these edits: what a
    /// plugin's tests check. An edit that does not fit the batch (a mask or
    /// column of the wrong length) is an error naming it, as the host's is.
    pub fn apply_to(&self, batch: &Batch) -> Result<Batch, String> {
        let mut tables = batch.to_tables();
        for ((table, column), values) in &self.columns {
            let id = ColumnId {
                table: *table,
                column: *column,
            };
            let rows = batch.rows_of(id.table);
            let len = match values {
                Values::U32(v) => v.len(),
                Values::U64(v) => v.len(),
            };
            if len != rows {
                return Err(format!(
                    "column {}.{} has {len} values, its table {rows} rows",
                    id.table, id.column
                ));
            }
            if !tables.set_column(id, values) {
                return Err(format!("no column {}.{}", id.table, id.column));
            }
        }
        for (table, mask) in &self.keep {
            let rows = batch.rows_of(*table);
            if mask.len() != rows {
                return Err(format!(
                    "the mask of table {table} has {} entries, the table {rows} rows",
                    mask.len()
                ));
            }
            if !tables.retain_mask_of(*table, mask) {
                return Err(format!("no table {table}"));
            }
        }
        Ok(tables.pack())
    }
}

impl Tables {
    /// Replaces a column; false when the schema has no such column.
    fn set_column(&mut self, id: ColumnId, values: &Values) -> bool {
        let Some(width) = TableSchema::by_id(id.table)
            .and_then(|t| t.column_by_id(id.column))
            .map(|c| c.width)
        else {
            return false;
        };
        let mut done = false;
        self.columns_mut(|table, column, col| {
            if (table, column) != (id.table, id.column) {
                return;
            }
            match (col, values, width) {
                (rocwasm_schema::ColumnMut::U32(c), Values::U32(v), Width::U32) => {
                    *c = v.clone();
                    done = true;
                }
                (rocwasm_schema::ColumnMut::U64(c), Values::U64(v), Width::U64) => {
                    *c = v.clone();
                    done = true;
                }
                _ => {}
            }
        });
        done
    }
}

/// Each table's accessor on [`Batch`] (its view of slices into the buffer),
/// and [`Tables::pack`], from the schema the host uses too.
macro_rules! batch_tables {
    ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {
        impl Batch {
            $(
                $(#[$tdoc])*
                pub fn $table(&self) -> crate::rows::$table::View<'_> {
                    crate::rows::$table::View { $($field: self.column::<$ty>($tid, $cid),)+ }
                }
            )+

            /// Row counts per table, named as the WIT names them (for logs
            /// and reports), in schema order.
            pub fn table_lengths(&self) -> Vec<(&'static str, usize)> {
                vec![$(($tname, self.rows_of($tid)),)+]
            }

            /// An owned copy of every table.
            pub fn to_tables(&self) -> Tables {
                Tables { $($table: self.$table().to_owned(),)+ }
            }
        }

        impl Tables {
            /// The tables as one packed batch, every column of each table
            /// with rows (what the host sends a plugin that selects nothing).
            pub fn pack(&self) -> Batch {
                let mut columns = Vec::new();
                $(crate::rows::$table::columns(&self.$table, &mut columns);)+
                let mut bytes = Vec::new();
                packed::pack(&columns, &mut bytes);
                Batch::from_bytes(bytes).expect("a packed batch this SDK wrote")
            }
        }
    };
}

rocwasm_schema::record_tables!(batch_tables);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::*;

    fn dispatch(kernel_id: u64, start: u64, end: u64) -> KernelDispatch {
        KernelDispatch {
            kernel_id,
            start,
            end,
            ..Default::default()
        }
    }

    #[test]
    fn batch_counts_all_tables() {
        let mut tables = Tables::default();
        assert!(tables.pack().is_empty());
        tables.kernel_dispatches.push(dispatch(1, 0, 1));
        tables
            .api_calls
            .extend([ApiCall::default(), ApiCall::default()]);
        tables.retirements.push(Retirement {
            timestamp: 1,
            correlation_id: 2,
        });
        assert_eq!(tables.len(), 4);
        let batch = tables.pack();
        assert_eq!(batch.len(), 4);
        assert_eq!(batch.table_lengths()[0], ("api-calls", 2));
        assert_eq!(batch.kernel_dispatches().iter().count(), 1);
        assert_eq!(batch.to_tables(), tables);
    }

    #[test]
    fn a_packed_batch_reads_every_column_in_place() {
        let mut tables = Tables {
            kernel_dispatches: (0..5).map(|i| dispatch(i, i * 10, i * 10 + 3)).collect(),
            ..Default::default()
        };
        tables.memory_copies.push(MemoryCopy {
            bytes: 4096,
            ..Default::default()
        });
        let batch = tables.pack();
        let d = batch.kernel_dispatches();
        assert_eq!(d.len(), 5);
        assert_eq!(d.kernel_id, [0, 1, 2, 3, 4]);
        assert_eq!(d.end, [3, 13, 23, 33, 43]);
        // In place: the slice points into the batch's buffer.
        let buffer = batch.as_bytes().as_ptr_range();
        assert!(buffer.contains(&(d.start.as_ptr() as *const u8)));
        assert_eq!(d.iter().map(|r| r.duration()).sum::<u64>(), 15);
        assert_eq!(batch.memory_copies().row(0).bytes, 4096);
        assert!(batch.api_calls().is_empty());
        // A view outlives the expression that made it, and so do its rows.
        let mut rows = batch.kernel_dispatches().iter();
        assert_eq!(rows.next_back(), Some(dispatch(4, 40, 43)));
    }

    #[test]
    fn a_batch_without_some_columns_reads_them_as_zero_and_skips_unknown_ones() {
        use rocwasm_schema::packed::{pack, Column};
        use rocwasm_schema::ColumnRef;
        let ids = [7u64, 8];
        let starts = [10u64, 20];
        let future = [1u32, 2, 3];
        let mut bytes = Vec::new();
        pack(
            &[
                Column {
                    table: kernel_dispatches::TABLE,
                    column: kernel_dispatches::kernel_id.column,
                    values: ColumnRef::U64(&ids),
                },
                Column {
                    table: kernel_dispatches::TABLE,
                    column: kernel_dispatches::start.column,
                    values: ColumnRef::U64(&starts),
                },
                // A table a newer host has and this SDK does not.
                Column {
                    table: 999,
                    column: 1,
                    values: ColumnRef::U32(&future),
                },
            ],
            &mut bytes,
        );
        let batch = Batch::from_bytes(bytes).unwrap();
        assert_eq!(batch.unknown_columns(), 1);
        assert_eq!(batch.len(), 2);
        let d = batch.kernel_dispatches();
        assert!(d.has_column("start") && !d.has_column("end"));
        assert_eq!(d.row(1).kernel_id, 8);
        assert_eq!((d.row(1).end, d.row(1).correlation_id), (0, 0));
        assert!(Batch::from_bytes(b"not a batch".to_vec()).is_err());
    }
}
