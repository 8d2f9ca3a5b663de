//! The Parquet writer: [`ParquetSink`].
//!
//! One [`ArrowWriter`] per table, created (and its file claimed) on the
//! table's first row. Each delivered batch becomes one Arrow record batch
//! per table ([`super::arrays`]) and is handed to the table's writer at
//! once; the writer encodes and compresses it into the open row group and
//! writes the row group out when it reaches [`ROW_GROUP_ROWS`] rows or
//! about [`ROW_GROUP_BYTES`] encoded bytes. So what a table holds in memory
//! is one row group's encoded pages, whatever the length of the run.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use rocwasm_core::Batch;

use super::arrays::tables;
use super::schema::{file_name, schema, unique_per_row};
use crate::csv::TraceFile;
use crate::paths::output_path;
use crate::resolve::Resolver;
use crate::sink::claim_file;
use crate::sink::{Sink, SinkContext};
use crate::unfiled::Unfiled;
use rocwasm_plan::claims::OutputClaims;

/// Rows after which a table's row group is written out.
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Encoded bytes after which a table's row group is written out (the
/// writer's estimate, checked as rows are added).
pub const ROW_GROUP_BYTES: usize = 16 << 20;

/// A table's file: its writer, or `None` when another producer has the
/// file (the claim was refused and reported; nothing is written).
struct Table {
    path: PathBuf,
    writer: Option<ArrowWriter<File>>,
}

/// Writes one Parquet file per trace table. See the module docs.
pub struct ParquetSink {
    dir: PathBuf,
    name: Option<String>,
    /// Hive layout: the dataset's root, and (from `begin`) this process's
    /// partition directories below each table's folder.
    hive: Option<(PathBuf, Option<Partition>)>,
    /// Indexed by `TraceFile as usize`.
    tables: [Option<Table>; TraceFile::ALL.len()],
    resolve: Resolver,
    claims: OutputClaims,
    /// API calls of kinds with no table (OpenMP): see [`Sink::notes`].
    unfiled: Unfiled,
}

impl ParquetSink {
    /// Files go to `<dir>/[<name>_]<table>.parquet`.
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self {
            dir: dir.into(),
            name,
            hive: None,
            tables: Default::default(),
            resolve: Resolver::default(),
            claims: OutputClaims::new(),
            unfiled: Unfiled::default(),
        }
    }

    /// Files go to one Hive-partitioned dataset under `root`, shared by
    /// every process of a run: `<root>/<table>/job=J/hostname=H/rank=R/`
    /// `[<name>_]<pid>.parquet` (see [`Partition`]). The partition keys are
    /// the path's, not columns of the files (readers add them from it).
    pub fn hive(root: impl Into<PathBuf>, name: Option<String>) -> Self {
        let root = root.into();
        Self {
            hive: Some((root.clone(), None)),
            ..Self::new(root, name)
        }
    }

    /// The file of table `file`.
    fn path(&self, file: TraceFile) -> Result<PathBuf> {
        let Some((root, partition)) = &self.hive else {
            return Ok(output_path(
                &self.dir,
                self.name.as_deref(),
                &file_name(file),
            ));
        };
        let p = partition
            .as_ref()
            .context("the Parquet sink's partition is set in begin()")?;
        let table = file_name(file);
        let table = table.strip_suffix(".parquet").unwrap_or(&table);
        let dir = root.join(table).join(&p.dirs);
        Ok(output_path(
            &dir,
            self.name.as_deref(),
            &format!("{}.parquet", p.pid),
        ))
    }

    fn table(&mut self, file: TraceFile) -> Result<&mut Table> {
        if self.tables[file as usize].is_none() {
            let path = self.path(file)?;
            let hive = self.hive.is_some();
            let writer = claim_file(&self.claims, &path, "Parquet", |p| open(p, file, hive))?;
            self.tables[file as usize] = Some(Table { path, writer });
        }
        Ok(self.tables[file as usize].as_mut().expect("created above"))
    }
}

/// A process's Hive partition: `job=J/hostname=H/rank=R` (values as the
/// flat layout's columns have them, an empty one as Hive's
/// `__HIVE_DEFAULT_PARTITION__`, `/` and `%` escaped as `%2F`, `%25`) and
/// its pid, the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Partition {
    dirs: PathBuf,
    pid: u32,
}

impl Partition {
    fn of(ctx: &SinkContext<'_>) -> Partition {
        let id = super::arrays::Identity::of(ctx);
        let value = |v: &str| {
            if v.is_empty() {
                "__HIVE_DEFAULT_PARTITION__".to_string()
            } else {
                v.replace('%', "%25").replace('/', "%2F")
            }
        };
        Partition {
            dirs: PathBuf::from(format!("job={}", value(id.job)))
                .join(format!("hostname={}", value(id.hostname)))
                .join(format!("rank={}", id.rank)),
            pid: id.pid,
        }
    }
}

/// The columns the Hive layout leaves to the path: the partition keys.
pub(crate) const PARTITION_KEYS: [&str; 3] = ["job", "hostname", "rank"];

/// `file`'s schema, less the partition keys under the Hive layout.
fn file_schema(file: TraceFile, hive: bool) -> arrow_schema::SchemaRef {
    let full = schema(file);
    if !hive {
        return full;
    }
    let keep: Vec<usize> = (0..full.fields().len())
        .filter(|&i| !PARTITION_KEYS.contains(&full.field(i).name().as_str()))
        .collect();
    std::sync::Arc::new(full.project(&keep).expect("indices of the schema"))
}

/// Creates `path` and a writer of `file`'s schema into it. A Hive
/// partition's file is never replaced: it is another process's, or this
/// process's from an earlier run or replay.
fn open(path: &Path, file: TraceFile, hive: bool) -> Result<ArrowWriter<File>> {
    let out = if hive {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => anyhow::anyhow!(
                    "{} exists: the dataset already has a file of this process (an earlier run or \
                     replay of it?); remove it or write the dataset elsewhere",
                    path.display()
                ),
                _ => anyhow::Error::new(e).context(format!("creating {}", path.display())),
            })?
    } else {
        File::create(path).with_context(|| format!("creating {}", path.display()))?
    };
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_created_by(format!("rocwasm {}", env!("CARGO_PKG_VERSION")));
    for &c in file.columns().iter().filter(|&&c| unique_per_row(c)) {
        props = props.set_column_dictionary_enabled(ColumnPath::from(c.name()), false);
    }
    let props = props.build();
    ArrowWriter::try_new(out, file_schema(file, hive), Some(props))
        .with_context(|| format!("starting {}", path.display()))
}

impl Sink for ParquetSink {
    fn name(&self) -> &'static str {
        "parquet"
    }

    fn set_claims(&mut self, claims: &OutputClaims) {
        self.claims = claims.clone();
    }

    fn begin(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        if let Some((_, partition)) = &mut self.hive {
            *partition = Some(Partition::of(ctx));
        }
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))
    }

    fn claim_for(&mut self, batch: &Batch) -> Result<()> {
        for file in TraceFile::of_batch(batch) {
            self.table(file)?;
        }
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        let hive = self.hive.is_some();
        for (file, rows) in tables(batch, ctx, &mut self.resolve, &mut self.unfiled)? {
            let rows = if hive {
                let keep: Vec<usize> = (0..rows.num_columns())
                    .filter(|&i| !PARTITION_KEYS.contains(&rows.schema().field(i).name().as_str()))
                    .collect();
                rows.project(&keep)?
            } else {
                rows
            };
            let table = self.table(file)?;
            if let Some(w) = &mut table.writer {
                w.write(&rows).with_context(|| {
                    format!(
                        "writing {} rows to {}",
                        rows.num_rows(),
                        table.path.display()
                    )
                })?;
            }
        }
        Ok(())
    }

    fn notes(&mut self) -> Vec<String> {
        self.unfiled.take_notes("Parquet")
    }

    fn finish(&mut self, _ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        // Every table is closed (its footer written) even when one fails:
        // a failed close must not leave the other files unreadable.
        let mut written = Vec::new();
        let mut first_error = None;
        for table in self.tables.iter_mut().filter_map(Option::take) {
            let Some(w) = table.writer else { continue };
            match w.close() {
                Ok(_) => written.push(table.path),
                Err(e) => {
                    let e =
                        anyhow::Error::from(e).context(format!("closing {}", table.path.display()));
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;
    use crate::synthetic::sample_run;
    use crate::OperationNames;

    /// Columns new on every row carry no dictionary page; names and the
    /// other repeating columns do.
    #[test]
    fn only_the_repeating_columns_are_dictionary_encoded() {
        let names = OperationNames::new();
        let run = sample_run(3, 200, 1024, &names);
        let ctx = run.context(&names);
        let dir = tempfile::tempdir().unwrap();
        let mut sink = ParquetSink::new(dir.path(), None);
        sink.begin(&ctx).unwrap();
        for b in &run.batches {
            sink.write_batch(b, &ctx).unwrap();
        }
        let files = sink.finish(&ctx).unwrap();
        let kernels = files
            .iter()
            .find(|p| p.ends_with("kernel_trace.parquet"))
            .expect("a kernel trace");
        let reader = SerializedFileReader::new(File::open(kernels).unwrap()).unwrap();
        let group = reader.metadata().row_group(0);
        let mut checked = 0;
        for chunk in group.columns() {
            let name = chunk.column_path().string();
            let Some(&column) = TraceFile::KernelTrace
                .columns()
                .iter()
                .find(|c| c.name() == name)
            else {
                continue;
            };
            assert_eq!(
                chunk.dictionary_page_offset().is_some(),
                !unique_per_row(column),
                "{name}: dictionary page"
            );
            checked += 1;
        }
        assert_eq!(checked, TraceFile::KernelTrace.columns().len());
    }
}
