//! Copy volume and rate, grouped two ways.
//!
//! The durations of a group are a [`Series`], the SDK's (and the host's)
//! one statistics type: copies, total and average come from it, and the
//! average is written in the statistics files' number format.

use std::collections::BTreeMap;

use rocwasm_plugin_sdk::kind::copy;
use rocwasm_plugin_sdk::rows::MemoryCopy;
use rocwasm_plugin_sdk::stats::{format_ns, Series};
use rocwasm_plugin_sdk::types::SummaryTable;

/// The figures of one group of copies.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Group {
    /// One sample per copy: its duration.
    pub durations: Series,
    pub bytes: u128,
    /// Fastest single copy, bytes per ns (= GB/s).
    pub peak_gbps: f64,
}

impl Group {
    fn add(&mut self, bytes: u64, duration: u64) {
        self.durations.add(duration);
        self.bytes += bytes as u128;
        if duration > 0 {
            self.peak_gbps = self.peak_gbps.max(bytes as f64 / duration as f64);
        }
    }

    /// Copies in the group.
    pub fn copies(&self) -> u64 {
        self.durations.count()
    }

    /// Sum of the copies' durations.
    pub fn total_ns(&self) -> u128 {
        self.durations.total()
    }

    /// Bytes per nanosecond of copying (decimal GB/s); 0 without duration.
    pub fn gbps(&self) -> f64 {
        if self.total_ns() == 0 {
            0.0
        } else {
            self.bytes as f64 / self.total_ns() as f64
        }
    }

    fn cells(&self) -> [String; 6] {
        [
            self.copies().to_string(),
            self.bytes.to_string(),
            self.total_ns().to_string(),
            format_ns(self.durations.mean()),
            format!("{:.6}", self.gbps()),
            format!("{:.6}", self.peak_gbps),
        ]
    }
}

const FIGURES: [&str; 6] = [
    "Copies",
    "Bytes",
    "TotalDurationNs",
    "AverageDurationNs",
    "BandwidthGBps",
    "PeakBandwidthGBps",
];

#[derive(Debug, Default)]
pub struct Bandwidth {
    by_direction: BTreeMap<u32, Group>,
    by_agents: BTreeMap<(u64, u64), Group>,
}

impl Bandwidth {
    pub fn add(&mut self, c: &MemoryCopy) {
        let duration = c.duration();
        self.by_direction
            .entry(c.operation)
            .or_default()
            .add(c.bytes, duration);
        self.by_agents
            .entry((c.src_agent_id, c.dst_agent_id))
            .or_default()
            .add(c.bytes, duration);
    }

    #[cfg(test)]
    pub fn direction(&self, op: u32) -> Option<&Group> {
        self.by_direction.get(&op)
    }

    #[cfg(test)]
    pub fn agents(&self, src: u64, dst: u64) -> Option<&Group> {
        self.by_agents.get(&(src, dst))
    }

    pub fn by_direction_table(&self) -> SummaryTable {
        let mut table = SummaryTable::new("Memory copies by direction", &header(&["Direction"]));
        for (op, group) in sorted(&self.by_direction) {
            let name = copy::short_name(*op)
                .map(str::to_string)
                .unwrap_or_else(|| format!("DIRECTION_{op}"));
            table.push_row([name].into_iter().chain(group.cells()));
        }
        table
    }

    pub fn by_agents_table(&self, mut label: impl FnMut(u64) -> String) -> SummaryTable {
        let mut table = SummaryTable::new(
            "Memory copies by agent pair",
            &header(&["SrcAgent", "DstAgent"]),
        );
        for ((src, dst), group) in sorted(&self.by_agents) {
            table.push_row([label(*src), label(*dst)].into_iter().chain(group.cells()));
        }
        table
    }
}

fn header(keys: &[&'static str]) -> Vec<&'static str> {
    keys.iter().chain(FIGURES.iter()).copied().collect()
}

/// Groups by bytes, largest first; ties keep key order.
fn sorted<K: Ord>(groups: &BTreeMap<K, Group>) -> Vec<(&K, &Group)> {
    let mut rows: Vec<_> = groups.iter().collect();
    rows.sort_by_key(|b| std::cmp::Reverse(b.1.bytes));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy_of(operation: u32, src: u64, dst: u64, bytes: u64, start: u64, end: u64) -> MemoryCopy {
        MemoryCopy {
            operation,
            src_agent_id: src,
            dst_agent_id: dst,
            bytes,
            start,
            end,
            ..Default::default()
        }
    }

    #[test]
    fn groups_by_direction_and_agent_pair() {
        let mut bw = Bandwidth::default();
        bw.add(&copy_of(copy::HOST_TO_DEVICE, 1, 2, 1_000_000, 0, 100_000)); // 10 GB/s
        bw.add(&copy_of(copy::HOST_TO_DEVICE, 1, 3, 3_000_000, 0, 100_000)); // 30 GB/s
        bw.add(&copy_of(copy::DEVICE_TO_HOST, 2, 1, 500, 10, 10)); // zero duration
        let h2d = bw.direction(copy::HOST_TO_DEVICE).unwrap();
        assert_eq!(
            (h2d.copies(), h2d.bytes, h2d.total_ns()),
            (2, 4_000_000, 200_000)
        );
        assert!((h2d.gbps() - 20.0).abs() < 1e-12);
        assert!((h2d.peak_gbps - 30.0).abs() < 1e-12);
        let d2h = bw.direction(copy::DEVICE_TO_HOST).unwrap();
        assert_eq!((d2h.bytes, d2h.gbps(), d2h.peak_gbps), (500, 0.0, 0.0));
        assert_eq!(bw.agents(1, 3).unwrap().bytes, 3_000_000);
        assert!(bw.agents(3, 1).is_none());
    }

    #[test]
    fn tables_are_sorted_by_bytes_and_labelled() {
        let mut bw = Bandwidth::default();
        bw.add(&copy_of(copy::DEVICE_TO_HOST, 2, 1, 10, 0, 10));
        bw.add(&copy_of(copy::HOST_TO_DEVICE, 1, 2, 1000, 0, 100));
        let t = bw.by_direction_table();
        assert_eq!(t.columns[0], "Direction");
        assert_eq!(
            t.rows[0],
            [
                "HOST_TO_DEVICE",
                "1",
                "1000",
                "100",
                "100.000000",
                "10.000000",
                "10.000000"
            ]
        );
        assert_eq!(t.rows[1][0], "DEVICE_TO_HOST");
        let a = bw.by_agents_table(|id| format!("A{id}"));
        assert_eq!(&a.columns[..3], ["SrcAgent", "DstAgent", "Copies"]);
        assert_eq!(&a.rows[0][..3], ["A1", "A2", "1"]);
        assert!(a.to_csv().starts_with("SrcAgent,DstAgent,Copies,Bytes,TotalDurationNs,AverageDurationNs,BandwidthGBps,PeakBandwidthGBps\n"));
    }
}
