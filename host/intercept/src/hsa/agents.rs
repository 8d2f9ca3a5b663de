//! The HSA agents, enumerated once through the original table, with the
//! small ids records carry (`agent_id`: enumeration order, CPUs first as
//! the runtime lists them) and the memory pools each one owns (allocation
//! records name the agent of the pool allocated from).

use std::ffi::c_void;
use std::sync::OnceLock;

use rocwasm_core::{AgentInfo, AgentType};

use super::rt;

const INFO_NAME: i32 = 0;
const INFO_NODE: i32 = 16;
const INFO_DEVICE: i32 = 17;
const AMD_INFO_PRODUCT_NAME: i32 = 0xA009;

/// One HSA agent, as enumerated at discovery.
#[derive(Debug, Clone)]
pub struct Agent {
    /// The runtime's `hsa_agent_t` handle (what HSA calls pass).
    pub handle: u64,
    /// What records and the symbol table carry: `id` is the enumeration
    /// index (the records' `agent_id`), `node_id` the HSA node (rocprofv3's
    /// `Agent_Id` column), plus type, name (`gfx90a`) and product name.
    pub info: AgentInfo,
    /// `hsa_amd_memory_pool_t` handles of the agent's pools.
    pub pools: Vec<u64>,
}

fn all() -> &'static [Agent] {
    static AGENTS: OnceLock<Vec<Agent>> = OnceLock::new();
    AGENTS.get_or_init(|| {
        let mut handles: Vec<u64> = Vec::new();
        extern "C" fn collect(agent: u64, data: *mut c_void) -> i32 {
            // SAFETY: `data` is the `Vec` passed below, alive for the call.
            unsafe { &mut *(data as *mut Vec<u64>) }.push(agent);
            0
        }
        // SAFETY: the callback matches hsa_iterate_agents' contract.
        unsafe { rt::hsa_iterate_agents(collect, &mut handles as *mut _ as *mut c_void) };
        let agents: Vec<Agent> = handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| describe(i as u64, h))
            .collect();
        if let Some(s) = crate::session::active() {
            for a in &agents {
                s.symbols().insert_agent(a.info.clone());
            }
        }
        agents
    })
}

fn describe(id: u64, handle: u64) -> Agent {
    let mut device: u32 = 0;
    let mut node: u32 = 0;
    let mut name = [0u8; 64];
    let mut product = [0u8; 64];
    // SAFETY: each attribute writes at most the size of its out-buffer (HSA
    // documents NAME and PRODUCT_NAME as 64-byte strings, the rest as u32).
    unsafe {
        rt::hsa_agent_get_info(handle, INFO_DEVICE, &mut device as *mut _ as *mut c_void);
        rt::hsa_agent_get_info(handle, INFO_NODE, &mut node as *mut _ as *mut c_void);
        rt::hsa_agent_get_info(handle, INFO_NAME, name.as_mut_ptr() as *mut c_void);
        rt::hsa_agent_get_info(
            handle,
            AMD_INFO_PRODUCT_NAME,
            product.as_mut_ptr() as *mut c_void,
        );
    }
    let text = |b: &[u8]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).trim().to_string()
    };
    Agent {
        handle,
        pools: pools_of(handle),
        info: AgentInfo {
            id,
            node_id: node,
            agent_type: if device == 1 {
                AgentType::Gpu
            } else {
                AgentType::Cpu
            },
            name: text(&name),
            product_name: text(&product),
        },
    }
}

/// The agent's memory pools (none when the runtime lacks the extension).
fn pools_of(agent: u64) -> Vec<u64> {
    let mut pools: Vec<u64> = Vec::new();
    extern "C" fn collect(pool: u64, data: *mut c_void) -> i32 {
        // SAFETY: `data` is the `Vec` passed below, alive for the call.
        unsafe { &mut *(data as *mut Vec<u64>) }.push(pool);
        0
    }
    // SAFETY: the callback matches hsa_amd_agent_iterate_memory_pools'
    // contract; `pools` outlives the call.
    unsafe {
        rt::hsa_amd_agent_iterate_memory_pools(agent, collect, &mut pools as *mut _ as *mut c_void)
    };
    pools
}

/// The agent owning memory pool `pool`.
pub fn of_pool(pool: u64) -> Option<&'static Agent> {
    all().iter().find(|a| a.pools.contains(&pool))
}

/// The agent with this HSA handle.
pub fn by_handle(handle: u64) -> Option<&'static Agent> {
    all().iter().find(|a| a.handle == handle)
}

/// The record id of the agent with this handle (its handle when unknown).
pub fn id_of(handle: u64) -> u64 {
    by_handle(handle).map_or(handle, |a| a.info.id)
}

/// The first CPU agent: the host side of a rectangular copy, which names
/// only the GPU that does it.
pub fn host() -> Option<&'static Agent> {
    all().iter().find(|a| a.info.agent_type == AgentType::Cpu)
}

/// True when `handle` is a known GPU agent (false for CPUs and unknown handles).
pub fn is_gpu(handle: u64) -> bool {
    by_handle(handle).is_some_and(|a| a.info.agent_type == AgentType::Gpu)
}

/// Enumerates now (called once the tables are installed).
pub fn discover() {
    let _ = all();
}
