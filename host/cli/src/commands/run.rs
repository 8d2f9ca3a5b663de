//! `rocwasm run [-c CHAIN] [flags] -- APP ARGS…`: profile an application.
//!
//! The launcher does everything that needs the command line, then gets out of
//! the way:
//!
//! 1. resolve the chain (chain file amended by flags, or the flags alone) and
//!    validate it — a bad chain fails with status 2 before anything starts;
//! 2. write the run file (`ROCWASM_RUN`, see `host/intercept/src/run_config.rs`)
//!    with the traced kinds, output directory template, formats, and the
//!    chain's stages as the plugin runtime will run them inside the
//!    application (from [`stage_specs`], the same mapping `replay` uses);
//! 3. set `LD_PRELOAD` (appended to any existing value) and `HSA_TOOLS_LIB`
//!    to `librocwasm_intercept.so`, and `ROCPROFILER_REGISTER_LIBRARY` to it
//!    unless set (ROCm ≥ 6.2's rocprofiler-register then passes the HIP and
//!    HSA dispatch tables to the tool); with `--sim`, put the simulated
//!    runtime first on `LD_LIBRARY_PATH`;
//! 4. run the application, wait, print the summary the tool library wrote
//!    into the output directory (the plugins' tables, the host's statistics,
//!    failures), and exit with the application's status (a signal becomes
//!    128 + its number, as shells do).

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use rocwasm_config::{Chain, OutputGrant};
use rocwasm_core::BufferTracingKind;
use rocwasm_runtime::{BufferSettings, FailurePolicy, RuntimeConfig, StageSpec, World};

use crate::cli::RunArgs;

/// Read by ROCm ≥ 6.2's rocprofiler-register (see step 3 of the module docs).
const ROCPROFILER_REGISTER_LIBRARY: &str = "ROCPROFILER_REGISTER_LIBRARY";
use crate::commands::chain::chain_for;
use crate::failure::{Failure, Result};
use crate::stages::stage_specs;

#[path = "../../../intercept/src/run_config.rs"]
#[allow(dead_code)]
pub(crate) mod run_config;

use run_config::{RunBuffer, RunConfig, RunFailure, RunLimits, RunStage};

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

    let config = run_config(&chain, &args)?;
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
    // ROCm ≥ 6.2: rocprofiler-register hands the runtimes' dispatch tables
    // only to a tool it knows is present; naming any library here says so,
    // and the preloaded tool's `rocprofiler_set_api_table` is the one it
    // calls (it prefers an entry point that is already loaded).
    if std::env::var_os(ROCPROFILER_REGISTER_LIBRARY).is_none() {
        cmd.env(ROCPROFILER_REGISTER_LIBRARY, &tool);
    }
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
    print_summary(&dir, chain.output.summary);
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
fn run_config(chain: &Chain, args: &RunArgs) -> Result<RunConfig> {
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
    let output_dir = absolute(chain.output.directory.as_str());
    Ok(RunConfig {
        version: RunConfig::VERSION,
        stages: run_stages(chain, Path::new(&output_dir))?,
        plugin_cache: chain
            .settings
            .plugin_cache
            .clone()
            .or_else(|| RuntimeConfig::default().cache_dir),
        output_dir,
        // `-o` is merged into the chain's `file_prefix`. Its default
        // (`%pid%`) is not applied to runs: their directory already names
        // the process, and their files keep rocprofv3's plain names.
        output_name: Some(chain.output.file_prefix.as_str())
            .filter(|p| !p.is_empty() && *p != rocwasm_config::DEFAULT_OUTPUT_FILE)
            .map(str::to_string),
        formats,
        stats: args.output.stats,
        kinds,
        chain: chain.file.clone(),
        buffer_size: chain.settings.buffer.size,
        fork: "run".into(),
        api_log: std::env::var_os("ROCWASM_API_LOG").is_some(),
        command: args.app.clone(),
    })
}

/// The chain's stages for the run file: [`stage_specs`] (the one mapping of
/// chain stages onto the runtime's specs), written by name. Output grants
/// stay relative to the run directory, which only the profiled process can
/// expand (`%pid%`).
fn run_stages(chain: &Chain, run_dir: &Path) -> Result<Vec<RunStage>> {
    let specs = stage_specs(chain, run_dir);
    if specs.len() != chain.stages.len() {
        return Err(Failure::runtime("internal error: stages and specs differ"));
    }
    specs
        .iter()
        .zip(&chain.stages)
        .map(|(spec, stage)| {
            let output = match &stage.output {
                OutputGrant::None => None,
                OutputGrant::RunDirectory => Some(String::new()),
                OutputGrant::Subdirectory(d) => Some(d.clone()),
            };
            run_stage(spec, output)
        })
        .collect()
}

fn run_stage(spec: &StageSpec, output: Option<String>) -> Result<RunStage> {
    let names = |kinds: &mut dyn Iterator<Item = BufferTracingKind>| -> Vec<String> {
        kinds.map(|k| k.name().to_string()).collect()
    };
    let mut operations = std::collections::BTreeMap::new();
    for (kind, ops) in &spec.operations {
        let ops = ops
            .iter()
            .map(|&op| {
                rocwasm_core::operation_name(*kind, op)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        Failure::runtime(format!(
                            "stage `{}`: {} has no operation {op}",
                            spec.name,
                            kind.name()
                        ))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        operations.insert(kind.name().to_string(), ops);
    }
    let wasm = std::path::absolute(&spec.wasm).unwrap_or_else(|_| spec.wasm.clone());
    let nanos = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let BufferSettings {
        size,
        watermark,
        policy,
    } = spec.buffer;
    Ok(RunStage {
        name: spec.name.clone(),
        wasm,
        world: spec.world.map(|w| {
            match w {
                World::Analysis => "analysis",
                World::Transform => "transform",
            }
            .to_string()
        }),
        kinds: (!spec.kinds.is_all()).then(|| {
            names(
                &mut BufferTracingKind::ALL
                    .iter()
                    .copied()
                    .filter(|&k| spec.kinds.accepts(k)),
            )
        }),
        domains: names(&mut spec.domains.iter().copied()),
        operations,
        config: spec.config.clone(),
        limits: RunLimits {
            memory_bytes: spec.limits.memory_bytes as u64,
            deadline_ns: nanos(spec.limits.deadline),
            callback_deadline_ns: nanos(spec.limits.callback_deadline),
            output_bytes: spec.limits.output_bytes,
            log_per_second: spec.limits.log_per_second,
        },
        failure: match spec.failure {
            FailurePolicy::Skip => RunFailure::Skip,
            FailurePolicy::Disable => RunFailure::Disable,
            FailurePolicy::Restart { max, backoff } => RunFailure::Restart {
                max,
                backoff_ns: nanos(backoff),
            },
            FailurePolicy::Abort => RunFailure::Abort,
        },
        output,
        buffer: RunBuffer {
            size,
            watermark,
            lossless: policy == rocwasm_core::BufferPolicy::Lossless,
        },
    })
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

/// Prints the summary the tool library wrote; with `[output] summary =
/// false`, only its `rocwasm:` lines (files written, problems), not the
/// stages' tables (which stay in the file).
fn print_summary(dir: &Path, tables: bool) {
    let path = dir.join(run_config::SUMMARY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) if tables => print!("{text}"),
        Ok(text) => {
            for line in text.lines().filter(|l| l.starts_with("rocwasm:")) {
                println!("{line}");
            }
        }
        Err(e) => eprintln!(
            "rocwasm: no summary at {} ({e}); the application may not have used the AMD runtime",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_config::LoadOptions;

    fn default_chain() -> Chain {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chains/default.toml");
        Chain::load(
            &path,
            &LoadOptions {
                plugin_path: vec![],
                check_plugins: false,
            },
        )
        .unwrap()
    }

    #[test]
    fn the_default_chain_reaches_the_run_file_by_name() {
        let stages = run_stages(&default_chain(), Path::new("/out/%pid%")).unwrap();
        let names: Vec<&str> = stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["kernel-stats", "api-stats", "memcpy-bandwidth"]);
        let [ks, api, bw] = &stages[..] else {
            unreachable!()
        };
        assert_eq!(ks.domains, ["KERNEL_DISPATCH"]);
        assert_eq!(
            ks.kinds.as_deref(),
            Some(&["KERNEL_DISPATCH".to_string()][..])
        );
        assert_eq!(ks.world.as_deref(), Some("analysis"));
        assert_eq!(ks.output.as_deref(), Some(""));
        assert_eq!(api.domains, ["HIP_RUNTIME_API", "HIP_COMPILER_API"]);
        assert_eq!(api.limits.memory_bytes, 64 << 20);
        assert_eq!(api.limits.deadline_ns, 500_000_000);
        assert_eq!(bw.output.as_deref(), Some("bandwidth"));
        assert_eq!(
            bw.operations["MEMORY_COPY"],
            ["MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST"]
        );
        assert_eq!(
            bw.failure,
            RunFailure::Restart {
                max: 3,
                backoff_ns: 100_000_000
            }
        );
        assert_eq!(bw.buffer.size, 4 << 20);
        assert!(bw.buffer.lossless);
        assert!(bw.wasm.is_absolute());
        // The run file round-trips through JSON unchanged.
        let json = serde_json::to_string(&stages).unwrap();
        let back: Vec<RunStage> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, stages);
    }
}
