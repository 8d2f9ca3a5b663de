//! `librocwasm_intercept.so`: the tool library injected into the profiled process.
//!
//! `rocwasm run` preloads it (`LD_PRELOAD`) and names it in `HSA_TOOLS_LIB`.
//! Inside the application it
//!
//! - interposes every exported HIP function ([`hip`]) and the roctx markers,
//! - wraps the HSA API tables handed to `OnLoad`, and turns queues into
//!   intercept queues for kernel timing,
//! - runs the sdk-core engine and the plugin chain ([`session`]) from start-up
//!   to a clean shutdown at exit.
//!
//! All of the host's `unsafe` lives in this crate; every block says why it is sound.

pub mod args;
pub mod hip;
pub mod next;
pub mod session;
pub mod tracer;
