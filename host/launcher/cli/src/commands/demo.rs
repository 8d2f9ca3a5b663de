//! `rocwasm demo`: the first command of the README — profile the hipcc-built
//! sample on the simulated AMD runtime with `examples/chains/default.toml`
//! (kernel-stats, api-stats, memcpy-bandwidth, report; CSV, rocpd and Perfetto
//! outputs), then say where the outputs are.
//!
//! The profiling itself is `rocwasm run --sim -c default.toml -d DIR -- SAMPLE`,
//! run as a child process of this very binary: one launcher, and `run`
//! owns the process (it exits with the application's status).
//!
//! What the demo needs comes from the build tree, found next to this binary
//! (`target/debug/rocwasm` → `target/`): `target/sim/bin/multi_kernel` and
//! `target/sim/lib/` (`cargo xtask build-sim`), `target/plugins/*.wasm`
//! (`cargo xtask build-plugins`), `target/debug/librocwasm_intercept.so`.
//! `cargo xtask demo` builds all of them and then runs this command.
//!
//! The plugins run inside the profiled application; the tables `run`
//! prints are their `fini` summaries from that live run.
//!
//! If the live run fails — including when it ran but its plugin chain did
//! not — the demo says so loudly and replays the recorded sample trace in
//! `examples/traces/sample/` through the same chain instead, so that a first
//! user still sees what the plugins produce.

use std::path::{Path, PathBuf};
use std::process::Command;

use rocwasm_plan::{PathTemplate, ProcessInfo, RunPlan};

use crate::cli::{DemoArgs, OutputArgs, ReplayArgs};
use crate::failure::{Failure, Result};

/// The hipcc-built sample application (`examples/apps/multi_kernel.hip`).
const SAMPLE: &str = "multi_kernel";
/// Its arguments: a small but multi-threaded run.
const SAMPLE_ARGS: &[&str] = &["--threads", "4"];
const CHAIN: &str = "examples/chains/default.toml";
const RECORDED: &str = "examples/traces/sample";

pub fn demo(args: DemoArgs) -> Result {
    let layout = Layout::find()?;
    let dir = output_dir(&args);
    let formats = args
        .output_format
        .as_ref()
        .map(|fs| fs.iter().map(|f| f.name()).collect::<Vec<_>>().join(","));

    println!(
        "rocwasm demo: profiling {} {} on the simulated AMD runtime with {}",
        layout.sample.display(),
        SAMPLE_ARGS.join(" "),
        layout.chain.display()
    );
    let exe = std::env::current_exe()
        .map_err(|e| Failure::runtime(format!("cannot find the rocwasm binary: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.arg("run")
        .arg("--sim")
        .arg("-c")
        .arg(&layout.chain)
        .arg("-d")
        .arg(&dir);
    if let Some(f) = &formats {
        cmd.args(["--output-format", f]);
    }
    cmd.arg("--").arg(&layout.sample).args(SAMPLE_ARGS);
    let status = cmd.status();

    let stages = plugin_stages_ran(&dir);
    let live_ok = matches!(&status, Ok(s) if s.success()) && has_files(&dir) && stages > 0;
    if live_ok {
        println!();
        println!(
            "The tables above are the {stages} plugin stage(s)' summaries, computed inside \
             the profiled application."
        );
        print_outputs(&dir, "the live run");
        return Ok(());
    }
    let why = match status {
        Ok(s) if s.success() && has_files(&dir) => {
            "its plugin chain did not run in the application (see the rocwasm: lines above)".into()
        }
        Ok(s) if s.success() => format!("it wrote nothing into {}", dir.display()),
        Ok(s) => format!("it ended with {s}"),
        Err(e) => format!("it could not start: {e}"),
    };
    eprintln!();
    eprintln!("rocwasm demo: ################################################################");
    eprintln!("rocwasm demo: THE LIVE RUN FAILED ({why}).");
    eprintln!(
        "rocwasm demo: FALLING BACK to replaying the RECORDED sample trace {}",
        layout.recorded.display()
    );
    eprintln!("rocwasm demo: through the same chain. These results are NOT from a live run.");
    eprintln!("rocwasm demo: ################################################################");
    let replay_dir = dir.join("replay-of-recorded-sample");
    super::replay::replay(ReplayArgs {
        paths: vec![layout.recorded.clone()],
        summary_by_rank: false,
        dask: None,
        chain: Some(layout.chain.clone()),
        strict: false,
        output: OutputArgs {
            stats: false,
            summary_per_domain: false,
            summary: false,
            summary_groups: Vec::new(),
            summary_output_file: None,
            summary_units: None,
            output_directory: Some(replay_dir.display().to_string()),
            output_file: None,
            output_format: args.output_format.clone(),
            write_during_run: false,
            api_args: false,
            parquet_layout: None,
        },
        kernels: Default::default(),
        collection: Default::default(),
    })?;
    print_outputs(&replay_dir, "the replay of the recorded sample");
    Err(Failure::runtime(
        "the live demo run failed; the results above are from the recorded sample trace",
    ))
}

/// Where the demo's artefacts are, or a failure saying how to build them.
struct Layout {
    chain: PathBuf,
    sample: PathBuf,
    recorded: PathBuf,
}

impl Layout {
    fn find() -> Result<Layout> {
        let roots = candidate_roots();
        let find_in_roots = |rel: &str| roots.iter().map(|r| r.join(rel)).find(|p| p.exists());
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf));
        // `target/<profile>/rocwasm` → `target/`.
        let target = exe_dir
            .as_ref()
            .and_then(|d| d.parent())
            .map(Path::to_path_buf);

        let mut missing = Vec::new();
        let chain = find_in_roots(CHAIN);
        if chain.is_none() {
            missing.push(format!("the chain {CHAIN}"));
        }
        let recorded = find_in_roots(RECORDED);
        let sample = target
            .as_ref()
            .map(|t| t.join("sim/bin").join(SAMPLE))
            .filter(|p| p.is_file())
            .or_else(|| find_in_roots(&format!("target/sim/bin/{SAMPLE}")));
        if sample.is_none() {
            missing.push(format!(
                "the sample application target/sim/bin/{SAMPLE} (cargo xtask build-sim)"
            ));
        }
        let sim_lib = target
            .as_ref()
            .map(|t| t.join("sim/lib/libamdhip64.so.5"))
            .is_some_and(|p| p.is_file())
            || std::env::var_os("ROCWASM_SIM_LIB").is_some();
        if !sim_lib {
            missing.push("the simulated runtime target/sim/lib (cargo xtask build-sim)".into());
        }
        let plugins = target
            .as_ref()
            .map(|t| t.join("plugins/kernel-stats.wasm"))
            .is_some_and(|p| p.is_file())
            || std::env::var_os(rocwasm_config::resolve::PLUGIN_PATH_VAR).is_some();
        if !plugins {
            missing
                .push("the stock plugins target/plugins/*.wasm (cargo xtask build-plugins)".into());
        }
        let tool = exe_dir
            .as_ref()
            .map(|d| d.join("librocwasm_intercept.so"))
            .is_some_and(|p| p.is_file())
            || std::env::var_os("ROCWASM_INTERCEPT_LIB").is_some();
        if !tool {
            missing.push(
                "the tool library librocwasm_intercept.so (cargo build -p rocwasm-intercept)"
                    .into(),
            );
        }
        match (chain, sample, recorded) {
            (Some(chain), Some(sample), Some(recorded)) if missing.is_empty() => Ok(Layout {
                chain,
                sample,
                recorded,
            }),
            _ => Err(Failure::runtime(format!(
                "the demo needs what is not built yet: {}. Run `cargo xtask demo` from the \
                 rocwasm source tree: it builds the plugins, the simulated runtime and the \
                 sample, then runs `rocwasm demo`",
                missing.join("; ")
            ))),
        }
    }
}

/// The source tree: the working directory, the tree this binary was built
/// in (`target/<profile>/rocwasm` → `../..`), and the tree it was compiled from.
fn candidate_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    if let Some(root) = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.parent()?.to_path_buf()))
    {
        roots.push(root);
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.."));
    roots
}

/// `-d` (or `rocwasm-demo/%hostname%/%pid%`), expanded here: `%pid%` is the
/// demo's own id, so the demo knows where to look afterwards.
fn output_dir(args: &DemoArgs) -> PathBuf {
    let template = args
        .output_directory
        .clone()
        .unwrap_or_else(|| "rocwasm-demo/%hostname%/%pid%".into());
    let expanded = match PathTemplate::parse(&template) {
        Ok(t) => t.expand(&ProcessInfo::current()),
        Err(_) => template,
    };
    let p = PathBuf::from(expanded);
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|c| c.join(&p)).unwrap_or(p)
    }
}

/// How many plugin stages finished inside the application, from the
/// summary the tool library wrote (`… 3 plugin stage(s) ran in the process`).
fn plugin_stages_ran(dir: &Path) -> usize {
    let text = std::fs::read_to_string(dir.join(RunPlan::SUMMARY_FILE)).unwrap_or_default();
    text.lines()
        .find_map(|l| {
            let (before, _) = l.split_once(RunPlan::PLUGINS_RAN)?;
            before.split_whitespace().last()?.parse().ok()
        })
        .unwrap_or(0)
}

fn has_files(dir: &Path) -> bool {
    !files_under(dir).is_empty()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The outputs grouped the way people open them.
fn print_outputs(dir: &Path, what: &str) {
    let files = files_under(dir);
    let ext = |p: &Path, e: &str| p.extension().is_some_and(|x| x == e);
    let group = |title: &str, pick: &dyn Fn(&Path) -> bool, hint: &str| {
        let chosen: Vec<_> = files.iter().filter(|p| pick(p)).collect();
        if chosen.is_empty() {
            return;
        }
        println!("  {title} ({hint}):");
        for p in chosen {
            println!("    {}", p.strip_prefix(dir).unwrap_or(p).display());
        }
    };
    println!();
    println!("Outputs of {what} are in {}:", dir.display());
    group("CSV", &|p| ext(p, "csv"), "rocprofv3-compatible");
    group(
        "rocpd",
        &|p| ext(p, "db"),
        "open with sqlite3; see examples/traces/README.md",
    );
    group(
        "Perfetto",
        &|p| ext(p, "pftrace"),
        "open in https://ui.perfetto.dev",
    );
    group("JSON", &|p| ext(p, "json"), "rocprofv3-style results.json");
    group(
        "other",
        &|p| !["csv", "db", "pftrace", "json"].iter().any(|e| ext(p, e)),
        "summaries and logs",
    );
    println!(
        "Next: `rocwasm replay {} --stats` analyses them again offline.",
        dir.display()
    );
}
