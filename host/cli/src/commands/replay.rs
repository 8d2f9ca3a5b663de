//! `rocwasm replay PATH [-c CHAIN] [--stats -d -o --output-format]`: drive a
//! chain with a recorded rocprofv3 trace.
//!
//! The chain is built and validated here; reading the trace and driving the
//! chain belong to the replay work and are not wired yet.

use crate::cli::ReplayArgs;
use crate::commands::chain::chain_for;
use crate::failure::{Failure, Result};

pub fn replay(args: ReplayArgs) -> Result {
    if !args.path.exists() {
        return Err(Failure::usage(format!(
            "{}: no such file or directory",
            args.path.display()
        )));
    }
    let flags = args.flags();
    // With flags alone and no --stats there is nothing to run on a replay.
    let chain = chain_for(args.chain.as_deref(), &flags)?;
    tracing::info!(path = %args.path.display(), stages = chain.stages.len(), "replay requested");
    Err(Failure::runtime("`rocwasm replay` is not implemented yet"))
}
