//! `rocwasm replay PATH [-c CHAIN] [--stats -d -o --output-format]`: drive a
//! chain with a recorded rocprofv3 trace, as if the run were live.
//!
//! The replay is `rocwasm_launch::replay` (its module docs say what is
//! printed where); this command turns the arguments into its request.
//!
//! Exit status: 2 when PATH does not exist or the chain is invalid, and
//! with `--strict` when a record cannot be mapped or a file is cut short
//! (one line: `FILE:LINE: what`); 1 when the trace cannot be read at all
//! (one line: `FILE:LINE: what is wrong`), a plugin cannot be loaded, a
//! stage with `on_failure = "abort"` fails, or an output cannot be written
//! (a refused claim included).

use rocwasm_launch::{Install, ReplayRequest};

use crate::cli::ReplayArgs;
use crate::failure::{Failure, Result};
use crate::terminal::Terminal;

pub fn replay(args: ReplayArgs) -> Result {
    if let Some(scheduler) = &args.dask {
        return on_dask(&args, scheduler);
    }
    let request = ReplayRequest {
        flags: args.flags(),
        paths: args.paths,
        chain: args.chain,
        strict: args.strict,
        summary_by_rank: args.summary_by_rank,
        install: Install::current_exe(),
        fetcher: crate::commands::shipping::fetcher(),
    };
    rocwasm_launch::replay(&request, &mut Terminal::new())?.verdict()?;
    Ok(())
}

/// `--dask SCHEDULER`: the Python package's `rocwasm.dask` runs the chain
/// (`python3 -m rocwasm._dask_cli`), its output passed through.
fn on_dask(args: &ReplayArgs, scheduler: &str) -> Result {
    let chain = args.chain.as_ref().expect("clap requires -c with --dask");
    let installed = std::process::Command::new("python3")
        .args(["-c", "import rocwasm.dask"])
        .output();
    match installed {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            return Err(Failure::usage(format!(
                "--dask needs the Python package rocwasm and Dask: `cargo xtask wheel`, then \
                 `python3 -m pip install 'target/wheels/rocwasm-….whl[dask]'` ({})",
                String::from_utf8_lossy(&o.stderr)
                    .trim()
                    .lines()
                    .last()
                    .unwrap_or("")
            )))
        }
        Err(e) => return Err(Failure::usage(format!("--dask needs python3: {e}"))),
    }
    let mut cmd = std::process::Command::new("python3");
    cmd.args([
        "-m",
        "rocwasm._dask_cli",
        "--scheduler",
        scheduler,
        "--chain",
    ])
    .arg(chain);
    if let Some(dir) = &args.output.output_directory {
        cmd.arg("--output-dir").arg(dir);
    }
    cmd.arg("--").args(&args.paths);
    let status = cmd
        .status()
        .map_err(|e| Failure::usage(format!("cannot run python3: {e}")))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(2) => Err(Failure::usage(
            "the Dask analysis refused its arguments (above)",
        )),
        _ => Err(Failure::runtime(format!(
            "the Dask analysis failed ({status}; above)"
        ))),
    }
}
