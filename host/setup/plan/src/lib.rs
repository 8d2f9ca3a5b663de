//! `rocwasm-plan`: the resolved run plan.
//!
//! A chain file is the user's contract (`rocwasm-config` parses and checks
//! it); the *plan* is what a run actually does, with every alias, default,
//! unit and stock plugin name resolved: the stages in order with their
//! limits and failure policies, the chain's buffer, the outputs and the
//! templates of their paths. Like Spin's locked application, it is one
//! versioned type ([`RunPlan`]) that the CLI writes and the runtime reads:
//!
//! ```text
//! chain.toml + flags ──rocwasm-config──> RunPlan ──JSON──> in-process tool (live)
//!                                           └────────────> replay (same plan, same pipeline)
//! ```
//!
//! - [`plan`]: [`RunPlan`] and [`StagePlan`], and how the file is read.
//! - [`stage`]: the vocabulary of a stage (limits, failure policy, output
//!   grant, world) and of the chain's buffer, defined once here and used by
//!   the chain file's model and by the plugin host.
//! - [`format`]: the output formats.
//! - [`collection`]: rocprofv3's `-P/--collection-period` (when a run
//!   collects).
//! - [`summary`]: rocprofv3's end-of-run summaries (`-S`,
//!   `--summary-groups`, `--summary-output-file`, `--summary-units`).
//! - [`kernels`]: rocprofv3's kernel options (name filters, iteration
//!   range, truncated, mangled and renamed names).
//! - [`template`]: output path templates (`%hostname%/%pid%`, `%rank%`,
//!   `%job%`, `%env{NAME}%` …), the one expander live runs and replay use.
//!
//! This crate depends only on `rocwasm-ids`, serde and regex: the launcher (CLI),
//! the tool library and replay can all read a plan without linking each
//! other.

pub mod backend;
pub mod claims;
pub mod collection;
pub mod dirs;
pub mod format;
pub mod kernels;
pub mod plan;
mod serde_ids;
pub mod stage;
pub mod summary;
pub mod template;
mod units;

pub use backend::Backend;
pub use collection::{CollectionPlan, Windows};
pub use format::{OutputFormat, ParquetLayout, WriteTiming};
pub use kernels::{IterationRange, KernelFilters, KernelOptionError, KernelPlan, Verdict};
pub use plan::{ForkPolicy, OutputPlan, PlanError, RunPlan, StagePlan};
pub use rocwasm_ids::{BufferPolicy, BufferTracingKind};
pub use stage::{BufferSettings, FailurePolicy, Limits, OutputGrant, Placement, Services, World};
pub use summary::{SummaryDestination, SummaryPlan};
pub use template::{PathTemplate, ProcessInfo, TemplateError};
