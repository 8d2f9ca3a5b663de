//! `librocwasm_intercept.so`: the tool library injected into the profiled process.
//!
//! `rocwasm run` preloads it (`LD_PRELOAD`), names it in `HSA_TOOLS_LIB` and
//! points `ROCWASM_RUN` at the run file. Inside the application it
//!
//! - interposes every exported HIP function ([`hip`], 399 generated wrappers)
//!   and the roctx markers ([`roctx`]),
//! - wraps every slot of the HSA core and AMD-extension tables handed to
//!   `OnLoad` ([`hsa`]), turns queues into intercept queues for kernel
//!   timing, times async copies, and traces code objects,
//! - receives the ROCm ≥ 6.2 tables through `rocprofiler_set_api_table`
//!   ([`register`]),
//! - runs the run's pipeline (`rocwasm-pipeline`: the sdk-core engine, the
//!   chain's Wasm plugins, the outputs) as the live [`session`], from
//!   start-up to a clean shutdown ([`lifecycle`]); under `rocwasm run` the
//!   outputs' records go to the record journal and the output buffers'
//!   halves to shared files ([`durable`]), and the launcher writes the
//!   files.
//!
//! All of the host's `unsafe` lives in this crate; every block says why it is sound.

/// The heading of a generated wrapper's parameter list in its docs: the
/// parameter names in, a string literal out (for `concat!` in `#[doc]`).
macro_rules! params_doc_heading {
    () => {
        "Takes no parameters."
    };
    ($($arg:ident)+) => {
        "Parameters, with their C types:"
    };
}

pub mod call_arguments;
pub mod durable;
pub mod hip;
pub mod hsa;
pub mod lifecycle;
pub mod next_symbol;
pub mod register;
pub mod roctx;
pub mod session;
pub mod tracer;
