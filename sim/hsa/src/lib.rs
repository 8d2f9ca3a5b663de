//! A simulated `libhsa-runtime64.so.1` (ROCm 5.x ABI, symbol version `ROCR_1`).
//!
//! Programs and runtimes built against the real HSA runtime load this library
//! through `LD_LIBRARY_PATH` and see a virtual machine: one CPU agent plus the
//! GPU agents of the scenario (`sim-scenario`), AQL queues whose packets are
//! executed by a processor thread on a deterministic virtual clock, signals,
//! async copies, code-object loading with the AMD loader extension, and the
//! HSA tools protocol (`HSA_TOOLS_LIB`, `OnLoad` with the API table).
//!
//! Map of the crate:
//! - [`table`]: the API tables, layouts, and the exported trampolines;
//! - `api`: which function fills which slot;
//! - `core`, `agent`, `memory`, `signal`, `queue`, `copy`, `loader`: the API;
//! - `clock`, `effects`: the virtual timeline and host stand-ins for kernels;
//! - `tools`: `HSA_TOOLS_LIB`;
//! - `runtime`: process-wide state and clock domains;
//! - `topology`: the agents and memory pools the scenario describes.
//!
//! All `unsafe` here is FFI: C pointers crossing the API, the shared AQL ring,
//! the naked trampolines, and calls into tools' function pointers.

mod agent;
mod api;
mod clock;
mod copy;
mod core;
mod counters;
mod effects;
mod ffi;
mod loader;
mod memory;
mod queue;
mod runtime;
mod signal;
pub mod table;
mod tools;
mod topology;
mod util;
