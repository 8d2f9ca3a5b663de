//! `agent.h`: the agents the run has seen, as `rocprofiler_agent_v0_t`.
//!
//! The struct is large and full of KFD topology types; it is filled through
//! AMD's measured offsets (the ABI table) rather than a mirror, with what
//! the HSA runtime reports of an agent (`AgentProperties`): id, type,
//! names, node, compute units, SIMDs, wavefront size, waves per CU, clock,
//! work-group and grid limits, PCI ids, device memory, UUID, and what
//! follows from them (SIMD count, waves per SIMD, the `gfx` target
//! version). What only the kernel driver's topology knows (caches, memory
//! banks, I/O links, SDMA engines, firmware versions) stays 0 and is listed
//! in `docs/NATIVE_TOOLS.md`.
//!
//! The list is the engine's symbol table. The tool library fills it before
//! native tools are initialized (starting the HSA runtime if the process
//! has one that has not started), so `initialize` sees the agents.
//!
//! Each answer is kept for the life of the process, since tools keep the
//! pointers they are given.

use std::ffi::{c_int, c_void, CString};

use rocwasm_core::{AgentInfo, AgentType, Status};

use crate::abi::{c_offsetof, c_sizeof, enums};
use crate::guard::guard;
use crate::state::engine_if_bound;
use crate::status::Code;

const AGENT: &str = "rocprofiler_agent_v0_t";

/// PCI vendor id of AMD, what KFD reports for AMD GPUs.
const AMD_VENDOR_ID: u16 = 0x1002;

pub use crate::abi::AgentsCallback;

/// One agent's bytes, written field by field at the table's offsets.
struct AgentBytes(Vec<u64>);

impl AgentBytes {
    fn put(&mut self, field: &str, bytes: &[u8]) {
        let Some(off) = c_offsetof(&format!("{AGENT}.{field}")) else {
            return;
        };
        if off + bytes.len() > self.0.len() * 8 {
            return;
        }
        // SAFETY: in bounds of the buffer (checked above); the regions do
        // not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                (self.0.as_mut_ptr() as *mut u8).add(off),
                bytes.len(),
            )
        };
    }

    fn u32(&mut self, field: &str, v: u32) {
        self.put(field, &v.to_ne_bytes());
    }

    fn dim3(&mut self, field: &str, v: [u32; 3]) {
        let bytes: Vec<u8> = v.iter().flat_map(|w| w.to_ne_bytes()).collect();
        self.put(field, &bytes);
    }

    /// A string field: the pointer to a copy kept for the whole run.
    fn text(&mut self, field: &str, text: &str) {
        let c: &'static CString = Box::leak(Box::new(CString::new(text).unwrap_or_default()));
        self.put(field, &(c.as_ptr() as u64).to_ne_bytes());
    }
}

/// KFD's `gfx_target_version` from an ISA name: `gfx90a` → 90010 (major in
/// decimal, then minor and stepping as hex digits), `gfx1030` → 100300.
pub fn gfx_target_version(name: &str) -> u32 {
    let Some(digits) = name.strip_prefix("gfx") else {
        return 0;
    };
    let digits = digits.split(':').next().unwrap_or("");
    if digits.len() < 3 || !digits.is_ascii() {
        return 0;
    }
    let (major, rest) = digits.split_at(digits.len() - 2);
    let hex = |c: char| c.to_digit(16);
    match (
        major.parse::<u32>(),
        rest.chars().map(hex).collect::<Option<Vec<u32>>>(),
    ) {
        (Ok(major), Some(ms)) => major * 10_000 + ms[0] * 100 + ms[1],
        _ => 0,
    }
}

/// The UUID's 64-bit value: the hex digits after `GPU-` (0 when the runtime
/// reported none, as for CPUs).
fn uuid_value(uuid: &str) -> u64 {
    let hex: String = uuid
        .strip_prefix("GPU-")
        .unwrap_or("")
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_hexdigit())
        .collect::<Vec<char>>()
        .into_iter()
        .rev()
        .collect();
    u64::from_str_radix(&hex[hex.len().saturating_sub(16)..], 16).unwrap_or(0)
}

fn agent_bytes(a: &AgentInfo, type_index: i32, size: usize) -> AgentBytes {
    let p = &a.properties;
    let gpu = a.agent_type == AgentType::Gpu;
    let mut b = AgentBytes(vec![0u64; size.div_ceil(8)]);
    b.put("size", &(size as u64).to_ne_bytes());
    b.put("id", &a.id.to_ne_bytes());
    let ty = if gpu {
        enums::rocprofiler_agent_type::ROCPROFILER_AGENT_TYPE_GPU
    } else {
        enums::rocprofiler_agent_type::ROCPROFILER_AGENT_TYPE_CPU
    } as i32;
    b.put("type", &ty.to_ne_bytes());
    b.u32("node_id", a.node_id);
    b.put("logical_node_id", &(a.node_id as i32).to_ne_bytes());
    b.put("logical_node_type_id", &type_index.to_ne_bytes());
    if gpu {
        b.u32("cu_count", p.compute_units);
        b.u32("simd_per_cu", p.simds_per_cu);
        b.u32("simd_count", p.compute_units * p.simds_per_cu);
        b.u32("max_waves_per_cu", p.max_waves_per_cu);
        if let Some(per_simd) = p.max_waves_per_cu.checked_div(p.simds_per_cu) {
            b.u32("max_waves_per_simd", per_simd);
        }
        b.u32("num_xcc", 1);
        b.u32("gfx_target_version", gfx_target_version(&a.name));
        b.put("vendor_id", &AMD_VENDOR_ID.to_ne_bytes());
        b.put("device_id", &(p.chip_id as u16).to_ne_bytes());
    } else {
        b.u32("cpu_cores_count", p.compute_units);
    }
    b.u32("wave_front_size", p.wavefront_size);
    b.u32("max_engine_clk_fcompute", p.max_clock_mhz);
    b.u32("location_id", p.location_id);
    b.u32("workgroup_max_size", p.workgroup_max_size);
    b.u32("grid_max_size", p.grid_max_size);
    b.dim3("workgroup_max_dim", p.workgroup_max_dim);
    b.dim3("grid_max_dim", p.grid_max_dim);
    b.put("local_mem_size", &p.local_memory_bytes.to_ne_bytes());
    // `rocprofiler_uuid_t` is 16 bytes; as in AMD's SDK the 64-bit value
    // fills the first eight (host order) and the rest stay 0.
    b.put("uuid", &uuid_value(&p.uuid).to_ne_bytes());
    // Visible to HSA and HIP (bits 0 and 1): every agent the runtime lists.
    b.u32("runtime_visibility", 0b11);
    b.text("name", &a.name);
    b.text("product_name", &a.product_name);
    b.text("model_name", &a.name);
    b.text("vendor_name", if gpu { "AMD" } else { "CPU" });
    b
}

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
        let b = agent_bytes(a, *counter, size);
        *counter += 1;
        let bytes: &'static mut Vec<u64> = Box::leak(Box::new(b.0));
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

    #[test]
    fn gfx_target_versions_follow_kfd() {
        assert_eq!(gfx_target_version("gfx90a"), 90010);
        assert_eq!(gfx_target_version("gfx942"), 90402);
        assert_eq!(gfx_target_version("gfx1030"), 100300);
        assert_eq!(gfx_target_version("gfx90a:sramecc+:xnack-"), 90010);
        assert_eq!(gfx_target_version("AMD EPYC"), 0);
    }

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

    #[test]
    fn uuids_keep_their_hex_value() {
        assert_eq!(uuid_value("GPU-00000000000000ff"), 255);
        assert_eq!(uuid_value("GPU-sim0000000000001234"), 0x1234);
        assert_eq!(uuid_value("CPU-XX"), 0);
        assert_eq!(uuid_value(""), 0);
    }
}
