//! What `rocwasm:plugin@0.3.x` (`wit/`; 0.3.0 frozen in `wit/legacy/0.3.0/`) changes, on the host side:
//! batches cross as one packed column buffer of the columns a plugin
//! selected, and a transform answers with edits.
//!
//! - **Selection** ([`Selection`]): `delivery.select-columns` by the
//!   schema's WIT names, answered with the columns' permanent ids. Nothing
//!   selected means every column of every table.
//! - **Packing** ([`pack`]): the selected columns of the chain's batch into
//!   the stage's reusable buffer (`rocwasm_schema::packed`'s layout), so a
//!   delivery is one `list<u8>` whatever the number of columns: one guest
//!   `realloc` and one copy, against 0.2.0's 64 lists.
//! - **Edits** ([`apply`]): a transform's rows to keep and rewritten
//!   columns, checked against the batch it was given and applied to the
//!   whole batch, so tables and columns it never saw pass through.
//!
//! The component's exports are looked up by name and called with these
//! Rust types (`crate::legacy`, which drives every version but the
//! current one the same way).

use std::collections::BTreeMap;

use rocwasm_core::schema::packed::{self, Packed};
use rocwasm_core::schema::{ColumnMut, ColumnRef, TableSchema, TABLES};
use rocwasm_core::Batch;
use wasmtime::component::{ComponentType, Lift, Lower};

use crate::convert::ProjectionError;

/// `types.column-id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ComponentType, Lower, Lift)]
#[component(record)]
pub struct ColumnId {
    /// The table's schema id.
    pub table: u16,
    /// The column's schema id within the table.
    pub column: u16,
}

/// `types.table-rows`.
#[derive(Debug, Clone, PartialEq, Eq, ComponentType, Lift, Lower)]
#[component(record)]
pub struct TableRows {
    /// The table's schema id.
    pub table: u16,
    /// Bit `i` keeps row `i` (least significant bit first).
    pub bitmap: Vec<u8>,
}

/// `types.batch-edits`.
#[derive(Debug, Clone, Default, PartialEq, Eq, ComponentType, Lift, Lower)]
#[component(record)]
pub struct BatchEdits {
    /// Per table, the rows to keep.
    pub keep: Vec<TableRows>,
    /// Rewritten columns, packed; empty for none.
    pub columns: Vec<u8>,
}

/// The columns a 0.3.0 stage receives: of a table it selected columns
/// of, exactly those; of any other table, every column when the table has
/// rows (an empty table's columns are left out: a reader treats a column
/// that is not there as empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    tables: BTreeMap<u16, Vec<u16>>,
}

impl Selection {
    /// Selects `columns` of `table` (replacing an earlier choice for it)
    /// and answers their ids; on an unknown name nothing changes.
    pub fn select(
        &mut self,
        table: &str,
        columns: &[String],
    ) -> Result<Vec<ColumnId>, ProjectionError> {
        let schema = TableSchema::by_wit_name(table)
            .ok_or_else(|| ProjectionError::UnknownTable(table.to_string()))?;
        let ids = columns
            .iter()
            .map(|c| {
                schema
                    .column(c)
                    .map(|col| ColumnId {
                        table: schema.id,
                        column: col.id,
                    })
                    .ok_or_else(|| ProjectionError::UnknownColumn {
                        table: table.to_string(),
                        column: c.clone(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut columns: Vec<u16> = Vec::with_capacity(ids.len());
        for id in &ids {
            if !columns.contains(&id.column) {
                columns.push(id.column);
            }
        }
        self.tables.insert(schema.id, columns);
        Ok(ids)
    }

    /// Calls `each(table, column)` for the columns to send of a batch
    /// whose tables have `rows_of(table)` rows, in schema order of tables.
    fn for_each(&self, rows_of: impl Fn(u16) -> usize, mut each: impl FnMut(u16, u16)) {
        for t in TABLES {
            match self.tables.get(&t.id) {
                Some(selected) => selected.iter().for_each(|c| each(t.id, *c)),
                None if rows_of(t.id) > 0 => t.columns.iter().for_each(|c| each(t.id, c.id)),
                None => {}
            }
        }
    }

    /// [`Self::for_each`]'s columns, collected.
    #[cfg(test)]
    fn ids(&self, rows_of: impl Fn(u16) -> usize) -> Vec<(u16, u16)> {
        let mut ids = Vec::new();
        self.for_each(rows_of, |t, c| ids.push((t, c)));
        ids
    }
}

/// The table and column id of what a [`pack`] for a newer host adds (see
/// `HostEnv::newer_schema`): ids no schema of this build has.
pub const NEWER_ID: u16 = 9999;

/// Packs the columns of `batch` that `selection` names into `out`: the
/// host's work per 0.3.0 delivery, besides the call (one small vector of
/// column references, then one pass writing the buffer). With `newer`, the
/// buffer also holds what a later 0.3.x host may add and a 0.3.0 plugin
/// must skip: a column of a table it does not know ([`NEWER_ID`], one
/// value per record of the batch) and, when the batch has kernel
/// dispatches, a column of theirs it does not know (id [`NEWER_ID`]).
pub fn pack(batch: &Batch, selection: &Selection, newer: bool, out: &mut Vec<u8>) {
    let rows_of = |table| batch.rows_of(table).unwrap_or(0);
    let mut columns: Vec<packed::Column<'_>> = Vec::with_capacity(16);
    selection.for_each(rows_of, |table, column| {
        if let Some(values) = batch.column(table, column) {
            columns.push(packed::Column {
                table,
                column,
                values,
            });
        }
    });
    let newer_values: Vec<u32>;
    if newer {
        let records: usize = TABLES.iter().map(|t| rows_of(t.id)).sum();
        let kernel_dispatches = TableSchema::by_wit_name("kernel-dispatches").map(|t| t.id);
        let dispatches = kernel_dispatches.map_or(0, rows_of);
        newer_values = (0..records.max(dispatches) as u32).collect();
        columns.push(packed::Column {
            table: NEWER_ID,
            column: 1,
            values: ColumnRef::U32(&newer_values[..records]),
        });
        if let Some(table) = kernel_dispatches.filter(|_| dispatches > 0) {
            columns.push(packed::Column {
                table,
                column: NEWER_ID,
                values: ColumnRef::U32(&newer_values[..dispatches]),
            });
        }
    }
    packed::pack(&columns, out);
}

/// The table's WIT name, or its id when this build does not know it.
fn table_name(id: u16) -> String {
    TableSchema::by_id(id).map_or_else(|| format!("#{id}"), |t| t.wit.to_string())
}

/// Applies a transform's `edits` to (a copy of) the batch it was given;
/// a sentence naming the table or column when the edits do not fit it.
pub fn apply(batch: &Batch, edits: BatchEdits) -> Result<Batch, String> {
    let mut b = batch.clone();
    if !edits.columns.is_empty() {
        let copy = packed::AlignedCopy::new(&edits.columns);
        let rewritten =
            Packed::parse(copy.bytes()).map_err(|e| format!("rewritten columns: {e}"))?;
        for c in rewritten.columns() {
            let name = || {
                let t = TableSchema::by_id(c.table);
                let col = t.and_then(|t| t.column_by_id(c.column));
                format!(
                    "{}.{}",
                    table_name(c.table),
                    col.map_or_else(|| format!("#{}", c.column), |c| c.wit.to_string())
                )
            };
            let rows = b.rows_of(c.table).ok_or_else(|| {
                format!(
                    "rewritten column {} is of a table this host does not have",
                    name()
                )
            })?;
            if c.values.len() != rows {
                return Err(format!(
                    "rewritten column {} has {} rows, the table has {rows}",
                    name(),
                    c.values.len()
                ));
            }
            match (b.column_mut(c.table, c.column), c.values) {
                (Some(ColumnMut::U64(to)), ColumnRef::U64(from)) => to.copy_from_slice(from),
                (Some(ColumnMut::U32(to)), ColumnRef::U32(from)) => to.copy_from_slice(from),
                (None, _) => {
                    return Err(format!("rewritten column {} is not in the schema", name()))
                }
                (Some(_), _) => {
                    return Err(format!("rewritten column {} has the wrong width", name()))
                }
            }
        }
    }
    for keep in edits.keep {
        let rows = b.rows_of(keep.table).ok_or_else(|| {
            format!(
                "rows kept of table {}, which this host does not have",
                table_name(keep.table)
            )
        })?;
        if keep.bitmap.len() != rows.div_ceil(8) {
            return Err(format!(
                "the rows kept of {} are a bitmap of {} bytes, its {rows} rows need {}",
                table_name(keep.table),
                keep.bitmap.len(),
                rows.div_ceil(8)
            ));
        }
        let mask: Vec<bool> = (0..rows)
            .map(|i| keep.bitmap[i / 8] & (1 << (i % 8)) != 0)
            .collect();
        b.retain_rows_of(keep.table, &mask);
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{KernelDispatch, MemoryCopy};

    fn batch() -> Batch {
        let mut b = Batch::default();
        for i in 0..10u64 {
            b.kernel_dispatches.push(KernelDispatch {
                kernel_id: i,
                start: 100 + i,
                end: 200 + i,
                grid_x: i as u32,
                ..Default::default()
            });
        }
        b.memory_copies.push(MemoryCopy {
            bytes: 7,
            ..Default::default()
        });
        b
    }

    #[test]
    fn a_stage_gets_what_it_selected_and_every_column_before_it_selects() {
        let b = batch();
        let mut out = Vec::new();
        let mut all = Selection::default();
        pack(&b, &all, false, &mut out);
        let copy = packed::AlignedCopy::new(&out);
        let p = Packed::parse(copy.bytes()).unwrap();
        // Every column of the two tables with rows; none of the empty ones.
        assert_eq!(p.len(), 18 + 12);
        assert_eq!(p.column(3, 10), Some(ColumnRef::U64(&[7])));
        let ids = all
            .select("kernel-dispatches", &["kernel-id".into(), "grid-x".into()])
            .unwrap();
        assert_eq!(
            ids,
            [
                ColumnId {
                    table: 2,
                    column: 9
                },
                ColumnId {
                    table: 2,
                    column: 16
                }
            ]
        );
        pack(&b, &all, false, &mut out);
        let copy = packed::AlignedCopy::new(&out);
        let p = Packed::parse(copy.bytes()).unwrap();
        assert_eq!(p.len(), 2 + 12, "the copies table has a row");
        assert_eq!(
            p.column(2, 9),
            Some(ColumnRef::U64(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
        );
        assert_eq!(
            p.column(2, 16),
            Some(ColumnRef::U32(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
        );
        // Unknown names change nothing.
        assert!(matches!(
            all.select("pc-samples", &[]),
            Err(ProjectionError::UnknownTable(_))
        ));
        assert!(matches!(
            all.select("kernel-dispatches", &["kernel-id".into(), "nope".into()]),
            Err(ProjectionError::UnknownColumn { .. })
        ));
        // The table it did not select: whole, since it has rows.
        assert_eq!(all.ids(|_| 1).len(), 2 + 12 + 9 + 10 + 2 + 5 + 8 + 19);
        // An empty list selects none of the table.
        all.select("kernel-dispatches", &[]).unwrap();
        all.select("memory-copies", &["bytes".into()]).unwrap();
        pack(&b, &all, false, &mut out);
        let copy = packed::AlignedCopy::new(&out);
        let p = Packed::parse(copy.bytes()).unwrap();
        assert_eq!(
            p.columns().map(|c| (c.table, c.column)).collect::<Vec<_>>(),
            [(3, 10)]
        );
    }

    #[test]
    fn edits_keep_rows_and_rewrite_columns_of_the_whole_batch() {
        let b = batch();
        // Keep the even dispatches; rewrite their kernel ids (before the
        // keep applies: all 10 rows).
        let kernel_ids: Vec<u64> = (0..10).map(|i| 1000 + i).collect();
        let mut columns = Vec::new();
        packed::pack(
            &[packed::Column {
                table: 2,
                column: 9,
                values: ColumnRef::U64(&kernel_ids),
            }],
            &mut columns,
        );
        let edits = BatchEdits {
            keep: vec![TableRows {
                table: 2,
                bitmap: vec![0b0101_0101, 0b01],
            }],
            columns,
        };
        let out = apply(&b, edits).unwrap();
        assert_eq!(
            out.kernel_dispatches.kernel_id,
            [1000, 1002, 1004, 1006, 1008]
        );
        // Columns the transform never named are filtered with the rows.
        assert_eq!(out.kernel_dispatches.start, [100, 102, 104, 106, 108]);
        assert_eq!(out.kernel_dispatches.grid_x, [0, 2, 4, 6, 8]);
        // Other tables pass through.
        assert_eq!(out.memory_copies.bytes, [7]);
        assert_eq!(
            apply(&b, BatchEdits::default()).unwrap(),
            b,
            "no edits: the same batch"
        );
    }

    #[test]
    fn edits_that_do_not_fit_the_batch_are_named() {
        let b = batch();
        let keep = |table, bitmap| BatchEdits {
            keep: vec![TableRows { table, bitmap }],
            columns: Vec::new(),
        };
        let err = apply(&b, keep(2, vec![0xff])).unwrap_err();
        assert!(
            err.contains("kernel-dispatches") && err.contains("10 rows need 2"),
            "{err}"
        );
        let err = apply(&b, keep(99, vec![])).unwrap_err();
        assert!(err.contains("#99"), "{err}");
        // Kernel dispatches' `kernel-id` rewritten with `values`.
        let rewrite = |values| {
            let mut columns = Vec::new();
            packed::pack(
                &[packed::Column {
                    table: 2,
                    column: 9,
                    values,
                }],
                &mut columns,
            );
            apply(
                &b,
                BatchEdits {
                    keep: Vec::new(),
                    columns,
                },
            )
        };
        let err = rewrite(ColumnRef::U64(&[1, 2])).unwrap_err();
        assert!(
            err.contains("kernel-dispatches.kernel-id has 2 rows, the table has 10"),
            "{err}"
        );
        let err = rewrite(ColumnRef::U32(&[0; 10])).unwrap_err();
        assert!(err.contains("wrong width"), "{err}");
        let err = apply(
            &b,
            BatchEdits {
                keep: Vec::new(),
                columns: b"nonsense".to_vec(),
            },
        )
        .unwrap_err();
        assert!(err.contains("RWB3"), "{err}");
    }
}
