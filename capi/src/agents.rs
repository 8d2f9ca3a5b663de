//! `agent.h`: the agents the run has seen, as `rocprofiler_agent_v0_t`.
//!
//! The struct is large and full of HSA/KFD topology types; it is filled
//! through AMD's measured offsets (the ABI table) rather than a mirror, and
//! only with what rocwasm knows of an agent: its id, type, names and node.
//! Every other field is 0 (documented in `docs/NATIVE_TOOLS.md`). The list
//! is the engine's symbol table, which interception fills when the HSA
//! runtime reports its agents: a tool that asks before the application's
//! first HIP or HSA call gets no agents.
//!
//! Each answer is kept for the life of the process, since tools keep the
//! pointers they are given.

use std::ffi::{c_int, c_void, CString};

use rocwasm_core::{AgentType, Status};

use crate::abi::{c_offsetof, c_sizeof, enums};
use crate::guard::guard;
use crate::state::engine_if_bound;
use crate::status::Code;

const AGENT: &str = "rocprofiler_agent_v0_t";

/// `rocprofiler_query_available_agents_cb_t`.
pub type AgentsCallback = unsafe extern "C" fn(
    version: c_int,
    agents: *mut *const c_void,
    num_agents: usize,
    user_data: *mut c_void,
) -> c_int;

/// One agent's bytes, written field by field at the table's offsets.
struct AgentBytes(Vec<u64>);

impl AgentBytes {
    fn put(&mut self, field: &str, bytes: &[u8]) {
        let Some(off) = c_offsetof(&format!("{AGENT}.{field}")) else {
            return;
        };
        // SAFETY: the buffer holds `sizeof(rocprofiler_agent_v0_t)` bytes and
        // every field's offset plus width lies inside it (the ABI table).
        let dst = unsafe { (self.0.as_mut_ptr() as *mut u8).add(off) };
        if off + bytes.len() <= self.0.len() * 8 {
            // SAFETY: in bounds, checked above; the regions do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        }
    }
}

fn build() -> Result<Vec<*const c_void>, Status> {
    let size = c_sizeof(AGENT).ok_or(Status::Error)?;
    let agents = engine_if_bound()
        .map(|e| e.symbols().agents())
        .unwrap_or_default();
    let mut out = Vec::new();
    for a in agents {
        let mut b = AgentBytes(vec![0u64; size.div_ceil(8)]);
        b.put("size", &(size as u64).to_ne_bytes());
        b.put("id", &a.id.to_ne_bytes());
        let ty = match a.agent_type {
            AgentType::Cpu => enums::rocprofiler_agent_type::ROCPROFILER_AGENT_TYPE_CPU,
            AgentType::Gpu => enums::rocprofiler_agent_type::ROCPROFILER_AGENT_TYPE_GPU,
        } as i32;
        b.put("type", &ty.to_ne_bytes());
        b.put("node_id", &a.node_id.to_ne_bytes());
        b.put("logical_node_id", &(a.node_id as i32).to_ne_bytes());
        for (field, text) in [
            ("name", a.name.as_str()),
            ("product_name", a.product_name.as_str()),
            ("model_name", a.name.as_str()),
            ("vendor_name", "AMD"),
        ] {
            // Leaked: tools keep these pointers for the whole run.
            let c: &'static CString = Box::leak(Box::new(CString::new(text).unwrap_or_default()));
            b.put(field, &(c.as_ptr() as u64).to_ne_bytes());
        }
        let bytes: &'static mut Vec<u64> = Box::leak(Box::new(b.0));
        out.push(bytes.as_ptr() as *const c_void);
    }
    Ok(out)
}

/// `rocprofiler_query_available_agents`: calls `callback` once with every
/// agent the run knows (version 0 only).
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
    guard("rocprofiler_query_available_agents", || {
        let callback = callback.ok_or(Status::InvalidArgument)?;
        if i64::from(version) != enums::rocprofiler_agent_version::ROCPROFILER_AGENT_INFO_VERSION_0
        {
            return Err(Status::InvalidArgument);
        }
        if c_sizeof(AGENT).is_some_and(|s| agent_size > s) {
            return Err(Status::InvalidArgument);
        }
        let mut agents = build()?;
        // SAFETY: the tool's callback with an array of `agents.len()`
        // pointers to agent structs that live as long as the process.
        let status = unsafe { callback(version, agents.as_mut_ptr(), agents.len(), user_data) };
        if status == crate::status::SUCCESS {
            Ok(())
        } else {
            Err(Status::Error)
        }
    })
}
