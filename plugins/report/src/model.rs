//! What the report aggregates as batches arrive, in bounded memory.
//!
//! Per kernel id, per API function and per copy direction: calls and total
//! time (a handful of numbers each, however long the run). For the timeline
//! the `limit` most expensive intervals (kernels and copies, by duration):
//! kept in a vector that is cut back to the `limit` longest whenever it
//! reaches twice that, so memory stays within `2 × limit` intervals.

use std::collections::HashMap;

use rocwasm_plugin_sdk::stats::FastHash;
use rocwasm_plugin_sdk::types::ProcessInfo;
use rocwasm_plugin_sdk::Batch;

use crate::run::Process;

/// Calls and total duration of one group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum {
    pub calls: u64,
    pub total_ns: u64,
}

impl Sum {
    fn add(&mut self, ns: u64) {
        self.calls += 1;
        self.total_ns = self.total_ns.saturating_add(ns);
    }

    fn merge(&mut self, other: &Sum) {
        self.calls += other.calls;
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
    }
}

/// Copies of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copies {
    pub time: Sum,
    pub bytes: u64,
}

/// The row a timeline interval is drawn on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    /// Kernels of one (agent, queue).
    Queue { agent: u64, queue: u64 },
    /// Copies of one stream.
    Stream(u64),
}

/// What an interval is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// A dispatch of this kernel id.
    Kernel(u64),
    /// A copy in this direction, of so many bytes.
    Copy { direction: u32, bytes: u64 },
}

/// One kernel dispatch or memory copy on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub lane: Lane,
    pub start: u64,
    pub end: u64,
    pub what: What,
}

impl Interval {
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// The columns [`Model::add`] reads, per table (WIT table names, Rust
/// column names); of the tables it only counts, one column each (a
/// table's row count is its longest column).
pub const COLUMNS: [(&str, &[&str]); 7] = [
    ("api-calls", &["kind", "operation", "start", "end"]),
    (
        "kernel-dispatches",
        &["kernel_id", "start", "end", "agent_id", "queue_id"],
    ),
    (
        "memory-copies",
        &["operation", "start", "end", "bytes", "stream_id"],
    ),
    ("memory-allocations", &["operation"]),
    ("scratch-memory", &["operation"]),
    ("retirements", &["correlation_id"]),
    ("runtime-initializations", &["operation", "version"]),
];

/// Everything the page shows, aggregated.
#[derive(Debug, Default)]
pub struct Model {
    /// Most intervals the timeline keeps.
    pub limit: usize,
    pub kernels: HashMap<u64, Sum, FastHash>,
    /// Per (buffer kind, operation).
    pub apis: HashMap<(u32, u32), Sum, FastHash>,
    /// Per copy direction.
    pub copies: HashMap<u32, Copies, FastHash>,
    intervals: Vec<Interval>,
    /// Kernels and copies seen (kept or not) for the timeline.
    pub timeline_seen: u64,
    /// Records per batch table, by table name.
    pub records: Vec<(&'static str, u64)>,
    pub batches: u64,
    /// Records a DISCARD buffer dropped, as the host reported.
    pub dropped: u64,
    /// Earliest start and latest end of any timed record.
    pub span: Option<(u64, u64)>,
    /// The processes deliveries named, in order (at most [`PROCESSES_KEPT`]).
    pub processes: Vec<Process>,
    /// A delivery named a process beyond the kept ones.
    pub processes_capped: bool,
    /// Runtime initialisations delivered: (operation, version), distinct.
    pub runtimes: Vec<(u32, u64)>,
}

/// Most distinct processes the model keeps (an MPI job's replay delivers
/// one per rank).
pub const PROCESSES_KEPT: usize = 4096;

impl Model {
    pub fn new(limit: usize) -> Self {
        let mut model = Model {
            limit,
            ..Default::default()
        };
        model.records = Batch::default()
            .table_lengths()
            .into_iter()
            .map(|(name, _)| (name, 0))
            .collect();
        model
    }

    fn widen(&mut self, start: u64, end: u64) {
        let end = end.max(start);
        self.span = Some(match self.span {
            None => (start, end),
            Some((a, b)) => (a.min(start), b.max(end)),
        });
    }

    fn keep(&mut self, interval: Interval) {
        self.timeline_seen += 1;
        if self.limit == 0 {
            return;
        }
        self.intervals.push(interval);
        if self.intervals.len() >= 2 * self.limit {
            self.cut();
        }
    }

    /// Cuts the kept intervals back to the `limit` longest.
    fn cut(&mut self) {
        if self.intervals.len() > self.limit {
            let n = self.limit;
            self.intervals
                .select_nth_unstable_by(n, |a, b| b.duration().cmp(&a.duration()));
            self.intervals.truncate(n);
        }
    }

    /// Adds one delivered batch.
    pub fn add(&mut self, batch: &Batch, dropped: u64) {
        self.batches += 1;
        self.dropped += dropped;
        for (slot, (_, n)) in self.records.iter_mut().zip(batch.table_lengths()) {
            slot.1 += n as u64;
        }
        for k in batch.kernel_dispatches().iter() {
            self.kernels
                .entry(k.kernel_id)
                .or_default()
                .add(k.duration());
            self.widen(k.start, k.end);
            self.keep(Interval {
                lane: Lane::Queue {
                    agent: k.agent_id,
                    queue: k.queue_id,
                },
                start: k.start,
                end: k.end.max(k.start),
                what: What::Kernel(k.kernel_id),
            });
        }
        for c in batch.memory_copies().iter() {
            let e = self.copies.entry(c.operation).or_default();
            e.time.add(c.duration());
            e.bytes = e.bytes.saturating_add(c.bytes);
            self.widen(c.start, c.end);
            self.keep(Interval {
                lane: Lane::Stream(c.stream_id),
                start: c.start,
                end: c.end.max(c.start),
                what: What::Copy {
                    direction: c.operation,
                    bytes: c.bytes,
                },
            });
        }
        // The hot loop when API calls are traced: calls of one operation
        // come in runs, so the entry is looked up once per run.
        let calls = batch.api_calls();
        let mut run: Option<((u32, u32), Sum)> = None;
        for a in calls.iter() {
            let key = (a.kind, a.operation);
            match &mut run {
                Some((k, sum)) if *k == key => sum.add(a.duration()),
                _ => {
                    if let Some((k, sum)) = run.take() {
                        self.apis.entry(k).or_default().merge(&sum);
                    }
                    let mut sum = Sum::default();
                    sum.add(a.duration());
                    run = Some((key, sum));
                }
            }
            self.widen(a.start, a.end);
        }
        if let Some((k, sum)) = run {
            self.apis.entry(k).or_default().merge(&sum);
        }
        for r in batch.runtime_initializations().iter() {
            if !self.runtimes.contains(&(r.operation, r.version)) {
                self.runtimes.push((r.operation, r.version));
            }
        }
    }

    /// Notes the process a delivery names.
    pub fn saw_process(&mut self, p: &ProcessInfo) {
        let same = |q: &Process| {
            q.pid == p.pid && q.hostname == p.hostname && q.rank == p.rank && q.job == p.job
        };
        // Deliveries of one process come in runs: the last one first.
        if self.processes.last().is_some_and(same) || self.processes.iter().any(same) {
            return;
        }
        if self.processes.len() >= PROCESSES_KEPT {
            self.processes_capped = true;
            return;
        }
        self.processes.push(Process {
            hostname: p.hostname.clone(),
            pid: p.pid,
            rank: p.rank,
            job: p.job.clone(),
            ..Process::default()
        });
    }

    /// The kept intervals (at most `limit`), in start order.
    pub fn timeline(&mut self) -> &[Interval] {
        self.cut();
        self.intervals.sort_by_key(|i| (i.start, i.end));
        &self.intervals
    }

    /// Total records delivered.
    pub fn record_count(&self) -> u64 {
        self.records.iter().map(|(_, n)| n).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_plugin_sdk::rows::{KernelDispatch, MemoryCopy};
    use rocwasm_plugin_sdk::Tables;

    fn kernel(id: u64, start: u64, end: u64) -> KernelDispatch {
        KernelDispatch {
            kernel_id: id,
            start,
            end,
            queue_id: 7,
            ..Default::default()
        }
    }

    #[test]
    fn keeps_the_longest_intervals_within_the_limit() {
        let mut m = Model::new(3);
        for round in 0..4u64 {
            let mut b = Tables::default();
            for i in 0..5u64 {
                let d = round * 5 + i;
                b.kernel_dispatches
                    .push(kernel(i % 2, 1000 * d, 1000 * d + d));
            }
            m.add(&b.pack(), 1);
            assert!(m.intervals.len() < 6, "bounded: {}", m.intervals.len());
        }
        assert_eq!(m.timeline_seen, 20);
        assert_eq!(m.dropped, 4);
        let durations: Vec<u64> = m.timeline().iter().map(Interval::duration).collect();
        assert_eq!(durations, [17, 18, 19], "the three longest, by start");
        assert_eq!(m.kernels[&0].calls + m.kernels[&1].calls, 20);
        assert_eq!(m.span, Some((0, 19_019)));
        assert_eq!(m.record_count(), 20);
    }

    #[test]
    fn processes_and_runtimes_are_noted_once() {
        let mut m = Model::new(10);
        let p = |pid, rank| ProcessInfo {
            hostname: "n".into(),
            pid,
            rank,
            job: None,
        };
        for info in [p(1, Some(0)), p(1, Some(0)), p(2, Some(1)), p(1, Some(0))] {
            m.saw_process(&info);
        }
        let pids: Vec<(u32, Option<u32>)> = m.processes.iter().map(|q| (q.pid, q.rank)).collect();
        assert_eq!(pids, [(1, Some(0)), (2, Some(1))]);
        let mut b = Tables::default();
        for _ in 0..2 {
            b.runtime_initializations
                .push(rocwasm_plugin_sdk::rows::RuntimeInitialization {
                    operation: 2,
                    version: 50_201,
                    ..Default::default()
                });
        }
        m.add(&b.pack(), 0);
        assert_eq!(m.runtimes, [(2, 50_201)]);
    }

    #[test]
    fn copies_are_summed_per_direction_and_land_on_their_stream() {
        let mut m = Model::new(10);
        let mut b = Tables::default();
        for (op, bytes) in [(1, 100), (1, 300), (2, 50)] {
            b.memory_copies.push(MemoryCopy {
                operation: op,
                bytes,
                start: 10,
                end: 20,
                stream_id: 4,
                ..Default::default()
            });
        }
        m.add(&b.pack(), 0);
        assert_eq!(m.copies[&1].bytes, 400);
        assert_eq!(
            m.copies[&1].time,
            Sum {
                calls: 2,
                total_ns: 20
            }
        );
        assert!(m.timeline().iter().all(|i| i.lane == Lane::Stream(4)));
    }
}
