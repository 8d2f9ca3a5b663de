//! The record journal: how a profiled process hands its records to the
//! `rocwasm` process that launched it, which writes every output format.
//!
//! The application only records (docs/ARCHITECTURE.md, "Who writes the
//! outputs"). Its tool library
//! appends what the output files need to one journal file per process, and
//! `rocwasm run` turns the journals into CSV, JSON, rocpd, Perfetto and
//! Parquet after the application has ended, however it ended:
//!
//! ```text
//! application (tool library)                    rocwasm run
//!   engine buffers ─> chain ─> JournalWriter ──> <journal dir>/<pid>.journal
//!                                                   │ JournalReader
//!                                                   └─> sinks (rocwasm-pipeline)
//! ```
//!
//! A frame is appended with one `write(2)`. The kernel's page cache holds
//! it from then on, so a frame is kept when the process is killed the next
//! instant (SIGKILL, the OOM killer, a scheduler's time limit); only a frame
//! cut short by the kill itself is lost, and the reader says so
//! ([`JournalReader::cut_short`]). Records still in the engine's buffers when
//! the process dies are in their durable halves ([`halves`]).
//!
//! # File format
//!
//! ```text
//! journal = header frame*
//! header  = "ROCWASMJ" version: u32 build-length: u32 build: utf-8
//! frame   = tag: u8 length: u64 payload (length bytes)
//! ```
//!
//! Numbers are in the writing machine's byte order: a journal is read on
//! the machine that wrote it, by the `rocwasm` of the same build (`build`
//! must match [`BUILD`]), because batches are stored as
//! [`rocwasm_core::batch_bytes`] frames, the columns as they are in memory.
//!
//! | tag | frame | payload |
//! |---|---|---|
//! | 1 | [`Frame::Meta`] | JSON: who the process is (written once, first) |
//! | 2 | [`Frame::Symbols`] | JSON: agents, code objects, kernel symbols, marker messages added since the last one |
//! | 3 | [`Frame::Batch`] | a `batch_bytes` frame: the records the outputs take |
//! | 4 | [`Frame::End`] | JSON: the process's own report at its normal end |
//! | 5 | [`Frame::Args`] | JSON: API calls' arguments, written before the batch holding their records |
//!
//! A journal without an `End` frame belongs to a process that did not reach
//! its end of run (a crash, a kill): the writer side says how it ended.

#![deny(unsafe_code)]

pub mod halves;
mod meta;
mod reader;
mod writer;

use rocwasm_core::{AgentInfo, Batch, CodeObject, KernelSymbol};
use serde::{Deserialize, Serialize};

pub use meta::RunMetadata;
pub use reader::{JournalError, JournalReader};
pub use writer::JournalWriter;

/// The first bytes of every journal.
pub const MAGIC: &[u8; 8] = b"ROCWASMJ";
/// The format's version (the header's second field).
pub const VERSION: u32 = 1;
/// The build that writes and reads batches the same way: journals of
/// another build are refused, not misread.
pub const BUILD: &str = concat!("rocwasm-journal ", env!("CARGO_PKG_VERSION"));
/// A journal file's name ends with this (`<pid>.journal`).
pub const EXTENSION: &str = "journal";

/// One frame of a journal (see the module docs' table).
#[derive(Debug)]
pub enum Frame {
    /// Who the process is, as JSON (the writer side's own type).
    Meta(Vec<u8>),
    /// Symbols records refer to, added since the last such frame.
    Symbols(Symbols),
    /// Records for the outputs (boxed: a batch's columns are many vectors).
    Batch(Box<Batch>),
    /// The process's report at its normal end, as JSON.
    End(Vec<u8>),
    /// Arguments of API calls (rocpd's `rocpd_arg`), by internal
    /// correlation id; a call's arguments come before the batch holding
    /// its record.
    Args(Vec<CallArgs>),
}

impl Frame {
    const META: u8 = 1;
    const SYMBOLS: u8 = 2;
    const BATCH: u8 = 3;
    const END: u8 = 4;
    const ARGS: u8 = 5;
}

/// The arguments one API call was made with, as the interception rendered
/// them when the call began: the call's record has the same internal
/// correlation id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallArgs {
    /// The call's internal correlation id.
    pub correlation_id: u64,
    /// Its arguments in declaration order (position = index).
    pub args: Vec<CallArg>,
}

/// One argument of a [`CallArgs`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallArg {
    /// The parameter's C type as the API's header spells it (`hipStream_t`).
    pub type_name: String,
    /// The parameter's name (`sizeBytes`).
    pub name: String,
    /// The value as text (numbers in decimal, pointers in hex or
    /// `nullptr`, C strings as their text).
    pub value: String,
}

/// Agents, code objects, kernel symbols and marker messages: what records
/// name by id.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbols {
    /// Agents (devices).
    #[serde(default)]
    pub agents: Vec<AgentInfo>,
    /// Loaded code objects.
    #[serde(default)]
    pub code_objects: Vec<CodeObject>,
    /// Kernel symbols.
    #[serde(default)]
    pub kernels: Vec<KernelSymbol>,
    /// Marker messages: (operation number of `MARKER_CORE_RANGE_API`, text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<(u32, String)>,
    /// Hardware counter names: (a counter sample's `counter_id`, name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<(u32, String)>,
}

impl Symbols {
    /// True when there is nothing in it.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
            && self.code_objects.is_empty()
            && self.kernels.is_empty()
            && self.markers.is_empty()
            && self.counters.is_empty()
    }

    /// Adds everything to `table`.
    pub fn insert_into(self, table: &rocwasm_core::SymbolTable) {
        self.agents.into_iter().for_each(|a| table.insert_agent(a));
        self.code_objects
            .into_iter()
            .for_each(|c| table.insert_code_object(c));
        // Named as the writing process named them already.
        self.kernels
            .into_iter()
            .for_each(|k| table.insert_kernel_as_named(k));
        for (op, text) in self.markers {
            table.insert_marker(op, &text);
        }
        for (id, name) in self.counters {
            table.insert_counter(id, &name);
        }
    }
}

/// A journal's name without its extension: the process id, and after an
/// `exec` (the same process, a new image and a new journal) `<pid>-<n>`.
/// The halves files of that image start with the same stem.
pub fn stem(pid: u32, image: u32) -> String {
    if image == 0 {
        pid.to_string()
    } else {
        format!("{pid}-{image}")
    }
}

/// The process id and image number of a journal's stem (see [`stem`]).
pub fn parse_stem(stem: &str) -> Option<(u32, u32)> {
    match stem.split_once('-') {
        None => Some((stem.parse().ok()?, 0)),
        Some((pid, image)) => Some((pid.parse().ok()?, image.parse().ok()?)),
    }
}

/// The journal file of stem `stem` (see [`stem`]) in `dir`.
pub fn path_in(dir: &std::path::Path, stem: &str) -> std::path::PathBuf {
    dir.join(format!("{stem}.{EXTENSION}"))
}

/// The journals in `dir`, by process id, then image (the order a process
/// ran them in); none when `dir` is missing.
pub fn journals_in(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for path in files_in(dir)? {
        if path.extension().is_some_and(|e| e == EXTENSION) {
            let key = path
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(parse_stem)
                .unwrap_or((u32::MAX, u32::MAX));
            out.push((key, path));
        }
    }
    out.sort();
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

/// The paths in `dir`, in no order; none when `dir` is missing.
pub(crate) fn files_in(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.map(|e| e.path())).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests;
