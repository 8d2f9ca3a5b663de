//! `rocwasm demo`: the first command of the README — profile the sample
//! application on the simulated runtime with `examples/chains/default.toml`.
//! Not wired yet: it needs `run` and the simulated runtime.

use crate::cli::DemoArgs;
use crate::failure::{Failure, Result};

pub fn demo(args: DemoArgs) -> Result {
    tracing::info!(?args, "demo requested");
    Err(Failure::runtime("`rocwasm demo` is not implemented yet"))
}
