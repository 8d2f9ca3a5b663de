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
    if !args.pmc.is_empty() {
        check_pmc(&args)?;
    }
    let outcome = rocwasm_launch::run(&request(args), &mut Terminal::new())?;
    exit_with(outcome.exit_code())
}

/// `--pmc`: the set is checked against every GPU before the program
/// starts (an unknown name, a `:device=N` with no such GPU, a counter the
/// GPU cannot count or a set over a block's registers: status 2, with the
/// reason).
fn check_pmc(args: &RunArgs) -> Result {
    use rocwasm_launch::counters;
    let defs = counters::definitions(args.counter_defs.as_deref())?;
    let agents = counters::agents(&defs)?;
    let requested = counters::parse_pmc(&args.pmc)?;
    counters::check(&agents, &requested)?;
    Ok(())
}

/// The library's request for these arguments, with this binary's files.
fn request(args: RunArgs) -> RunRequest {
    let flags = args.flags();
    let mut app = args.app.into_iter();
    RunRequest {
        program: app.next().unwrap_or_default(),
        args: app.collect(),
        chain: args.chain,
        flags,
        runtime: if args.sim {
            Runtime::Simulated
        } else {
            Runtime::Installed
        },
        backend: args.backend,
        profile_ranks: args.profile_mpi_ranks,
        preload: args.preload,
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
