//! Copy volume and rate, grouped two ways.
//!
//! The durations of a group are a [`Series`], the SDK's (and the host's)
//! one statistics type: copies, total and average come from it, and the
//! average is written in the statistics files' number format.

use std::collections::BTreeMap;

use rocwasm_plugin_sdk::kind::copy;
use rocwasm_plugin_sdk::partial::{PartialReader, PartialWriter};
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

    /// Folds `other` in, as if its copies had been added here: exact (the
    /// peak is a maximum).
    fn merge(&mut self, other: &Group) {
        self.durations.merge(&other.durations);
        self.bytes += other.bytes;
        self.peak_gbps = self.peak_gbps.max(other.peak_gbps);
    }

    fn write(&self, w: &mut PartialWriter) {
        w.series(&self.durations);
        w.u128(self.bytes);
        w.f64(self.peak_gbps);
    }

    fn read(r: &mut PartialReader<'_>) -> Result<Group, String> {
        Ok(Group {
            durations: r.series()?,
            bytes: r.u128()?,
            peak_gbps: r.f64()?,
        })
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

/// The partial result's format.
const PARTIAL: &str = "memcpy-bandwidth/1";

#[derive(Debug, Default)]
pub struct Bandwidth {
    /// By copy direction (the SDK's operation: the same in every process).
    by_direction: BTreeMap<u32, Group>,
    /// By (source, destination) agent id, this process's.
    by_agents: BTreeMap<(u64, u64), Group>,
    /// What merged partials added, by agent labels (ids are per process).
    merged_agents: BTreeMap<(String, String), Group>,
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

    /// By agent pair, labelled: this process's groups and the merged ones.
    fn labelled(&self, mut label: impl FnMut(u64) -> String) -> BTreeMap<(String, String), Group> {
        let mut out = self.merged_agents.clone();
        for ((src, dst), group) in &self.by_agents {
            out.entry((label(*src), label(*dst)))
                .or_default()
                .merge(group);
        }
        out
    }

    pub fn by_agents_table(&self, label: impl FnMut(u64) -> String) -> SummaryTable {
        let mut table = SummaryTable::new(
            "Memory copies by agent pair",
            &header(&["SrcAgent", "DstAgent"]),
        );
        for ((src, dst), group) in sorted(&self.labelled(label)) {
            table.push_row([src.clone(), dst.clone()].into_iter().chain(group.cells()));
        }
        table
    }

    /// Everything seen and merged, as a partial result (agents by label).
    pub fn take_partial(&self, label: impl FnMut(u64) -> String) -> Vec<u8> {
        let mut w = PartialWriter::new(PARTIAL);
        w.u64(self.by_direction.len() as u64);
        for (op, group) in &self.by_direction {
            w.u64(u64::from(*op));
            group.write(&mut w);
        }
        let agents = self.labelled(label);
        w.u64(agents.len() as u64);
        for ((src, dst), group) in &agents {
            w.str(src);
            w.str(dst);
            group.write(&mut w);
        }
        w.finish()
    }

    /// Folds in a partial [`Bandwidth::take_partial`] wrote; nothing is
    /// folded when it cannot be read.
    pub fn merge_partial(&mut self, partial: &[u8]) -> Result<(), String> {
        let mut r = PartialReader::new(partial, PARTIAL)?;
        let mut directions = Vec::new();
        for _ in 0..r.u64()? {
            let op = u32::try_from(r.u64()?).map_err(|_| "a copy direction out of range")?;
            directions.push((op, Group::read(&mut r)?));
        }
        let mut agents = Vec::new();
        for _ in 0..r.u64()? {
            let pair = (r.str()?, r.str()?);
            agents.push((pair, Group::read(&mut r)?));
        }
        r.finish()?;
        for (op, group) in directions {
            self.by_direction.entry(op).or_default().merge(&group);
        }
        for (pair, group) in agents {
            self.merged_agents.entry(pair).or_default().merge(&group);
        }
        Ok(())
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

    #[test]
    fn two_halves_merged_give_the_tables_of_one_pass() {
        let copies = [
            copy_of(copy::HOST_TO_DEVICE, 1, 2, 1_000, 0, 100),
            copy_of(copy::HOST_TO_DEVICE, 1, 2, 3_000, 0, 70),
            copy_of(copy::DEVICE_TO_HOST, 2, 1, 500, 10, 10),
            copy_of(copy::DEVICE_TO_DEVICE, 2, 3, 8_000, 5, 45),
        ];
        let label = |id: u64| format!("A{id}");
        let mut whole = Bandwidth::default();
        copies.iter().for_each(|c| whole.add(c));
        let (mut left, mut right) = (Bandwidth::default(), Bandwidth::default());
        copies[..1].iter().for_each(|c| left.add(c));
        copies[1..].iter().for_each(|c| right.add(c));
        let mut reducer = Bandwidth::default();
        reducer.merge_partial(&right.take_partial(label)).unwrap();
        reducer.merge_partial(&left.take_partial(label)).unwrap();
        let rows = |t: SummaryTable| (t.columns, t.rows);
        assert_eq!(
            rows(reducer.by_direction_table()),
            rows(whole.by_direction_table())
        );
        assert_eq!(
            rows(reducer.by_agents_table(label)),
            rows(whole.by_agents_table(label))
        );
        let bytes = whole.take_partial(label);
        assert!(reducer.merge_partial(&bytes[..bytes.len() - 1]).is_err());
        assert_eq!(
            rows(reducer.by_direction_table()),
            rows(whole.by_direction_table())
        );
    }
}
