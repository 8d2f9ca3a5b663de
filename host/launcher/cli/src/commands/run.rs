//! `rocwasm run [-c CHAIN] [flags] -- APP ARGS…`: profile an application.
//!
//! The launcher does everything that needs the command line, then gets out of
//! the way:
//!
//! 1. resolve the chain (chain file amended by flags, or the flags alone) and
//!    validate it — a bad chain fails with status 2 before anything starts;
//! 2. write the run plan (`ROCWASM_RUN`, a [`RunPlan`] from
//!    `Chain::to_plan`, the same plan `replay` runs) with the traced kinds,
//!    output directory template, formats, and the chain's stages;
//! 3. set `LD_PRELOAD` (appended to any existing value) and `HSA_TOOLS_LIB`
//!    to `librocwasm_intercept.so`, and `ROCPROFILER_REGISTER_LIBRARY` to it
//!    unless set (ROCm ≥ 6.2's rocprofiler-register then passes the HIP and
//!    HSA dispatch tables to the tool); with `--sim`, put the simulated
//!    runtime first on `LD_LIBRARY_PATH`;
//! 4. run the application, which only records: its tool library appends
//!    the outputs' records to a record journal per process in a journal
//!    directory made for this run (`rocwasm-pipeline`'s `journal` module),
//!    and keeps its output buffers' halves in files beside it;
//! 5. once it has ended, however it ended (exit, a crash, SIGKILL), write
//!    every output format from each journal and the records its buffers
//!    still held, print the summary (the plugins' tables, the host's
//!    statistics, how the application ended, failures), remove the journal
//!    directory, and exit with the application's status (a signal becomes
//!    128 + its number, as shells do).
//!
//! Under an MPI launcher (`mpirun -np 4 rocwasm run … -- ./app`) every rank
//! runs its own launcher, so every rank gets its own plan, outputs and
//! chain (put `%rank%` in `-d`). With `--profile-mpi-ranks 0,2` a rank that
//! is not listed skips steps 2 and 3: the application runs untouched (only
//! `--sim`'s library path, without which it has no runtime at all).

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use std::collections::BTreeMap;

use anyhow::Context;
use rocwasm_config::{Chain, PlanOptions};
use rocwasm_pipeline::JournalOutputs;
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_plugin_host::EngineConfig;

use crate::cli::RunArgs;

/// Read by ROCm ≥ 6.2's rocprofiler-register (see step 3 of the module docs).
const ROCPROFILER_REGISTER_LIBRARY: &str = "ROCPROFILER_REGISTER_LIBRARY";
use crate::commands::chain::{admit_plan, chain_for};
use crate::failure::{Failure, Result};

/// The tool library's file name.
pub(crate) const TOOL_LIB: &str = "librocwasm_intercept.so";

pub fn run(args: RunArgs) -> Result {
    // rocprofv3's options rocwasm does not support: one sentence, status 2.
    if let Some(refusal) = args.refused.refusal() {
        return Err(Failure::usage(refusal));
    }
    if args.list_avail {
        return list_avail();
    }
    let chain = chain_for(
        args.chain.as_deref(),
        &args.flags(),
        args.app.first().map(String::as_str),
    )?;
    // A live run's summaries need traced domains (a replay's have the
    // recording's).
    chain.check_summary_has_data()?;
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

    let mut cmd = Command::new(&args.app[0]);
    cmd.args(&args.app[1..]);
    if let Some(dir) = &sim_lib {
        cmd.env(
            "LD_LIBRARY_PATH",
            prepend_list(dir, std::env::var_os("LD_LIBRARY_PATH"), ':'),
        );
    }
    if let Some(ranks) = &args.profile_mpi_ranks {
        let rank = ProcessInfo::current().rank();
        if !profiles_rank(ranks, &rank) {
            tracing::info!(%rank, ?ranks, "rank not profiled (--profile-mpi-ranks)");
            let status = cmd
                .status()
                .with_context(|| format!("cannot start {}", args.app[0]))
                .map_err(Failure::Runtime)?;
            exit_with(status)
        }
    }

    let mut plan = run_plan(&chain, &args);
    let admission = admit_plan(&plan)?;
    let measured_by =
        Measurer::choose(args.backend.unwrap_or(chain.settings.backend), &args.app[0])?;
    if plan.collection.selected_regions && matches!(measured_by, Measurer::Sdk { .. }) {
        return Err(Failure::usage(
            "--selected-regions needs --backend builtin: the rocprofiler-sdk back end receives \
             its records after the fact and cannot tell which were made while the application \
             had paused collection (roctxProfilerPause)",
        ));
    }
    if !admission.native_tools && matches!(measured_by, Measurer::Sdk { .. }) {
        return Err(Failure::usage(
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
            return Err(Failure::usage(format!(
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
    crate::commands::chain::check_tool_libraries()?;
    // The journal directory, last before the start: an error before it
    // leaves nothing behind. The plan beside the journals is for `rocwasm
    // write-journal`, should they outlive this run.
    let plan_file = journal.join(RunPlan::JOURNAL_PLAN_FILE);
    // The first directory this run creates, removed again if nothing ran.
    let made = journal
        .ancestors()
        .take_while(|d| !d.exists())
        .last()
        .map(Path::to_path_buf);
    let unmake = || {
        let _ = std::fs::remove_dir_all(made.as_deref().unwrap_or(&journal));
    };
    std::fs::create_dir_all(&journal)
        .and_then(|()| std::fs::write(&plan_file, plan.to_json()))
        .with_context(|| {
            format!(
                "cannot create the record journal directory {}",
                journal.display()
            )
        })
        .map_err(Failure::Runtime)?;
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
    // --preload's libraries (a sanitizer's runtime) come first, as rocprofv3 puts them.
    let ld_preload = args
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
    tracing::info!(app = ?args.app, tool = %tool.display(), sim = ?sim_lib, "launching");

    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            // Nothing ran: nothing to keep.
            unmake();
            let _ = std::fs::remove_file(&run_file);
            return Err(Failure::runtime(format!(
                "cannot start {}: {e}",
                args.app[0]
            )));
        }
    };
    let pid = child.id();
    // Said once the application started (a failed start stays one line).
    eprintln!("rocwasm: back end: {measured_by}");
    // `--write-during-run`: the outputs grow as the journals do, written
    // here while the application runs (it never waits for them).
    let mut following = BTreeMap::new();
    let status = if plan.output.write == rocwasm_plan::WriteTiming::DuringRun {
        follow(&plan, &journal, &mut child, &mut following)
    } else {
        child.wait()
    }
    .map_err(|e| Failure::runtime(format!("waiting for the application: {e}")))?;
    let ended_ns = rocwasm_core::clock::now();
    let _ = std::fs::remove_file(&run_file);

    if !write_outputs(
        &plan,
        &journal,
        Some((pid, status)),
        ended_ns,
        chain.output.summary,
        following,
    ) {
        let dir = plan.run_dir(&ProcessInfo::of_pid(pid));
        print_summary(&dir, chain.output.summary, status);
    }
    exit_with(status)
}

/// Who measures the run (`--backend`, `[settings] backend`), resolved.
enum Measurer {
    /// rocwasm's interception.
    Builtin,
    /// A rocprofiler-sdk library with rocwasm's tool (`client`): AMD's
    /// (`amd`), else rocwasm's own tool library.
    Sdk {
        client: PathBuf,
        amd: Option<PathBuf>,
    },
}

/// rocwasm's rocprofiler-sdk tool's file name (`rocwasm-sdk-tool`).
pub(crate) const SDK_TOOL_LIB: &str = "librocwasm_sdk_tool.so";

impl Measurer {
    /// Resolves `backend` for `app`: `auto` is the SDK when AMD's library
    /// is installed and `app` links rocprofiler-register (its HIP registers
    /// with the SDK), else built-in.
    fn choose(backend: rocwasm_plan::Backend, app: &str) -> Result<Measurer> {
        use rocwasm_plan::Backend as B;
        let amd = amd_sdk_library();
        let sdk = match backend {
            B::Builtin => false,
            B::RocprofilerSdk => true,
            B::Auto => amd.is_some() && links_rocprofiler_register(app),
        };
        if !sdk {
            return Ok(Measurer::Builtin);
        }
        let client = find_installed("ROCWASM_SDK_TOOL_LIB", SDK_TOOL_LIB).ok_or_else(|| {
            Failure::runtime(format!(
                "--backend rocprofiler-sdk: cannot find {SDK_TOOL_LIB} next to the rocwasm binary \
                 or in the target directory (build it with `cargo build -p rocwasm-sdk-tool`, or \
                 set ROCWASM_SDK_TOOL_LIB)"
            ))
        })?;
        Ok(Measurer::Sdk { client, amd })
    }
}

impl std::fmt::Display for Measurer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Measurer::Builtin => write!(f, "builtin (rocwasm's interception)"),
            Measurer::Sdk { amd: Some(amd), .. } => {
                write!(f, "rocprofiler-sdk (AMD's {})", amd.display())
            }
            Measurer::Sdk { amd: None, .. } => write!(
                f,
                "rocprofiler-sdk (rocwasm's librocprofiler-sdk: no AMD library installed)"
            ),
        }
    }
}

/// AMD's `librocprofiler-sdk.so.1`: under `$ROCM_PATH/lib`, `/opt/rocm/lib`
/// or where the loader looks (`LD_LIBRARY_PATH`, the system directories).
fn amd_sdk_library() -> Option<PathBuf> {
    const NAME: &str = "librocprofiler-sdk.so.1";
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(root) = std::env::var_os("ROCM_PATH") {
        dirs.push(PathBuf::from(root).join("lib"));
    }
    dirs.extend(
        std::env::var("LD_LIBRARY_PATH")
            .unwrap_or_default()
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from),
    );
    for d in [
        "/opt/rocm/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter()
        .map(|d| d.join(NAME))
        // rocwasm's own library has this SONAME too (its file is named
        // after the crate): a file of this name is AMD's.
        .find(|p| p.is_file())
}

/// True when `app`'s dynamic dependencies include rocprofiler-register
/// (HIP ≥ 6.2 links it to hand its tables to the SDK).
fn links_rocprofiler_register(app: &str) -> bool {
    std::process::Command::new("ldd")
        .arg(app)
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("librocprofiler-register"))
}

/// `rocwasm write-journal DIR`: the outputs of every journal in `dir`, as
/// the plan saved beside them says.
pub fn write_journal(dir: &Path) -> Result {
    let plan = RunPlan::load(&dir.join(RunPlan::JOURNAL_PLAN_FILE)).map_err(|e| {
        Failure::usage(format!(
            "{e} (is {} a record journal directory that `rocwasm run` left?)",
            dir.display()
        ))
    })?;
    let journals = rocwasm_journal::journals_in(dir)
        .with_context(|| format!("cannot read {}", dir.display()))
        .map_err(Failure::Runtime)?;
    if journals.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no journal (*.journal) in it",
            dir.display()
        )));
    }
    let now = rocwasm_core::clock::now();
    write_outputs(&plan, dir, None, now, false, BTreeMap::new());
    if dir.exists() {
        return Err(Failure::runtime(format!(
            "some outputs could not be written; {} is kept",
            dir.display()
        )));
    }
    Ok(())
}

/// Writes every process's outputs from its journal (step 5 of the module
/// docs) and prints the application's summary; false when the application
/// left no journal (it never started profiling). The journal directory is
/// removed when every journal was written.
fn write_outputs(
    plan: &RunPlan,
    journal: &Path,
    app: Option<(u32, std::process::ExitStatus)>,
    ended_ns: u64,
    tables: bool,
    mut following: BTreeMap<PathBuf, JournalOutputs>,
) -> bool {
    let journals = match rocwasm_journal::journals_in(journal) {
        Ok(j) => j,
        Err(e) => {
            eprintln!(
                "rocwasm: cannot read the record journal directory {}: {e}",
                journal.display()
            );
            return false;
        }
    };
    let app_pid = app.map(|(pid, _)| pid);
    let ended =
        app.map(|(pid, status)| format!("the application (pid {pid}) {}", describe_exit(status)));
    let stem_of = |p: &Path| {
        p.file_stem()
            .and_then(|s| s.to_str())
            .and_then(rocwasm_journal::parse_stem)
    };
    // The application's own summary is its last image's (after an `exec`).
    let last_image_of_app = journals
        .iter()
        .rfind(|p| app_pid.is_some() && stem_of(p).map(|(pid, _)| pid) == app_pid);
    let mut printed = false;
    let mut kept = false;
    for (i, path) in journals.iter().enumerate() {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if size >= 64 << 20 {
            eprintln!(
                "rocwasm: writing the output files from {} MB of journaled records…",
                size >> 20
            );
        }
        let own = Some(path) == last_image_of_app;
        let pid = stem_of(path).map(|(pid, _)| pid);
        // An image that `exec`ed another program before recording anything
        // (`sh -c 'exec app'`): the next image's journal is the process's.
        let later_image = journals[i + 1..]
            .iter()
            .any(|p| stem_of(p).map(|(q, _)| q) == pid);
        if later_image
            && !following.contains_key(path)
            && !rocwasm_pipeline::journal_holds_records(path)
        {
            continue;
        }
        let said = ended.as_deref().filter(|_| own);
        let written = match following.remove(path) {
            Some(outputs) => outputs.finish(said, ended_ns),
            None => rocwasm_pipeline::write_from_journal(plan, path, said, ended_ns),
        };
        match written {
            Ok(w) if own => {
                if tables {
                    print!("{}", w.summary);
                } else {
                    for line in w.summary.lines().filter(|l| l.starts_with("rocwasm:")) {
                        println!("{line}");
                    }
                }
                printed = true;
            }
            Ok(w) => println!(
                "rocwasm: process {} ({}): outputs and summary in {}",
                w.pid,
                if w.finished {
                    "finished"
                } else {
                    "did not finish profiling"
                },
                w.dir.display()
            ),
            Err(e) => {
                eprintln!("rocwasm: {e:#}");
                kept = true;
            }
        }
    }
    // For a bug report: the journals as the processes left them.
    let kept = kept || std::env::var_os("ROCWASM_KEEP_JOURNAL").is_some();
    if kept {
        eprintln!(
            "rocwasm: the record journal is kept in {} (`rocwasm write-journal {}` writes the outputs again once the cause is fixed)",
            journal.display(),
            journal.display()
        );
    } else if let Err(e) = std::fs::remove_dir_all(journal) {
        eprintln!("rocwasm: cannot remove {}: {e}", journal.display());
    }
    if let Some(ended) = ended.filter(|_| !printed && !journals.is_empty()) {
        println!("rocwasm: {ended}");
    }
    printed
}

/// Waits for `child` while writing what each journal of `dir` holds, every
/// 100 ms (`--write-during-run`); `open` keeps each journal's outputs for
/// [`write_outputs`] to finish. A journal that cannot be read further is
/// not followed any more; its end reports why.
fn follow(
    plan: &RunPlan,
    dir: &Path,
    child: &mut std::process::Child,
    open: &mut BTreeMap<PathBuf, JournalOutputs>,
) -> std::io::Result<std::process::ExitStatus> {
    let mut failed = std::collections::BTreeSet::new();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        for path in rocwasm_journal::journals_in(dir).unwrap_or_default() {
            if failed.contains(&path) {
                continue;
            }
            if !open.contains_key(&path) {
                // A journal whose header or metadata is not written yet
                // fails to open: tried again at the next round.
                if let Ok(Some(outputs)) = JournalOutputs::open(plan, &path) {
                    open.insert(path.clone(), outputs);
                }
            }
            if let Some(outputs) = open.get_mut(&path) {
                if outputs
                    .pump()
                    .and_then(|_| outputs.retry_incomplete())
                    .is_err()
                {
                    // Not followed any more: its end (`write_outputs`)
                    // meets the error again and reports it.
                    failed.insert(path);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// How a process ended, as a sentence's end: "exited with status 0",
/// "was ended by signal 9 (SIGKILL)".
fn describe_exit(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!(
            "was ended by signal {sig}{}{}",
            signal_name(sig).map_or(String::new(), |n| format!(" ({n})")),
            if status.core_dumped() {
                ", core dumped"
            } else {
                ""
            }
        ),
        _ => "ended".into(),
    }
}

/// The usual name of signal `sig` on Linux (the standard library has no
/// table of them).
fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return None,
    })
}

/// True when `rank` (as `%rank%` expands: a number, `0` outside MPI) is one
/// of `ranks`.
fn profiles_rank(ranks: &[u32], rank: &str) -> bool {
    rank.trim().parse::<u32>().is_ok_and(|r| ranks.contains(&r))
}

/// Exits with the application's status: its code, or 128 + the signal that
/// ended it, as shells do (bypassing the usual 0/1/2 mapping).
fn exit_with(status: std::process::ExitStatus) -> ! {
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    };
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(code)
}

/// The plan the profiled process runs for this chain and these flags.
fn run_plan(chain: &Chain, args: &RunArgs) -> RunPlan {
    chain.to_plan(&PlanOptions {
        stats: args.output.stats,
        default_plugin_cache: EngineConfig::default().cache_dir,
        api_log: std::env::var_os("ROCWASM_API_LOG").is_some(),
        command: args.app.clone(),
    })
}

fn write_run_file(plan: &RunPlan) -> Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("rocwasm-run-{}.json", std::process::id()));
    std::fs::write(&path, plan.to_json())
        .with_context(|| format!("cannot write {}", path.display()))
        .map_err(Failure::Runtime)?;
    Ok(path)
}

/// `rocwasm run -L` (rocprofv3's `--list-avail`): rocprofv3 lists
/// counters and PC sampling configurations; rocwasm has neither yet, so it
/// says so and lists what it can trace.
fn list_avail() -> Result {
    println!(
        "rocwasm: hardware counters and PC sampling are not implemented yet; \
         these are the tracing kinds it can record:"
    );
    crate::commands::kinds::kinds(crate::cli::KindsArgs {
        buffer: true,
        callback: false,
        kind: None,
    })
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
pub(crate) fn find_tool_library() -> Option<PathBuf> {
    find_installed("ROCWASM_INTERCEPT_LIB", TOOL_LIB)
}

/// A library rocwasm installs beside itself: the one environment variable
/// `env` names, else `name` next to the binary, in `../lib`, or in the
/// cargo target directory the binary was built into.
fn find_installed(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let candidates = [
        dir.join(name),
        dir.join("../lib").join(name),
        // `target/debug/deps/rocwasm-…` (test binaries) → `target/debug/`.
        dir.join("..").join(name),
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
fn print_summary(dir: &Path, tables: bool, status: std::process::ExitStatus) {
    let path = dir.join(RunPlan::SUMMARY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) if tables => print!("{text}"),
        Ok(text) => {
            for line in text.lines().filter(|l| l.starts_with("rocwasm:")) {
                println!("{line}");
            }
        }
        Err(_) if status.signal().is_some() => eprintln!(
            "rocwasm: the application {} before it started profiling: no outputs in {}",
            describe_exit(status),
            dir.display()
        ),
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
