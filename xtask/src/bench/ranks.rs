//! Replay of many processes at once (`rocwasm replay DIR` over an MPI
//! job's `out/%rank%` tree) against one process holding the same records:
//! what reading the ranks in parallel, renumbering their ids and
//! delivering them through one chain costs or gains.
//!
//! Each rank is a copy of one synthetic rocprofv3 `kernel_trace.csv`
//! (`trace::kernel_trace`); the single process holds ranks × records
//! dispatches. Both are replayed with `--stats` (the host's statistics
//! over every record) into a fresh directory; the figure is records per
//! second of wall time, the median of a few runs, the CLI's start-up
//! included.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use super::table::{median, Quantity, Row};
use super::trace;

/// What the rows need from the bench run (passed in: this module sits
/// below the bench driver).
pub(super) struct Tools<'a> {
    /// The `rocwasm` CLI of the bench build.
    pub rocwasm: &'a Path,
    /// Processes of the job.
    pub ranks: u64,
    /// Dispatches per process.
    pub per_rank: u64,
    /// Timed replays of each kind (the median is kept).
    pub runs: usize,
    /// Runs a command to completion, its stdout (the driver's `output`).
    pub run: &'a dyn Fn(&mut Command) -> Result<String>,
}

/// The figure's name.
pub(super) fn figure(tools: &Tools<'_>) -> String {
    format!(
        "replay, {} ranks × {} dispatches: records/s vs one process",
        tools.ranks,
        super::table::count(tools.per_rank)
    )
}

/// The row: records per second over the ranks, against one process.
pub(super) fn rows(tools: &Tools<'_>, work: &Path) -> Vec<Row> {
    let figure = figure(tools);
    match measure(tools, &work.join("ranks")) {
        Ok((many, one)) => vec![Row::measured(
            figure,
            Quantity::PerSec(many),
            Some(Quantity::PerSec(one)),
        )],
        Err(e) => vec![Row::not_measured(figure, format!("{e:#}"))],
    }
}

/// (records/s over the ranks, records/s of one process).
fn measure(tools: &Tools<'_>, dir: &Path) -> Result<(f64, f64)> {
    let _ = std::fs::remove_dir_all(dir);
    let job = dir.join("job");
    let rank_trace = trace::kernel_trace(&dir.join("rank"), tools.per_rank)?;
    for r in 0..tools.ranks {
        let to = job.join(r.to_string());
        std::fs::create_dir_all(&to).with_context(|| format!("cannot create {}", to.display()))?;
        std::fs::copy(
            rank_trace.join("kernel_trace.csv"),
            to.join("kernel_trace.csv"),
        )
        .with_context(|| format!("cannot copy the rank trace into {}", to.display()))?;
    }
    let single = trace::kernel_trace(&dir.join("one"), tools.ranks * tools.per_rank)?;
    let records = (tools.ranks * tools.per_rank) as f64;
    let mut many = Vec::new();
    let mut one = Vec::new();
    for i in 0..tools.runs {
        many.push(records / replay(tools, &job, &dir.join(format!("out-many-{i}")))?);
        one.push(records / replay(tools, &single, &dir.join(format!("out-one-{i}")))?);
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok((
        median(&many).context("no run")?,
        median(&one).context("no run")?,
    ))
}

/// Seconds of wall time of `rocwasm replay INPUT --stats -d OUT`.
fn replay(tools: &Tools<'_>, input: &Path, out: &Path) -> Result<f64> {
    let started = Instant::now();
    (tools.run)(
        Command::new(tools.rocwasm)
            .arg("replay")
            .arg(input)
            .arg("--stats")
            .arg("-d")
            .arg(out),
    )?;
    Ok(started.elapsed().as_secs_f64())
}
