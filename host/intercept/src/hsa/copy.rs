//! Memory copy records from `hsa_amd_memory_async_copy`.
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

struct Pending {
    token: AsyncToken,
    signal: u64,
    app_signal: u64,
    record: MemoryCopy,
}

thread_local! {
    static PREPARED: std::cell::RefCell<Option<AsyncToken>> = const { std::cell::RefCell::new(None) };
}

/// Before the traced `hsa_amd_memory_async_copy` frame: start the async
/// operation in the caller's frame (the HIP copy), on this thread.
pub fn prepare(src_agent: u64, dst_agent: u64) {
    let Some(session) = session::active().filter(|s| s.wants(BufferTracingKind::MemoryCopy)) else {
        return;
    };
    let op = direction(agents::is_gpu(src_agent), agents::is_gpu(dst_agent)) as u32;
    let token = session.begin_async(BufferTracingKind::MemoryCopy, op);
    if let Some(old) = PREPARED.with(|p| p.borrow_mut().replace(token)) {
        session.cancel_async(old);
    }
}

/// The wrapped `hsa_amd_memory_async_copy`.
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
    let session = session::active().filter(|s| s.wants(BufferTracingKind::MemoryCopy));
    let signal = session.and_then(|_| rt::new_signal());
    let (Some(session), Some(signal)) = (session, signal) else {
        if let (Some(s), Some(t)) = (session, PREPARED.with(|p| p.borrow_mut().take())) {
            s.cancel_async(t);
        }
        // SAFETY: forwarding the caller's arguments.
        return unsafe {
            real(
                dst, dst_agent, src, src_agent, size, num_deps, deps, app_signal,
            )
        };
    };
    let record = MemoryCopy {
        operation: direction(agents::is_gpu(src_agent), agents::is_gpu(dst_agent)) as u32,
        dst_agent_id: agents::id_of(dst_agent),
        src_agent_id: agents::id_of(src_agent),
        bytes: size as u64,
        dst_address: dst as u64,
        src_address: src as u64,
        ..Default::default()
    };
    // Begun before the traced HSA frame was entered (see `prepare`), so the
    // copy carries the id of the HIP call that asked for it.
    let token = PREPARED
        .with(|p| p.borrow_mut().take())
        .unwrap_or_else(|| session.begin_async(BufferTracingKind::MemoryCopy, record.operation));
    // SAFETY: the caller's copy, completing on our signal instead of theirs.
    let status = unsafe { real(dst, dst_agent, src, src_agent, size, num_deps, deps, signal) };
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
