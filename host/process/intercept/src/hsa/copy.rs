//! Memory copy records from `hsa_amd_memory_async_copy` and
//! `hsa_amd_memory_async_copy_rect` (HIP's 2D/3D copies).
//!
//! The copy gets a tool-owned completion signal; when it completes,
//! [`on_complete`] reads `hsa_amd_profiling_get_async_copy_time` on it,
//! produces the record, and only then decrements the application's signal
//! by one — exactly what the copy engine would have done to it — so the
//! application sees the same completion, a few microseconds later.

use std::ffi::c_void;

use rocwasm_core::{BufferTracingKind, MemoryCopy, MemoryCopyDirection};

use super::{agents, rt};
use crate::session::{self, AsyncToken};

type CopyFn = unsafe extern "C" fn(
    *mut c_void,
    u64,
    *const c_void,
    u64,
    usize,
    u32,
    *const c_void,
    u64,
) -> i32;

/// `hsa_amd_memory_async_copy_rect`: dst (`hsa_pitched_ptr_t *`), dst offset,
/// src, src offset, range (`hsa_dim3_t *`), copy agent, direction, deps,
/// completion signal.
type CopyRectFn = unsafe extern "C" fn(
    *const c_void,
    *const c_void,
    *const c_void,
    *const c_void,
    *const c_void,
    u64,
    i32,
    u32,
    *const c_void,
    u64,
) -> i32;

/// `hsa_pitched_ptr_t`: byte `(x, y, z)` is at `base + z·slice + y·pitch + x`.
#[repr(C)]
#[derive(Clone, Copy)]
struct PitchedPtr {
    base: *mut c_void,
    pitch: usize,
    slice: usize,
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Dim3 {
    x: u32,
    y: u32,
    z: u32,
}

struct Pending {
    token: AsyncToken,
    signal: u64,
    app_signal: u64,
    record: MemoryCopy,
}

/// The wrapped `hsa_amd_memory_async_copy`.
///
/// # Safety
/// `real` is the runtime's `hsa_amd_memory_async_copy` and the arguments
/// satisfy its contract (they are forwarded unchanged).
#[allow(clippy::too_many_arguments)]
pub unsafe fn async_copy(
    real: CopyFn,
    dst: *mut c_void,
    dst_agent: u64,
    src: *const c_void,
    src_agent: u64,
    size: usize,
    num_deps: u32,
    deps: *const c_void,
    app_signal: u64,
) -> i32 {
    let record = MemoryCopy {
        operation: direction(agents::is_gpu(src_agent), agents::is_gpu(dst_agent)) as u32,
        dst_agent_id: agents::id_of(dst_agent),
        src_agent_id: agents::id_of(src_agent),
        bytes: size as u64,
        dst_address: dst as u64,
        src_address: src as u64,
        ..Default::default()
    };
    // SAFETY: forwarding the caller's arguments, with `signal` for theirs.
    let issue =
        |signal: u64| unsafe { real(dst, dst_agent, src, src_agent, size, num_deps, deps, signal) };
    traced_copy(record, app_signal, issue)
}

/// The wrapped `hsa_amd_memory_async_copy_rect`: `range` (x in bytes, rows,
/// slices) between two pitched regions, done by the GPU `copy_agent`.
///
/// # Safety
///
/// The caller's arguments, as the runtime receives them: each pointer null
/// or valid for reading its struct.
#[allow(clippy::too_many_arguments)]
pub unsafe fn async_copy_rect(
    real: CopyRectFn,
    dst: *const c_void,
    dst_offset: *const c_void,
    src: *const c_void,
    src_offset: *const c_void,
    range: *const c_void,
    copy_agent: u64,
    dir: i32,
    num_deps: u32,
    deps: *const c_void,
    app_signal: u64,
) -> i32 {
    // SAFETY: forwarding the caller's arguments, with `signal` for theirs.
    let issue = |signal: u64| unsafe {
        real(
            dst, dst_offset, src, src_offset, range, copy_agent, dir, num_deps, deps, signal,
        )
    };
    // SAFETY: the caller's pointers (null or valid, see above).
    let shape = unsafe {
        (
            read(dst.cast::<PitchedPtr>()),
            read(dst_offset.cast::<Dim3>()),
            read(src.cast::<PitchedPtr>()),
            read(src_offset.cast::<Dim3>()),
            read(range.cast::<Dim3>()),
        )
    };
    let (Some(d), (Some(dst), Some(dst_off), Some(src), Some(src_off), Some(range))) =
        (rect_direction(dir), shape)
    else {
        // The runtime refuses it; pass the refusal on, untraced.
        return issue(app_signal);
    };
    let host = agents::host().map_or(0, |a| a.handle);
    let (src_agent, dst_agent) = match d {
        MemoryCopyDirection::HostToHost => (host, host),
        MemoryCopyDirection::HostToDevice => (host, copy_agent),
        MemoryCopyDirection::DeviceToHost => (copy_agent, host),
        _ => (copy_agent, copy_agent),
    };
    let at = |p: PitchedPtr, o: Dim3| {
        (p.base as u64)
            .wrapping_add(o.z as u64 * p.slice as u64)
            .wrapping_add(o.y as u64 * p.pitch as u64)
            .wrapping_add(o.x as u64)
    };
    let record = MemoryCopy {
        operation: d as u32,
        dst_agent_id: agents::id_of(dst_agent),
        src_agent_id: agents::id_of(src_agent),
        bytes: range.x as u64 * range.y as u64 * range.z as u64,
        dst_address: at(dst, dst_off),
        src_address: at(src, src_off),
        ..Default::default()
    };
    traced_copy(record, app_signal, issue)
}

/// `*p`, or `None` for a null pointer.
///
/// # Safety
///
/// `p` is null or valid for reading a `T`.
unsafe fn read<T: Copy>(p: *const T) -> Option<T> {
    // SAFETY: the caller's guarantee.
    (!p.is_null()).then(|| unsafe { *p })
}

/// Issues a copy on a tool-owned completion signal (`issue(signal)`) and
/// records it when it completes; without a session that wants copies, or
/// without a signal, issues it on the application's signal untraced.
///
/// Runs inside the traced `hsa_amd_memory_async_copy*` frame, so the copy
/// carries that call's correlation id, whose ancestor is the HIP call that
/// asked for it (the SDK's ids); with HSA calls untraced, the HIP call's.
/// The ENTER callbacks come before the copy is issued, the EXIT ones at
/// completion.
fn traced_copy(record: MemoryCopy, app_signal: u64, issue: impl FnOnce(u64) -> i32) -> i32 {
    let session = session::active().filter(|s| s.wants(BufferTracingKind::MemoryCopy));
    let signal = session.and_then(|_| rt::new_signal());
    let (Some(session), Some(signal)) = (session, signal) else {
        return issue(app_signal);
    };
    let mut token =
        session.begin_async_unconfirmed(BufferTracingKind::MemoryCopy, record.operation);
    session.submit_memory_copy(&mut token, &record);
    // The caller's copy, completing on our signal instead of theirs.
    let status = issue(signal);
    if status != 0 {
        session.cancel_async(token);
        // SAFETY: our signal; the failed copy never saw it.
        unsafe { rt::hsa_signal_destroy(signal) };
        return status;
    }
    let pending = Box::into_raw(Box::new(Pending {
        token,
        signal,
        app_signal,
        record,
    }));
    // SAFETY: `on_complete` reclaims the box once.
    let armed = unsafe {
        rt::hsa_amd_signal_async_handler(
            signal,
            rt::CONDITION_LT,
            1,
            on_complete,
            pending as *mut c_void,
        )
    };
    if armed != Some(0) {
        // The copy is in flight on our signal: we must still hand completion
        // on, so wait for it here (rare: the runtime refused a handler).
        eprintln!("rocwasm: cannot watch a copy's completion; its record is lost");
        // SAFETY: the handler was not registered; we own the box.
        let p = unsafe { Box::from_raw(pending) };
        session.cancel_async(p.token);
        if app_signal != 0 {
            // SAFETY: decrementing the app's signal as the copy would have.
            unsafe { rt::hsa_signal_subtract_screlease(app_signal, 1) };
        }
    }
    0
}

extern "C" fn on_complete(_value: i64, arg: *mut c_void) -> bool {
    // SAFETY: the box `async_copy` leaked; called once (we return false).
    let p = unsafe { Box::from_raw(arg as *mut Pending) };
    let mut time = [0u64; 2];
    // SAFETY: `time` is `hsa_amd_profiling_async_copy_time_t {start, end}`.
    let status = unsafe { rt::hsa_amd_profiling_get_async_copy_time(p.signal, &mut time) };
    let mut record = p.record;
    if status == Some(0) {
        record.start = time[0];
        record.end = time[1].max(time[0]);
    } else {
        let now = rocwasm_core::clock::now();
        (record.start, record.end) = (now, now);
    }
    if let Some(s) = session::active() {
        s.complete_memory_copy(p.token, record);
    }
    // SAFETY: hand completion on to the application, then drop our signal.
    unsafe {
        if p.app_signal != 0 {
            rt::hsa_signal_subtract_screlease(p.app_signal, 1);
        }
        rt::hsa_signal_destroy(p.signal);
    }
    false
}

/// The record direction of an `hsa_amd_copy_direction_t` (hsaHostToHost 0,
/// hsaHostToDevice 1, hsaDeviceToHost 2, hsaDeviceToDevice 3).
fn rect_direction(dir: i32) -> Option<MemoryCopyDirection> {
    Some(match dir {
        0 => MemoryCopyDirection::HostToHost,
        1 => MemoryCopyDirection::HostToDevice,
        2 => MemoryCopyDirection::DeviceToHost,
        3 => MemoryCopyDirection::DeviceToDevice,
        _ => return None,
    })
}

/// The record direction from the agents' types.
pub fn direction(src_gpu: bool, dst_gpu: bool) -> MemoryCopyDirection {
    match (src_gpu, dst_gpu) {
        (false, false) => MemoryCopyDirection::HostToHost,
        (false, true) => MemoryCopyDirection::HostToDevice,
        (true, false) => MemoryCopyDirection::DeviceToHost,
        (true, true) => MemoryCopyDirection::DeviceToDevice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        assert_eq!(direction(false, true), MemoryCopyDirection::HostToDevice);
        assert_eq!(direction(true, false), MemoryCopyDirection::DeviceToHost);
        assert_eq!(direction(true, true), MemoryCopyDirection::DeviceToDevice);
        assert_eq!(direction(false, false), MemoryCopyDirection::HostToHost);
    }
}
