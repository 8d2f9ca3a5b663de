//! Replay: recorded rocprofv3 traces as the batches of a live run.
//!
//! [`open`] takes a rocprofv3 CSV file, a directory of them, a `results.json`
//! or a rocpd `.db` file and returns a [`ReplaySource`]: run metadata, a
//! [`SymbolTable`] (agents, code objects, kernel symbols), an
//! [`OperationNames`] table, and an iterator of columnar [`Batch`]es of at
//! most [`ReplayOptions::chunk_rows`] records per family — the same shapes a
//! live run delivers, so the same chain and sinks run on them.
//!
//! Kinds and operations are matched **by name** (numbers shift between SDK
//! releases). A name this build does not know is not dropped: it is
//! registered in the source's [`OperationNames`] under a synthetic number and
//! every sink prints the original name again (see [`crate::names`]).
//!
//! Each format's schema (CSV file and column names, the JSON types, rocpd
//! tables and columns) is `rocwasm-formats`'s, the one its sink writes
//! (`crate::{csv::schema, json::schema, rocpd::schema}`); the
//! readers here only map what they read onto batches. What each format
//! keeps:
//! - CSV: the columns rocprofv3 writes, read by header name (older column sets
//!   without `Stream_Id`/`Thread_Id`/`Dispatch_Id` and with
//!   `Private_Segment_Size`/`Group_Segment_Size` work too). Kernel names
//!   become kernel symbols (by `Kernel_Id` when present, else one id per
//!   name); agents are known only by their node number. Copy sizes, ancestors
//!   and external correlation ids are not in the CSV files and read as 0.
//! - JSON: every record field, symbols and agents.
//! - rocpd: everything the rocpd sink writes; each run's tables are read
//!   directly (the plain views are their `UNION ALL`), so joins use primary
//!   keys, on a background thread so that SQLite and the consumer overlap.
//!
//! Nothing is skipped without a word: every reader counts, per file, the
//! records it read, the ones it mapped and the ones it could not map, by
//! reason ([`ReplaySource::report`], a [`ReadReport`]). Names are mapped as
//! every rocprofv3 release (ROCm 5.x–7.x) spells them
//! ([`rocwasm_ids::recorded`]: the `_EXT` kinds, `…R0600` functions). A
//! record whose domain is unknown or whose field cannot be read is counted
//! and skipped; a CSV file cut short (a run killed mid-write) is read up to
//! the damaged line, which the report names. A `results.json` cut short is
//! refused with its line and column: the document is parsed whole. With
//! [`ReplaySource::set_strict`], the first record not mapped or the first
//! damage is an error instead.
//!
//! Unreadable input yields a [`ReplayError`] naming the file and line, never
//! a panic.

mod discover;
pub(crate) mod error;
pub(crate) mod progress;
pub(crate) mod reader;
pub(crate) mod report;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{OperationNames, RunMetadata};
pub use discover::{discover, Input};
pub use error::{ReplayError, Result};
use reader::{BatchReader, State};
pub use report::{Damage, FileReport, Issue, ReadReport, Reason};
use rocwasm_core::{Batch, SymbolTable};

/// Which recorded format a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// One rocprofv3 CSV file or a directory of them.
    Csv,
    /// rocprofv3's `results.json` (`--output-format json`).
    Json,
    /// A rocpd SQLite database (`--output-format rocpd`), rocprofv3's or
    /// rocwasm's own.
    Rocpd,
}

/// Support for the ingest benchmark (not a stable API).
#[doc(hidden)]
pub mod bench_support {
    pub use crate::rocpd::reader::record_queries;
}

/// Knobs of [`open_with`].
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Maximum records per family in one batch.
    pub chunk_rows: usize,
    /// Show a progress bar on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
    /// The operation-name table to map recorded names with (default: a new
    /// one). Recordings replayed together share one, so a name this build
    /// does not know gets the same synthetic number in all of them.
    pub names: Option<Arc<OperationNames>>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            chunk_rows: 65536,
            progress: true,
            names: None,
        }
    }
}

/// A recorded trace being replayed. Iterate it for batches; `meta`,
/// `symbols` and `names` are complete once the iterator is exhausted (CSV
/// files reveal kernel names and timestamps as they are read; a symbol is
/// always registered before the batch that uses it is returned).
pub struct ReplaySource {
    /// The file or directory given to [`open_with`].
    pub path: PathBuf,
    /// The format [`detect`] found there.
    pub format: TraceFormat,
    state: State,
    reader: Box<dyn BatchReader>,
    records: u64,
    done: bool,
    strict: bool,
}

impl ReplaySource {
    /// The recorded process: pid, hostname, command, run start and end (as
    /// far as the format records them; CSV files carry little).
    pub fn meta(&self) -> &RunMetadata {
        &self.state.meta
    }

    /// Agents, code objects and kernel symbols read so far: what the
    /// batches' `agent_id` and `kernel_id` columns refer to.
    pub fn symbols(&self) -> &Arc<SymbolTable> {
        &self.state.symbols
    }

    /// Kind and operation names of the batches' numbers, including the
    /// synthetic numbers given to names this build does not know.
    pub fn names(&self) -> &Arc<OperationNames> {
        &self.state.names
    }

    /// Records returned so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The records the recording holds, when its format tells before
    /// reading (rocpd row counts, file sizes); for a progress bar.
    pub fn estimated_records(&self) -> Option<u64> {
        self.state.progress.total()
    }

    /// What was read, mapped and not mapped so far, per file (complete once
    /// the iterator is exhausted).
    pub fn report(&self) -> &ReadReport {
        &self.state.report
    }

    /// Strict reading: the first record that cannot be mapped, or the first
    /// damage, ends the replay with an error naming the file and line
    /// ([`Reason::is_strict_error`]). Operation names this build does not
    /// know are still replayed under their recorded names.
    pub fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    /// The next batch, `Ok(None)` at the end. After an error the source is
    /// finished.
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        let mut next = self.reader.next_batch(&mut self.state);
        if self.format == TraceFormat::Rocpd {
            // The database reader runs on its own thread: count here what
            // it returns (every row it reads becomes a record).
            if let Ok(Some(b)) = &next {
                let file = self.state.report.file(&self.path);
                file.read += b.len() as u64;
                file.mapped += b.len() as u64;
            }
        }
        if self.strict && next.is_ok() {
            if let Some(e) = self.state.report.strict_error() {
                next = Err(e);
            }
        }
        match next {
            Ok(Some(b)) => {
                self.records += b.len() as u64;
                self.state.progress.set_records(self.records);
                Ok(Some(b))
            }
            other => {
                self.done = true;
                self.state.progress.finish();
                other
            }
        }
    }
}

impl Iterator for ReplaySource {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().transpose()
    }
}

/// Opens a recorded trace with default options (64 Ki rows, progress bar).
pub fn open(path: impl AsRef<Path>) -> Result<ReplaySource> {
    open_with(path, &ReplayOptions::default())
}

/// Detects the format of `path` and opens it.
pub fn open_with(path: impl AsRef<Path>, opts: &ReplayOptions) -> Result<ReplaySource> {
    let path = path.as_ref();
    let format = detect(path)?;
    let mut state = State {
        meta: RunMetadata::default(),
        symbols: Arc::new(SymbolTable::new()),
        names: opts
            .names
            .clone()
            .unwrap_or_else(|| Arc::new(OperationNames::new())),
        progress: progress::Progress::hidden(),
        chunk_rows: opts.chunk_rows.max(1),
        report: ReadReport::default(),
    };
    let reader: Box<dyn BatchReader> = match format {
        TraceFormat::Csv => Box::new(crate::csv::reader::CsvReader::open(path, &mut state)?),
        TraceFormat::Json => Box::new(crate::json::reader::JsonReader::open(path, &mut state)?),
        TraceFormat::Rocpd => Box::new(crate::rocpd::reader::RocpdReader::open(path, &mut state)?),
    };
    if opts.progress {
        state.progress = progress::Progress::new(state.progress.total());
    }
    Ok(ReplaySource {
        path: path.to_path_buf(),
        format,
        state,
        reader,
        records: 0,
        done: false,
        strict: false,
    })
}

/// CSV for directories and `.csv`, JSON for `.json`, rocpd for a file that
/// starts with the SQLite header; otherwise by the first byte.
pub fn detect(path: &Path) -> Result<TraceFormat> {
    let meta = std::fs::metadata(path).map_err(|e| ReplayError::io(path, e))?;
    if meta.is_dir() {
        return Ok(TraceFormat::Csv);
    }
    let mut head = [0u8; 16];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| ReplayError::io(path, e))?;
        f.read(&mut head).map_err(|e| ReplayError::io(path, e))?
    };
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if &head[..n] == b"SQLite format 3\0" {
        return Ok(TraceFormat::Rocpd);
    }
    match ext.as_str() {
        "db" | "rpd" | "sqlite" => Ok(TraceFormat::Rocpd),
        "json" => Ok(TraceFormat::Json),
        "csv" => Ok(TraceFormat::Csv),
        _ => match head[..n].iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => Ok(TraceFormat::Json),
            Some(_) => Ok(TraceFormat::Csv),
            None => Err(ReplayError::new(
                path,
                None,
                "empty file: not a rocprofv3 trace",
            )),
        },
    }
}
