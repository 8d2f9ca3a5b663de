//! `rocwasm-formats`: where a run's records end up.
//!
//! Outputs are **native host sinks**, not Wasm plugins. They write files,
//! SQLite databases and protobuf streams at full speed, and their formats are
//! the ones other tools trust (rocprofv3 CSV/JSON, rocpd, Perfetto): they are
//! part of the trusted host, like the reader of a chain file. Plugins analyse;
//! sinks persist. A plugin that wants its own file uses the host `output`
//! interface instead.
//!
//! - [`sink`]: the [`Sink`] trait, [`RunMetadata`], [`SinkContext`].
//! - [`OutputClaims`] (from `rocwasm_plan::claims`): who writes which
//!   file of the output directory: sinks and plugin stages claim names, a
//!   second producer of one name is refused and reported. The five
//!   format sinks claim through one helper (`sink::claim_file`).
//! - [`names`]: operation names of a run ([`OperationNames`]).
//! - [`stats`]: the native statistics accumulator (`--stats`, the summary table).
//! - [`summary`]: rocprofv3's `-S`/`--summary-groups` tables over those
//!   statistics.
//! - [`table`]: every format once ([`FORMATS`]): what it writes and how its
//!   sink is made; the dispatcher and the CLI's help read it.
//! - [`csv`], [`json`], [`rocpd`]: the rocprofv3 formats, one folder each,
//!   holding the format's one schema ([`csv::schema`], [`json::schema`],
//!   [`rocpd::schema`]), its writer (the sink) and its reader, which reads
//!   through the same schema, so writer and reader cannot disagree on a
//!   name.
//! - [`replay`]: a recorded trace opened ([`replay::open_with`]) and read
//!   by its format's reader into the batches of a live run, with a report
//!   of what could not be mapped.
//! - [`perfetto`]: the Perfetto trace (written, never read back).
//! - [`parquet`]: Apache Parquet files, one per trace table, with the CSV
//!   files' columns plus the writing process's identity (written, never
//!   read back).
//! - `resolve`: kernel, agent and operation names as the trace files
//!   print them (shared by CSV and Parquet).
//! - `decimal`: unsigned integers in decimal, appended in place (shared by
//!   CSV and JSON, where numbers are most of the bytes).
//! - [`outputs`]: building the sinks of `--output-format` and driving them.
//! - `spool`: a live run's batches kept on disk until the run ends, so that
//!   the application never waits for a format ([`WriteTiming::AtEnd`]).
//! - [`synthetic`]: a deterministic sample run for tests, fixtures and benchmarks.

pub mod csv;
pub(crate) mod decimal;
pub mod json;
pub mod names;
pub mod outputs;
pub mod parquet;
pub mod paths;
pub mod perfetto;
mod registry_bridge;
pub mod replay;
pub(crate) mod resolve;
pub mod rocpd;
pub mod sink;
mod spool;
pub mod stats;
pub mod stats_by_rank;
pub mod stats_sink;
pub mod summary;
pub mod synthetic;
pub mod table;
mod unfiled;

pub use crate::csv::{CsvSink, TraceFile};
pub use json::JsonSink;
pub use names::{kind_name, OperationNames};
pub use outputs::{OutputFormat, OutputOptions, OutputSummary, Outputs, WriteTiming};
pub use parquet::ParquetSink;
pub use paths::output_path;
pub use perfetto::PerfettoSink;
pub use rocpd::RocpdSink;
pub use rocwasm_plan::claims::{ClaimRefused, OutputClaims, Producer};
pub use sink::{CallArg, CallArgs, RunMetadata, Sink, SinkContext};
pub use stats::{StatRow, StatsAccumulator, StatsDomain, StatsReport};
pub use stats_sink::StatsSink;
pub use table::{Format, FORMATS};
