//! The profiled process's side of a live run: it records, and writes no
//! output format.
//!
//! ```text
//!             RunPlan (rocwasm-plan), expanded for this process
//!                │
//!  engine buffers ──> chain buffer ──> stages (in the process) ──┐
//!  own context (kinds no stage traces) ──────────────────────────┤
//!                                 SinkRoute (one buffer per kind) ──> JournalSink
//!                                   <pid>.journal (rocwasm-journal) ──> the launcher
//!  finish: flush, each fini once, the process's report (ProcessEnd) ──┘
//! ```
//!
//! [`LiveRun`] starts the run a plan describes inside the application (the
//! tool library, `rocwasm-intercept`, holds one and calls the engine's
//! producer entry points), and ends it. What it shares with the launcher's
//! side (`rocwasm-pipeline`, which writes the outputs from the journal and
//! also runs replays) is defined here, once:
//! - the chain's stages from the plan ([`stages::stage_specs`]) and which
//!   kinds reach the outputs ([`route::SinkRoute`]): never a record twice;
//! - rocprofv3's kernel options ([`kernels`]) and collection period
//!   ([`collection`]) on the engine;
//! - the chain's end report ([`report::PluginReport`]);
//! - the journal's frames of a process ([`journal`]).
//!
//! This crate links no output format (no SQLite, Arrow/Parquet, protobuf):
//! `cargo tree -p rocwasm-intercept -e normal` shows it.
//!
//! # Signals
//!
//! Wasmtime normally installs SIGSEGV, SIGILL, SIGBUS and SIGFPE handlers
//! (out-of-bounds accesses and divisions by zero in guests fault in
//! hardware and the handler turns the fault into a trap). Inside someone
//! else's process those handlers would sit in front of the application's
//! own, and an application that installs its handlers later would break
//! wasm traps. A live run's engine therefore runs with
//! `signals_based_traps(false)`: wasmtime installs no handler and compiles
//! explicit bounds and divisor checks instead (guests run somewhat slower;
//! compiled components are cached under a different engine hash than the
//! CLI's). Traps, deadlines (epochs) and memory caps work the same.
//!
//! # Failures
//!
//! Nothing here may end the application: a chain that cannot start leaves
//! profiling running without plugins (the own context then traces every
//! kind the outputs want), a plugin that fails is handled by its stage's
//! policy, and every failure becomes one `rocwasm:` line on stderr and in
//! the report.

#![forbid(unsafe_code)]

pub mod api_log;
pub mod call_args;
pub mod collection;
pub mod journal;
pub mod kernels;
pub mod live;
pub mod own;
pub mod report;
pub mod route;
pub mod stages;

pub use journal::{JournalMeta, ProcessEnd};
pub use live::{admit_under_policy, LiveHooks, LiveReport, LiveRun, NativeTools};
pub use report::{render_table, PluginReport};
pub use route::SinkRoute;
