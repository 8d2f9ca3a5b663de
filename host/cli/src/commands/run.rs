//! `rocwasm run [-c CHAIN] [flags] -- APP ARGS…`: profile an application.
//!
//! The launcher does everything that needs the command line, then gets out of
//! the way:
//!
//! 1. resolve the chain (chain file amended by flags, or the flags alone) and
//!    validate it — a bad chain fails with status 2 before anything starts;
//! 2. write the run file (`ROCWASM_RUN`, see `host/intercept/src/run_config.rs`)
//!    with the traced kinds, output directory template, formats;
//! 3. set `LD_PRELOAD` (appended to any existing value) and `HSA_TOOLS_LIB`
//!    to `librocwasm_intercept.so`; with `--sim`, put the simulated runtime
//!    first on `LD_LIBRARY_PATH`;
//! 4. run the application, wait, print the summary the tool library wrote
//!    into the output directory, and exit with the application's status
//!    (a signal becomes 128 + its number, as shells do).

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use rocwasm_config::Chain;

use crate::cli::RunArgs;
use crate::commands::chain::chain_for;
use crate::failure::{Failure, Result};

#[path = "../../../intercept/src/run_config.rs"]
#[allow(dead_code)]
mod run_config;

use run_config::RunConfig;

/// The tool library's file name.
const TOOL_LIB: &str = "librocwasm_intercept.so";

pub fn run(args: RunArgs) -> Result {
    let chain = chain_for(args.chain.as_deref(), &args.flags())?;
    let tool = find_tool_library().ok_or_else(|| {
        Failure::runtime(format!(
            "cannot find {TOOL_LIB} next to the rocwasm binary or in the target directory \
             (build it with `cargo build -p rocwasm-intercept`, or set ROCWASM_INTERCEPT_LIB)"
        ))
    })?;
    let sim_lib = if args.sim {
        Some(find_sim_libs().ok_or_else(|| {
            Failure::runtime("--sim: cannot find the simulated runtime (run `cargo xtask build-sim`, or set ROCWASM_SIM_LIB)")
        })?)
    } else if !amd_runtime_installed() {
        match find_sim_libs() {
            Some(dir) => {
                eprintln!(
                    "rocwasm: no AMD runtime (libamdhip64.so.5 / libhsa-runtime64.so.1) found; \
                     FALLING BACK to the simulated runtime in {} (pass --sim to choose it explicitly)",
                    dir.display()
                );
                Some(dir)
            }
            None => {
                return Err(Failure::runtime(
                    "no AMD runtime found (libamdhip64.so.5 / libhsa-runtime64.so.1); \
                     try --sim to run on the simulated runtime",
                ))
            }
        }
    } else {
        None
    };

    let config = run_config(&chain, &args);
    let run_file = write_run_file(&config)?;

    let mut cmd = Command::new(&args.app[0]);
    cmd.args(&args.app[1..]);
    cmd.env(
        "LD_PRELOAD",
        prepend_list(&tool, std::env::var_os("LD_PRELOAD"), ':'),
    );
    cmd.env(
        "HSA_TOOLS_LIB",
        prepend_list(&tool, std::env::var_os("HSA_TOOLS_LIB"), ' '),
    );
    cmd.env(run_config::ENV, &run_file);
    if let Some(dir) = &sim_lib {
        cmd.env(
            "LD_LIBRARY_PATH",
            prepend_list(dir, std::env::var_os("LD_LIBRARY_PATH"), ':'),
        );
    }
    tracing::info!(app = ?args.app, tool = %tool.display(), sim = ?sim_lib, "launching");

    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", args.app[0]))
        .map_err(Failure::Runtime)?;
    let pid = child.id();
    let status = child
        .wait()
        .map_err(|e| Failure::runtime(format!("waiting for the application: {e}")))?;
    let _ = std::fs::remove_file(&run_file);

    let dir = config.expand_dir(pid);
    print_summary(&dir);
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    };
    // The application's status is ours: bypass the usual 0/1/2 mapping.
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(code)
}

/// The run file's contents for this chain and these flags.
fn run_config(chain: &Chain, args: &RunArgs) -> RunConfig {
    let mut kinds: Vec<String> = chain
        .output
        .trace
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    for stage in &chain.stages {
        for k in &stage.domains {
            if !kinds.iter().any(|n| n == k.name()) {
                kinds.push(k.name().to_string());
            }
        }
    }
    let mut formats: Vec<String> = chain
        .output
        .formats
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    if formats.is_empty() && !kinds.is_empty() {
        formats.push("csv".into());
    }
    RunConfig {
        version: RunConfig::VERSION,
        output_dir: absolute(chain.output.directory.as_str()),
        output_name: args.output.output_file.clone(),
        formats,
        stats: args.output.stats,
        kinds,
        chain: chain.file.clone(),
        buffer_size: chain.settings.buffer.size,
        fork: "run".into(),
        api_log: std::env::var_os("ROCWASM_API_LOG").is_some(),
        command: args.app.clone(),
    }
}

/// A relative output directory is relative to where `rocwasm run` was started.
fn absolute(template: &str) -> String {
    if template.starts_with('/') {
        return template.to_string();
    }
    match std::env::current_dir() {
        Ok(cwd) => format!("{}/{template}", cwd.display()),
        Err(_) => template.to_string(),
    }
}

fn write_run_file(config: &RunConfig) -> Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("rocwasm-run-{}.json", std::process::id()));
    let text = serde_json::to_string_pretty(config).map_err(Failure::runtime)?;
    std::fs::write(&path, text)
        .with_context(|| format!("cannot write {}", path.display()))
        .map_err(Failure::Runtime)?;
    Ok(path)
}

/// `first` then the existing list (`sep`-separated), without duplicating `first`.
fn prepend_list(first: &Path, existing: Option<OsString>, sep: char) -> OsString {
    let mut out = OsString::from(first.as_os_str());
    if let Some(rest) = existing {
        let rest = rest.to_string_lossy().into_owned();
        for item in rest
            .split(sep)
            .filter(|s| !s.is_empty() && Path::new(s) != first)
        {
            out.push(sep.to_string());
            out.push(item);
        }
    }
    out
}

/// The tool library: `ROCWASM_INTERCEPT_LIB`, next to the binary, in
/// `../lib`, or in the cargo target directory the binary was built into.
fn find_tool_library() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ROCWASM_INTERCEPT_LIB") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let candidates = [
        dir.join(TOOL_LIB),
        dir.join("../lib").join(TOOL_LIB),
        // `target/debug/deps/rocwasm-…` (test binaries) → `target/debug/`.
        dir.join("..").join(TOOL_LIB),
    ];
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .map(|p| p.canonicalize().unwrap_or(p))
}

/// `target/sim/lib`: `ROCWASM_SIM_LIB`, or relative to the binary.
fn find_sim_libs() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ROCWASM_SIM_LIB") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        dir.join("../sim/lib"),
        dir.join("../../sim/lib"),
        dir.join("sim/lib"),
    ]
    .into_iter()
    .find(|p| p.join("libamdhip64.so.5").is_file())
    .map(|p| p.canonicalize().unwrap_or(p))
}

/// True when a real ROCm HIP or HSA runtime is installed where the dynamic
/// loader looks (LD_LIBRARY_PATH, the ROCm prefix, the system directories).
fn amd_runtime_installed() -> bool {
    let mut dirs: Vec<PathBuf> = std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect();
    for d in [
        "/opt/rocm/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.iter().any(|d| {
        d.join("libamdhip64.so.5").exists()
            || d.join("libamdhip64.so.6").exists()
            || d.join("libhsa-runtime64.so.1").exists()
    })
}

fn print_summary(dir: &Path) {
    let path = dir.join(run_config::SUMMARY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => print!("{text}"),
        Err(e) => eprintln!(
            "rocwasm: no summary at {} ({e}); the application may not have used the AMD runtime",
            path.display()
        ),
    }
}
