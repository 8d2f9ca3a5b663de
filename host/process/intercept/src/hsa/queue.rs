//! Kernel dispatch timing through intercept queues.
//!
//! `hsa_queue_create` is replaced: the application (the HIP runtime) gets an
//! *intercept queue* with profiling enabled, and every batch of packets it
//! submits passes through [`on_packets`] on the submitting thread before the
//! runtime writes them to the hardware queue. For each kernel-dispatch packet
//! we
//!
//! 1. note the launch on the submitting thread (`begin_async`: its thread id
//!    and the correlation id of the API call on top of its stack — the
//!    `hipLaunchKernel` that caused the dispatch). The handler may run on
//!    another thread, and even before the doorbell rings (the simulated
//!    runtime's packet processor starts as soon as a header is valid), so
//!    this happens when the launching thread *reserves* the packet slot
//!    (wrapped `hsa_queue_add_write_index_*` / `cas_write_index_*`,
//!    [`on_reserve`]) — before the packet can exist. The handler picks the
//!    token up by packet index and cancels the tokens of packets that turned
//!    out not to be kernel dispatches (barriers).
//! 2. swap its completion signal for a tool-owned one,
//! 3. append a barrier-AND packet (barrier bit set, so it waits for the
//!    dispatch) that carries the application's original signal, so the
//!    application observes completion exactly as before,
//! 4. arm `hsa_amd_signal_async_handler` on the tool signal; on completion
//!    [`on_complete`] reads the dispatch's start/end with
//!    `hsa_amd_profiling_get_dispatch_time` and produces the record.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};

use rocwasm_core::{BufferTracingKind, KernelDispatch};

use super::{agents, loader, rt};
use crate::session::{self, AsyncToken};

const PACKET: usize = 64;
const TYPE_KERNEL_DISPATCH: u16 = 2;
const TYPE_BARRIER_AND: u16 = 3;
const HEADER_BARRIER_BIT: u16 = 1 << 8;
const RELEASE_SCOPE_SHIFT: u16 = 11;

/// What the handler needs to know about a queue; leaked (queues live until
/// the runtime shuts down, and the runtime may call the handler until then).
struct QueueInfo {
    agent: u64,
    queue_id: u64,
    /// Ring size in packets (bounds one reservation).
    size: u64,
    /// Tokens noted at reservation time, by packet index.
    pending: Mutex<HashMap<u64, Noted>>,
}

/// What the submitting thread knew about a dispatch.
struct Noted {
    token: AsyncToken,
    /// The kernel the HIP launch on the stack named (fallback for names).
    host_kernel: Option<u64>,
}

type QueueCreateFn =
    unsafe extern "C" fn(u64, u32, u32, *mut c_void, *mut c_void, u32, u32, *mut c_void) -> i32;
type PacketWriter = unsafe extern "C" fn(*const c_void, u64);

/// Intercept queues by `hsa_queue_t*`.
fn queues() -> &'static RwLock<HashMap<usize, &'static QueueInfo>> {
    static M: OnceLock<RwLock<HashMap<usize, &'static QueueInfo>>> = OnceLock::new();
    M.get_or_init(Default::default)
}

static ANY_QUEUE: AtomicBool = AtomicBool::new(false);

/// Called after the application reserved packet slots `first..first+count`
/// of `queue`, on its (launching) thread.
pub fn on_reserve(queue: *const c_void, first: u64, count: u64) {
    if !ANY_QUEUE.load(Ordering::Relaxed) || count == 0 {
        return;
    }
    let Some(info) = queues()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(queue as usize))
        .copied()
    else {
        return;
    };
    let Some(session) = session::active().filter(|s| s.wants(BufferTracingKind::KernelDispatch))
    else {
        return;
    };
    let host_kernel = crate::hip::kernels::current_launch().map(|k| k.symbol_id);
    let mut pending = info.pending.lock().unwrap_or_else(|e| e.into_inner());
    for index in first..first.saturating_add(count.min(info.size)) {
        // Tools' external-correlation requests are made here, on the
        // launching thread while its launch call and roctx ranges are
        // current (the runtime may write the packet later), so a slot that
        // then holds a barrier packet was asked about too.
        let token = session.begin_async(
            BufferTracingKind::KernelDispatch,
            rocwasm_core::ops::kernel_dispatch::ENQUEUE,
        );
        if let Some(old) = pending.insert(index, Noted { token, host_kernel }) {
            session.cancel_async(old.token);
        }
    }
}

/// The replacement of `hsa_queue_create`: an intercept queue when kernel
/// tracing is on and the runtime offers intercept queues, else the original.
///
/// # Safety
/// `real` is the runtime's `hsa_queue_create` and the arguments satisfy its
/// contract (`queue` is where the created queue is written).
#[allow(clippy::too_many_arguments)]
pub unsafe fn create(
    real: QueueCreateFn,
    agent: u64,
    size: u32,
    ty: u32,
    callback: *mut c_void,
    data: *mut c_void,
    private: u32,
    group: u32,
    queue: *mut c_void,
) -> i32 {
    // Any context that configured dispatch tracing, started or not: one
    // started after this queue was made still gets its dispatches timed.
    let wanted = session::active().is_some_and(|s| s.configured(BufferTracingKind::KernelDispatch));
    if !wanted {
        // SAFETY: forwarding the caller's arguments.
        return unsafe { real(agent, size, ty, callback, data, private, group, queue) };
    }
    // SAFETY: same arguments, same contract, as hsa_queue_create.
    let status = unsafe {
        rt::hsa_amd_queue_intercept_create(agent, size, ty, callback, data, private, group, queue)
    };
    match status {
        Some(0) => {}
        _ => {
            eprintln!("rocwasm: intercept queues unavailable ({status:?}); kernels on this queue are not timed");
            // SAFETY: as above.
            return unsafe { real(agent, size, ty, callback, data, private, group, queue) };
        }
    }
    // SAFETY: on success the runtime stored a valid `hsa_queue_t*` in `*queue`.
    let q = unsafe { *(queue as *const *mut c_void) };
    // `hsa_queue_t.id` sits at byte 32 (type, features, base_address,
    // doorbell_signal, size, reserved1, id).
    // SAFETY: `q` is a live hsa_queue_t.
    let queue_id = unsafe { *((q as *const u8).add(32) as *const u64) };
    // SAFETY: `q` is a live hsa_queue_t: `size` (packets) at byte 24.
    let ring = unsafe { *((q as *const u8).add(24) as *const u32) };
    let info: &'static QueueInfo = Box::leak(Box::new(QueueInfo {
        agent,
        queue_id,
        size: u64::from(ring.max(1)),
        pending: Mutex::new(HashMap::new()),
    }));
    queues()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(q as usize, info);
    ANY_QUEUE.store(true, Ordering::Release);
    let info = info as *const QueueInfo as *mut QueueInfo;
    // SAFETY: `q` is an intercept queue just created; the handler matches
    // `hsa_amd_queue_intercept_handler`; `info` lives forever.
    unsafe {
        if rt::hsa_amd_profiling_set_profiler_enabled(q, 1) != Some(0) {
            eprintln!("rocwasm: cannot enable profiling on queue {queue_id}");
        }
        if rt::hsa_amd_queue_intercept_register(q, on_packets as *mut c_void, info as *mut c_void)
            != Some(0)
        {
            eprintln!("rocwasm: cannot register the packet handler on queue {queue_id}");
        }
    }
    agents::discover();
    0
}

/// Called before `hsa_queue_destroy`; nothing to release (see [`QueueInfo`]).
pub fn forget(_queue: *mut c_void) {}

static DISPATCH_IDS: AtomicU64 = AtomicU64::new(1);

/// The intercept handler: rewrites kernel dispatches, then writes everything.
unsafe extern "C" fn on_packets(
    packets: *const c_void,
    count: u64,
    user_index: u64,
    data: *mut c_void,
    writer: PacketWriter,
) {
    // SAFETY: the runtime passes `count` 64-byte packets and our QueueInfo.
    let input =
        unsafe { std::slice::from_raw_parts(packets as *const [u8; PACKET], count as usize) };
    // SAFETY: `data` is the QueueInfo we registered with this queue, alive
    // until the queue is destroyed.
    let info = unsafe { &*(data as *const QueueInfo) };
    let session = session::active().filter(|s| s.wants(BufferTracingKind::KernelDispatch));
    let Some(session) = session else {
        // SAFETY: handing the packets on unchanged.
        unsafe { writer(packets, count) };
        return;
    };
    let mut out: Vec<[u8; PACKET]> = Vec::with_capacity(input.len() * 2);
    for (i, p) in input.iter().enumerate() {
        let header = u16::from_le_bytes([p[0], p[1]]);
        if header & 0xff != TYPE_KERNEL_DISPATCH {
            // A barrier or other packet: its reservation note is not needed.
            let noted = info
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&(user_index + i as u64));
            if let Some(n) = noted {
                session.cancel_async(n.token);
            }
            out.push(*p);
            continue;
        }
        match instrument(session, info, p, user_index + i as u64) {
            Some((dispatch, barrier)) => {
                out.push(dispatch);
                out.extend(barrier);
            }
            None => out.push(*p),
        }
    }
    // SAFETY: `out` holds whole packets; the writer copies them into the queue.
    unsafe { writer(out.as_ptr() as *const c_void, out.len() as u64) };
}

struct Pending {
    token: AsyncToken,
    agent: u64,
    signal: u64,
    enqueue: u64,
    record: KernelDispatch,
    /// What native tools' dispatch counting chose for it.
    counting: Vec<rocwasm_capi::dispatch_counting::Chosen>,
}

fn instrument(
    session: &'static session::Session,
    info: &QueueInfo,
    p: &[u8; PACKET],
    index: u64,
) -> Option<([u8; PACKET], Option<[u8; PACKET]>)> {
    let noted = info
        .pending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&index);
    let Some(signal) = rt::new_signal() else {
        if let Some(n) = noted {
            session.cancel_async(n.token);
        }
        return None;
    };
    let u16_at = |o: usize| u16::from_le_bytes([p[o], p[o + 1]]) as u32;
    let u32_at = |o: usize| u32::from_le_bytes(p[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(p[o..o + 8].try_into().unwrap());
    let kernel_object = u64_at(32);
    let original_signal = u64_at(56);
    let record = KernelDispatch {
        agent_id: agents::id_of(info.agent),
        queue_id: info.queue_id,
        kernel_id: loader::kernel_id(kernel_object)
            .or(noted.as_ref().and_then(|n| n.host_kernel))
            .or_else(|| crate::hip::kernels::current_launch().map(|k| k.symbol_id))
            .unwrap_or(0),
        dispatch_id: DISPATCH_IDS.fetch_add(1, Ordering::Relaxed),
        workgroup_x: u16_at(4),
        workgroup_y: u16_at(6),
        workgroup_z: u16_at(8),
        grid_x: u32_at(12),
        grid_y: u32_at(16),
        grid_z: u32_at(20),
        private_segment_size: u32_at(24),
        group_segment_size: u32_at(28),
        ..Default::default()
    };
    // Noted at reservation on the launching thread; else (a runtime that
    // reserved some other way) here, with this thread's context.
    let mut token = match noted {
        Some(n) => n.token,
        None => session.begin_async(
            BufferTracingKind::KernelDispatch,
            rocwasm_core::ops::kernel_dispatch::ENQUEUE,
        ),
    };
    // The SDK's ENQUEUE callbacks (ENTER, EXIT) come as the packet is
    // written, with its dispatch info.
    session.enqueue_kernel_dispatch(&mut token, &record);
    // Native tools' dispatch counting chooses its counters now, as the
    // packet is written.
    let counting = token.as_ref().map_or_else(Vec::new, |t| {
        let contexts = session.tool_counting(t);
        if contexts.is_empty() {
            Vec::new()
        } else {
            rocwasm_capi::dispatch_counting::choose(&contexts, t.correlation_id(), &record)
        }
    });
    let enqueue = token
        .as_ref()
        .map_or_else(rocwasm_core::clock::now, |t| t.enqueue_time);

    let mut dispatch = *p;
    dispatch[56..64].copy_from_slice(&signal.to_le_bytes());
    let barrier = (original_signal != 0).then(|| {
        let header = u16::from_le_bytes([p[0], p[1]]);
        let release = (header >> RELEASE_SCOPE_SHIFT) & 0b11;
        let mut b = [0u8; PACKET];
        let h = TYPE_BARRIER_AND | HEADER_BARRIER_BIT | (release << RELEASE_SCOPE_SHIFT);
        b[0..2].copy_from_slice(&h.to_le_bytes());
        b[56..64].copy_from_slice(&original_signal.to_le_bytes());
        b
    });

    let pending = Box::into_raw(Box::new(Pending {
        token,
        agent: info.agent,
        signal,
        enqueue,
        record,
        counting,
    }));
    // SAFETY: `signal` is ours; `on_complete` takes the box back exactly once.
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
        // SAFETY: the handler was not registered, so we still own the box.
        let p = unsafe { Box::from_raw(pending) };
        session.cancel_async(p.token);
        // SAFETY: our signal, never handed to the queue.
        unsafe { rt::hsa_signal_destroy(signal) };
        return None;
    }
    Some((dispatch, barrier))
}

/// Runs on the runtime's async-handler thread when a dispatch completes.
extern "C" fn on_complete(_value: i64, arg: *mut c_void) -> bool {
    // SAFETY: `arg` is the box `instrument` leaked for this signal; the
    // runtime calls us once because we return false (do not re-arm).
    let p = unsafe { Box::from_raw(arg as *mut Pending) };
    let mut time = [0u64; 2];
    // SAFETY: `time` is `hsa_amd_profiling_dispatch_time_t {start, end}`.
    let status = unsafe { rt::hsa_amd_profiling_get_dispatch_time(p.agent, p.signal, &mut time) };
    let now = rocwasm_core::clock::now();
    let (start, end) = if status == Some(0) {
        clamp(time[0], time[1], p.enqueue, now)
    } else {
        (p.enqueue, now)
    };
    let mut record = p.record;
    record.start = start;
    record.end = end;
    super::counters::for_tools(p.agent, p.signal, p.counting, (start, end));
    if let Some(s) = session::active() {
        let counted = s.dispatch_counters();
        if counted.is_empty() {
            s.complete_kernel_dispatch(p.token, record);
        } else {
            // Before the signal is destroyed: the runtime keeps the
            // dispatch's counters with it.
            let plan = &s.plan().collection;
            let values = super::counters::sample(
                p.agent,
                p.signal,
                &plan.counters,
                plan.counter_defs.as_deref(),
            );
            s.complete_kernel_dispatch_counted(p.token, record, &values);
        }
    }
    // SAFETY: the dispatch is done with our signal.
    unsafe { rt::hsa_signal_destroy(p.signal) };
    false
}

/// Profiling timestamps can come from a clock domain slightly off ours (or
/// be garbage when the device did not fill them): keep `start ≤ end` and,
/// when the pair is in our time line, inside `[enqueue, now]`.
pub fn clamp(start: u64, end: u64, enqueue: u64, now: u64) -> (u64, u64) {
    let end = end.max(start);
    if end < enqueue || start > now {
        // Another time base entirely (a simulated clock): keep the duration.
        return (start, end);
    }
    (start.clamp(enqueue, now), end.clamp(enqueue, now))
}

#[cfg(test)]
mod tests {
    use super::clamp;

    #[test]
    fn clamping() {
        assert_eq!(clamp(150, 180, 100, 200), (150, 180));
        assert_eq!(clamp(90, 180, 100, 200), (100, 180));
        assert_eq!(clamp(150, 250, 100, 200), (150, 200));
        assert_eq!(clamp(180, 150, 100, 200), (180, 180));
        // A separate time base keeps its values (and its duration).
        assert_eq!(clamp(10, 30, 1000, 2000), (10, 30));
    }
}
