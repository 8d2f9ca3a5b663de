//! [`StatRow`]: one computed line of a statistics file, and [`to_csv`].

use crate::render::{format_ns, format_percentage, header_line, push_quoted};
use crate::series::Series;

/// One line of a statistics file: a name and its series' figures.
#[derive(Debug, Clone, PartialEq)]
pub struct StatRow {
    /// Kernel name, API function, copy direction, …
    pub name: String,
    /// Samples (dispatches, calls, copies).
    pub calls: u64,
    /// Σ durations (saturated at `u64::MAX`, as rocprofv3's 64-bit sum
    /// cannot hold more either).
    pub total_ns: u64,
    /// Mean duration.
    pub average_ns: f64,
    /// This row's share of the table's total duration, in percent.
    pub percentage: f64,
    /// Shortest duration.
    pub min_ns: u64,
    /// Longest duration.
    pub max_ns: u64,
    /// Sample standard deviation (divisor n − 1), 0 for one call.
    pub stddev: f64,
}

impl StatRow {
    /// The row of `series`, whose share is taken of `grand_total` (the sum
    /// of the totals of every row in its table).
    pub fn new(name: impl Into<String>, series: &Series, grand_total: u128) -> StatRow {
        let total = series.total();
        StatRow {
            name: name.into(),
            calls: series.count(),
            total_ns: u64::try_from(total).unwrap_or(u64::MAX),
            average_ns: series.mean(),
            percentage: if grand_total == 0 {
                0.0
            } else {
                100.0 * total as f64 / grand_total as f64
            },
            min_ns: series.min(),
            max_ns: series.max(),
            stddev: series.stddev(),
        }
    }

    /// The cells as text, in [`COLUMNS`](crate::COLUMNS) order and the
    /// files' number format (the name unquoted: quoting is the CSV's
    /// business, see [`to_csv`]). Summary tables show these too, so a
    /// number reads the same on the terminal and in the file.
    pub fn cells(&self) -> [String; 8] {
        [
            self.name.clone(),
            self.calls.to_string(),
            self.total_ns.to_string(),
            format_ns(self.average_ns),
            format_percentage(self.percentage),
            self.min_ns.to_string(),
            self.max_ns.to_string(),
            format_ns(self.stddev),
        ]
    }
}

/// A statistics file: the quoted header, then one line per row in the
/// order given, each ending in `\n`.
pub fn to_csv(rows: &[StatRow]) -> String {
    let mut out = header_line();
    for row in rows {
        let [name, numbers @ ..] = row.cells();
        push_quoted(&mut out, &name);
        for cell in numbers {
            out.push(',');
            out.push_str(&cell);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_as_rocprofv3_writes_it() {
        let mut s = Series::new();
        [510_404u64, 527_365, 515_173]
            .iter()
            .for_each(|&x| s.add(x));
        let row = StatRow::new("JacobiIterationKernel(int, double)", &s, 3_645_000);
        assert_eq!(
            to_csv(&[row]),
            "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n\
             \"JacobiIterationKernel(int, double)\",3,1552942,517647.333333,42.60,510404,527365,8747.035174\n"
        );
    }

    #[test]
    fn empty_tables_and_zero_totals_do_not_divide_by_zero() {
        let s = Series::new();
        let row = StatRow::new("idle", &s, 0);
        assert_eq!(
            row.cells(),
            [
                "idle",
                "0",
                "0",
                "0.00000000e+00",
                "0.000e+00",
                "0",
                "0",
                "0.00000000e+00"
            ]
        );
        assert_eq!(to_csv(&[]).lines().count(), 1);
    }
}
