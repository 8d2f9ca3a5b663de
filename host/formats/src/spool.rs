//! The spool: batches kept on disk until the run ends, then written to
//! every format ([`WriteTiming::AtEnd`] of an [`crate::Outputs`]).
//!
//! A live run no longer uses it: the profiled process appends its batches
//! to its record journal (`rocwasm-journal`, the same bytes), and
//! `rocwasm run` writes the formats. What follows is why writing at the end
//! pays where a process does write its own outputs.
//!
//! Under a LOSSLESS buffer a run goes at the pace of whatever takes its
//! records. The formats take them at 0.6–6 M records/s (rocpd's SQLite
//! inserts are the slowest), an application at its maximum call rate makes
//! ten or more. So by default ([`WriteTiming::AtEnd`]) the outputs append
//! each batch to the spool, at memory-copy speed ([`rocwasm_core::batch_bytes`]:
//! columns copied as bytes), and the formats are written from it when the
//! run ends, as rocprofv3 writes its files at finalisation.
//!
//! The spool is an anonymous file in the output directory (`O_TMPFILE`,
//! through `tempfile`): it never has a name, so nothing is left behind
//! whatever way the process ends, and it is on the file system the user
//! chose for the run's files (often larger than `/tmp` on a compute node).
//! Its size is about that of the CSV files it turns into: the records'
//! columns as they are in memory, 56 bytes an API call, 112 a kernel
//! dispatch.
//!
//! [`WriteTiming::AtEnd`]: rocwasm_plan::WriteTiming::AtEnd

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, Write};
use std::path::Path;

use rocwasm_core::{batch_bytes, Batch};

/// Batches appended to an unnamed file, read back in the same order.
pub(crate) struct Spool {
    file: File,
    /// The frame being written, reused across batches.
    frame: Vec<u8>,
    /// Bytes of whole frames in the file.
    bytes: u64,
    batches: u64,
    records: u64,
}

impl Spool {
    /// An empty spool in `dir` (created when missing).
    pub(crate) fn create_in(dir: &Path) -> io::Result<Spool> {
        std::fs::create_dir_all(dir)?;
        Ok(Spool::in_file(tempfile::tempfile_in(dir)?))
    }

    /// A spool in `file`, an empty file open for reading and writing.
    pub(crate) fn in_file(file: File) -> Spool {
        Spool {
            file,
            frame: Vec::new(),
            bytes: 0,
            batches: 0,
            records: 0,
        }
    }

    /// Appends `batch`. On an error (a full disk) the file keeps only the
    /// whole frames before it, so [`Spool::drain`] still gives back every
    /// batch appended before.
    pub(crate) fn append(&mut self, batch: &Batch) -> io::Result<()> {
        self.frame.clear();
        batch_bytes::encode(batch, &mut self.frame);
        if let Err(e) = self.file.write_all(&self.frame) {
            // Best effort: a partial frame at the end would only be read
            // back as "cut short", after every whole one.
            let _ = self
                .file
                .set_len(self.bytes)
                .and_then(|()| self.file.seek(io::SeekFrom::Start(self.bytes)).map(drop));
            return Err(e);
        }
        self.bytes += self.frame.len() as u64;
        self.batches += 1;
        self.records += batch.len() as u64;
        Ok(())
    }

    /// Records appended so far.
    pub(crate) fn records(&self) -> u64 {
        self.records
    }

    /// Hands every batch back to `each`, in the order appended, and deletes
    /// the file. An error says how many batches came back before it.
    pub(crate) fn drain(mut self, mut each: impl FnMut(Batch)) -> Result<(), DrainError> {
        let fail = |read: u64, source: io::Error| DrainError {
            read,
            batches: self.batches,
            records: self.records,
            source,
        };
        self.file
            .seek(io::SeekFrom::Start(0))
            .map_err(|e| fail(0, e))?;
        let mut reader = BufReader::with_capacity(1 << 20, (&self.file).take(self.bytes));
        let mut scratch = Vec::new();
        let mut read = 0;
        loop {
            match batch_bytes::decode(&mut reader, &mut scratch) {
                Ok(Some(batch)) => {
                    read += 1;
                    each(batch);
                }
                Ok(None) if read == self.batches => return Ok(()),
                Ok(None) => {
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "the file ended early");
                    return Err(fail(read, e));
                }
                Err(e) => return Err(fail(read, e)),
            }
        }
    }
}

/// The spool could not be read back whole.
#[derive(Debug)]
pub(crate) struct DrainError {
    /// Batches handed back before the error.
    pub read: u64,
    /// Batches and records the spool held.
    pub batches: u64,
    pub records: u64,
    pub source: io::Error,
}

impl std::fmt::Display for DrainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the output spool ({} records in {} batches) could not be read back after batch {}: {}; the later batches are missing from every output file",
            self.records, self.batches, self.read, self.source
        )
    }
}

impl std::error::Error for DrainError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::OperationNames;
    use crate::synthetic::sample_run;

    fn batches(launches: usize, rows: usize) -> Vec<Batch> {
        sample_run(7, launches, rows, &OperationNames::new()).batches
    }

    #[test]
    fn batches_come_back_in_order_and_the_directory_stays_empty() {
        let dir = tempfile::tempdir().unwrap();
        let batches = batches(300, 200);
        let records: usize = batches.iter().map(Batch::len).sum();
        assert!(batches.len() > 3, "{} batches", batches.len());
        let mut spool = Spool::create_in(dir.path()).unwrap();
        for b in &batches {
            spool.append(b).unwrap();
        }
        assert_eq!(spool.records(), records as u64);
        // Unnamed: nothing to see in the directory, during or after.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut back = Vec::new();
        spool.drain(|b| back.push(b)).unwrap();
        assert_eq!(back, batches);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_spool_cut_short_says_how_much_came_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::create_in(dir.path()).unwrap();
        let batches = batches(300, 200);
        for b in &batches {
            spool.append(b).unwrap();
        }
        let records: usize = batches.iter().map(Batch::len).sum();
        // As if the file lost its tail (a failing disk).
        spool.file.set_len(spool.bytes - 10).unwrap();
        let mut back = 0;
        let err = spool.drain(|_| back += 1).unwrap_err();
        assert_eq!(err.read, back);
        assert_eq!(back as usize, batches.len() - 1);
        let text = err.to_string();
        let held = format!("{records} records in {} batches", batches.len());
        assert!(text.contains(&held), "{text}");
        assert!(text.contains("missing from every output file"), "{text}");
    }
}
