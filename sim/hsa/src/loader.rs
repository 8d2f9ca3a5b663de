//! Code objects, executables, symbols, and the AMD loader extension.
//!
//! Loading is real in the ways tools can see: a code object's `PT_LOAD`
//! segments are copied into freshly allocated memory (the load base), the
//! load delta is `base - lowest segment address`, and a kernel symbol's
//! kernel object is the address of its 64-byte kernel descriptor (`.kd`) in
//! that memory. The dispatch path maps kernel objects back to names through
//! [`kernel`], which is how the packet processor knows what it "runs".
//! Executables are listed by the loader extension (`0x201`) in creation order.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use object::{Object, ObjectSegment, ObjectSymbol};

use crate::ffi::*;
use crate::memory;
use crate::util::{c_str, copy_bytes, out, sim_log, write_info, Info};

/// What the packet processor needs about a kernel.
#[derive(Debug)]
pub struct KernelInfo {
    /// Symbol name without the `.kd` suffix.
    pub name: String,
    pub kernarg_size: u32,
}

struct Symbol {
    handle: u64,
    name: String,
    agent: u64,
    kernel: bool,
    address: u64,
    size: u64,
    kernarg_size: u32,
    group_size: u32,
    private_size: u32,
}

struct LoadedCodeObject {
    handle: u64,
    executable: u64,
    agent: u64,
    storage_base: u64,
    storage_size: u64,
    load_base: u64,
    load_size: u64,
    load_delta: i64,
    uri: String,
}

#[derive(Default)]
struct Executable {
    frozen: bool,
    code_objects: Vec<u64>,
    symbols: Vec<u64>,
}

#[derive(Default)]
struct Registry {
    readers: HashMap<u64, Reader>,
    executables: BTreeMap<u64, Executable>,
    code_objects: HashMap<u64, LoadedCodeObject>,
    symbols: HashMap<u64, Symbol>,
    kernels: HashMap<u64, Arc<KernelInfo>>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(0x5000_0000);

fn next_handle() -> u64 {
    NEXT_HANDLE.fetch_add(1, Ordering::Relaxed)
}

fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut guard = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Registry::default))
}

/// The kernel whose descriptor is at `kernel_object`.
pub fn kernel(kernel_object: u64) -> Option<Arc<KernelInfo>> {
    with(|r| r.kernels.get(&kernel_object).cloned())
}

/// A code object reader: the bytes, and the URI of the file they were
/// read from (the loader names a code object by it, as ROCm's does:
/// `file:///path/app#offset=8192&size=40960`); `None` for memory.
#[derive(Clone)]
struct Reader {
    bytes: Arc<Vec<u8>>,
    uri: Option<String>,
}

fn new_reader(
    bytes: Vec<u8>,
    uri: Option<String>,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    let handle = next_handle();
    let bytes = Arc::new(bytes);
    with(|r| r.readers.insert(handle, Reader { bytes, uri }));
    out(reader, Handle { handle })
}

/// The URI of a code object read from open file `fd`: `file://` and the
/// file's path, with the offset and size read when only part of it was.
fn file_uri(fd: i32, part: Option<(usize, usize)>) -> Option<String> {
    let path = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let mut uri = format!("file://{}", path.display());
    if let Some((offset, size)) = part {
        uri.push_str(&format!("#offset={offset}&size={size}"));
    }
    Some(uri)
}

pub extern "C" fn hsa_code_object_reader_create_from_memory(
    code_object: *const c_void,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    if code_object.is_null() || size == 0 {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let bytes = crate::util::slice(code_object.cast::<u8>(), size).to_vec();
    new_reader(bytes, None, reader)
}

fn read_fd(fd: i32, offset: u64, size: Option<usize>) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::fd::FromRawFd;
    // SAFETY: the caller lends us an open file descriptor; ManuallyDrop
    // keeps us from closing it.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut bytes = Vec::new();
    match size {
        Some(n) => {
            bytes.resize(n, 0);
            file.read_exact(&mut bytes).ok()?;
        }
        None => {
            file.read_to_end(&mut bytes).ok()?;
        }
    }
    Some(bytes)
}

pub extern "C" fn hsa_code_object_reader_create_from_file(
    fd: i32,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    match read_fd(fd, 0, None) {
        Some(bytes) => new_reader(bytes, file_uri(fd, None), reader),
        None => HSA_STATUS_ERROR_INVALID_FILE,
    }
}

extern "C" fn reader_from_file_with_offset_size(
    fd: i32,
    offset: usize,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    match read_fd(fd, offset as u64, Some(size)) {
        Some(bytes) => new_reader(bytes, file_uri(fd, Some((offset, size))), reader),
        None => HSA_STATUS_ERROR_INVALID_FILE,
    }
}

pub extern "C" fn hsa_code_object_reader_destroy(reader: hsa_code_object_reader_t) -> hsa_status_t {
    match with(|r| r.readers.remove(&reader.handle)) {
        Some(_) => HSA_STATUS_SUCCESS,
        None => HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
    }
}

pub extern "C" fn hsa_executable_create_alt(
    _profile: u32,
    _rounding: u32,
    _options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    let handle = next_handle();
    with(|r| r.executables.insert(handle, Executable::default()));
    out(executable, Handle { handle })
}

pub extern "C" fn hsa_executable_create(
    profile: u32,
    _state: u32,
    options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    hsa_executable_create_alt(profile, 0, options, executable)
}

/// Copies the loadable segments of an ELF code object into new memory.
fn load(
    bytes: &[u8],
    uri: Option<String>,
    agent: u64,
    executable: u64,
) -> Result<(LoadedCodeObject, Vec<Symbol>), hsa_status_t> {
    let elf = object::File::parse(bytes).map_err(|_| HSA_STATUS_ERROR_INVALID_CODE_OBJECT)?;
    let segments: Vec<_> = elf.segments().collect();
    let low = segments.iter().map(|s| s.address()).min().unwrap_or(0);
    let high = segments
        .iter()
        .map(|s| s.address() + s.size())
        .max()
        .unwrap_or(0);
    let load_size = (high - low).max(1);
    let base = memory::allocate(load_size as usize).ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)?;
    // SAFETY: `base` is a fresh allocation of `load_size` bytes that nothing
    // else references yet.
    let image = unsafe { std::slice::from_raw_parts_mut(base, load_size as usize) };
    for segment in &segments {
        let data = segment
            .data()
            .map_err(|_| HSA_STATUS_ERROR_INVALID_CODE_OBJECT)?;
        let at = (segment.address() - low) as usize;
        let len = data.len().min(image.len().saturating_sub(at));
        image[at..at + len].copy_from_slice(&data[..len]);
    }
    let load_delta = base as i64 - low as i64;
    let word = |at: u64| -> u32 {
        let at = (at - low) as usize;
        image
            .get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut symbols = Vec::new();
    for sym in elf.symbols() {
        let Ok(name) = sym.name() else { continue };
        let global = sym.is_global() || sym.is_weak();
        if !global || sym.is_undefined() || name.is_empty() {
            continue;
        }
        let kernel = name.ends_with(".kd") && sym.size() == 64;
        if !kernel && sym.kind() != object::SymbolKind::Data {
            continue;
        }
        let (kernarg_size, group_size, private_size) = if kernel {
            (
                word(sym.address() + 8),
                word(sym.address()),
                word(sym.address() + 4),
            )
        } else {
            (0, 0, 0)
        };
        symbols.push(Symbol {
            handle: next_handle(),
            name: name.to_string(),
            agent,
            kernel,
            address: (sym.address() as i64 + load_delta) as u64,
            size: sym.size(),
            kernarg_size,
            group_size,
            private_size,
        });
    }
    let storage_base = bytes.as_ptr() as u64;
    let lco = LoadedCodeObject {
        handle: next_handle(),
        executable,
        agent,
        storage_base,
        storage_size: bytes.len() as u64,
        load_base: base as u64,
        load_size,
        load_delta,
        uri: uri.unwrap_or_else(|| {
            format!(
                "memory://{}#offset={:#x}&size={}",
                std::process::id(),
                storage_base,
                bytes.len()
            )
        }),
    };
    Ok((lco, symbols))
}

pub extern "C" fn hsa_executable_load_agent_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    _options: *const c_char,
    loaded_code_object: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    if crate::agent::find(agent.handle).is_none_or(|a| !a.is_gpu()) {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    let Some(Reader { bytes, uri }) = with(|r| r.readers.get(&reader.handle).cloned()) else {
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    };
    match with(|r| r.executables.get(&executable.handle).map(|e| e.frozen)) {
        None => return HSA_STATUS_ERROR_INVALID_EXECUTABLE,
        Some(true) => return HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
        Some(false) => {}
    }
    let (lco, symbols) = match load(&bytes, uri, agent.handle, executable.handle) {
        Ok(loaded) => loaded,
        Err(e) => return e,
    };
    let handle = lco.handle;
    sim_log!(
        "loaded code object {:#x} ({} symbols) at {:#x}",
        handle,
        symbols.len(),
        lco.load_base
    );
    with(|r| {
        let exe = r
            .executables
            .get_mut(&executable.handle)
            .expect("checked above");
        exe.code_objects.push(handle);
        for s in symbols {
            if s.kernel {
                let name = s.name.trim_end_matches(".kd").to_string();
                r.kernels.insert(
                    s.address,
                    Arc::new(KernelInfo {
                        name,
                        kernarg_size: s.kernarg_size,
                    }),
                );
            }
            exe.symbols.push(s.handle);
            r.symbols.insert(s.handle, s);
        }
        r.code_objects.insert(handle, lco);
    });
    if loaded_code_object.is_null() {
        HSA_STATUS_SUCCESS
    } else {
        out(loaded_code_object, Handle { handle })
    }
}

pub extern "C" fn hsa_executable_freeze(
    executable: hsa_executable_t,
    _options: *const c_char,
) -> hsa_status_t {
    with(|r| match r.executables.get_mut(&executable.handle) {
        Some(e) if e.frozen => HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
        Some(e) => {
            e.frozen = true;
            HSA_STATUS_SUCCESS
        }
        None => HSA_STATUS_ERROR_INVALID_EXECUTABLE,
    })
}

pub extern "C" fn hsa_executable_destroy(executable: hsa_executable_t) -> hsa_status_t {
    with(|r| {
        let Some(exe) = r.executables.remove(&executable.handle) else {
            return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
        };
        for s in exe.symbols {
            if let Some(sym) = r.symbols.remove(&s) {
                r.kernels.remove(&sym.address);
            }
        }
        for c in exe.code_objects {
            if let Some(lco) = r.code_objects.remove(&c) {
                memory::free(lco.load_base as *mut u8);
            }
        }
        HSA_STATUS_SUCCESS
    })
}

pub extern "C" fn hsa_executable_get_info(
    executable: hsa_executable_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some(frozen) = with(|r| r.executables.get(&executable.handle).map(|e| e.frozen)) else {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    };
    match attribute {
        HSA_EXECUTABLE_INFO_PROFILE => write_info(value, Info::U32(0)),
        HSA_EXECUTABLE_INFO_STATE => write_info(
            value,
            Info::U32(if frozen {
                HSA_EXECUTABLE_STATE_FROZEN
            } else {
                HSA_EXECUTABLE_STATE_UNFROZEN
            }),
        ),
        _ => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}

pub extern "C" fn hsa_executable_validate(
    executable: hsa_executable_t,
    result: *mut u32,
) -> hsa_status_t {
    if with(|r| r.executables.contains_key(&executable.handle)) {
        out(result, 0)
    } else {
        HSA_STATUS_ERROR_INVALID_EXECUTABLE
    }
}

pub extern "C" fn hsa_executable_validate_alt(
    executable: hsa_executable_t,
    _options: *const c_char,
    result: *mut u32,
) -> hsa_status_t {
    hsa_executable_validate(executable, result)
}

pub extern "C" fn hsa_executable_get_symbol_by_name(
    executable: hsa_executable_t,
    name: *const c_char,
    agent: *const hsa_agent_t,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    let Some(name) = c_str(name) else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    let agent = crate::util::slice(agent, 1).first().map(|a| a.handle);
    let found = with(|r| {
        let exe = r.executables.get(&executable.handle)?;
        exe.symbols
            .iter()
            .find(|h| {
                r.symbols
                    .get(h)
                    .is_some_and(|s| s.name == name && agent.is_none_or(|a| a == s.agent))
            })
            .copied()
    });
    match found {
        Some(handle) => out(symbol, Handle { handle }),
        None => HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
    }
}

pub extern "C" fn hsa_executable_get_symbol(
    executable: hsa_executable_t,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    agent: hsa_agent_t,
    _call_convention: i32,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol)
}

type AgentSymbolCallback = Option<
    extern "C" fn(
        hsa_executable_t,
        hsa_agent_t,
        hsa_executable_symbol_t,
        *mut c_void,
    ) -> hsa_status_t,
>;
type SymbolCallback =
    Option<extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t>;

fn symbols_of(executable: u64, agent: Option<u64>) -> Option<Vec<(u64, u64)>> {
    with(|r| {
        let exe = r.executables.get(&executable)?;
        Some(
            exe.symbols
                .iter()
                .filter_map(|h| r.symbols.get(h))
                .filter(|s| agent.is_none_or(|a| a == s.agent))
                .map(|s| (s.handle, s.agent))
                .collect(),
        )
    })
}

pub extern "C" fn hsa_executable_iterate_agent_symbols(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    callback: AgentSymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    let Some(list) = symbols_of(executable.handle, Some(agent.handle)) else {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    };
    for (handle, _) in list {
        let status = callback(executable, agent, Handle { handle }, data);
        if status != HSA_STATUS_SUCCESS {
            return status;
        }
    }
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_executable_iterate_symbols(
    executable: hsa_executable_t,
    callback: SymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    let Some(list) = symbols_of(executable.handle, None) else {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    };
    for (handle, _) in list {
        let status = callback(executable, Handle { handle }, data);
        if status != HSA_STATUS_SUCCESS {
            return status;
        }
    }
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_executable_symbol_get_info(
    symbol: hsa_executable_symbol_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let info = with(|r| {
        let s = r.symbols.get(&symbol.handle)?;
        Some(match attribute {
            HSA_EXECUTABLE_SYMBOL_INFO_TYPE => Info::U32(if s.kernel {
                HSA_SYMBOL_KIND_KERNEL
            } else {
                HSA_SYMBOL_KIND_VARIABLE
            }),
            HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH => Info::U32(s.name.len() as u32),
            HSA_EXECUTABLE_SYMBOL_INFO_NAME => Info::Exact(s.name.clone()),
            HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE => Info::U32(1), // program linkage
            HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION => Info::bool(true),
            HSA_EXECUTABLE_SYMBOL_INFO_AGENT => Info::U64(s.agent),
            HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS => {
                Info::U64(if s.kernel { 0 } else { s.address })
            }
            9 => Info::U32(s.size as u32), // VARIABLE_SIZE
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT => {
                Info::U64(if s.kernel { s.address } else { 0 })
            }
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE => Info::U32(s.kernarg_size),
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT => Info::U32(16),
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE => Info::U32(s.group_size),
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE => Info::U32(s.private_size),
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK => Info::bool(false),
            _ => return None,
        })
    });
    match info {
        Some(info) => write_info(value, info),
        None if with(|r| r.symbols.contains_key(&symbol.handle)) => {
            HSA_STATUS_ERROR_INVALID_ARGUMENT
        }
        None => HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
    }
}

// ---- the loader extension (hsa_ven_amd_loader_1_03_pfn_t) ----

extern "C" fn query_host_address(
    device_address: *const c_void,
    host_address: *mut *const c_void,
) -> hsa_status_t {
    // Device memory is host memory.
    out(host_address, device_address)
}

extern "C" fn query_segment_descriptors(
    _descriptors: *mut c_void,
    _num: *mut usize,
) -> hsa_status_t {
    HSA_STATUS_ERROR
}

extern "C" fn query_executable(
    device_address: *const c_void,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    let address = device_address as u64;
    let found = with(|r| {
        r.code_objects
            .values()
            .find(|c| (c.load_base..c.load_base + c.load_size).contains(&address))
            .map(|c| c.executable)
    });
    match found {
        Some(handle) => out(executable, Handle { handle }),
        None => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}

type LcoCallback =
    Option<extern "C" fn(hsa_executable_t, hsa_loaded_code_object_t, *mut c_void) -> hsa_status_t>;

extern "C" fn executable_iterate_loaded_code_objects(
    executable: hsa_executable_t,
    callback: LcoCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    let Some(list) = with(|r| {
        r.executables
            .get(&executable.handle)
            .map(|e| e.code_objects.clone())
    }) else {
        return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    };
    for handle in list {
        let status = callback(executable, Handle { handle }, data);
        if status != HSA_STATUS_SUCCESS {
            return status;
        }
    }
    HSA_STATUS_SUCCESS
}

extern "C" fn loaded_code_object_get_info(
    lco: hsa_loaded_code_object_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let info = with(|r| {
        let c = r.code_objects.get(&lco.handle)?;
        Some(match attribute {
            LOADED_CODE_OBJECT_INFO_EXECUTABLE => Info::U64(c.executable),
            LOADED_CODE_OBJECT_INFO_KIND => Info::U32(LOADED_CODE_OBJECT_KIND_AGENT),
            LOADED_CODE_OBJECT_INFO_AGENT => Info::U64(c.agent),
            LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE => {
                Info::U32(CODE_OBJECT_STORAGE_TYPE_MEMORY)
            }
            LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE => Info::U64(c.storage_base),
            LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE => Info::U64(c.storage_size),
            LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_FILE => Info::U32(u32::MAX), // -1: not a file
            LOADED_CODE_OBJECT_INFO_LOAD_DELTA => Info::U64(c.load_delta as u64),
            LOADED_CODE_OBJECT_INFO_LOAD_BASE => Info::U64(c.load_base),
            LOADED_CODE_OBJECT_INFO_LOAD_SIZE => Info::U64(c.load_size),
            LOADED_CODE_OBJECT_INFO_URI_LENGTH => Info::U32(c.uri.len() as u32),
            LOADED_CODE_OBJECT_INFO_URI => Info::Exact(c.uri.clone()),
            _ => return None,
        })
    });
    match info {
        Some(info) => write_info(value, info),
        None => HSA_STATUS_ERROR_INVALID_ARGUMENT,
    }
}

type ExecutableCallback = Option<extern "C" fn(hsa_executable_t, *mut c_void) -> hsa_status_t>;

extern "C" fn iterate_executables(callback: ExecutableCallback, data: *mut c_void) -> hsa_status_t {
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    };
    let list: Vec<u64> = with(|r| r.executables.keys().copied().collect());
    for handle in list {
        let status = callback(Handle { handle }, data);
        if status != HSA_STATUS_SUCCESS {
            return status;
        }
    }
    HSA_STATUS_SUCCESS
}

/// The loader extension's function table.
pub fn loader_table() -> LoaderTable {
    LoaderTable {
        query_host_address: query_host_address as *const c_void,
        query_segment_descriptors: query_segment_descriptors as *const c_void,
        query_executable: query_executable as *const c_void,
        executable_iterate_loaded_code_objects: executable_iterate_loaded_code_objects
            as *const c_void,
        loaded_code_object_get_info: loaded_code_object_get_info as *const c_void,
        code_object_reader_create_from_file_with_offset_size: reader_from_file_with_offset_size
            as *const c_void,
        iterate_executables: iterate_executables as *const c_void,
    }
}

/// `hsa_system_get_major_extension_table(0x201, 1, length, table)`.
pub fn copy_loader_table(length: usize, table: *mut c_void) -> hsa_status_t {
    let t = loader_table();
    let size = std::mem::size_of::<LoaderTable>().min(length);
    // SAFETY: LoaderTable is a plain #[repr(C)] struct of pointers; we view
    // its first `size` bytes, which it has.
    let bytes =
        unsafe { std::slice::from_raw_parts((&t as *const LoaderTable).cast::<u8>(), size) };
    copy_bytes(table, bytes)
}
