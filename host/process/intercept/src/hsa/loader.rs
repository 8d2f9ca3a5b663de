//! Code-object and kernel-symbol tracing around `hsa_executable_freeze` and
//! `hsa_executable_destroy`, through the AMD loader extension.
//!
//! After a successful freeze, every code object the executable loaded is
//! reported (LOAD), then each of its kernels (DEVICE_KERNEL_SYMBOL_REGISTER);
//! before a destroy, the same in reverse (UNLOAD). Ids come from counters, so
//! the same kernel loaded twice or on two agents gets two ids. The map
//! `kernel_object → kernel id` lets the queue handler name dispatches.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};

use rocwasm_core::{CodeObject, CodeObjectStorage, KernelSymbol};

use super::kernel_descriptor::KernelDescriptor;
use super::{agents, rt};
use crate::hip::kernels::demangle;
use crate::session;

const EXTENSION_AMD_LOADER: u16 = 0x201;

/// `hsa_ven_amd_loader_1_01_pfn_t`: five function pointers.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct LoaderTable {
    query_host_address: usize,
    query_segment_descriptors: usize,
    query_executable: usize,
    iterate_loaded_code_objects: usize,
    loaded_code_object_get_info: usize,
}

type IterateFn =
    unsafe extern "C" fn(u64, extern "C" fn(u64, u64, *mut c_void) -> i32, *mut c_void) -> i32;
type GetInfoFn = unsafe extern "C" fn(u64, i32, *mut c_void) -> i32;

// hsa_ven_amd_loader_loaded_code_object_info_t
const LCO_AGENT: i32 = 3;
const LCO_STORAGE_TYPE: i32 = 4;
const LCO_MEMORY_BASE: i32 = 5;
const LCO_MEMORY_SIZE: i32 = 6;
const LCO_FILE: i32 = 7;
const LCO_LOAD_DELTA: i32 = 8;
const LCO_LOAD_BASE: i32 = 9;
const LCO_LOAD_SIZE: i32 = 10;
const LCO_URI_LENGTH: i32 = 11;
const LCO_URI: i32 = 12;

// hsa_executable_symbol_info_t
const SYM_TYPE: i32 = 0;
const SYM_NAME_LENGTH: i32 = 1;
const SYM_NAME: i32 = 2;
const SYM_KERNARG_SIZE: i32 = 11;
const SYM_KERNARG_ALIGN: i32 = 12;
const SYM_GROUP_SIZE: i32 = 13;
const SYM_PRIVATE_SIZE: i32 = 14;
const SYM_KERNEL_OBJECT: i32 = 22;
const SYMBOL_KIND_KERNEL: u32 = 1;

fn loader() -> Option<LoaderTable> {
    static TABLE: OnceLock<Option<LoaderTable>> = OnceLock::new();
    *TABLE.get_or_init(|| {
        let mut t = LoaderTable::default();
        // SAFETY: the runtime fills at most `size_of::<LoaderTable>()` bytes.
        let status = unsafe {
            rt::hsa_system_get_major_extension_table(
                EXTENSION_AMD_LOADER,
                1,
                std::mem::size_of::<LoaderTable>(),
                &mut t as *mut _ as *mut c_void,
            )
        };
        if status != Some(0)
            || t.iterate_loaded_code_objects == 0
            || t.loaded_code_object_get_info == 0
        {
            eprintln!("rocwasm: no AMD loader extension ({status:?}); code objects are not traced");
            return None;
        }
        Some(t)
    })
}

/// What one executable reported, for its unload.
struct Loaded {
    code_objects: Vec<CodeObject>,
    kernels: Vec<KernelSymbol>,
}

fn executables() -> &'static Mutex<HashMap<u64, Loaded>> {
    static M: OnceLock<Mutex<HashMap<u64, Loaded>>> = OnceLock::new();
    M.get_or_init(Default::default)
}

fn kernel_objects() -> &'static RwLock<HashMap<u64, u64>> {
    static M: OnceLock<RwLock<HashMap<u64, u64>>> = OnceLock::new();
    M.get_or_init(Default::default)
}

static CODE_OBJECT_IDS: AtomicU64 = AtomicU64::new(1);
use crate::hip::kernels::KERNEL_IDS;

/// The kernel id of the symbol whose AQL `kernel_object` this is.
pub fn kernel_id(kernel_object: u64) -> Option<u64> {
    kernel_objects()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&kernel_object)
        .copied()
}

/// After a successful `hsa_executable_freeze(exe)`.
pub fn on_freeze(exe: u64) {
    let Some(t) = loader() else { return };
    agents::discover();
    let mut handles: Vec<u64> = Vec::new();
    extern "C" fn collect(_exe: u64, lco: u64, data: *mut c_void) -> i32 {
        // SAFETY: `data` is the Vec below, alive for the iteration.
        unsafe { &mut *(data as *mut Vec<u64>) }.push(lco);
        0
    }
    // SAFETY: the extension table's function with its documented signature.
    let iterate: IterateFn = unsafe { std::mem::transmute(t.iterate_loaded_code_objects) };
    // SAFETY: as above, the table's `loaded_code_object_get_info`.
    let get: GetInfoFn = unsafe { std::mem::transmute(t.loaded_code_object_get_info) };
    // SAFETY: `collect` matches the callback type and `handles` outlives the call.
    unsafe { iterate(exe, collect, &mut handles as *mut _ as *mut c_void) };

    let mut loaded = Loaded {
        code_objects: Vec::new(),
        kernels: Vec::new(),
    };
    for lco in handles {
        let co = describe_code_object(get, lco);
        let agent_handle = co.1;
        let co = co.0;
        if let Some(s) = session::active() {
            s.code_object_load(&co);
        }
        for k in kernels_of(&t, exe, agent_handle, co.id) {
            kernel_objects()
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(k.kernel_object, k.id);
            if let Some(s) = session::active() {
                s.kernel_symbol_register(&k);
                if let Some(host) = crate::hip::kernels::by_device_name(&k.name) {
                    s.host_kernel_symbol_register(&host, &k);
                }
            }
            loaded.kernels.push(k);
        }
        loaded.code_objects.push(co);
    }
    executables()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(exe, loaded);
}

/// At finalization: every executable the program never destroyed is
/// unloaded (its symbols, then its code objects), as rocprofiler-sdk
/// reports at shutdown, so every LOAD a tool saw is matched by an UNLOAD.
pub fn unload_all() {
    let mut exes: Vec<u64> = executables()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .copied()
        .collect();
    exes.sort_unstable();
    for exe in exes {
        on_destroy(exe);
    }
}

/// Before `hsa_executable_destroy(exe)`: symbols, then code objects, unload.
pub fn on_destroy(exe: u64) {
    let Some(loaded) = executables()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&exe)
    else {
        return;
    };
    if let Some(s) = session::active() {
        for k in loaded.kernels.iter().rev() {
            s.kernel_symbol_unregister(k);
        }
        for co in loaded.code_objects.iter().rev() {
            s.code_object_unload(co);
        }
    }
}

fn describe_code_object(get: GetInfoFn, lco: u64) -> (CodeObject, u64) {
    let mut agent = 0u64;
    let mut storage = 0u32;
    let (mut mem_base, mut mem_size, mut fd) = (0u64, 0u64, 0i32);
    let (mut delta, mut base, mut size) = (0i64, 0u64, 0u64);
    let mut uri_len = 0u32;
    // SAFETY: each attribute writes a value of the documented type into
    // the matching local.
    unsafe {
        get(lco, LCO_AGENT, &mut agent as *mut _ as *mut c_void);
        get(lco, LCO_STORAGE_TYPE, &mut storage as *mut _ as *mut c_void);
        get(lco, LCO_LOAD_DELTA, &mut delta as *mut _ as *mut c_void);
        get(lco, LCO_LOAD_BASE, &mut base as *mut _ as *mut c_void);
        get(lco, LCO_LOAD_SIZE, &mut size as *mut _ as *mut c_void);
        get(lco, LCO_URI_LENGTH, &mut uri_len as *mut _ as *mut c_void);
        match storage {
            1 => {
                get(lco, LCO_FILE, &mut fd as *mut _ as *mut c_void);
            }
            2 => {
                get(lco, LCO_MEMORY_BASE, &mut mem_base as *mut _ as *mut c_void);
                get(lco, LCO_MEMORY_SIZE, &mut mem_size as *mut _ as *mut c_void);
            }
            _ => {}
        }
    }
    let mut uri = vec![0u8; uri_len as usize];
    if uri_len > 0 {
        // SAFETY: the URI attribute writes exactly URI_LENGTH bytes.
        unsafe { get(lco, LCO_URI, uri.as_mut_ptr() as *mut c_void) };
    }
    let co = CodeObject {
        id: CODE_OBJECT_IDS.fetch_add(1, Ordering::Relaxed),
        agent_id: agents::id_of(agent),
        uri: String::from_utf8_lossy(&uri)
            .trim_end_matches('\0')
            .to_string(),
        load_base: base,
        load_size: size,
        load_delta: delta,
        storage: match storage {
            1 => CodeObjectStorage::File { fd },
            2 => CodeObjectStorage::Memory {
                base: mem_base,
                size: mem_size,
            },
            _ => CodeObjectStorage::None,
        },
    };
    (co, agent)
}

fn kernels_of(t: &LoaderTable, exe: u64, agent: u64, code_object_id: u64) -> Vec<KernelSymbol> {
    let target = agents::by_handle(agent).map_or("", |a| a.info.name.as_str());
    let mut symbols: Vec<u64> = Vec::new();
    extern "C" fn collect(_exe: u64, _agent: u64, sym: u64, data: *mut c_void) -> i32 {
        // SAFETY: `data` is the Vec below.
        unsafe { &mut *(data as *mut Vec<u64>) }.push(sym);
        0
    }
    // SAFETY: documented iteration with our callback.
    unsafe {
        rt::hsa_executable_iterate_agent_symbols(
            exe,
            agent,
            collect,
            &mut symbols as *mut _ as *mut c_void,
        )
    };
    let mut out = Vec::new();
    for sym in symbols {
        let mut kind = u32::MAX;
        let mut name_len = 0u32;
        let (mut object, mut kernarg, mut align, mut group, mut private) =
            (0u64, 0u32, 0u32, 0u32, 0u32);
        // SAFETY: each attribute writes a value of the documented type.
        unsafe {
            rt::hsa_executable_symbol_get_info(sym, SYM_TYPE, &mut kind as *mut _ as *mut c_void);
            if kind != SYMBOL_KIND_KERNEL {
                continue;
            }
            rt::hsa_executable_symbol_get_info(
                sym,
                SYM_NAME_LENGTH,
                &mut name_len as *mut _ as *mut c_void,
            );
            rt::hsa_executable_symbol_get_info(
                sym,
                SYM_KERNEL_OBJECT,
                &mut object as *mut _ as *mut c_void,
            );
            rt::hsa_executable_symbol_get_info(
                sym,
                SYM_KERNARG_SIZE,
                &mut kernarg as *mut _ as *mut c_void,
            );
            rt::hsa_executable_symbol_get_info(
                sym,
                SYM_KERNARG_ALIGN,
                &mut align as *mut _ as *mut c_void,
            );
            rt::hsa_executable_symbol_get_info(
                sym,
                SYM_GROUP_SIZE,
                &mut group as *mut _ as *mut c_void,
            );
            rt::hsa_executable_symbol_get_info(
                sym,
                SYM_PRIVATE_SIZE,
                &mut private as *mut _ as *mut c_void,
            );
        }
        let mut name = vec![0u8; name_len as usize];
        // SAFETY: NAME writes NAME_LENGTH bytes (no terminator).
        unsafe {
            rt::hsa_executable_symbol_get_info(sym, SYM_NAME, name.as_mut_ptr() as *mut c_void)
        };
        let name = String::from_utf8_lossy(&name)
            .trim_end_matches('\0')
            .to_string();
        // Kernel descriptors are named `<kernel>.kd` in code object v3+.
        let bare = name.strip_suffix(".kd").unwrap_or(&name).to_string();
        let descriptor = descriptor_of(t, object);
        let counts = descriptor
            .map(|d| d.register_counts(target))
            .unwrap_or_default();
        out.push(KernelSymbol {
            id: KERNEL_IDS.fetch_add(1, Ordering::Relaxed),
            code_object_id,
            demangled_name: demangle(&bare),
            name: bare,
            kernel_object: object,
            kernarg_segment_size: kernarg,
            kernarg_segment_alignment: align,
            group_segment_size: group,
            private_segment_size: private,
            sgpr_count: counts.sgpr,
            arch_vgpr_count: counts.arch_vgpr,
            accum_vgpr_count: counts.accum_vgpr,
            kernel_code_entry_byte_offset: descriptor
                .map_or(0, |d| d.kernel_code_entry_byte_offset()),
            kernel_address: object,
        });
    }
    out
}

/// The kernel descriptor at device address `kernel_object`, read through
/// the loader's host copy; `None` when the loader has no host address for
/// it (the device address itself may not be readable from the host).
fn descriptor_of(t: &LoaderTable, kernel_object: u64) -> Option<KernelDescriptor> {
    if t.query_host_address == 0 || kernel_object == 0 {
        return None;
    }
    type QueryHostAddressFn = unsafe extern "C" fn(*const c_void, *mut *const c_void) -> i32;
    // SAFETY: the extension table's function with its documented signature.
    let query: QueryHostAddressFn = unsafe { std::mem::transmute(t.query_host_address) };
    let mut host: *const c_void = std::ptr::null();
    // SAFETY: `host` is a valid out-pointer for the call.
    let status = unsafe { query(kernel_object as *const c_void, &mut host) };
    if status != 0 || host.is_null() {
        return None;
    }
    let mut bytes = [0u8; 64];
    // SAFETY: the loader returned the host address of a loaded kernel
    // descriptor, which is 64 bytes long and stays mapped while its
    // executable exists (we are inside its `hsa_executable_freeze`).
    unsafe { std::ptr::copy_nonoverlapping(host as *const u8, bytes.as_mut_ptr(), 64) };
    Some(KernelDescriptor::from_bytes(bytes))
}
