//! The schema as data: [`TABLES`], derived from [`crate::record_tables!`],
//! and the typed column handles code uses to walk a batch by id.

use zerocopy::FromBytes;

/// A column's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Width {
    /// `u32`, 4 bytes.
    U32,
    /// `u64`, 8 bytes.
    U64,
}

impl Width {
    /// Bytes per element.
    pub const fn bytes(self) -> usize {
        match self {
            Width::U32 => 4,
            Width::U64 => 8,
        }
    }
}

/// What a column's values refer to, for code that must rewrite ids (a
/// replay over several recordings gives each its own id space).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// An agent id of the run's symbol table.
    Agent,
    /// A kernel-symbol id of the run's symbol table.
    Kernel,
    /// A counter-name id of the run's symbol table.
    Counter,
}

/// One column of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSchema {
    /// Permanent id within its table (never reused).
    pub id: u16,
    /// The Rust field name (`kernel_id`).
    pub field: &'static str,
    /// The WIT name (`kernel-id`).
    pub wit: &'static str,
    /// The element type.
    pub width: Width,
    /// What its values refer to, when they are ids to rewrite.
    pub role: Option<Role>,
}

/// One table of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSchema {
    /// Permanent id (never reused).
    pub id: u16,
    /// The Rust field name of the batch (`kernel_dispatches`).
    pub field: &'static str,
    /// The WIT name (`kernel-dispatches`).
    pub wit: &'static str,
    /// The row type's name (`KernelDispatch`).
    pub row: &'static str,
    /// Its columns, in declaration (WIT) order.
    pub columns: &'static [ColumnSchema],
}

impl TableSchema {
    /// The table with WIT name `wit`.
    pub fn by_wit_name(wit: &str) -> Option<&'static TableSchema> {
        TABLES.iter().find(|t| t.wit == wit)
    }

    /// The table with id `id`.
    pub fn by_id(id: u16) -> Option<&'static TableSchema> {
        TABLES.iter().find(|t| t.id == id)
    }

    /// Its column with WIT name `wit`.
    pub fn column(&self, wit: &str) -> Option<&'static ColumnSchema> {
        self.columns.iter().find(|c| c.wit == wit)
    }

    /// Its column with id `id`.
    pub fn column_by_id(&self, id: u16) -> Option<&'static ColumnSchema> {
        self.columns.iter().find(|c| c.id == id)
    }
}

/// A column's values, borrowed, whatever its element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnRef<'a> {
    /// A `u32` column.
    U32(&'a [u32]),
    /// A `u64` column.
    U64(&'a [u64]),
}

impl ColumnRef<'_> {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            ColumnRef::U32(v) => v.len(),
            ColumnRef::U64(v) => v.len(),
        }
    }

    /// True when it holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn width(&self) -> Width {
        match self {
            ColumnRef::U32(_) => Width::U32,
            ColumnRef::U64(_) => Width::U64,
        }
    }
}

/// A column's values, mutably borrowed, whatever its element type.
#[derive(Debug, PartialEq, Eq)]
pub enum ColumnMut<'a> {
    /// A `u32` column.
    U32(&'a mut Vec<u32>),
    /// A `u64` column.
    U64(&'a mut Vec<u64>),
}

/// The element types a column may have; lets code generated from the
/// schema turn a typed column into a [`ColumnRef`] without knowing its type.
pub trait Element: Copy + Default + 'static {
    /// This type's [`Width`].
    const WIDTH: Width;
    /// `values` as a [`ColumnRef`].
    fn column(values: &[Self]) -> ColumnRef<'_>;
    /// `values` as a [`ColumnMut`].
    fn column_mut(values: &mut Vec<Self>) -> ColumnMut<'_>;
    /// `bytes` (little-endian values, aligned for `Self`) as a slice, in
    /// place; empty when they are not (a reader checked them before).
    fn slice_from(bytes: &[u8]) -> &[Self];
}

impl Element for u32 {
    const WIDTH: Width = Width::U32;
    fn column(values: &[u32]) -> ColumnRef<'_> {
        ColumnRef::U32(values)
    }
    fn column_mut(values: &mut Vec<u32>) -> ColumnMut<'_> {
        ColumnMut::U32(values)
    }
    fn slice_from(bytes: &[u8]) -> &[u32] {
        <[u32]>::ref_from_bytes(bytes).unwrap_or(&[])
    }
}

impl Element for u64 {
    const WIDTH: Width = Width::U64;
    fn column(values: &[u64]) -> ColumnRef<'_> {
        ColumnRef::U64(values)
    }
    fn column_mut(values: &mut Vec<u64>) -> ColumnMut<'_> {
        ColumnMut::U64(values)
    }
    fn slice_from(bytes: &[u8]) -> &[u64] {
        <[u64]>::ref_from_bytes(bytes).unwrap_or(&[])
    }
}

/// `Some(Role::…)` from the schema's optional `@role` token.
macro_rules! role {
    () => {
        None
    };
    (agent) => {
        Some(Role::Agent)
    };
    (kernel) => {
        Some(Role::Kernel)
    };
    (counter) => {
        Some(Role::Counter)
    };
}

macro_rules! tables_as_data {
    ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {
        /// Every table of a batch, in batch order, with its columns.
        pub const TABLES: &[TableSchema] = &[$(
            TableSchema {
                id: $tid,
                field: stringify!($table),
                wit: $tname,
                row: stringify!($row),
                columns: &[$(
                    ColumnSchema {
                        id: $cid,
                        field: stringify!($field),
                        wit: $cname,
                        width: <$ty as Element>::WIDTH,
                        role: role!($($role)?),
                    },
                )+],
            },
        )+];
    };
}

crate::record_tables!(tables_as_data);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_names_agree() {
        let mut ids: Vec<u16> = TABLES.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), TABLES.len());
        for t in TABLES {
            assert_eq!(t.wit, t.field.replace('_', "-"), "{}", t.field);
            let mut cids: Vec<u16> = t.columns.iter().map(|c| c.id).collect();
            cids.sort_unstable();
            cids.dedup();
            assert_eq!(cids.len(), t.columns.len(), "{}", t.wit);
            for c in t.columns {
                assert_eq!(c.wit, c.field.replace('_', "-"), "{}.{}", t.wit, c.field);
                assert!(c.id > 0);
                // Agent and kernel ids are rewritten as u64s
                // (`rocwasm_core::Batch::column_mut`), counter ids as u32s.
                let width = match c.role {
                    None => c.width,
                    Some(Role::Counter) => Width::U32,
                    Some(_) => Width::U64,
                };
                assert_eq!(c.width, width, "{}.{}", t.wit, c.wit);
            }
        }
    }

    #[test]
    fn lookups_and_roles() {
        let k = TableSchema::by_wit_name("kernel-dispatches").unwrap();
        assert_eq!(k.id, 2);
        assert_eq!(k.column("kernel-id").unwrap().role, Some(Role::Kernel));
        assert_eq!(k.column("grid-z").unwrap().width, Width::U32);
        assert_eq!(TableSchema::by_id(3).unwrap().wit, "memory-copies");
        let agents: Vec<_> = TABLES
            .iter()
            .flat_map(|t| t.columns.iter().map(move |c| (t.wit, c)))
            .filter(|(_, c)| c.role == Some(Role::Agent))
            .map(|(t, c)| format!("{t}.{}", c.wit))
            .collect();
        assert_eq!(
            agents,
            [
                "kernel-dispatches.agent-id",
                "memory-copies.dst-agent-id",
                "memory-copies.src-agent-id",
                "memory-allocations.agent-id",
                "scratch-memory.agent-id",
                "counter-samples.agent-id"
            ]
        );
        let c = TableSchema::by_wit_name("counter-samples").unwrap();
        assert_eq!(c.id, 8);
        assert_eq!(c.column("counter-id").unwrap().role, Some(Role::Counter));
    }
}
