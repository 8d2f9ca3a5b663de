//! A job's replay on Dask (`rocwasm.dask`, the Python package) against
//! one process (`rocwasm replay` of the same files): records per second of
//! a real `dask.distributed.LocalCluster` with 2 worker processes on this
//! machine, and the fixed cost of one task.
//!
//! Each rank is a copy of one synthetic `kernel_trace.csv`
//! (`trace::kernel_trace`); the chain is `kernel-stats`, which merges.
//! The wheel is built by maturin from this bench's build profile and
//! installed into a scratch directory. The cluster's start is not timed
//! (a site's cluster is already up); the single process's start is (it is
//! what a user waits for). The per-task figure is the wall time of a job
//! of one-dispatch ranks over its task count (parts, merges and the root),
//! the cluster's two workers in parallel.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use super::sizes::Build;
use super::table::{count, median, Quantity, Row, Target};
use super::trace;

/// What the rows need from the bench run.
pub(super) struct Tools<'a> {
    /// The `rocwasm` CLI of the bench build.
    pub rocwasm: &'a Path,
    /// The profile the wheel is built with.
    pub build: Build,
    /// Ranks of the job, dispatches per rank, timed runs.
    pub ranks: u64,
    pub per_rank: u64,
    pub runs: usize,
    /// Runs a command to completion, its stdout.
    pub run: &'a dyn Fn(&mut Command) -> Result<String>,
}

const CHAIN: &str = "version = 1\n\n[[stage]]\nname = \"kernel-stats\"\nplugin = \"kernel-stats\"\ndomains = [\"kernel_dispatch\"]\noutput = true\n";

/// Times `rocwasm.dask.analyse` on a LocalCluster: prints one line of
/// seconds per job argument, each the median of `runs`.
const SCRIPT: &str = r#"
import statistics, sys, time
from dask.distributed import Client, LocalCluster
import rocwasm.dask
chain, runs, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                  host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
    rocwasm.dask.analyse(jobs[0], chain, client=client)  # warm: imports, compiled plugins
    for job in jobs:
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            r = rocwasm.dask.analyse(job, chain, client=client)
            times.append(time.perf_counter() - t)
            assert not r.failures and not r.lost, (r.failures, r.lost)
        print(statistics.median(times))
"#;

pub(super) fn rows(tools: &Tools<'_>, work: &Path) -> Vec<Row> {
    let figure = format!(
        "Dask LocalCluster, 2 worker processes, {} ranks × {} dispatches: records/s vs one process (aim 1.7×: cost ≤ 0.59×)",
        tools.ranks,
        count(tools.per_rank)
    );
    let per_task = format!(
        "Dask: wall time per task ({} one-dispatch ranks, 2 workers)",
        tools.ranks
    );
    match measure(tools, &work.join("dask")) {
        Ok((dask, one, task_ms)) => vec![
            Row::measured(figure, Quantity::PerSec(dask), Some(Quantity::PerSec(one)))
                .target(Target::MaxRatio(0.59)),
            Row::measured(per_task, Quantity::Ms(task_ms), None),
        ],
        Err(e) => vec![
            Row::not_measured(figure, format!("{e:#}")),
            Row::not_measured(per_task, format!("{e:#}")),
        ],
    }
}

/// A job of `ranks` copies of a trace of `per_rank` dispatches.
fn job(dir: &Path, ranks: u64, per_rank: u64) -> Result<std::path::PathBuf> {
    let rank = trace::kernel_trace(&dir.join("rank"), per_rank)?;
    let job = dir.join("job");
    for r in 0..ranks {
        let to = job.join(r.to_string());
        std::fs::create_dir_all(&to)?;
        std::fs::copy(rank.join("kernel_trace.csv"), to.join("kernel_trace.csv"))?;
    }
    Ok(job)
}

/// (records/s on Dask, records/s of one process, ms per task).
fn measure(tools: &Tools<'_>, dir: &Path) -> Result<(f64, f64, f64)> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let root = crate::util::root();
    let site = dir.join("site");
    let wheels = dir.join("wheels");
    let mut maturin = Command::new("python3");
    maturin
        .args(["-m", "maturin", "build", "-q", "-o"])
        .arg(&wheels)
        .arg("-m")
        .arg(root.join("host/launcher/python/Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target"));
    match tools.build {
        Build::Release => maturin.arg("--release"),
        Build::Debug => maturin.args(["--profile", "dev"]),
    };
    (tools.run)(&mut maturin).context("building the wheel")?;
    let wheel = std::fs::read_dir(&wheels)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .context("maturin wrote no wheel")?;
    (tools.run)(
        Command::new("python3")
            .args(["-m", "pip", "install", "-q", "--no-deps", "--target"])
            .arg(&site)
            .arg(&wheel),
    )
    .context("installing the wheel")?;

    let chain = dir.join("chain.toml");
    std::fs::write(&chain, CHAIN)?;
    let big = job(&dir.join("big"), tools.ranks, tools.per_rank)?;
    let tiny = job(&dir.join("tiny"), tools.ranks, 1)?;
    let plugins = root.join("target/plugins");

    let mut one = Vec::new();
    for i in 0..tools.runs {
        let started = Instant::now();
        (tools.run)(
            Command::new(tools.rocwasm)
                .arg("replay")
                .arg(&big)
                .arg("-c")
                .arg(&chain)
                .arg("-d")
                .arg(dir.join(format!("one-{i}")))
                .env("ROCWASM_PLUGIN_PATH", &plugins),
        )?;
        one.push(started.elapsed().as_secs_f64());
    }
    let out = (tools.run)(
        Command::new("python3")
            .arg("-c")
            .arg(SCRIPT)
            .arg(&chain)
            .arg(tools.runs.to_string())
            .arg(&big)
            .arg(&tiny)
            .env("PYTHONPATH", &site)
            .env("ROCWASM_PLUGIN_PATH", &plugins),
    )
    .context("timing rocwasm.dask")?;
    let seconds: Vec<f64> = out.lines().filter_map(|l| l.trim().parse().ok()).collect();
    let [dask, tiny_s] = seconds[..] else {
        anyhow::bail!("the Dask script printed {out:?}");
    };
    let records = (tools.ranks * tools.per_rank) as f64;
    let one = median(&one).context("no run")?;
    // Tasks of the tiny job: one part per rank, the merges of the tree
    // (`split_every` 8), the root.
    let mut tasks = tools.ranks;
    let mut layer = tools.ranks;
    while layer > 8 {
        layer = layer.div_ceil(8);
        tasks += layer;
    }
    tasks += 1;
    let _ = std::fs::remove_dir_all(dir);
    Ok((records / dask, records / one, tiny_s * 1e3 / tasks as f64))
}
