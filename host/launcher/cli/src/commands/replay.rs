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
use crate::failure::Result;
use crate::terminal::Terminal;

pub fn replay(args: ReplayArgs) -> Result {
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
