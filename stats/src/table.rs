//! [`StatsTable`]: series by name, as one statistics file lists them.

use std::collections::BTreeMap;

use crate::row::{to_csv, StatRow};
use crate::series::Series;

/// One [`Series`] per name (kernel name, API function, …): one statistics
/// file's worth.
///
/// Names are the unit of a row: series added or merged under the same name
/// become one (a kernel with one id per GPU is one row, as in rocprofv3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsTable {
    series: BTreeMap<String, Series>,
}

impl StatsTable {
    /// No rows yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample to `name`'s series.
    pub fn add(&mut self, name: impl Into<String>, x: u64) {
        self.series.entry(name.into()).or_default().add(x);
    }

    /// Folds a whole series into `name`'s.
    pub fn merge(&mut self, name: impl Into<String>, series: &Series) {
        self.series.entry(name.into()).or_default().merge(series);
    }

    /// The series of `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Series> {
        self.series.get(name)
    }

    /// Every name with its series, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Series)> + '_ {
        self.series.iter().map(|(name, s)| (name.as_str(), s))
    }

    /// Distinct names.
    pub fn len(&self) -> usize {
        self.series.len()
    }

    /// True before the first sample.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// Sum of every series' total: the denominator of `Percentage`.
    pub fn grand_total(&self) -> u128 {
        self.series.values().map(Series::total).sum()
    }

    /// The rows, busiest first (total duration descending), ties by name so
    /// the order never depends on how the table was filled.
    pub fn rows(&self) -> Vec<StatRow> {
        let grand = self.grand_total();
        let mut rows: Vec<(u128, StatRow)> = self
            .series
            .iter()
            .map(|(name, s)| (s.total(), StatRow::new(name.clone(), s, grand)))
            .collect();
        rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        rows.into_iter().map(|(_, row)| row).collect()
    }

    /// The table as a statistics file (see [`to_csv`]).
    pub fn to_csv(&self) -> String {
        to_csv(&self.rows())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sort_by_total_then_name_and_share_the_grand_total() {
        let mut t = StatsTable::new();
        for (k, x) in [("b", 50), ("a", 50), ("c", 300), ("a", 50), ("b", 50)] {
            t.add(k, x);
        }
        let rows = t.rows();
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(
            rows[0].cells(),
            [
                "c",
                "1",
                "300",
                "300.000000",
                "60.00",
                "300",
                "300",
                "0.00000000e+00"
            ]
        );
        assert_eq!(rows[1].percentage, 20.0);
        let csv = t.to_csv();
        let mut lines = csv.lines().skip(1);
        assert_eq!(
            lines.next(),
            Some("\"c\",1,300,300.000000,60.00,300,300,0.00000000e+00")
        );
        assert_eq!(
            lines.next(),
            Some("\"a\",2,100,50.000000,20.00,50,50,0.00000000e+00")
        );
    }

    #[test]
    fn merging_by_name_equals_adding_under_that_name() {
        let mut by_id = [Series::new(), Series::new()];
        [3u64, 9, 27].iter().for_each(|&x| by_id[0].add(x));
        [2u64, 4].iter().for_each(|&x| by_id[1].add(x));
        let mut merged = StatsTable::new();
        merged.merge("k", &by_id[1]);
        merged.merge("k", &by_id[0]);
        let mut added = StatsTable::new();
        [3u64, 9, 27, 2, 4].iter().for_each(|&x| added.add("k", x));
        assert_eq!(merged, added);
        assert_eq!(merged.rows(), added.rows());
    }
}
