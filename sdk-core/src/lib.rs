//! `rocwasm-core`: the tool-facing model of ROCprofiler-SDK in pure Rust.
//!
//! No FFI and no wasmtime live here: this crate is what interception (in
//! `host/process/intercept`), the plugin runtime (`host/plugin-runtime/plugin-host`) and replay
//! (`host/formats/src/replay`) share. It contains no `unsafe` code.
//!
//! Each item has one path: the modules that hold the model's types are
//! private and their items are listed below, at the crate root; the modules
//! that stay public ([`buffer`], [`batch_bytes`], [`clock`], [`selection`])
//! have functions and types of their own besides.
//!
//! - kinds, phases, status codes (from `rocwasm-ids`), and [`ops`]:
//!   operation names and numbers of every kind — both defined once in
//!   `rocwasm-ids` and re-exported here.
//! - columnar batches, the unit of delivery ([`Batch`] and its tables);
//!   [`batch_bytes`]: a batch as bytes, for a process's own spool.
//! - agents, code objects and kernel symbols by id ([`SymbolTable`]); how
//!   kernels are named (`-T`, `-M`: [`KernelNaming`]).
//! - [`selection`]: the engine's gate for kernel dispatches (rocprofv3's
//!   kernel filters and `--kernel-rename`), the roctx ranges it reads, and
//!   the gate of every delivery (`-P/--collection-period`).
//! - [`Profiler`]: the engine — contexts, services, correlation ids, and the
//!   producer entry points interception calls; a [`Client`] is what one tool
//!   owns in it.
//! - [`buffer`]: the two-half record buffers (its module doc explains the
//!   concurrency design); a callback thread delivers them.
//! - callback records, requests, and the sink traits ([`CallbackRecord`],
//!   [`BufferSink`], …).
//! - [`domain`]: record sources tying buffer, callback and external kinds
//!   together (also from `rocwasm-ids`).
//! - [`clock`]: CLOCK_BOOTTIME timestamps and thread ids.

#![forbid(unsafe_code)]

mod batch;
pub mod batch_bytes;
pub mod buffer;
mod callback;
mod callback_thread;
mod client;
pub mod clock;
mod column_bytes;
mod correlation;
mod kind;
mod marker_ranges;
mod naming;
mod profiler;
mod record;
pub mod selection;
mod symbols;

/// Record sources (defined in `rocwasm-ids`).
pub use rocwasm_ids::domain;
/// Operation numbers and names of every kind (defined in `rocwasm-ids`).
pub use rocwasm_ids::ops;
pub use rocwasm_ids::ApiFamily;
/// The record tables' schema (tables, columns, ids, roles), from which the
/// batch's types are derived.
pub use rocwasm_schema as schema;
#[doc(hidden)]
pub use rocwasm_schema as __schema;

pub use batch::{
    ApiCall, ApiCallColumns, Batch, CounterSample, CounterSampleColumns, KernelDispatch,
    KernelDispatchColumns, MemoryAllocation, MemoryAllocationColumns, MemoryAllocationOperation,
    MemoryCopy, MemoryCopyColumns, MemoryCopyDirection, Retirement, RetirementColumns,
    RuntimeInitialization, RuntimeInitializationColumns, RuntimeLibrary, ScratchMemory,
    ScratchMemoryColumns, ScratchMemoryOperation, TableRow,
};
pub use buffer::{Buffer, Pushed};
pub use callback::{
    Argument, BufferId, BufferSink, CallbackPayload, CallbackRecord, CallbackSink,
    CallbackThreadId, ContextId, Correlation, DeliveryInfo, ExternalCorrelationRequest,
    ExternalCorrelationSink, HostKernelSymbol, HostRegistration, Phase,
};
pub use client::Client;
pub use domain::Domain;
pub use kind::{
    BufferPolicy, BufferTracingKind, CallbackPhase, CallbackTracingKind, ExternalCorrelationKind,
    Status,
};
pub use naming::{demangle, truncate_kernel_name, KernelNaming};
pub use ops::{operation_by_name, operation_name, operations, OperationKind};
pub use profiler::{AsyncOp, DispatchVerdicts, Profiler};
pub use record::Record;
pub use selection::{DispatchFilter, RecordGate, RegionsReport};
pub use symbols::{
    unknown_kernel_name, AgentInfo, AgentProperties, AgentType, CodeObject, CodeObjectStorage,
    InsertedSymbols, KernelSymbol, SymbolKey, SymbolTable, RENAMED_KERNEL_IDS,
};
