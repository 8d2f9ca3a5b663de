//! Memory: device and host allocations come from the HSA pools (host memory
//! underneath), copies go through the stream's HSA async copy. Synchronous
//! copies are an async copy on the null stream followed by a wait.
//! `hipMemset*` fills on the host after the stream's prior work completes.

use std::ffi::{c_int, c_uint, c_void};

use crate::device::{self, runtime, write_out};
use crate::error::*;
use crate::hsa::{self, Handle};
use crate::stream::{self, hipStream_t};

// `hipMemcpyKind` (`hipMemcpyHostToHost` = 0 …): the HIP API's copy
// directions, not ROCprofiler's copy operations (`rocwasm_ids::ops::copy`,
// from 1).
const HIP_MEMCPY_HOST_TO_HOST: c_int = 0;
const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
const HIP_MEMCPY_DEFAULT: c_int = 4;

fn allocate(pool: Handle, ptr: *mut *mut c_void, size: usize) -> hipError_t {
    if ptr.is_null() {
        return hipErrorInvalidValue;
    }
    if size == 0 {
        return write_out(ptr, std::ptr::null_mut());
    }
    let mut mem: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid pool handle and out-pointer.
    let status = unsafe { hsa::hsa_amd_memory_pool_allocate(pool, size, 0, &mut mem) };
    if status != hsa::SUCCESS {
        return hipErrorOutOfMemory;
    }
    write_out(ptr, mem)
}

fn free(ptr: *mut c_void) -> hipError_t {
    if ptr.is_null() {
        return hipSuccess;
    }
    if let Err(e) = runtime() {
        return e;
    }
    // hipFree synchronises the device before releasing memory.
    stream::synchronize_device(device::current());
    // SAFETY: freeing a pointer the application got from an allocation call.
    match unsafe { hsa::hsa_amd_memory_pool_free(ptr) } {
        hsa::SUCCESS => hipSuccess,
        _ => hipErrorInvalidValue,
    }
}

pub extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    api!("hipMalloc", {
        match device::device(device::current()) {
            Ok(d) => allocate(d.pool, ptr, size),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipExtMallocWithFlags(
    ptr: *mut *mut c_void,
    size: usize,
    _flags: c_uint,
) -> hipError_t {
    api!("hipExtMallocWithFlags", {
        match device::device(device::current()) {
            Ok(d) => allocate(d.pool, ptr, size),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, _flags: c_uint) -> hipError_t {
    api!("hipHostMalloc", {
        match runtime() {
            Ok(rt) => allocate(rt.host_pool, ptr, size),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    _flags: c_uint,
) -> hipError_t {
    api!("hipMallocManaged", {
        match runtime() {
            Ok(rt) => allocate(rt.host_pool, ptr, size),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    api!("hipFree", { free(ptr) })
}

pub extern "C" fn hipHostFree(ptr: *mut c_void) -> hipError_t {
    api!("hipHostFree", { free(ptr) })
}

/// Queues a copy on `stream`; `wait` makes it synchronous.
fn copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
    stream: hipStream_t,
    wait: bool,
) -> hipError_t {
    if size == 0 {
        return hipSuccess;
    }
    if dst.is_null() || src.is_null() {
        return hipErrorInvalidValue;
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    on_stream(stream, wait, |s, gpu| {
        let (src_agent, dst_agent) = match kind {
            HIP_MEMCPY_HOST_TO_HOST => (rt.cpu, rt.cpu),
            HIP_MEMCPY_HOST_TO_DEVICE => (rt.cpu, gpu),
            HIP_MEMCPY_DEVICE_TO_HOST => (gpu, rt.cpu),
            HIP_MEMCPY_DEVICE_TO_DEVICE | HIP_MEMCPY_DEFAULT => (gpu, gpu),
            _ => return Err(hipErrorInvalidMemcpyDirection),
        };
        s.copy(dst, dst_agent, src, src_agent, size)
    })
}

/// Runs `queue(stream, its device's GPU agent)` on the resolved `stream`,
/// then waits for the stream when `wait`.
fn on_stream(
    stream: hipStream_t,
    wait: bool,
    queue: impl FnOnce(&stream::Stream, Handle) -> Result<(), hipError_t>,
) -> hipError_t {
    let s = match stream::resolve(stream) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let gpu = match device::device(s.device) {
        Ok(d) => d.agent,
        Err(e) => return e,
    };
    if let Err(e) = queue(&s, gpu) {
        return e;
    }
    if wait {
        s.synchronize();
    }
    hipSuccess
}

pub extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
) -> hipError_t {
    api!("hipMemcpy", {
        copy(dst, src, size, kind, std::ptr::null_mut(), true)
    })
}

pub extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipMemcpyAsync", {
        copy(dst, src, size, kind, stream, false)
    })
}

pub extern "C" fn hipMemcpyHtoD(dst: *mut c_void, src: *const c_void, size: usize) -> hipError_t {
    api!("hipMemcpyHtoD", {
        copy(
            dst,
            src,
            size,
            HIP_MEMCPY_HOST_TO_DEVICE,
            std::ptr::null_mut(),
            true,
        )
    })
}

pub extern "C" fn hipMemcpyDtoH(dst: *mut c_void, src: *const c_void, size: usize) -> hipError_t {
    api!("hipMemcpyDtoH", {
        copy(
            dst,
            src,
            size,
            HIP_MEMCPY_DEVICE_TO_HOST,
            std::ptr::null_mut(),
            true,
        )
    })
}

pub extern "C" fn hipMemcpyDtoD(dst: *mut c_void, src: *const c_void, size: usize) -> hipError_t {
    api!("hipMemcpyDtoD", {
        copy(
            dst,
            src,
            size,
            HIP_MEMCPY_DEVICE_TO_DEVICE,
            std::ptr::null_mut(),
            true,
        )
    })
}

pub extern "C" fn hipMemcpyHtoDAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipMemcpyHtoDAsync", {
        copy(dst, src, size, HIP_MEMCPY_HOST_TO_DEVICE, stream, false)
    })
}

pub extern "C" fn hipMemcpyDtoHAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipMemcpyDtoHAsync", {
        copy(dst, src, size, HIP_MEMCPY_DEVICE_TO_HOST, stream, false)
    })
}

/// Queues a copy of `height` rows of `width` bytes between pitched
/// regions, as the GPU's copy engine would do it (`async_copy_rect`).
#[allow(clippy::too_many_arguments)]
fn copy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: hipStream_t,
    wait: bool,
) -> hipError_t {
    if width == 0 || height == 0 {
        return hipSuccess;
    }
    if dst.is_null() || src.is_null() {
        return hipErrorInvalidValue;
    }
    let (Ok(w), Ok(h)) = (u32::try_from(width), u32::try_from(height)) else {
        return hipErrorInvalidValue;
    };
    if width > dpitch || width > spitch {
        return hipErrorInvalidPitchValue;
    }
    let dir = match kind {
        HIP_MEMCPY_HOST_TO_HOST
        | HIP_MEMCPY_HOST_TO_DEVICE
        | HIP_MEMCPY_DEVICE_TO_HOST
        | HIP_MEMCPY_DEVICE_TO_DEVICE => kind as u32,
        HIP_MEMCPY_DEFAULT => HIP_MEMCPY_DEVICE_TO_DEVICE as u32,
        _ => return hipErrorInvalidMemcpyDirection,
    };
    let region = |base: *mut c_void, pitch: usize| hsa::PitchedPtr {
        base,
        pitch,
        slice: pitch * height,
    };
    let range = hsa::Dim3 { x: w, y: h, z: 1 };
    on_stream(stream, wait, |s, gpu| {
        s.copy_rect(
            region(dst, dpitch),
            region(src as *mut c_void, spitch),
            range,
            gpu,
            dir,
        )
    })
}

pub extern "C" fn hipMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> hipError_t {
    api!("hipMemcpy2D", {
        copy_2d(
            dst,
            dpitch,
            src,
            spitch,
            width,
            height,
            kind,
            std::ptr::null_mut(),
            true,
        )
    })
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipMemcpy2DAsync", {
        copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, false)
    })
}

fn fill(dst: *mut c_void, value: u8, size: usize, stream: hipStream_t) -> hipError_t {
    if size == 0 {
        return hipSuccess;
    }
    if dst.is_null() {
        return hipErrorInvalidValue;
    }
    match stream::resolve(stream) {
        Ok(s) => s.synchronize(),
        Err(e) => return e,
    }
    // SAFETY: the application guarantees `dst` is valid for `size` bytes;
    // all memory of the simulated device is host memory.
    unsafe { std::ptr::write_bytes(dst.cast::<u8>(), value, size) };
    hipSuccess
}

pub extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> hipError_t {
    api!("hipMemset", {
        fill(dst, value as u8, size, std::ptr::null_mut())
    })
}

pub extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: c_int,
    size: usize,
    stream: hipStream_t,
) -> hipError_t {
    api!("hipMemsetAsync", { fill(dst, value as u8, size, stream) })
}
