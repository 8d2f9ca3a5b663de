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
//! | HIP call at the maximum call rate | `host/intercept/bench/overhead.c` on the simulated runtime, run here as `overhead.sh` runs it |
//! | producer cost per record | `cargo bench -p rocwasm-core --bench producer` |
//! | plugin delivery | `cargo bench -p rocwasm-plugin-host --bench deliver`, against `-p rocwasm-output --bench native_stats` |
//! | plugin load | `cargo bench -p rocwasm-plugin-host --bench load` |
//! | output writers | `cargo bench -p rocwasm-output --bench writers` |
//! | replay ingest | `cargo bench -p rocwasm-replay --bench ingest` |
//! | plugin kit, per language | the kit's sample in Rust, C, Python, JS: `rocwasm plugin build`, the `load` bench, `rocwasm plugin test` (see `kit`) |
//!
//! A row whose bench fails, or that no bench measures yet, prints
//! `not measured: <reason>`. `--quick` runs every row with small sizes (a
//! check that nothing rotted, figures rougher). Timings never decide
//! success: the command fails when it cannot build, and, with
//! `--all-rows` (CI), when a row could not be measured.

mod e2e;
mod kit;
mod parse;
mod ranks;
mod table;
mod trace;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};

use crate::util::root;
use table::{median, Quantity, Row, Target};

/// How each group of rows is measured, printed under the table.
const LEGEND: &str = "\
HIP call: host/intercept/bench/overhead.c on the simulated runtime (hipGetDevice; the runtime built
  optimised, target/sim/lib-release, as the end-to-end rows use it too). Max rate: one burst
  without pauses, median of runs, untraced and traced alternating. Bursts: 4000 calls, 1 ms pauses,
  traced call and the runtime's own alternating in one process. Default outputs: CSV, rocpd, Perfetto;
  1 MiB LOSSLESS buffer; the process journals its records and `rocwasm write-journal` writes the
  formats at its end (no rocwasm run), or rocwasm run --write-during-run writes them as the journal
  grows (the row says so). Run and exit: the whole process, 100 k calls, untraced vs traced with the
  journal handed to a launcher (the plan names the journal directory) or written at exit. Library:
  the file's size; start: /bin/true with it preloaded (no plan) vs not, median of 20. Default chain: rocwasm run --sim -c examples/chains/default.toml (its four
  plugins, its outputs, its 4 MiB buffer). Native tool: host/intercept/bench/native_tool.c loaded with
  ROCP_TOOL_LIBRARIES, buffering HIP_RUNTIME_API into a 1 MiB LOSSLESS buffer, no output of ours.
  CPU: the calling thread's CPU time per call.
producer: cargo bench -p rocwasm-core --bench producer (push, LOSSLESS, 64-byte records; CPU ns).
  Engine alone: Profiler::trace_api with one context buffering the domain (two clock reads, the id,
  the record's stores), no interposer; clock: clock::now, the time-stamp counter mapped onto
  CLOCK_BOOTTIME, of which a traced call reads two. Floor: what tracing adds to a paired HIP call
  against two clock reads plus one record pushed (1 thread, no delivery), from this run's rows.
delivery: cargo bench -p rocwasm-plugin-host --bench deliver (kernel-stats, 3 columns selected; median
  round) against cargo bench -p rocwasm-output --bench native_stats (the plugin's loop,
  IdSums::add_durations, compiled natively and called directly: no delivery path). Floors: cargo bench
  -p rocwasm-plugin-host --bench call_floor (an empty component, bump realloc, the plugin engine's
  configuration; 256 records in 3 of 64 u64 columns, passed as today's record of 64 lists, a record
  of 64 option lists, or the 3 lists alone).
plugin load: cargo bench -p rocwasm-plugin-host --bench load (PluginEngine::compile, fresh engine;
  warm: once the artifact has settled, as a later run finds it).
writers: cargo bench -p rocwasm-output --bench writers (a synthetic run through Outputs, one format;
  together: the three default formats in one Outputs, a thread per sink and batch; record journal:
  what a profiled process writes under rocwasm run, each batch appended to its journal file; size
  on disk: the bytes of the files each format wrote for that run, per million records; raw SQLite:
  the rocpd writer's own rows read back, inserted into a fresh database of the same schema with its
  pragmas, 64 rows a prepared statement, one transaction).
replay ingest: cargo bench -p rocwasm-replay --bench ingest.
end-to-end: multi_kernel --dispatches N (N 4 µs kernels on one stream) untraced, and under rocwasm run
  --sim -c examples/chains/default.toml (outputs written after the run, or with --write-during-run as
  the journal grows), and under rocwasm run --sim --kernel-trace (no chain, one CSV file); wall time,
  median of runs. Peak memory: the program's own VmHWM,
  traced minus untraced.
replay over many ranks: rocwasm replay --stats of an out/%rank% tree (one kernel_trace.csv per rank)
  against one kernel_trace.csv of all their records; wall time, CLI start-up included, median of runs.
kit sample: the same analysis (dispatches, total time) from `rocwasm plugin new --lang L`, built by
  `rocwasm plugin build`; load bench as above; per record: `rocwasm plugin test` on a synthetic
  kernel trace (wall: delivery and fini; instructions: wasmtime fuel).
";

/// How much each bench does.
struct Sizes {
    /// Untraced/traced pairs of the sustained HIP run.
    sustained_runs: usize,
    /// Calls of one sustained run.
    sustained_calls: u64,
    /// Calls of the short run timed from start to exit.
    exit_calls: u64,
    /// Burst pairs of the paired HIP measurement.
    paired_bursts: u32,
    /// Records of the replay ingest file.
    ingest_records: u64,
    /// Cold and warm plugin loads.
    load_runs: (u32, u32),
    /// Records through each writer, and runs (best of).
    writer_records: u64,
    writer_runs: u32,
    /// Dispatches of the kit samples' trace (`plugin test`).
    kit_records: u64,
    /// Processes and dispatches per process of the many-rank replay, and
    /// its timed runs.
    ranks: (u64, u64, usize),
    /// Dispatches of the end-to-end run, and runs of each kind.
    e2e: (u64, usize),
}

const QUICK: Sizes = Sizes {
    sustained_runs: 3,
    sustained_calls: 200_000,
    exit_calls: 100_000,
    paired_bursts: 51,
    ingest_records: 100_000,
    load_runs: (1, 5),
    writer_records: 200_000,
    writer_runs: 1,
    kit_records: 5_000,
    ranks: (8, 5_000, 1),
    e2e: (20_000, 1),
};

const FULL: Sizes = Sizes {
    sustained_runs: 7,
    sustained_calls: 200_000,
    exit_calls: 100_000,
    paired_bursts: 301,
    ingest_records: 1_000_000,
    load_runs: (3, 20),
    writer_records: 2_000_000,
    writer_runs: 3,
    kit_records: 200_000,
    ranks: (64, 50_000, 3),
    e2e: (1_000_000, 3),
};

/// The packages of the release build: the tool library and the benches.
const PACKAGES: [&str; 5] = [
    "rocwasm-intercept",
    "rocwasm-core",
    "rocwasm-plugin-host",
    "rocwasm-output",
    "rocwasm-replay",
];

/// The bench binaries the table reads, by name.
const BENCHES: [&str; 7] = [
    "producer",
    "deliver",
    "call_floor",
    "native_stats",
    "load",
    "writers",
    "ingest",
];

/// Delivery batch sizes.
const BATCHES: [u64; 3] = [256, 4096, 65536];

/// Which build the benches measure.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// `cargo build --release` of the benched packages: the figures.
    Release,
    /// The test build's profile and selection (`target/debug`): a check
    /// that every row runs, not figures.
    Debug,
}

/// Runs every bench and prints the table.
pub fn run(quick: bool, only: Option<&str>, build: Build, all_rows: bool) -> Result<()> {
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
    let built = build_benches(build)?;
    eprintln!("bench: built in {:.0} s", started.elapsed().as_secs_f64());
    let measuring = Instant::now();
    let work = root()
        .join("target/tmp")
        .join(format!("bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;

    let mut rows = Vec::new();
    rows.extend(step(only, "HIP call overhead", || {
        hip_rows(&built, sizes, &work)
    }));
    rows.extend(step(only, "producer", || producer_rows(&built)));
    rows.extend(floor_row(&rows));
    rows.extend(step(only, "plugin delivery", || delivery_rows(&built)));
    rows.extend(step(only, "plugin delivery floors", || floor_rows(&built)));
    rows.extend(step(only, "plugin load", || load_rows(&built, sizes)));
    rows.extend(step(only, "output writers", || writer_rows(&built, sizes)));
    rows.extend(step(only, "replay ingest", || ingest_rows(&built, sizes)));
    rows.extend(step(only, "plugin kit, per language", || {
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
    rows.extend(step(only, "replay over many ranks", || {
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
    rows.extend(step(only, "end-to-end", || {
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
        "cargo xtask bench{}{}{} — {}",
        if quick { " --quick" } else { "" },
        if build == Build::Debug {
            " --debug-build"
        } else {
            ""
        },
        only.map(|o| format!(" --only {o}")).unwrap_or_default(),
        revision()
    );
    println!("{}", machine());
    if build == Build::Debug {
        println!(
            "DEBUG BUILD: the workspace's own code is unoptimised here; these figures check \
             that every row runs and are not the project's figures (run without --debug-build)."
        );
    }
    println!();
    print!("{}", table::render(&rows));
    println!();
    print!("{LEGEND}");
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

/// Runs one group of rows, with progress on stderr; none when `only`
/// names another group.
fn step(only: Option<&str>, name: &str, f: impl FnOnce() -> Vec<Row>) -> Vec<Row> {
    if only.is_some_and(|o| !name.contains(o)) {
        return Vec::new();
    }
    eprintln!("bench: {name} …");
    let t = Instant::now();
    let rows = f();
    eprintln!("bench: {name} done in {:.1} s", t.elapsed().as_secs_f64());
    rows
}

/// The first line of an error chain, for a `not measured:` cell.
fn why(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(160).collect()
}

/// `figures` as not-measured rows when `measured` failed.
fn or_unmeasured(measured: Result<Vec<Row>>, figures: &[(&str, &[Target])]) -> Vec<Row> {
    measured.unwrap_or_else(|e| {
        let why = why(&e);
        eprintln!("bench: {why}");
        figures
            .iter()
            .map(|(f, targets)| {
                let mut r = Row::not_measured(*f, why.clone());
                r.targets = targets.to_vec();
                r
            })
            .collect()
    })
}

/// What the bench build made.
struct Built {
    /// Bench executables by bench name (`deliver`, `load`, …).
    benches: BTreeMap<String, PathBuf>,
    /// The tool library (`librocwasm_intercept.so`).
    intercept: PathBuf,
    /// The `rocwasm` CLI.
    rocwasm: PathBuf,
    /// The simulated runtime's libraries the HIP-call and end-to-end rows
    /// run on: optimised for [`Build::Release`] (`target/sim/lib-release`),
    /// the test build's for [`Build::Debug`] (`target/sim/lib`).
    sim_lib: PathBuf,
}

impl Built {
    fn bench(&self, name: &str) -> Result<&Path> {
        self.benches
            .get(name)
            .map(PathBuf::as_path)
            .with_context(|| format!("the bench build made no `{name}` bench"))
    }
}

/// One `cargo build` of the tool library, the CLI and every bench the
/// table reads: `--release` of just those packages into
/// `<root>/target/release`, or, for [`Build::Debug`], the test build's
/// selection plus the benches into `<root>/target/debug` (the same
/// selection resolves the same features, so nothing else recompiles).
fn build_benches(build: Build) -> Result<Built> {
    let root = root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--message-format=json-render-diagnostics"]);
    match build {
        Build::Release => {
            cmd.arg("--release")
                .args(PACKAGES.iter().flat_map(|p| ["-p", p]))
                .arg("--lib")
                .args(["-p", "rocwasm", "--bin", "rocwasm"]);
        }
        Build::Debug => {
            cmd.args(crate::util::TEST_BUILD);
        }
    }
    // By name: `--benches` would also build every library's unit tests as
    // benches.
    cmd.args(BENCHES.iter().flat_map(|b| ["--bench", b]))
        .arg("--target-dir")
        .arg(root.join("target"))
        .current_dir(&root)
        .stdout(Stdio::piped());
    eprintln!("+ {cmd:?}");
    let out = cmd.output().context("cannot start cargo")?;
    ensure!(
        out.status.success(),
        "the bench build failed ({}); see the compiler output above",
        out.status
    );
    let sim_lib = match build {
        Build::Release => crate::sim::build_release_libraries()
            .context("building the simulated runtime optimised")?,
        Build::Debug => root.join("target/sim/lib"),
    };
    let mut benches = BTreeMap::new();
    let mut intercept = None;
    let mut rocwasm = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let target = &msg["target"];
        let kinds = target["kind"].as_array().cloned().unwrap_or_default();
        // The debug selection also builds unit-test executables of the
        // same targets: never take one of those for the CLI.
        let test = msg["profile"]["test"].as_bool().unwrap_or(false);
        if kinds.iter().any(|k| k == "bin") && target["name"] == "rocwasm" && !test {
            rocwasm = msg["executable"].as_str().map(PathBuf::from);
        } else if kinds.iter().any(|k| k == "bench") {
            if let (Some(name), Some(exe)) = (target["name"].as_str(), msg["executable"].as_str()) {
                benches.insert(name.to_string(), PathBuf::from(exe));
            }
        } else if target["name"] == "rocwasm_intercept" {
            let so = msg["filenames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str())
                .find(|f| f.ends_with(".so"));
            intercept = so.map(PathBuf::from).or(intercept);
        }
    }
    Ok(Built {
        benches,
        intercept: intercept.context("the bench build made no librocwasm_intercept.so")?,
        rocwasm: rocwasm.context("the bench build made no rocwasm binary")?,
        sim_lib,
    })
}

/// Runs a program to completion and returns its stdout; its stderr is
/// shown when it fails.
fn output(cmd: &mut Command) -> Result<String> {
    output_and_errors(cmd).map(|(out, _)| out)
}

/// As [`output`], with the program's stderr too.
fn output_and_errors(cmd: &mut Command) -> Result<(String, String)> {
    let shown = format!("{cmd:?}");
    eprintln!("+ {shown}");
    let out = cmd
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start {shown}"))?;
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        bail!(
            "{} failed ({}): {}",
            cmd.get_program().to_string_lossy(),
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        );
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), err))
}

// ---------------------------------------------------------------------------
// 1. HIP calls on the simulated runtime.

const HIP_WALL_CSV: &str = "HIP call at max rate, wall: traced (CSV) vs untraced";
const HIP_WALL_DEFAULT: &str = "HIP call at max rate, wall: traced (default outputs) vs untraced";
const HIP_WALL_DURING: &str =
    "HIP call at max rate, wall: rocwasm run --write-during-run (default outputs) vs untraced";
const EXIT_LAUNCHER: &str =
    "application run and exit, wall: traced (default outputs, under rocwasm run) vs untraced";
const EXIT_ALONE: &str =
    "application run and exit, wall: traced without rocwasm run (outputs written at exit) vs untraced";
const LIB_SIZE: &str = "tool library size";
const LIB_LOAD: &str = "process start and exit, wall: tool library preloaded vs not";
const HIP_CPU_DEFAULT: &str = "HIP call at max rate, CPU: traced (default outputs) vs untraced";
const HIP_PAIRED: &str = "HIP call in bursts, CPU, paired: traced (CSV) vs untraced";
const HIP_WALL_CHAIN: &str = "HIP call at max rate, wall: default chain vs untraced";
const HIP_WALL_CHAIN_LAUNCHER: &str =
    "HIP call at max rate, wall: default chain placed in rocwasm (placement) vs untraced";
const HIP_PAIRED_NATIVE: &str =
    "HIP call in bursts, CPU, paired: native rocprofiler-sdk tool (buffered) vs untraced";

fn hip_rows(built: &Built, sizes: &Sizes, work: &Path) -> Vec<Row> {
    or_unmeasured(
        measure_hip(built, sizes, work),
        &[
            (HIP_WALL_CSV, &[]),
            (HIP_WALL_DEFAULT, &[]),
            (HIP_WALL_DURING, &[]),
            (HIP_CPU_DEFAULT, &[]),
            (HIP_PAIRED, &[]),
            (HIP_WALL_CHAIN, &[]),
            (HIP_WALL_CHAIN_LAUNCHER, &[]),
            (HIP_PAIRED_NATIVE, &[]),
            (EXIT_LAUNCHER, &[]),
            (EXIT_ALONE, &[]),
            (LIB_SIZE, &[Target::MaxBytes(40.0 * 1024.0 * 1024.0)]),
            (LIB_LOAD, &[]),
        ],
    )
}

/// What `host/intercept/bench/overhead.sh` does, with the figures kept:
/// `overhead.c` built against the simulated runtime, run without the tool
/// and preloaded with it, tracing HIP_RUNTIME_API.
fn measure_hip(built: &Built, sizes: &Sizes, work: &Path) -> Result<Vec<Row>> {
    let root = root();
    let sim = built.sim_lib.clone();
    let exe = work.join("overhead");
    crate::util::run(
        Command::new("gcc")
            .args(["-O2", "-D__HIP_PLATFORM_AMD__"])
            .arg(root.join("host/intercept/bench/overhead.c"))
            .arg(format!("-L{}", sim.display()))
            .args(["-lamdhip64", "-ldl", "-o"])
            .arg(&exe)
            .env_remove("LD_LIBRARY_PATH"),
    )
    .context("building host/intercept/bench/overhead.c (needs gcc and the ROCm HIP headers)")?;
    let out = work.join("out");
    let config = |name: &str, formats: &str, write: &str| -> Result<PathBuf> {
        let path = work.join(name);
        // A run plan (`rocwasm_plan::RunPlan`, version 3) as `rocwasm run`
        // writes it: no stages, the 1 MiB LOSSLESS buffer; the outputs
        // written at the end (`rocwasm run`'s default) or during the run.
        let json = format!(
            r#"{{"version":3,"output":{{"directory":"{}","formats":[{formats}],"write":"{write}","kinds":["HIP_RUNTIME_API"]}},"buffer":{{"size":1048576,"watermark":524288,"policy":"Lossless"}}}}"#,
            out.display()
        );
        std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    };
    let csv = config("csv.json", r#""csv""#, "at-end")?;
    let default = config("default.json", r#""csv","rocpd","pftrace""#, "at-end")?;
    let run = |config: Option<&Path>, args: &[String]| -> Result<String> {
        let mut cmd = Command::new(&exe);
        cmd.args(args).env("LD_LIBRARY_PATH", &sim);
        if let Some(config) = config {
            // Without `rocwasm run` the tool library has this `rocwasm`
            // write the outputs at the process's end.
            cmd.env("LD_PRELOAD", &built.intercept)
                .env("ROCWASM_RUN", config)
                .env("ROCWASM_BIN", &built.rocwasm);
        }
        let (stdout, errors) = output_and_errors(&mut cmd)?;
        if config.is_some() {
            // As overhead.sh checks: the traced run really traced.
            let calls: u64 = args[0].parse()?;
            let bursts: u64 = args[1].parse()?;
            let rows = hip_trace_rows(&out).unwrap_or(0);
            ensure!(
                rows > calls * bursts,
                "the traced run wrote {rows} HIP rows (expected > {}): tracing is not on ({})",
                calls * bursts,
                errors.lines().next().unwrap_or("the tool printed nothing")
            );
            std::fs::remove_dir_all(&out).ok();
        }
        Ok(stdout)
    };

    // The default chain with every stage placed in the launcher: the
    // measurement behind the default placement.
    let default_chain = root.join("examples/chains/default.toml");
    let in_launcher = work.join("default-in-rocwasm.toml");
    {
        let text = std::fs::read_to_string(&default_chain)
            .with_context(|| format!("cannot read {}", default_chain.display()))?;
        // Stock plugin names resolve through ROCWASM_PLUGIN_PATH (below).
        let placed = text.replace("[[stage]]\n", "[[stage]]\nplacement = \"rocwasm\"\n");
        std::fs::write(&in_launcher, placed)?;
    }
    // The same program under `rocwasm run FLAGS…`, checked to have traced
    // (the program's own line is the one of two numbers among the summary
    // tables a chain prints).
    let launched = |flags: &[&OsStr], args: &[String]| -> Result<String> {
        let stdout = output(
            Command::new(&built.rocwasm)
                .args(["run", "--sim"])
                .args(flags)
                .arg("-d")
                .arg(&out)
                .arg("--")
                .arg(&exe)
                .args(args)
                .env("ROCWASM_PLUGIN_PATH", root.join("target/plugins"))
                .env("ROCWASM_SIM_LIB", &sim),
        )?;
        let calls: u64 = args[0].parse()?;
        let rows = hip_trace_rows(&out).unwrap_or(0);
        ensure!(
            rows > calls,
            "`rocwasm run {flags:?}` wrote {rows} HIP rows (expected > {calls})"
        );
        std::fs::remove_dir_all(&out).ok();
        Ok(stdout)
    };
    // With the default chain (its four plugins and its outputs).
    let chain = |chain_file: &Path, args: &[String]| {
        launched(&["-c".as_ref(), chain_file.as_os_str()], args)
    };
    // With `--write-during-run`: the launcher writes the default outputs as
    // the journal grows.
    let during = |args: &[String]| {
        let flags = [
            "--hip-trace",
            "--write-during-run",
            "--output-format",
            "csv,rocpd,pftrace",
        ];
        launched(&flags.map(OsStr::new), args)
    };

    let sustained = [sizes.sustained_calls.to_string(), "1".into(), "0".into()];
    let (mut base, mut traced_csv, mut traced_default, mut traced_during, mut traced_chain) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut traced_chain_launcher = Vec::new();
    for _ in 0..sizes.sustained_runs {
        base.push(parse::overhead_burst(&run(None, &sustained)?)?);
        traced_csv.push(parse::overhead_burst(&run(Some(&csv), &sustained)?)?);
        traced_default.push(parse::overhead_burst(&run(Some(&default), &sustained)?)?);
        traced_during.push(parse::overhead_burst_among(&during(&sustained)?)?);
        traced_chain.push(parse::overhead_burst_among(&chain(
            &default_chain,
            &sustained,
        )?)?);
        traced_chain_launcher.push(parse::overhead_burst_among(&chain(
            &in_launcher,
            &sustained,
        )?)?);
    }
    let paired = [
        "4000".to_string(),
        sizes.paired_bursts.to_string(),
        "1000".into(),
        "paired".into(),
    ];
    let (direct, traced, _added) = parse::overhead_paired(&run(Some(&csv), &paired)?)?;

    // The same bursts traced by a native rocprofiler-sdk tool
    // (`host/intercept/bench/native_tool.c`: HIP_RUNTIME_API buffered into
    // the same 1 MiB LOSSLESS buffer) and no output of ours.
    let tool = work.join("libnative_bench_tool.so");
    crate::util::run(
        Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC"])
            .arg(root.join("host/intercept/bench/native_tool.c"))
            .arg(format!("-I{}", root.join("capi/include").display()))
            .arg("-o")
            .arg(&tool),
    )
    .context("building host/intercept/bench/native_tool.c")?;
    let native_plan = work.join("native.json");
    std::fs::write(
        &native_plan,
        r#"{"version":3,"output":{"directory":".","formats":[]},"buffer":{"size":1048576,"watermark":524288,"policy":"Lossless"}}"#,
    )?;
    let (native_out, native_err) = output_and_errors(
        Command::new(&exe)
            .args(&paired)
            .env("LD_LIBRARY_PATH", &sim)
            .env("LD_PRELOAD", &built.intercept)
            .env("ROCWASM_RUN", &native_plan)
            .env("ROCP_TOOL_LIBRARIES", &tool),
    )?;
    let native_records: u64 = native_err
        .lines()
        .find_map(|l| l.strip_prefix("native-bench-tool: records="))
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    ensure!(
        native_records >= 4000 * u64::from(sizes.paired_bursts),
        "the native tool received {native_records} HIP records: it did not trace ({})",
        native_err.lines().next().unwrap_or("nothing printed")
    );
    let (native_direct, native_traced, _) = parse::overhead_paired(&native_out)?;

    // A whole short run, start to exit: untraced; traced with the journal
    // handed to a launcher (the plan names the journal directory, as
    // `rocwasm run`'s does: the process writes no format); traced alone
    // (the process has `rocwasm write-journal` write the formats at its
    // end). The application's exit waits only in the last case.
    let short = [sizes.exit_calls.to_string(), "1".into(), "0".into()];
    let journal_dir = work.join("journal");
    let handed = work.join("handed.json");
    std::fs::write(
        &handed,
        format!(
            r#"{{"version":3,"output":{{"directory":"{}","formats":["csv","rocpd","pftrace"],"kinds":["HIP_RUNTIME_API"]}},"buffer":{{"size":1048576,"watermark":524288,"policy":"Lossless"}},"journal":"{}"}}"#,
            out.display(),
            journal_dir.display()
        ),
    )?;
    let timed = |config: Option<&Path>| -> Result<f64> {
        let mut cmd = Command::new(&exe);
        cmd.args(&short).env("LD_LIBRARY_PATH", &sim);
        if let Some(config) = config {
            cmd.env("LD_PRELOAD", &built.intercept)
                .env("ROCWASM_RUN", config)
                .env("ROCWASM_BIN", &built.rocwasm);
        }
        let t = Instant::now();
        output_and_errors(&mut cmd)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        std::fs::remove_dir_all(&out).ok();
        std::fs::remove_dir_all(&journal_dir).ok();
        Ok(ms)
    };
    let (mut exit_base, mut exit_handed, mut exit_alone) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..sizes.sustained_runs.max(3) {
        exit_base.push(timed(None)?);
        exit_handed.push(timed(Some(&handed))?);
        exit_alone.push(timed(Some(&default))?);
    }
    // Start-up with the library preloaded and no plan: what every process
    // of a job pays for loading it.
    let start = |preload: bool| -> Result<f64> {
        let mut cmd = Command::new("/bin/true");
        if preload {
            cmd.env("LD_PRELOAD", &built.intercept);
        }
        let t = Instant::now();
        output_and_errors(&mut cmd)?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    };
    let (mut start_base, mut start_preloaded) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        start_base.push(start(false)?);
        start_preloaded.push(start(true)?);
    }
    let lib_bytes = std::fs::metadata(&built.intercept)
        .with_context(|| format!("{}", built.intercept.display()))?
        .len() as f64;
    let ms = |v: &[f64]| Quantity::Ms(median(v).unwrap_or(0.0));

    let cpu = |v: &[(f64, f64)]| median(&v.iter().map(|x| x.0).collect::<Vec<_>>()).unwrap_or(0.0);
    let wall = |v: &[(f64, f64)]| median(&v.iter().map(|x| x.1).collect::<Vec<_>>()).unwrap_or(0.0);
    Ok(vec![
        Row::measured(
            HIP_WALL_CSV,
            Quantity::Ns(wall(&traced_csv)),
            Some(Quantity::Ns(wall(&base))),
        ),
        Row::measured(
            HIP_WALL_DEFAULT,
            Quantity::Ns(wall(&traced_default)),
            Some(Quantity::Ns(wall(&base))),
        ),
        Row::measured(
            HIP_WALL_DURING,
            Quantity::Ns(wall(&traced_during)),
            Some(Quantity::Ns(wall(&base))),
        ),
        Row::measured(
            HIP_CPU_DEFAULT,
            Quantity::Ns(cpu(&traced_default)),
            Some(Quantity::Ns(cpu(&base))),
        ),
        Row::measured(HIP_PAIRED, Quantity::Ns(traced), Some(Quantity::Ns(direct))),
        Row::measured(
            HIP_WALL_CHAIN,
            Quantity::Ns(wall(&traced_chain)),
            Some(Quantity::Ns(wall(&base))),
        ),
        Row::measured(
            HIP_WALL_CHAIN_LAUNCHER,
            Quantity::Ns(wall(&traced_chain_launcher)),
            Some(Quantity::Ns(wall(&base))),
        ),
        Row::measured(
            HIP_PAIRED_NATIVE,
            Quantity::Ns(native_traced),
            Some(Quantity::Ns(native_direct)),
        ),
        Row::measured(EXIT_LAUNCHER, ms(&exit_handed), Some(ms(&exit_base))),
        Row::measured(EXIT_ALONE, ms(&exit_alone), Some(ms(&exit_base))),
        Row::measured(LIB_SIZE, Quantity::Bytes(lib_bytes), None)
            .target(Target::MaxBytes(40.0 * 1024.0 * 1024.0)),
        Row::measured(LIB_LOAD, ms(&start_preloaded), Some(ms(&start_base))),
    ])
}

/// Data rows of the HIP API trace CSV under `out`.
fn hip_trace_rows(out: &Path) -> Result<u64> {
    let mut rows = 0;
    for entry in
        std::fs::read_dir(out).with_context(|| format!("no output in {}", out.display()))?
    {
        let path = entry?.path();
        if path.to_string_lossy().ends_with("hip_api_trace.csv") {
            let text = std::fs::read(&path)?;
            rows += text
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                .saturating_sub(1) as u64;
        }
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------
// 2. Producer cost per record.

const PRODUCER_1: &str = "producer per record, 1 thread: delivery running vs none";
const PRODUCER_8: &str = "producer per record, 8 threads vs 1 thread";
const ENGINE_CALL: &str =
    "traced call in the engine alone (trace_api, buffered, no interposer), CPU";
const CLOCK_READS: &str = "two clock reads (a traced call's) vs that traced call in the engine";

fn producer_rows(built: &Built) -> Vec<Row> {
    let measured = (|| {
        let exe = built.bench("producer")?;
        let mut cmd = Command::new(exe);
        cmd.args(["push LOSSLESS", "trace_api buffered LOSSLESS", "clock::now"])
            .arg("--bench")
            .env("ROCWASM_BENCH_CALLGRIND", "0");
        let out = output(&mut cmd)?;
        let alone = parse::producer_case(&out, "push LOSSLESS, 1 thread, no delivery")?;
        let one = parse::producer_case(&out, "push LOSSLESS, 1 thread")?;
        let eight = parse::producer_case(&out, "push LOSSLESS, 8 threads")?;
        // What a traced call costs without the interposer, and how much of
        // it the clock is: the floor under the per-call target.
        let call = parse::producer_case(&out, "trace_api buffered LOSSLESS")?;
        let clock = parse::producer_case(&out, "clock::now (reference; 2 per traced call)")?;
        Ok(vec![
            Row::measured(PRODUCER_1, Quantity::Ns(one.0), Some(Quantity::Ns(alone.0))),
            Row::measured(PRODUCER_8, Quantity::Ns(eight.0), Some(Quantity::Ns(one.0))),
            Row::measured(ENGINE_CALL, Quantity::Ns(call.0), None),
            Row::measured(
                CLOCK_READS,
                Quantity::Ns(2.0 * clock.0),
                Some(Quantity::Ns(call.0)),
            ),
        ])
    })();
    or_unmeasured(
        measured,
        &[
            (PRODUCER_1, &[]),
            (PRODUCER_8, &[]),
            (ENGINE_CALL, &[]),
            (CLOCK_READS, &[]),
        ],
    )
}

const HIP_FLOOR: &str = "HIP call in bursts, CPU, paired: added by tracing vs its floor \
     (two clock reads + one record store)";

/// Issue 32's per-call target, from two groups of the same run: what
/// tracing adds to a HIP call (the paired bursts, traced minus untraced)
/// against the floor under it, two reads of the clock (a call's start and
/// end) plus one record pushed into a buffer (the producer's one thread, no
/// delivery). `None` when neither group ran (`--only`).
fn floor_row(rows: &[Row]) -> Option<Row> {
    let get = |figure: &str| {
        rows.iter()
            .find(|r| r.figure == figure)
            .map(|r| r.value.clone())
    };
    let (paired, clock, push) = (get(HIP_PAIRED), get(CLOCK_READS), get(PRODUCER_1));
    if paired.is_none() && clock.is_none() {
        return None;
    }
    let row = match (paired, clock, push) {
        (
            Some(Ok((Quantity::Ns(traced), Some(Quantity::Ns(direct))))),
            Some(Ok((Quantity::Ns(two_reads), _))),
            Some(Ok((_, Some(Quantity::Ns(store))))),
        ) => Row::measured(
            HIP_FLOOR,
            Quantity::Ns(traced - direct),
            Some(Quantity::Ns(two_reads + store)),
        ),
        _ => Row::not_measured(
            HIP_FLOOR,
            "needs the HIP call and producer groups measured in the same run",
        ),
    };
    Some(row.target(Target::MaxRatio(1.3)))
}

// ---------------------------------------------------------------------------
// 3. Plugin delivery.

fn delivery_figure(n: u64) -> String {
    format!("delivery into kernel-stats, batches of {n}: Wasm vs native loop")
}

/// Issue 32's: the Wasm delivery within 3× of the native loop at 256
/// records a batch (the call's fixed cost counts most there), 1.5× at 4096.
fn delivery_targets(n: u64) -> Vec<Target> {
    match n {
        256 => vec![Target::MaxRatio(3.0)],
        4096 => vec![Target::MaxRatio(1.5)],
        _ => Vec::new(),
    }
}

fn delivery_rows(built: &Built) -> Vec<Row> {
    let measured = (|| {
        let mut cmd = Command::new(built.bench("deliver")?);
        let mut native = Command::new(built.bench("native_stats")?);
        native.arg("--json");
        cmd.arg("--only-projected");
        for n in BATCHES {
            cmd.args(["--records", &n.to_string()]);
            native.args(["--records", &n.to_string()]);
        }
        let wasm = parse::deliver_rows(&output(&mut cmd)?)?;
        let native = parse::json(&output(&mut native)?, "native_stats")?;
        BATCHES
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let row = wasm
                    .iter()
                    .find(|r| r.records == n)
                    .with_context(|| format!("the deliver bench printed no row for {n} records"))?;
                let reference = parse::number(
                    &native,
                    &format!("/sizes/{i}/records_per_s"),
                    "native_stats",
                )?;
                let mut r = Row::measured(
                    delivery_figure(n),
                    Quantity::PerSec(row.per_sec),
                    Some(Quantity::PerSec(reference)),
                );
                r.targets = delivery_targets(n);
                Ok(r)
            })
            .collect::<Result<Vec<_>>>()
    })();
    let figures: Vec<(String, Vec<Target>)> = BATCHES
        .iter()
        .map(|&n| (delivery_figure(n), delivery_targets(n)))
        .collect();
    let figures: Vec<(&str, &[Target])> = figures
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_slice()))
        .collect();
    or_unmeasured(measured, &figures)
}

/// The records per batch of the floor rows: the 256 of the delivery target.
const FLOOR_RECORDS: u64 = 256;

const FLOOR_SHAPE: &str =
    "delivery floor, 256 records in 3 of 64 columns, empty component: 64 lists (the WIT's batch) vs the 3 lists alone";
const FLOOR_OPTIONS: &str =
    "delivery floor, same: 64 option<list> fields (61 none) vs the 3 lists alone";
const FLOOR_NATIVE: &str =
    "delivery floor, same: the 3 lists alone vs the native kernel-stats loop on 256 records";

/// What any delivery of 256 records costs before the plugin's code runs,
/// by the batch's shape, and the cheapest shape against the native loop:
/// the measured floor under the 256-record delivery target.
fn floor_rows(built: &Built) -> Vec<Row> {
    let measured = (|| {
        let mut cmd = Command::new(built.bench("call_floor")?);
        cmd.args(["--records", &FLOOR_RECORDS.to_string()]);
        let rows = parse::call_floor_rows(&output(&mut cmd)?)?;
        let ns = |args: &str| -> Result<f64> {
            rows.iter()
                .find(|(n, a, _)| *n == FLOOR_RECORDS && a == args)
                .map(|r| r.2)
                .with_context(|| format!("the call_floor bench printed no `{args}` row"))
        };
        let mut native = Command::new(built.bench("native_stats")?);
        native.args(["--json", "--records", &FLOOR_RECORDS.to_string()]);
        let native = parse::json(&output(&mut native)?, "native_stats")?;
        let native_rate = parse::number(&native, "/sizes/0/records_per_s", "native_stats")?;
        let three = ns("3 lists")?;
        Ok(vec![
            Row::measured(
                FLOOR_SHAPE,
                Quantity::Ns(ns("64 lists")?),
                Some(Quantity::Ns(three)),
            ),
            Row::measured(
                FLOOR_OPTIONS,
                Quantity::Ns(ns("64 option lists")?),
                Some(Quantity::Ns(three)),
            ),
            Row::measured(
                FLOOR_NATIVE,
                Quantity::Ns(three),
                Some(Quantity::Ns(FLOOR_RECORDS as f64 / native_rate * 1e9)),
            ),
        ])
    })();
    or_unmeasured(
        measured,
        &[
            (FLOOR_SHAPE, &[]),
            (FLOOR_OPTIONS, &[]),
            (FLOOR_NATIVE, &[]),
        ],
    )
}

// ---------------------------------------------------------------------------
// 4. Plugin load.

/// The plugin each guest language is measured with (a built stock or
/// sample plugin of `target/plugins`), and its warm-load target.
const LOAD_PLUGINS: [(&str, &str, f64); 4] = [
    ("Rust", "kernel-stats", 5.0),
    ("C", "queue-occupancy", 5.0),
    ("Python", "range-kernel-time", 10.0),
    ("JS", "copy-histogram", 10.0),
];

fn load_cold(lang: &str, plugin: &str) -> String {
    format!("plugin load, {lang} ({plugin}), cold: PluginEngine vs wasmtime compile")
}

fn load_warm(lang: &str, plugin: &str) -> String {
    format!("plugin load, {lang} ({plugin}), warm cache vs cold")
}

/// Cold compile and warm (cached) load per guest language: the load bench
/// run once per language's plugin. A plugin that is not built is a row
/// saying so, not a failure.
fn load_rows(built: &Built, sizes: &Sizes) -> Vec<Row> {
    let mut rows = Vec::new();
    for (lang, plugin, warm_target) in LOAD_PLUGINS {
        let (cold, warm) = (load_cold(lang, plugin), load_warm(lang, plugin));
        let file = root().join("target/plugins").join(format!("{plugin}.wasm"));
        let measured = (|| {
            anyhow::ensure!(
                file.is_file(),
                "{} is not built (cargo xtask build-plugins)",
                file.display()
            );
            let out = output(
                Command::new(built.bench("load")?)
                    .arg("--plugin")
                    .arg(&file)
                    .args(["--json", "--cold", &sizes.load_runs.0.to_string()])
                    .args(["--warm", &sizes.load_runs.1.to_string()]),
            )?;
            let v = parse::json(&out, "load")?;
            let ms = |p: &str| parse::number(&v, p, "load").map(Quantity::Ms);
            Ok(vec![
                Row::measured(cold.clone(), ms("/cold_ms")?, Some(ms("/compiler_ms")?)),
                Row::measured(warm.clone(), ms("/warm_ms")?, Some(ms("/cold_ms")?))
                    .target(Target::MaxMs(warm_target)),
            ])
        })();
        rows.extend(or_unmeasured(
            measured,
            &[
                (cold.as_str(), &[]),
                (warm.as_str(), &[Target::MaxMs(warm_target)]),
            ],
        ));
    }
    rows
}

// ---------------------------------------------------------------------------
// 5. Output writers.

/// Each format, its name in the table, and its rate target on one core
/// (issue 32: CSV and Parquet 10 M records/s, JSON and Perfetto 5 M; rocpd
/// against raw SQLite instead, [`WRITER_ROCPD_RAW`]).
const FORMATS: [(&str, &str, Option<f64>); 5] = [
    ("csv", "CSV", Some(10e6)),
    ("json", "JSON", Some(5e6)),
    ("rocpd", "rocpd (SQLite)", None),
    ("pftrace", "Perfetto", Some(5e6)),
    ("parquet", "Parquet", Some(10e6)),
];

const WRITER_ROCPD_RAW: &str =
    "writer rocpd (SQLite) vs raw SQLite inserts of the same rows (same pragmas, 64 rows a statement)";

/// The formats whose size on disk is compared with CSV's.
const SIZED: [(&str, &str); 2] = [("parquet", "Parquet"), ("rocpd", "rocpd (SQLite)")];

fn size_figure(name: &str) -> String {
    format!("size on disk per 1 M records: {name} vs CSV")
}

fn writer_figure(name: &str) -> String {
    format!("writer {name} vs no format (statistics only)")
}

const WRITERS_TOGETHER: &str =
    "writers CSV + rocpd + Perfetto together (default outputs) vs rocpd alone";
const WRITERS_JOURNAL: &str =
    "record journal (what the application writes) vs default outputs written as batches come";

fn writer_rows(built: &Built, sizes: &Sizes) -> Vec<Row> {
    let measured = (|| {
        let out = output(
            Command::new(built.bench("writers")?)
                .args(["--json", "--records", &sizes.writer_records.to_string()])
                .args(["--runs", &sizes.writer_runs.to_string()]),
        )?;
        let v = parse::json(&out, "writers")?;
        let rate = |k: &str| parse::number(&v, &format!("/records_per_s/{k}"), "writers");
        let none = rate("none")?;
        let size = |k: &str| {
            parse::number(&v, &format!("/bytes_per_million_records/{k}"), "writers")
                .map(Quantity::BytesPerMillion)
        };
        let mut rows = FORMATS
            .iter()
            .map(|(key, name, target)| {
                let row = Row::measured(
                    writer_figure(name),
                    Quantity::PerSec(rate(key)?),
                    Some(Quantity::PerSec(none)),
                );
                Ok(match target {
                    Some(t) => row.target(Target::MinPerSec(*t)),
                    None => row,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        rows.push(
            Row::measured(
                WRITER_ROCPD_RAW,
                Quantity::PerSec(rate("rocpd")?),
                Some(Quantity::PerSec(rate("sqlite")?)),
            )
            .target(Target::MaxRatio(1.3)),
        );
        rows.push(Row::measured(
            WRITERS_TOGETHER,
            Quantity::PerSec(rate("default")?),
            Some(Quantity::PerSec(rate("rocpd")?)),
        ));
        rows.push(
            Row::measured(
                WRITERS_JOURNAL,
                Quantity::PerSec(rate("journal")?),
                Some(Quantity::PerSec(rate("default")?)),
            )
            .target(Target::MinPerSec(10e6)),
        );
        for (key, name) in SIZED {
            rows.push(Row::measured(
                size_figure(name),
                size(key)?,
                Some(size("csv")?),
            ));
        }
        Ok(rows)
    })();
    let targets = [Target::MinPerSec(10e6)];
    let five = [Target::MinPerSec(5e6)];
    let raw = [Target::MaxRatio(1.3)];
    let mut figures: Vec<(String, &[Target])> = FORMATS
        .iter()
        .map(|(_, n, t)| {
            let t: &[Target] = match t {
                Some(x) if *x >= 10e6 => &targets,
                Some(_) => &five,
                None => &[],
            };
            (writer_figure(n), t)
        })
        .collect();
    figures.push((WRITER_ROCPD_RAW.to_string(), &raw[..]));
    figures.push((WRITERS_TOGETHER.to_string(), &[][..]));
    figures.push((WRITERS_JOURNAL.to_string(), &targets[..]));
    figures.extend(SIZED.iter().map(|(_, n)| (size_figure(n), &[][..])));
    let figures: Vec<(&str, &[Target])> = figures.iter().map(|(f, t)| (f.as_str(), *t)).collect();
    or_unmeasured(measured, &figures)
}

// ---------------------------------------------------------------------------
// 6. Replay ingest.

fn ingest_rows(built: &Built, sizes: &Sizes) -> Vec<Row> {
    let n = sizes.ingest_records;
    let figure = format!(
        "replay ingest, {} records: replay vs raw rusqlite",
        table::count(n)
    );
    let cli_figure = "replay ingest vs sqlite3 CLI (> /dev/null)";
    let measured = (|| {
        let out = output(
            Command::new(built.bench("ingest")?)
                .arg("--bench")
                .env("INGEST_RECORDS", n.to_string()),
        )?;
        let ingest = parse::ingest(&out)?;
        let mut rows = vec![Row::measured(
            figure.clone(),
            Quantity::PerSec(ingest.replay),
            Some(Quantity::PerSec(ingest.rusqlite)),
        )];
        rows.push(match ingest.sqlite3_cli {
            Some(cli) => Row::measured(
                cli_figure,
                Quantity::PerSec(ingest.replay),
                Some(Quantity::PerSec(cli)),
            ),
            None => Row::not_measured(cli_figure, "sqlite3 is not installed"),
        });
        Ok(rows)
    })();
    or_unmeasured(measured, &[(&figure, &[]), (cli_figure, &[])])
}

// ---------------------------------------------------------------------------
// The machine.

/// CPU model, cores, load and kernel.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_string();
    let cores = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    format!(
        "machine: {model}, {cores} cores, Linux {kernel}; load average (1 min) at the end: {load}"
    )
}

/// The commit measured, and whether the tree had changes.
fn revision() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(rev) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!(
                "commit {rev}{}",
                if dirty {
                    " with uncommitted changes"
                } else {
                    ""
                }
            )
        }
        None => "commit unknown".into(),
    }
}
