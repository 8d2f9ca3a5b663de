//! `rocwasm-core`: the tool-facing model of ROCprofiler-SDK in pure Rust.
//!
//! No FFI and no wasmtime live here: this crate is what interception (in
//! `host/intercept`), the plugin runtime (`host/plugin-host`) and replay
//! (`host/replay`) share. It contains no `unsafe` code.
//!
//! - [`kind`]: buffer- and callback-tracing kinds, phases, status codes, and
//!   [`registry`]: operation names and numbers of every kind — both defined
//!   once in `rocwasm-ids` and re-exported here.
//! - [`batch`]: columnar batches, the unit of delivery.
//! - [`batch_bytes`]: a batch as bytes, for a process's own spool.
//! - [`symbols`]: agents, code objects and kernel symbols by id;
//!   [`naming`]: how kernels are named (`-T`, `-M`).
//! - [`selection`]: the engine's gate for kernel dispatches (rocprofv3's
//!   kernel filters and `--kernel-rename`), the roctx ranges it reads, and
//!   the gate of every delivery (`-P/--collection-period`).
//! - [`profiler`]: the engine — contexts, services, correlation ids, and the
//!   producer entry points interception calls.
//! - [`buffer`]: the two-half record buffers (its module doc explains the
//!   concurrency design); [`callback_thread`] delivers them.
//! - [`callback`]: callback records, requests, and the sink traits.
//! - [`domain`]: record sources tying buffer, callback and external kinds
//!   together (also from `rocwasm-ids`).
//! - [`clock`]: CLOCK_BOOTTIME timestamps and thread ids.

#![forbid(unsafe_code)]

pub mod batch;
pub mod batch_bytes;
pub mod buffer;
pub mod callback;
pub mod client;
mod callback_thread;
pub mod clock;
mod column_bytes;
mod correlation;
pub mod kind;
pub mod naming;
pub mod profiler;
pub mod record;
pub mod selection;
pub mod symbols;

/// Record sources (defined in `rocwasm-ids`).
pub use rocwasm_ids::domain;
/// Operation numbers and names of every kind (defined in `rocwasm-ids`).
pub use rocwasm_ids::ops as registry;
pub use rocwasm_ids::ApiFamily;

pub use batch::*;
pub use buffer::{Buffer, Pushed};
pub use callback::*;
pub use client::Client;
pub use domain::Domain;
pub use kind::*;
pub use naming::{demangle, truncate_kernel_name, KernelNaming};
pub use profiler::{AsyncOp, Profiler};
pub use record::Record;
pub use registry::{operation_by_name, operation_name, operations, OperationKind};
pub use selection::{DispatchFilter, RecordGate, RegionsReport};
pub use symbols::*;
