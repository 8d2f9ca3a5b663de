//! Typed rows and tables over the columnar batch.
//!
//! A [`Batch`](crate::Batch) arrives as one packed buffer of columns (see
//! [`crate::batch`]), and each table is read through a **view**: a `Copy`
//! struct of borrowed slices, one per column, straight into the buffer
//! ([`kernel_dispatches::View`] and one module per table). Most analyses
//! think in records, so every table also gets a `Copy` row struct with
//! named fields and an iterator:
//!
//! ```
//! # use rocwasm_plugin_sdk::prelude::*;
//! # let mut tables = Tables::default();
//! # tables.kernel_dispatches.push(KernelDispatch { kernel_id: 7, start: 10, end: 25, ..Default::default() });
//! # let batch = tables.pack();
//! for d in batch.kernel_dispatches().iter() {
//!     assert_eq!(d.duration(), 15);
//! }
//! // The columns themselves, without a copy:
//! let starts: &[u64] = batch.kernel_dispatches().start;
//! # assert_eq!(starts, [10]);
//! ```
//!
//! Tables can also be built and filtered row-wise in owned form
//! ([`KernelDispatchColumns`] and friends, one `Vec` per column): `push`,
//! [`KernelDispatchColumns::retain`] with a predicate,
//! [`KernelDispatchColumns::retain_mask`] with a precomputed mask,
//! `collect()` into a table, or `extend` one. [`Tables`] holds one of each
//! and packs into a `Batch` (what a plugin's tests hand to their own
//! `deliver_batch`). A table's module also names its schema ids
//! (`kernel_dispatches::TABLE`, `kernel_dispatches::stream_id`): what a
//! transform's [`Edits`](crate::Edits) name.

pub use crate::types::ColumnId;

/// A column table: equal-length columns, row `i` being element `i` of each.
pub trait Table {
    /// The row struct.
    type Row: Copy;
    /// Number of rows.
    fn len(&self) -> usize;
    /// True when the table has no row.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Row `i`; panics when `i >= len()`, like slice indexing.
    fn row(&self, i: usize) -> Self::Row;
    /// Row `i` with no range check of its own: a column shorter than `i`
    /// (absent after projection) reads as 0. [`Rows`] checks the range once.
    #[doc(hidden)]
    fn fetch(&self, i: usize) -> Self::Row;
}

impl<T: Table + ?Sized> Table for &T {
    type Row = T::Row;

    fn len(&self) -> usize {
        (**self).len()
    }

    fn row(&self, i: usize) -> T::Row {
        (**self).row(i)
    }

    #[inline]
    fn fetch(&self, i: usize) -> T::Row {
        (**self).fetch(i)
    }
}

/// Iterator over a table's rows (see [`kernel_dispatches::View::iter`] and
/// friends): it holds a view (a few slices) or a reference to an owned
/// table, so it may outlive the expression that made it.
#[derive(Debug, Clone)]
pub struct Rows<T> {
    table: T,
    front: usize,
    back: usize,
}

impl<T: Table> Iterator for Rows<T> {
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

impl<T: Table> DoubleEndedIterator for Rows<T> {
    fn next_back(&mut self) -> Option<T::Row> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.table.fetch(self.back))
    }
}

impl<T: Table> ExactSizeIterator for Rows<T> {}
impl<T: Table> std::iter::FusedIterator for Rows<T> {}

/// Declares, for one table of the schema: the row struct, the owned table
/// (one `Vec` per column) with its row-wise API, and the table's module
/// (schema ids and the borrowed [`View`](kernel_dispatches::View)). The
/// field list is the schema's, so it cannot drift from the host's.
macro_rules! table {
    (
        $(#[$tdoc:meta])*
        $table:ident = $tid:literal $tname:literal;
        $(#[$meta:meta])*
        $row:ident / $cols:ident {
            $($(#[$fmeta:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $row {
            $($(#[$fmeta])* pub $field: $ty,)+
        }

        #[doc = concat!("The `", $tname, "` table, owned: one `Vec` per column (see [`", stringify!($table), "::View`] for the borrowed form a batch hands out).")]
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct $cols {
            $($(#[$fmeta])* pub $field: Vec<$ty>,)+
        }

        $(#[$tdoc])*
        ///
        /// The table's schema ids and its borrowed view.
        #[allow(non_upper_case_globals)]
        pub mod $table {
            use super::*;

            /// The table's schema id (permanent).
            pub const TABLE: u16 = $tid;
            /// The table's WIT name.
            pub const NAME: &str = $tname;
            /// Column names as the Rust fields call them, in schema order.
            pub const COLUMNS: &[&str] = &[$(stringify!($field),)+];
            $(
                #[doc = concat!("The schema id of `", $cname, "`.")]
                pub const $field: ColumnId = ColumnId { table: $tid, column: $cid };
            )+

            #[doc = concat!("The `", $tname, "` table of a batch, borrowed: one slice per column, read in place.")]
            ///
            /// A column the plugin did not select is an empty slice, and reads
            /// as 0 in [`row`](Self::row) and [`iter`](Self::iter).
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
            pub struct View<'a> {
                $($(#[$fmeta])* pub $field: &'a [$ty],)+
            }

            impl<'a> View<'a> {
                /// Number of rows: the length of the longest column.
                pub fn len(&self) -> usize {
                    0 $(.max(self.$field.len()))+
                }

                pub fn is_empty(&self) -> bool {
                    self.len() == 0
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

                /// Row `i`; a column left out by projection reads as 0.
                /// Panics when `i >= len()`, like slice indexing.
                pub fn row(&self, i: usize) -> $row {
                    assert!(i < self.len(), "row {i} of a table with {} rows", self.len());
                    Table::fetch(self, i)
                }

                /// Row `i`, or `None` when out of range.
                pub fn get(&self, i: usize) -> Option<$row> {
                    (i < self.len()).then(|| Table::fetch(self, i))
                }

                /// The rows, in production order.
                pub fn iter(&self) -> Rows<View<'a>> {
                    Rows { table: *self, front: 0, back: self.len() }
                }

                /// An owned copy.
                pub fn to_owned(&self) -> $cols {
                    $cols { $($field: self.$field.to_vec(),)+ }
                }
            }

            impl Table for View<'_> {
                type Row = $row;

                fn len(&self) -> usize {
                    View::len(self)
                }

                fn row(&self, i: usize) -> $row {
                    View::row(self, i)
                }

                #[inline]
                fn fetch(&self, i: usize) -> $row {
                    $row { $($field: self.$field.get(i).copied().unwrap_or_default(),)+ }
                }
            }

            impl<'a> IntoIterator for View<'a> {
                type Item = $row;
                type IntoIter = Rows<View<'a>>;

                fn into_iter(self) -> Self::IntoIter {
                    self.iter()
                }
            }

            impl<'a> IntoIterator for &View<'a> {
                type Item = $row;
                type IntoIter = Rows<View<'a>>;

                fn into_iter(self) -> Self::IntoIter {
                    self.iter()
                }
            }

            /// Receive only `columns` of this table from now on (see
            /// [`crate::delivery`]); call in `configure` or `init`. Names are
            /// the Rust field names ([`COLUMNS`]); an unknown one fails with
            /// `invalid-argument` before the host is asked.
            pub fn select(columns: &[&str]) -> Result<(), crate::types::Status> {
                if columns.iter().any(|c| !COLUMNS.contains(c)) {
                    return Err(crate::types::Status::InvalidArgument);
                }
                crate::delivery::select_columns(NAME, columns)
            }

            /// `table`'s columns for packing.
            pub(crate) fn columns<'t>(table: &'t $cols, out: &mut Vec<rocwasm_schema::packed::Column<'t>>) {
                if table.is_empty() {
                    return;
                }
                $(out.push(rocwasm_schema::packed::Column {
                    table: $tid,
                    column: $cid,
                    values: <$ty as rocwasm_schema::Element>::column(&table.$field),
                });)+
            }
        }

        impl Table for $cols {
            type Row = $row;

            fn len(&self) -> usize {
                $cols::len(self)
            }

            fn row(&self, i: usize) -> $row {
                $cols::row(self, i)
            }

            #[inline]
            fn fetch(&self, i: usize) -> $row {
                $row { $($field: self.$field.get(i).copied().unwrap_or_default(),)+ }
            }
        }

        impl $cols {
            /// Column names as the Rust fields call them, in schema order.
            pub const COLUMNS: &'static [&'static str] = $table::COLUMNS;

            /// The table's WIT name.
            pub const TABLE: &'static str = $tname;

            /// The table's schema id.
            pub const TABLE_ID: u16 = $tid;

            /// Receive only `columns` of this table (see [`select`]($table::select)).
            pub fn select(columns: &[&str]) -> Result<(), crate::types::Status> {
                $table::select(columns)
            }

            /// The table borrowed, as a batch hands it out.
            pub fn view(&self) -> $table::View<'_> {
                $table::View { $($field: &self.$field,)+ }
            }

            /// An empty table with room for `n` rows in every column.
            pub fn with_capacity(n: usize) -> Self {
                Self { $($field: Vec::with_capacity(n),)+ }
            }

            /// Number of rows: the length of the longest column.
            pub fn len(&self) -> usize {
                0 $(.max(self.$field.len()))+
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// True when every column has the table's length, or is empty.
            /// A hand-built table may not be consistent.
            pub fn is_consistent(&self) -> bool {
                let n = self.len();
                true $(&& (self.$field.len() == n || self.$field.is_empty()))+
            }

            /// True when `column` (a Rust field name) has data, or the
            /// table has no rows.
            pub fn has_column(&self, column: &str) -> bool {
                self.view().has_column(column)
            }

            /// Row `i`; a too-short column reads as 0. Panics when
            /// `i >= len()`, like slice indexing.
            pub fn row(&self, i: usize) -> $row {
                assert!(i < self.len(), "row {i} of a table with {} rows", self.len());
                Table::fetch(self, i)
            }

            /// Row `i`, or `None` when out of range.
            pub fn get(&self, i: usize) -> Option<$row> {
                (i < self.len()).then(|| Table::fetch(self, i))
            }

            /// The rows, in production order.
            pub fn iter(&self) -> Rows<&Self> {
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

        impl<'a> IntoIterator for &'a $cols {
            type Item = $row;
            type IntoIter = Rows<&'a $cols>;

            fn into_iter(self) -> Self::IntoIter {
                self.iter()
            }
        }

        impl Extend<$row> for $cols {
            fn extend<I: IntoIterator<Item = $row>>(&mut self, rows: I) {
                for row in rows {
                    self.push(row);
                }
            }
        }

        impl FromIterator<$row> for $cols {
            fn from_iter<I: IntoIterator<Item = $row>>(rows: I) -> Self {
                let mut table = Self::default();
                table.extend(rows);
                table
            }
        }
    };
}

/// Every table's types and module, and [`Tables`], from the schema the
/// host uses too (`rocwasm_schema::record_tables!`).
macro_rules! sdk_tables {
    ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {
        $(
            table! {
                $(#[$tdoc])*
                $table = $tid $tname;
                $(#[$rdoc])*
                $row / $cols {
                    $($(#[$cdoc])* $cid $field: $ty = $cname,)+
                }
            }
        )+

        /// Every table of a batch, owned: what a plugin builds (in its tests,
        /// say) and [`pack`](Tables::pack)s into a [`Batch`](crate::Batch).
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct Tables {
            $($(#[$tdoc])* pub $table: $cols,)+
        }

        impl Tables {
            /// Records across all tables.
            pub fn len(&self) -> usize {
                0 $(+ self.$table.len())+
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Calls `f` with every column's ids and values.
            pub(crate) fn columns_mut(&mut self, mut f: impl FnMut(u16, u16, rocwasm_schema::ColumnMut<'_>)) {
                $($(f($tid, $cid, <$ty as rocwasm_schema::Element>::column_mut(&mut self.$table.$field));)+)+
            }

            /// `retain_mask` on table `table`; false when there is none.
            pub(crate) fn retain_mask_of(&mut self, table: u16, mask: &[bool]) -> bool {
                match table {
                    $($tid => {
                        self.$table.retain_mask(mask);
                        true
                    })+
                    _ => false,
                }
            }
        }
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
    ScratchMemory,
    CounterSample
);

impl CounterSample {
    /// The counter's value for the dispatch (summed over its instances):
    /// the `value` column holds a double's bits.
    pub fn value(&self) -> f64 {
        f64::from_bits(self.value)
    }
}

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
