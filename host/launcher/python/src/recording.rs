//! A recording read into Arrow record batches.

use std::path::Path;

use anyhow::{Context, Result};
use rocwasm_formats::parquet::{ArrowTable, ArrowTables};
use rocwasm_formats::replay::{open_with, ReplayOptions};
use rocwasm_formats::{RunMetadata, SinkContext};

/// What [`read`] gives.
pub struct Recording {
    /// The tables that have rows, in rocprofv3's file order.
    pub tables: Vec<ArrowTable>,
    /// The recorded process.
    pub meta: RunMetadata,
    /// Records read.
    pub records: u64,
    /// What the reader could not map, and what no table has a place for:
    /// one sentence each (never dropped without a word).
    pub notes: Vec<String>,
}

/// Reads the recording at `path` (a rocprofv3 CSV file or directory, a
/// `results.json`, a rocpd database, or rocwasm's record journal, a
/// `<pid>.journal` file) into tables, names resolved as the CSV and
/// Parquet outputs resolve them.
pub fn read(path: &Path) -> Result<Recording> {
    if path.extension().is_some_and(|e| e == "journal") {
        return read_journal(path);
    }
    let options = ReplayOptions {
        progress: false,
        ..ReplayOptions::default()
    };
    let mut source = open_with(path, &options)?;
    let mut tables = ArrowTables::new();
    while let Some(batch) = source.next_batch()? {
        let ctx = SinkContext {
            meta: source.meta(),
            symbols: source.symbols(),
            names: source.names(),
        };
        tables
            .add(&batch, &ctx)
            .with_context(|| format!("converting {}", path.display()))?;
    }
    let (tables, unfiled) = tables.finish();
    let mut notes: Vec<String> = source.report().lines();
    notes.extend(unfiled);
    Ok(Recording {
        tables,
        meta: source.meta().clone(),
        records: source.records(),
        notes,
    })
}

/// A record journal: the process's metadata, its symbols and its batches,
/// frame by frame, as `rocwasm write-journal` reads them (a frame cut
/// short by a crash is said, and its records are not there).
fn read_journal(path: &Path) -> Result<Recording> {
    use rocwasm_journal::{Frame, JournalReader};
    let mut reader = JournalReader::open(path)?;
    let meta = match reader.next_frame()? {
        Some(Frame::Meta(json)) => {
            serde_json::from_slice::<rocwasm_record::JournalMeta>(&json)
                .with_context(|| format!("{}: the metadata frame", path.display()))?
                .meta
        }
        Some(_) => anyhow::bail!("{}: the first frame is not the metadata", path.display()),
        None => anyhow::bail!(
            "{}: an empty journal (its process had not started)",
            path.display()
        ),
    };
    let names = rocwasm_pipeline::sinks::registry_names();
    let symbols = rocwasm_core::SymbolTable::new();
    let mut tables = ArrowTables::new();
    let mut records = 0u64;
    let mut arguments = 0usize;
    while let Some(frame) = reader.next_frame()? {
        match frame {
            Frame::Symbols(s) => s.insert_into(&symbols),
            Frame::Batch(batch) => {
                records += batch.len() as u64;
                let ctx = SinkContext {
                    meta: &meta,
                    symbols: &symbols,
                    names: &names,
                };
                tables.add(&batch, &ctx)?;
            }
            Frame::Args(args) => arguments += args.len(),
            Frame::Meta(_) | Frame::End(_) => {}
        }
    }
    let (tables, mut notes) = tables.finish();
    if arguments > 0 {
        notes.push(format!(
            "{}: the arguments of {arguments} API call(s) are not in the tables (the Parquet \
             schema has no place for them; rocwasm's rocpd output keeps them)",
            path.display()
        ));
    }
    if let Some(bytes) = reader.cut_short() {
        notes.push(format!(
            "{}: the last frame was cut short ({bytes} bytes): the records in it are not here",
            path.display()
        ));
    }
    Ok(Recording {
        tables,
        meta,
        records,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../examples/traces/sample")
    }

    #[test]
    fn the_sample_reads_into_its_tables() {
        let r = read(&sample()).unwrap();
        let names: Vec<&str> = r.tables.iter().map(|t| t.name).collect();
        assert!(names.contains(&"kernel_trace"), "{names:?}");
        let kernels = r.tables.iter().find(|t| t.name == "kernel_trace").unwrap();
        let rows: usize = kernels.batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 80);
        assert!(r.records >= 210, "{}", r.records);
    }
}
