//! `rocwasm run [-c CHAIN] [flags] -- APP ARGS…`: profile an application.
//!
//! The chain is built and validated here (so a bad chain or flag fails with
//! status 2 before anything starts); launching the application with the
//! in-process tool belongs to the interception work and is not wired yet.

use crate::cli::RunArgs;
use crate::commands::chain::chain_for;
use crate::failure::{Failure, Result};

pub fn run(args: RunArgs) -> Result {
    let chain = chain_for(args.chain.as_deref(), &args.flags())?;
    tracing::info!(app = ?args.app, sim = args.sim, stages = chain.stages.len(), "run requested");
    Err(Failure::runtime("`rocwasm run` is not implemented yet"))
}
