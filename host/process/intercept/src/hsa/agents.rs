//! The HSA agents, enumerated once through the original table, with the
//! small ids records carry (`agent_id`: enumeration order, CPUs first as
//! the runtime lists them) and the memory pools each one owns (allocation
//! records name the agent of the pool allocated from).

use std::ffi::c_void;
use std::sync::OnceLock;

use rocwasm_core::{AgentInfo, AgentProperties, AgentType, Profiler};

use super::rt;

// `hsa_agent_info_t` and `hsa_amd_agent_info_t` attributes (hsa.h,
// hsa_ext_amd.h of ROCm 5.2).
const INFO_NAME: i32 = 0;
const INFO_WAVEFRONT_SIZE: i32 = 6;
const INFO_WORKGROUP_MAX_DIM: i32 = 7;
const INFO_WORKGROUP_MAX_SIZE: i32 = 8;
const INFO_GRID_MAX_DIM: i32 = 9;
const INFO_GRID_MAX_SIZE: i32 = 10;
const INFO_NODE: i32 = 16;
const INFO_DEVICE: i32 = 17;
const AMD_INFO_CHIP_ID: i32 = 0xA000;
const AMD_INFO_COMPUTE_UNIT_COUNT: i32 = 0xA002;
const AMD_INFO_MAX_CLOCK_FREQUENCY: i32 = 0xA003;
const AMD_INFO_BDFID: i32 = 0xA006;
const AMD_INFO_PRODUCT_NAME: i32 = 0xA009;
const AMD_INFO_MAX_WAVES_PER_CU: i32 = 0xA00A;
const AMD_INFO_NUM_SIMDS_PER_CU: i32 = 0xA00B;
const AMD_INFO_UUID: i32 = 0xA011;
// `hsa_amd_memory_pool_info_t`: the pool's segment (GLOBAL = 0) and size.
const POOL_INFO_SEGMENT: i32 = 0;
const POOL_INFO_SIZE: i32 = 2;
const SEGMENT_GLOBAL: u32 = 0;

/// One HSA agent, as enumerated at discovery.
#[derive(Debug, Clone)]
pub struct Agent {
    /// The runtime's `hsa_agent_t` handle (what HSA calls pass).
    pub handle: u64,
    /// What records and the symbol table carry: `id` is the enumeration
    /// index (the records' `agent_id`), `node_id` the HSA node (rocprofv3's
    /// `Agent_Id` column), type, name (`gfx90a`), product name and the
    /// hardware figures the runtime reports.
    pub info: AgentInfo,
    /// `hsa_amd_memory_pool_t` handles of the agent's pools.
    pub pools: Vec<u64>,
}

static AGENTS: OnceLock<Vec<Agent>> = OnceLock::new();

/// The agents, enumerated on first use through the runtime's original
/// table (so only once the tables are installed: see [`discover`]), and
/// added to the live session's symbol table.
fn all() -> &'static [Agent] {
    if let Some(agents) = AGENTS.get() {
        return agents;
    }
    let agents = AGENTS.get_or_init(enumerate);
    // Outside the initialisation: looking the session up may start a
    // deferred one, whose native tools ask for these very agents.
    if let Some(s) = crate::session::active() {
        publish(s.symbols(), agents);
    }
    agents
}

fn enumerate() -> Vec<Agent> {
    let mut handles: Vec<u64> = Vec::new();
    extern "C" fn collect(agent: u64, data: *mut c_void) -> i32 {
        // SAFETY: `data` is the `Vec` passed below, alive for the call.
        unsafe { &mut *(data as *mut Vec<u64>) }.push(agent);
        0
    }
    // SAFETY: the callback matches hsa_iterate_agents' contract.
    unsafe { rt::hsa_iterate_agents(collect, &mut handles as *mut _ as *mut c_void) };
    handles
        .into_iter()
        .enumerate()
        .map(|(i, h)| describe(i as u64, h))
        .collect()
}

fn publish(symbols: &rocwasm_core::SymbolTable, agents: &[Agent]) {
    for a in agents {
        symbols.insert_agent(a.info.clone());
    }
}

/// Makes the agents known to `profiler` before native tools are
/// initialized, as rocprofiler-sdk lists them from the start (it reads the
/// kernel driver's topology). When the HSA runtime has not started yet but
/// is loaded in the process (a HIP program before its first HIP call), it
/// is started here with `hsa_init` — what HIP's first call would do — and
/// the reference is kept for the process: the runtime then loads this
/// library as its tool and the agents are enumerated. A process without
/// the HSA runtime, or one whose runtime cannot start (no GPU), lists none.
pub fn publish_for_native_tools(profiler: &Profiler) {
    if AGENTS.get().is_none() && !rt::tables_installed() {
        start_runtime();
    }
    if rt::tables_installed() {
        publish(profiler.symbols(), all());
    }
}

/// Calls the loaded HSA runtime's `hsa_init`, if there is one.
fn start_runtime() {
    // SAFETY: looking a symbol up in the global scope; a NULL answer means
    // the runtime is not loaded.
    let init = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"hsa_init".as_ptr()) };
    if init.is_null() {
        return;
    }
    // SAFETY: `hsa_init` takes nothing and returns `hsa_status_t`.
    let init: extern "C" fn() -> i32 = unsafe { std::mem::transmute(init) };
    let status = init();
    if status != 0 && std::env::var_os("ROCWASM_DEBUG").is_some() {
        eprintln!("rocwasm: hsa_init for native tools' agents returned {status:#x}");
    }
}

fn describe(id: u64, handle: u64) -> Agent {
    let get = |attribute: i32, out: *mut c_void| {
        // SAFETY: every call below passes an out-buffer at least as large
        // as the attribute's documented type (u32, u16[3], u32[3], or a
        // 64-byte string); an attribute the runtime lacks leaves it zero.
        unsafe { rt::hsa_agent_get_info(handle, attribute, out) };
    };
    let u32_of = |attribute: i32| {
        let mut v: u32 = 0;
        get(attribute, &mut v as *mut u32 as *mut c_void);
        v
    };
    let text = |attribute: i32| {
        let mut b = [0u8; 64];
        get(attribute, b.as_mut_ptr() as *mut c_void);
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).trim().to_string()
    };
    let mut workgroup_dim = [0u16; 3];
    get(
        INFO_WORKGROUP_MAX_DIM,
        workgroup_dim.as_mut_ptr() as *mut c_void,
    );
    let mut grid_dim = [0u32; 3];
    get(INFO_GRID_MAX_DIM, grid_dim.as_mut_ptr() as *mut c_void);
    let pools = pools_of(handle);
    Agent {
        handle,
        info: AgentInfo {
            id,
            node_id: u32_of(INFO_NODE),
            agent_type: if u32_of(INFO_DEVICE) == 1 {
                AgentType::Gpu
            } else {
                AgentType::Cpu
            },
            name: text(INFO_NAME),
            product_name: text(AMD_INFO_PRODUCT_NAME),
            properties: AgentProperties {
                compute_units: u32_of(AMD_INFO_COMPUTE_UNIT_COUNT),
                simds_per_cu: u32_of(AMD_INFO_NUM_SIMDS_PER_CU),
                wavefront_size: u32_of(INFO_WAVEFRONT_SIZE),
                max_waves_per_cu: u32_of(AMD_INFO_MAX_WAVES_PER_CU),
                max_clock_mhz: u32_of(AMD_INFO_MAX_CLOCK_FREQUENCY),
                workgroup_max_size: u32_of(INFO_WORKGROUP_MAX_SIZE),
                workgroup_max_dim: workgroup_dim.map(u32::from),
                grid_max_size: u32_of(INFO_GRID_MAX_SIZE),
                grid_max_dim: grid_dim,
                chip_id: u32_of(AMD_INFO_CHIP_ID),
                location_id: u32_of(AMD_INFO_BDFID),
                local_memory_bytes: largest_global_pool(&pools),
                uuid: text(AMD_INFO_UUID),
            },
        },
        pools,
    }
}

/// Bytes of the largest global-segment pool among `pools`.
fn largest_global_pool(pools: &[u64]) -> u64 {
    pools
        .iter()
        .filter_map(|&p| {
            let (mut segment, mut size) = (u32::MAX, 0usize);
            // SAFETY: SEGMENT writes a u32 enum, SIZE a size_t, into locals.
            unsafe {
                rt::hsa_amd_memory_pool_get_info(
                    p,
                    POOL_INFO_SEGMENT,
                    &mut segment as *mut u32 as *mut c_void,
                );
                rt::hsa_amd_memory_pool_get_info(
                    p,
                    POOL_INFO_SIZE,
                    &mut size as *mut usize as *mut c_void,
                );
            }
            (segment == SEGMENT_GLOBAL).then_some(size as u64)
        })
        .max()
        .unwrap_or(0)
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

/// The agent with this record id.
pub fn by_id(id: u64) -> Option<&'static Agent> {
    all().iter().find(|a| a.info.id == id)
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
