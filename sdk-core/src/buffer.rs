//! Buffers: where producers leave records and callback threads collect them.
//!
//! # Concurrency design
//!
//! A buffer has **two halves** of `size` bytes each (for both policies) and
//! one 64-bit `state` word: `epoch << 32 | offset`. The epoch counts how often
//! the halves were swapped; epoch `e` fills half `e & 1`.
//!
//! **Producers** (application threads, runtime signal threads) never lock:
//!
//! 1. `fetch_add(size)` on `state` reserves `[offset, offset + size)` in the
//!    current epoch's half — one atomic gives both the half and the place.
//! 2. If the record fits, its words are stored with relaxed atomic stores
//!    (plain `mov`s), the header word last with release ordering: a non-zero
//!    header *commits* the record (every header is non-zero, and a half is all
//!    zeros before it is filled). If the record crossed the watermark, the
//!    producer *requests a swap* (below) and returns without waiting for
//!    anything. So a stored record costs one atomic read-modify-write.
//! 3. If it does not fit, the unique producer whose reservation straddles the
//!    end records where valid data stops (the others touch nothing). Then it
//!    requests a swap and retries in the new epoch. If the other half is
//!    still owned by the callback thread, a DISCARD producer counts a drop and
//!    returns; a LOSSLESS producer waits until the other half is free — the only
//!    wait on the producer side, and only when both halves are full.
//!    A producer first *loads* `state` and skips the `fetch_add` when the half
//!    is already full, so a stalled consumer cannot make the offset overflow.
//!
//! **A swap** (by a producer at the watermark, by a producer that found the
//! half full, by the callback thread, or by `flush`) replaces `state` with
//! `(epoch + 1, 0)`, provided the other half has been drained, and queues
//! `(epoch, final offset)` on the buffer's callback thread. A tiny spin lock
//! makes sure one epoch is swapped once; it is held for three atomic
//! operations, never across a delivery.
//!
//! **The callback thread** knows from the final offset (or, past the end, from
//! the straddler's mark) where valid records stop. It walks them from the
//! start, waiting at a zero header for the producer that reserved the place to
//! finish copying (acquire: the header's release store makes the record's
//! other words visible), decodes the words into a columnar [`Batch`](crate::Batch) and
//! zeroes them for the half's next use, marks the half free again
//! (`drained`), and only *then* calls the tool's sink. So:
//!
//! - no producer ever waits for a plugin while the plugin runs, unless a
//!   LOSSLESS producer has filled both halves during that time (the bounded
//!   memory this buffer promises); DISCARD producers never wait at all — this
//!   beats the SDK, where every producer stalls during a watermark callback;
//! - every record that does not make it into a half is counted in
//!   `drop_count` (DISCARD) — the SDK can lose records uncounted after its
//!   first swap;
//! - records of one producer thread are delivered in the order produced:
//!   reservations are ordered within an epoch and epochs are delivered in
//!   order by a single callback thread.
//!
//! **Chunks.** Where the buffer is large enough and the platform has
//! `membarrier`, a producer thread reserves a chunk of the half at a time
//! through step 1 and fills it with plain stores, so a stored record costs
//! no atomic read-modify-write at all; the callback thread then makes sure no
//! producer is still storing into the swapped-out half before walking it.
//! See [`chunks`] for the protocol and when it is used.
//!
//! **Durable halves.** A buffer created with [`DurableMemory`] keeps its
//! halves (and a header of [`durable::HEADER_WORDS`] words) in memory that
//! outlives the process, a shared file mapping: the records a process had
//! not yet delivered when it was killed can be read back from the file
//! ([`durable::recover`]). Such a buffer hands a half to its sink *before*
//! zeroing it and marking it free, and says in the header which epochs are
//! being filled and have been delivered, so a reader takes each record
//! once. See [`durable`] for the header and what a kill can still lose.
//!
//! A record produced *on a callback thread* into a full LOSSLESS buffer is
//! dropped and counted instead of waiting, because that thread is the one that
//! would have to drain the buffer (a plugin calling a traced API during a
//! delivery must not deadlock the process).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use crossbeam_channel::Sender;
use crossbeam_utils::{Backoff, CachePadded};

use crate::callback::{BufferId, BufferSink, CallbackThreadId, ContextId, DeliveryInfo};
use crate::kind::{BufferPolicy, Status};
use crate::record::{chunk_marker, decode, decode_keep, Encode, Record, WordSink};
pub use durable::DurableMemory;

pub(crate) mod chunks;
pub mod durable;

pub(crate) use chunks::NO_SLOT;
use chunks::{Slot, Slots, CHUNK_BYTES};

/// Buffer sizes are rounded up to this.
pub const PAGE_SIZE: u64 = 4096;
/// Largest buffer size (per half): offsets must stay far below 2³² bytes.
pub const MAX_SIZE: u64 = 1 << 30;

const OFFSET_MASK: u64 = 0xffff_ffff;

fn split(state: u64) -> (u32, u64) {
    ((state >> 32) as u32, state & OFFSET_MASK)
}

fn join(epoch: u32, offset: u64) -> u64 {
    (epoch as u64) << 32 | offset
}

/// `a >= b` for wrapping 32-bit epoch counters.
fn reached(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

thread_local! {
    static ON_CALLBACK_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub(crate) fn mark_callback_thread() {
    ON_CALLBACK_THREAD.with(|c| c.set(true));
}

/// True on a callback thread (of any profiler): code that would wait for a
/// delivery must not wait there.
pub(crate) fn on_callback_thread() -> bool {
    ON_CALLBACK_THREAD.with(|c| c.get())
}

/// Work for a callback thread.
pub(crate) enum Job {
    Deliver(Delivery),
    Stop,
}

/// Epoch `epoch` of `buffer` ended at byte `end`: decode and deliver it.
///
/// A delivery that is dropped without having run — queued behind `Stop`, or
/// refused by a thread that is already gone — marks its epoch handled, so
/// that a `flush` (or a LOSSLESS producer) waiting for it is released instead
/// of waiting forever. Its records are lost, as every record produced after
/// finalization is.
pub(crate) struct Delivery {
    buffer: Arc<Buffer>,
    epoch: u32,
    end: u64,
    ran: bool,
}

impl Delivery {
    pub(crate) fn run(mut self) {
        self.buffer.deliver(self.epoch, self.end);
        self.ran = true;
    }
}

impl Drop for Delivery {
    fn drop(&mut self) {
        if !self.ran {
            self.buffer.skip(self.epoch);
        }
    }
}

struct Half {
    /// All zero except records of the epoch being filled or delivered.
    words: Words,
    /// Where valid records end when a reservation straddled the half's end;
    /// `u64::MAX` until the straddling producer has written it.
    valid_end: AtomicU64,
}

impl Half {
    fn new(words: Words) -> Half {
        Half {
            words,
            valid_end: AtomicU64::new(u64::MAX),
        }
    }
}

/// A half's words: on the heap, or in durable memory that is never freed.
enum Words {
    Heap(Box<[AtomicU64]>),
    Durable(&'static [AtomicU64]),
}

impl Words {
    fn heap(size: u64) -> Words {
        Words::Heap((0..size / 8).map(|_| AtomicU64::new(0)).collect())
    }
}

impl std::ops::Deref for Words {
    type Target = [AtomicU64];

    #[inline(always)]
    fn deref(&self) -> &[AtomicU64] {
        match self {
            Words::Heap(w) => w,
            Words::Durable(w) => w,
        }
    }
}

/// Result of a swap attempt.
#[derive(Debug, PartialEq, Eq)]
enum Swap {
    /// We swapped the epoch out.
    Done,
    /// Somebody else already did.
    AlreadyMoved,
    /// The other half is still being drained.
    Busy,
}

/// What happened to a pushed record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// The record is in the buffer and will be delivered.
    Stored,
    /// The record was lost and counted in the next delivery's
    /// [`DeliveryInfo::drop_count`]: both halves were full and the buffer is
    /// DISCARD, or the producer is a callback thread (one running a sink),
    /// which must not wait for a delivery even on a LOSSLESS buffer.
    Dropped,
}

/// Pushes a record's fixed-size words into a buffer (see [`Record::encode_into`]),
/// from the producer thread holding chunk slot `slot`.
struct Producer<'a> {
    buffer: &'a Arc<Buffer>,
    slot: u32,
}

impl WordSink for Producer<'_> {
    type Output = Pushed;

    #[inline(always)]
    fn put<const N: usize, T: Encode<N>>(self, record: &T) -> Pushed {
        const { assert!(T::BYTES >= 8 * N as u64 && T::BYTES % 8 == 0) };
        self.buffer.push_words(self.slot, &record.words(), T::BYTES)
    }
}

/// One buffer. Created by [`crate::Profiler::create_buffer`].
pub struct Buffer {
    id: BufferId,
    context: ContextId,
    policy: BufferPolicy,
    size: u64,
    watermark: u64,
    state: CachePadded<AtomicU64>,
    halves: [Half; 2],
    drops: CachePadded<AtomicU64>,
    /// Records handed to a sink that panicked (lost with that delivery).
    lost_to_sink: AtomicU64,
    /// Epochs whose half has been copied out (so the half is free again).
    drained: AtomicU32,
    /// Epochs handed to the sink (the sink has returned).
    delivered: AtomicU32,
    swap_lock: AtomicBool,
    /// For producers waiting on a full LOSSLESS buffer and for `flush`. The
    /// callback thread takes it only to notify, never while delivering.
    wait_lock: Mutex<()>,
    wait_cond: Condvar,
    route: RwLock<Route>,
    sink: Arc<dyn BufferSink>,
    /// Per-thread chunks, where this buffer uses them (see [`chunks`]).
    chunks: Option<Slots>,
    /// The durable header, when the halves are in durable memory.
    durable: Option<durable::Header>,
}

#[derive(Clone)]
pub(crate) struct Route {
    pub thread: CallbackThreadId,
    pub sender: Sender<Job>,
    pub os_thread: Arc<std::sync::OnceLock<std::thread::ThreadId>>,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("id", &self.id)
            .field("context", &self.context)
            .field("policy", &self.policy)
            .field("size", &self.size)
            .field("watermark", &self.watermark)
            .finish_non_exhaustive()
    }
}

/// `size` rounded up to the page size.
pub fn round_size(size: u64) -> u64 {
    size.div_ceil(PAGE_SIZE).max(1) * PAGE_SIZE
}

impl Buffer {
    // The SDK's create-buffer parameters, plus the callback thread that
    // serves the buffer and where its halves live: grouping them would
    // only rename them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: BufferId,
        context: ContextId,
        size: u64,
        watermark: u64,
        policy: BufferPolicy,
        sink: Arc<dyn BufferSink>,
        route: Route,
        memory: Option<&dyn DurableMemory>,
    ) -> Result<Arc<Buffer>, Status> {
        if size == 0 || size > MAX_SIZE {
            return Err(Status::InvalidArgument);
        }
        let size = round_size(size);
        if watermark > size {
            return Err(Status::InvalidArgument);
        }
        let (halves, durable) =
            match memory.and_then(|m| durable::Header::allocate(m, id, context, size)) {
                Some((header, [a, b])) => (
                    [Half::new(Words::Durable(a)), Half::new(Words::Durable(b))],
                    Some(header),
                ),
                None => (
                    [Half::new(Words::heap(size)), Half::new(Words::heap(size))],
                    None,
                ),
            };
        Ok(Arc::new(Buffer {
            id,
            context,
            policy,
            size,
            watermark,
            state: CachePadded::new(AtomicU64::new(0)),
            halves,
            drops: CachePadded::new(AtomicU64::new(0)),
            lost_to_sink: AtomicU64::new(0),
            drained: AtomicU32::new(0),
            delivered: AtomicU32::new(0),
            swap_lock: AtomicBool::new(false),
            wait_lock: Mutex::new(()),
            wait_cond: Condvar::new(),
            route: RwLock::new(route),
            sink,
            chunks: (size >= chunks::MIN_HALF
                && watermark >= chunks::MIN_WATERMARK
                && chunks::available())
            .then(Slots::new),
            durable,
        }))
    }

    /// The handle [`crate::Profiler::create_buffer`] returned.
    pub fn id(&self) -> BufferId {
        self.id
    }

    /// The context the buffer was created in; only that context's services
    /// may write to it.
    pub fn context(&self) -> ContextId {
        self.context
    }

    /// What a producer does when both halves are full: wait (LOSSLESS) or
    /// drop and count (DISCARD).
    pub fn policy(&self) -> BufferPolicy {
        self.policy
    }

    /// Size of each half in bytes (the requested size rounded up to a page).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes buffered in a half that trigger a delivery (0: after every
    /// record; [`Buffer::size`]: when the half is full). Never above `size`.
    pub fn watermark(&self) -> u64 {
        self.watermark
    }

    /// True when producer threads store into chunks of their own instead of
    /// reserving each record (see the `chunks` module: Linux with
    /// `membarrier`, a half of at least 64 KiB and a watermark of at least
    /// 8 KiB).
    pub fn uses_thread_chunks(&self) -> bool {
        self.chunks.is_some()
    }

    /// Epochs whose delivery has finished.
    #[cfg(test)]
    pub(crate) fn delivered_epochs(&self) -> u32 {
        self.delivered.load(Acquire)
    }

    /// How many times the halves were swapped (deliveries queued).
    pub fn epoch(&self) -> u32 {
        split(self.state.load(Acquire)).0
    }

    /// Bytes reserved in the current half: records, or with thread chunks
    /// ([`Buffer::uses_thread_chunks`]) whole chunks, partly filled.
    pub fn pending_bytes(&self) -> u64 {
        split(self.state.load(Acquire)).1.min(self.size)
    }

    pub(crate) fn route(&self) -> Route {
        self.route.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set_route(&self, route: Route) {
        *self.route.write().unwrap_or_else(|e| e.into_inner()) = route;
    }

    /// Copies `record` into the buffer. Wait-free for DISCARD; LOSSLESS waits
    /// only when both halves are full.
    #[inline]
    pub fn push(self: &Arc<Self>, record: &Record) -> Pushed {
        let slot = match self.chunks {
            Some(_) => crate::correlation::producer_slot(),
            None => NO_SLOT,
        };
        self.push_from(slot, record)
    }

    /// [`Buffer::push`] for a caller that knows its thread's chunk slot.
    #[inline(always)]
    pub(crate) fn push_from(self: &Arc<Self>, slot: u32, record: &Record) -> Pushed {
        record.encode_into(Producer { buffer: self, slot })
    }

    /// The producer's fast path: with a chunk, a few plain loads and stores;
    /// else one reservation that fits and `N` plain stores, the header last.
    /// Everything else (a new chunk, a full half, a swap, waiting, dropping)
    /// is out of line.
    #[inline(always)]
    fn push_words<const N: usize>(
        self: &Arc<Self>,
        slot: u32,
        words: &[u64; N],
        bytes: u64,
    ) -> Pushed {
        if let Some(slot) = self.chunks.as_ref().and_then(|c| c.get(slot)) {
            let current_epoch = || split(self.state.load(Relaxed)).0;
            if let Some(place) = slot.place(bytes, current_epoch) {
                self.store(place.epoch, place.offset, words);
                place.stored(bytes);
                return Pushed::Stored;
            }
            return self.push_in_new_chunk(slot, words, bytes);
        }
        match self.reserve_and_store(words, bytes) {
            Some(_) => Pushed::Stored,
            None => Pushed::Dropped,
        }
    }

    /// Stores `words` at byte `off` of `epoch`'s half, the header last.
    #[inline(always)]
    fn store<const N: usize>(&self, epoch: u32, off: u64, words: &[u64; N]) {
        let half = &self.halves[(epoch & 1) as usize];
        let base = (off / 8) as usize;
        let slots: &[AtomicU64; N] = half.words[base..base + N]
            .try_into()
            .expect("a range of N words");
        for (slot, w) in slots[1..].iter().zip(&words[1..]) {
            slot.store(*w, Relaxed);
        }
        slots[0].store(words[0], Release);
    }

    /// The shared protocol: reserves `bytes` and stores `words` there;
    /// returns where (`None`: dropped, and counted).
    #[inline(always)]
    fn reserve_and_store<const N: usize>(
        self: &Arc<Self>,
        words: &[u64; N],
        bytes: u64,
    ) -> Option<(u32, u64)> {
        // Look before reserving: a full half (a stalled consumer) must not
        // make the offset grow without bound.
        let (epoch, off) = split(self.state.load(Relaxed));
        if off + bytes <= self.size {
            // SeqCst: pairs with the callback thread's SeqCst store of
            // `drained` and load of `state` (see `deliver`). On x86-64 every
            // atomic read-modify-write is a full barrier anyway (`lock xadd`).
            let (epoch, off) = split(self.state.fetch_add(bytes, SeqCst));
            if off + bytes <= self.size {
                self.store(epoch, off, words);
                self.check_watermark(epoch, off, bytes);
                return Some((epoch, off));
            }
            self.abandon(epoch, off);
            return self.push_slow(words, bytes, epoch);
        }
        self.push_slow(words, bytes, epoch)
    }

    /// The thread's chunk is used up or belongs to an earlier epoch: take a
    /// new one through the shared protocol (which may swap, wait or drop)
    /// and store the record there.
    #[cold]
    #[inline(never)]
    fn push_in_new_chunk<const N: usize>(
        self: &Arc<Self>,
        slot: &Slot,
        words: &[u64; N],
        bytes: u64,
    ) -> Pushed {
        // Two tries: a swap may take the new chunk's epoch away before the
        // record is in it (rare: chunks are a small part of a watermark).
        for _ in 0..2 {
            if slot.busy() {
                break; // a signal handler interrupted this thread's own store
            }
            let Some((epoch, off)) =
                self.reserve_and_store(&[chunk_marker(CHUNK_BYTES)], CHUNK_BYTES)
            else {
                return Pushed::Dropped;
            };
            slot.take_chunk(epoch, off + 8, off + CHUNK_BYTES);
            self.prefetch_chunk(epoch, off);
            let current_epoch = || split(self.state.load(Relaxed)).0;
            if let Some(place) = slot.place(bytes, current_epoch) {
                self.store(place.epoch, place.offset, words);
                place.stored(bytes);
                return Pushed::Stored;
            }
        }
        match self.reserve_and_store(words, bytes) {
            Some(_) => Pushed::Stored,
            None => Pushed::Dropped,
        }
    }

    /// Asks the CPU for the lines of a chunk just taken, all at once.
    ///
    /// The half's lines were last touched by the callback thread (it read
    /// and zeroed them on another core), or not for a while: each of the
    /// chunk's records would otherwise stall on its line in turn. A read
    /// prefetch (`safe_arch`: no write-intent form without the `prfchw`
    /// target feature) still overlaps those fetches; it is a hint, so a line
    /// that moves meanwhile costs nothing but the hint.
    #[inline(always)]
    fn prefetch_chunk(&self, epoch: u32, off: u64) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
        {
            let words = &self.halves[(epoch & 1) as usize].words;
            let first = (off / 8) as usize;
            for line in 1..(CHUNK_BYTES as usize / 64) {
                if let Some(w) = words.get(first + line * 8) {
                    safe_arch::prefetch_t0(w);
                }
            }
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
        let _ = (epoch, off);
    }

    /// Requests a swap when the record at `[off, off + bytes)` crossed the
    /// watermark (with watermark 0: after every record).
    #[inline(always)]
    fn check_watermark(self: &Arc<Self>, epoch: u32, off: u64, bytes: u64) {
        let wm = self.watermark;
        if off + bytes >= wm && (off < wm || wm == 0) {
            self.at_watermark(epoch);
        }
    }

    #[cold]
    #[inline(never)]
    fn at_watermark(self: &Arc<Self>, epoch: u32) {
        self.try_swap(epoch);
    }

    /// A reservation starting at `off` in `epoch` that does not fit. The
    /// unique one that straddles the end (`off <= size`) marks where valid
    /// records stop; the callback thread waits for that mark.
    #[cold]
    #[inline(never)]
    fn abandon(&self, epoch: u32, off: u64) {
        if off <= self.size {
            self.halves[(epoch & 1) as usize]
                .valid_end
                .store(off, Release);
        }
    }

    /// The current half (of `epoch`) is full: swap, then retry; if the other
    /// half is still being delivered, DISCARD drops (counted) and LOSSLESS
    /// waits for it.
    #[cold]
    #[inline(never)]
    fn push_slow(
        self: &Arc<Self>,
        words: &[u64],
        bytes: u64,
        mut epoch: u32,
    ) -> Option<(u32, u64)> {
        loop {
            // While the other half is being delivered no swap can succeed:
            // see that with one load, not the swap lock, so a DISCARD producer
            // facing a backlog drops at the cost of one counter increment.
            let swap = if reached(self.drained.load(SeqCst), epoch) {
                self.try_swap(epoch)
            } else {
                Swap::Busy
            };
            match swap {
                Swap::Done | Swap::AlreadyMoved => {}
                Swap::Busy => {
                    if self.policy == BufferPolicy::Discard || on_callback_thread() {
                        self.drops.fetch_add(1, Relaxed);
                        return None;
                    }
                    self.wait_for_free_half(epoch);
                }
            }
            let (e, off) = split(self.state.load(Relaxed));
            epoch = e;
            if off + bytes > self.size {
                continue;
            }
            let (e, off) = split(self.state.fetch_add(bytes, SeqCst));
            epoch = e;
            if off + bytes <= self.size {
                let half = &self.halves[(e & 1) as usize];
                let base = (off / 8) as usize;
                let slots = &half.words[base..base + words.len()];
                for (slot, w) in slots.iter().zip(words).skip(1) {
                    slot.store(*w, Relaxed);
                }
                slots[0].store(words[0], Release);
                self.check_watermark(e, off, bytes);
                return Some((e, off));
            }
            self.abandon(e, off);
        }
    }

    /// Swaps epoch `epoch` out if it is still current and the other half is free.
    fn try_swap(self: &Arc<Self>, epoch: u32) -> Swap {
        let backoff = Backoff::new();
        while self
            .swap_lock
            .compare_exchange_weak(false, true, Acquire, Relaxed)
            .is_err()
        {
            backoff.snooze();
        }
        let result = if split(self.state.load(Acquire)).0 != epoch {
            Swap::AlreadyMoved
        } else if self.drained.load(SeqCst) != epoch {
            Swap::Busy
        } else {
            if let Some(h) = &self.durable {
                // Before the swap: a reader of a killed process then takes
                // the old half as undelivered, never a new record as old.
                h.set_current(epoch.wrapping_add(1));
            }
            let (_, end) = split(self.state.swap(join(epoch.wrapping_add(1), 0), AcqRel));
            self.swap_lock.store(false, Release);
            self.enqueue(epoch, end);
            return Swap::Done;
        };
        self.swap_lock.store(false, Release);
        result
    }

    fn enqueue(self: &Arc<Self>, epoch: u32, end: u64) {
        let job = Job::Deliver(Delivery {
            buffer: Arc::clone(self),
            epoch,
            end,
            ran: false,
        });
        // A closed channel means the callback thread is gone (finalize): the
        // job comes back in the error and is dropped, which marks the epoch
        // handled (see `Delivery`).
        let _ = self.route().sender.send(job);
    }

    /// Epoch `epoch` will never be delivered: mark it handled so nobody
    /// waits for it.
    fn skip(&self, epoch: u32) {
        self.drained.store(epoch.wrapping_add(1), Release);
        self.delivered.store(epoch.wrapping_add(1), Release);
        self.notify();
    }

    fn notify(&self) {
        let _guard = self.wait_lock.lock().unwrap_or_else(|e| e.into_inner());
        self.wait_cond.notify_all();
    }

    fn wait_until(&self, mut done: impl FnMut() -> bool) {
        let backoff = Backoff::new();
        while !backoff.is_completed() {
            if done() {
                return;
            }
            backoff.snooze();
        }
        let mut guard = self.wait_lock.lock().unwrap_or_else(|e| e.into_inner());
        while !done() {
            // The timeout only guards against a bug in the notify protocol.
            guard = self
                .wait_cond
                .wait_timeout(guard, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn wait_for_free_half(&self, epoch: u32) {
        self.wait_until(|| {
            split(self.state.load(Acquire)).0 != epoch || self.drained.load(Acquire) == epoch
        });
    }

    /// Delivers everything produced before the call; returns when the sink has
    /// received it. Fails with `BUFFER_BUSY` on the buffer's own callback
    /// thread, where waiting would deadlock.
    pub fn flush(self: &Arc<Self>) -> Result<(), Status> {
        if self.route().os_thread.get() == Some(&std::thread::current().id()) {
            return Err(Status::BufferBusy);
        }
        let target = loop {
            let (epoch, off) = split(self.state.load(Acquire));
            if off == 0 && self.drops.load(Acquire) == 0 {
                break epoch;
            }
            match self.try_swap(epoch) {
                Swap::Done | Swap::AlreadyMoved => break epoch.wrapping_add(1),
                Swap::Busy => self.wait_until(|| {
                    split(self.state.load(Acquire)).0 != epoch
                        || self.drained.load(Acquire) == epoch
                }),
            }
        };
        self.wait_until(|| reached(self.delivered.load(Acquire), target));
        Ok(())
    }

    /// Runs on the callback thread: decode epoch `epoch`, free its half, call the sink.
    fn deliver(self: &Arc<Self>, epoch: u32, end: u64) {
        let half = &self.halves[(epoch & 1) as usize];
        let valid = if end <= self.size {
            end
        } else {
            // The producer whose reservation straddles the end may still be
            // on its way to marking it.
            let backoff = Backoff::new();
            loop {
                match half.valid_end.load(Acquire) {
                    u64::MAX => backoff.snooze(),
                    v => break v,
                }
            }
        };
        if let Some(chunks) = &self.chunks {
            chunks.quiesce();
        }
        if let Some(header) = &self.durable {
            return self.deliver_durable(header, epoch, valid);
        }
        // Waits for each record's commit, and leaves the words zero.
        let batch = decode(&half.words, valid);
        half.valid_end.store(u64::MAX, Relaxed);
        let next = epoch.wrapping_add(1);
        // SeqCst with the producers' SeqCst `fetch_add` on `state` and load of
        // `drained`: either a producer at the watermark sees this half free and
        // swaps, or we see its reservation below and swap for it.
        self.drained.store(next, SeqCst);
        self.notify();
        let drop_count = self.drops.swap(0, AcqRel);

        self.swap_past_watermark(next);
        self.hand_to_sink(batch, drop_count);
        self.delivered.store(next, Release);
        self.notify();
    }

    /// Producers may have filled the current half past the watermark while
    /// the other one was busy (`next` is the epoch being filled); nobody
    /// else will swap it now.
    fn swap_past_watermark(self: &Arc<Self>, next: u32) {
        let (current, off) = split(self.state.load(SeqCst));
        if current == next && off > 0 && off.min(self.size) >= self.watermark {
            self.try_swap(current);
        }
    }

    /// Calls the sink with `batch` (when it holds records or drops).
    fn hand_to_sink(&self, batch: crate::Batch, drop_count: u64) {
        if !batch.is_empty() || drop_count > 0 {
            let info = DeliveryInfo {
                context: self.context,
                buffer: self.id,
                drop_count,
                process: 0,
            };
            // A panicking sink must not take the callback thread (and every
            // buffer it serves) down with it; its records are counted lost.
            let records = batch.len() as u64;
            if catch_unwind(AssertUnwindSafe(|| self.sink.deliver(info, batch))).is_err() {
                self.lost_to_sink.fetch_add(records, Relaxed);
            }
        }
    }

    /// Records handed to this buffer's sink in deliveries that panicked.
    pub fn lost_to_sink(&self) -> u64 {
        self.lost_to_sink.load(Relaxed)
    }

    /// [`Buffer::deliver`] for durable halves: the sink gets the records
    /// before they are zeroed and the half is marked free, so at every
    /// instant each record is in the half or has reached the sink (the
    /// header's `delivered` says which). A LOSSLESS producer that filled the
    /// other half meanwhile waits for the sink too.
    fn deliver_durable(self: &Arc<Self>, header: &durable::Header, epoch: u32, valid: u64) {
        let half = &self.halves[(epoch & 1) as usize];
        let batch = decode_keep(&half.words, valid);
        let next = epoch.wrapping_add(1);
        self.hand_to_sink(batch, self.drops.swap(0, AcqRel));
        header.set_delivered(next);
        for w in &half.words[..(valid / 8) as usize] {
            w.store(0, Relaxed);
        }
        half.valid_end.store(u64::MAX, Relaxed);
        self.drained.store(next, SeqCst);
        self.notify();
        self.swap_past_watermark(next);
        self.delivered.store(next, Release);
        self.notify();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::batch::{ApiCall, Batch, KernelDispatch, MemoryCopy};
    use crate::Profiler;

    /// Every field of a record, derived from its producer and sequence number.
    fn record(thread: u64, seq: u64) -> Record {
        let x = thread << 40 | seq;
        match seq % 3 {
            0 => Record::Api(ApiCall {
                kind: 5,
                operation: (seq % 400) as u32,
                correlation_id: seq,
                external_correlation_id: !x,
                ancestor: x ^ 0xa5a5,
                thread_id: thread,
                start: x,
                end: x + 1,
            }),
            1 => Record::KernelDispatch(KernelDispatch {
                correlation_id: seq,
                external_correlation_id: !x,
                thread_id: thread,
                start: x,
                end: x + 2,
                agent_id: x + 3,
                queue_id: x + 4,
                stream_id: x + 5,
                kernel_id: x + 6,
                dispatch_id: x + 7,
                private_segment_size: seq as u32,
                group_segment_size: !(seq as u32),
                workgroup_x: 1,
                workgroup_y: 2,
                workgroup_z: 3,
                grid_x: thread as u32,
                grid_y: u32::MAX,
                grid_z: (seq >> 3) as u32,
            }),
            _ => Record::MemoryCopy(MemoryCopy {
                operation: 2,
                correlation_id: seq,
                external_correlation_id: !x,
                thread_id: thread,
                start: x,
                end: x + 8,
                dst_agent_id: x + 9,
                src_agent_id: x + 10,
                stream_id: x + 11,
                bytes: x + 12,
                dst_address: x + 13,
                src_address: u64::MAX - x,
            }),
        }
    }

    /// The commit protocol (header last, words zeroed after delivery) under
    /// swaps at every watermark and records straddling the end of a half:
    /// every delivered record is exactly a record that was produced, whole,
    /// once — nothing stale, torn or mixed from an earlier use of a half.
    #[test]
    fn delivered_records_are_whole_and_exact() {
        const THREADS: u64 = 4;
        const PER_THREAD: u64 = 60_000;
        // Small buffers use the shared protocol only; the larger ones give
        // each producer thread chunks (when membarrier is available).
        let shapes = [
            (4096, 0),
            (4096, 1000),
            (4096, 4096),
            (65_536, 8192),
            (65_536, 65_536),
        ];
        for (size, watermark) in shapes {
            let p = Profiler::new();
            let ctx = p.create_context().unwrap();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let s = Arc::clone(&seen);
            let sink = Arc::new(move |info: DeliveryInfo, b: Batch| {
                assert_eq!(info.drop_count, 0);
                let mut s = s.lock().unwrap();
                s.extend(b.api_calls.rows().map(Record::Api));
                s.extend(b.kernel_dispatches.rows().map(Record::KernelDispatch));
                s.extend(b.memory_copies.rows().map(Record::MemoryCopy));
            });
            let id = p
                .create_buffer(ctx, size, watermark, BufferPolicy::Lossless, sink)
                .unwrap();
            let b = p.buffer(id).unwrap();
            assert_eq!(
                b.uses_thread_chunks(),
                size >= 65_536 && chunks::available()
            );
            std::thread::scope(|scope| {
                for t in 1..=THREADS {
                    let b = &b;
                    scope.spawn(move || {
                        for seq in 1..=PER_THREAD {
                            assert_eq!(b.push(&record(t, seq)), Pushed::Stored);
                        }
                    });
                }
            });
            p.flush_buffer(id).unwrap();
            p.finalize();
            let seen = seen.lock().unwrap();
            assert_eq!(
                seen.len() as u64,
                THREADS * PER_THREAD,
                "size {size} watermark {watermark}"
            );
            let mut count = std::collections::HashMap::new();
            for r in seen.iter() {
                let (thread, seq) = match r {
                    Record::Api(r) => (r.thread_id, r.correlation_id),
                    Record::KernelDispatch(r) => (r.thread_id, r.correlation_id),
                    Record::MemoryCopy(r) => (r.thread_id, r.correlation_id),
                    other => panic!("unexpected record {other:?}"),
                };
                assert_eq!(*r, record(thread, seq), "size {size} watermark {watermark}");
                *count.entry((thread, seq)).or_insert(0) += 1;
            }
            assert!(count.values().all(|&n| n == 1), "each record exactly once");
        }
    }
}
