//! Kernels: fat-binary and module registration, lazy loading into HSA
//! executables, and launches as AQL dispatch packets.
//!
//! hipcc-built programs call `__hipRegisterFatBinary` (a wrapper pointing at
//! a clang offload bundle) and `__hipRegisterFunction(host stub → device
//! name)` from static constructors; a `<<<>>>` launch is
//! `__hipPushCallConfiguration`, the stub's `__hipPopCallConfiguration`, and
//! `hipLaunchKernel(stub, …)`. C programs use `hipModuleLoad*`,
//! `hipModuleGetFunction` and `hipModuleLaunchKernel`. Both end in
//! [`launch`]: the code object for the device's architecture is loaded (once
//! per module and device) through the HSA loader — so an HSA tool sees the
//! executable — the kernel arguments are laid out as the code object's
//! metadata says, and a dispatch packet goes on the stream's queue.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::{Arc, Mutex, OnceLock};

use crate::device::{self, write_out};
use crate::error::*;
use crate::fatbin::{self, KernelMeta};
use crate::hsa::{self, Handle};
use crate::stream::{self, hipStream_t, Packet};

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// Code objects from one fat binary or module image.
pub struct Module {
    image: Vec<u8>,
    /// Where the image lies in a file, when it does: its code objects are
    /// then read from that file, so the loader names them by it
    /// (`file:///path/app#offset=…&size=…`), as ROCm's HIP runtime does for
    /// the code objects embedded in an executable or loaded from a file.
    origin: Option<Origin>,
    loaded: Mutex<HashMap<usize, Arc<Loaded>>>,
}

/// A file and the offset in it where a module's image starts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    path: std::path::PathBuf,
    offset: u64,
}

/// The file mapped at `addr` in this process (`/proc/self/maps`), and the
/// offset in that file of the byte at `addr`; `None` for anonymous memory
/// (the heap, a stack) or a file since deleted.
fn file_at_address(addr: usize) -> Option<Origin> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .find_map(|line| origin_in_maps_line(line, addr))
}

/// One `/proc/self/maps` line's answer for `addr`:
/// `start-end perms offset dev inode   path`.
fn origin_in_maps_line(line: &str, addr: usize) -> Option<Origin> {
    let mut rest = line;
    let mut field = || {
        let t = rest.trim_start();
        let end = t.find(char::is_whitespace).unwrap_or(t.len());
        let (f, r) = t.split_at(end);
        rest = r;
        f
    };
    let (range, _perms, offset, _dev, _inode) = (field(), field(), field(), field(), field());
    let path = rest.trim_start();
    if !path.starts_with('/') || path.ends_with(" (deleted)") {
        return None;
    }
    let (lo, hi) = range.split_once('-')?;
    let (lo, hi) = (
        usize::from_str_radix(lo, 16).ok()?,
        usize::from_str_radix(hi, 16).ok()?,
    );
    if !(lo..hi).contains(&addr) {
        return None;
    }
    let offset = u64::from_str_radix(offset, 16).ok()?;
    Some(Origin {
        path: path.into(),
        offset: offset + (addr - lo) as u64,
    })
}

/// A reader of `code`, which lies at `offset` of `origin`'s file, through
/// the HSA loader extension (as ROCm's HIP runtime reads code objects from
/// files); `None` when the file, the extension or those bytes are not
/// there (a file replaced since it was mapped, an image patched in memory).
fn file_reader(origin: &Origin, offset: u64, code: &[u8]) -> Option<Handle> {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::fd::AsRawFd;
    let size = code.len();
    let mut file = std::fs::File::open(&origin.path).ok()?;
    let mut on_disk = vec![0; size];
    file.seek(SeekFrom::Start(origin.offset + offset)).ok()?;
    file.read_exact(&mut on_disk).ok()?;
    if on_disk != code {
        return None;
    }
    let mut table = std::mem::MaybeUninit::<hsa::LoaderTable>::zeroed();
    // SAFETY: the table is a #[repr(C)] struct of pointers of the size we
    // pass; HSA writes at most that many bytes.
    let ok = unsafe {
        hsa::hsa_system_get_major_extension_table(
            hsa::EXTENSION_AMD_LOADER,
            1,
            std::mem::size_of::<hsa::LoaderTable>(),
            table.as_mut_ptr().cast(),
        ) == hsa::SUCCESS
    };
    if !ok {
        return None;
    }
    // SAFETY: zeroed, then filled by HSA: every field is a pointer or an
    // Option of a function pointer, for which all-zero is valid.
    let table = unsafe { table.assume_init() };
    let create = table.code_object_reader_create_from_file_with_offset_size?;
    let mut reader = Handle::default();
    // SAFETY: an open file descriptor (kept open for the call), a range of
    // the file, and a valid out-pointer.
    let status = unsafe {
        create(
            file.as_raw_fd(),
            (origin.offset + offset) as usize,
            size,
            &mut reader,
        )
    };
    (status == hsa::SUCCESS).then_some(reader)
}

/// A module loaded on one device.
struct Loaded {
    kernels: HashMap<String, (u64, KernelMeta)>,
}

/// A kernel of a module (what `hipFunction_t` points to).
pub struct Function {
    module: Arc<Module>,
    name: String,
    c_name: CString,
}

#[derive(Default)]
struct Registry {
    functions_by_host: HashMap<usize, Arc<Function>>,
    function_handles: HashMap<usize, Arc<Function>>,
    modules: HashMap<usize, Arc<Module>>,
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

impl Module {
    fn new(image: Vec<u8>, origin: Option<Origin>) -> Arc<Module> {
        Arc::new(Module {
            image,
            origin,
            loaded: Mutex::default(),
        })
    }

    /// Loads the module on device `dev` (once).
    fn load(&self, dev: usize) -> Result<Arc<Loaded>, hipError_t> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = loaded.get(&dev) {
            return Ok(l.clone());
        }
        let d = device::device(dev)?;
        let code = fatbin::code_object_for(&self.image, &d.arch).ok_or(hipErrorNoBinaryForGpu)?;
        let metas = fatbin::kernels(code).map_err(|e| {
            eprintln!("sim-hip: cannot read kernel metadata: {e}");
            hipErrorInvalidImage
        })?;
        let (mut reader, mut exe) = (Handle::default(), Handle::default());
        // From the file the image is in, when it is in one; else from memory
        // (the HSA reader copies `code`, which lives as long as the module).
        let in_image = code.as_ptr() as u64 - self.image.as_ptr() as u64;
        let from_file = self
            .origin
            .as_ref()
            .and_then(|o| file_reader(o, in_image, code));
        let read = match from_file {
            Some(r) => {
                reader = r;
                true
            }
            // SAFETY: `code` is `code.len()` readable bytes; `reader` is a
            // valid out-pointer.
            None => unsafe {
                hsa::hsa_code_object_reader_create_from_memory(
                    code.as_ptr().cast(),
                    code.len(),
                    &mut reader,
                ) == hsa::SUCCESS
            },
        };
        // SAFETY: out-pointers are valid; options are null.
        let ok = read
            && unsafe {
                hsa::hsa_executable_create_alt(0, 0, std::ptr::null(), &mut exe) == hsa::SUCCESS
                    && hsa::hsa_executable_load_agent_code_object(
                        exe,
                        d.agent,
                        reader,
                        std::ptr::null(),
                        std::ptr::null_mut(),
                    ) == hsa::SUCCESS
                    && hsa::hsa_executable_freeze(exe, std::ptr::null()) == hsa::SUCCESS
            };
        if !ok {
            return Err(hipErrorInvalidImage);
        }
        let mut kernels = HashMap::new();
        for meta in metas {
            let symbol = CString::new(meta.symbol.clone()).map_err(|_| hipErrorInvalidImage)?;
            let mut sym = Handle::default();
            let mut object = 0u64;
            // SAFETY: valid executable, NUL-terminated name, agent pointer
            // and out-pointers of the documented types.
            let found = unsafe {
                hsa::hsa_executable_get_symbol_by_name(exe, symbol.as_ptr(), &d.agent, &mut sym)
                    == hsa::SUCCESS
                    && hsa::hsa_executable_symbol_get_info(
                        sym,
                        hsa::SYMBOL_INFO_KERNEL_OBJECT,
                        (&mut object as *mut u64).cast(),
                    ) == hsa::SUCCESS
            };
            if found {
                kernels.insert(meta.name.clone(), (object, meta));
            }
        }
        let l = Arc::new(Loaded { kernels });
        loaded.insert(dev, l.clone());
        Ok(l)
    }

    /// Kernel names in the code object for `arch` (without loading it).
    fn kernel_names(&self, arch: &str) -> Vec<String> {
        fatbin::code_object_for(&self.image, arch)
            .and_then(|c| fatbin::kernels(c).ok())
            .map(|k| k.into_iter().map(|m| m.name).collect())
            .unwrap_or_default()
    }
}

/// hipcc's `__CudaFatBinaryWrapper`.
#[repr(C)]
struct FatbinWrapper {
    magic: u32,
    version: u32,
    binary: *const u8,
    unused: *const c_void,
}

const HIPF_MAGIC: u32 = 0x4849_5046;

pub extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let wrapper = data.cast::<FatbinWrapper>();
    if wrapper.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: hipcc passes a pointer to its static fat-binary wrapper.
    let (magic, binary) = unsafe { ((*wrapper).magic, (*wrapper).binary) };
    if magic != HIPF_MAGIC || binary.is_null() {
        eprintln!("sim-hip: __hipRegisterFatBinary: not a HIP fat binary wrapper");
        return std::ptr::null_mut();
    }
    // SAFETY: `binary` points to the offload bundle hipcc embedded.
    let Some(len) = (unsafe { fatbin::bundle_len(binary) }) else {
        eprintln!("sim-hip: __hipRegisterFatBinary: not a clang offload bundle");
        return std::ptr::null_mut();
    };
    // SAFETY: the bundle is `len` bytes long (computed from its header).
    let image = unsafe { std::slice::from_raw_parts(binary, len) }.to_vec();
    // Embedded in the executable (or a library): its code objects are
    // read from that file, as ROCm's HIP runtime reads them.
    let module = Module::new(image, file_at_address(binary as usize));
    let handle = Box::into_raw(Box::new(std::ptr::null_mut::<c_void>()));
    if crate::log_enabled() {
        eprintln!(
            "sim-hip: registered fat binary for {:?}",
            fatbin::archs(&module.image)
        );
    }
    registry().modules.insert(handle as usize, module);
    handle
}

pub extern "C" fn __hipUnregisterFatBinary(_handle: *mut *mut c_void) {
    // Kernels stay loaded until exit: destructors may still launch.
}

pub extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    host_function: *const c_void,
    _device_function: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_uint,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut Dim3,
    _grid_dim: *mut Dim3,
    _w_size: *mut c_int,
) {
    if device_name.is_null() {
        return;
    }
    // SAFETY: hipcc passes the kernel's NUL-terminated mangled name.
    let name = unsafe { std::ffi::CStr::from_ptr(device_name) }
        .to_string_lossy()
        .into_owned();
    let mut r = registry();
    let Some(module) = r.modules.get(&(modules as usize)).cloned() else {
        eprintln!("sim-hip: __hipRegisterFunction({name}) with an unknown fat binary");
        return;
    };
    if crate::log_enabled() {
        eprintln!("sim-hip: registered kernel {name}");
    }
    let c_name = CString::new(name.clone()).unwrap_or_default();
    r.functions_by_host.insert(
        host_function as usize,
        Arc::new(Function {
            module,
            name,
            c_name,
        }),
    );
}

pub extern "C" fn __hipRegisterVar(
    _modules: *mut *mut c_void,
    _var: *mut c_void,
    _host_var: *mut c_char,
    _device_var: *const c_char,
    _ext: c_int,
    _size: usize,
    _constant: c_int,
    _global: c_int,
) {
}

pub extern "C" fn __hipRegisterManagedVar(
    _modules: *mut c_void,
    _pointer: *mut *mut c_void,
    _init_value: *mut c_void,
    _name: *const c_char,
    _size: usize,
    _align: c_uint,
) {
}

pub extern "C" fn __hipRegisterSurface(
    _m: *mut *mut c_void,
    _v: *mut c_void,
    _h: *mut c_char,
    _d: *const c_char,
    _dim: c_int,
    _ext: c_int,
) {
}

pub extern "C" fn __hipRegisterTexture(
    _m: *mut *mut c_void,
    _v: *mut c_void,
    _h: *mut c_char,
    _d: *const c_char,
    _dim: c_int,
    _norm: c_int,
    _ext: c_int,
) {
}

thread_local! {
    static CONFIG: RefCell<Vec<(Dim3, Dim3, usize, hipStream_t)>> = const { RefCell::new(Vec::new()) };
}

pub extern "C" fn __hipPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    CONFIG.with(|c| c.borrow_mut().push((grid, block, shared, stream)));
    hipSuccess
}

pub extern "C" fn __hipPopCallConfiguration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared: *mut usize,
    stream: *mut hipStream_t,
) -> hipError_t {
    match CONFIG.with(|c| c.borrow_mut().pop()) {
        Some((g, b, s, st)) => {
            write_out(grid, g);
            write_out(block, b);
            write_out(shared, s);
            write_out(stream, st)
        }
        None => ret(52), // hipErrorMissingConfiguration
    }
}

/// Where a launch's arguments come from.
enum Args {
    /// One pointer per explicit argument (`void** args`).
    Pointers(*mut *mut c_void),
    /// A ready-made argument buffer (`HIP_LAUNCH_PARAM_BUFFER_POINTER`).
    Buffer(*const u8, usize),
}

fn fill_kernarg(
    buf: &mut [u8],
    meta: &KernelMeta,
    args: &Args,
    grid: Dim3,
    block: Dim3,
) -> Result<(), hipError_t> {
    match *args {
        Args::Buffer(ptr, len) => {
            let n = len.min(buf.len());
            // SAFETY: the application's buffer holds `len` bytes.
            buf[..n].copy_from_slice(unsafe { std::slice::from_raw_parts(ptr, n) });
        }
        Args::Pointers(ptrs) => {
            let mut explicit = 0usize;
            for arg in &meta.args {
                let (at, size) = (arg.offset as usize, arg.size as usize);
                let Some(dst) = buf.get_mut(at..at + size) else {
                    return Err(hipErrorInvalidImage);
                };
                match arg.value_kind.as_str() {
                    "hidden_block_count_x" => {
                        dst.copy_from_slice(&grid.x.to_le_bytes()[..size.min(4)])
                    }
                    "hidden_block_count_y" => {
                        dst.copy_from_slice(&grid.y.to_le_bytes()[..size.min(4)])
                    }
                    "hidden_block_count_z" => {
                        dst.copy_from_slice(&grid.z.to_le_bytes()[..size.min(4)])
                    }
                    "hidden_group_size_x" => {
                        dst.copy_from_slice(&(block.x as u16).to_le_bytes()[..size.min(2)])
                    }
                    "hidden_group_size_y" => {
                        dst.copy_from_slice(&(block.y as u16).to_le_bytes()[..size.min(2)])
                    }
                    "hidden_group_size_z" => {
                        dst.copy_from_slice(&(block.z as u16).to_le_bytes()[..size.min(2)])
                    }
                    kind if kind.starts_with("hidden_") => {}
                    _ => {
                        if ptrs.is_null() {
                            return Err(hipErrorInvalidValue);
                        }
                        // SAFETY: `args` has one pointer per explicit kernel
                        // argument, each pointing at a value of the size the
                        // metadata gives.
                        unsafe {
                            let src = *ptrs.add(explicit);
                            if src.is_null() {
                                return Err(hipErrorInvalidValue);
                            }
                            dst.copy_from_slice(std::slice::from_raw_parts(src.cast::<u8>(), size));
                        }
                        explicit += 1;
                    }
                }
            }
        }
    }
    Ok(())
}

fn launch(
    f: &Function,
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: hipStream_t,
    args: Args,
) -> hipError_t {
    let s = match stream::resolve(stream) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let loaded = match f.module.load(s.device) {
        Ok(l) => l,
        Err(e) => return e,
    };
    let Some((object, meta)) = loaded.kernels.get(&f.name) else {
        return hipErrorInvalidDeviceFunction;
    };
    if [grid.x, grid.y, grid.z, block.x, block.y, block.z].contains(&0)
        || block.x * block.y * block.z > 1024
    {
        return 9; // hipErrorInvalidConfiguration
    }
    let rt = match device::runtime() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    let size = (meta.kernarg_size as usize).max(16);
    let mut kernarg: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid pool and out-pointer.
    if unsafe { hsa::hsa_amd_memory_pool_allocate(rt.kernarg_pool, size, 0, &mut kernarg) }
        != hsa::SUCCESS
    {
        return hipErrorOutOfMemory;
    }
    // SAFETY: a fresh allocation of `size` bytes that only we reference.
    let buf = unsafe { std::slice::from_raw_parts_mut(kernarg.cast::<u8>(), size) };
    if let Err(e) = fill_kernarg(buf, meta, &args, grid, block) {
        // SAFETY: freeing the buffer allocated above.
        unsafe { hsa::hsa_amd_memory_pool_free(kernarg) };
        return e;
    }
    let (object, group, private) = (
        *object,
        meta.group_segment_fixed_size + shared as u32,
        meta.private_segment_fixed_size,
    );
    let make = |completion: Handle| {
        let mut body = [0u8; 60];
        let mut put =
            |at: usize, bytes: &[u8]| body[at - 4..at - 4 + bytes.len()].copy_from_slice(bytes);
        put(4, &(block.x as u16).to_le_bytes());
        put(6, &(block.y as u16).to_le_bytes());
        put(8, &(block.z as u16).to_le_bytes());
        put(12, &(grid.x * block.x).to_le_bytes());
        put(16, &(grid.y * block.y).to_le_bytes());
        put(20, &(grid.z * block.z).to_le_bytes());
        put(24, &private.to_le_bytes());
        put(28, &group.to_le_bytes());
        put(32, &object.to_le_bytes());
        put(40, &(kernarg as u64).to_le_bytes());
        put(56, &completion.handle.to_le_bytes());
        Packet {
            header: hsa::PACKET_TYPE_KERNEL_DISPATCH | hsa::HEADER_FENCES,
            setup: 3,
            body,
        }
    };
    match s.launch(make, Some(kernarg as usize)) {
        Ok(()) => hipSuccess,
        Err(e) => e,
    }
}

pub extern "C" fn hipLaunchKernel(
    function: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipLaunchKernel", {
        let Some(f) = registry()
            .functions_by_host
            .get(&(function as usize))
            .cloned()
        else {
            return hipErrorInvalidDeviceFunction;
        };
        launch(&f, grid, block, shared, stream, Args::Pointers(args))
    })
}

fn function_of(f: *mut c_void) -> Option<Arc<Function>> {
    registry().function_handles.get(&(f as usize)).cloned()
}

const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
const LAUNCH_PARAM_END: usize = 3;

pub extern "C" fn hipModuleLaunchKernel(
    f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    api!("hipModuleLaunchKernel", {
        let Some(func) = function_of(f) else {
            return hipErrorInvalidHandle;
        };
        let args = if !params.is_null() || extra.is_null() {
            Args::Pointers(params)
        } else {
            let (mut buffer, mut size) = (std::ptr::null::<u8>(), 0usize);
            let mut i = 0;
            loop {
                // SAFETY: `extra` is a key/value list ended by
                // HIP_LAUNCH_PARAM_END; we stop there (or after 16 pairs).
                let key = unsafe { *extra.add(i) } as usize;
                if key == LAUNCH_PARAM_END || i > 32 {
                    break;
                }
                // SAFETY: as above; every key is followed by its value.
                let value = unsafe { *extra.add(i + 1) };
                match key {
                    LAUNCH_PARAM_BUFFER_POINTER => buffer = value.cast(),
                    LAUNCH_PARAM_BUFFER_SIZE if !value.is_null() => {
                        // SAFETY: the size value points at a size_t.
                        size = unsafe { *value.cast::<usize>() }
                    }
                    _ => {}
                }
                i += 2;
            }
            if buffer.is_null() {
                return hipErrorInvalidValue;
            }
            Args::Buffer(buffer, size)
        };
        let (grid, block) = (
            Dim3 {
                x: gx,
                y: gy,
                z: gz,
            },
            Dim3 {
                x: bx,
                y: by,
                z: bz,
            },
        );
        launch(&func, grid, block, shared as usize, stream, args)
    })
}

fn elf_len(ptr: *const u8) -> usize {
    // SAFETY: the caller passed an ELF64 image; its 64-byte header tells
    // where the section and program header tables end, which for code
    // objects is the end of the file.
    let header = unsafe { std::slice::from_raw_parts(ptr, 64) };
    let u64_at = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap()) as usize;
    let u16_at = |at: usize| u16::from_le_bytes(header[at..at + 2].try_into().unwrap()) as usize;
    let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
    let (phsize, phnum, shsize, shnum) = (u16_at(0x36), u16_at(0x38), u16_at(0x3a), u16_at(0x3c));
    (phoff + phsize * phnum).max(shoff + shsize * shnum).max(64)
}

fn new_module(image: Vec<u8>, origin: Option<Origin>, out: *mut *mut c_void) -> hipError_t {
    if let Err(e) = device::runtime() {
        return e;
    }
    let module = Module::new(image, origin);
    let handle = Arc::as_ptr(&module) as usize;
    registry().modules.insert(handle, module);
    write_out(out, handle as *mut c_void)
}

pub extern "C" fn hipModuleLoadData(module: *mut *mut c_void, image: *const c_void) -> hipError_t {
    api!("hipModuleLoadData", {
        if image.is_null() {
            return hipErrorInvalidValue;
        }
        let ptr = image.cast::<u8>();
        // SAFETY: a module image starts with at least 24 readable bytes
        // (an ELF header or a bundle magic).
        let head = unsafe { std::slice::from_raw_parts(ptr, 24) };
        let len = if head == fatbin::BUNDLE_MAGIC {
            // SAFETY: it is a bundle.
            unsafe { fatbin::bundle_len(ptr) }.unwrap_or(0)
        } else if head.starts_with(b"\x7fELF") {
            elf_len(ptr)
        } else {
            return hipErrorInvalidImage;
        };
        // SAFETY: the image is `len` bytes long, per its own header.
        new_module(
            unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec(),
            file_at_address(ptr as usize),
            module,
        )
    })
}

pub extern "C" fn hipModuleLoad(module: *mut *mut c_void, fname: *const c_char) -> hipError_t {
    api!("hipModuleLoad", {
        if fname.is_null() {
            return hipErrorInvalidValue;
        }
        // SAFETY: a NUL-terminated path (checked non-null).
        let path = unsafe { std::ffi::CStr::from_ptr(fname) }
            .to_string_lossy()
            .into_owned();
        match std::fs::read(&path) {
            Ok(bytes) => {
                let path = std::fs::canonicalize(&path).unwrap_or_else(|_| path.into());
                new_module(bytes, Some(Origin { path, offset: 0 }), module)
            }
            Err(_) => hipErrorFileNotFound,
        }
    })
}

pub extern "C" fn hipModuleUnload(module: *mut c_void) -> hipError_t {
    api!("hipModuleUnload", {
        if registry().modules.contains_key(&(module as usize)) {
            hipSuccess
        } else {
            hipErrorInvalidHandle
        }
    })
}

pub extern "C" fn hipModuleGetFunction(
    function: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> hipError_t {
    api!("hipModuleGetFunction", {
        if name.is_null() {
            return hipErrorInvalidValue;
        }
        // SAFETY: a NUL-terminated kernel name (checked non-null).
        let name = unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        let Some(module) = registry().modules.get(&(module as usize)).cloned() else {
            return hipErrorInvalidHandle;
        };
        let arch = match device::device(device::current()) {
            Ok(d) => d.arch.clone(),
            Err(e) => return e,
        };
        if !module.kernel_names(&arch).contains(&name) {
            return hipErrorNotFound;
        }
        let c_name = CString::new(name.clone()).unwrap_or_default();
        let f = Arc::new(Function {
            module,
            name,
            c_name,
        });
        let handle = Arc::as_ptr(&f) as usize;
        registry().function_handles.insert(handle, f);
        write_out(function, handle as *mut c_void)
    })
}

pub extern "C" fn hipKernelNameRef(f: *mut c_void) -> *const c_char {
    function_of(f).map_or(std::ptr::null(), |f| f.c_name.as_ptr())
}

pub extern "C" fn hipKernelNameRefByPtr(
    host_function: *const c_void,
    _stream: hipStream_t,
) -> *const c_char {
    registry()
        .functions_by_host
        .get(&(host_function as usize))
        .map_or(std::ptr::null(), |f| f.c_name.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_line_gives_the_file_and_offset_of_an_address() {
        let line = "5581a000-5581c000 r--p 00003000 08:01 1234        /opt/my app/bin/app";
        assert_eq!(
            origin_in_maps_line(line, 0x5581_a010),
            Some(Origin {
                path: "/opt/my app/bin/app".into(),
                offset: 0x3010
            })
        );
        assert_eq!(origin_in_maps_line(line, 0x5581_c000), None, "end excluded");
        let heap = "55820000-55841000 rw-p 00000000 00:00 0          [heap]";
        assert_eq!(origin_in_maps_line(heap, 0x5582_0010), None);
        let anon = "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ";
        assert_eq!(origin_in_maps_line(anon, 0x7f00_0000_0010), None);
        let gone = "7f0000000000-7f0000001000 r--p 00000000 08:01 9 /tmp/x.so (deleted)";
        assert_eq!(origin_in_maps_line(gone, 0x7f00_0000_0010), None);
    }

    #[test]
    fn this_test_binary_is_found_at_its_own_code() {
        let here = this_test_binary_is_found_at_its_own_code as fn() as usize;
        let origin = file_at_address(here).expect("code is file-backed");
        assert_eq!(
            std::fs::canonicalize(&origin.path).unwrap(),
            std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap()
        );
    }
}
