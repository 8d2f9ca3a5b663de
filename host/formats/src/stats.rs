//! Duration statistics per kernel, API function and copy direction: the
//! numbers of rocprofv3 `--stats`, computed natively.
//!
//! The arithmetic and the file format are `rocwasm-stats`'s, the crate the
//! stock `kernel-stats` and `api-stats` plugins use too: a row computed here
//! and the same row computed by a plugin are the same bits, written the same
//! way. This module adds what only the host knows: which records feed which
//! file ([`StatsDomain`]) and how ids become names.
//!
//! [`StatsAccumulator`] folds batches into series keyed by *ids* (kernel id,
//! kind + operation, copy direction), which is cheap per record; names are
//! resolved once, in [`StatsAccumulator::report`], where series with the
//! same name (one kernel loaded on two agents has two ids) merge. The series
//! are exact integer sums, so the report does not depend on record order: a
//! trace replayed in any order gives bit-identical numbers. That is what the
//! round-trip tests of `replay` rely on. For the same reason the
//! per-domain totals of `domain_stats.csv` are not counted separately: they
//! are the merge of the domain's series.
//!
//! `StdDev` is the sample standard deviation (n − 1 in the denominator), 0 for
//! a single call. `Percentage` is the share of the domain's total duration.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use comfy_table::{presets, Table};
use rocwasm_core::{ApiFamily, Batch, BufferTracingKind, SymbolTable};
use rocwasm_stats::{to_csv, IdSums, KeyedSums, Series, StatsTable};

use crate::names::{kind_name, OperationNames};
use crate::paths::output_path;

/// One line of a stats file (`rocwasm-stats`' row).
pub use rocwasm_stats::StatRow;
/// The exact header of every rocprofv3 stats file.
pub use rocwasm_stats::COLUMNS as STATS_HEADER;

/// The statistics domains rocprofv3 writes a `*_stats.csv` for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StatsDomain {
    /// Kernel dispatches, per kernel name.
    Kernel,
    /// HIP runtime and compiler API calls, per function.
    HipApi,
    /// HSA API calls (all four tables), per function.
    HsaApi,
    /// roctx marker calls, per function.
    MarkerApi,
    /// Memory copies, per direction.
    MemoryCopy,
}

impl StatsDomain {
    /// Every domain, in the order the files are written.
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

    /// The domain's name in the terminal summary.
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

/// Folds batches into per-id series. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct StatsAccumulator {
    kernels: IdSums,
    api: KeyedSums<(u32, u32)>,
    copies: KeyedSums<u32>,
}

impl StatsAccumulator {
    /// Nothing seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the durations of a batch's kernel dispatches, API calls and
    /// memory copies (`end - start`, 0 when reversed).
    pub fn add_batch(&mut self, batch: &Batch) {
        // Every table by name: one the schema gains fails to compile here
        // until the statistics summarise it or leave it out, as they leave
        // out allocations, scratch memory, retirements and initialisations
        // (rocprofv3's `--stats` has no table for them).
        let Batch {
            api_calls: a,
            kernel_dispatches: k,
            memory_copies: c,
            memory_allocations: _,
            scratch_memory: _,
            retirements: _,
            runtime_initializations: _,
            // Counter values are not durations: --stats has no table of them.
            counter_samples: _,
        } = batch;
        self.kernels.add_durations(&k.kernel_id, &k.start, &k.end);
        for i in 0..a.len() {
            self.api.add(
                (a.kind[i], a.operation[i]),
                a.end[i].saturating_sub(a.start[i]),
            );
        }
        let durations = c
            .start
            .iter()
            .zip(&c.end)
            .map(|(s, e)| e.saturating_sub(*s));
        self.copies.add_many(&c.operation, durations);
    }

    /// Resolves ids to names and computes the rows of every stats file.
    pub fn report(&self, symbols: &SymbolTable, names: &OperationNames) -> StatsReport {
        let mut tables: BTreeMap<StatsDomain, StatsTable> = BTreeMap::new();
        // Per buffer-tracing kind, for `domain_stats.csv`.
        let mut domains: HashMap<u32, Series> = HashMap::new();
        for (id, series) in self.kernels.iter() {
            tables
                .entry(StatsDomain::Kernel)
                .or_default()
                .merge(kernel_display_name(symbols, id), series);
            domains
                .entry(BufferTracingKind::KernelDispatch.raw())
                .or_default()
                .merge(series);
        }
        for ((kind, op), series) in self.api.iter() {
            domains.entry(kind).or_default().merge(series);
            let Some(domain) = StatsDomain::of_api_kind(kind) else {
                continue;
            };
            tables
                .entry(domain)
                .or_default()
                .merge(op_name(symbols, names, kind, op), series);
        }
        for (op, series) in self.copies.iter() {
            let copy = BufferTracingKind::MemoryCopy.raw();
            tables
                .entry(StatsDomain::MemoryCopy)
                .or_default()
                .merge(names.name(copy, op).to_string(), series);
            domains.entry(copy).or_default().merge(series);
        }
        let mut by_kind = StatsTable::new();
        for (kind, series) in &domains {
            by_kind.merge(kind_name(*kind).into_owned(), series);
        }
        StatsReport {
            tables: tables.into_iter().map(|(d, t)| (d, t.rows())).collect(),
            domains: by_kind.rows(),
        }
    }
}

/// The name kernel statistics use: the demangled name, or `kernel_<id>` when
/// the symbol is unknown.
pub fn kernel_display_name(symbols: &SymbolTable, id: u64) -> String {
    symbols.kernel(id).map_or_else(
        || rocwasm_core::unknown_kernel_name(id),
        |k| k.display_name(),
    )
}

/// Every stats table of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsReport {
    /// Per domain, the rows of its `*_stats.csv`, busiest first.
    pub tables: BTreeMap<StatsDomain, Vec<StatRow>>,
    /// `domain_stats.csv`: one row per buffer-tracing kind seen.
    pub domains: Vec<StatRow>,
}

impl StatsReport {
    /// The rows of one domain (empty when it saw nothing).
    pub fn table(&self, domain: StatsDomain) -> &[StatRow] {
        self.tables.get(&domain).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every file this report writes: `[<name>_]<domain>_stats.csv` for each
    /// non-empty domain, then `domain_stats.csv`, with their rows.
    pub fn files(&self, dir: &Path, name: Option<&str>) -> Vec<(PathBuf, &[StatRow])> {
        let mut files = Vec::new();
        for domain in StatsDomain::ALL {
            let rows = self.table(domain);
            if !rows.is_empty() {
                let file = format!("{}.csv", domain.file_stem());
                files.push((output_path(dir, name, &file), rows));
            }
        }
        if !self.domains.is_empty() {
            files.push((
                output_path(dir, name, "domain_stats.csv"),
                &self.domains[..],
            ));
        }
        files
    }

    /// Writes every file of [`StatsReport::files`]; returns the files written.
    pub fn write_csv(&self, dir: &Path, name: Option<&str>) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        for (path, rows) in self.files(dir, name) {
            write_stats_file(&path, rows)?;
            written.push(path);
        }
        Ok(written)
    }

    /// The terminal summary: one table per domain, the `top` busiest rows
    /// each, in the files' number format.
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
                let mut cells = r.cells();
                cells[0] = truncate(&r.name, 60);
                t.add_row(cells);
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

/// Writes one stats file (creating its directory).
pub(crate) fn write_stats_file(path: &Path, rows: &[StatRow]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, to_csv(rows)).with_context(|| format!("writing {}", path.display()))
}

/// An API operation's name; a marker's message for
/// `MARKER_CORE_RANGE_API` (see [`crate::SinkContext::op_name`]).
fn op_name(symbols: &SymbolTable, names: &OperationNames, kind: u32, op: u32) -> String {
    if kind == BufferTracingKind::MarkerCoreRangeApi.raw() {
        if let Some(message) = symbols.marker(op) {
            return message.to_string();
        }
    }
    names.name(kind, op).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::KernelDispatch;

    #[test]
    fn domain_rows_are_the_merge_of_their_tables_and_files_use_the_shared_format() {
        let symbols = SymbolTable::new();
        let names = OperationNames::new();
        let mut batch = Batch::default();
        for (id, d) in [
            (1u64, 2u64),
            (1, 4),
            (2, 4),
            (2, 4),
            (3, 5),
            (3, 5),
            (3, 7),
            (4, 9),
        ] {
            batch.kernel_dispatches.push(KernelDispatch {
                kernel_id: id,
                start: 100,
                end: 100 + d,
                ..Default::default()
            });
        }
        let mut acc = StatsAccumulator::new();
        acc.add_batch(&batch);
        let report = acc.report(&symbols, &names);
        assert_eq!(report.table(StatsDomain::Kernel).len(), 4);
        let [kernels] = &report.domains[..] else {
            panic!("one domain: {:?}", report.domains);
        };
        assert_eq!((kernels.calls, kernels.total_ns), (8, 40));
        assert_eq!((kernels.min_ns, kernels.max_ns), (2, 9));
        // Sample variance of that classic set is 32/7.
        assert_eq!(kernels.stddev, (32.0f64 / 7.0).sqrt());

        let dir = tempfile::tempdir().unwrap();
        let files = report.write_csv(dir.path(), Some("run")).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap()).collect();
        assert_eq!(names, ["run_kernel_stats.csv", "run_domain_stats.csv"]);
        let text = std::fs::read_to_string(&files[1]).unwrap();
        assert_eq!(text, rocwasm_stats::to_csv(&report.domains));
        assert!(
            text.ends_with("\n\"KERNEL_DISPATCH\",8,40,5.000000,100.00,2,9,2.138090\n"),
            "{text}"
        );
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
