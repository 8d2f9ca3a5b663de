//! `rocwasm-ids`: every number and name that more than one part of rocwasm
//! relies on, defined once.
//!
//! Like ROCprofiler-SDK's `include/rocprofiler-sdk/*/api_id.h`, which its
//! library and its tools both include, this crate is shared by the engine
//! (`rocwasm-core`), the interception library, the simulated runtime, the
//! code generators (`xtask`) and the Rust plugin SDK, which builds it for
//! `wasm32`. So it has no dependencies (an optional `serde` feature derives
//! the serde traits for the host) and holds only constants, enums and
//! lookups.
//!
//! - [`kind`]: buffer-tracing, callback-tracing and external-correlation
//!   kinds and callback phases, as enums and as `u32` constants.
//! - [`ops`]: every kind's operations, with numbers and names.
//! - [`status`]: the SDK's status codes.
//! - [`domain`]: record sources tying the three kinds of one concept together.
//! - [`family`]: which runtime an API-call kind belongs to (HIP, HSA, marker…).
//! - [`recorded`]: the kind and operation spellings of recorded rocprofv3
//!   traces (ROCm 5.x–7.x) and what a live run calls them.
//! - [`hip_table`], [`hsa_table`]: the slot order of the runtimes' dispatch
//!   tables.
//!
//! `cargo xtask check-facts` fails when a kind or operation number, or a list
//! of operation names, is written anywhere else in the repository.

#![forbid(unsafe_code)]

pub mod domain;
pub mod family;
mod generated;
pub mod hip_table;
pub mod hsa_table;
pub mod kind;
pub mod ops;
pub mod recorded;
pub mod status;

pub use domain::Domain;
pub use family::ApiFamily;
pub use kind::{
    BufferPolicy, BufferTracingKind, CallbackPhase, CallbackTracingKind, ExternalCorrelationKind,
};
pub use ops::{
    buffer_kind_of, callback_kind_of, external_kind_of_buffer, external_kind_of_callback,
    operation_by_name, operation_count, operation_name, operations, OperationKind,
};
pub use status::Status;

/// `name` without `prefix` when it starts with it, ignoring ASCII case.
pub(crate) fn strip_prefix_ignore_case<'a>(name: &'a str, prefix: &str) -> &'a str {
    match name.get(..prefix.len()) {
        Some(head) if head.eq_ignore_ascii_case(prefix) => &name[prefix.len()..],
        _ => name,
    }
}
