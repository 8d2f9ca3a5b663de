//! A [`Batch`] as bytes: the frame in which a process keeps its own batches
//! on disk for a while (the output spool of `rocwasm-formats`), and reads
//! them back.
//!
//! This is **not a file format**: values are in the writing machine's byte
//! order and the layout follows the column declarations of this build, so
//! only the process that wrote a frame reads it. That is what makes it
//! cheap: a column is copied as the bytes it already is (`column_bytes`,
//! through `zerocopy`, without `unsafe`), a few nanoseconds per record.
//!
//! ```text
//! frame   = length: u64 (bytes after this field)  table × 7
//! table   = column × (the table's columns, in declaration order)
//! column  = rows: u64  value × rows
//! ```
//!
//! Each column carries its own length, so even a hand-built batch whose
//! columns disagree (a transform plugin's reply) comes back as it was.

use std::io::{self, Read};

use crate::batch::*;
use crate::column_bytes::damaged;

/// Appends `batch` to `out` as one frame.
pub fn encode(batch: &Batch, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&0u64.to_ne_bytes());
    macro_rules! encode_tables {
        ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {
            $(batch.$field.encode_columns(out);)*
        };
    }
    crate::batch_tables!(encode_tables);
    let len = (out.len() - start - 8) as u64;
    out[start..start + 8].copy_from_slice(&len.to_ne_bytes());
}

/// Reads the next frame of `r`: `None` at the end of the input (no byte of
/// a new frame), an error for a frame cut short or damaged. `buf` is
/// scratch space, reused across calls.
pub fn decode(r: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<Option<Batch>> {
    let mut len = [0u8; 8];
    if !read_all_or_nothing(r, &mut len)? {
        return Ok(None);
    }
    let len = usize::try_from(u64::from_ne_bytes(len)).map_err(|_| damaged("frame length"))?;
    buf.clear();
    r.take(len as u64).read_to_end(buf)?;
    if buf.len() != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "a batch frame of {len} bytes ends after {} bytes",
                buf.len()
            ),
        ));
    }
    let bytes = &mut buf.as_slice();
    macro_rules! decode_tables {
        ($($(#[$doc:meta])* $field:ident: $row:ident / $cols:ident,)*) => {
            Batch { $($field: $cols::decode_columns(bytes)?,)* }
        };
    }
    let batch = crate::batch_tables!(decode_tables);
    if !bytes.is_empty() {
        return Err(damaged("bytes after the last column"));
    }
    Ok(Some(batch))
}

/// Fills `buf` from `r`: false when `r` was already at its end, an error
/// when it ends part way.
fn read_all_or_nothing(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "a batch frame's length is cut short",
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Batch {
        let mut b = Batch::default();
        for i in 0..5u64 {
            b.api_calls.push(ApiCall {
                kind: 3,
                operation: i as u32,
                correlation_id: i + 1,
                external_correlation_id: u64::MAX - i,
                ancestor: 0,
                thread_id: 77,
                start: 1000 * i,
                end: 1000 * i + 7,
            });
        }
        b.kernel_dispatches.push(KernelDispatch {
            correlation_id: 2,
            kernel_id: 9,
            grid_x: 1 << 20,
            workgroup_x: 256,
            ..Default::default()
        });
        b.retirements.push(Retirement {
            timestamp: 5,
            correlation_id: 1,
        });
        b
    }

    #[test]
    fn frames_come_back_as_they_were_written_then_none() {
        let mut bytes = Vec::new();
        let (a, empty) = (sample(), Batch::default());
        encode(&a, &mut bytes);
        encode(&empty, &mut bytes);
        encode(&a, &mut bytes);
        let (mut r, mut buf) = (bytes.as_slice(), Vec::new());
        assert_eq!(decode(&mut r, &mut buf).unwrap(), Some(a.clone()));
        assert_eq!(decode(&mut r, &mut buf).unwrap(), Some(empty));
        assert_eq!(decode(&mut r, &mut buf).unwrap(), Some(a));
        assert_eq!(decode(&mut r, &mut buf).unwrap(), None);
    }

    #[test]
    fn a_batch_whose_columns_disagree_comes_back_unchanged() {
        let mut odd = sample();
        odd.api_calls.end.pop();
        odd.kernel_dispatches.grid_y.push(4);
        assert!(!odd.is_consistent());
        let mut bytes = Vec::new();
        encode(&odd, &mut bytes);
        let back = decode(&mut bytes.as_slice(), &mut Vec::new()).unwrap();
        assert_eq!(back, Some(odd));
    }

    #[test]
    fn a_frame_cut_short_or_damaged_is_an_error_not_a_batch() {
        let mut bytes = Vec::new();
        encode(&sample(), &mut bytes);
        for cut in [3, 8, 20, bytes.len() - 1] {
            let err = decode(&mut &bytes[..cut], &mut Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}");
        }
        // A column claiming more rows than its frame holds.
        let mut damaged = bytes.clone();
        damaged[8..16].copy_from_slice(&u64::MAX.to_ne_bytes());
        let err = decode(&mut damaged.as_slice(), &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("column"), "{err}");
    }
}
