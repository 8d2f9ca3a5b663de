//! The host's output formats.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A host output sink (rocprofv3's `--output-format` spells them the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// rocprofv3-compatible CSV files.
    Csv,
    /// rocprofv3-style JSON.
    Json,
    /// A rocpd-compatible SQLite database.
    Rocpd,
    /// A Perfetto trace (`.pftrace`).
    #[serde(rename = "pftrace", alias = "perfetto")]
    Pftrace,
    /// Apache Parquet files, one per trace table (`kernel_trace.parquet`, …).
    Parquet,
}

impl OutputFormat {
    /// Every format.
    pub const ALL: &'static [OutputFormat] = &[
        OutputFormat::Csv,
        OutputFormat::Json,
        OutputFormat::Rocpd,
        OutputFormat::Pftrace,
        OutputFormat::Parquet,
    ];

    /// The canonical name: `csv`, `json`, `rocpd`, `pftrace`, `parquet`.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Csv => "csv",
            OutputFormat::Json => "json",
            OutputFormat::Rocpd => "rocpd",
            OutputFormat::Pftrace => "pftrace",
            OutputFormat::Parquet => "parquet",
        }
    }

    /// Looks a format up by name, case-insensitively, with the aliases users
    /// write (`perfetto`, `db`, `sqlite`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "csv" => OutputFormat::Csv,
            "json" => OutputFormat::Json,
            "rocpd" | "db" | "sqlite" => OutputFormat::Rocpd,
            "pftrace" | "perfetto" => OutputFormat::Pftrace,
            "parquet" => OutputFormat::Parquet,
            _ => return None,
        })
    }

    /// The sentence an unknown name gets.
    pub fn unknown(name: &str) -> String {
        format!("unknown output format {name:?} (expected csv, json, rocpd, pftrace or parquet)")
    }
}

/// How the Parquet files of many processes are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParquetLayout {
    /// `<run directory>/<table>.parquet`, each process in its own run
    /// directory (`-d 'out/%rank%'`).
    #[default]
    Flat,
    /// Hive partitions that pyarrow, DuckDB, Spark and Dask read with their
    /// keys as columns: `<root>/<table>/job=J/hostname=H/rank=R/<pid>.parquet`,
    /// the root being the part of the output directory before its first
    /// per-process key (`out` for `-d 'out/%rank%'`).
    Hive,
}

impl ParquetLayout {
    /// Every layout.
    pub const ALL: &'static [ParquetLayout] = &[ParquetLayout::Flat, ParquetLayout::Hive];

    /// `flat` or `hive`.
    pub fn name(self) -> &'static str {
        match self {
            ParquetLayout::Flat => "flat",
            ParquetLayout::Hive => "hive",
        }
    }

    /// The layout named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|l| l.name() == name)
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When `rocwasm run` writes a live run's output files from the record
/// journal (`[output] write`, `--write-during-run`). The application never
/// writes them itself. A replay always writes as it reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteTiming {
    /// The formats are written from the journal once the application has
    /// ended (however it ended), as rocprofv3 writes its files at
    /// finalisation.
    #[default]
    AtEnd,
    /// The launcher writes each batch as it reaches the journal (every
    /// 100 ms): the files grow during the run.
    DuringRun,
}

impl WriteTiming {
    /// Every timing, as the chain file spells it.
    pub const ALL: &'static [WriteTiming] = &[WriteTiming::AtEnd, WriteTiming::DuringRun];

    /// The chain file's spelling: `at-end`, `during-run`.
    pub fn name(self) -> &'static str {
        match self {
            WriteTiming::AtEnd => "at-end",
            WriteTiming::DuringRun => "during-run",
        }
    }

    /// Looks a timing up by its chain-file spelling.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_read_back_their_names_and_nothing_else() {
        for &t in WriteTiming::ALL {
            assert_eq!(WriteTiming::from_name(t.name()), Some(t));
        }
        assert_eq!(WriteTiming::from_name("end"), None);
    }

    #[test]
    fn names_and_aliases() {
        for &f in OutputFormat::ALL {
            assert_eq!(OutputFormat::from_name(f.name()), Some(f));
        }
        assert_eq!(
            OutputFormat::from_name("Perfetto"),
            Some(OutputFormat::Pftrace)
        );
        assert_eq!(OutputFormat::from_name("sqlite"), Some(OutputFormat::Rocpd));
        assert_eq!(OutputFormat::from_name("xml"), None);
    }
}
