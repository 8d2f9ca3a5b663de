//! Duration statistics in the shape of rocprofv3's `--stats` tables.
//!
//! This module is the [`rocwasm_stats`] crate, re-exported: the host's own
//! statistics sink uses the same crate, so a plugin's `kernel_stats.csv` and
//! the host's hold the same numbers in the same format. What the SDK adds is
//! [`ToSummary`], which turns a table into the [`SummaryTable`] a plugin
//! returns from `fini`.
//!
//! - [`Series`]: one series of durations as exact integer sums (count, Σx,
//!   Σx², min, max); mean and sample standard deviation on demand. The
//!   result does not depend on the order records arrive in.
//! - [`IdSums`] (per `u64` id, e.g. kernel ids: no hashing for small ids)
//!   and [`KeyedSums`] (per small key, e.g. `(kind, operation)`): many
//!   series for the per-record loop, turned into a table by name at the end.
//! - [`StatsTable`]: one series per name; [`StatsTable::rows`] sorts them
//!   busiest first and computes the columns
//!   `Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev`;
//!   [`StatsTable::to_csv`] writes them as rocprofv3 does (quoted names, six
//!   decimals for averages and deviations, two for percentages, scientific
//!   notation for tiny values: see [`rocwasm_stats::render`]).
//!
//! ```
//! use rocwasm_plugin_sdk::stats::{StatsTable, ToSummary};
//! let mut t = StatsTable::new();
//! t.add("copy", 10);
//! t.add("copy", 30);
//! t.add("scale", 60);
//! let rows = t.rows();
//! assert_eq!(rows[0].name, "scale");
//! assert_eq!(rows[1].average_ns, 20.0);
//! assert!(t.to_csv().starts_with("\"Name\",\"Calls\",\"TotalDurationNs\""));
//! let summary = t.to_summary("Copies");
//! assert_eq!(summary.rows[1], ["copy", "2", "40", "20.000000", "40.00", "10", "30", "14.142136"]);
//! ```

pub use rocwasm_stats::{
    format_ns, format_percentage, to_csv, FastHash, FastHasher, IdSums, KeyedSums, Series, StatRow,
    StatsTable, COLUMNS,
};

use crate::types::SummaryTable;

/// A statistics table as the summary table `fini` returns: the file's
/// columns and cells, so the terminal shows what the CSV holds.
pub trait ToSummary {
    /// The rows under `title`, busiest first.
    fn to_summary(&self, title: &str) -> SummaryTable;
}

impl ToSummary for StatsTable {
    fn to_summary(&self, title: &str) -> SummaryTable {
        let mut table = SummaryTable::new(title, &COLUMNS);
        for row in self.rows() {
            table.push_row(row.cells());
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_carry_the_files_columns_and_cells() {
        let mut t = StatsTable::new();
        for (k, x) in [("b", 50), ("a", 50), ("c", 300), ("a", 50), ("b", 50)] {
            t.add(k, x);
        }
        let summary = t.to_summary("Kernels");
        assert_eq!(summary.title, "Kernels");
        assert_eq!(summary.columns, COLUMNS);
        assert_eq!(summary.rows.len(), 3);
        let csv = t.to_csv();
        for (row, line) in summary.rows.iter().zip(csv.lines().skip(1)) {
            let (name, numbers) = line.split_once(',').unwrap();
            assert_eq!(format!("\"{}\"", row[0]), name);
            assert_eq!(row[1..].join(","), numbers);
        }
    }
}
