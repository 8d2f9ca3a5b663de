//! The Parquet files' schema: which files, which columns, which types.
//!
//! Built from the CSV schema ([`crate::csv::schema`]), not written a
//! second time: a Parquet file has the columns of the CSV file of the same
//! table, under the same names and in the same order, after the four
//! [`IDENTITY`] columns that say which process wrote the row. What this
//! module adds is a type per [`Column`] ([`data_type`]).
//!
//! [`markdown`] renders the whole schema as the table the docs show
//! (`docs/PARQUET.md`); a unit test keeps the two equal.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::csv::{Column, TraceFile};

/// The columns every file begins with, naming the process that wrote the
/// rows, so that the files of many processes (ranks, nodes, jobs) can be
/// read as one table without their ids colliding.
pub const IDENTITY: [(&str, DataType, &str); 4] = [
    (
        "hostname",
        DataType::Utf8,
        "the node's host name (`/proc/sys/kernel/hostname`)",
    ),
    (
        "rank",
        DataType::UInt32,
        "the MPI rank (`%rank%`: Open MPI, MPICH/PMI, PMIx, Slurm variables), 0 outside MPI",
    ),
    (
        "job",
        DataType::Utf8,
        "the batch job id (`%job%`: Slurm, PBS, LSF, Flux variables), `0` outside a batch job",
    ),
    (
        "pid",
        DataType::UInt32,
        "the profiled process's id (the recorded one in a replay)",
    ),
];

/// The Arrow (and so Parquet) type of a CSV column.
///
/// Names (kinds, kernels, API functions, copy directions, operations) are
/// UTF-8 strings spelled as in the CSV files; ids, timestamps, sizes and
/// addresses are the records' own unsigned integers (Parquet `UINT_64` /
/// `UINT_32` logical types), so nothing is narrowed or reinterpreted. The
/// address of an allocation is a number here, not the CSV's hex text.
pub const fn data_type(column: Column) -> DataType {
    match column {
        Column::Kind
        | Column::KernelName
        | Column::Domain
        | Column::Function
        | Column::Direction
        | Column::Operation
        | Column::CounterName => DataType::Utf8,
        Column::CounterValue => DataType::Float64,
        Column::GridSize | Column::WorkgroupSize => DataType::UInt64,
        Column::AgentId
        | Column::QueueId
        | Column::StreamId
        | Column::ThreadId
        | Column::DispatchId
        | Column::KernelId
        | Column::CorrelationId
        | Column::StartTimestamp
        | Column::EndTimestamp
        | Column::SourceAgentId
        | Column::DestinationAgentId
        | Column::Bytes
        | Column::AllocationSize
        | Column::Address => DataType::UInt64,
        Column::LdsBlockSize
        | Column::ScratchSize
        | Column::VgprCount
        | Column::AccumVgprCount
        | Column::SgprCount
        | Column::WorkgroupSizeX
        | Column::WorkgroupSizeY
        | Column::WorkgroupSizeZ
        | Column::GridSizeX
        | Column::GridSizeY
        | Column::GridSizeZ
        | Column::ProcessId
        | Column::AllocFlags => DataType::UInt32,
    }
}

/// True for a column whose values are new on (nearly) every row: ids that
/// number records, timestamps, addresses. The writer encodes those plain:
/// a dictionary of them only grows until Parquet gives up on it (at its
/// dictionary page limit, in every row group), after hashing every value.
/// Every other column repeats a few values (names, agents, queues,
/// threads, kernels, launch geometry, the identity columns) and is
/// dictionary-encoded.
pub const fn unique_per_row(column: Column) -> bool {
    matches!(
        column,
        Column::CorrelationId
            | Column::DispatchId
            | Column::StartTimestamp
            | Column::EndTimestamp
            | Column::Address
    )
}

/// `<stem>.parquet`: `kernel_trace.parquet`, `hip_api_trace.parquet`, …
pub fn file_name(file: TraceFile) -> String {
    format!("{}.parquet", file.stem())
}

/// The Arrow schema of `file`'s Parquet file: [`IDENTITY`], then the CSV
/// file's columns. No column is nullable.
pub fn schema(file: TraceFile) -> SchemaRef {
    let identity = IDENTITY
        .iter()
        .map(|(name, ty, _)| Field::new(*name, ty.clone(), false));
    let columns = file
        .columns()
        .iter()
        .map(|&c| Field::new(c.name(), data_type(c), false));
    Arc::new(Schema::new(identity.chain(columns).collect::<Vec<_>>()))
}

/// The Parquet type name the docs print for an Arrow type.
fn type_name(ty: &DataType) -> &'static str {
    match ty {
        DataType::Utf8 => "string (UTF-8)",
        DataType::UInt64 => "uint64",
        DataType::UInt32 => "uint32",
        DataType::Float64 => "float64",
        _ => "other",
    }
}

/// Every file's columns as Markdown: one `###` section per file with a
/// table of column, type and meaning (the identity columns once, first).
pub fn markdown() -> String {
    let mut out = String::from(
        "Every file begins with these columns:\n\n| column | type | meaning |\n|---|---|---|\n",
    );
    for (name, ty, meaning) in &IDENTITY {
        out.push_str(&format!("| `{name}` | {} | {meaning} |\n", type_name(ty)));
    }
    for file in TraceFile::ALL {
        out.push_str(&format!(
            "\n### `{}`\n\nThe columns of `{}`, then:\n\n| column | type |\n|---|---|\n",
            file_name(file),
            file.file_name()
        ));
        for &c in file.columns() {
            out.push_str(&format!(
                "| `{}` | {} |\n",
                c.name(),
                type_name(&data_type(c))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The docs show the schema this module builds, table for table.
    #[test]
    fn the_docs_show_this_schema() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/PARQUET.md");
        let text = std::fs::read_to_string(docs).unwrap();
        let table = markdown();
        assert!(
            text.contains(&table),
            "{docs} does not contain the schema; paste this between its markers:\n{table}"
        );
    }

    #[test]
    fn every_file_has_identity_then_csv_columns() {
        for file in TraceFile::ALL {
            let s = schema(file);
            let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
            assert_eq!(&names[..4], ["hostname", "rank", "job", "pid"]);
            assert_eq!(&names[4..], file.header());
        }
        assert_eq!(file_name(TraceFile::HipApi), "hip_api_trace.parquet");
    }
}
