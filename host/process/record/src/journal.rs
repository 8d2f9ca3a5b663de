//! The application records, `rocwasm run` writes (docs/ARCHITECTURE.md,
//! "Who writes the outputs").
//!
//! A live run's sinks are a [`JournalSink`]: the batches the
//! outputs would have written, the symbols they name and the process's
//! identity go to `<journal>/<pid>.journal` (`rocwasm-journal`), and the
//! buffers that feed the outputs keep their halves in files beside it. At
//! its normal end the process appends its own report ([`ProcessEnd`]: the
//! in-process stages' tables and problems) instead of writing a summary.
//!
//! The launcher then calls `rocwasm_pipeline::write_from_journal` for each
//! journal, however the process ended.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rocwasm_core::{Batch, SymbolTable};
use rocwasm_journal::RunMetadata;
use rocwasm_journal::{JournalWriter, Symbols};
use rocwasm_plan::ProcessInfo;
use serde::{Deserialize, Serialize};

use crate::call_args::PendingArgs;

/// Who wrote a journal: its first frame.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalMeta {
    /// The run's metadata as the process knew it at its start.
    pub meta: RunMetadata,
    /// The process's identity, for the output templates (`%pid%`,
    /// `%rank%`, …): the launcher expands the same directory.
    pub process: ProcessInfo,
    /// The output directory template the process's run used, when it is
    /// not the launcher's plan's: a forked child's run writes to
    /// `<dir>/child-%pid%`, and its outputs must not overwrite the parent's.
    #[serde(default)]
    pub output_directory: Option<rocwasm_plan::PathTemplate>,
}

/// A process's own report at its normal end: the journal's last frame.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProcessEnd {
    /// The in-process stages' tables and problems, rendered.
    pub plugin_text: String,
    /// True when no in-process stage printed a table (the host's
    /// statistics then stand in).
    pub no_plugin_tables: bool,
    /// Lines about the process (kernels registered, the clock), without
    /// the `rocwasm: ` prefix.
    pub lines: Vec<String>,
    /// Problems at start-up, of native tools, of the audit line.
    pub problems: Vec<String>,
    /// Notes of the run's filters (kernel selection, collection period,
    /// regions).
    pub notes: Vec<String>,
    /// When the run ended (the records' clock, ns).
    pub end_ns: u64,
    /// The files the in-process stages wrote, with the stage's name: the
    /// launcher's outputs claim them after the stages, as one run's would
    /// (a host sink keeps its own files, a statistics file is left to the
    /// stage that wrote it).
    #[serde(default)]
    pub stage_files: Vec<(PathBuf, String)>,
}

/// What the rocprofiler-sdk back end's tool knows of the SDK's buffer,
/// kept beside the journal (`<pid>.sdk-state`) and rewritten after each
/// delivery: when the process dies, the launcher says from it what was
/// lost (the records the SDK still held are never delivered, and the SDK
/// does not say how many there were).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SdkState {
    /// The SDK buffer's size, bytes.
    pub buffer_bytes: u64,
    /// Its watermark (it is delivered when this full), bytes.
    pub watermark_bytes: u64,
    /// Deliveries of that buffer so far.
    pub deliveries: u64,
    /// Records delivered.
    pub delivered: u64,
    /// Of those, the records imported into the engine (the rest are of
    /// kinds rocwasm does not record).
    pub imported: u64,
    /// Records the SDK reported dropped (0 under its LOSSLESS policy).
    pub dropped: u64,
}

impl SdkState {
    /// The file beside a journal directory's journals for process `pid`.
    pub fn path(journal_dir: &Path, pid: u32) -> PathBuf {
        journal_dir.join(format!("{pid}.sdk-state"))
    }

    /// Writes the state (a new file renamed over the old one: a process
    /// dying in the middle leaves the previous state whole).
    pub fn write(&self, journal_dir: &Path, pid: u32) -> std::io::Result<()> {
        let path = Self::path(journal_dir, pid);
        let tmp = path.with_extension("sdk-state.new");
        let json = serde_json::to_vec(self).expect("the SDK state serialises");
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, &path)
    }

    /// The state a process left, if it ran under the SDK back end.
    pub fn read(journal_dir: &Path, pid: u32) -> Option<SdkState> {
        let bytes = std::fs::read(Self::path(journal_dir, pid)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// What a process that died without finishing lost under the SDK back
    /// end, in one sentence: only what is known, never a guessed count.
    /// `kept`: the records the launcher read from its journal and buffer
    /// files.
    pub fn loss_sentence(&self, kept: u64) -> String {
        let held = if self.deliveries == 0 {
            format!(
                "the SDK never delivered its buffer ({} bytes) before the process died, so every \
                 record it made is lost",
                self.buffer_bytes
            )
        } else {
            let mut s = format!(
                "the SDK delivered its buffer {} time(s) ({} records, {} imported into rocwasm's \
                 buffers; {kept} reached the record journal and are kept",
                self.deliveries, self.delivered, self.imported
            );
            if self.imported > kept {
                s.push_str(&format!(
                    ", so at least {} imported records were still in rocwasm's buffers and are lost",
                    self.imported - kept
                ));
            }
            s.push_str(&format!(
                "), and the records it made after its last delivery (up to its {}-byte buffer, \
                 delivered at {} bytes) were still in the SDK's buffer and are lost",
                self.buffer_bytes, self.watermark_bytes
            ));
            s
        };
        format!(
            "records lost in the crash (--backend rocprofiler-sdk): {held}; the SDK does not say \
             how many its buffer held, so that number is unknown. --backend builtin keeps every \
             completed record of a crashed process (record journal and durable buffer halves)"
        )
    }
}

/// A live run's sinks when the plan has a journal: see the module docs.
pub struct JournalSink {
    writer: JournalWriter,
    /// The journal's name without extension; the durable halves' files
    /// start with it.
    stem: String,
    /// How far into the symbol table's insertion log the journal is: an
    /// entry the table replaced (a kernel first known from HIP's
    /// registration, then from the loader) is journaled again, and the
    /// launcher's table replaces it too.
    cursor: usize,
    /// The first write that failed, and records lost since.
    failed: Option<(String, u64)>,
    /// Arguments of API calls, written before each batch (when the
    /// outputs write them: `crate::call_args`).
    args: Option<Arc<PendingArgs>>,
}

impl JournalSink {
    /// The journal of this process in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<JournalSink> {
        // A forked child that profiles has a pid of its own; a program this
        // process `exec`s has the same pid and the next image number.
        let pid = std::process::id();
        let mut image = 0;
        let (writer, stem) = loop {
            let stem = rocwasm_journal::stem(pid, image);
            match JournalWriter::create(&rocwasm_journal::path_in(dir, &stem)) {
                Ok(w) => break (w, stem),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && image < 10_000 => {
                    image += 1
                }
                Err(e) => return Err(e),
            }
        };
        Ok(JournalSink {
            writer,
            stem,
            cursor: 0,
            failed: None,
            args: None,
        })
    }

    /// Who this process is: the journal's first frame.
    pub fn meta(&mut self, meta: &JournalMeta) {
        let json = serde_json::to_vec(meta).expect("metadata serialises");
        let r = self.writer.meta(&json);
        self.check(r, 0);
    }

    /// Appends the symbols `table` gained (or replaced) since the last call:
    /// each insertion is read once, whatever the table's size.
    pub fn symbols(&mut self, table: &SymbolTable) {
        let (new, cursor) = table.inserted_since(self.cursor);
        self.cursor = cursor;
        if !new.is_empty() {
            let new = Symbols {
                agents: new.agents,
                code_objects: new.code_objects,
                kernels: new.kernels,
                markers: new.markers,
                counters: new.counters,
            };
            let r = self.writer.symbols(&new);
            self.check(r, 0);
        }
    }

    /// Journals the arguments kept in `args` before each batch from now on.
    pub fn set_args(&mut self, args: Arc<PendingArgs>) {
        self.args = Some(args);
    }

    /// Records for the outputs, after the symbols they name and the
    /// arguments of their calls.
    pub fn batch(&mut self, table: &SymbolTable, batch: &Batch) {
        self.symbols(table);
        if let Some(args) = &self.args {
            let calls = args.take();
            if !calls.is_empty() {
                let r = self.writer.args(&calls);
                self.check(r, 0);
            }
        }
        let r = self.writer.batch(batch);
        self.check(r, batch.len() as u64);
    }

    /// The process's own report: the journal's last frame.
    pub fn end(&mut self, table: &SymbolTable, end: &ProcessEnd) {
        self.symbols(table);
        let json = serde_json::to_vec(end).expect("the report serialises");
        let r = self.writer.end(&json);
        self.check(r, 0);
    }

    /// The journal's name without extension (see `rocwasm_journal::stem`).
    pub fn stem(&self) -> &str {
        &self.stem
    }

    /// Records appended.
    pub fn records(&self) -> u64 {
        self.writer.records()
    }

    /// A sentence about records that could not be journaled.
    pub fn problem(&self) -> Option<String> {
        self.failed.as_ref().map(|(e, lost)| {
            format!(
                "the record journal {} could not be written ({e}): {lost} records lost",
                self.writer.path().display()
            )
        })
    }

    fn check(&mut self, r: std::io::Result<()>, records: u64) {
        if let Err(e) = r {
            match &mut self.failed {
                Some((_, lost)) => *lost += records,
                None => {
                    eprintln!(
                        "rocwasm: cannot write the record journal {}: {e}",
                        self.writer.path().display()
                    );
                    self.failed = Some((e.to_string(), records));
                }
            }
        }
    }
}
