//! End to end: many kernel dispatches on the simulated runtime under
//! `rocwasm run` with the default chain (`examples/chains/default.toml`:
//! its four plugins and its outputs), against the same program untraced;
//! and the peak resident memory the profiler adds to the application.
//!
//! Two more traced runs bound the first from below: the same chain
//! writing its outputs during the run (`--write-during-run`) instead of
//! after it, and kernel tracing alone (`--kernel-trace`: no chain, one CSV
//! file), the cost of timing every dispatch on the simulated runtime that
//! any configuration pays.
//!
//! The program is `multi_kernel --dispatches N` (N small kernels back to
//! back on one stream, each 4 µs on the simulated GPU, whose clock follows
//! the host's: the untraced run takes at least N × 4 µs). It prints its own
//! peak resident memory (`VmHWM`), so the memory row is the traced
//! program's peak minus the untraced one's: the interception, the engine's
//! buffers and, in the application's process, the plugins and writers.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{ensure, Context, Result};

use super::parse;
use super::table::{median, Quantity, Row, Target};
use crate::util::root;

/// What the rows need from the bench run (passed in: this module sits
/// below the bench driver).
pub(super) struct Tools<'a> {
    /// The `rocwasm` CLI of the bench build.
    pub rocwasm: &'a Path,
    /// The simulated runtime's libraries, for both runs.
    pub sim_lib: &'a Path,
    /// Kernel dispatches of one run.
    pub dispatches: u64,
    /// Runs of each kind (the median is kept).
    pub runs: usize,
    /// Runs a command to completion, its stdout (the driver's `output`).
    pub run: &'a dyn Fn(&mut Command) -> Result<String>,
}

/// The row names, for the driver's "not measured" fallback too.
pub(super) fn figures(dispatches: u64) -> [String; 4] {
    let n = super::table::count(dispatches);
    [
        format!("end-to-end, {n} dispatches: default chain vs untraced"),
        format!("end-to-end, {n} dispatches: default chain writing during the run vs untraced"),
        format!("end-to-end, {n} dispatches: kernel tracing alone (--kernel-trace) vs untraced"),
        "peak memory added to the application (VmHWM)".to_string(),
    ]
}

/// The end-to-end and the memory rows.
pub(super) fn rows(tools: &Tools<'_>, work: &Path) -> Vec<Row> {
    let [wall, during, alone, memory] = figures(tools.dispatches);
    match measure(tools, &work.join("e2e")) {
        Ok(m) => vec![
            Row::measured(
                wall,
                Quantity::Ms(m.traced_ms[Traced::Default as usize]),
                Some(Quantity::Ms(m.untraced_ms)),
            )
            .target(Target::MaxRatio(1.5)),
            Row::measured(
                during,
                Quantity::Ms(m.traced_ms[Traced::DuringRun as usize]),
                Some(Quantity::Ms(m.untraced_ms)),
            ),
            Row::measured(
                alone,
                Quantity::Ms(m.traced_ms[Traced::KernelTraceOnly as usize]),
                Some(Quantity::Ms(m.untraced_ms)),
            ),
            Row::measured(
                memory,
                Quantity::Bytes(m.added_bytes),
                Some(Quantity::Bytes(m.untraced_bytes)),
            ),
        ],
        Err(e) => {
            let why = format!("{e:#}");
            vec![
                Row::not_measured(wall, why.clone()).target(Target::MaxRatio(1.5)),
                Row::not_measured(during, why.clone()),
                Row::not_measured(alone, why.clone()),
                Row::not_measured(memory, why),
            ]
        }
    }
}

/// The traced runs, in the order they are timed.
#[derive(Clone, Copy)]
enum Traced {
    /// The default chain, outputs written once the application ended.
    Default,
    /// The default chain with `--write-during-run`.
    DuringRun,
    /// `--kernel-trace` alone.
    KernelTraceOnly,
}

impl Traced {
    const ALL: [Traced; 3] = [Traced::Default, Traced::DuringRun, Traced::KernelTraceOnly];
}

struct Measured {
    /// Median wall time of each [`Traced`] run.
    traced_ms: [f64; 3],
    untraced_ms: f64,
    added_bytes: f64,
    untraced_bytes: f64,
}

fn measure(tools: &Tools<'_>, dir: &Path) -> Result<Measured> {
    let root = root();
    let app = root.join("target/sim/bin/multi_kernel");
    ensure!(app.is_file(), "{} is missing", app.display());
    let chain = root.join("examples/chains/default.toml");
    let n = tools.dispatches.to_string();
    let mut traced: [Vec<f64>; 3] = Default::default();
    let mut untraced = Vec::new();
    let (mut traced_kb, mut untraced_kb) = (Vec::new(), Vec::new());
    for i in 0..tools.runs {
        let started = Instant::now();
        let out = (tools.run)(
            Command::new(&app)
                .args(["--dispatches", &n])
                .env("LD_LIBRARY_PATH", tools.sim_lib),
        )?;
        untraced.push(started.elapsed().as_secs_f64() * 1e3);
        untraced_kb.push(peak_kb(&out, tools.dispatches)?);

        for kind in Traced::ALL {
            let out_dir = dir.join(format!("out-{i}"));
            let mut cmd = Command::new(tools.rocwasm);
            cmd.args(["run", "--sim"]);
            match kind {
                Traced::Default => cmd.arg("-c").arg(&chain),
                Traced::DuringRun => cmd.arg("-c").arg(&chain).arg("--write-during-run"),
                Traced::KernelTraceOnly => cmd.arg("--kernel-trace"),
            };
            cmd.arg("-d")
                .arg(&out_dir)
                .arg("--")
                .arg(&app)
                .args(["--dispatches", &n])
                .env("ROCWASM_PLUGIN_PATH", root.join("target/plugins"))
                .env("ROCWASM_SIM_LIB", tools.sim_lib);
            let started = Instant::now();
            let out = (tools.run)(&mut cmd)?;
            traced[kind as usize].push(started.elapsed().as_secs_f64() * 1e3);
            if let Traced::Default = kind {
                traced_kb.push(peak_kb(&out, tools.dispatches)?);
            }
            // The traced run really traced every dispatch.
            let rows = std::fs::read_to_string(out_dir.join("kernel_trace.csv"))
                .with_context(|| {
                    format!(
                        "the traced run wrote no {}/kernel_trace.csv",
                        out_dir.display()
                    )
                })?
                .lines()
                .skip(1)
                .count() as u64;
            ensure!(
                rows == tools.dispatches,
                "the traced run's kernel_trace.csv has {rows} rows, not {}",
                tools.dispatches
            );
            let _ = std::fs::remove_dir_all(&out_dir);
        }
    }
    let m = |v: &[f64]| median(v).context("no run");
    let (traced_kb, untraced_kb) = (m(&traced_kb)?, m(&untraced_kb)?);
    Ok(Measured {
        traced_ms: [m(&traced[0])?, m(&traced[1])?, m(&traced[2])?],
        untraced_ms: m(&untraced)?,
        added_bytes: (traced_kb - untraced_kb).max(0.0) * 1024.0,
        untraced_bytes: untraced_kb * 1024.0,
    })
}

/// The program's `PEAK rss_kb=` (checking its `COUNTS kernels=` first).
fn peak_kb(stdout: &str, dispatches: u64) -> Result<f64> {
    let kernels = parse::field(stdout, "COUNTS", "kernels")?;
    ensure!(
        kernels == dispatches as f64,
        "the program launched {kernels} kernels, not {dispatches}"
    );
    parse::field(stdout, "PEAK", "rss_kb")
}
