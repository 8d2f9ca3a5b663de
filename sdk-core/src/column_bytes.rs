//! One column as bytes: its length (a `u64`), then its values, in the
//! writing machine's byte order. The unit of [`crate::batch_bytes`]'s
//! frames, written and read by each column table (`columns!` in
//! [`crate::batch`]); below both, so the tables need not know the frames.
//!
//! `zerocopy` checks that `u32`/`u64` slices may be viewed as bytes, so a
//! column is copied as the bytes it already is, without `unsafe`.

use std::io;

use zerocopy::{FromBytes, Immutable, IntoBytes};

/// Appends `values` to `out`: their number as a `u64`, then their bytes.
pub(crate) fn put<T: IntoBytes + Immutable>(values: &[T], out: &mut Vec<u8>) {
    out.extend_from_slice(&(values.len() as u64).to_ne_bytes());
    out.extend_from_slice(values.as_bytes());
}

/// Reads back the column [`put`] wrote at the front of `bytes`, leaving
/// `bytes` after it.
pub(crate) fn take<T: FromBytes + IntoBytes + Default + Clone>(
    bytes: &mut &[u8],
) -> io::Result<Vec<T>> {
    let (rows, rest) = bytes
        .split_first_chunk::<8>()
        .ok_or_else(|| damaged("a column's length"))?;
    let rows =
        usize::try_from(u64::from_ne_bytes(*rows)).map_err(|_| damaged("a column's length"))?;
    let size = rows
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&n| n <= rest.len())
        .ok_or_else(|| damaged("a column longer than its frame"))?;
    let mut values = vec![T::default(); rows];
    values.as_mut_bytes().copy_from_slice(&rest[..size]);
    *bytes = &rest[size..];
    Ok(values)
}

/// The error for a frame whose `what` does not fit.
pub(crate) fn damaged(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("a damaged batch frame: {what} does not fit"),
    )
}
