//! Duration statistics per kernel, API function and copy direction: the
//! numbers of rocprofv3 `--stats`, computed natively.
//!
//! [`StatsAccumulator`] folds batches into integer sums keyed by *ids*
//! (kernel id, kind + operation), which is cheap per record; names are
//! resolved once, in [`StatsAccumulator::report`], where entries with the same
//! name (one kernel loaded on two agents has two ids) merge. Sums are exact
//! integers, so the report does not depend on record order: a trace replayed
//! in any order gives bit-identical numbers. That is what the round-trip
//! tests of `rocwasm-replay` rely on.
//!
//! `StdDev` is the sample standard deviation (n − 1 in the denominator), 0 for
//! a single call. `Percentage` is the share of the domain's total duration.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use comfy_table::{presets, Table};
use rocwasm_core::{ApiFamily, Batch, BufferTracingKind, SymbolTable};

use crate::names::{kind_name, OperationNames};
use crate::paths::output_path;

/// Exact running sums of durations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accum {
    pub calls: u64,
    pub total: u128,
    pub sum_sq: u128,
    pub min: u64,
    pub max: u64,
}

impl Accum {
    pub fn add(&mut self, duration: u64) {
        if self.calls == 0 || duration < self.min {
            self.min = duration;
        }
        self.max = self.max.max(duration);
        self.calls += 1;
        self.total += u128::from(duration);
        self.sum_sq += u128::from(duration) * u128::from(duration);
    }

    pub fn merge(&mut self, other: &Accum) {
        if other.calls == 0 {
            return;
        }
        if self.calls == 0 || other.min < self.min {
            self.min = other.min;
        }
        self.max = self.max.max(other.max);
        self.calls += other.calls;
        self.total += other.total;
        self.sum_sq += other.sum_sq;
    }

    fn stddev(&self) -> f64 {
        if self.calls < 2 {
            return 0.0;
        }
        let n = u128::from(self.calls);
        // n·Σx² − (Σx)² is exact in integers when it fits; fall back to floats.
        let numerator = n.checked_mul(self.sum_sq).and_then(|a| {
            self.total
                .checked_mul(self.total)
                .map(|b| a.saturating_sub(b))
        });
        let var = match numerator {
            Some(num) => num as f64 / (n * (n - 1)) as f64,
            None => {
                let mean = self.total as f64 / n as f64;
                (self.sum_sq as f64 - n as f64 * mean * mean).max(0.0) / (n - 1) as f64
            }
        };
        var.sqrt()
    }
}

/// The statistics domains rocprofv3 writes a `*_stats.csv` for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StatsDomain {
    Kernel,
    HipApi,
    HsaApi,
    MarkerApi,
    MemoryCopy,
}

impl StatsDomain {
    pub const ALL: [StatsDomain; 5] = [
        StatsDomain::Kernel,
        StatsDomain::HipApi,
        StatsDomain::HsaApi,
        StatsDomain::MarkerApi,
        StatsDomain::MemoryCopy,
    ];

    /// File stem: `kernel_stats`, `hip_api_stats`, …
    pub fn file_stem(self) -> &'static str {
        match self {
            StatsDomain::Kernel => "kernel_stats",
            StatsDomain::HipApi => "hip_api_stats",
            StatsDomain::HsaApi => "hsa_api_stats",
            StatsDomain::MarkerApi => "marker_api_stats",
            StatsDomain::MemoryCopy => "memory_copy_stats",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            StatsDomain::Kernel => "KERNEL_DISPATCH",
            StatsDomain::HipApi => "HIP_API",
            StatsDomain::HsaApi => "HSA_API",
            StatsDomain::MarkerApi => "MARKER_API",
            StatsDomain::MemoryCopy => "MEMORY_COPY",
        }
    }

    /// The domain of an API kind, if it has a stats file.
    pub fn of_api_kind(kind: u32) -> Option<StatsDomain> {
        match ApiFamily::of_raw(kind)? {
            ApiFamily::Hip => Some(StatsDomain::HipApi),
            ApiFamily::Hsa => Some(StatsDomain::HsaApi),
            ApiFamily::Marker => Some(StatsDomain::MarkerApi),
            _ => None,
        }
    }
}

/// One line of a stats file.
#[derive(Debug, Clone, PartialEq)]
pub struct StatRow {
    pub name: String,
    pub calls: u64,
    pub total_ns: u64,
    pub average_ns: f64,
    pub percentage: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub stddev: f64,
}

/// The exact header of every rocprofv3 stats file.
pub const STATS_HEADER: [&str; 8] = [
    "Name",
    "Calls",
    "TotalDurationNs",
    "AverageNs",
    "Percentage",
    "MinNs",
    "MaxNs",
    "StdDev",
];

/// Folds batches into per-id sums. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct StatsAccumulator {
    kernels: HashMap<u64, Accum>,
    api: HashMap<(u32, u32), Accum>,
    copies: HashMap<u32, Accum>,
    /// Per buffer-tracing kind, for `domain_stats.csv`.
    domains: HashMap<u32, Accum>,
}

impl StatsAccumulator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_batch(&mut self, batch: &Batch) {
        let k = &batch.kernel_dispatches;
        let kernel_domain = self
            .domains
            .entry(BufferTracingKind::KernelDispatch.raw())
            .or_default();
        for i in 0..k.len() {
            let d = k.end[i].saturating_sub(k.start[i]);
            kernel_domain.add(d);
            self.kernels.entry(k.kernel_id[i]).or_default().add(d);
        }
        let a = &batch.api_calls;
        for i in 0..a.len() {
            let d = a.end[i].saturating_sub(a.start[i]);
            self.api
                .entry((a.kind[i], a.operation[i]))
                .or_default()
                .add(d);
            self.domains.entry(a.kind[i]).or_default().add(d);
        }
        let c = &batch.memory_copies;
        let copy_domain = self
            .domains
            .entry(BufferTracingKind::MemoryCopy.raw())
            .or_default();
        for i in 0..c.len() {
            let d = c.end[i].saturating_sub(c.start[i]);
            copy_domain.add(d);
            self.copies.entry(c.operation[i]).or_default().add(d);
        }
        // Empty domains were created by `entry` above; drop them again so the
        // report lists only what was seen.
        self.domains.retain(|_, a| a.calls > 0);
    }

    /// Resolves ids to names and computes the rows of every stats file.
    pub fn report(&self, symbols: &SymbolTable, names: &OperationNames) -> StatsReport {
        let mut by_domain: BTreeMap<StatsDomain, BTreeMap<String, Accum>> = BTreeMap::new();
        for (&id, acc) in &self.kernels {
            let name = kernel_display_name(symbols, id);
            by_domain
                .entry(StatsDomain::Kernel)
                .or_default()
                .entry(name)
                .or_default()
                .merge(acc);
        }
        for (&(kind, op), acc) in &self.api {
            let Some(domain) = StatsDomain::of_api_kind(kind) else {
                continue;
            };
            let name = names.name(kind, op).to_string();
            by_domain
                .entry(domain)
                .or_default()
                .entry(name)
                .or_default()
                .merge(acc);
        }
        for (&op, acc) in &self.copies {
            let name = names
                .name(BufferTracingKind::MemoryCopy.raw(), op)
                .to_string();
            by_domain
                .entry(StatsDomain::MemoryCopy)
                .or_default()
                .entry(name)
                .or_default()
                .merge(acc);
        }
        let domains = self
            .domains
            .iter()
            .map(|(&kind, acc)| (kind_name(kind), *acc))
            .collect::<BTreeMap<_, _>>();
        StatsReport {
            tables: by_domain.into_iter().map(|(d, m)| (d, rows(m))).collect(),
            domains: rows(domains),
        }
    }
}

/// The name kernel statistics use: the demangled name, or `kernel_<id>` when
/// the symbol is unknown.
pub fn kernel_display_name(symbols: &SymbolTable, id: u64) -> String {
    match symbols.kernel(id) {
        Some(k) if !k.demangled_name.is_empty() => k.demangled_name,
        Some(k) if !k.name.is_empty() => k.name,
        _ => format!("kernel_{id}"),
    }
}

fn rows(m: BTreeMap<String, Accum>) -> Vec<StatRow> {
    let grand: u128 = m.values().map(|a| a.total).sum();
    let mut rows: Vec<StatRow> = m
        .into_iter()
        .map(|(name, a)| StatRow {
            calls: a.calls,
            total_ns: u64::try_from(a.total).unwrap_or(u64::MAX),
            average_ns: if a.calls == 0 {
                0.0
            } else {
                a.total as f64 / a.calls as f64
            },
            percentage: if grand == 0 {
                0.0
            } else {
                100.0 * a.total as f64 / grand as f64
            },
            min_ns: a.min,
            max_ns: a.max,
            stddev: a.stddev(),
            name,
        })
        .collect();
    // Busiest first, as rocprofv3 prints them; ties by name for determinism.
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

/// Every stats table of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsReport {
    pub tables: BTreeMap<StatsDomain, Vec<StatRow>>,
    /// `domain_stats.csv`: one row per buffer-tracing kind seen.
    pub domains: Vec<StatRow>,
}

impl StatsReport {
    pub fn table(&self, domain: StatsDomain) -> &[StatRow] {
        self.tables.get(&domain).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Writes `<dir>/[<name>_]<domain>_stats.csv` for every non-empty domain
    /// plus `domain_stats.csv`; returns the files written.
    pub fn write_csv(&self, dir: &Path, name: Option<&str>) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        for domain in StatsDomain::ALL {
            let rows = self.table(domain);
            if rows.is_empty() {
                continue;
            }
            let path = output_path(dir, name, &format!("{}.csv", domain.file_stem()));
            write_stats_file(&path, rows)?;
            written.push(path);
        }
        if !self.domains.is_empty() {
            let path = output_path(dir, name, "domain_stats.csv");
            write_stats_file(&path, &self.domains)?;
            written.push(path);
        }
        Ok(written)
    }

    /// The terminal summary: one table per domain, the `top` busiest rows each.
    pub fn render_summary(&self, top: usize) -> String {
        let mut out = String::new();
        for (domain, rows) in &self.tables {
            if rows.is_empty() {
                continue;
            }
            let mut t = Table::new();
            t.load_preset(presets::UTF8_FULL_CONDENSED);
            t.set_header(STATS_HEADER);
            for r in rows.iter().take(top) {
                t.add_row(vec![
                    truncate(&r.name, 60),
                    r.calls.to_string(),
                    r.total_ns.to_string(),
                    format!("{:.1}", r.average_ns),
                    format!("{:.2}", r.percentage),
                    r.min_ns.to_string(),
                    r.max_ns.to_string(),
                    format!("{:.1}", r.stddev),
                ]);
            }
            let more = rows.len().saturating_sub(top);
            out.push_str(&format!(
                "{} ({} distinct)\n{t}\n",
                domain.title(),
                rows.len()
            ));
            if more > 0 {
                out.push_str(&format!("… and {more} more\n"));
            }
        }
        out
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

fn write_stats_file(path: &Path, rows: &[StatRow]) -> Result<()> {
    let mut w = crate::csv_sink::csv_writer(path)?;
    w.write_record(STATS_HEADER)?;
    for r in rows {
        w.write_record([
            r.name.clone(),
            r.calls.to_string(),
            r.total_ns.to_string(),
            format!("{}", r.average_ns),
            format!("{}", r.percentage),
            r.min_ns.to_string(),
            r.max_ns.to_string(),
            format!("{}", r.stddev),
        ])?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::KernelDispatch;

    #[test]
    fn accum_matches_hand_computation() {
        let mut a = Accum::default();
        for d in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            a.add(d);
        }
        assert_eq!((a.calls, a.total, a.min, a.max), (8, 40, 2, 9));
        // Sample variance of that classic set is 32/7.
        assert!((a.stddev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn report_is_order_independent_and_merges_same_names() {
        let symbols = SymbolTable::new();
        let names = OperationNames::new();
        let mk = |id, start, end| KernelDispatch {
            kernel_id: id,
            start,
            end,
            ..Default::default()
        };
        let mut b1 = Batch::default();
        let mut b2 = Batch::default();
        for (i, (id, s, e)) in [(1, 0, 10), (2, 5, 25), (1, 30, 31), (3, 0, 100)]
            .into_iter()
            .enumerate()
        {
            b1.kernel_dispatches.push(mk(id, s, e));
            if i % 2 == 0 {
                b2.kernel_dispatches.push(mk(id, s, e));
            }
        }
        for (i, (id, s, e)) in [(1, 0, 10), (2, 5, 25), (1, 30, 31), (3, 0, 100)]
            .into_iter()
            .enumerate()
            .rev()
        {
            if i % 2 == 1 {
                b2.kernel_dispatches.push(mk(id, s, e));
            }
        }
        let (mut x, mut y) = (StatsAccumulator::new(), StatsAccumulator::new());
        x.add_batch(&b1);
        y.add_batch(&b2);
        let rx = x.report(&symbols, &names);
        assert_eq!(rx, y.report(&symbols, &names));
        let k = rx.table(StatsDomain::Kernel);
        assert_eq!(k[0].name, "kernel_3");
        assert_eq!(k.iter().map(|r| r.calls).sum::<u64>(), 4);
        assert!((k.iter().map(|r| r.percentage).sum::<f64>() - 100.0).abs() < 1e-9);
    }
}
