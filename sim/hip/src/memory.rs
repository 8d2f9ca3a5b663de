//! Memory: device and host allocations come from the HSA pools (host memory
//! underneath), copies go through the stream's HSA async copy. Synchronous
//! copies are an async copy on the null stream followed by a wait.
//! `hipMemset*` fills on the host after the stream's prior work completes.
//!
//! Like the real runtime, a copy is planned from the memory it names, not
//! from its `hipMemcpyKind`: every allocation made through this runtime (and
//! every range registered with `hipHostRegister`) is an [`Object`]; memory
//! that is none is *pageable*. Copies between device memory and pinned
//! memory (objects) are one HSA copy; copies with pageable memory on one
//! side are staged or pinned in chunks
//! ([`Transfer`](crate::transfer::Transfer)); copies with no device memory
//! on either side are done by the CPU. `sim/README.md` ("Copies of
//! pageable memory") has the rules and where they come from.
//!
//! The top memory layer: uses `objects` (the allocation table), `transfer`
//! (copy plans), `stream` (where copies run) and `pool` (`hipFree` of
//! stream-ordered memory); none of them uses this module.

use std::ffi::{c_int, c_uint, c_void};

use crate::device::{self, runtime, write_out};
use crate::error::*;
use crate::hsa::{self, Handle};
use crate::objects::{add_object, find_object, pool_allocate, pool_free, remove_object, Object};
use crate::stream::{self, hipStream_t};
use crate::transfer::transfer;

// `hipMemcpyKind` (`hipMemcpyHostToHost` = 0 …): the HIP API's copy
// directions, not ROCprofiler's copy operations (`rocwasm_ids::ops::copy`,
// from 1).
const HIP_MEMCPY_HOST_TO_HOST: c_int = 0;
const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
const HIP_MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
const HIP_MEMCPY_DEFAULT: c_int = 4;

fn allocate(pool: Handle, ptr: *mut *mut c_void, size: usize, what: Object) -> hipError_t {
    if ptr.is_null() {
        return hipErrorInvalidValue;
    }
    match pool_allocate(pool, size, what) {
        Ok(mem) => write_out(ptr, mem),
        Err(e) => e,
    }
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
    // Memory from hipMallocAsync leaves its pool at once.
    crate::pool::forget(ptr);
    pool_free(ptr)
}

pub extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    api!("hipMalloc", {
        match device::device(device::current()) {
            Ok(d) => allocate(d.pool, ptr, size, Object::Device),
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
            Ok(d) => allocate(d.pool, ptr, size, Object::Device),
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, _flags: c_uint) -> hipError_t {
    api!("hipHostMalloc", {
        match runtime() {
            Ok(rt) => allocate(rt.host_pool, ptr, size, Object::Host),
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
            Ok(rt) => allocate(rt.host_pool, ptr, size, Object::Host),
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

/// Queues a copy on `stream`; `wait` makes it synchronous (copies with
/// pageable memory may wait anyway, as the real runtime's do).
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
    if !(HIP_MEMCPY_HOST_TO_HOST..=HIP_MEMCPY_DEFAULT).contains(&kind) {
        return hipErrorInvalidMemcpyDirection;
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    let (src_obj, dst_obj) = (find_object(src), find_object(dst));
    for (ptr, obj) in [(src as usize, src_obj), (dst as usize, dst_obj)] {
        if let Some((base, len, _)) = obj {
            if size > len - (ptr - base) {
                return hipErrorInvalidValue;
            }
        }
    }
    let is_device = |o: Option<(usize, usize, Object)>| o.is_some_and(|(_, _, w)| w.is_device());
    if !is_device(src_obj) && !is_device(dst_obj) {
        // No device memory: the CPU copies, after the stream's work.
        return on_stream(stream, true, |_, _| {
            // SAFETY: the application guarantees both ranges for `size`
            // bytes; `copy` allows overlap.
            unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
            Ok(())
        });
    }
    let agent = |o: Option<(usize, usize, Object)>, gpu: Handle| {
        if is_device(o) {
            gpu
        } else {
            rt.cpu
        }
    };
    if src_obj.is_some() && dst_obj.is_some() {
        // Device and pinned memory: one copy by the copy engine.
        return on_stream(stream, wait, |s, gpu| {
            s.copy(dst, agent(dst_obj, gpu), src, agent(src_obj, gpu), size)
        });
    }
    // Pageable memory on one side, device memory on the other.
    let to_device = src_obj.is_none();
    let host = if to_device {
        src as usize
    } else {
        dst as usize
    };
    let pieces = transfer().plan(host, size);
    // Only a single staged copy to the device leaves the caller before it
    // completes (its bytes are in the staging buffer by then).
    let single_staged_in = to_device && pieces.len() == 1 && pieces[0].2;
    if crate::log_enabled() {
        let staged = pieces.iter().filter(|p| p.2).count();
        eprintln!(
            "sim-hip: pageable copy {size} bytes {}: {} pinned, {staged} staged",
            if to_device {
                "to device"
            } else {
                "from device"
            },
            pieces.len() - staged
        );
    }
    on_stream(stream, wait || !single_staged_in, |s, gpu| {
        let (src_agent, dst_agent) = if to_device {
            (rt.cpu, gpu)
        } else {
            (gpu, rt.cpu)
        };
        for (i, &(offset, len, staged)) in pieces.iter().enumerate() {
            let (d, sr) = (
                (dst as usize + offset) as *mut c_void,
                (src as usize + offset) as *const c_void,
            );
            match (staged, to_device) {
                (false, _) => s.copy(d, dst_agent, sr, src_agent, len)?,
                (true, true) => {
                    s.copy_staged_in(d, dst_agent, sr.cast(), len, src_agent)?;
                    if i + 1 < pieces.len() {
                        // The next chunk waits for this one, as the real
                        // runtime's staged copies do.
                        s.synchronize();
                    }
                }
                (true, false) => s.copy_staged_out(d.cast(), dst_agent, sr, len, src_agent)?,
            }
        }
        Ok(())
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

/// `hipHostRegister` flags above this are invalid (the four defined bits).
const HOST_REGISTER_FLAGS: c_uint = 15;

/// Pins application memory (through `hsa_amd_memory_lock`, so an HSA tool
/// sees it): copies from and to it are then one copy, not staged, and its
/// device pointer is its own address.
pub extern "C" fn hipHostRegister(host_ptr: *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    api!("hipHostRegister", {
        if host_ptr.is_null() || size == 0 || flags > HOST_REGISTER_FLAGS {
            return hipErrorInvalidValue;
        }
        if let Err(e) = runtime() {
            return e;
        }
        if find_object(host_ptr).is_some() {
            return hipErrorHostMemoryAlreadyRegistered;
        }
        let mut agent_ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: the application's range; no agent list (all agents); a
        // valid out-pointer.
        let status = unsafe {
            hsa::hsa_amd_memory_lock(host_ptr, size, std::ptr::null_mut(), 0, &mut agent_ptr)
        };
        if status != hsa::SUCCESS {
            return hipErrorInvalidValue;
        }
        add_object(host_ptr, size, Object::Registered);
        hipSuccess
    })
}

pub extern "C" fn hipHostUnregister(host_ptr: *mut c_void) -> hipError_t {
    api!("hipHostUnregister", {
        if host_ptr.is_null() {
            return hipErrorInvalidValue;
        }
        match find_object(host_ptr) {
            Some((base, _, Object::Registered)) if base == host_ptr as usize => {}
            _ => return hipErrorHostMemoryNotRegistered,
        }
        // Like the real runtime: the device's work (which may use the
        // memory) completes first.
        stream::synchronize_device(device::current());
        remove_object(host_ptr);
        // SAFETY: the range was locked by hipHostRegister.
        unsafe { hsa::hsa_amd_memory_unlock(host_ptr) };
        hipSuccess
    })
}

/// The device address of pinned host memory (registered or from
/// `hipHostMalloc`): here, the host address itself.
pub extern "C" fn hipHostGetDevicePointer(
    device_ptr: *mut *mut c_void,
    host_ptr: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    api!("hipHostGetDevicePointer", {
        if device_ptr.is_null() || flags != 0 {
            return hipErrorInvalidValue;
        }
        match find_object(host_ptr) {
            Some(_) => write_out(device_ptr, host_ptr),
            None => hipErrorInvalidValue,
        }
    })
}
