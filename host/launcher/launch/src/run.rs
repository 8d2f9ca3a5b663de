//! A live run (`rocwasm run [-c CHAIN] [flags] -- APP ARGS…`): profile an
//! application.
//!
//! The launcher does everything that needs the command line, then gets out of
//! the way:
//!
//! 1. resolve the chain (chain file amended by flags, or the flags alone) and
//!    validate it — a bad chain fails with status 2 before anything starts;
//!    an output directory that already holds an earlier run's output files
//!    is warned about (refused with [`RunRequest::strict`]);
//! 2. write the run plan (`ROCWASM_RUN`, a [`RunPlan`] from
//!    `Chain::to_plan`, the same plan `replay` runs) with the traced kinds,
//!    output directory template, formats, and the chain's stages;
//! 3. set `LD_PRELOAD` (appended to any existing value) and `HSA_TOOLS_LIB`
//!    to `librocwasm_intercept.so`, and `ROCPROFILER_REGISTER_LIBRARY` to it
//!    unless set (ROCm ≥ 6.2's rocprofiler-register then passes the HIP and
//!    HSA dispatch tables to the tool); on the simulated runtime, put it
//!    first on `LD_LIBRARY_PATH`;
//! 4. run the application, which only records: its tool library appends
//!    the outputs' records to a record journal per process in a journal
//!    directory made for this run (`rocwasm-pipeline`'s `journal` module),
//!    and keeps its output buffers' halves in files beside it;
//! 5. once it has ended, however it ended (exit, a crash, SIGKILL), write
//!    every output format from each journal and the records its buffers
//!    still held, print the summary (the plugins' tables, the host's
//!    statistics, how the application ended, every file written, the
//!    plugins' with their stage, failures), remove the journal
//!    directory, and return how the application ended (the CLI exits with
//!    its status; a signal becomes 128 + its number, as shells do).
//!
//! Under an MPI launcher (`mpirun -np 4 rocwasm run … -- ./app`) every rank
//! runs its own launcher, so every rank gets its own plan, outputs and
//! chain (put `%rank%` in `-d`). With [`RunRequest::profile_ranks`] a rank
//! that is not listed skips steps 2 and 3: the application runs untouched
//! (only the simulated runtime's library path, without which it has no
//! runtime at all).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context;
use rocwasm_config::{Chain, Fetcher, PlanOptions, TraceFlags};
use rocwasm_pipeline::FromJournal;
use rocwasm_plan::{Backend, ProcessInfo, RunPlan, WriteTiming};
use rocwasm_plugin_host::EngineConfig;

use crate::backend::{amd_runtime_installed, Measurer};
use crate::chain::{admit_plan, chain_for, check_tool_libraries};
use crate::console::Console;
use crate::error::{LaunchError, Result};
use crate::exit::{describe_exit, shell_status};
use crate::install::{Install, TOOL_LIB};
use crate::journal::{follow, print_summary, write_outputs};

/// Read by ROCm ≥ 6.2's rocprofiler-register (see step 3 of the module docs).
const ROCPROFILER_REGISTER_LIBRARY: &str = "ROCPROFILER_REGISTER_LIBRARY";

/// Which HIP and HSA runtime the application runs on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Runtime {
    /// AMD's where installed; else the simulated runtime, with a note on
    /// stderr (none found either: an error).
    #[default]
    Installed,
    /// The simulated AMD runtime (`--sim`): no GPU needed.
    Simulated,
}

/// Everything `rocwasm run` is asked: what to run, with which chain, on
/// which runtime, measured by whom.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The program to profile (a path, or a name looked up on `PATH`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The chain file; [`RunRequest::flags`] amend it. Without one, the
    /// flags alone describe the run.
    pub chain: Option<PathBuf>,
    /// rocprofv3's options: what to trace, the output directory (`-d`),
    /// file name, formats, summaries, kernel filters, collection period.
    pub flags: TraceFlags,
    /// The runtime the application runs on.
    pub runtime: Runtime,
    /// Who measures (`--backend`); `None`: the chain's `[settings]
    /// backend`.
    pub backend: Option<Backend>,
    /// Under MPI, profile only these ranks (`--profile-mpi-ranks`); the
    /// others run the application untouched. `None`: every rank.
    pub profile_ranks: Option<Vec<u32>>,
    /// Libraries to put first in the application's `LD_PRELOAD` (a
    /// sanitizer's runtime).
    pub preload: Vec<String>,
    /// Where rocwasm's tool library, simulated runtime and plugins are.
    pub install: Install,
    /// Pulls shipped plugins (`oci://…`) the chain names; `None` refuses
    /// them.
    pub fetcher: Option<Fetcher>,
    /// Refuse (a usage error, before the application starts) an output
    /// directory that already holds an earlier run's output files, instead
    /// of warning that they stay beside this run's (`--strict`).
    pub strict: bool,
}

impl RunRequest {
    /// The program and its arguments, as the plan records the command.
    pub fn command(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// How a run ended and what it left.
#[derive(Debug)]
pub struct RunOutcome {
    /// How the application ended.
    pub status: ExitStatus,
    /// The application's process id.
    pub pid: u32,
    /// False for an MPI rank that was not profiled
    /// ([`RunRequest::profile_ranks`]): nothing below was done.
    pub profiled: bool,
    /// Who measured the run (`None` when not profiled).
    pub measured_by: Option<Measurer>,
    /// The application's output directory (its summary file is there).
    pub dir: Option<PathBuf>,
    /// The application's summary as it was printed in full (with
    /// `[output] summary = false` only its `rocwasm:` lines were).
    pub summary: Option<String>,
    /// What was written from each process's journal (the application and
    /// the processes it started).
    pub processes: Vec<FromJournal>,
    /// The record journal directory, when it was kept (an output could
    /// not be written, or `ROCWASM_KEEP_JOURNAL` is set).
    pub journal_kept: Option<PathBuf>,
}

impl RunOutcome {
    /// The status the `rocwasm` command exits with: the application's,
    /// or 128 + the signal that ended it, as shells do.
    pub fn exit_code(&self) -> i32 {
        shell_status(self.status)
    }

    /// How the application ended, as a sentence's end ("exited with status
    /// 0", "was ended by signal 9 (SIGKILL)").
    pub fn ended(&self) -> String {
        describe_exit(self.status)
    }
    /// Every file the run wrote, each once: per process (the application
    /// and those it started, in the order of their journals) the sinks'
    /// files, then the plugins' (`report.html` among them), as each
    /// process's summary lists them (`rocwasm: wrote …`).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = Vec::new();
        for f in self.processes.iter().flat_map(|p| &p.files) {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
        files
    }
}

/// Runs `request`'s application under the profiler (steps 1–5 of the
/// module docs), printing to `console` what `rocwasm run` prints, and
/// returns how it ended. An error is returned only when the application
/// could not be started (or was refused); once it has run, its outcome
/// says how.
pub fn run(request: &RunRequest, console: &mut dyn Console) -> Result<RunOutcome> {
    let program = request.program.as_str();
    let options = request.install.load_options(request.fetcher.clone());
    let chain = chain_for(
        request.chain.as_deref(),
        &request.flags,
        Some(program),
        &options,
    )?;
    // A live run's summaries need traced domains (a replay's have the
    // recording's).
    chain.check_summary_has_data()?;
    let tool = request.install.tool_library().ok_or_else(|| {
        LaunchError::runtime(format!(
            "cannot find {TOOL_LIB} next to the rocwasm binary or in the target directory \
             (build it with `cargo build -p rocwasm-intercept`, or set ROCWASM_INTERCEPT_LIB)"
        ))
    })?;
    let sim_lib = match request.runtime {
        Runtime::Simulated => Some(request.install.sim_libs().ok_or_else(|| {
            LaunchError::runtime("--sim: cannot find the simulated runtime (run `cargo xtask build-sim`, or set ROCWASM_SIM_LIB)")
        })?),
        Runtime::Installed if !amd_runtime_installed() => match request.install.sim_libs() {
            Some(dir) => {
                errln!(
                    console,
                    "rocwasm: no AMD runtime (libamdhip64.so.5 / libhsa-runtime64.so.1) found; \
                     FALLING BACK to the simulated runtime in {} (pass --sim to choose it explicitly)",
                    dir.display()
                );
                Some(dir)
            }
            None => {
                return Err(LaunchError::runtime(
                    "no AMD runtime found (libamdhip64.so.5 / libhsa-runtime64.so.1); \
                     try --sim to run on the simulated runtime",
                ))
            }
        },
        Runtime::Installed => None,
    };

    let mut cmd = Command::new(program);
    cmd.args(&request.args);
    if let Some(dir) = &sim_lib {
        cmd.env(
            "LD_LIBRARY_PATH",
            prepend_list(dir, std::env::var_os("LD_LIBRARY_PATH"), ':'),
        );
    }
    if let Some(ranks) = &request.profile_ranks {
        let rank = ProcessInfo::current().rank();
        if !profiles_rank(ranks, &rank) {
            tracing::info!(%rank, ?ranks, "rank not profiled (--profile-mpi-ranks)");
            let mut child = cmd
                .spawn()
                .with_context(|| format!("cannot start {program}"))
                .map_err(LaunchError::Runtime)?;
            let status = child
                .wait()
                .with_context(|| format!("cannot start {program}"))
                .map_err(LaunchError::Runtime)?;
            return Ok(RunOutcome {
                status,
                pid: child.id(),
                profiled: false,
                measured_by: None,
                dir: None,
                summary: None,
                processes: Vec::new(),
                journal_kept: None,
            });
        }
    }

    let mut plan = run_plan(&chain, request);
    let admission = admit_plan(&plan)?;
    let measured_by = Measurer::choose(
        request.backend.unwrap_or(chain.settings.backend),
        program,
        &request.install,
    )?;
    if plan.collection.selected_regions && matches!(measured_by, Measurer::Sdk { .. }) {
        return Err(LaunchError::usage(
            "--selected-regions needs --backend builtin: the rocprofiler-sdk back end receives \
             its records after the fact and cannot tell which were made while the application \
             had paused collection (roctxProfilerPause)",
        ));
    }
    if !admission.native_tools && matches!(measured_by, Measurer::Sdk { .. }) {
        return Err(LaunchError::usage(
            "the site policy does not allow native rocprofiler-sdk tools \
             (capabilities.native_tools = false), and the rocprofiler-sdk back end runs \
             rocwasm's chain as one: use --backend builtin",
        ));
    }
    // Absolute: the application may change its directory.
    let journal = plan.journal_dir_for(std::process::id());
    let journal = std::path::absolute(&journal).unwrap_or(journal);
    plan.journal = Some(journal.clone());
    if !admission.native_tools {
        if let Some(tools) = std::env::var_os("ROCP_TOOL_LIBRARIES").filter(|v| !v.is_empty()) {
            return Err(LaunchError::usage(format!(
                "the site policy {} does not allow native rocprofiler-sdk tools \
                 (capabilities.native_tools = false), and ROCP_TOOL_LIBRARIES names {}",
                admission
                    .policy
                    .as_ref()
                    .map_or_else(String::new, |(file, _)| file.display().to_string()),
                tools.to_string_lossy()
            )));
        }
    }
    check_tool_libraries()?;
    // An earlier run's files where this one writes: said (or refused)
    // before anything starts.
    crate::earlier::check(&plan, None, request.strict, console)?;
    // The journal directory, last before the start: an error before it
    // leaves nothing behind. The plan beside the journals is for `rocwasm
    // write-journal`, should they outlive this run.
    let plan_file = journal.join(RunPlan::JOURNAL_PLAN_FILE);
    // The directories this run creates, removed again if nothing ran: the
    // journal directory (this process's own) with what it holds, then each
    // parent this run made, only while it is empty (another rank of an
    // MPI job may have put its files there in the meantime).
    let made: Vec<PathBuf> = journal
        .ancestors()
        .skip(1)
        .take_while(|d| !d.exists())
        .map(Path::to_path_buf)
        .collect();
    let unmake = || {
        let _ = std::fs::remove_dir_all(&journal);
        for dir in &made {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    };
    if let Err(e) =
        std::fs::create_dir_all(&journal).and_then(|()| std::fs::write(&plan_file, plan.to_json()))
    {
        unmake();
        return Err(LaunchError::Runtime(anyhow::Error::new(e).context(
            format!(
                "cannot create the record journal directory {}",
                journal.display()
            ),
        )));
    }
    let run_file = match write_run_file(&plan) {
        Ok(f) => f,
        Err(e) => {
            unmake();
            return Err(e);
        }
    };
    match &measured_by {
        Measurer::Builtin => cmd.env(RunPlan::ENV, &run_file),
        Measurer::Sdk { client, .. } => {
            // The SDK library measures; rocwasm's tool reads the plan. The
            // tool library, when it is the SDK, gets no plan of its own.
            cmd.env(
                "ROCP_TOOL_LIBRARIES",
                prepend_list(client, std::env::var_os("ROCP_TOOL_LIBRARIES"), ':'),
            );
            cmd.env(RunPlan::SDK_TOOL_ENV, &run_file)
        }
    };
    // rocwasm's own tool library intercepts (built-in), or is the SDK.
    let preload = match &measured_by {
        Measurer::Sdk {
            amd: Some(amd_sdk), ..
        } => amd_sdk.clone(),
        _ => tool.clone(),
    };
    // The requested preloads (a sanitizer's runtime) come first, as
    // rocprofv3 puts them.
    let ld_preload = request
        .preload
        .iter()
        .filter(|lib| !lib.is_empty())
        .rev()
        .fold(
            prepend_list(&preload, std::env::var_os("LD_PRELOAD"), ':'),
            |rest, lib| prepend_list(Path::new(lib), Some(rest), ':'),
        );
    cmd.env("LD_PRELOAD", ld_preload);
    if preload == tool {
        cmd.env(
            "HSA_TOOLS_LIB",
            prepend_list(&tool, std::env::var_os("HSA_TOOLS_LIB"), ' '),
        );
        // ROCm ≥ 6.2: rocprofiler-register hands the runtimes' dispatch
        // tables only to a tool it knows is present; naming any library here
        // says so, and the preloaded tool's `rocprofiler_set_api_table` is
        // the one it calls (it prefers an entry point that is already
        // loaded).
        if std::env::var_os(ROCPROFILER_REGISTER_LIBRARY).is_none() {
            cmd.env(ROCPROFILER_REGISTER_LIBRARY, &tool);
        }
    }
    tracing::info!(app = ?request.command(), tool = %tool.display(), sim = ?sim_lib, "launching");

    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            // Nothing ran: nothing to keep.
            unmake();
            let _ = std::fs::remove_file(&run_file);
            return Err(LaunchError::runtime(format!("cannot start {program}: {e}")));
        }
    };
    let pid = child.id();
    // Said once the application started (a failed start stays one line).
    errln!(console, "rocwasm: back end: {measured_by}");
    // `--write-during-run`: the outputs grow as the journals do, written
    // here while the application runs (it never waits for them).
    let mut following = BTreeMap::new();
    let status = if plan.output.write == WriteTiming::DuringRun {
        follow(&plan, &journal, &mut child, &mut following)
    } else {
        child.wait()
    }
    .map_err(|e| LaunchError::runtime(format!("waiting for the application: {e}")))?;
    let ended_ns = rocwasm_core::clock::now();
    let _ = std::fs::remove_file(&run_file);

    let written = write_outputs(
        &plan,
        &journal,
        Some((pid, status)),
        ended_ns,
        chain.output.summary,
        following,
        console,
    );
    let own_dir = written
        .processes
        .iter()
        .rfind(|w| w.pid == pid)
        .map(|w| w.dir.clone());
    let (dir, summary) = match written.own_summary {
        Some(summary) => (own_dir, Some(summary)),
        None => {
            let dir = plan.run_dir(&ProcessInfo::of_pid(pid));
            let summary = print_summary(&dir, chain.output.summary, status, console);
            (Some(dir), summary)
        }
    };
    Ok(RunOutcome {
        status,
        pid,
        profiled: true,
        measured_by: Some(measured_by),
        dir,
        summary,
        processes: written.processes,
        journal_kept: written.kept,
    })
}

/// True when `rank` (as `%rank%` expands: a number, `0` outside MPI) is one
/// of `ranks`.
fn profiles_rank(ranks: &[u32], rank: &str) -> bool {
    rank.trim().parse::<u32>().is_ok_and(|r| ranks.contains(&r))
}

/// The plan the profiled process runs for this chain and this request.
fn run_plan(chain: &Chain, request: &RunRequest) -> RunPlan {
    chain.to_plan(&PlanOptions {
        stats: request.flags.stats,
        default_plugin_cache: EngineConfig::default().cache_dir,
        api_log: std::env::var_os("ROCWASM_API_LOG").is_some(),
        command: request.command(),
    })
}

/// Writes the plan the application reads (`ROCWASM_RUN`) to a file of
/// the temporary directory, named after this process (and, from the
/// second run this process starts, numbered).
fn write_run_file(plan: &RunPlan) -> Result<PathBuf> {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    let name = match RUNS.fetch_add(1, Ordering::Relaxed) {
        0 => format!("rocwasm-run-{}.json", std::process::id()),
        n => format!("rocwasm-run-{}-{n}.json", std::process::id()),
    };
    let path = std::env::temp_dir().join(name);
    std::fs::write(&path, plan.to_json())
        .with_context(|| format!("cannot write {}", path.display()))
        .map_err(LaunchError::Runtime)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_config::LoadOptions;

    fn default_chain() -> Chain {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../examples/chains/default.toml");
        Chain::load(
            &path,
            &LoadOptions {
                plugin_path: vec![],
                check_plugins: false,
                fetcher: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn only_listed_ranks_are_profiled() {
        assert!(profiles_rank(&[0, 2], "2"));
        assert!(!profiles_rank(&[0, 2], "1"));
        // Outside MPI the rank is 0.
        assert!(profiles_rank(&[0], "0"));
        assert!(!profiles_rank(&[1], "garbage"));
    }

    #[test]
    fn lists_are_prepended_once() {
        let tool = Path::new("/lib/tool.so");
        assert_eq!(prepend_list(tool, None, ':'), "/lib/tool.so");
        assert_eq!(
            prepend_list(tool, Some("/a.so::/lib/tool.so:/b.so".into()), ':'),
            "/lib/tool.so:/a.so:/b.so"
        );
        assert_eq!(
            prepend_list(tool, Some("/a.so /lib/tool.so".into()), ' '),
            "/lib/tool.so /a.so"
        );
    }

    #[test]
    fn the_command_is_the_program_then_its_arguments() {
        let request = RunRequest {
            program: "./app".into(),
            args: vec!["-n".into(), "4".into()],
            ..RunRequest::default()
        };
        assert_eq!(request.command(), ["./app", "-n", "4"]);
        assert_eq!(request.runtime, Runtime::Installed);
    }

    #[test]
    fn the_default_chain_reaches_the_run_file_by_name() {
        let plan = default_chain().to_plan(&PlanOptions::default());
        // What the profiled process reads: the plan file, kinds and
        // operations by name.
        let file: serde_json::Value = serde_json::from_str(&plan.to_json()).unwrap();
        let stages = file["stages"].as_array().unwrap();
        let names: Vec<&str> = stages.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]
        );
        let [ks, api, bw, report] = &stages[..] else {
            unreachable!()
        };
        assert_eq!(ks["domains"], serde_json::json!(["KERNEL_DISPATCH"]));
        assert_eq!(ks["kinds"], serde_json::json!(["KERNEL_DISPATCH"]));
        assert_eq!(ks["world"], "analysis");
        assert_eq!(ks["output"], "run-directory");
        assert_eq!(
            api["domains"],
            serde_json::json!(["HIP_RUNTIME_API", "HIP_COMPILER_API"])
        );
        assert_eq!(api["limits"]["memory_bytes"], 64 << 20);
        assert_eq!(api["limits"]["deadline_ns"], 500_000_000);
        assert_eq!(bw["output"]["subdirectory"], "bandwidth");
        assert_eq!(
            bw["operations"]["MEMORY_COPY"],
            serde_json::json!(["MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST"])
        );
        assert_eq!(
            bw["failure"],
            serde_json::json!({"policy": "restart", "max": 3, "backoff_ns": 100_000_000})
        );
        assert_eq!(report["output"], "run-directory");
        assert_eq!(file["buffer"]["size"], 4 << 20);
        assert_eq!(file["buffer"]["policy"], "Lossless");
        assert!(plan.stages[2].wasm.is_absolute());
        // The run file round-trips through JSON unchanged.
        assert_eq!(RunPlan::from_json(&plan.to_json()).unwrap(), plan);
    }
}
