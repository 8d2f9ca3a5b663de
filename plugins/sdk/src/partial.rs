//! Partial results that merge (WIT 0.3.1's `merge`): a plugin's state as
//! bytes, to be folded into another instance's.
//!
//! A plugin that implements [`MergeablePlugin`](crate::MergeablePlugin)
//! and is exported with
//! [`export_mergeable_analysis!`](crate::export_mergeable_analysis) can
//! run as many instances over parts of a trace (ranks, row groups) whose
//! results merge into the one a single instance gives. The host carries
//! the bytes between instances of the same plugin and configuration;
//! their format is the plugin's. [`PartialWriter`] and [`PartialReader`]
//! make it a few lines: a header that names the plugin and its format
//! version (so a partial of another plugin, or of an older build, is
//! refused with a sentence rather than misread), then little-endian
//! numbers, strings, [`Series`] and [`StatsTable`]s.
//!
//! Write names, not ids: a kernel, agent or operation id is only valid in
//! the process that recorded it, and partials come from many.
//!
//! ```
//! use rocwasm_plugin_sdk::partial::{PartialReader, PartialWriter};
//! use rocwasm_plugin_sdk::stats::StatsTable;
//!
//! let mut mine = StatsTable::new();
//! mine.add("copy", 10);
//! let mut w = PartialWriter::new("my-plugin/1");
//! w.table(&mine);
//! let bytes = w.finish();
//!
//! let mut theirs = StatsTable::new();
//! theirs.add("copy", 30);
//! let mut r = PartialReader::new(&bytes, "my-plugin/1").unwrap();
//! r.table_into(&mut theirs).unwrap();
//! r.finish().unwrap();
//! assert_eq!(theirs.get("copy").unwrap().total(), 40);
//! assert!(PartialReader::new(&bytes, "other/1").is_err());
//! ```

use crate::stats::{Series, StatsTable};

/// The first four bytes of every partial the SDK writes.
const MAGIC: &[u8; 4] = b"RWP1";

/// Writes a partial: the header, then values in order.
#[derive(Debug, Clone)]
pub struct PartialWriter {
    buf: Vec<u8>,
}

impl PartialWriter {
    /// A partial of the format `tag` names: the plugin and the version of
    /// its format (`"kernel-stats/1"`); a reader asks for the same tag.
    pub fn new(tag: &str) -> Self {
        let mut w = PartialWriter {
            buf: MAGIC.to_vec(),
        };
        w.str(tag);
        w
    }

    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn u128(&mut self, v: u128) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// The value's bits: a merge of maxima or minima stays exact.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A series as its exact sums.
    pub fn series(&mut self, s: &Series) {
        self.u64(s.count());
        self.u128(s.total());
        self.u128(s.sum_of_squares());
        self.u64(s.min());
        self.u64(s.max());
    }

    /// A table: its rows, name and series each, in name order.
    pub fn table(&mut self, t: &StatsTable) {
        self.u64(t.len() as u64);
        let mut rows: Vec<(&str, &Series)> = t.iter().collect();
        rows.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (name, series) in rows {
            self.str(name);
            self.series(series);
        }
    }

    /// The bytes to return from `take_partial`.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads a partial [`PartialWriter`] wrote, value by value; each error is
/// a sentence that says what was wrong and where.
#[derive(Debug, Clone)]
pub struct PartialReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> PartialReader<'a> {
    /// Checks the header: the SDK's magic and the format `tag`.
    pub fn new(bytes: &'a [u8], tag: &str) -> Result<Self, String> {
        if bytes.len() < 4 || &bytes[..4] != MAGIC {
            return Err(format!(
                "not a partial result written by the rocwasm plugin SDK (expected `{tag}`)"
            ));
        }
        let mut r = PartialReader { bytes, at: 4 };
        let found = r.str()?;
        if found != tag {
            return Err(format!(
                "a partial result of `{found}`, not of `{tag}`: partials merge only between instances of one plugin build"
            ));
        }
        Ok(r)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.at..end];
                self.at = end;
                Ok(s)
            }
            None => Err(format!(
                "the partial result is cut short: {} byte(s) wanted at offset {} of {}",
                n,
                self.at,
                self.bytes.len()
            )),
        }
    }

    pub fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    pub fn u128(&mut self) -> Result<u128, String> {
        let b = self.take(16)?;
        Ok(u128::from_le_bytes(b.try_into().expect("16 bytes")))
    }

    pub fn f64(&mut self) -> Result<f64, String> {
        self.u64().map(f64::from_bits)
    }

    pub fn str(&mut self) -> Result<String, String> {
        let at = self.at;
        let len = usize::try_from(self.u64()?).map_err(|_| "a string too long".to_string())?;
        let b = self.take(len)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| format!("the partial result's string at offset {at} is not UTF-8"))
    }

    pub fn series(&mut self) -> Result<Series, String> {
        let at = self.at;
        let (count, total, squares) = (self.u64()?, self.u128()?, self.u128()?);
        let (min, max) = (self.u64()?, self.u64()?);
        Series::from_sums(count, total, squares, min, max)
            .ok_or_else(|| format!("the partial result's series at offset {at} is not one"))
    }

    /// Merges a table [`PartialWriter::table`] wrote into `into`.
    pub fn table_into(&mut self, into: &mut StatsTable) -> Result<(), String> {
        let rows = self.u64()?;
        for _ in 0..rows {
            let name = self.str()?;
            let series = self.series()?;
            into.merge(name, &series);
        }
        Ok(())
    }

    /// Checks that every byte was read.
    pub fn finish(self) -> Result<(), String> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(format!(
                "{} byte(s) left over after the partial result",
                self.bytes.len() - self.at
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_reads_back_and_a_cut_is_named() {
        let mut w = PartialWriter::new("t/1");
        w.u64(7);
        w.u128(u128::MAX - 3);
        w.f64(2.5);
        w.str("héllo");
        let mut s = Series::new();
        s.add(4);
        s.add(9);
        w.series(&s);
        let bytes = w.finish();
        let mut r = PartialReader::new(&bytes, "t/1").unwrap();
        assert_eq!(r.u64().unwrap(), 7);
        assert_eq!(r.u128().unwrap(), u128::MAX - 3);
        assert_eq!(r.f64().unwrap(), 2.5);
        assert_eq!(r.str().unwrap(), "héllo");
        assert_eq!(r.series().unwrap(), s);
        r.finish().unwrap();
        let cut = &bytes[..bytes.len() - 3];
        let mut r = PartialReader::new(cut, "t/1").unwrap();
        (r.u64(), r.u128(), r.f64(), r.str()).3.unwrap();
        assert!(r.series().unwrap_err().contains("cut short"));
        assert!(PartialReader::new(b"RWP", "t/1").is_err());
    }
}
