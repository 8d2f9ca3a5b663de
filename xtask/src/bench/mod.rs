//! `cargo xtask bench [--quick] [--debug-build]`: the project's measurements
//! in one table.
//!
//! Builds what the benches need (the Wasm plugins, the simulated runtime,
//! and, in one `cargo build --release` into `target/release`, the tool
//! library and every bench binary), runs the existing benches and reads
//! their output back, and prints the machine, then one Markdown table:
//! figure | our value | reference measured in the same run | ratio | target.
//!
//! `--debug-build` measures the test build instead (`target/debug`, built
//! with `cargo xtask test`'s selection, so only the bench binaries compile):
//! the figures are a debug build's and the table says so; CI runs `--quick
//! --debug-build` to keep every row working without a second compile of
//! the workspace.
//!
//! | rows | measured by |
//! |---|---|
//! | HIP call at the maximum call rate | `host/process/intercept/bench/overhead.c` on the simulated runtime, run here as `overhead.sh` runs it |
//! | producer cost per record | `cargo bench -p rocwasm-core --bench producer` |
//! | plugin delivery | `cargo bench -p rocwasm-plugin-host --bench deliver`, against `-p rocwasm-formats --bench native_stats` |
//! | plugin load | `cargo bench -p rocwasm-plugin-host --bench load` |
//! | output writers | `cargo bench -p rocwasm-formats --bench writers` |
//! | replay ingest | `cargo bench -p rocwasm-formats --bench ingest` |
//! | plugin kit, per language | the kit's sample in Rust, C, Python, JS: `rocwasm plugin build`, the `load` bench, `rocwasm plugin test` (see `kit`) |
//!
//! A row whose bench fails, or that no bench measures yet, prints
//! `not measured: <reason>`. `--quick` runs every row with small sizes (a
//! check that nothing rotted, figures rougher). Timings never decide
//! success: the command fails when it cannot build, and, with
//! `--all-rows` (CI), when a row could not be measured.

mod artifacts;
mod command;
mod dask;
mod delivery;
mod e2e;
mod hip;
mod ingest;
mod kit;
mod load;
mod parse;
mod producer;
mod ranks;
mod report;
mod sizes;
mod table;
mod trace;
mod writers;

use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::util::root;
use command::{output, why};
pub use sizes::Build;
use sizes::{FULL, QUICK};
use table::Row;

/// Which groups of rows a run measures.
#[derive(Clone, Copy)]
pub struct Groups<'a> {
    /// Only the groups whose name contains this text.
    pub only: Option<&'a str>,
    /// Not the groups whose name contains any of these.
    pub skip: &'a [String],
}

impl Groups<'_> {
    fn wants(&self, name: &str) -> bool {
        self.only.is_none_or(|o| name.contains(o))
            && !self.skip.iter().any(|s| name.contains(s.as_str()))
    }
}

/// Runs every bench and prints the table.
pub fn run(quick: bool, groups: Groups<'_>, build: Build, all_rows: bool) -> Result<()> {
    let started = Instant::now();
    let sizes = if quick { &QUICK } else { &FULL };
    // What the rows run besides our own code (gcc and the ROCm headers for
    // overhead.c, sqlite3, the kit's toolchains): installed as the tests
    // install them, so a clean checkout measures every row.
    crate::setup::ensure_packages()?;
    // The plugins and the simulated runtime only feed some rows: when they
    // cannot be built, those rows say so and the others are still measured.
    if let Err(e) = crate::plugins::build(true) {
        eprintln!(
            "bench: building the plugins failed ({}); using target/plugins as it is",
            why(&e)
        );
    }
    if let Err(e) = crate::sim::build() {
        eprintln!(
            "bench: building the simulated runtime failed ({}); using target/sim as it is",
            why(&e)
        );
    }
    let built = artifacts::build(build)?;
    eprintln!("bench: built in {:.0} s", started.elapsed().as_secs_f64());
    let measuring = Instant::now();
    let work = root()
        .join("target/tmp")
        .join(format!("bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;

    let mut rows = Vec::new();
    rows.extend(step(groups, "HIP call overhead", || {
        hip::rows(&built, sizes, &work)
    }));
    rows.extend(step(groups, "producer", || producer::rows(&built)));
    rows.extend(producer::floor_row(&rows));
    rows.extend(step(groups, "plugin delivery", || delivery::rows(&built)));
    rows.extend(step(groups, "plugin delivery floors", || {
        delivery::floor_rows(&built)
    }));
    rows.extend(step(groups, "plugin load", || load::rows(&built, sizes)));
    rows.extend(step(groups, "output writers", || {
        writers::rows(&built, sizes)
    }));
    rows.extend(step(groups, "replay ingest", || {
        ingest::rows(&built, sizes)
    }));
    rows.extend(step(groups, "plugin kit, per language", || {
        match built.bench("load") {
            Ok(load) => kit::rows(
                &kit::Tools {
                    rocwasm: &built.rocwasm,
                    load,
                    records: sizes.kit_records,
                    load_runs: sizes.load_runs,
                    run: &output,
                },
                &work,
            ),
            Err(e) => vec![Row::not_measured("kit sample, every language", why(&e))],
        }
    }));
    rows.extend(step(groups, "replay over many ranks", || {
        let (ranks, per_rank, runs) = sizes.ranks;
        ranks::rows(
            &ranks::Tools {
                rocwasm: &built.rocwasm,
                ranks,
                per_rank,
                runs,
                run: &output,
            },
            &work,
        )
    }));
    rows.extend(step(groups, "Dask", || {
        let (ranks, per_rank, runs) = sizes.dask;
        dask::rows(
            &dask::Tools {
                rocwasm: &built.rocwasm,
                build,
                ranks,
                per_rank,
                runs,
                run: &output,
            },
            &work,
        )
    }));
    rows.extend(step(groups, "end-to-end", || {
        let (dispatches, runs) = sizes.e2e;
        e2e::rows(
            &e2e::Tools {
                rocwasm: &built.rocwasm,
                sim_lib: &built.sim_lib,
                dispatches,
                runs,
                run: &output,
            },
            &work,
        )
    }));
    let _ = std::fs::remove_dir_all(&work);

    println!(
        "cargo xtask bench{}{}{}{} — {}",
        if quick { " --quick" } else { "" },
        if build == Build::Debug {
            " --debug-build"
        } else {
            ""
        },
        groups
            .only
            .map(|o| format!(" --only {o}"))
            .unwrap_or_default(),
        groups
            .skip
            .iter()
            .map(|s| format!(" --skip {s:?}"))
            .collect::<String>(),
        report::revision()
    );
    println!("{}", report::machine());
    if build == Build::Debug {
        println!(
            "DEBUG BUILD: the workspace's own code is unoptimised here; these figures check \
             that every row runs and are not the project's figures (run without --debug-build)."
        );
    }
    println!();
    print!("{}", table::render(&rows));
    println!();
    print!("{}", report::LEGEND);
    println!(
        "ratio: our time per call or record over the reference's (1.00× = as fast). \
         Measured in {:.0} s (build {:.0} s before).",
        measuring.elapsed().as_secs_f64(),
        (measuring - started).as_secs_f64()
    );
    let missing: Vec<&str> = rows
        .iter()
        .filter(|r| r.value.is_err())
        .map(|r| r.figure.as_str())
        .collect();
    if all_rows && !missing.is_empty() {
        bail!(
            "{} row(s) could not be measured (--all-rows): {}",
            missing.len(),
            missing.join("; ")
        );
    }
    Ok(())
}

/// Runs one group of rows, with progress on stderr; none when `groups`
/// leaves it out.
fn step(groups: Groups<'_>, name: &str, f: impl FnOnce() -> Vec<Row>) -> Vec<Row> {
    if !groups.wants(name) {
        return Vec::new();
    }
    eprintln!("bench: {name} …");
    let t = Instant::now();
    let rows = f();
    eprintln!("bench: {name} done in {:.1} s", t.elapsed().as_secs_f64());
    rows
}
