//! Typed rows over the columnar batch.
//!
//! A [`Batch`] arrives as columns (one `Vec` per field) because that is what
//! crosses the component boundary cheaply. Most analyses think in records, so
//! every table gets a `Copy` row struct with named fields and an iterator:
//!
//! ```
//! # use rocwasm_plugin_sdk::prelude::*;
//! # let mut batch = Batch::default();
//! # batch.kernel_dispatches.push(KernelDispatch { kernel_id: 7, start: 10, end: 25, ..Default::default() });
//! for d in batch.kernel_dispatches().iter() {
//!     assert_eq!(d.duration(), 15);
//! }
//! ```
//!
//! Tables can also be built and filtered row-wise, which is what transform
//! stages do: [`KernelDispatchColumns::retain`] with a predicate,
//! [`KernelDispatchColumns::retain_mask`] with a precomputed mask, `push`,
//! `collect()` into a table, or `extend` one. The columns stay public for code
//! that prefers to work on them directly (e.g. `&batch.kernel_dispatches.start`).

pub use crate::types::{
    ApiCallColumns, Batch, KernelDispatchColumns, MemoryAllocationColumns, MemoryCopyColumns,
    RetirementColumns, RuntimeInitializationColumns, ScratchMemoryColumns,
};

/// A column table: equal-length columns, row `i` being element `i` of each.
pub trait Table {
    /// The row struct.
    type Row: Copy;
    /// Number of rows.
    fn len(&self) -> usize;
    /// Row `i`; panics when `i >= len()`, like slice indexing.
    fn row(&self, i: usize) -> Self::Row;
    /// Row `i` with no range check of its own: a column shorter than `i`
    /// (absent after projection) reads as 0. [`Rows`] checks the range once.
    #[doc(hidden)]
    fn fetch(&self, i: usize) -> Self::Row;
}

/// Iterator over a table's rows (see [`KernelDispatchColumns::iter`] and friends).
#[derive(Debug, Clone)]
pub struct Rows<'a, T> {
    table: &'a T,
    front: usize,
    back: usize,
}

impl<'a, T: Table> Iterator for Rows<'a, T> {
    type Item = T::Row;

    fn next(&mut self) -> Option<T::Row> {
        if self.front == self.back {
            return None;
        }
        let row = self.table.fetch(self.front);
        self.front += 1;
        Some(row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<T::Row> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl<T: Table> DoubleEndedIterator for Rows<'_, T> {
    fn next_back(&mut self) -> Option<T::Row> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.table.fetch(self.back))
    }
}

impl<T: Table> ExactSizeIterator for Rows<'_, T> {}
impl<T: Table> std::iter::FusedIterator for Rows<'_, T> {}

/// Declares a row struct for a generated column table, and the table's
/// row-wise API. The field list must match the WIT record exactly; the
/// compiler checks that, because every method names every column.
macro_rules! rows {
    (
        $(#[$meta:meta])*
        $table:ident = $wit_table:literal => $row:ident {
            $($(#[$fmeta:meta])* $field:ident : $ty:ty,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $row {
            $($(#[$fmeta])* pub $field: $ty,)+
        }

        impl Default for $table {
            fn default() -> Self {
                Self { $($field: Vec::new(),)+ }
            }
        }

        impl Table for $table {
            type Row = $row;

            fn len(&self) -> usize {
                $table::len(self)
            }

            fn row(&self, i: usize) -> $row {
                $table::row(self, i)
            }

            #[inline]
            fn fetch(&self, i: usize) -> $row {
                $row { $($field: self.$field.get(i).copied().unwrap_or_default(),)+ }
            }
        }

        impl $table {
            /// Column names as the Rust fields call them, in WIT order.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($field),)+];

            /// The table's name in the WIT `batch` record.
            pub const TABLE: &'static str = $wit_table;

            /// Receive only `columns` of this table from now on (see
            /// [`crate::delivery`]); call in `configure` or `init`. Names
            /// are the Rust field names ([`Self::COLUMNS`]); an unknown one
            /// fails with `invalid-argument` before the host is asked.
            pub fn select(columns: &[&str]) -> Result<(), crate::types::Status> {
                if columns.iter().any(|c| !Self::COLUMNS.contains(c)) {
                    return Err(crate::types::Status::InvalidArgument);
                }
                crate::delivery::select_columns(Self::TABLE, columns)
            }

            /// An empty table with room for `n` rows in every column.
            pub fn with_capacity(n: usize) -> Self {
                Self { $($field: Vec::with_capacity(n),)+ }
            }

            /// Number of rows: the length of the longest column. (Columns
            /// a plugin did not select arrive empty; see [`crate::delivery`].)
            pub fn len(&self) -> usize {
                0 $(.max(self.$field.len()))+
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// True when every column has the table's length, or is empty
            /// (a column left out by projection). The host always sends
            /// consistent tables; a hand-built one may not be.
            pub fn is_consistent(&self) -> bool {
                let n = self.len();
                true $(&& (self.$field.len() == n || self.$field.is_empty()))+
            }

            /// True when `column` (a Rust field name) has data, or the
            /// table has no rows. False for a column left out by projection.
            pub fn has_column(&self, column: &str) -> bool {
                let n = self.len();
                $(if column == stringify!($field) {
                    return self.$field.len() == n;
                })+
                false
            }

            /// Row `i`; a column left out by projection reads as 0. Panics
            /// when `i >= len()`, like slice indexing.
            pub fn row(&self, i: usize) -> $row {
                assert!(i < self.len(), "row {i} of a table with {} rows", self.len());
                Table::fetch(self, i)
            }

            /// Row `i`, or `None` when out of range. A column left out by
            /// projection (or too short in a hand-built table) reads as 0.
            pub fn get(&self, i: usize) -> Option<$row> {
                (i < self.len()).then(|| Table::fetch(self, i))
            }

            /// The rows, in production order.
            pub fn iter(&self) -> Rows<'_, Self> {
                Rows { table: self, front: 0, back: self.len() }
            }

            /// Appends one row.
            pub fn push(&mut self, row: $row) {
                $(self.$field.push(row.$field);)+
            }

            /// Keeps row `i` exactly when `mask[i]` is true, preserving order.
            ///
            /// # Panics
            /// When `mask.len() != self.len()`: a mask for another table is a bug.
            pub fn retain_mask(&mut self, mask: &[bool]) {
                assert_eq!(mask.len(), self.len(), "retain_mask: mask length differs from the table's");
                $(
                    let mut keep = mask.iter();
                    self.$field.retain(|_| *keep.next().unwrap_or(&false));
                )+
            }

            /// Keeps the rows for which `keep` returns true, preserving order.
            pub fn retain(&mut self, mut keep: impl FnMut(&$row) -> bool) {
                let mask: Vec<bool> = self.iter().map(|r| keep(&r)).collect();
                self.retain_mask(&mask);
            }

            /// Removes every row.
            pub fn clear(&mut self) {
                $(self.$field.clear();)+
            }
        }

        impl<'a> IntoIterator for &'a $table {
            type Item = $row;
            type IntoIter = Rows<'a, $table>;

            fn into_iter(self) -> Self::IntoIter {
                self.iter()
            }
        }

        impl Extend<$row> for $table {
            fn extend<I: IntoIterator<Item = $row>>(&mut self, rows: I) {
                for row in rows {
                    self.push(row);
                }
            }
        }

        impl FromIterator<$row> for $table {
            fn from_iter<I: IntoIterator<Item = $row>>(rows: I) -> Self {
                let mut table = Self::default();
                table.extend(rows);
                table
            }
        }
    };
}

/// Every table's row struct and row-wise API, from the schema the host
/// uses too (`rocwasm_schema::record_tables!`): the field lists cannot
/// drift from the host's, and the compiler checks them against the WIT
/// record (every method names every column).
macro_rules! sdk_tables {
    ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {
        $(
            rows! {
                $(#[$rdoc])*
                $cols = $tname => $row {
                    $($(#[$cdoc])* $field: $ty,)+
                }
            }
        )+
    };
}

rocwasm_schema::record_tables!(sdk_tables);

/// `end - start`, 0 when a clock glitch put `end` first.
macro_rules! durations {
    ($($row:ident),+) => {$(
        impl $row {
            /// `end - start` in nanoseconds (0 if `end < start`).
            pub fn duration(&self) -> u64 {
                self.end.saturating_sub(self.start)
            }
        }
    )+};
}

durations!(
    ApiCall,
    KernelDispatch,
    MemoryCopy,
    MemoryAllocation,
    ScratchMemory
);

impl KernelDispatch {
    /// Work-items in the grid (x·y·z).
    pub fn grid_size(&self) -> u64 {
        self.grid_x as u64 * self.grid_y as u64 * self.grid_z as u64
    }

    /// Work-items in one work-group (x·y·z).
    pub fn workgroup_size(&self) -> u64 {
        self.workgroup_x as u64 * self.workgroup_y as u64 * self.workgroup_z as u64
    }
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            api_calls: Default::default(),
            kernel_dispatches: Default::default(),
            memory_copies: Default::default(),
            memory_allocations: Default::default(),
            scratch_memory: Default::default(),
            retirements: Default::default(),
            runtime_initializations: Default::default(),
        }
    }
}

impl Batch {
    /// HIP, HSA, marker and other API calls.
    pub fn api_calls(&self) -> &ApiCallColumns {
        &self.api_calls
    }

    pub fn kernel_dispatches(&self) -> &KernelDispatchColumns {
        &self.kernel_dispatches
    }

    pub fn memory_copies(&self) -> &MemoryCopyColumns {
        &self.memory_copies
    }

    pub fn memory_allocations(&self) -> &MemoryAllocationColumns {
        &self.memory_allocations
    }

    pub fn scratch_memory(&self) -> &ScratchMemoryColumns {
        &self.scratch_memory
    }

    pub fn retirements(&self) -> &RetirementColumns {
        &self.retirements
    }

    pub fn runtime_initializations(&self) -> &RuntimeInitializationColumns {
        &self.runtime_initializations
    }

    /// Records across all tables.
    pub fn len(&self) -> usize {
        self.api_calls.len()
            + self.kernel_dispatches.len()
            + self.memory_copies.len()
            + self.memory_allocations.len()
            + self.scratch_memory.len()
            + self.retirements.len()
            + self.runtime_initializations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when every table's columns have equal lengths.
    pub fn is_consistent(&self) -> bool {
        self.api_calls.is_consistent()
            && self.kernel_dispatches.is_consistent()
            && self.memory_copies.is_consistent()
            && self.memory_allocations.is_consistent()
            && self.scratch_memory.is_consistent()
            && self.retirements.is_consistent()
            && self.runtime_initializations.is_consistent()
    }

    /// Row counts per table, named as the WIT names them (for logs and reports).
    pub fn table_lengths(&self) -> [(&'static str, usize); 7] {
        [
            ("api-calls", self.api_calls.len()),
            ("kernel-dispatches", self.kernel_dispatches.len()),
            ("memory-copies", self.memory_copies.len()),
            ("memory-allocations", self.memory_allocations.len()),
            ("scratch-memory", self.scratch_memory.len()),
            ("retirements", self.retirements.len()),
            (
                "runtime-initializations",
                self.runtime_initializations.len(),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatch(kernel_id: u64, start: u64, end: u64) -> KernelDispatch {
        KernelDispatch {
            kernel_id,
            start,
            end,
            ..Default::default()
        }
    }

    #[test]
    fn rows_round_trip_through_columns() {
        let rows = vec![dispatch(1, 0, 10), dispatch(2, 5, 7), dispatch(1, 20, 21)];
        let table: KernelDispatchColumns = rows.iter().copied().collect();
        assert_eq!(table.len(), 3);
        assert!(table.is_consistent());
        assert_eq!(table.kernel_id, vec![1, 2, 1]);
        assert_eq!(table.iter().collect::<Vec<_>>(), rows);
        assert_eq!(
            table.iter().rev().map(|r| r.kernel_id).collect::<Vec<_>>(),
            vec![1, 2, 1]
        );
        assert_eq!(table.iter().map(|r| r.duration()).sum::<u64>(), 10 + 2 + 1);
        assert_eq!(table.get(3), None);
        assert_eq!(table.iter().nth(2), Some(rows[2]));
        assert_eq!(table.iter().len(), 3);
    }

    #[test]
    fn retain_and_mask_keep_order_in_every_column() {
        let mut table: KernelDispatchColumns =
            (0..6).map(|i| dispatch(i, i * 10, i * 10 + i)).collect();
        table.retain(|r| r.kernel_id % 2 == 0);
        assert_eq!(table.kernel_id, vec![0, 2, 4]);
        assert_eq!(table.start, vec![0, 20, 40]);
        assert_eq!(table.end, vec![0, 22, 44]);
        table.retain_mask(&[false, true, true]);
        assert_eq!(table.kernel_id, vec![2, 4]);
        assert!(table.is_consistent());
    }

    #[test]
    #[should_panic(expected = "mask length")]
    fn a_mask_of_the_wrong_length_is_a_bug() {
        let mut table: KernelDispatchColumns = (0..3).map(|i| dispatch(i, 0, 1)).collect();
        table.retain_mask(&[true]);
    }

    #[test]
    fn inconsistent_tables_are_detected_and_get_is_safe() {
        let mut table = ApiCallColumns::default();
        table.push(ApiCall {
            kind: 5,
            ..Default::default()
        });
        table.push(ApiCall::default());
        table.start.push(99);
        assert!(!table.is_consistent());
        assert_eq!(table.len(), 3, "the longest column counts");
        assert_eq!(table.get(2).map(|r| (r.kind, r.start)), Some((0, 99)));
        assert!(table.get(3).is_none());
    }

    #[test]
    fn projected_tables_read_absent_columns_as_zero() {
        // What the host sends after `select(&["kernel_id", "start", "end"])`.
        let table = KernelDispatchColumns {
            kernel_id: vec![7, 8],
            start: vec![10, 20],
            end: vec![15, 29],
            ..Default::default()
        };
        assert_eq!(table.len(), 2);
        assert!(table.is_consistent());
        assert!(table.has_column("start") && !table.has_column("correlation_id"));
        assert!(!table.has_column("no_such_column"));
        let rows: Vec<_> = table.iter().collect();
        assert_eq!(rows[1].kernel_id, 8);
        assert_eq!(rows[1].duration(), 9);
        assert_eq!((rows[1].correlation_id, rows[1].grid_x), (0, 0));
        assert_eq!(table.get(1), Some(rows[1]));
        assert_eq!(KernelDispatchColumns::TABLE, "kernel-dispatches");
    }

    #[test]
    fn select_rejects_unknown_columns_without_asking_the_host() {
        // On the native target the host call would panic; an unknown name
        // must fail before it.
        assert_eq!(
            KernelDispatchColumns::select(&["kernel_id", "kernel-name"]),
            Err(crate::types::Status::InvalidArgument)
        );
    }

    #[test]
    fn batch_counts_all_tables() {
        let mut batch = Batch::default();
        assert!(batch.is_empty());
        batch.kernel_dispatches.push(dispatch(1, 0, 1));
        batch
            .api_calls
            .extend([ApiCall::default(), ApiCall::default()]);
        batch.retirements.push(Retirement {
            timestamp: 1,
            correlation_id: 2,
        });
        assert_eq!(batch.len(), 4);
        assert_eq!(batch.table_lengths()[0], ("api-calls", 2));
        assert_eq!(batch.kernel_dispatches().iter().count(), 1);
    }

    #[test]
    fn derived_sizes() {
        let d = KernelDispatch {
            grid_x: 1024,
            grid_y: 2,
            grid_z: 1,
            workgroup_x: 256,
            workgroup_y: 1,
            workgroup_z: 1,
            start: 9,
            end: 3,
            ..Default::default()
        };
        assert_eq!(d.grid_size(), 2048);
        assert_eq!(d.workgroup_size(), 256);
        assert_eq!(d.duration(), 0, "a reversed clock must not underflow");
    }
}
