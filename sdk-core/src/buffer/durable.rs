//! Durable halves: a buffer whose records outlive its process.
//!
//! A profiled process can die at any instant: SIGKILL, the OOM killer, a
//! scheduler's time limit. Records still in a buffer's halves would die with
//! it. A buffer created with a [`DurableMemory`] keeps its halves in memory
//! the process shares with a file (the tool library maps one per buffer), so
//! whoever reads the file after the process died finds them there.
//!
//! # Layout
//!
//! ```text
//! words = header (HEADER_WORDS) · half 0 (size / 8) · half 1 (size / 8)
//! header[MAGIC]     = MAGIC_VALUE
//! header[SIZE]      = size of a half in bytes
//! header[CURRENT]   = the epoch being filled (half CURRENT & 1)
//! header[DELIVERED] = epochs whose records have reached the sink
//! header[ID]        = buffer id;  header[ID + 1] = context id
//! ```
//!
//! Word values are in the machine's byte order; the file is read on the
//! machine that wrote it.
//!
//! # What a reader takes ([`recover`])
//!
//! The half of epoch `CURRENT`, and the other half when its epoch
//! (`CURRENT - 1`) is not yet `DELIVERED`. The buffer keeps these true at
//! every instant: it moves `CURRENT` on *before* a swap, and hands a half to
//! its sink before it raises `DELIVERED` and zeroes the half. In each half
//! the reader takes records from the start up to the first one whose header
//! is still zero.
//!
//! What a kill can still lose or repeat:
//! - a record whose producer was stopped between reserving its place and
//!   committing its header; on a buffer without per-thread chunks also every
//!   record reserved after it in that half (with chunks, only the rest of
//!   that producer's chunk, which holds nothing yet);
//! - the records of one delivery when the process dies after the sink took
//!   them and before `DELIVERED` was raised, a few instructions later: read
//!   twice (once from the sink's output, once from the half).

use std::sync::atomic::{AtomicU64, Ordering::*};

use crate::batch::Batch;
use crate::callback::{BufferId, ContextId};

/// Words before the halves: one page.
pub const HEADER_WORDS: usize = 512;
/// `header[MAGIC]`: "RWHALVES".
pub const MAGIC_VALUE: u64 = u64::from_be_bytes(*b"RWHALVES");

const MAGIC: usize = 0;
const SIZE: usize = 1;
const CURRENT: usize = 2;
const DELIVERED: usize = 3;
const ID: usize = 4;

/// Memory for durable halves: zeroed words that stay valid for the rest of
/// the process (a shared file mapping that is never unmapped).
pub trait DurableMemory: Send + Sync {
    /// [`HEADER_WORDS`] `+ 2 * half_bytes / 8` zeroed words for buffer
    /// `buffer` of context `context`, or `None` (the buffer then keeps its
    /// halves on the heap, as any other).
    fn words(
        &self,
        buffer: BufferId,
        context: ContextId,
        half_bytes: u64,
    ) -> Option<&'static [AtomicU64]>;
}

/// A durable buffer's header, written by the buffer.
#[derive(Debug)]
pub(crate) struct Header(&'static [AtomicU64]);

impl Header {
    /// Asks `memory` for the words of a buffer with halves of `size` bytes;
    /// the header (filled in) and the two halves.
    pub(crate) fn allocate(
        memory: &dyn DurableMemory,
        id: BufferId,
        context: ContextId,
        size: u64,
    ) -> Option<(Header, [&'static [AtomicU64]; 2])> {
        let half = (size / 8) as usize;
        let words = memory.words(id, context, size)?;
        if words.len() < HEADER_WORDS + 2 * half {
            return None;
        }
        let (header, rest) = words.split_at(HEADER_WORDS);
        let (a, rest) = rest.split_at(half);
        let b = &rest[..half];
        header[SIZE].store(size, Relaxed);
        header[ID].store(id.0, Relaxed);
        header[ID + 1].store(context.0, Relaxed);
        header[CURRENT].store(0, Relaxed);
        header[DELIVERED].store(0, Relaxed);
        header[MAGIC].store(MAGIC_VALUE, Release);
        Some((Header(header), [a, b]))
    }

    pub(crate) fn set_current(&self, epoch: u32) {
        self.0[CURRENT].store(u64::from(epoch), SeqCst);
    }

    pub(crate) fn set_delivered(&self, epoch: u32) {
        self.0[DELIVERED].store(u64::from(epoch), SeqCst);
    }
}

/// What [`recover`] found in a durable buffer's words.
#[derive(Debug)]
pub struct Recovered {
    /// The buffer.
    pub buffer: BufferId,
    /// Its context.
    pub context: ContextId,
    /// The records not yet delivered, oldest epoch first.
    pub batch: Batch,
}

/// The records a durable buffer still held when its process died, read from
/// the buffer's words (the whole file: header and halves); an error when
/// the words are not a durable buffer's.
pub fn recover(words: &[AtomicU64]) -> Result<Recovered, String> {
    if words.len() < HEADER_WORDS || words[MAGIC].load(Acquire) != MAGIC_VALUE {
        return Err("not a rocwasm buffer file (no RWHALVES header)".into());
    }
    let size = words[SIZE].load(Relaxed);
    let half = (size / 8) as usize;
    if size == 0 || !size.is_multiple_of(8) || words.len() < HEADER_WORDS + 2 * half {
        return Err(format!(
            "the header says halves of {size} bytes, the file has {} bytes",
            words.len() * 8
        ));
    }
    // Epochs are 32-bit counters that wrap.
    let current = words[CURRENT].load(SeqCst) as u32;
    let delivered = words[DELIVERED].load(SeqCst) as u32;
    let (id, context) = (words[ID].load(Relaxed), words[ID + 1].load(Relaxed));
    let half_of = |epoch: u32| {
        let at = HEADER_WORDS + (epoch & 1) as usize * half;
        &words[at..at + half]
    };
    let mut batch = Batch::default();
    let previous = current.wrapping_sub(1);
    if current != 0 && delivered != current {
        batch.append(&mut crate::record::recover(half_of(previous), size));
    }
    batch.append(&mut crate::record::recover(half_of(current), size));
    Ok(Recovered {
        buffer: BufferId(id),
        context: ContextId(context),
        batch,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::batch::ApiCall;
    use crate::kind::BufferPolicy;
    use crate::record::Record;
    use crate::{DeliveryInfo, Profiler};

    /// Leaked heap words standing in for a shared mapping; keeps a handle
    /// on each buffer's words so the test can "read the file".
    #[derive(Default)]
    struct Leaked(Mutex<Vec<&'static [AtomicU64]>>);

    impl DurableMemory for Leaked {
        fn words(&self, _: BufferId, _: ContextId, half: u64) -> Option<&'static [AtomicU64]> {
            let n = HEADER_WORDS + 2 * (half / 8) as usize;
            let w: &'static [AtomicU64] = Box::leak((0..n).map(|_| AtomicU64::new(0)).collect());
            self.0.lock().unwrap().push(w);
            Some(w)
        }
    }

    fn api(seq: u64) -> Record {
        Record::Api(ApiCall {
            kind: 5,
            operation: 1,
            correlation_id: seq,
            thread_id: 1,
            start: seq,
            end: seq + 1,
            ..ApiCall::default()
        })
    }

    /// Records delivered to the sink plus those a reader recovers from the
    /// words are every record pushed, each once, wherever the "kill" falls.
    #[test]
    fn delivered_and_recovered_records_are_each_record_once() {
        // Small halves (no per-thread chunks), then large ones (chunks
        // where the platform has them).
        let cases = [0u64, 1, 10, 63, 64, 65, 200, 1000].map(|n| (4096u64, n));
        for (size, pushed) in cases.into_iter().chain([(1u64 << 20, 40_000u64)]) {
            let profiler = Profiler::new();
            let ctx = profiler.create_context().unwrap();
            let seen = Arc::new(Mutex::new(Vec::<u64>::new()));
            let sink = {
                let seen = seen.clone();
                move |_: DeliveryInfo, b: Batch| {
                    seen.lock()
                        .unwrap()
                        .extend(b.api_calls.correlation_id.iter().copied())
                }
            };
            let memory = Leaked::default();
            // 64-byte API records; the watermark at half the half.
            let id = profiler
                .create_buffer_in(
                    ctx,
                    size,
                    size / 2,
                    BufferPolicy::Lossless,
                    Arc::new(sink),
                    Some(&memory),
                )
                .unwrap();
            let buffer = profiler.buffer(id).unwrap();
            for seq in 1..=pushed {
                buffer.push(&api(seq));
            }
            // Let every queued delivery finish, as the callback thread would
            // before the kill; then "kill": read the words, deliver nothing more.
            // (A delivery may swap again as it ends: re-read both.)
            while buffer.delivered_epochs() != buffer.epoch() {
                std::thread::yield_now();
            }
            let words = memory.0.lock().unwrap()[0];
            let r = recover(words).unwrap();
            assert_eq!((r.buffer, r.context), (id, ctx));
            let mut all = seen.lock().unwrap().clone();
            all.extend(r.batch.api_calls.correlation_id.iter().copied());
            all.sort_unstable();
            assert_eq!(all, (1..=pushed).collect::<Vec<_>>(), "{pushed} pushed");
        }
    }

    #[test]
    fn a_file_that_is_not_a_buffer_is_refused() {
        let words: Vec<AtomicU64> = (0..HEADER_WORDS + 16).map(|_| AtomicU64::new(7)).collect();
        assert!(recover(&words).unwrap_err().contains("RWHALVES"));
        assert!(recover(&words[..3]).is_err());
    }
}
