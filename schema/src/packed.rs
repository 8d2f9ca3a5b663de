//! The packed batch: one self-describing buffer holding the columns a
//! plugin selected (`rocwasm:plugin@0.3.0`'s `deliver-batch` argument).
//!
//! ```text
//! header  = magic "RWB3" | format u16 | column count u16 | entry*
//! entry   = table id u16 | column id u16 | width u8 (4 or 8) |
//!           3 reserved bytes (0) | rows u32 | offset u32         16 bytes
//! values  = each column's values, little-endian, starting at its
//!           offset (from the buffer's start, a multiple of 8)
//! ```
//!
//! Every number is little-endian. The header is `8 + 16 · columns` bytes,
//! so the first column starts 8-aligned; each column is padded to a
//! multiple of 8 bytes. A reader ([`Packed::parse`]) checks everything
//! once and then hands out `&[u64]`/`&[u32]` slices into the buffer; it
//! needs the buffer itself 8-aligned in memory ([`PackedError::Unaligned`]
//! otherwise, when [`AlignedCopy`] gives an aligned copy to read).
//!
//! Ids are the schema's permanent ones ([`crate::TABLES`]): a reader skips
//! the columns it does not know, so a newer host's buffer stays readable.

use zerocopy::{FromBytes, IntoBytes};

use crate::{ColumnRef, Width};

#[cfg(target_endian = "big")]
compile_error!("the packed batch is little-endian; this crate reads it in place");

/// The first four bytes.
pub const MAGIC: [u8; 4] = *b"RWB3";
/// The header format this crate writes and reads. It changes only if the
/// header's own layout does, never for a new table or column.
pub const FORMAT: u16 = 1;
/// Bytes before the first entry (magic, format, count).
pub const HEADER_BYTES: usize = 8;
/// Bytes per column entry.
pub const ENTRY_BYTES: usize = 16;

/// One column to pack: its ids and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column<'a> {
    /// The table's schema id.
    pub table: u16,
    /// The column's schema id within the table.
    pub column: u16,
    /// Its values.
    pub values: ColumnRef<'a>,
}

/// Bytes [`pack`] writes for `columns`.
pub fn packed_len(columns: &[Column<'_>]) -> usize {
    HEADER_BYTES
        + ENTRY_BYTES * columns.len()
        + columns
            .iter()
            .map(|c| pad8(c.values.len() * c.values.width().bytes()))
            .sum::<usize>()
}

/// Writes `columns` into `out` (cleared first) as one packed batch.
///
/// Panics when there are more than `u16::MAX` columns or a column or the
/// buffer outgrows `u32` (4 GiB): a delivery is far smaller.
pub fn pack(columns: &[Column<'_>], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(packed_len(columns));
    let count = u16::try_from(columns.len()).expect("at most 65535 columns");
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    let mut offset = HEADER_BYTES + ENTRY_BYTES * columns.len();
    for c in columns {
        let rows = u32::try_from(c.values.len()).expect("a column of at most u32::MAX rows");
        let width = c.values.width().bytes();
        out.extend_from_slice(&c.table.to_le_bytes());
        out.extend_from_slice(&c.column.to_le_bytes());
        out.extend_from_slice(&[width as u8, 0, 0, 0]);
        out.extend_from_slice(&rows.to_le_bytes());
        out.extend_from_slice(
            &u32::try_from(offset)
                .expect("a batch under 4 GiB")
                .to_le_bytes(),
        );
        offset += pad8(rows as usize * width);
    }
    for c in columns {
        let bytes = match c.values {
            ColumnRef::U32(v) => v.as_bytes(),
            ColumnRef::U64(v) => v.as_bytes(),
        };
        out.extend_from_slice(bytes);
        out.resize(pad8(out.len()), 0);
    }
}

fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Why a buffer is not a packed batch this reader can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackedError {
    /// Shorter than its header says.
    Truncated {
        /// Bytes the header needs.
        needed: usize,
        /// Bytes there are.
        len: usize,
    },
    /// It does not start with [`MAGIC`].
    Magic,
    /// A header format this reader does not know.
    Format(u16),
    /// An entry's width is neither 4 nor 8.
    Width {
        /// The entry.
        entry: usize,
        /// Its width byte.
        width: u8,
    },
    /// An entry's values lie outside the buffer or at an offset that is not
    /// a multiple of 8.
    Bounds {
        /// The entry.
        entry: usize,
    },
    /// The buffer is not 8-aligned in memory, so its columns cannot be
    /// borrowed as `u64` slices; read an [`AlignedCopy`] instead.
    Unaligned,
}

impl std::fmt::Display for PackedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackedError::Truncated { needed, len } => {
                write!(
                    f,
                    "packed batch truncated: {len} bytes, the header needs {needed}"
                )
            }
            PackedError::Magic => write!(f, "not a packed batch (no \"RWB3\" magic)"),
            PackedError::Format(v) => write!(
                f,
                "packed batch format {v}, this reader knows format {FORMAT}: update the plugin SDK"
            ),
            PackedError::Width { entry, width } => {
                write!(f, "packed batch column {entry}: width {width}, not 4 or 8")
            }
            PackedError::Bounds { entry } => {
                write!(
                    f,
                    "packed batch column {entry}: values outside the buffer or unaligned"
                )
            }
            PackedError::Unaligned => write!(f, "packed batch not 8-aligned in memory"),
        }
    }
}

impl std::error::Error for PackedError {}

/// A copy of a buffer in 8-aligned memory, for one [`Packed::parse`]
/// found [`PackedError::Unaligned`] (or may): parse [`AlignedCopy::bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlignedCopy {
    words: Vec<u64>,
    len: usize,
}

impl AlignedCopy {
    /// Copies `bytes`.
    pub fn new(bytes: &[u8]) -> AlignedCopy {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        words.as_mut_bytes()[..bytes.len()].copy_from_slice(bytes);
        AlignedCopy {
            words,
            len: bytes.len(),
        }
    }

    /// The copied bytes, 8-aligned.
    pub fn bytes(&self) -> &[u8] {
        &self.words.as_bytes()[..self.len]
    }
}

/// One entry of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    table: u16,
    column: u16,
    width: Width,
    rows: usize,
    offset: usize,
}

/// A checked packed batch: its columns as slices into the buffer. Parsing
/// checks every entry once and keeps nothing but the buffer (no
/// allocation): [`Packed::column`] reads the header again, which for the
/// few columns a plugin selects is a handful of loads.
#[derive(Debug, Clone, Copy)]
pub struct Packed<'a> {
    bytes: &'a [u8],
    count: usize,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Entry `entry` of `bytes`' header (which must hold it), checked
/// against the buffer.
fn entry_at(bytes: &[u8], header: usize, entry: usize) -> Result<Entry, PackedError> {
    let at = HEADER_BYTES + ENTRY_BYTES * entry;
    let width = match bytes[at + 4] {
        4 => Width::U32,
        8 => Width::U64,
        width => return Err(PackedError::Width { entry, width }),
    };
    let rows = u32_at(bytes, at + 8) as usize;
    let offset = u32_at(bytes, at + 12) as usize;
    let end = rows
        .checked_mul(width.bytes())
        .and_then(|n| n.checked_add(offset));
    if !offset.is_multiple_of(8) || offset < header || end.is_none_or(|e| e > bytes.len()) {
        return Err(PackedError::Bounds { entry });
    }
    Ok(Entry {
        table: u16_at(bytes, at),
        column: u16_at(bytes, at + 2),
        width,
        rows,
        offset,
    })
}

impl<'a> Packed<'a> {
    /// Checks the header and every entry against the buffer.
    pub fn parse(bytes: &'a [u8]) -> Result<Packed<'a>, PackedError> {
        let truncated = |needed| PackedError::Truncated {
            needed,
            len: bytes.len(),
        };
        if bytes.len() < HEADER_BYTES {
            return Err(truncated(HEADER_BYTES));
        }
        if bytes[..4] != MAGIC {
            return Err(PackedError::Magic);
        }
        let format = u16_at(bytes, 4);
        if format != FORMAT {
            return Err(PackedError::Format(format));
        }
        if !(bytes.as_ptr() as usize).is_multiple_of(8) {
            return Err(PackedError::Unaligned);
        }
        let count = usize::from(u16_at(bytes, 6));
        let header = HEADER_BYTES + ENTRY_BYTES * count;
        if bytes.len() < header {
            return Err(truncated(header));
        }
        for entry in 0..count {
            entry_at(bytes, header, entry)?;
        }
        Ok(Packed { bytes, count })
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when it holds no column.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn entry(&self, i: usize) -> Entry {
        // `parse` checked every entry.
        entry_at(self.bytes, HEADER_BYTES + ENTRY_BYTES * self.count, i).unwrap_or(Entry {
            table: 0,
            column: 0,
            width: Width::U64,
            rows: 0,
            offset: 0,
        })
    }

    fn values(&self, e: &Entry) -> ColumnRef<'a> {
        let bytes = &self.bytes[e.offset..e.offset + e.rows * e.width.bytes()];
        // `parse` checked the buffer's alignment, each offset's and each
        // range, so these casts cannot fail.
        match e.width {
            Width::U32 => ColumnRef::U32(<[u32]>::ref_from_bytes(bytes).unwrap_or(&[])),
            Width::U64 => ColumnRef::U64(<[u64]>::ref_from_bytes(bytes).unwrap_or(&[])),
        }
    }

    /// The column `column` of table `table`, if the buffer holds it.
    pub fn column(&self, table: u16, column: u16) -> Option<ColumnRef<'a>> {
        (0..self.count).find_map(|i| {
            let at = HEADER_BYTES + ENTRY_BYTES * i;
            (u16_at(self.bytes, at) == table && u16_at(self.bytes, at + 2) == column)
                .then(|| self.values(&self.entry(i)))
        })
    }

    /// Every column, in buffer order.
    pub fn columns(&self) -> impl ExactSizeIterator<Item = Column<'a>> + '_ {
        (0..self.count).map(|i| {
            let e = self.entry(i);
            Column {
                table: e.table,
                column: e.column,
                values: self.values(&e),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed_copy(columns: &[Column<'_>]) -> AlignedCopy {
        let mut bytes = Vec::new();
        pack(columns, &mut bytes);
        assert_eq!(bytes.len(), packed_len(columns));
        AlignedCopy::new(&bytes)
    }

    /// `good` with byte `at` set to `value`, aligned.
    fn with_byte(good: &[u8], at: usize, value: u8) -> AlignedCopy {
        let mut bytes = good.to_vec();
        bytes[at] = value;
        AlignedCopy::new(&bytes)
    }

    fn column(table: u16, column: u16, values: ColumnRef<'_>) -> Column<'_> {
        Column {
            table,
            column,
            values,
        }
    }

    #[test]
    fn round_trips_every_width_and_an_empty_column() {
        let (a, b, c) = (
            vec![1u64, 2, 3],
            vec![7u32, 8, 9, 10, 11],
            Vec::<u64>::new(),
        );
        let columns = [
            column(2, 9, ColumnRef::U64(&a)),
            column(2, 16, ColumnRef::U32(&b)),
            column(1, 7, ColumnRef::U64(&c)),
        ];
        let copy = packed_copy(&columns);
        let p = Packed::parse(copy.bytes()).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p.column(2, 9), Some(ColumnRef::U64(&[1, 2, 3])));
        assert_eq!(p.column(2, 16), Some(ColumnRef::U32(&[7, 8, 9, 10, 11])));
        assert_eq!(p.column(1, 7), Some(ColumnRef::U64(&[])));
        assert_eq!(p.column(3, 1), None);
        assert_eq!(p.columns().collect::<Vec<_>>(), columns);
        // 8 + 3·16 header, 24 + 24 (20 padded) + 0 values.
        assert_eq!(copy.bytes().len(), 8 + 48 + 24 + 24);
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let a = [1u64, 2, 3];
        let copy = packed_copy(&[column(1, 1, ColumnRef::U64(&a))]);
        let good = copy.bytes();
        assert_eq!(
            Packed::parse(&good[..5]).unwrap_err(),
            PackedError::Truncated { needed: 8, len: 5 }
        );
        assert!(matches!(
            Packed::parse(&good[..20]),
            Err(PackedError::Truncated { needed: 24, .. })
        ));
        let bad = with_byte(good, 0, b'X');
        assert_eq!(Packed::parse(bad.bytes()).unwrap_err(), PackedError::Magic);
        let bad = with_byte(good, 4, 2);
        let err = Packed::parse(bad.bytes()).unwrap_err();
        assert_eq!(err, PackedError::Format(2));
        assert!(err.to_string().contains("update the plugin SDK"), "{err}");
        let bad = with_byte(good, 8 + 4, 2);
        assert_eq!(
            Packed::parse(bad.bytes()).unwrap_err(),
            PackedError::Width { entry: 0, width: 2 }
        );
        let bad = with_byte(good, 8 + 8, 200); // rows past the end
        assert_eq!(
            Packed::parse(bad.bytes()).unwrap_err(),
            PackedError::Bounds { entry: 0 }
        );
        // One byte in: not 8-aligned in memory, and a copy reads it.
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(good);
        let unaligned = &shifted[1..];
        assert_eq!(
            Packed::parse(unaligned).unwrap_err(),
            PackedError::Unaligned
        );
        let copy = AlignedCopy::new(unaligned);
        let p = Packed::parse(copy.bytes()).unwrap();
        assert_eq!(p.column(1, 1), Some(ColumnRef::U64(&[1, 2, 3])));
    }

    #[test]
    fn a_reader_skips_ids_it_does_not_know() {
        // A newer host sends a table (id 99) this reader's schema lacks.
        let (a, b) = ([1u64, 2, 3], [4u32]);
        let copy = packed_copy(&[
            column(99, 1, ColumnRef::U32(&b)),
            column(2, 9, ColumnRef::U64(&a)),
        ]);
        let p = Packed::parse(copy.bytes()).unwrap();
        assert!(crate::TableSchema::by_id(99).is_none());
        assert_eq!(p.column(2, 9), Some(ColumnRef::U64(&[1, 2, 3])));
    }
}
