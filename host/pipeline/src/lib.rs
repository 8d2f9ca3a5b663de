//! One run, live or replayed: a source of records → the plugin chain → the
//! host's outputs → one report. `rocwasm run` (inside the profiled process,
//! through the tool library) and `rocwasm replay` both run it.
//!
//! ```text
//!             RunPlan (rocwasm-plan), expanded for this process
//!                │
//!   Source::Live ─┤  engine buffers ──> chain buffer ──> stages ──┐
//!                 │  own context (kinds no stage traces) ─────────┤
//!   Source::Replay┤  reader batches ──> Chain::deliver ──> stages ┤
//!                 │                                               v
//!                 │                     SinkRoute (one buffer per kind) ──> Sinks
//!                 │                                       (CSV, JSON, rocpd, Perfetto, --stats)
//!                 └──> finish: flush, each fini once, close outputs ──> RunReport
//! ```
//!
//! What both sources share, written once here:
//! - the outputs of the plan ([`rocwasm_output::Outputs`]) and their claim
//!   registry, which the stages' file writes go through too, so every file
//!   of the output directory has one producer;
//! - the plugin engine and chain, built from the plan's stages
//!   ([`stages::stage_specs`]) with the same host environment;
//! - which kinds reach the sinks ([`route::SinkRoute`]): what a live run
//!   of the plan records, never a record twice;
//! - rocprofv3's kernel options ([`kernels`]): the engine's kernel naming
//!   and dispatch filter, which a live run's producers and a replay's
//!   batches both pass before anything else sees a dispatch;
//! - rocprofv3's `-P/--collection-period` ([`collection`]): the engine's
//!   record gate, which every delivery and a replay's batches pass; and
//!   `--selected-regions` (live only: the engine starts paused and
//!   interception's `roctxProfilerResume`/`roctxProfilerPause` switch it);
//! - rocprofv3's `-S/--summary` and `--summary-groups` ([`summaries`]),
//!   printed or written at the end from the run's statistics;
//! - the end: the chain's tables and problems, the outputs' files,
//!   statistics and errors, in one [`RunReport`].
//!
//! What differs stays with the source: a live run configures the engine's
//! own context and never stops the application (a chain that cannot start
//! is a problem in the report); a replay copies the recording's symbols
//! into the engine before each batch ([`replay`]) and fails on any error.
//! Interception (`rocwasm-intercept`) keeps only FFI and the producer
//! calls into [`Pipeline::profiler`].
//!
//! # Signals (live)
//!
//! Wasmtime normally installs SIGSEGV, SIGILL, SIGBUS and SIGFPE handlers
//! (out-of-bounds accesses and divisions by zero in guests fault in
//! hardware and the handler turns the fault into a trap). Inside someone
//! else's process those handlers would sit in front of the application's
//! own, and an application that installs its handlers later would break
//! wasm traps. A live pipeline's engine therefore runs with
//! `signals_based_traps(false)`: wasmtime installs no handler and compiles
//! explicit bounds and divisor checks instead (guests run somewhat slower;
//! compiled components are cached under a different engine hash than the
//! CLI's). Traps, deadlines (epochs) and memory caps work the same.
//!
//! # Failures (live)
//!
//! Nothing here may end the application: a chain that cannot start leaves
//! profiling running without plugins (the sinks then trace every kind
//! themselves), a plugin that fails is handled by its stage's policy, and
//! every failure becomes one `rocwasm:` line on stderr and in the report.

#![forbid(unsafe_code)]

pub mod api_log;
pub mod collection;
pub mod from_journal;
pub mod journal;
pub mod kernels;
pub mod many;
pub mod own;
pub mod pipeline;
pub mod replay;
pub mod report;
pub mod route;
pub mod sinks;
pub mod stages;
pub mod summaries;

pub use from_journal::{write_from_journal, FromJournal};
pub use journal::{summary_text, ProcessEnd};
pub use many::{ManyReplay, ManyReport, ProcessRecording, ProcessSummary};
pub use pipeline::{LiveHooks, NativeTools, Pipeline, Recording, RunReport, Source};
pub use replay::{Replay, SymbolSync};
pub use report::{render_table, PluginReport};
pub use route::SinkRoute;
