//! `agent.h`: the agents the run has seen, as `rocprofiler_agent_v0_t`.
//!
//! The struct is filled through AMD's measured offsets (the ABI table) by
//! `rocwasm_capi_convert::agents`, beside the tool's way back, with what
//! the HSA runtime reports of an agent (`AgentProperties`) and what follows
//! from it; what only the kernel driver's topology knows stays 0 and is
//! listed in `docs/NATIVE_TOOLS.md`.
//!
//! The list is the engine's symbol table. The tool library fills it before
//! native tools are initialized (starting the HSA runtime if the process
//! has one that has not started), so `initialize` sees the agents.
//!
//! Each answer is kept for the life of the process, since tools keep the
//! pointers they are given.

use std::ffi::{c_int, c_void};

use rocwasm_capi_convert::agents::{agent_to_c, AGENT};
use rocwasm_core::{AgentType, Status};

use crate::abi::{c_sizeof, enums};
use crate::guard::guard;
use crate::state::engine_if_bound;
use crate::status::Code;

pub use crate::abi::AgentsCallback;

fn build() -> Result<Vec<*const c_void>, Status> {
    let size = c_sizeof(AGENT).ok_or(Status::Error)?;
    let agents = engine_if_bound()
        .map(|e| e.symbols().agents())
        .unwrap_or_default();
    let mut out = Vec::new();
    let (mut cpus, mut gpus) = (0, 0);
    for a in &agents {
        let counter = if a.agent_type == AgentType::Gpu {
            &mut gpus
        } else {
            &mut cpus
        };
        let b = agent_to_c(a, *counter, size);
        *counter += 1;
        let bytes: &'static mut Vec<u64> = Box::leak(Box::new(b));
        out.push(bytes.as_ptr() as *const c_void);
    }
    Ok(out)
}

/// `rocprofiler_query_available_agents`: calls `callback` once with every
/// agent the run knows (version 0 only), and returns what the callback
/// returned.
///
/// `agent_size` is the `sizeof(rocprofiler_agent_v0_t)` the tool was built
/// with. As in AMD's SDK, any size up to ours is served (the struct only
/// grows at its end: a tool built with ROCm 7.0's headers passes 304, ours
/// is 312 since `rocprofiler_uuid_t` became 16 bytes, and reads every field
/// it knows where it expects it), and a larger one, from headers newer than
/// ours, gets `ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI` without the
/// callback being called. A version other than 0 is an invalid argument.
///
/// # Safety
/// `callback` must be a function of the documented type; `user_data` is
/// passed to it untouched.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_available_agents(
    version: c_int,
    callback: Option<AgentsCallback>,
    agent_size: usize,
    user_data: *mut c_void,
) -> Code {
    let mut answer = None;
    let status = guard("rocprofiler_query_available_agents", || {
        let callback = callback.ok_or(Status::InvalidArgument)?;
        if i64::from(version) != enums::rocprofiler_agent_version::ROCPROFILER_AGENT_INFO_VERSION_0
        {
            return Err(Status::InvalidArgument);
        }
        if agent_size > c_sizeof(AGENT).ok_or(Status::Error)? {
            answer = Some(INCOMPATIBLE_ABI);
            return Ok(());
        }
        let mut agents = build()?;
        let (list, n) = (agents.as_mut_ptr(), agents.len());
        answer = crate::foreign::call_tool("a native tool's agent query callback", || {
            // SAFETY: the tool's callback with an array of `n` pointers to
            // agent structs that live as long as the process.
            unsafe { callback(version, list, n, user_data) }
        });
        // An exception: the query fails.
        if answer.is_none() {
            return Err(Status::Error);
        }
        Ok(())
    });
    answer
        .filter(|_| status == crate::status::SUCCESS)
        .unwrap_or(status)
}

/// `ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI`.
const INCOMPATIBLE_ABI: Code =
    enums::rocprofiler_status::ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI as Code;

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C-unwind" fn count_agents(
        _version: c_int,
        _agents: *mut *const c_void,
        n: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the `Option<usize>` the tests pass.
        unsafe { *(data as *mut Option<usize>) = Some(n) };
        // A status of the callback's own choosing, passed back as is.
        7
    }

    /// AMD's rule: sizes up to ours are served (a tool built with ROCm
    /// 7.0's 304-byte agent, ours, anything smaller), a larger one gets
    /// INCOMPATIBLE_ABI and no callback; the callback's status is returned.
    #[test]
    fn agent_sizes_follow_amds_versioning() {
        const VERSION_0: c_int =
            enums::rocprofiler_agent_version::ROCPROFILER_AGENT_INFO_VERSION_0 as c_int;
        let ours = c_sizeof(AGENT).unwrap();
        assert_eq!(ours, 312, "rocprofiler_agent_v0_t with the 16-byte uuid");
        let query = |size: usize| {
            let mut seen: Option<usize> = None;
            // SAFETY: a callback of the right type and a live `seen`.
            let status = unsafe {
                rocprofiler_query_available_agents(
                    VERSION_0,
                    Some(count_agents),
                    size,
                    &mut seen as *mut Option<usize> as *mut c_void,
                )
            };
            (status, seen.is_some())
        };
        for size in [304, ours, 8] {
            assert_eq!(query(size), (7, true), "agent size {size}");
        }
        for size in [ours + 8, 4096] {
            assert_eq!(query(size), (INCOMPATIBLE_ABI, false), "agent size {size}");
        }
        let mut seen: Option<usize> = None;
        // SAFETY: as above.
        let bad_version = unsafe {
            rocprofiler_query_available_agents(
                VERSION_0 + 1,
                Some(count_agents),
                ours,
                &mut seen as *mut Option<usize> as *mut c_void,
            )
        };
        assert_eq!(bad_version, crate::status::code(Status::InvalidArgument));
        assert!(seen.is_none());
    }
}
