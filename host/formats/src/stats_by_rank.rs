//! Statistics per process of a replay of many (`--summary-by-rank`): each
//! process's [`StatsReport`] side by side, one table per domain with a
//! `Rank` column first.
//!
//! The file `<domain>_stats_by_rank.csv` has the columns of the domain's
//! `<domain>_stats.csv` after `Rank` (the process's rank when its
//! recording names one, e.g. `3`, else its path), in the same number
//! format; each process's rows are busiest first and their `Percentage`
//! is of that process's total.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use comfy_table::{presets, Table};
use rocwasm_stats::{to_csv, COLUMNS};

use crate::paths::output_path;
use crate::stats::{StatsDomain, StatsReport};

/// One process's statistics, under the name its rows carry.
pub type Ranked<'a> = (&'a str, &'a StatsReport);

/// The terminal tables: per domain, the `top` busiest rows of each process.
pub fn render(reports: &[Ranked<'_>], top: usize) -> String {
    let mut out = String::new();
    for domain in StatsDomain::ALL {
        if reports.iter().all(|(_, r)| r.table(domain).is_empty()) {
            continue;
        }
        let mut t = Table::new();
        t.load_preset(presets::UTF8_FULL_CONDENSED);
        t.set_header(std::iter::once("Rank").chain(COLUMNS));
        let mut more = 0;
        for (rank, report) in reports {
            let rows = report.table(domain);
            for r in rows.iter().take(top) {
                t.add_row(std::iter::once(rank.to_string()).chain(r.cells()));
            }
            more += rows.len().saturating_sub(top);
        }
        out.push_str(&format!("{} by rank\n{t}\n", domain.title()));
        if more > 0 {
            out.push_str(&format!("… and {more} more row(s) (all in the files)\n"));
        }
    }
    out
}

/// Writes `[<name>_]<domain>_stats_by_rank.csv` for each domain some
/// process saw; returns the files written.
pub fn write_csv(dir: &Path, name: Option<&str>, reports: &[Ranked<'_>]) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for domain in StatsDomain::ALL {
        if reports.iter().all(|(_, r)| r.table(domain).is_empty()) {
            continue;
        }
        let mut text = String::from("\"Rank\",");
        for (i, (rank, report)) in reports.iter().enumerate() {
            let csv = to_csv(report.table(domain));
            let mut lines = csv.lines();
            let header = lines.next().unwrap_or_default();
            if i == 0 {
                text.push_str(header);
                text.push('\n');
            }
            for line in lines {
                text.push('"');
                text.push_str(&rank.replace('"', "\"\""));
                text.push_str("\",");
                text.push_str(line);
                text.push('\n');
            }
        }
        let path = output_path(dir, name, &format!("{}_by_rank.csv", domain.file_stem()));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
