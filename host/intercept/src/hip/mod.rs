//! HIP interposition by `LD_PRELOAD`.
//!
//! Every `hip*`/`__hip*` function Debian's ROCm 5.2 `libamdhip64.so.5` exports
//! (399) has an exported twin here, generated from the real headers by
//! `cargo xtask gen-intercept` into `generated.rs` (see `xtask/src/intercept.rs`
//! for how signatures are derived and why the file is checked in). An
//! unversioned definition in a preloaded library satisfies the application's
//! versioned references (`hipMalloc@hip_4.2`), so every call the program makes
//! lands here first and is forwarded to the next definition.
//!
//! On ROCm ≥ 6.1 the same generated signatures also wrap the runtime's
//! dispatch-table slots (`by_table`, installed by `crate::register`), and a
//! function whose slot is wrapped is traced there instead.
//!
//! No HIP function is variadic, so every wrapper is an ordinary typed
//! function; there are no raw trampolines.

#[macro_use]
mod interpose;
pub mod kernels;
/// The slot order of HIP's dispatch tables (in `rocwasm-ids`).
pub use rocwasm_ids::hip_table as table_slots;
pub mod types;

#[allow(unused_imports)]
use std::ffi::{c_char, c_void};

// The generated list calls `hip_interposers!`, which expands to the wrappers.
include!("generated.rs");
