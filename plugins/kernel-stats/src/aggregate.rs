//! Per-kernel-id duration sums, then per-name statistics.
//!
//! The hot loop runs once per dispatch record, so it zips the three columns
//! it needs instead of building rows, finds the kernel's sums by indexing a
//! table with the kernel id ([`IdSums`]: no hashing, however kernels
//! interleave) and adds exact integer sums (no division per record; the
//! same `rocwasm-stats` series the host's statistics sink keeps). Names are
//! looked up once per kernel, when the table is built.

use rocwasm_plugin_sdk::rows::kernel_dispatches;
use rocwasm_plugin_sdk::stats::{IdSums, StatsTable};

/// The columns [`KernelAggregate::add`] reads: all the plugin selects.
pub const COLUMNS: [&str; 3] = ["kernel_id", "start", "end"];

#[derive(Debug, Default)]
pub struct KernelAggregate {
    by_id: IdSums,
}

impl KernelAggregate {
    /// Adds every dispatch's duration (`end - start`, 0 if reversed).
    pub fn add(&mut self, d: kernel_dispatches::View<'_>) {
        self.by_id.add_durations(d.kernel_id, d.start, d.end);
    }

    /// Kernel ids seen, in first-seen order.
    pub fn ids(&self) -> &[u64] {
        self.by_id.ids()
    }

    /// Statistics per kernel name (ids sharing a name are merged).
    pub fn by_name(&self, name: impl FnMut(u64) -> String) -> StatsTable {
        self.by_id.to_table(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_plugin_sdk::rows::{KernelDispatch, KernelDispatchColumns};

    fn batch(rows: &[(u64, u64, u64)]) -> KernelDispatchColumns {
        rows.iter()
            .map(|&(kernel_id, start, end)| KernelDispatch {
                kernel_id,
                start,
                end,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn groups_by_name_across_ids_and_batches() {
        let mut agg = KernelAggregate::default();
        agg.add(batch(&[(1, 0, 100), (1, 100, 300), (2, 0, 50)]).view());
        agg.add(batch(&[(3, 0, 400), (2, 10, 60), (1, 5, 5)]).view());
        assert_eq!(agg.by_name(|_| "k".into()).get("k").unwrap().count(), 6);
        // Ids 1 and 3 are the same kernel on two agents.
        let table = agg.by_name(|id| {
            if id == 2 {
                "small".into()
            } else {
                "big".into()
            }
        });
        let cells: Vec<_> = table.rows().iter().map(|r| r.cells()).collect();
        assert_eq!(cells.len(), 2);
        // big: 100, 200, 0, 400 → total 700, mean 175; small: 50, 50.
        assert_eq!(&cells[0][..3], ["big", "4", "700"]);
        assert_eq!(cells[0][3], "175.000000");
        assert_eq!(cells[0][4], format!("{:.2}", 700.0 * 100.0 / 800.0));
        assert_eq!((&cells[0][5][..], &cells[0][6][..]), ("0", "400"));
        let mean = 175.0f64;
        let var = [100.0f64, 200.0, 0.0, 400.0]
            .iter()
            .map(|x| (x - mean).powi(2))
            .sum::<f64>()
            / 3.0;
        assert_eq!(cells[0][7], format!("{:.6}", var.sqrt()));
        assert_eq!(
            cells[1],
            [
                "small",
                "2",
                "100",
                "50.000000",
                "12.50",
                "50",
                "50",
                "0.00000000e+00"
            ]
        );
    }

    #[test]
    fn reversed_timestamps_count_as_zero() {
        let mut agg = KernelAggregate::default();
        agg.add(batch(&[(1, 50, 10)]).view());
        let rows = agg.by_name(|_| "k".into()).rows();
        assert_eq!(&rows[0].cells()[..3], ["k", "1", "0"]);
    }
}
