//! The format table: every output format once, with what its files are and
//! how its sink is made. The dispatcher ([`crate::Outputs`]) builds sinks
//! from it and the CLI's `--output-format` help lists it; a format added to
//! [`OutputFormat`] without a row here fails this module's test.
//!
//! Adding a format: a variant of [`OutputFormat`] (its name and aliases, in
//! `rocwasm-plan`, which the chain file's parser reads), a folder under
//! `src/` with its schema, writer (a [`Sink`]) and, when it can be
//! replayed, its reader, and one row here.

use std::path::PathBuf;

use crate::csv::CsvSink;
use crate::json::JsonSink;
use crate::parquet::ParquetSink;
use crate::perfetto::PerfettoSink;
use crate::rocpd::RocpdSink;
use crate::sink::Sink;
use rocwasm_plan::OutputFormat;

/// One output format.
pub struct Format {
    /// The format, as the plan and the chain file name it.
    pub format: OutputFormat,
    /// What it writes, a few words (the CLI's help).
    pub writes: &'static str,
    /// A sink writing it where `place` says.
    pub sink: fn(&Place) -> Box<dyn Sink>,
}

/// Where a sink writes.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// The run's output folder.
    pub dir: PathBuf,
    /// The `-o` name its file names begin with.
    pub name: Option<String>,
    /// Parquet only: the Hive-partitioned dataset's root, instead of `dir`
    /// (`--parquet-layout hive`).
    pub parquet_hive_root: Option<PathBuf>,
}

/// Every format, in [`OutputFormat::ALL`]'s order.
pub const FORMATS: &[Format] = &[
    Format {
        format: OutputFormat::Csv,
        writes: "rocprofv3's CSV files, one per kind",
        sink: |o| Box::new(CsvSink::new(&o.dir, o.name.clone())),
    },
    Format {
        format: OutputFormat::Json,
        writes: "rocprofv3's results.json",
        sink: |o| Box::new(JsonSink::new(&o.dir, o.name.clone())),
    },
    Format {
        format: OutputFormat::Rocpd,
        writes: "a rocpd SQLite database",
        sink: |o| Box::new(RocpdSink::new(&o.dir, o.name.clone())),
    },
    Format {
        format: OutputFormat::Pftrace,
        writes: "a Perfetto trace",
        sink: |o| Box::new(PerfettoSink::new(&o.dir, o.name.clone())),
    },
    Format {
        format: OutputFormat::Parquet,
        writes: "Apache Parquet, one file per kind",
        sink: |o| match &o.parquet_hive_root {
            Some(root) => Box::new(ParquetSink::hive(root, o.name.clone())),
            None => Box::new(ParquetSink::new(&o.dir, o.name.clone())),
        },
    },
];

/// The row of `format`.
pub fn format(format: OutputFormat) -> &'static Format {
    FORMATS
        .iter()
        .find(|f| f.format == format)
        .expect("every OutputFormat has a row in FORMATS (tested)")
}

/// The formats as a help text lists them: `csv (rocprofv3's CSV files, one
/// per kind), json (…), …`.
pub fn help_list() -> String {
    FORMATS
        .iter()
        .map(|f| format!("{} ({})", f.format.name(), f.writes))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_one_row_in_the_plans_order() {
        let rows: Vec<OutputFormat> = FORMATS.iter().map(|f| f.format).collect();
        assert_eq!(rows, OutputFormat::ALL);
    }

    #[test]
    fn each_rows_sink_is_its_own_format() {
        let place = Place {
            dir: std::env::temp_dir(),
            ..Place::default()
        };
        for f in FORMATS {
            let sink = (f.sink)(&place);
            assert_eq!(
                sink.name().to_ascii_lowercase(),
                match f.format {
                    OutputFormat::Pftrace => "perfetto".to_string(),
                    other => other.name().to_string(),
                },
                "{}",
                f.format
            );
        }
    }

    #[test]
    fn the_help_list_names_every_format() {
        let help = help_list();
        for f in OutputFormat::ALL {
            assert!(help.contains(&format!("{} (", f.name())), "{help}");
        }
    }
}
