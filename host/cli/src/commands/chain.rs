//! The chain a `run` or `replay` drives: a chain file amended by flags, or
//! the chain the flags alone describe, with stock plugins resolved.

use std::path::Path;

use rocwasm_config::{Chain, LoadOptions, TraceFlags};
use rocwasm_plan::RunPlan;
use rocwasm_policy::{admit, Admission, SitePolicy};

use crate::failure::{Failure, Result};

/// The standard plugin search path of this `rocwasm` binary.
pub fn load_options() -> LoadOptions {
    let exe = std::env::current_exe().ok();
    let options = LoadOptions {
        fetcher: crate::commands::shipping::fetcher(),
        ..LoadOptions::standard(exe.as_deref())
    };
    tracing::debug!(search_path = ?options.plugin_path, "plugin search path");
    options
}

/// Loads `file` (if any), applies `flags`, resolves stock plugins.
pub fn chain_for(file: Option<&Path>, flags: &TraceFlags) -> Result<Chain> {
    let options = load_options();
    let chain = match file {
        Some(file) => {
            let mut chain = Chain::load(file, &options)?;
            chain.apply_flags(flags)?;
            chain
        }
        // Native rocprofiler-sdk tools (`ROCP_TOOL_LIBRARIES`) are enough to
        // profile: the run then has our default outputs of nothing traced
        // and the tools' own.
        None if flags.is_empty() && native_tools_requested() => Chain::empty(),
        None => Chain::from_flags(flags)?,
    };
    let mut chain = chain;
    chain.resolve_plugins(&options.plugin_path)?;
    tracing::info!("chain:\n{}", chain.summary());
    Ok(chain)
}

/// Whether the environment names native rocprofiler-sdk tools for the
/// profiled process (`ROCP_TOOL_LIBRARIES`, which the tool library reads).
fn native_tools_requested() -> bool {
    std::env::var_os("ROCP_TOOL_LIBRARIES").is_some_and(|v| !v.is_empty())
}

/// Holds `plan` against the site policy in force (`/etc/rocwasm/policy.toml`,
/// see `rocwasm_policy::policy`) before anything starts: a malformed policy
/// or a refused plan is status 2, with the sentence that names the plugin,
/// the rule and the policy file.
pub fn admit_plan(plan: &RunPlan) -> Result<Admission> {
    let policy = SitePolicy::current()?;
    admit(plan, policy.as_ref()).map_err(Failure::usage)
}
