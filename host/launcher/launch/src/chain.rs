//! The chain a run or replay drives: a chain file amended by flags, or the
//! chain the flags alone describe, with stock plugins resolved; and the
//! checks made before anything starts (the site policy, native tools).

use std::path::Path;

use rocwasm_config::{Chain, LoadOptions, TraceFlags};
use rocwasm_plan::RunPlan;
use rocwasm_policy::{admit, Admission, SitePolicy};

use crate::error::{LaunchError, Result};
use crate::linked_tool::links_tool;

/// Loads `file` (if any) with `options`, applies `flags`, resolves stock
/// plugins. `program`: the program a live run starts (`None` for a
/// replay).
pub fn chain_for(
    file: Option<&Path>,
    flags: &TraceFlags,
    program: Option<&str>,
    options: &LoadOptions,
) -> Result<Chain> {
    let chain = match file {
        Some(file) => {
            let mut chain = Chain::load(file, options)?;
            chain.apply_flags(flags)?;
            chain
        }
        None => match Chain::from_flags(flags) {
            // Native rocprofiler-sdk tools are enough to profile, named in
            // `ROCP_TOOL_LIBRARIES` or linked into the program (as AMD's
            // samples are): the run then has the flags' settings (output
            // directory, …), nothing of ours traced, and the tools' own
            // records.
            Err(_) if native_tools_requested() || program.is_some_and(links_tool) => {
                let mut chain = Chain::empty();
                chain.apply_flags(flags)?;
                chain
            }
            chain => chain?,
        },
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

/// Refuses, before the application starts, a `ROCP_TOOL_LIBRARIES` entry
/// naming a file that does not exist (status 2): the tool library would
/// only report it in the summary after the run. Entries without a `/` are
/// looked up by the loader (`LD_LIBRARY_PATH`, …) and left to it.
pub fn check_tool_libraries() -> Result<()> {
    let Some(list) = std::env::var_os("ROCP_TOOL_LIBRARIES") else {
        return Ok(());
    };
    let list = list.to_string_lossy();
    let missing: Vec<&str> = list
        .split(':')
        .filter(|p| p.contains('/') && !Path::new(p).exists())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(LaunchError::usage(format!(
        "ROCP_TOOL_LIBRARIES names {} that does not exist: {} (fix or unset the variable; \
         nothing was started)",
        if missing.len() == 1 {
            "a native tool library"
        } else {
            "native tool libraries"
        },
        missing.join(", ")
    )))
}

/// Holds `plan` against the site policy in force (`/etc/rocwasm/policy.toml`,
/// see `rocwasm_policy::policy`) before anything starts: a malformed policy
/// or a refused plan is status 2, with the sentence that names the plugin,
/// the rule and the policy file.
pub fn admit_plan(plan: &RunPlan) -> Result<Admission> {
    let policy = SitePolicy::current()?;
    admit(plan, policy.as_ref()).map_err(LaunchError::usage)
}
