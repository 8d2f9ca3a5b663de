//! Code objects and kernel symbols, the CODE_OBJECT callbacks' payloads,
//! both ways; host kernel symbols one way (the tool does not import them).
//!
//! What the C structs cannot carry: a kernel's demangled name (derived
//! from the mangled one on the way back), the HSA agent handle of a code
//! object (the engine keeps agents by rocprofiler id; it is 0 in C,
//! documented in `docs/NATIVE_TOOLS.md`).

use std::ffi::c_int;

use rocprofiler_sdk_sys::enums::rocprofiler_code_object_storage_type as storage;
use rocprofiler_sdk_sys::{
    CodeObjectLoadData, HostKernelSymbolRegisterData, HsaAgent, KernelSymbolRegisterData,
};
use rocwasm_core::{demangle, CodeObject, CodeObjectStorage, HostKernelSymbol, KernelSymbol};

use crate::ids::{dim3_to_c, handle, id, size_of};
use crate::strings;

// ── Code objects ───────────────────────────────────────────────────────────

/// `storage_type`, `storage_a` (a file descriptor, or a memory base) and
/// `storage_b` (the memory's size) of a storage.
pub fn storage_to_c(s: CodeObjectStorage) -> (c_int, u64, u64) {
    let (ty, a, b) = match s {
        CodeObjectStorage::None => (storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_NONE, 0, 0),
        CodeObjectStorage::File { fd } => (
            storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_FILE,
            fd as u32 as u64,
            0,
        ),
        CodeObjectStorage::Memory { base, size } => (
            storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_MEMORY,
            base,
            size,
        ),
    };
    (ty as c_int, a, b)
}

/// The storage of `storage_type`, `storage_a` and `storage_b`; a type the
/// engine does not know is `None`.
pub fn storage_from_c(ty: c_int, a: u64, b: u64) -> CodeObjectStorage {
    match i64::from(ty) {
        storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_FILE => {
            CodeObjectStorage::File { fd: a as i32 }
        }
        storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_MEMORY => {
            CodeObjectStorage::Memory { base: a, size: b }
        }
        _ => CodeObjectStorage::None,
    }
}

/// `rocprofiler_callback_tracing_code_object_load_data_t` of a code object
/// (its URI a string that lives as long as the process).
pub fn code_object_to_c(co: &CodeObject) -> CodeObjectLoadData {
    let (storage_type, storage_a, storage_b) = storage_to_c(co.storage);
    CodeObjectLoadData {
        size: size_of::<CodeObjectLoadData>(),
        code_object_id: co.id,
        agent_id: handle(co.agent_id),
        // The engine keeps agents by rocprofiler id; the HSA handle is not
        // recorded (0, documented in docs/NATIVE_TOOLS.md).
        hsa_agent: HsaAgent { handle: 0 },
        uri: strings::to_c(&co.uri),
        load_base: co.load_base,
        load_size: co.load_size,
        load_delta: co.load_delta,
        storage_type,
        storage_a,
        storage_b,
    }
}

/// The engine's code object of the C struct.
///
/// # Safety
/// `d.uri` is NULL or a NUL-terminated string valid for the call.
pub unsafe fn code_object_from_c(d: &CodeObjectLoadData) -> CodeObject {
    CodeObject {
        id: d.code_object_id,
        agent_id: id(d.agent_id),
        // SAFETY: the caller's contract.
        uri: unsafe { strings::from_c(d.uri) },
        load_base: d.load_base,
        load_size: d.load_size,
        load_delta: d.load_delta,
        storage: storage_from_c(d.storage_type, d.storage_a, d.storage_b),
    }
}

// ── Kernel symbols ─────────────────────────────────────────────────────────

/// `rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t`
/// of a kernel symbol (its mangled name a string that lives as long as the
/// process).
pub fn kernel_symbol_to_c(k: &KernelSymbol) -> KernelSymbolRegisterData {
    KernelSymbolRegisterData {
        size: size_of::<KernelSymbolRegisterData>(),
        kernel_id: k.id,
        code_object_id: k.code_object_id,
        kernel_name: strings::to_c(&k.name),
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
    }
}

/// The engine's kernel symbol of the C struct: the name without the
/// descriptor's `.kd` suffix (code object v3+ names the descriptor
/// `<kernel>.kd`), and its demangled form.
///
/// # Safety
/// `k.kernel_name` is NULL or a NUL-terminated string valid for the call.
pub unsafe fn kernel_symbol_from_c(k: &KernelSymbolRegisterData) -> KernelSymbol {
    // SAFETY: the caller's contract.
    let name = unsafe { strings::from_c(k.kernel_name) };
    let name = name.strip_suffix(".kd").unwrap_or(&name).to_string();
    KernelSymbol {
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
    }
}

// ── Host kernel symbols (written only) ─────────────────────────────────────

/// `rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t`
/// of a HIP host registration (its device function's name a string that
/// lives as long as the process).
pub fn host_kernel_symbol_to_c(h: &HostKernelSymbol) -> HostKernelSymbolRegisterData {
    let r = &h.registration;
    HostKernelSymbolRegisterData {
        size: size_of::<HostKernelSymbolRegisterData>(),
        host_function_id: h.host_function_id,
        kernel_id: h.kernel_id,
        code_object_id: h.code_object_id,
        host_function: h.host_function,
        modules: r.modules,
        device_function: strings::to_c(&h.device_function),
        thread_limit: r.thread_limit,
        thread_ids: dim3_to_c(r.thread_ids),
        block_ids: dim3_to_c(r.block_ids),
        block_dims: dim3_to_c(r.block_dims),
        grid_dims: dim3_to_c(r.grid_dims),
        workgroup_size: r.workgroup_size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_objects_round_trip_with_every_storage() {
        let storages = [
            CodeObjectStorage::None,
            CodeObjectStorage::File { fd: 3 },
            CodeObjectStorage::File { fd: -1 },
            CodeObjectStorage::File { fd: i32::MAX },
            CodeObjectStorage::Memory { base: 0, size: 0 },
            CodeObjectStorage::Memory {
                base: u64::MAX,
                size: u64::MAX,
            },
        ];
        for (i, storage) in storages.into_iter().enumerate() {
            let co = CodeObject {
                id: if i % 2 == 0 { u64::MAX } else { i as u64 },
                agent_id: if i % 2 == 0 { 0 } else { u64::MAX },
                uri: [
                    "",
                    "file:///app#offset=4096&size=8192",
                    "memory://1#offset=0x7f00&size=8",
                ][i % 3]
                    .to_string(),
                load_base: u64::MAX - i as u64,
                load_size: i as u64,
                load_delta: [i64::MIN, 0, i64::MAX][i % 3],
                storage,
            };
            let c = code_object_to_c(&co);
            assert_eq!((c.size, c.hsa_agent.handle), (88, 0));
            // SAFETY: `to_c`'s URI lives as long as the process.
            assert_eq!(unsafe { code_object_from_c(&c) }, co);
        }
        assert_eq!(storage_from_c(99, 1, 2), CodeObjectStorage::None);
    }

    #[test]
    fn kernel_symbols_round_trip_with_their_demangled_names() {
        let max = KernelSymbol {
            id: u64::MAX,
            code_object_id: u64::MAX,
            name: "_Z6vecAddPfS_S_i".into(),
            demangled_name: String::new(),
            kernel_object: u64::MAX,
            kernarg_segment_size: u32::MAX,
            kernarg_segment_alignment: u32::MAX,
            group_segment_size: u32::MAX,
            private_segment_size: u32::MAX,
            sgpr_count: u32::MAX,
            arch_vgpr_count: u32::MAX,
            accum_vgpr_count: u32::MAX,
            kernel_code_entry_byte_offset: i64::MIN,
            kernel_address: u64::MAX,
        };
        let mixed = KernelSymbol {
            id: 1,
            code_object_id: 2,
            name: "plain_c_kernel".into(),
            demangled_name: String::new(),
            kernel_object: 3,
            kernarg_segment_size: 4,
            kernarg_segment_alignment: 5,
            group_segment_size: 6,
            private_segment_size: 7,
            sgpr_count: 8,
            arch_vgpr_count: 9,
            accum_vgpr_count: 10,
            kernel_code_entry_byte_offset: 11,
            kernel_address: 12,
        };
        for mut k in [KernelSymbol::default(), max, mixed] {
            // The C struct has the mangled name only.
            k.demangled_name = demangle(&k.name);
            let c = kernel_symbol_to_c(&k);
            assert_eq!(c.size, 88);
            // SAFETY: `to_c`'s name lives as long as the process.
            assert_eq!(unsafe { kernel_symbol_from_c(&c) }, k);
        }
        assert_eq!(
            demangle("_Z6vecAddPfS_S_i"),
            "vecAdd(float*, float*, float*, int)"
        );
        // An SDK's descriptor name loses its `.kd`.
        let mut c = kernel_symbol_to_c(&KernelSymbol::default());
        c.kernel_name = strings::to_c("_Z6vecAddPfS_S_i.kd");
        // SAFETY: as above.
        let k = unsafe { kernel_symbol_from_c(&c) };
        assert_eq!(
            (k.name.as_str(), k.demangled_name.as_str()),
            ("_Z6vecAddPfS_S_i", "vecAdd(float*, float*, float*, int)")
        );
    }
}
