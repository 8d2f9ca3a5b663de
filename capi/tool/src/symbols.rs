//! Agents, code objects and kernel symbols from the SDK, into the engine's
//! symbol table (which names every dispatch the outputs and plugins see).
//!
//! Agents are asked for once at initialisation
//! (`rocprofiler_query_available_agents`); code objects and kernel symbols
//! arrive through CODE_OBJECT callback tracing as the runtime loads them,
//! and go through the engine's `emit_*` so that chain stages tracing code
//! objects are called back as with interception.

use std::ffi::{c_int, c_void, CStr};

use rocprofiler_sdk_sys::enums::{
    rocprofiler_agent_type as agent_type, rocprofiler_callback_phase as phase,
    rocprofiler_code_object_operation as co_op, rocprofiler_code_object_storage_type as storage,
};
use rocprofiler_sdk_sys::{c_offsetof, c_sizeof, CallbackTracingRecord};
use rocprofiler_sdk_sys::{CodeObjectLoadData, KernelSymbolRegisterData};
use rocwasm_core::{
    demangle, AgentInfo, AgentProperties, AgentType, CodeObject, CodeObjectStorage, KernelSymbol,
    Profiler,
};

const AGENT: &str = "rocprofiler_agent_v0_t";

/// Reads field `field` (`T`, plain data) of the agent struct at `agent`.
///
/// # Safety
/// `agent` points to a `rocprofiler_agent_v0_t` of at least AMD's size.
unsafe fn field<T: Copy + Default>(agent: *const u8, field: &str) -> T {
    match c_offsetof(&format!("{AGENT}.{field}")) {
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
    if p == 0 {
        return String::new();
    }
    // SAFETY: a NUL-terminated string the SDK keeps.
    unsafe { CStr::from_ptr(p as *const std::ffi::c_char) }
        .to_string_lossy()
        .into_owned()
}

/// Every agent the SDK lists, into `profiler`'s symbol table; the SDK's
/// status (0: success).
pub fn query_agents(profiler: &Profiler) -> i32 {
    unsafe extern "C-unwind" fn each(
        _version: c_int,
        agents: *mut *const c_void,
        n: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the profiler passed below, alive for the call.
        let profiler = unsafe { &*(data as *const Profiler) };
        for i in 0..n {
            // SAFETY: the SDK passes `n` agent pointers.
            let a = unsafe { *agents.add(i) } as *const u8;
            if a.is_null() {
                continue;
            }
            // SAFETY: each points to an agent struct of version 0.
            let info = unsafe { agent_info(a) };
            profiler.symbols().insert_agent(info);
        }
        0
    }
    let query = |size: usize| {
        // SAFETY: `each` has the callback's signature; the profiler outlives the call.
        unsafe {
            rocprofiler_sdk_sys::api::rocprofiler_query_available_agents(
                rocprofiler_sdk_sys::enums::rocprofiler_agent_version::ROCPROFILER_AGENT_INFO_VERSION_0
                    as c_int,
                each,
                size,
                profiler as *const Profiler as *mut c_void,
            )
        }
    };
    let status = query(c_sizeof(AGENT).unwrap_or(0));
    if i64::from(status)
        != rocprofiler_sdk_sys::enums::rocprofiler_status::ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI
    {
        return status;
    }
    // An SDK of ROCm 7.0, whose agent struct ends with an 8-byte uuid (ours
    // has 16): everything read here lies before it, at the same offsets.
    match c_offsetof(&format!("{AGENT}.uuid")) {
        Some(uuid) => query(uuid + 8),
        None => status,
    }
}

/// # Safety
/// `a` points to a version-0 agent struct.
unsafe fn agent_info(a: *const u8) -> AgentInfo {
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

/// A CODE_OBJECT callback: loads and kernel symbols into the engine (which
/// calls back the chain's stages that trace code objects); `journal` is
/// called after each insertion so the record journal has the names.
///
/// # Safety
/// `record.payload` is the SDK's payload of the record's operation.
pub unsafe fn on_code_object(
    profiler: &Profiler,
    record: &CallbackTracingRecord,
    journal: impl Fn(),
) {
    if record.payload.is_null() {
        return;
    }
    let load = i64::from(record.phase) == phase::ROCPROFILER_CALLBACK_PHASE_LOAD;
    let op = i64::from(record.operation);
    if op == co_op::ROCPROFILER_CODE_OBJECT_LOAD {
        // SAFETY: the operation's payload struct.
        let d = unsafe { &*(record.payload as *const CodeObjectLoadData) };
        if !load {
            profiler.emit_code_object_unload(d.code_object_id);
            return;
        }
        let storage = match i64::from(d.storage_type) {
            storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_FILE => CodeObjectStorage::File {
                fd: d.storage_a as i32,
            },
            storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_MEMORY => CodeObjectStorage::Memory {
                base: d.storage_a,
                size: d.storage_b,
            },
            _ => CodeObjectStorage::None,
        };
        profiler.emit_code_object_load(CodeObject {
            id: d.code_object_id,
            agent_id: d.agent_id.handle,
            // SAFETY: NULL or a NUL-terminated string valid for the callback.
            uri: unsafe { c_text(d.uri) },
            load_base: d.load_base,
            load_size: d.load_size,
            load_delta: d.load_delta,
            storage,
        });
        journal();
    } else if op == co_op::ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER {
        // SAFETY: the operation's payload struct.
        let k = unsafe { &*(record.payload as *const KernelSymbolRegisterData) };
        if !load {
            profiler.emit_kernel_symbol_unregister(k.kernel_id);
            return;
        }
        // SAFETY: as above.
        let name = unsafe { c_text(k.kernel_name) };
        // Code object v3+ names the descriptor `<kernel>.kd`.
        let name = name.strip_suffix(".kd").unwrap_or(&name).to_string();
        profiler.emit_kernel_symbol_register(KernelSymbol {
            id: k.kernel_id,
            code_object_id: k.code_object_id,
            demangled_name: demangle(&name),
            name,
            kernel_object: k.kernel_object,
            kernarg_segment_size: k.kernarg_segment_size,
            kernarg_segment_alignment: k.kernarg_segment_alignment,
            group_segment_size: k.group_segment_size,
            private_segment_size: k.private_segment_size,
            sgpr_count: k.sgpr_count,
            arch_vgpr_count: k.arch_vgpr_count,
            accum_vgpr_count: k.accum_vgpr_count,
            kernel_code_entry_byte_offset: k.kernel_code_entry_byte_offset,
            kernel_address: k.kernel_address,
        });
        journal();
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_text(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}
