//! The system/agent/ISA/pool/region query functions over the agents (one
//! CPU, then one GPU per scenario device) and their memory pools, which are
//! described in `topology`.

use std::ffi::c_void;

use crate::ffi::*;
use crate::runtime;
use crate::topology::{Agent, Pool, PoolKind};
use crate::util::{out, write_info, Info};

/// The agent with this handle.
pub fn find(handle: u64) -> Option<&'static Agent> {
    runtime::get().agents.iter().find(|a| a.handle == handle)
}

/// The pool with this handle and the agent owning it.
pub fn find_pool(handle: u64) -> Option<(&'static Agent, &'static Pool)> {
    runtime::get()
        .agents
        .iter()
        .find_map(|a| a.pools.iter().find(|p| p.handle == handle).map(|p| (a, p)))
}

/// The CPU agent's pools serve every agent: host memory backs everything.
fn accessible_pools(agent: &'static Agent) -> impl Iterator<Item = &'static Pool> {
    agent.pools.iter()
}

pub extern "C" fn hsa_system_get_info(attribute: u32, value: *mut c_void) -> hsa_status_t {
    let rt = match runtime::initialized() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    let info = match attribute {
        HSA_SYSTEM_INFO_VERSION_MAJOR => Info::U16(1),
        HSA_SYSTEM_INFO_VERSION_MINOR => Info::U16(1),
        HSA_SYSTEM_INFO_TIMESTAMP => Info::U64(rt.system_now()),
        HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY => Info::U64(1_000_000_000),
        HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT => Info::U64(u64::MAX),
        HSA_SYSTEM_INFO_ENDIANNESS => Info::U32(0),
        HSA_SYSTEM_INFO_MACHINE_MODEL => Info::U32(1),
        HSA_SYSTEM_INFO_EXTENSIONS => {
            // A 128-byte bitmask; bit 0x201 (AMD loader) is set.
            let mut mask = [0u8; 128];
            let bit = HSA_EXTENSION_AMD_LOADER as usize;
            mask[bit / 8] |= 1 << (bit % 8);
            return crate::util::copy_bytes(value, &mask);
        }
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    write_info(value, info)
}

pub extern "C" fn hsa_iterate_agents(
    callback: Option<extern "C" fn(hsa_agent_t, *mut c_void) -> hsa_status_t>,
    data: *mut c_void,
) -> hsa_status_t {
    let rt = match runtime::initialized() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    for agent in &rt.agents {
        match callback(
            Handle {
                handle: agent.handle,
            },
            data,
        ) {
            HSA_STATUS_SUCCESS => {}
            HSA_STATUS_INFO_BREAK => return HSA_STATUS_INFO_BREAK,
            status => return status,
        }
    }
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_agent_get_info(
    agent: hsa_agent_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    if let Err(e) = runtime::initialized() {
        return e;
    }
    let Some(a) = find(agent.handle) else {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    };
    let gpu = a.device.as_ref();
    let info = match attribute {
        HSA_AGENT_INFO_NAME => {
            Info::Fixed(gpu.map_or("Simulated CPU".into(), |d| d.arch.clone()), 64)
        }
        HSA_AGENT_INFO_VENDOR_NAME => {
            Info::Fixed(if gpu.is_some() { "AMD" } else { "CPU" }.into(), 64)
        }
        HSA_AGENT_INFO_FEATURE => Info::U32(if gpu.is_some() {
            HSA_QUEUE_FEATURE_KERNEL_DISPATCH
        } else {
            HSA_QUEUE_FEATURE_AGENT_DISPATCH
        }),
        HSA_AGENT_INFO_MACHINE_MODEL => Info::U32(1),
        HSA_AGENT_INFO_PROFILE => Info::U32(0),
        HSA_AGENT_INFO_WAVEFRONT_SIZE => Info::U32(if gpu.is_some() { 64 } else { 0 }),
        HSA_AGENT_INFO_WORKGROUP_MAX_DIM => {
            return crate::util::copy_bytes(value, &words16(&[1024, 1024, 1024]))
        }
        HSA_AGENT_INFO_WORKGROUP_MAX_SIZE => Info::U32(1024),
        HSA_AGENT_INFO_GRID_MAX_DIM => {
            return crate::util::copy_bytes(value, &words32(&[u32::MAX; 3]))
        }
        HSA_AGENT_INFO_GRID_MAX_SIZE => Info::U32(u32::MAX),
        HSA_AGENT_INFO_QUEUES_MAX => Info::U32(if gpu.is_some() { 128 } else { 0 }),
        HSA_AGENT_INFO_QUEUE_MIN_SIZE => Info::U32(if gpu.is_some() { 64 } else { 0 }),
        HSA_AGENT_INFO_QUEUE_MAX_SIZE => Info::U32(if gpu.is_some() { 131072 } else { 0 }),
        HSA_AGENT_INFO_QUEUE_TYPE => Info::U32(HSA_QUEUE_TYPE_MULTI),
        HSA_AGENT_INFO_NODE => Info::U32(a.node),
        HSA_AGENT_INFO_DEVICE => Info::U32(if gpu.is_some() {
            HSA_DEVICE_TYPE_GPU
        } else {
            HSA_DEVICE_TYPE_CPU
        }),
        HSA_AGENT_INFO_CACHE_SIZE => {
            return crate::util::copy_bytes(value, &words32(&[16 << 10, 8 << 20, 0, 0]))
        }
        HSA_AGENT_INFO_ISA => Info::U64(a.isa().unwrap_or(0)),
        HSA_AGENT_INFO_VERSION_MAJOR => Info::U16(1),
        HSA_AGENT_INFO_VERSION_MINOR => Info::U16(1),
        HSA_AMD_AGENT_INFO_CHIP_ID => Info::U32(if gpu.is_some() { 0x740f } else { 0 }),
        HSA_AMD_AGENT_INFO_CACHELINE_SIZE => Info::U32(64),
        HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT => Info::U32(gpu.map_or(2, |d| d.compute_units)),
        HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY => Info::U32(gpu.map_or(3000, |d| d.clock_mhz)),
        HSA_AMD_AGENT_INFO_DRIVER_NODE_ID => Info::U32(a.node),
        HSA_AMD_AGENT_INFO_BDFID => Info::U32(a.node << 8),
        HSA_AMD_AGENT_INFO_PRODUCT_NAME => {
            Info::Fixed(gpu.map_or("Simulated CPU".into(), |d| d.name.clone()), 64)
        }
        HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU => Info::U32(32),
        HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU => Info::U32(4),
        HSA_AMD_AGENT_INFO_UUID => Info::Fixed(format!("GPU-sim{:016x}", a.handle), 21),
        HSA_AMD_AGENT_INFO_ASIC_REVISION => Info::U32(0),
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    write_info(value, info)
}

fn words16(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

fn words32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

pub extern "C" fn hsa_agent_iterate_isas(
    agent: hsa_agent_t,
    callback: Option<extern "C" fn(hsa_isa_t, *mut c_void) -> hsa_status_t>,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(a) = find(agent.handle) else {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    };
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    match a.isa() {
        Some(isa) => callback(Handle { handle: isa }, data),
        None => HSA_STATUS_SUCCESS,
    }
}

pub extern "C" fn hsa_isa_get_info_alt(
    isa: hsa_isa_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some(a) = runtime::get()
        .agents
        .iter()
        .find(|a| a.isa() == Some(isa.handle))
    else {
        return HSA_STATUS_ERROR_INVALID_ISA;
    };
    let name = a.isa_name().unwrap_or_default();
    match attribute {
        HSA_ISA_INFO_NAME_LENGTH => write_info(value, Info::U32(name.len() as u32 + 1)),
        HSA_ISA_INFO_NAME => crate::util::copy_bytes(value, format!("{name}\0").as_bytes()),
        _ => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}

pub extern "C" fn hsa_isa_from_name(
    name: *const std::ffi::c_char,
    isa: *mut hsa_isa_t,
) -> hsa_status_t {
    let Some(name) = crate::util::c_str(name) else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    match runtime::get()
        .agents
        .iter()
        .find(|a| a.isa_name().as_deref() == Some(name.as_str()))
    {
        Some(a) => out(
            isa,
            Handle {
                handle: a.isa().unwrap_or(0),
            },
        ),
        None => 0x1017, // HSA_STATUS_ERROR_INVALID_ISA_NAME
    }
}

type PoolCallback = Option<extern "C" fn(Handle, *mut c_void) -> hsa_status_t>;

pub extern "C" fn hsa_amd_agent_iterate_memory_pools(
    agent: hsa_agent_t,
    callback: PoolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(a) = find(agent.handle) else {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    };
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    for pool in accessible_pools(a) {
        match callback(
            Handle {
                handle: pool.handle,
            },
            data,
        ) {
            HSA_STATUS_SUCCESS => {}
            status => return status,
        }
    }
    HSA_STATUS_SUCCESS
}

/// Regions are the same memory as pools, under the older API.
pub extern "C" fn hsa_agent_iterate_regions(
    agent: hsa_agent_t,
    callback: PoolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    hsa_amd_agent_iterate_memory_pools(agent, callback, data)
}

fn global_flags(kind: PoolKind) -> u32 {
    match kind {
        PoolKind::DeviceCoarse => GLOBAL_FLAG_COARSE_GRAINED,
        PoolKind::SystemFine => GLOBAL_FLAG_FINE_GRAINED,
        PoolKind::Kernarg => GLOBAL_FLAG_KERNARG | GLOBAL_FLAG_FINE_GRAINED,
    }
}

pub extern "C" fn hsa_amd_memory_pool_get_info(
    pool: hsa_amd_memory_pool_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some((_, p)) = find_pool(pool.handle) else {
        return HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    };
    let info = match attribute {
        HSA_AMD_MEMORY_POOL_INFO_SEGMENT => Info::U32(HSA_AMD_SEGMENT_GLOBAL),
        HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS => Info::U32(global_flags(p.kind)),
        HSA_AMD_MEMORY_POOL_INFO_SIZE => Info::U64(p.size),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED => Info::bool(true),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE => Info::U64(4096),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => Info::U64(4096),
        HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL => Info::bool(p.kind != PoolKind::DeviceCoarse),
        HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE => Info::U64(p.size),
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    write_info(value, info)
}

pub extern "C" fn hsa_region_get_info(
    region: hsa_region_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some((_, p)) = find_pool(region.handle) else {
        return HSA_STATUS_ERROR_INVALID_REGION;
    };
    let info = match attribute {
        HSA_REGION_INFO_SEGMENT => Info::U32(HSA_REGION_SEGMENT_GLOBAL),
        HSA_REGION_INFO_GLOBAL_FLAGS => Info::U32(global_flags(p.kind)),
        HSA_REGION_INFO_SIZE | HSA_REGION_INFO_ALLOC_MAX_SIZE => Info::U64(p.size),
        HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED => Info::bool(true),
        HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE | HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT => {
            Info::U64(4096)
        }
        _ => return HSA_STATUS_ERROR_INVALID_ARGUMENT,
    };
    write_info(value, info)
}

pub extern "C" fn hsa_amd_agent_memory_pool_get_info(
    agent: hsa_agent_t,
    pool: hsa_amd_memory_pool_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    if find(agent.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    if find_pool(pool.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    }
    match attribute {
        // Host memory backs every pool, so every agent may access every pool.
        HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS => write_info(
            value,
            Info::U32(HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT),
        ),
        1 => write_info(value, Info::U32(1)), // NUM_LINK_HOPS
        _ => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}
