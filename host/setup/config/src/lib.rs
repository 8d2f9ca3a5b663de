//! `rocwasm-config`: the chain file, parsed and validated in one place.
//!
//! A chain file (TOML, documented for users in `examples/chains/README.md`)
//! says which plugins run, in which order, on which records, with which
//! limits, and where results go:
//!
//! ```toml
//! version = 1
//!
//! [output]
//! directory = "results/%hostname%/%pid%"
//! formats = ["csv", "rocpd"]
//!
//! [[stage]]
//! name = "kernels"
//! plugin = "kernel-stats"          # a stock plugin; or "plugins/mine.wasm"
//! domains = ["kernel_dispatch"]
//! output = true
//! ```
//!
//! [`Chain::load`] reads and checks a file; every problem is a
//! [`ConfigError`] that renders as one line with file, line and column.
//! [`Chain::from_flags`] builds the chain rocprofv3-style flags describe.
//!
//! Modules, in the order data flows through them: [`raw`](crate::raw) (serde
//! shapes) → `parse` (TOML, spans, serde messages) → `validate` (every
//! semantic check) → [`model`] (the validated chain) → [`plan`] (the
//! `RunPlan` a run executes). Helpers: [`units`], [`template`] (from
//! `rocwasm-plan`), [`domains`], [`operations`], [`resolve`], [`flags`],
//! `kernels` (`[kernels]` and the kernel flags), `collection` (`[collection]`
//! and `-P/--collection-period`), `summaries` (`[summary]`: `-S`,
//! `--summary-groups`), [`summary`].

mod collection;
pub mod domains;
mod error;
pub mod flags;
mod kernels;
mod load;
pub mod model;
pub mod operations;
mod options;
mod parse;
pub mod plan;
mod raw;
pub mod resolve;
mod summaries;
pub mod summary;
pub mod units;
mod validate;

pub use error::{ConfigError, Location};
pub use flags::TraceFlags;
pub use model::{
    percent_of, BufferPolicy, BufferSettings, BufferTracingKind, Chain, FailurePolicy,
    IterationRange, KernelPlan, Limits, Operation, Output, OutputFormat, OutputGrant,
    ParquetLayout, PathTemplate, Placement, PluginRef, Services, Settings, Stage, World,
    WriteTiming, DEFAULT_OUTPUT_DIRECTORY, DEFAULT_OUTPUT_FILE, FORMAT_VERSION,
};
pub use options::{Fetcher, LoadOptions, PluginFetcher};
pub use plan::PlanOptions;
pub use rocwasm_plan::template::{self, ProcessInfo};
pub use summary::{ChainSummary, StageSummary};
