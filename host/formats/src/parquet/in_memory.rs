//! A recording's trace tables as Arrow record batches in memory, with the
//! Parquet output's schema ([`super::schema`]): for embedders that hand
//! them on without a file (the Python package's `rocwasm.read`, which
//! exports them to pyarrow through the Arrow C data interface).

use std::collections::BTreeMap;

use anyhow::Result;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use rocwasm_core::Batch;

use super::arrays::tables;
use super::schema::schema;
use crate::csv::TraceFile;
use crate::resolve::Resolver;
use crate::sink::SinkContext;
use crate::unfiled::Unfiled;

/// Trace tables being filled, batch by batch.
#[derive(Default)]
pub struct ArrowTables {
    resolve: Resolver,
    unfiled: Unfiled,
    tables: BTreeMap<TraceFile, Vec<RecordBatch>>,
}

/// One table: its rocprofv3 name (`kernel_trace`, `hip_api_trace`, …),
/// schema and record batches.
pub struct ArrowTable {
    /// rocprofv3's table name: the CSV file's name without `.csv`.
    pub name: &'static str,
    /// The Parquet output's schema of the table.
    pub schema: SchemaRef,
    /// The rows, a record batch per delivered batch.
    pub batches: Vec<RecordBatch>,
}

impl ArrowTables {
    /// No tables yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `batch`'s rows, its names resolved in `ctx` as the Parquet and
    /// CSV outputs resolve them.
    pub fn add(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        for (file, rows) in tables(batch, ctx, &mut self.resolve, &mut self.unfiled)? {
            self.tables.entry(file).or_default().push(rows);
        }
        Ok(())
    }

    /// The tables that have rows, in rocprofv3's file order, and one
    /// sentence per kind of record no table has a place for (as the
    /// Parquet output says them).
    pub fn finish(mut self) -> (Vec<ArrowTable>, Vec<String>) {
        let notes = self.unfiled.take_notes("Arrow");
        let tables = self
            .tables
            .into_iter()
            .map(|(file, batches)| ArrowTable {
                name: file.stem(),
                schema: schema(file),
                batches,
            })
            .collect();
        (tables, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::OperationNames;
    use crate::synthetic::sample_run;

    #[test]
    fn a_runs_tables_come_back_with_every_row_and_the_parquet_schema() {
        let names = OperationNames::new();
        let run = sample_run(3, 200, 64, &names);
        let ctx = run.context(&names);
        let mut t = ArrowTables::new();
        for b in &run.batches {
            t.add(b, &ctx).unwrap();
        }
        let (tables, _) = t.finish();
        let kernels = tables.iter().find(|t| t.name == "kernel_trace").unwrap();
        let rows: usize = kernels.batches.iter().map(|b| b.num_rows()).sum();
        let want: usize = run.batches.iter().map(|b| b.kernel_dispatches.len()).sum();
        assert_eq!(rows, want);
        assert_eq!(kernels.schema.field(0).name(), "hostname");
        assert!(kernels.batches.iter().all(|b| b.schema() == kernels.schema));
    }
}
