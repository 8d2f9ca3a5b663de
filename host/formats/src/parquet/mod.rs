//! Apache Parquet trace files (`--output-format parquet`): what the engines
//! a cluster already runs (DuckDB, Spark, Trino, DataFusion, ClickHouse,
//! pandas/pyarrow) read directly, for every rank of a job at once.
//!
//! # The files
//!
//! One file per trace table per process, named after rocprofv3's tables:
//! `[<name>_]kernel_trace.parquet`, `hip_api_trace.parquet`,
//! `hsa_api_trace.parquet`, `marker_api_trace.parquet`,
//! `memory_copy_trace.parquet`, `memory_allocation_trace.parquet`,
//! `scratch_memory_trace.parquet` — the tables the CSV output writes, and
//! only those with rows. With `-d 'out/%rank%'` every rank writes its own
//! set, and a glob reads them as one table:
//!
//! ```sql
//! SELECT rank, Kernel_Name, count(*), sum(End_Timestamp - Start_Timestamp)
//! FROM 'out/*/kernel_trace.parquet' GROUP BY ALL;
//! ```
//!
//! # The columns ([`schema`])
//!
//! Every file begins with `hostname`, `rank`, `job` and `pid`, the process
//! that wrote the rows, set by the writer from the run's metadata (rank 0
//! and job `0` outside MPI and batch jobs, as `%rank%` and `%job%`
//! expand): rows of different processes never collide on their ids. Then
//! come the columns of the CSV file of the same table, under the same names
//! and in the same order ([`crate::csv::schema`]), with names resolved as
//! the CSV spells them (demangled kernel names, `hipMemcpy`,
//! `HIP_RUNTIME_API`, `MEMORY_COPY_HOST_TO_DEVICE`). Names are UTF-8
//! strings; ids, timestamps (ns), sizes and addresses are unsigned 64- or
//! 32-bit integers, as the records hold them. No column is nullable.
//! `docs/PARQUET.md` lists every file's columns and types
//! ([`schema::markdown`] renders that table; a test keeps them equal).
//!
//! # Memory
//!
//! Written as batches arrive, by whichever thread delivers them (the
//! callback thread live, the reader loop in a replay). Each table's writer
//! keeps only its open row group, written out at [`ROW_GROUP_ROWS`] rows or
//! about [`ROW_GROUP_BYTES`] encoded bytes (Snappy-compressed pages;
//! dictionary-encoded but for the columns that are new on every row,
//! [`schema::unique_per_row`]), so a run of any length costs a few
//! tens of MiB per table; `host/formats/tests/all/parquet_memory.rs` writes
//! 10 M records and checks the peak.
//!
//! The files are written once and never read back by `rocwasm replay`
//! (replay reads CSV, JSON and rocpd).

mod arrays;
mod in_memory;
pub mod schema;
mod writer;

pub use in_memory::{ArrowTable, ArrowTables};
pub use writer::{ParquetSink, ROW_GROUP_BYTES, ROW_GROUP_ROWS};
