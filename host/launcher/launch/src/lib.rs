//! The launcher as a library: what `rocwasm run` and `rocwasm replay` do,
//! without the command line.
//!
//! A run starts an application with rocwasm's tool library preloaded and a
//! run plan in its environment, waits for it, however it ends, and writes
//! every output from the record journals its processes left. A replay
//! reads a recorded rocprofv3 trace and drives the same chain and outputs
//! with it. Both begin with a chain (a chain file amended by rocprofv3's
//! flags, or the flags alone) and the site policy's admission of its plan.
//!
//! The `rocwasm` binary is a thin layer over this crate: it turns its
//! arguments into a [`RunRequest`] or a [`ReplayRequest`], calls [`run`] or
//! [`replay`], and turns the result into an exit status. Anything else can
//! do the same, a test in particular:
//!
//! ```no_run
//! use rocwasm_launch::{replay, Captured, Install, ReplayRequest};
//!
//! # fn main() -> Result<(), rocwasm_launch::LaunchError> {
//! let request = ReplayRequest {
//!     paths: vec!["examples/traces/sample".into()],
//!     chain: Some("examples/chains/default.toml".into()),
//!     // Stock plugins and libraries as a `rocwasm` in target/debug finds them.
//!     install: Install::beside("target/debug/rocwasm".as_ref()),
//!     ..ReplayRequest::default()
//! };
//! let mut console = Captured::new();
//! let outcome = replay(&request, &mut console)?;
//! outcome.verdict()?;
//! println!("{} records, files: {:?}", outcome.records, outcome.files);
//! # Ok(())
//! # }
//! ```
//!
//! Three things a caller supplies that the CLI takes from its process:
//!
//! - **where rocwasm's files are**: an [`Install`] (the tool library, the
//!   rocprofiler-sdk tool, the simulated runtime, the stock plugins), found
//!   from the directory of a `rocwasm` binary or set one by one; the CLI
//!   passes [`Install::current_exe`];
//! - **where the text goes**: a [`Console`], standard output and error
//!   (the CLI's own terminal, or [`Captured`] in memory), written as the
//!   work goes (a run prints each process's summary as its outputs are
//!   written); the outcome carries the same facts as values;
//! - **the exit status**: a [`LaunchError`] says whether a failure is the
//!   request's (2) or the run's (1); a [`RunOutcome`] says how the
//!   application ended ([`RunOutcome::exit_code`]).
//!
//! The environment is read as `rocwasm run` reads it (`LD_PRELOAD`,
//! `LD_LIBRARY_PATH`, `ROCP_TOOL_LIBRARIES`, the `ROCWASM_*` overrides),
//! and the application inherits it.
//!
//! What the library does not decide: argument syntax, rocprofv3 options
//! rocwasm refuses, `-L` (the list of kinds), and the process's exit.

#![forbid(unsafe_code)]

#[macro_use]
mod console;

mod backend;
mod chain;
pub mod counters;
mod earlier;
mod error;
mod exit;
mod install;
mod journal;
mod linked_tool;
mod replay;
mod run;

pub use backend::Measurer;
pub use chain::{admit_plan, chain_for, check_tool_libraries};
pub use console::{Captured, Console};
pub use error::{LaunchError, Result};
pub use exit::{describe_exit, shell_status};
pub use install::{Install, SDK_TOOL_LIB, SIM_HIP_LIB, TOOL_LIB};
pub use journal::write_journal;
pub use linked_tool::links_tool;
pub use replay::{replay, ReplayOutcome, ReplayRequest, REPLAY_DIR};
pub use run::{run, RunOutcome, RunRequest, Runtime};
