//! Devices: discovered from the HSA agents on first use (which is when
//! `hsa_init` runs and HSA tools get loaded), the per-thread current device,
//! and `hipDeviceProp_t` with the ROCm 5.2 layout (checked against the real
//! header in `layout_check`).

use std::cell::Cell;
use std::ffi::{c_char, c_int};
use std::sync::OnceLock;

use crate::error::*;
use crate::hsa::{self, Handle};

pub struct Device {
    pub agent: Handle,
    pub arch: String,
    pub name: String,
    pub compute_units: u32,
    pub clock_mhz: u32,
    pub memory: u64,
    pub pool: Handle,
}

pub struct Runtime {
    pub cpu: Handle,
    pub host_pool: Handle,
    pub kernarg_pool: Handle,
    pub devices: Vec<Device>,
}

fn discover() -> Result<Runtime, hipError_t> {
    // SAFETY: hsa_init has no arguments; it may load HSA tools.
    if unsafe { hsa::hsa_init() } != hsa::SUCCESS {
        return Err(hipErrorNoDevice);
    }
    // SAFETY: `hsa::collect` passes a valid callback and data pointer.
    let agents = hsa::collect(|cb, data| unsafe { hsa::hsa_iterate_agents(cb, data) });
    let mut cpu = None;
    let mut devices = Vec::new();
    for agent in agents {
        // SAFETY: the closure forwards a valid callback and data pointer.
        let pools = hsa::collect(|cb, data| unsafe {
            hsa::hsa_amd_agent_iterate_memory_pools(agent, cb, data)
        });
        match hsa::agent_info::<u32>(agent, hsa::AGENT_INFO_DEVICE) {
            Some(0) if cpu.is_none() => {
                let flags = |p: &Handle| {
                    hsa::pool_info::<u32>(*p, hsa::POOL_INFO_GLOBAL_FLAGS).unwrap_or(0)
                };
                let kernarg = pools
                    .iter()
                    .find(|p| flags(p) & hsa::GLOBAL_FLAG_KERNARG != 0)
                    .copied();
                let fine = pools
                    .iter()
                    .find(|p| flags(p) & hsa::GLOBAL_FLAG_FINE_GRAINED != 0)
                    .copied();
                cpu = Some((agent, fine.or(kernarg), kernarg.or(fine)));
            }
            Some(1) => {
                let Some(pool) = pools.first().copied() else {
                    continue;
                };
                devices.push(Device {
                    agent,
                    arch: hsa::agent_string(agent, hsa::AGENT_INFO_NAME),
                    name: hsa::agent_string(agent, hsa::AMD_AGENT_INFO_PRODUCT_NAME),
                    compute_units: hsa::agent_info(agent, hsa::AMD_AGENT_INFO_COMPUTE_UNIT_COUNT)
                        .unwrap_or(1),
                    clock_mhz: hsa::agent_info(agent, hsa::AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY)
                        .unwrap_or(1000),
                    memory: hsa::pool_info(pool, hsa::POOL_INFO_SIZE).unwrap_or(0),
                    pool,
                });
            }
            _ => {}
        }
    }
    let (cpu, Some(host_pool), Some(kernarg_pool)) = cpu.ok_or(hipErrorNoDevice)? else {
        return Err(hipErrorNoDevice);
    };
    if devices.is_empty() {
        return Err(hipErrorNoDevice);
    }
    if crate::log_enabled() {
        eprintln!(
            "sim-hip: {} device(s): {}",
            devices.len(),
            devices
                .iter()
                .map(|d| d.arch.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(Runtime {
        cpu,
        host_pool,
        kernarg_pool,
        devices,
    })
}

/// The HIP runtime, initialised on first use.
pub fn runtime() -> Result<&'static Runtime, hipError_t> {
    static RT: OnceLock<Result<Runtime, hipError_t>> = OnceLock::new();
    RT.get_or_init(discover).as_ref().map_err(|e| *e)
}

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

/// The calling thread's current device index.
pub fn current() -> usize {
    CURRENT.with(|c| c.get())
}

pub fn device(index: usize) -> Result<&'static Device, hipError_t> {
    runtime()?.devices.get(index).ok_or(hipErrorInvalidDevice)
}

pub(crate) fn write_out<T>(out: *mut T, value: T) -> hipError_t {
    if out.is_null() {
        return hipErrorInvalidValue;
    }
    // SAFETY: HIP out-parameters are valid pointers to `T` (checked non-null).
    unsafe { out.write(value) };
    hipSuccess
}

pub extern "C" fn hipInit(_flags: u32) -> hipError_t {
    api!("hipInit", { runtime().map_or_else(|e| e, |_| hipSuccess) })
}

pub extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hipError_t {
    api!("hipGetDeviceCount", {
        match runtime() {
            Ok(rt) => write_out(count, rt.devices.len() as c_int),
            Err(e) => {
                write_out(count, 0);
                e
            }
        }
    })
}

pub extern "C" fn hipSetDevice(index: c_int) -> hipError_t {
    api!("hipSetDevice", {
        if index < 0 {
            return hipErrorInvalidDevice;
        }
        match device(index as usize) {
            Ok(_) => {
                CURRENT.with(|c| c.set(index as usize));
                hipSuccess
            }
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipGetDevice(index: *mut c_int) -> hipError_t {
    api!("hipGetDevice", {
        if let Err(e) = runtime() {
            return e;
        }
        write_out(index, current() as c_int)
    })
}

pub extern "C" fn hipDeviceGet(out: *mut c_int, ordinal: c_int) -> hipError_t {
    api!("hipDeviceGet", {
        match device(ordinal.max(0) as usize) {
            Ok(_) if ordinal >= 0 => write_out(out, ordinal),
            Ok(_) => hipErrorInvalidDevice,
            Err(e) => e,
        }
    })
}

fn copy_name(dst: *mut c_char, len: usize, name: &str) -> hipError_t {
    if dst.is_null() || len == 0 {
        return hipErrorInvalidValue;
    }
    let n = name.len().min(len - 1);
    // SAFETY: the caller provides `len` writable bytes; we write n + 1 <= len.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), dst.cast::<u8>(), n);
        dst.add(n).write(0);
    }
    hipSuccess
}

pub extern "C" fn hipDeviceGetName(name: *mut c_char, len: c_int, index: c_int) -> hipError_t {
    api!("hipDeviceGetName", {
        match device(index.max(0) as usize) {
            Ok(d) => copy_name(name, len.max(0) as usize, &d.name),
            Err(e) => e,
        }
    })
}

/// `hipDeviceProp_t` of ROCm 5.2 (`hip_runtime_api.h`).
#[repr(C)]
pub struct hipDeviceProp_t {
    pub name: [c_char; 256],
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub multiProcessorCount: c_int,
    pub l2CacheSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub computeMode: c_int,
    pub clockInstructionRate: c_int,
    /// `hipDeviceArch_t`: 17 one-bit flags in an `unsigned`.
    pub arch: u32,
    pub concurrentKernels: c_int,
    pub pciDomainID: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub isMultiGpuBoard: c_int,
    pub canMapHostMemory: c_int,
    pub gcnArch: c_int,
    pub gcnArchName: [c_char; 256],
    pub integrated: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub hdpMemFlushCntl: *mut u32,
    pub hdpRegFlushCntl: *mut u32,
    pub memPitch: usize,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub kernelExecTimeoutEnabled: c_int,
    pub ECCEnabled: c_int,
    pub tccDriver: c_int,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
    pub managedMemory: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub concurrentManagedAccess: c_int,
    pub pageableMemoryAccess: c_int,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
}

fn fixed_name(s: &str) -> [c_char; 256] {
    let mut out = [0 as c_char; 256];
    for (o, b) in out.iter_mut().zip(s.bytes().take(255)) {
        *o = b as c_char;
    }
    out
}

/// `gfx90a` → major 9, minor 0, gcnArch 910 (the hex digit `a` counts as 10).
fn arch_numbers(arch: &str) -> (c_int, c_int, c_int) {
    let digits = arch.trim_start_matches("gfx");
    let (head, tail) = digits.split_at(digits.len().saturating_sub(2));
    let major = head.parse().unwrap_or(9);
    let mut chars = tail.chars();
    let minor = chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0) as c_int;
    let stepping = chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0) as c_int;
    (major, minor, major * 100 + minor * 10 + stepping)
}

pub fn properties(d: &Device) -> hipDeviceProp_t {
    // SAFETY: hipDeviceProp_t is plain old data (integers, arrays and raw
    // pointers), for which all-zero bytes are a valid value.
    let mut p: hipDeviceProp_t = unsafe { std::mem::zeroed() };
    let (major, minor, gcn) = arch_numbers(&d.arch);
    p.name = fixed_name(&d.name);
    p.totalGlobalMem = d.memory as usize;
    p.sharedMemPerBlock = 64 << 10;
    p.regsPerBlock = 65536;
    p.warpSize = 64;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim = [1024, 1024, 1024];
    p.maxGridSize = [i32::MAX, 65536, 65536];
    p.clockRate = d.clock_mhz as c_int * 1000;
    p.memoryClockRate = 1_600_000;
    p.memoryBusWidth = 4096;
    p.totalConstMem = d.memory as usize;
    p.major = major;
    p.minor = minor;
    p.multiProcessorCount = d.compute_units as c_int;
    p.l2CacheSize = 8 << 20;
    p.maxThreadsPerMultiProcessor = 2048;
    p.clockInstructionRate = 1_000_000;
    p.arch = (1 << 17) - 1;
    p.concurrentKernels = 1;
    p.pciBusID = 0;
    p.maxSharedMemoryPerMultiProcessor = 64 << 10;
    p.canMapHostMemory = 1;
    p.gcnArch = gcn;
    p.gcnArchName = fixed_name(&d.arch);
    p.cooperativeLaunch = 1;
    p.maxTexture1DLinear = 1 << 27;
    p.maxTexture1D = 16384;
    p.maxTexture2D = [16384, 16384];
    p.maxTexture3D = [2048, 2048, 2048];
    p.memPitch = i32::MAX as usize;
    p.textureAlignment = 256;
    p.texturePitchAlignment = 256;
    p.isLargeBar = 1;
    p.managedMemory = 1;
    p.directManagedMemAccessFromHost = 1;
    p.concurrentManagedAccess = 1;
    p.pageableMemoryAccess = 1;
    p.pageableMemoryAccessUsesHostPageTables = 1;
    p
}

pub extern "C" fn hipGetDeviceProperties(props: *mut hipDeviceProp_t, index: c_int) -> hipError_t {
    api!("hipGetDeviceProperties", {
        if index < 0 {
            return hipErrorInvalidDevice;
        }
        match device(index as usize) {
            Ok(d) => write_out(props, properties(d)),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipDeviceTotalMem(bytes: *mut usize, index: c_int) -> hipError_t {
    api!("hipDeviceTotalMem", {
        match device(index.max(0) as usize) {
            Ok(d) => write_out(bytes, d.memory as usize),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    api!("hipMemGetInfo", {
        match device(current()) {
            Ok(d) => {
                write_out(free, d.memory as usize);
                write_out(total, d.memory as usize)
            }
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipDriverGetVersion(version: *mut c_int) -> hipError_t {
    api!("hipDriverGetVersion", { write_out(version, 50221153) })
}

pub extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> hipError_t {
    api!("hipRuntimeGetVersion", { write_out(version, 50221153) })
}
