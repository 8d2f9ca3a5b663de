//! AQL queues and their packet processors.
//!
//! `hsa_queue_create` allocates a real ring of 64-byte AQL packets (headers
//! start as INVALID), a doorbell signal, and read/write indices, and starts
//! one packet-processor thread per queue. The application reserves slots by
//! bumping the write index, writes a packet body, publishes the header with
//! a release store, and rings the doorbell; the processor waits for the next
//! slot's header to become valid, executes the packet, resets the header to
//! INVALID and advances the read index. Packets run one at a time, so a queue
//! is in order whatever the barrier bits say.
//!
//! Execution is simulated on the queue's *timeline* (see `clock.rs`): a
//! dispatch advances it by the scenario's kernel duration, a barrier starts
//! no earlier than the end of the work that completed its dependencies.
//!
//! Queues made by `hsa_amd_queue_intercept_create` hand each batch of
//! application packets to the registered intercept handlers (in order of
//! registration); what the last handler writes through the writer callback
//! is what executes. The writer has no context argument, so the current
//! output buffer is thread-local on the processor thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::thread::JoinHandle;

use crate::clock::Timeline;
use crate::ffi::*;
use crate::signal::{self, Times};
use crate::util::{out, sim_log};
use crate::{effects, loader, memory, runtime};

/// A queue. `#[repr(C)]` with the public `hsa_queue_t` first, so the pointer
/// handed to the application is the queue itself.
#[repr(C)]
pub struct Queue {
    pub hsa: hsa_queue_t,
    pub read_index: AtomicU64,
    pub write_index: AtomicU64,
    agent: u64,
    profiling: AtomicBool,
    stopping: AtomicBool,
    intercept: Option<Mutex<Vec<(InterceptHandler, usize)>>>,
    timeline: Timeline,
    thread: Mutex<Option<JoinHandle<()>>>,
}

// SAFETY: the raw pointers inside `hsa_queue_t` (the ring) are owned by the
// queue and only accessed through atomics or by the processor thread.
unsafe impl Send for Queue {}
// SAFETY: see `Send`.
unsafe impl Sync for Queue {}

static QUEUES: OnceLock<RwLock<HashMap<usize, Arc<Queue>>>> = OnceLock::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn queues() -> &'static RwLock<HashMap<usize, Arc<Queue>>> {
    QUEUES.get_or_init(Default::default)
}

/// The queue behind an `hsa_queue_t*`, if it is live.
pub fn get(queue: *const hsa_queue_t) -> Option<Arc<Queue>> {
    queues()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&(queue as usize))
        .cloned()
}

impl Queue {
    fn slot(&self, index: u64) -> *mut RawPacket {
        let ring = self.hsa.base_address.cast::<RawPacket>();
        // SAFETY: the ring holds `size` packets and the index is reduced
        // modulo `size` (a power of two).
        unsafe { ring.add((index % u64::from(self.hsa.size)) as usize) }
    }

    fn header(&self, index: u64) -> &AtomicU16 {
        // SAFETY: the header is the first, 2-aligned u16 of a packet in the
        // ring, which lives as long as the queue; the application writes it
        // with atomic stores too (that is the AQL protocol).
        unsafe { AtomicU16::from_ptr(self.slot(index).cast::<u16>()) }
    }

    fn packet_type(&self, index: u64) -> u16 {
        self.header(index).load(Ordering::Acquire) & HSA_PACKET_HEADER_TYPE_MASK
    }

    /// Whether packet `index` has been published.
    ///
    /// Only an index within one ring of the read index can be: beyond it,
    /// the slot still holds the packet a ring earlier. (Without that bound
    /// an intercept batch, which gathers every ready packet before retiring
    /// any, took the slot of its own first packet a second time once the
    /// application had reserved that index and waited for room; it then ran
    /// the packet twice and moved the read index past the reservation, and
    /// the application waited for room for ever.)
    fn ready(&self, index: u64) -> bool {
        index < self.read_index.load(Ordering::Acquire) + u64::from(self.hsa.size)
            && self.write_index.load(Ordering::Acquire) > index
            && self.packet_type(index) != HSA_PACKET_TYPE_INVALID
    }

    fn read_packet(&self, index: u64) -> RawPacket {
        // SAFETY: the slot is inside the ring; its header was published with
        // a release store that we observed with an acquire load, so the body
        // is complete.
        unsafe { self.slot(index).read_volatile() }
    }

    /// Hands a slot back to the application.
    fn retire(&self, index: u64) {
        self.header(index)
            .store(HSA_PACKET_TYPE_INVALID, Ordering::Release);
        self.read_index.store(index + 1, Ordering::Release);
    }
}

fn create(
    agent: hsa_agent_t,
    size: u32,
    intercept: bool,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    let rt = match runtime::initialized() {
        Ok(rt) => rt,
        Err(e) => return e,
    };
    let Some(a) = crate::agent::find(agent.handle) else {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    };
    if !a.is_gpu() || queue.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    if let Some(status) = rt.inject("hsa_queue_create") {
        return status;
    }
    if !size.is_power_of_two() || !(64..=131072).contains(&size) {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let Some(ring) = memory::allocate(size as usize * 64) else {
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    };
    let q = Arc::new(Queue {
        hsa: hsa_queue_t {
            type_: HSA_QUEUE_TYPE_MULTI,
            features: HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
            base_address: ring.cast(),
            doorbell_signal: signal::create(0),
            size,
            reserved1: 0,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        },
        read_index: AtomicU64::new(0),
        write_index: AtomicU64::new(0),
        agent: agent.handle,
        profiling: AtomicBool::new(false),
        stopping: AtomicBool::new(false),
        intercept: intercept.then(Mutex::default),
        timeline: Timeline::new(rt.scenario.clock.start_ns),
        thread: Mutex::new(None),
    });
    for i in 0..u64::from(size) {
        q.header(i)
            .store(HSA_PACKET_TYPE_INVALID, Ordering::Relaxed);
    }
    let worker = Arc::clone(&q);
    let thread = std::thread::Builder::new()
        .name(format!("sim-hsa-queue{}", q.hsa.id))
        .spawn(move || process(worker))
        .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    let thread = match thread {
        Ok(t) => t,
        Err(e) => return e,
    };
    *q.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(thread);
    let ptr = Arc::as_ptr(&q) as *mut hsa_queue_t;
    queues()
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(ptr as usize, q);
    sim_log!(
        "queue {ptr:?} created on agent {:#x} (intercept: {intercept})",
        agent.handle
    );
    out(queue, ptr)
}

/// The processor thread of one queue.
fn process(q: Arc<Queue>) {
    loop {
        let index = q.read_index.load(Ordering::Acquire);
        signal::wait_until(
            || q.stopping.load(Ordering::Acquire) || q.ready(index),
            None,
        );
        if q.stopping.load(Ordering::Acquire) {
            return;
        }
        match &q.intercept {
            None => {
                let packet = q.read_packet(index);
                q.retire(index);
                execute(&q, &packet);
            }
            Some(handlers) => {
                // Everything the application has published, in one batch.
                let mut end = index + 1;
                while q.ready(end) {
                    end += 1;
                }
                let batch: Vec<RawPacket> = (index..end).map(|i| q.read_packet(i)).collect();
                for i in index..end {
                    q.retire(i);
                }
                let handlers = handlers.lock().unwrap_or_else(|p| p.into_inner()).clone();
                for packet in intercept(&handlers, batch, index) {
                    execute(&q, &packet);
                }
            }
        }
        signal::notify_all();
    }
}

thread_local! {
    /// Where the intercept writer puts packets during a handler call.
    static SINK: RefCell<Option<Vec<RawPacket>>> = const { RefCell::new(None) };
}

extern "C" fn intercept_writer(pkts: *const c_void, count: u64) {
    let packets = crate::util::slice(pkts.cast::<RawPacket>(), count as usize).to_vec();
    SINK.with(|sink| match sink.borrow_mut().as_mut() {
        Some(buffer) => buffer.extend(packets),
        None => eprintln!(
            "sim-hsa: intercept packet writer called outside an intercept handler; packets dropped"
        ),
    });
}

/// Runs the handler chain over a batch; returns what the last one wrote.
fn intercept(
    handlers: &[(InterceptHandler, usize)],
    mut packets: Vec<RawPacket>,
    first_index: u64,
) -> Vec<RawPacket> {
    for &(handler, data) in handlers {
        SINK.with(|sink| *sink.borrow_mut() = Some(Vec::new()));
        // SAFETY: the handler was registered through
        // hsa_amd_queue_intercept_register with this C signature; the packet
        // array lives until the call returns.
        unsafe {
            handler(
                packets.as_ptr().cast(),
                packets.len() as u64,
                first_index,
                data as *mut c_void,
                intercept_writer,
            )
        };
        packets = SINK
            .with(|sink| sink.borrow_mut().take())
            .unwrap_or_default();
    }
    packets
}

fn packet_view<T: Copy>(raw: &RawPacket) -> T {
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<RawPacket>());
    // SAFETY: T is one of the 64-byte `#[repr(C)]` AQL packet views made
    // of integers and pointers, for which every bit pattern is valid.
    unsafe { std::ptr::read_unaligned(raw.as_ptr().cast::<T>()) }
}

fn execute(q: &Queue, raw: &RawPacket) {
    let header = (raw[0] & 0xffff) as u16;
    let profiled = q.profiling.load(Ordering::Acquire);
    match header & HSA_PACKET_HEADER_TYPE_MASK {
        HSA_PACKET_TYPE_KERNEL_DISPATCH => {
            let p: hsa_kernel_dispatch_packet_t = packet_view(raw);
            let kernel = loader::kernel(p.kernel_object);
            let name = kernel.as_ref().map_or_else(
                || format!("kernel@{:#x}", p.kernel_object),
                |k| k.name.clone(),
            );
            let grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
            let scenario = &runtime::get().scenario;
            let duration = scenario.kernel_duration_ns(&name, grid);
            let launch = sim_scenario::Launch {
                grid,
                workgroup: [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z],
                duration_ns: duration,
                mix: scenario.kernel_mix(&name),
            };
            let (start, end) = q.timeline.schedule(0, duration);
            sim_log!(
                "queue {} dispatch {name} grid {grid:?} ticks {start}..{end}",
                q.hsa.id
            );
            effects::run(&name, &p, kernel.as_ref().map_or(0, |k| k.kernarg_size));
            runtime::get().pace(end);
            complete(
                p.completion_signal,
                Times {
                    start,
                    end,
                    dispatch_profiled: profiled,
                    copy_profiled: false,
                    launch: Some(launch),
                },
            );
        }
        kind @ (HSA_PACKET_TYPE_BARRIER_AND | HSA_PACKET_TYPE_BARRIER_OR) => {
            let p: hsa_barrier_and_packet_t = packet_view(raw);
            let deps: Vec<_> = p
                .dep_signal
                .iter()
                .filter(|s| s.handle != 0)
                .filter_map(|&s| {
                    let live = signal::get(s);
                    if live.is_none() {
                        // Undefined behaviour on the real runtime: say so
                        // instead of waiting on (or skipping) it in silence.
                        eprintln!(
                            "sim-hsa: a barrier packet on queue {} depends on signal {:#x}, \
                             which was destroyed before the packet ran; the dependency is \
                             ignored (on a real GPU this is undefined behaviour)",
                            q.hsa.id, s.handle
                        );
                    }
                    live
                })
                .collect();
            let satisfied = |s: &Arc<signal::Signal>| s.load() == 0;
            signal::wait_until(
                || {
                    q.stopping.load(Ordering::Acquire)
                        || if kind == HSA_PACKET_TYPE_BARRIER_AND || deps.is_empty() {
                            deps.iter().all(satisfied)
                        } else {
                            deps.iter().any(satisfied)
                        }
                },
                None,
            );
            let earliest = deps
                .iter()
                .filter(|s| satisfied(s))
                .map(|s| s.times().end)
                .max()
                .unwrap_or(0);
            let (start, end) = q.timeline.schedule(earliest, 0);
            complete(
                p.completion_signal,
                Times {
                    start,
                    end,
                    dispatch_profiled: profiled,
                    copy_profiled: false,
                    launch: None,
                },
            );
        }
        _ => {
            // Vendor-specific and agent-dispatch packets: nothing to run.
            let p: hsa_barrier_and_packet_t = packet_view(raw);
            let (start, end) = q.timeline.schedule(0, 0);
            complete(
                p.completion_signal,
                Times {
                    start,
                    end,
                    dispatch_profiled: profiled,
                    copy_profiled: false,
                    launch: None,
                },
            );
        }
    }
}

fn complete(handle: hsa_signal_t, times: Times) {
    if let Some(s) = signal::get(handle) {
        s.complete(times);
    }
}

pub extern "C" fn hsa_queue_create(
    agent: hsa_agent_t,
    size: u32,
    _type: u32,
    _callback: QueueErrorCallback,
    _data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    create(agent, size, false, queue)
}

/// Only reachable through the amd_ext table, as in the real runtime.
pub extern "C" fn hsa_amd_queue_intercept_create(
    agent: hsa_agent_t,
    size: u32,
    _type: u32,
    _callback: QueueErrorCallback,
    _data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    create(agent, size, true, queue)
}

/// Only reachable through the amd_ext table, as in the real runtime.
pub extern "C" fn hsa_amd_queue_intercept_register(
    queue: *mut hsa_queue_t,
    handler: Option<InterceptHandler>,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(q) = get(queue) else {
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    };
    let (Some(handlers), Some(handler)) = (&q.intercept, handler) else {
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    };
    handlers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((handler, data as usize));
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t {
    let Some(q) = queues()
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&(queue as usize))
    else {
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    };
    q.stopping.store(true, Ordering::Release);
    signal::notify_all();
    let thread = q.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(t) = thread {
        if t.thread().id() != std::thread::current().id() {
            let _ = t.join();
        }
    }
    signal::hsa_signal_destroy(q.hsa.doorbell_signal);
    // The ring stays allocated: a late application write must not land in
    // freed memory. Queues are few; the leak is bounded.
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_queue_inactivate(queue: *mut hsa_queue_t) -> hsa_status_t {
    match get(queue) {
        Some(_) => HSA_STATUS_SUCCESS,
        None => HSA_STATUS_ERROR_INVALID_QUEUE,
    }
}

pub extern "C" fn hsa_amd_profiling_set_profiler_enabled(
    queue: *mut hsa_queue_t,
    enable: i32,
) -> hsa_status_t {
    let Some(q) = get(queue) else {
        return HSA_STATUS_ERROR_INVALID_QUEUE;
    };
    q.profiling.store(enable != 0, Ordering::Release);
    HSA_STATUS_SUCCESS
}

pub extern "C" fn hsa_amd_profiling_get_dispatch_time(
    agent: hsa_agent_t,
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_dispatch_time_t,
) -> hsa_status_t {
    if crate::agent::find(agent.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    let Some(s) = signal::get(signal) else {
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    };
    let t = s.times();
    if !t.dispatch_profiled {
        // The real runtime has no timestamps unless profiling was enabled
        // on the queue that ran the packet.
        return HSA_STATUS_ERROR;
    }
    // The real runtime reports these in the system domain.
    let rt = runtime::get();
    out(
        time,
        hsa_amd_profiling_dispatch_time_t {
            start: rt.tick_to_system(t.start),
            end: rt.tick_to_system(t.end),
        },
    )
}

pub extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain(
    agent: hsa_agent_t,
    agent_tick: u64,
    system_tick: *mut u64,
) -> hsa_status_t {
    if crate::agent::find(agent.handle).is_none() {
        return HSA_STATUS_ERROR_INVALID_AGENT;
    }
    out(system_tick, runtime::get().tick_to_system(agent_tick))
}

/// Success: the simulated queues ignore CU masks and priorities.
pub extern "C" fn hsa_amd_queue_cu_set_mask(
    queue: *const hsa_queue_t,
    _count: u32,
    _mask: *const u32,
) -> hsa_status_t {
    if get(queue).is_some() {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_ERROR_INVALID_QUEUE
    }
}

pub extern "C" fn hsa_amd_queue_set_priority(
    queue: *mut hsa_queue_t,
    _priority: u32,
) -> hsa_status_t {
    if get(queue).is_some() {
        HSA_STATUS_SUCCESS
    } else {
        HSA_STATUS_ERROR_INVALID_QUEUE
    }
}

// Read/write indices. The memory-order variants all map here: every access
// is acquire/release, which is at least as strong as any variant asks.

fn with_queue<T: Default>(queue: *const hsa_queue_t, f: impl FnOnce(&Queue) -> T) -> T {
    get(queue).map(|q| f(&q)).unwrap_or_default()
}

pub extern "C" fn hsa_queue_load_read_index(queue: *const hsa_queue_t) -> u64 {
    with_queue(queue, |q| q.read_index.load(Ordering::Acquire))
}

pub extern "C" fn hsa_queue_load_write_index(queue: *const hsa_queue_t) -> u64 {
    with_queue(queue, |q| q.write_index.load(Ordering::Acquire))
}

pub extern "C" fn hsa_queue_store_write_index(queue: *const hsa_queue_t, value: u64) {
    with_queue(queue, |q| q.write_index.store(value, Ordering::Release));
}

pub extern "C" fn hsa_queue_store_read_index(queue: *const hsa_queue_t, value: u64) {
    with_queue(queue, |q| q.read_index.store(value, Ordering::Release));
}

pub extern "C" fn hsa_queue_cas_write_index(
    queue: *const hsa_queue_t,
    expected: u64,
    value: u64,
) -> u64 {
    with_queue(queue, |q| {
        q.write_index
            .compare_exchange(expected, value, Ordering::AcqRel, Ordering::Acquire)
            .unwrap_or_else(|v| v)
    })
}

pub extern "C" fn hsa_queue_add_write_index(queue: *const hsa_queue_t, value: u64) -> u64 {
    with_queue(queue, |q| q.write_index.fetch_add(value, Ordering::AcqRel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Condvar;
    use std::time::{Duration, Instant};

    /// Packets the test's intercept handler forwarded, and whether it may
    /// return (it waits in its first call until the test opens the gate).
    static SEEN: AtomicU64 = AtomicU64::new(0);
    static GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

    unsafe extern "C" fn gated_forward(
        pkts: *const c_void,
        count: u64,
        _first: u64,
        _data: *mut c_void,
        writer: InterceptWriter,
    ) {
        SEEN.fetch_add(count, Ordering::SeqCst);
        let (open, changed) = &GATE;
        let mut open = open.lock().unwrap();
        while !*open {
            open = changed.wait(open).unwrap();
        }
        // SAFETY: forwards the packets this handler was given, unchanged.
        unsafe { writer(pkts, count) };
    }

    /// Publishes an empty barrier-AND packet (no dependencies, no completion
    /// signal: it runs at once) at `index`, as an application does.
    fn publish(q: &Queue, index: u64) {
        // SAFETY: the test reserved `index`, which is within one ring of the
        // read index; the header is published last with a release store.
        unsafe { q.slot(index).write_volatile([0; 8]) };
        q.header(index)
            .store(HSA_PACKET_TYPE_BARRIER_AND, Ordering::Release);
    }

    fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The application has filled the ring and reserved the next index,
    /// which names the slot of the oldest packet not yet taken: the
    /// processor must take every published packet once, stop before the
    /// reservation, and leave the read index where the application can
    /// write it.
    #[test]
    fn an_intercept_batch_stops_at_a_reserved_slot_of_a_full_ring() {
        assert_eq!(crate::core::hsa_init(), HSA_STATUS_SUCCESS);
        let gpu = runtime::get()
            .agents
            .iter()
            .find(|a| a.is_gpu())
            .expect("the default scenario has a GPU")
            .handle;
        let size = 64u32;
        let mut raw = std::ptr::null_mut();
        let status = hsa_amd_queue_intercept_create(
            hsa_agent_t { handle: gpu },
            size,
            0,
            None,
            std::ptr::null_mut(),
            0,
            0,
            &mut raw,
        );
        assert_eq!(status, HSA_STATUS_SUCCESS);
        assert_eq!(
            hsa_amd_queue_intercept_register(raw, Some(gated_forward), std::ptr::null_mut()),
            HSA_STATUS_SUCCESS
        );
        let q = get(raw).unwrap();
        let reserve = || q.write_index.fetch_add(1, Ordering::AcqRel);

        // Packet 0 is taken alone; the handler holds the processor there.
        publish(&q, reserve());
        wait_for("the first batch", || SEEN.load(Ordering::SeqCst) == 1);
        // The application fills the ring (1 ..= size: the last one in the
        // slot of packet 0, which is retired) and reserves one more, which
        // names the slot of packet 1 and must wait for room.
        for _ in 1..=size {
            publish(&q, reserve());
        }
        let waiting = reserve();
        assert_eq!(waiting, u64::from(size) + 1);
        *GATE.0.lock().unwrap() = true;
        GATE.1.notify_all();

        wait_for("the published packets", || {
            q.read_index.load(Ordering::Acquire) >= waiting
        });
        // Every published packet once; the reserved one not yet.
        assert_eq!(SEEN.load(Ordering::SeqCst), u64::from(size) + 1);
        assert_eq!(q.read_index.load(Ordering::Acquire), waiting);
        // Now it is written, and taken.
        publish(&q, waiting);
        wait_for("the last packet", || {
            q.read_index.load(Ordering::Acquire) > waiting
        });
        assert_eq!(SEEN.load(Ordering::SeqCst), u64::from(size) + 2);
        assert_eq!(hsa_queue_destroy(raw), HSA_STATUS_SUCCESS);
    }
}
