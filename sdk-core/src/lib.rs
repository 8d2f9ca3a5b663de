//! `rocwasm-core`: the tool-facing model of ROCprofiler-SDK in pure Rust.
//!
//! No FFI and no wasmtime live here: this crate is what interception (in
//! `host/intercept`), the plugin runtime (`host/runtime`) and replay
//! (`host/replay`) share.
//!
//! - [`kind`]: buffer- and callback-tracing kinds, phases, status codes.
//! - [`batch`]: columnar batches, the unit of delivery.
//! - [`symbols`]: agents, code objects and kernel symbols by id.

pub mod batch;
pub mod kind;
pub mod symbols;

pub use batch::*;
pub use kind::*;
pub use symbols::*;
