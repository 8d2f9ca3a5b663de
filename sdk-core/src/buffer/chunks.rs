//! Per-thread chunks: storing a record without an atomic read-modify-write.
//!
//! The shared protocol (see the parent module) reserves every record with a
//! `fetch_add` on the buffer's `state`. On x86-64 that is a `lock xadd`, a
//! full barrier: on the machines this was measured on, it added ≈ 8 ns to a
//! traced call whose two counter reads and eight stores otherwise overlap
//! (`rdtsc ×2 + 8 stores` 17.5 ns, the same with a `lock xadd` 26 ns).
//!
//! So a producer thread reserves a **chunk** ([`CHUNK_BYTES`]) of the current
//! half through the shared protocol — one `fetch_add` per chunk, a chunk
//! marker as its first word — and fills it record by record with plain
//! stores. Its chunk lives in a [`Slot`] of the buffer: the thread's slot
//! index ([`claim`]) is its own for its lifetime, so only that thread writes
//! the slot's chunk fields.
//!
//! The callback thread must know when a chunk holds no more records of an
//! epoch: a zero header inside a chunk means either "nothing more" or "a
//! producer is about to write here". Each slot has an `in_flight` flag,
//! raised around one record's store:
//!
//! ```text
//! producer                                consumer (after the swap)
//! in_flight = 1        (plain store)      state = next epoch     (the swap)
//! compiler fence                          membarrier()  ← a full barrier
//! read state's epoch                                      on every thread
//! epoch == chunk's?  write the record     wait until each in_flight reads 0
//! in_flight = 0        (release)          walk the half
//! ```
//!
//! The producer side has no hardware fence: the consumer's `membarrier`
//! (Linux, `MEMBARRIER_CMD_PRIVATE_EXPEDITED`) runs one on every CPU that
//! runs a thread of the process. For each producer, either its flag store
//! came before that barrier — the consumer sees the flag and waits for the
//! record — or its read of `state` came after it and sees the new epoch, so
//! it does not write into the half being delivered. Once every flag has
//! read 0, every record of the epoch is in place and a zero header inside a
//! chunk ends that chunk. (The same asymmetric-fence technique as
//! userspace RCU and folly's `asymmetricLightBarrier`.)
//!
//! Where `membarrier` is unavailable (kernels before 4.14, seccomp
//! filters), or a buffer is small or delivers at a low watermark (where a
//! chunk would hold back a large share of it), buffers use the shared
//! protocol only; so do threads beyond [`MAX_SLOTS`] and threads past their
//! thread-local teardown. `ROCWASM_BUFFER_CHUNKS=0` turns chunks off.

use std::sync::atomic::{compiler_fence, AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Mutex, OnceLock};

use crossbeam_utils::{Backoff, CachePadded};

/// Bytes a thread reserves at a time, chunk marker included.
pub(crate) const CHUNK_BYTES: u64 = 2048;
/// Threads that can hold a slot at once; others use the shared protocol.
pub(crate) const MAX_SLOTS: usize = 256;
/// Smallest half, and smallest watermark, that uses chunks: a chunk is at
/// most 1/32 of the half and 1/4 of the watermark.
pub(crate) const MIN_HALF: u64 = 32 * CHUNK_BYTES;
pub(crate) const MIN_WATERMARK: u64 = 4 * CHUNK_BYTES;

/// The slot index of a thread that has none.
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// True when consumers can force a barrier on every producer thread (and
/// chunks are not turned off). Decided once per process.
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        if std::env::var("ROCWASM_BUFFER_CHUNKS").as_deref() == Ok("0") {
            return false;
        }
        register_barrier()
    })
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn register_barrier() -> bool {
    use rustix::thread::{membarrier, MembarrierCommand};
    membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
        && membarrier(MembarrierCommand::PrivateExpedited).is_ok()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn register_barrier() -> bool {
    false
}

/// A full memory barrier on every thread of the process.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn heavy_barrier() {
    use rustix::thread::{membarrier, MembarrierCommand};
    // The registration is per address space and survives fork(); should the
    // expedited command ever fail, the global one (no registration, slower)
    // gives the same guarantee.
    if membarrier(MembarrierCommand::PrivateExpedited).is_ok()
        || membarrier(MembarrierCommand::Global).is_ok()
    {
        return;
    }
    // Both worked when chunks were enabled; if the kernel now refuses them
    // (never seen), give producers' flag stores far longer than a store
    // buffer holds them rather than take the callback thread down.
    std::thread::sleep(std::time::Duration::from_millis(1));
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn heavy_barrier() {
    // Never called: `available` is false here, so no buffer has chunks.
}

/// Slot indices handed out so far (an upper bound on the slots in use).
static HANDED_OUT: AtomicU32 = AtomicU32::new(0);
/// Indices released by threads that ended.
static FREE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// A slot index for the calling thread; [`NO_SLOT`] when all are taken.
///
/// The free list is only ever tried, never waited for: in a forked child
/// the lock may be held by a parent thread that no longer exists. A busy
/// list costs a fresh index (claim), or after many tries a lost one
/// (release); nothing else.
pub(crate) fn claim() -> u32 {
    if let Some(i) = FREE.try_lock().ok().and_then(|mut free| free.pop()) {
        return i;
    }
    let i = HANDED_OUT.fetch_add(1, Relaxed);
    if (i as usize) < MAX_SLOTS {
        i
    } else {
        HANDED_OUT.store(MAX_SLOTS as u32, Relaxed);
        NO_SLOT
    }
}

/// Gives back the index of a thread that is ending. Its chunks stay valid:
/// the next thread to claim the index continues them (the mutex orders the
/// two threads' accesses).
pub(crate) fn release(slot: u32) {
    if slot == NO_SLOT {
        return;
    }
    for _ in 0..1000 {
        if let Ok(mut free) = FREE.try_lock() {
            free.push(slot);
            return;
        }
        std::hint::spin_loop();
    }
}

/// One thread's chunk in one buffer.
pub(crate) struct Slot {
    /// 1 while the owner stores a record, else 0.
    in_flight: AtomicU32,
    /// `epoch << 32 | offset`: where the owner's next record goes, in the
    /// half of `epoch`.
    next: AtomicU64,
    /// Where the owner's chunk ends (exclusive).
    end: AtomicU64,
}

/// A reserved place in a chunk: stored to while `in_flight` is up.
pub(crate) struct Place<'a> {
    slot: &'a Slot,
    pub epoch: u32,
    pub offset: u64,
}

impl Place<'_> {
    /// The record is stored: move past it and lower the flag.
    #[inline(always)]
    pub(crate) fn stored(self, bytes: u64) {
        self.slot
            .next
            .store(join(self.epoch, self.offset + bytes), Relaxed);
        self.slot.in_flight.store(0, Release);
    }
}

impl Slot {
    fn new() -> Slot {
        Slot {
            in_flight: AtomicU32::new(0),
            // Matches no epoch until the first chunk is taken (`end` is 0).
            next: AtomicU64::new(join(u32::MAX, 0)),
            end: AtomicU64::new(0),
        }
    }

    /// Raises the flag and returns the place for a record of `bytes` in the
    /// owner's chunk, if it has one in `epoch_of_state()`'s half with room.
    /// `None` (flag lowered again) sends the caller to take a new chunk.
    #[inline(always)]
    pub(crate) fn place(&self, bytes: u64, epoch_of_state: impl Fn() -> u32) -> Option<Place<'_>> {
        // Set already: a signal handler interrupted this thread's own store.
        // Its record takes the shared path instead of overwriting ours (were
        // that path to wait for a full LOSSLESS buffer, the delivery would
        // wait for this thread's store in turn; HIP calls are not
        // async-signal-safe anyway).
        if self.in_flight.load(Relaxed) != 0 {
            return None;
        }
        self.in_flight.store(1, Relaxed);
        // Keeps the compiler from moving the loads below above the flag
        // store; the consumer's membarrier orders them in hardware.
        compiler_fence(SeqCst);
        let (epoch, offset) = split(self.next.load(Relaxed));
        if epoch == epoch_of_state() && offset + bytes <= self.end.load(Relaxed) {
            return Some(Place {
                slot: self,
                epoch,
                offset,
            });
        }
        self.in_flight.store(0, Release);
        None
    }

    /// True while the owner stores a record (seen by the owner itself: a
    /// signal handler that interrupted that store).
    pub(crate) fn busy(&self) -> bool {
        self.in_flight.load(Relaxed) != 0
    }

    /// The owner took the chunk `[offset, end)` of `epoch`'s half.
    pub(crate) fn take_chunk(&self, epoch: u32, offset: u64, end: u64) {
        // A signal handler storing a record on this thread may run between
        // any two of these stores: at each point `(next, end)` is either the
        // new chunk or has no room (`end` 0), never the old place against
        // the new end.
        self.end.store(0, Relaxed);
        compiler_fence(SeqCst);
        self.next.store(join(epoch, offset), Relaxed);
        compiler_fence(SeqCst);
        self.end.store(end, Relaxed);
    }
}

/// A buffer's slots, one per slot index.
pub(crate) struct Slots {
    slots: Box<[CachePadded<Slot>]>,
}

impl Slots {
    pub(crate) fn new() -> Slots {
        Slots {
            slots: (0..MAX_SLOTS)
                .map(|_| CachePadded::new(Slot::new()))
                .collect(),
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, slot: u32) -> Option<&Slot> {
        self.slots.get(slot as usize).map(|s| &**s)
    }

    /// Call after a swap, before walking the swapped-out half: returns once
    /// no producer can still store a record into it (module docs).
    pub(crate) fn quiesce(&self) {
        heavy_barrier();
        let used = (HANDED_OUT.load(Acquire) as usize).min(self.slots.len());
        for slot in &self.slots[..used] {
            let backoff = Backoff::new();
            // One 0 suffices: a store that starts later sees the new epoch.
            while slot.in_flight.load(Acquire) != 0 {
                backoff.snooze();
            }
        }
    }
}

fn split(v: u64) -> (u32, u64) {
    ((v >> 32) as u32, v & 0xffff_ffff)
}

fn join(epoch: u32, offset: u64) -> u64 {
    (epoch as u64) << 32 | offset
}
