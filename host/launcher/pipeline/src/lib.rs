//! The launcher's side of a run: batches from a source — a recorded
//! rocprofv3 trace (`rocwasm replay`), or a profiled process's record
//! journal (`rocwasm run`, after the process ended) — through the plugin
//! chain into the host's outputs, and one report.
//!
//! ```text
//!  reader batches (replay) ──┐
//!  <pid>.journal + durable   ├─> Chain::deliver ──> stages ──> SinkRoute ──> Sinks
//!  halves (from_journal) ────┘     (replay only)               (CSV, JSON, rocpd, Perfetto, --stats)
//!                                   finish: each fini once, close outputs ──> RunReport
//! ```
//!
//! The profiled process's side (the engine's own context, the in-process
//! chain, the journal it writes) is `rocwasm-record`, which links no output
//! format; what both sides share (the stages from the plan, which kinds
//! reach the outputs, rocprofv3's kernel options and collection period, the
//! chain's report) is defined there and used here.
//!
//! Here, written once:
//! - the outputs of the plan ([`rocwasm_formats::Outputs`]) and their claim
//!   registry, which the stages' file writes go through too, so every file
//!   of the output directory has one producer (a journaled process's stage
//!   files are claimed after the sinks', [`from_journal`]);
//! - a replay's reader loop ([`replay`], [`many`]): the recording's symbols
//!   copied into the engine before each batch, any error fatal;
//! - the outputs of a process from its record journal ([`from_journal`]),
//!   whatever way it ended;
//! - rocprofv3's `-S/--summary` and `--summary-groups` ([`summaries`]),
//!   printed or written at the end from the run's statistics.

#![forbid(unsafe_code)]

pub mod from_journal;
pub mod many;
pub mod pipeline;
pub mod replay;
pub mod sinks;
pub mod summaries;

pub use from_journal::{
    journal_holds_records, summary_text, write_from_journal, FromJournal, JournalOutputs,
};
pub use many::{ManyReplay, ManyReport, ProcessRecording, ProcessSummary};
pub use pipeline::{Pipeline, Recording, RunReport};
pub use replay::{Replay, SymbolSync, TraceNames};
pub use rocwasm_record::{render_table, PluginReport, ProcessEnd, SinkRoute};
