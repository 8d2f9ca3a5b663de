//! HIP calls on the simulated runtime: `host/process/intercept/bench/overhead.c`
//! run untraced and traced (CSV, the default outputs, the default chain,
//! `--write-during-run`, a native rocprofiler-sdk tool), a whole short run
//! from start to exit, and the tool library's size and load cost.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{ensure, Context, Result};

use super::artifacts::Built;
use super::command::{or_unmeasured, output, output_and_errors};
use super::parse;
use super::sizes::Sizes;
use super::table::{median, Quantity, Row, Target};
use crate::util::root;

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
pub(super) const HIP_PAIRED: &str = "HIP call in bursts, CPU, paired: traced (CSV) vs untraced";
const HIP_WALL_CHAIN: &str = "HIP call at max rate, wall: default chain vs untraced";
const HIP_WALL_CHAIN_LAUNCHER: &str =
    "HIP call at max rate, wall: default chain placed in rocwasm (placement) vs untraced";
const HIP_PAIRED_NATIVE: &str =
    "HIP call in bursts, CPU, paired: native rocprofiler-sdk tool (buffered) vs untraced";

pub(super) fn rows(built: &Built, sizes: &Sizes, work: &Path) -> Vec<Row> {
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

/// What `host/process/intercept/bench/overhead.sh` does, with the figures kept:
/// `overhead.c` built against the simulated runtime, run without the tool
/// and preloaded with it, tracing HIP_RUNTIME_API.
fn measure_hip(built: &Built, sizes: &Sizes, work: &Path) -> Result<Vec<Row>> {
    let root = root();
    let sim = built.sim_lib.clone();
    let exe = work.join("overhead");
    crate::util::run(
        Command::new("gcc")
            .args(["-O2", "-D__HIP_PLATFORM_AMD__"])
            .arg(root.join("host/process/intercept/bench/overhead.c"))
            .arg(format!("-L{}", sim.display()))
            .args(["-lamdhip64", "-ldl", "-o"])
            .arg(&exe)
            .env_remove("LD_LIBRARY_PATH"),
    )
    .context(
        "building host/process/intercept/bench/overhead.c (needs gcc and the ROCm HIP headers)",
    )?;
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
    // (`host/process/intercept/bench/native_tool.c`: HIP_RUNTIME_API buffered into
    // the same 1 MiB LOSSLESS buffer) and no output of ours.
    let tool = work.join("libnative_bench_tool.so");
    crate::util::run(
        Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC"])
            .arg(root.join("host/process/intercept/bench/native_tool.c"))
            .arg(format!("-I{}", root.join("capi/include").display()))
            .arg("-o")
            .arg(&tool),
    )
    .context("building host/process/intercept/bench/native_tool.c")?;
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
    // A traced run's wall time per call against the untraced run's.
    let wall_vs_base = |figure: &str, traced: &[(f64, f64)]| {
        Row::measured(
            figure,
            Quantity::Ns(wall(traced)),
            Some(Quantity::Ns(wall(&base))),
        )
    };
    Ok(vec![
        wall_vs_base(HIP_WALL_CSV, &traced_csv),
        wall_vs_base(HIP_WALL_DEFAULT, &traced_default),
        wall_vs_base(HIP_WALL_DURING, &traced_during),
        Row::measured(
            HIP_CPU_DEFAULT,
            Quantity::Ns(cpu(&traced_default)),
            Some(Quantity::Ns(cpu(&base))),
        ),
        Row::measured(HIP_PAIRED, Quantity::Ns(traced), Some(Quantity::Ns(direct))),
        wall_vs_base(HIP_WALL_CHAIN, &traced_chain),
        wall_vs_base(HIP_WALL_CHAIN_LAUNCHER, &traced_chain_launcher),
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
