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
//! - runs the live run (`rocwasm-record`: the sdk-core engine, the chain's
//!   Wasm plugins, the record journal) as the [`session`], from start-up to
//!   a clean shutdown ([`lifecycle`]). It writes no output format: the
//!   outputs' records go to the record journal and the output buffers'
//!   halves to shared files ([`durable`]); `rocwasm run` writes the files
//!   after the process ended, or, without it, `rocwasm write-journal` at
//!   the process's end ([`writer`]).
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
pub mod writer;

#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: extern "C" fn() = constructor;

/// The library's constructor: the session learns what it asks of the HSA
/// interception (which depends on the session, not the other way), then
/// the life cycle starts ([`lifecycle::ensure_started`]).
extern "C" fn constructor() {
    session::set_runtime_hooks(session::RuntimeHooks {
        before_native_tools: hsa::agents::publish_for_native_tools,
        started: hsa::session_started,
        before_finalize: hsa::loader::unload_all,
    });
    lifecycle::ensure_started();
}
