//! `rocprofiler_agent_v0_t` and the engine's [`AgentInfo`], both ways.
//!
//! The struct is large and full of KFD topology types; it is written and
//! read through AMD's measured offsets (the ABI table), not a mirror, with
//! what the HSA runtime reports of an agent ([`AgentProperties`]): id,
//! type, names, node, compute units, SIMDs, wavefront size, waves per CU,
//! clock, work-group and grid limits, PCI ids, device memory, UUID, and,
//! written only, what follows from them (SIMD count, waves per SIMD, the
//! `gfx` target version). What only the kernel driver's topology knows
//! (caches, memory banks, I/O links, SDMA engines, firmware versions) stays
//! 0 and is listed in `docs/NATIVE_TOOLS.md`.
//!
//! What the C struct cannot carry back: the UUID's text (C has its 64-bit
//! value; the engine's UUID comes back empty), a PCI device id above 16
//! bits, and a CPU's SIMDs, waves per CU and device id (written for GPUs
//! only). A CPU's compute units are its cores (`cpu_cores_count`).

use rocprofiler_sdk_sys::c_offsetof;
use rocprofiler_sdk_sys::enums::rocprofiler_agent_type as agent_type;
use rocwasm_core::{AgentInfo, AgentProperties, AgentType};

use crate::strings;

/// The C struct's name in the ABI table.
pub const AGENT: &str = "rocprofiler_agent_v0_t";

/// PCI vendor id of AMD, what KFD reports for AMD GPUs.
const AMD_VENDOR_ID: u16 = 0x1002;

/// The offset of field `field` of the agent struct.
fn offset(field: &str) -> Option<usize> {
    c_offsetof(&format!("{AGENT}.{field}"))
}

/// One agent's bytes, written field by field at the table's offsets (in
/// 64-bit words, so the struct is aligned as C's).
struct AgentBytes(Vec<u64>);

impl AgentBytes {
    fn put(&mut self, field: &str, bytes: &[u8]) {
        let Some(off) = offset(field) else {
            return;
        };
        if off + bytes.len() > self.0.len() * 8 {
            return;
        }
        for (i, b) in bytes.iter().enumerate() {
            let at = off + i;
            let word = &mut self.0[at / 8];
            let mut w = word.to_ne_bytes();
            w[at % 8] = *b;
            *word = u64::from_ne_bytes(w);
        }
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
        self.put(field, &(strings::to_c(text) as u64).to_ne_bytes());
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

/// The bytes of `a`'s `rocprofiler_agent_v0_t` of `size` bytes (rounded up
/// to 8), its strings kept for the whole run; `type_index` numbers the
/// agents of its type (`logical_node_type_id`).
pub fn agent_to_c(a: &AgentInfo, type_index: i32, size: usize) -> Vec<u64> {
    let p = &a.properties;
    let gpu = a.agent_type == AgentType::Gpu;
    let mut b = AgentBytes(vec![0u64; size.div_ceil(8)]);
    b.put("size", &(size as u64).to_ne_bytes());
    b.put("id", &a.id.to_ne_bytes());
    let ty = if gpu {
        agent_type::ROCPROFILER_AGENT_TYPE_GPU
    } else {
        agent_type::ROCPROFILER_AGENT_TYPE_CPU
    } as i32;
    b.put("type", &ty.to_ne_bytes());
    b.u32("node_id", a.node_id);
    b.put("logical_node_id", &(a.node_id as i32).to_ne_bytes());
    b.put("logical_node_type_id", &type_index.to_ne_bytes());
    if gpu {
        b.u32("cu_count", p.compute_units);
        b.u32("simd_per_cu", p.simds_per_cu);
        b.u32("simd_count", p.compute_units.saturating_mul(p.simds_per_cu));
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
    b.0
}

/// Reads field `field` (`T`, plain data) of the agent struct at `agent`; a
/// field the ABI table does not know is `T::default()`.
///
/// # Safety
/// `agent` points to a `rocprofiler_agent_v0_t` holding the field.
unsafe fn field<T: Copy + Default>(agent: *const u8, field: &str) -> T {
    match offset(field) {
        // SAFETY: inside the struct (the ABI table's offset); unaligned
        // reads need no alignment.
        Some(off) => unsafe { std::ptr::read_unaligned(agent.add(off) as *const T) },
        None => T::default(),
    }
}

/// A string field of the agent struct.
///
/// # Safety
/// As [`field`]; string fields are NULL or NUL-terminated.
unsafe fn text(agent: *const u8, name: &str) -> String {
    // SAFETY: the caller's contract.
    let p: usize = unsafe { field(agent, name) };
    // SAFETY: NULL or a NUL-terminated string the SDK keeps.
    unsafe { strings::from_c(p as *const std::ffi::c_char) }
}

/// The engine's agent of a `rocprofiler_agent_v0_t` (an SDK of ROCm 7.0,
/// whose struct ends with an 8-byte uuid where ours has 16, has every field
/// read here at the same offset: the uuid is not read).
///
/// # Safety
/// `a` points to a version-0 agent struct, at least as long as the offset
/// of its `uuid`, whose string fields are NULL or NUL-terminated.
pub unsafe fn agent_from_c(a: *const u8) -> AgentInfo {
    // SAFETY: every read below is of a field of the struct (the caller's contract).
    unsafe {
        let ty: i32 = field(a, "type");
        let gpu = i64::from(ty) == agent_type::ROCPROFILER_AGENT_TYPE_GPU;
        let cu: u32 = field(a, "cu_count");
        let cores: u32 = field(a, "cpu_cores_count");
        let wg: [u32; 3] = field(a, "workgroup_max_dim");
        let grid: [u32; 3] = field(a, "grid_max_dim");
        let logical: i32 = field(a, "logical_node_id");
        AgentInfo {
            id: field(a, "id"),
            node_id: if logical >= 0 {
                logical as u32
            } else {
                field(a, "node_id")
            },
            agent_type: if gpu { AgentType::Gpu } else { AgentType::Cpu },
            name: text(a, "name"),
            product_name: text(a, "product_name"),
            properties: AgentProperties {
                compute_units: if gpu { cu } else { cores },
                simds_per_cu: field(a, "simd_per_cu"),
                wavefront_size: field(a, "wave_front_size"),
                max_waves_per_cu: field(a, "max_waves_per_cu"),
                max_clock_mhz: field(a, "max_engine_clk_fcompute"),
                workgroup_max_size: field(a, "workgroup_max_size"),
                workgroup_max_dim: wg,
                grid_max_size: field(a, "grid_max_size"),
                grid_max_dim: grid,
                chip_id: u32::from(field::<u16>(a, "device_id")),
                location_id: field(a, "location_id"),
                local_memory_bytes: field(a, "local_mem_size"),
                uuid: String::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocprofiler_sdk_sys::c_sizeof;

    #[test]
    fn gfx_target_versions_follow_kfd() {
        assert_eq!(gfx_target_version("gfx90a"), 90010);
        assert_eq!(gfx_target_version("gfx942"), 90402);
        assert_eq!(gfx_target_version("gfx1030"), 100300);
        assert_eq!(gfx_target_version("gfx90a:sramecc+:xnack-"), 90010);
        assert_eq!(gfx_target_version("AMD EPYC"), 0);
    }

    #[test]
    fn uuids_keep_their_hex_value() {
        assert_eq!(uuid_value("GPU-00000000000000ff"), 255);
        assert_eq!(uuid_value("GPU-sim0000000000001234"), 0x1234);
        assert_eq!(uuid_value("CPU-XX"), 0);
        assert_eq!(uuid_value(""), 0);
    }

    fn gpu(node_id: u32, n: u32) -> AgentInfo {
        AgentInfo {
            id: u64::from(n) << 40,
            node_id,
            agent_type: AgentType::Gpu,
            name: "gfx90a".into(),
            product_name: "AMD Instinct MI210".into(),
            properties: AgentProperties {
                compute_units: 104,
                simds_per_cu: 4,
                wavefront_size: 64,
                max_waves_per_cu: 32,
                max_clock_mhz: 1700,
                workgroup_max_size: 1024,
                workgroup_max_dim: [1024, 1024, 1024],
                grid_max_size: u32::MAX,
                grid_max_dim: [u32::MAX, 0, 1],
                chip_id: 0x740f,
                location_id: 0xc300,
                local_memory_bytes: 64 << 30,
                uuid: "GPU-1234567890abcdef".into(),
            },
        }
    }

    /// Engine → C → engine, at our size and at ROCm 7.0's (the struct
    /// before its 16-byte uuid and 8 more).
    fn round_trip(a: &AgentInfo) -> Vec<AgentInfo> {
        let ours = c_sizeof(AGENT).unwrap();
        let rocm_7_0 = offset("uuid").unwrap() + 8;
        [ours, rocm_7_0]
            .into_iter()
            .map(|size| {
                let bytes = agent_to_c(a, 0, size);
                assert_eq!(bytes[0], size as u64);
                // SAFETY: a whole struct of `size` bytes, its strings kept
                // for the process.
                unsafe { agent_from_c(bytes.as_ptr() as *const u8) }
            })
            .collect()
    }

    #[test]
    fn agents_round_trip_without_their_uuid_text() {
        let max = AgentInfo {
            id: u64::MAX,
            // `logical_node_id` is an `int`: -1 here, so `node_id` is read.
            node_id: u32::MAX,
            agent_type: AgentType::Gpu,
            name: String::new(),
            product_name: "é".into(),
            properties: AgentProperties {
                compute_units: u32::MAX,
                simds_per_cu: 1,
                wavefront_size: u32::MAX,
                max_waves_per_cu: u32::MAX,
                max_clock_mhz: u32::MAX,
                workgroup_max_size: u32::MAX,
                workgroup_max_dim: [u32::MAX; 3],
                grid_max_size: u32::MAX,
                grid_max_dim: [u32::MAX; 3],
                chip_id: u32::from(u16::MAX),
                location_id: u32::MAX,
                local_memory_bytes: u64::MAX,
                uuid: String::new(),
            },
        };
        let cpu = AgentInfo {
            id: 0,
            node_id: 0,
            agent_type: AgentType::Cpu,
            name: "AMD EPYC 7763 64-Core Processor".into(),
            product_name: "AMD EPYC 7763 64-Core Processor".into(),
            properties: AgentProperties {
                compute_units: 128,
                wavefront_size: 0,
                max_clock_mhz: 2450,
                local_memory_bytes: 512 << 30,
                ..AgentProperties::default()
            },
        };
        for a in [gpu(1, 1), gpu(1 << 31, 2), max, cpu] {
            let lost = AgentInfo {
                properties: AgentProperties {
                    uuid: String::new(),
                    ..a.properties.clone()
                },
                ..a.clone()
            };
            for back in round_trip(&a) {
                assert_eq!(back, lost);
            }
        }
    }

    #[test]
    fn what_follows_from_an_agent_is_written() {
        let a = gpu(2, 0);
        let bytes = agent_to_c(&a, 5, c_sizeof(AGENT).unwrap());
        let a = bytes.as_ptr() as *const u8;
        // SAFETY: a whole struct of ours.
        unsafe {
            assert_eq!(field::<u32>(a, "simd_count"), 416);
            assert_eq!(field::<u32>(a, "max_waves_per_simd"), 8);
            assert_eq!(field::<u32>(a, "gfx_target_version"), 90010);
            assert_eq!(field::<u16>(a, "vendor_id"), AMD_VENDOR_ID);
            assert_eq!(field::<i32>(a, "logical_node_type_id"), 5);
            assert_eq!(field::<u64>(a, "uuid"), 0x1234567890abcdef);
            assert_eq!(text(a, "model_name"), "gfx90a");
            assert_eq!(text(a, "vendor_name"), "AMD");
        }
    }
}
