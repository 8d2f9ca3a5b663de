//! `rocwasm run [-c CHAIN] [flags] -- APP ARGS…`: profile an application.
//!
//! The run is `rocwasm_launch::run` (its module docs say what a run does,
//! step by step); this command turns the arguments into its request, says
//! no to rocprofv3's options rocwasm does not support (status 2), answers
//! `-L` itself, and exits with the application's status (a signal becomes
//! 128 + its number, as shells do).

use std::path::Path;

use rocwasm_launch::{Install, RunRequest, Runtime};

use crate::cli::RunArgs;
use crate::failure::{Failure, Result};
use crate::terminal::Terminal;

pub fn run(args: RunArgs) -> Result {
    // rocprofv3's options rocwasm does not support: one sentence, status 2.
    if let Some(refusal) = args.refused.refusal() {
        return Err(Failure::usage(refusal));
    }
    if args.list_avail {
        return list_avail();
    }
    if let Some(input) = args.input.clone() {
        return passes(args, &input);
    }
    if !args.pmc.is_empty() {
        check_pmc(&args.pmc, &args)?;
    }
    let outcome = rocwasm_launch::run(&request(&args), &mut Terminal::new())?;
    exit_with(outcome.exit_code())
}

/// `-i FILE`: the program once per pass of the input file, each pass's
/// counters checked before the first runs, each pass's outputs in its own
/// subdirectory. Exits with the first failing pass's status (the later
/// passes still run, as rocprofv3's do).
fn passes(args: RunArgs, input: &Path) -> Result {
    use rocwasm_launch::counters;
    if !args.pmc.is_empty() {
        return Err(Failure::usage(format!(
            "--pmc and -i {} both name counters: give them in one place",
            input.display()
        )));
    }
    let passes = counters::read_input(input)?;
    for pass in &passes {
        check_pmc(&pass.pmc, &args)?;
    }
    let base = args
        .output
        .output_directory
        .clone()
        .unwrap_or_else(|| rocwasm_config::DEFAULT_OUTPUT_DIRECTORY.to_string());
    let mut status = 0;
    let mut terminal = Terminal::new();
    for (i, pass) in passes.iter().enumerate() {
        eprintln!(
            "rocwasm: pass {} of {} ({}): --pmc {}",
            i + 1,
            passes.len(),
            pass.subdirectory,
            pass.pmc.join(" ")
        );
        let mut req = request(&args);
        req.flags.pmc = pass.pmc.clone();
        req.flags.output_directory = Some(format!("{base}/{}", pass.subdirectory));
        let outcome = rocwasm_launch::run(&req, &mut terminal)?;
        if status == 0 {
            status = outcome.exit_code();
        }
    }
    exit_with(status)
}

/// `--pmc`: on the simulated GPU the set is checked against every GPU
/// before the program starts (an unknown name, a `:device=N` with no such
/// GPU, a counter the GPU cannot count or a set over a block's registers:
/// status 2, with the reason). On an installed ROCm only the
/// rocprofiler-sdk back end counts (the SDK checks the set, and the run
/// says what it refuses).
fn check_pmc(pmc: &[String], args: &RunArgs) -> Result {
    use rocwasm_launch::counters;
    if !args.sim {
        if args.backend == Some(rocwasm_plan::Backend::RocprofilerSdk) {
            counters::parse_pmc(pmc)?;
            return Ok(());
        }
        return Err(Failure::usage(
            "--pmc counts the simulated GPU's counters (add --sim), or a real GPU's through \
             rocprofiler-sdk (--backend rocprofiler-sdk): rocwasm's own interception does not \
             write the AQL profiling packets a real GPU's counters need",
        ));
    }
    let defs = counters::definitions(args.counter_defs.as_deref())?;
    let agents = counters::agents(&defs)?;
    let requested = counters::parse_pmc(pmc)?;
    counters::check(&agents, &requested)?;
    Ok(())
}

/// The library's request for these arguments, with this binary's files.
fn request(args: &RunArgs) -> RunRequest {
    let mut app = args.app.iter().cloned();
    RunRequest {
        program: app.next().unwrap_or_default(),
        args: app.collect(),
        chain: args.chain.clone(),
        flags: args.flags(),
        runtime: if args.sim {
            Runtime::Simulated
        } else {
            Runtime::Installed
        },
        backend: args.backend,
        profile_ranks: args.profile_mpi_ranks.clone(),
        preload: args.preload.clone(),
        install: Install::current_exe(),
        fetcher: crate::commands::shipping::fetcher(),
        strict: args.strict,
    }
}

/// `rocwasm write-journal DIR`: the outputs of every journal in `dir`, as
/// the plan saved beside them says.
pub fn write_journal(dir: &Path) -> Result {
    rocwasm_launch::write_journal(dir, &mut Terminal::new())?;
    Ok(())
}

/// Exits with the application's status, bypassing the usual 0/1/2 mapping.
fn exit_with(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(code)
}

/// `rocwasm run -L` (rocprofv3's `--list-avail`): the GPUs' counters (as
/// `rocwasm avail list`), then what rocwasm can trace; PC sampling is not
/// implemented yet.
fn list_avail() -> Result {
    crate::commands::avail::avail(crate::cli::AvailArgs {
        device: None,
        counter_defs: None,
        command: crate::cli::AvailCommand::List {
            pmc: true,
            agent: false,
        },
    })?;
    println!(
        "rocwasm: PC sampling is not implemented yet; these are the tracing kinds it can record:"
    );
    crate::commands::kinds::kinds(crate::cli::KindsArgs {
        buffer: true,
        callback: false,
        kind: None,
    })
}
