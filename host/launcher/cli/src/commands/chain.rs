//! The chain loading `rocwasm check` shares with a run: this binary's
//! plugin search path and fetcher, and the site policy's admission (the
//! library's, `rocwasm_launch::chain_for`, `admit_plan`).

use rocwasm_config::LoadOptions;
use rocwasm_plan::RunPlan;
use rocwasm_policy::Admission;

use crate::failure::Result;

/// The standard plugin search path of this `rocwasm` binary.
pub fn load_options() -> LoadOptions {
    rocwasm_launch::Install::current_exe().load_options(crate::commands::shipping::fetcher())
}

/// Holds `plan` against the site policy in force before anything starts
/// (status 2 when it is malformed or refuses the plan).
pub fn admit_plan(plan: &RunPlan) -> Result<Admission> {
    Ok(rocwasm_launch::admit_plan(plan)?)
}
