//! [`JournalWriter`]: appends frames, one `write(2)` each.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rocwasm_core::{batch_bytes, Batch};

use crate::{CallArgs, Frame, Symbols, BUILD, MAGIC, VERSION};

/// Appends frames to a new journal file. Not shared between threads by
/// itself: its owner serialises the calls (a delivery thread at a time).
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    /// The frame being written, reused.
    frame: Vec<u8>,
    bytes: u64,
    records: u64,
}

impl JournalWriter {
    /// Creates the journal at `path` (its directory too, when missing) and
    /// writes the header. An existing file is an error: a journal has one
    /// writer.
    pub fn create(path: &Path) -> io::Result<JournalWriter> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        let mut w = JournalWriter {
            file,
            path: path.to_path_buf(),
            frame: Vec::with_capacity(64 << 10),
            bytes: 0,
            records: 0,
        };
        w.frame.extend_from_slice(MAGIC);
        w.frame.extend_from_slice(&VERSION.to_ne_bytes());
        w.frame
            .extend_from_slice(&(BUILD.len() as u32).to_ne_bytes());
        w.frame.extend_from_slice(BUILD.as_bytes());
        w.flush_frame()?;
        Ok(w)
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Records appended so far (in batch frames).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Who the process is (JSON), the first frame.
    pub fn meta(&mut self, json: &[u8]) -> io::Result<()> {
        self.bytes_frame(Frame::META, json)
    }

    /// Symbols added since the last call.
    pub fn symbols(&mut self, symbols: &Symbols) -> io::Result<()> {
        let json = serde_json::to_vec(symbols).map_err(io::Error::other)?;
        self.bytes_frame(Frame::SYMBOLS, &json)
    }

    /// Arguments of calls whose records come in a later batch frame.
    pub fn args(&mut self, args: &[CallArgs]) -> io::Result<()> {
        let json = serde_json::to_vec(args).map_err(io::Error::other)?;
        self.bytes_frame(Frame::ARGS, &json)
    }

    /// Records for the outputs.
    pub fn batch(&mut self, batch: &Batch) -> io::Result<()> {
        self.frame.clear();
        self.frame.push(Frame::BATCH);
        self.frame.extend_from_slice(&0u64.to_ne_bytes());
        batch_bytes::encode(batch, &mut self.frame);
        let len = (self.frame.len() - 9) as u64;
        self.frame[1..9].copy_from_slice(&len.to_ne_bytes());
        self.flush_frame()?;
        self.records += batch.len() as u64;
        Ok(())
    }

    /// The process's report at its normal end (JSON), the last frame.
    pub fn end(&mut self, json: &[u8]) -> io::Result<()> {
        self.bytes_frame(Frame::END, json)
    }

    fn bytes_frame(&mut self, tag: u8, payload: &[u8]) -> io::Result<()> {
        self.frame.clear();
        self.frame.push(tag);
        self.frame
            .extend_from_slice(&(payload.len() as u64).to_ne_bytes());
        self.frame.extend_from_slice(payload);
        self.flush_frame()
    }

    /// Writes the frame at once. After an error (a full disk) the frame is
    /// cut off again, so the file keeps only whole frames and later frames
    /// still count.
    fn flush_frame(&mut self) -> io::Result<()> {
        if let Err(e) = self.file.write_all(&self.frame) {
            let _ = self
                .file
                .set_len(self.bytes)
                .and_then(|()| self.file.seek(SeekFrom::Start(self.bytes)).map(drop));
            return Err(e);
        }
        self.bytes += self.frame.len() as u64;
        Ok(())
    }
}
