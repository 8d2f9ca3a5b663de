//! [`JournalReader`]: frames back in the order written, with what a crash
//! cut short said, not hidden.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rocwasm_core::batch_bytes;

use crate::{Frame, Symbols, BUILD, MAGIC, VERSION};

/// Why a journal cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The journal.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// Not a journal, or one this build cannot read.
    #[error("{path}: {what}")]
    Format {
        /// The journal.
        path: PathBuf,
        /// What is wrong, as a sentence.
        what: String,
    },
    /// A frame that is whole but cannot be decoded.
    #[error("{path}: the frame at byte {offset} is damaged: {what}")]
    Damaged {
        /// The journal.
        path: PathBuf,
        /// Where the frame starts.
        offset: u64,
        /// What is wrong.
        what: String,
    },
}

/// Reads a journal's frames in order.
pub struct JournalReader {
    r: BufReader<File>,
    path: PathBuf,
    offset: u64,
    /// Bytes of a last frame cut short (the writer died while writing it).
    cut_short: Option<u64>,
    buf: Vec<u8>,
}

impl JournalReader {
    /// Opens `path` and checks its header.
    pub fn open(path: &Path) -> Result<JournalReader, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let format = |what: String| JournalError::Format {
            path: path.to_path_buf(),
            what,
        };
        let mut r = BufReader::with_capacity(1 << 20, File::open(path).map_err(io)?);
        let mut head = [0u8; 16];
        r.read_exact(&mut head)
            .map_err(|_| format("too short to be a rocwasm journal".into()))?;
        if &head[..8] != MAGIC {
            return Err(format("not a rocwasm journal (no ROCWASMJ header)".into()));
        }
        let version = u32::from_ne_bytes(head[8..12].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(format(format!(
                "journal format {version}, this rocwasm reads format {VERSION}"
            )));
        }
        let len = u32::from_ne_bytes(head[12..16].try_into().expect("4 bytes")) as usize;
        let mut build = vec![0u8; len.min(4096)];
        r.read_exact(&mut build)
            .map_err(|_| format("the header is cut short".into()))?;
        if build != BUILD.as_bytes() {
            return Err(format(format!(
                "written by {:?}, read by {BUILD:?}: use the rocwasm of the tool library that wrote it",
                String::from_utf8_lossy(&build)
            )));
        }
        Ok(JournalReader {
            r,
            path: path.to_path_buf(),
            offset: 16 + len as u64,
            cut_short: None,
            buf: Vec::new(),
        })
    }

    /// The journal read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next frame; `None` at the end. A last frame cut short (its
    /// writer was killed while writing it) also ends the journal, and
    /// [`JournalReader::cut_short`] then says how many bytes it had.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, JournalError> {
        let start = self.offset;
        let mut head = [0u8; 9];
        let got = read_up_to(&mut self.r, &mut head).map_err(|e| self.io(e))?;
        if got == 0 {
            return Ok(None);
        }
        if got < head.len() {
            self.cut_short = Some(got as u64);
            return Ok(None);
        }
        let tag = head[0];
        let len = u64::from_ne_bytes(head[1..9].try_into().expect("8 bytes"));
        self.buf.clear();
        let read = (&mut self.r)
            .take(len)
            .read_to_end(&mut self.buf)
            .map_err(|e| self.io(e))?;
        if (read as u64) < len {
            self.cut_short = Some(9 + read as u64);
            return Ok(None);
        }
        self.offset += 9 + len;
        let damaged = |what: String| JournalError::Damaged {
            path: self.path.clone(),
            offset: start,
            what,
        };
        let frame = match tag {
            Frame::META => Frame::Meta(std::mem::take(&mut self.buf)),
            Frame::END => Frame::End(std::mem::take(&mut self.buf)),
            Frame::SYMBOLS => Frame::Symbols(
                serde_json::from_slice::<Symbols>(&self.buf).map_err(|e| damaged(e.to_string()))?,
            ),
            Frame::ARGS => {
                Frame::Args(serde_json::from_slice(&self.buf).map_err(|e| damaged(e.to_string()))?)
            }
            Frame::BATCH => {
                let mut scratch = Vec::new();
                match batch_bytes::decode(&mut self.buf.as_slice(), &mut scratch) {
                    Ok(Some(b)) => Frame::Batch(Box::new(b)),
                    Ok(None) => return Err(damaged("an empty batch frame".into())),
                    Err(e) => return Err(damaged(e.to_string())),
                }
            }
            other => return Err(damaged(format!("unknown frame tag {other}"))),
        };
        Ok(Some(frame))
    }

    /// Following a journal still being written: goes back to the start of
    /// a frame that [`JournalReader::next_frame`] found incomplete, so the
    /// next call reads it again, whole once its writer has finished it.
    pub fn retry_incomplete(&mut self) -> Result<(), JournalError> {
        if self.cut_short.take().is_some() {
            self.r
                .seek(SeekFrom::Start(self.offset))
                .map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    /// Bytes of the last frame, when the writer was killed while writing
    /// it (the frame is lost; every frame before it was read).
    pub fn cut_short(&self) -> Option<u64> {
        self.cut_short
    }

    fn io(&self, source: io::Error) -> JournalError {
        JournalError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// Reads until `buf` is full or the input ends; the bytes read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
